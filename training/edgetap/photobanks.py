"""The photographs clips are made of: backgrounds and RGBA cut-outs ("stamps") as uint8 tensors
on the generating device, split into training, validation and reserved (evaluation-only) banks.
"""
import glob
import math
import os

import numpy as np
import torch
import torch.nn.functional as F
from PIL import Image

BG = 512       # side of a background photo, px
STAMP = 128    # side of a cut-out, px

N_BLOBS = 192     # blob cut-outs made from the training photos (a quarter as many for validation)
# backgrounds held out of training for the periodic validation set (file-name prefixes)
VAL_BG = ("photo_003_", "photo_010_", "photo_030_", "pattern_000", "pattern_050", "pattern_100")


class Banks:
    """bg [Nb, 3, BG, BG] uint8; stamps [Ns, 4, STAMP, STAMP] uint8 (RGBA, centred, transparent pad)."""

    def __init__(self, bg, stamps):
        self.bg = bg
        self.stamps = stamps


def _load_rgb(path, size):
    im = Image.open(path).convert("RGB")
    a = np.asarray(im)
    if a.shape[0] != size or a.shape[1] != size:  # tileable pattern stored at native size
        a = np.tile(a, (size // a.shape[0] + 1, size // a.shape[1] + 1, 1))[:size, :size]
    return torch.from_numpy(np.ascontiguousarray(a)).permute(2, 0, 1)


def _load_stamp(path):
    im = Image.open(path).convert("RGBA")
    a = np.asarray(im)
    out = np.zeros((STAMP, STAMP, 4), np.uint8)
    h, w = a.shape[:2]
    y0, x0 = (STAMP - h) // 2, (STAMP - w) // 2
    out[y0:y0 + h, x0:x0 + w] = a
    return torch.from_numpy(out).permute(2, 0, 1)


def is_photo(path):
    """A photograph or artwork crop (photo_*), not a tiled texture pattern (pattern_*)."""
    return "photo_" in os.path.basename(path)


def background_files(data_dir, split):
    """The training ('train') or validation ('val') background files, in bank order."""
    files = sorted(glob.glob(os.path.join(data_dir, "train", "bg", "*.jpg")))
    return [f for f in files if os.path.basename(f).startswith(VAL_BG) == (split == "val")]


def blob_count(split, n_blobs=N_BLOBS):
    """How many blob cut-outs a split's bank ends with: n_blobs for training, a quarter for 'val'."""
    return n_blobs if split == "train" else n_blobs // 4


def load_train_banks(data_dir, device, split="train", n_blobs=N_BLOBS, seed=0, photo_repeat=1):
    """split 'train' or 'val' (disjoint backgrounds; every 10th stamp is validation-only).
    photo_repeat K > 1 puts every photo background K times in the bank (the generator draws
    backgrounds uniformly, so photos are drawn K times as often as texture patterns)."""
    files = background_files(data_dir, split)
    images = [_load_rgb(f, BG) for f in files]
    photos = [im for f, im in zip(files, images) if is_photo(f)]
    bg = torch.stack(images + photos * (photo_repeat - 1)).to(device)
    sfiles = sorted(glob.glob(os.path.join(data_dir, "train", "stamps", "*.png")))
    sfiles = [f for i, f in enumerate(sfiles) if (i % 10 == 0) == (split == "val")]
    stamps = torch.stack([_load_stamp(f) for f in sfiles]).to(device)
    blobs = make_blob_stamps(torch.stack(photos).to(device), blob_count(split, n_blobs),
                             torch.Generator().manual_seed(seed + 17))
    return Banks(bg, torch.cat([stamps, blobs]))


def load_reserved_banks(data_dir, device, seed=2026):
    """Evaluation-only banks from RESERVED photos: backgrounds and blob cut-outs of them."""
    files = sorted(glob.glob(os.path.join(data_dir, "reserved", "*.jpg")))
    bg = torch.stack([_load_rgb(f, BG) for f in files]).to(device)
    blobs = make_blob_stamps(bg, 128, torch.Generator().manual_seed(seed))
    return Banks(bg, blobs)


def make_blob_stamps(photos, n, gen):
    """Cut-outs of random photo crops with smooth star-shaped soft alpha mattes."""
    dev = photos.device
    idx = torch.randint(0, photos.shape[0], (n,), generator=gen)
    crop = torch.randint(96, 320, (n,), generator=gen)
    out = []
    yy, xx = torch.meshgrid(torch.arange(STAMP, dtype=torch.float32),
                            torch.arange(STAMP, dtype=torch.float32), indexing="ij")
    cx = cy = (STAMP - 1) / 2
    rho = torch.sqrt((xx - cx) ** 2 + (yy - cy) ** 2)
    th = torch.atan2(yy - cy, xx - cx)
    for i in range(n):
        c = int(crop[i])
        x0 = int(torch.randint(0, BG - c, (1,), generator=gen))
        y0 = int(torch.randint(0, BG - c, (1,), generator=gen))
        rgb = photos[idx[i], :, y0:y0 + c, x0:x0 + c].float()[None]
        rgb = F.interpolate(rgb, size=(STAMP, STAMP), mode="bilinear", align_corners=False)[0].cpu()
        r = torch.ones_like(th)
        for k in range(1, 5):
            a = (torch.rand(1, generator=gen) - 0.5) * 0.5 / k
            ph = torch.rand(1, generator=gen) * 2 * math.pi
            r = r + a * torch.cos(k * th + ph)
        aspect = 0.6 + 0.4 * torch.rand(1, generator=gen)
        rr = rho * torch.sqrt(torch.cos(th) ** 2 + (torch.sin(th) / aspect) ** 2)
        alpha = ((r * 0.47 * STAMP - rr) / 1.5 + 0.5).clamp(0, 1)
        out.append(torch.cat([rgb, alpha[None] * 255]).round().clamp(0, 255).to(torch.uint8))
    if not out:
        return torch.zeros((0, 4, STAMP, STAMP), dtype=torch.uint8, device=dev)
    return torch.stack(out).to(dev)
