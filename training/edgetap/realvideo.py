"""Real video without ground truth, labelled by a teacher network for training.

A clip's frames are decoded once (GStreamer) into JPEGs; windows of consecutive frames are then
tracked by a teacher (a trained checkpoint) forward from a grid of queries on the window's first
frame, and backward from where each track was last visible. A point-frame is a label only where
both directions see the point and agree, from the query on without a break: a pseudo-label the
teacher is consistent about, which is what self-training on real footage keeps (forward-backward
consistency).

Only clips outside the reserved evaluation material may be labelled: DAVIS frames (and BADJA on
them), the image pairs and the demo clips that may not be shipped are refused by path.
"""
import glob
import os
import subprocess

import numpy as np
import torch
from PIL import Image

from . import evalsets

# path parts that mark material never to be trained on (../shared/README.md)
REFUSED_PARTS = ("davis", "badja", "pairs", "cotracker-demo", "eval")


def check_trainable(path):
    """Raises ValueError naming the path if it lies in reserved or unshippable material."""
    parts = os.path.normpath(os.path.abspath(path)).lower().split(os.sep)
    bad = [p for p in parts if p in REFUSED_PARTS]
    if bad:
        raise ValueError(f"{path}: '{bad[0]}' material is reserved for evaluation or may not be shipped; "
                         "it is never trained on")


def decode_video(path, out_dir, max_side=256):
    """Decodes every frame of a video file into out_dir/%05d.jpg, scaled so that its longer side
    is max_side (aspect kept, even sides). Returns the number of frames written."""
    check_trainable(path)
    if not os.path.isfile(path):
        raise FileNotFoundError(f"{path}: no such video")
    os.makedirs(out_dir, exist_ok=True)
    probe = subprocess.run(["gst-launch-1.0", "-q", "filesrc", f"location={path}", "!",
                            "decodebin", "!", "videoconvert", "!", "video/x-raw,format=RGB", "!",
                            "pngenc", "snapshot=true", "!", "filesink", f"location={out_dir}.probe.png"],
                           capture_output=True, text=True, timeout=120)
    if probe.returncode != 0:
        raise RuntimeError(f"{path}: GStreamer could not decode it: {probe.stderr.strip()[-500:]}")
    w, h = Image.open(f"{out_dir}.probe.png").size
    os.remove(f"{out_dir}.probe.png")
    s = max_side / max(w, h)
    w2, h2 = 2 * round(w * s / 2), 2 * round(h * s / 2)
    cmd = ["gst-launch-1.0", "-q", "filesrc", f"location={path}", "!", "decodebin", "!", "videoconvert", "!",
           "videoscale", "!", f"video/x-raw,width={w2},height={h2},pixel-aspect-ratio=1/1", "!",
           "jpegenc", "quality=75", "!", "multifilesink", f"location={out_dir}/%05d.jpg"]
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=1800)
    if out.returncode != 0:
        raise RuntimeError(f"{path}: decoding failed: {out.stderr.strip()[-500:]}")
    return len(glob.glob(os.path.join(out_dir, "*.jpg")))


def load_frames(frame_dir, start=0, count=None):
    """Frames start .. start+count-1 of a decoded clip as uint8 [T, 3, H, W]."""
    files = sorted(glob.glob(os.path.join(frame_dir, "*.jpg")))[start:]
    files = files[:count] if count else files
    if not files:
        raise FileNotFoundError(f"{frame_dir}: no frames from {start}")
    return torch.stack([torch.from_numpy(np.array(Image.open(f).convert("RGB"))).permute(2, 0, 1) for f in files])


def query_grid(side, W, H):
    """side x side queries spread over a W x H frame, 8% in from its borders, [side^2, 2]."""
    u = 0.08 + 0.84 * (np.arange(side) + 0.5) / side
    gx, gy = np.meshgrid(u * (W - 1), u * (H - 1))
    return np.stack([gx.ravel(), gy.ravel()], -1)


def teacher_size(W, H, side):
    """The frames' shape with its longer side `side`, both sides multiples of 32: (w, h)."""
    s = side / max(W, H)
    return tuple(max(32, 32 * round(v * s / 32)) for v in (W, H))


def _track(teacher, video, q, tq, model_size, device):
    T, _, H, W = video.shape
    seq = dict(video=video, W=W, H=H, q=q, tq=tq)
    return evalsets.run_tracker(teacher, evalsets.resized_sequence(seq, model_size), device)


def consistent_labels(fwd, fwd_vis, bwd, bwd_vis, tol):
    """Where forward and backward tracks of the same points (queried on frame 0) agree: known
    [N, T], from frame 0 up to the first frame where either pass loses the point or they are tol
    px or more apart, and the labels there (their mean) [N, T, 2]. Agreement found again after a
    break is not trusted: on generated clips (prepare_real.py --check) those are the labels that
    are far off."""
    agree = fwd_vis & bwd_vis & (np.linalg.norm(fwd - bwd, axis=-1) < tol)
    return (fwd + bwd) / 2, np.cumprod(agree, axis=1).astype(bool)


@torch.no_grad()
def label_window(teacher, video, grid_side, model_size, device, tol_256=2.0, q=None):
    """Pseudo-labels of one window (uint8 [T, 3, H, W]): tracks [N, T, 2] in the window's pixels and
    known [N, T] bool, for a grid_side x grid_side grid of queries on its first frame (or the
    queries q [N, 2] there). tol_256: the forward-backward agreement asked, in 256-scaled pixels."""
    T, _, H, W = video.shape
    q = query_grid(grid_side, W, H) if q is None else q
    fwd, fwd_vis, _ = _track(teacher, video, q, np.zeros(len(q), np.int64), model_size, device)
    fwd_vis = fwd_vis >= 0.5
    fwd_vis[:, 0] = True
    last = np.array([np.flatnonzero(v).max() for v in fwd_vis])     # last frame each point is seen
    rev = torch.flip(video, [0])
    bq = fwd[np.arange(len(q)), last]
    bwd, bwd_vis, _ = _track(teacher, rev, bq, (T - 1 - last).astype(np.int64), model_size, device)
    bwd, bwd_vis = bwd[:, ::-1], bwd_vis[:, ::-1] >= 0.5
    after = np.arange(T)[None] <= last[:, None]     # the backward pass starts at `last`
    tol = tol_256 * max(W, H) / 256.0
    tracks, known = consistent_labels(fwd, fwd_vis, bwd, bwd_vis & after, tol)
    return tracks.astype(np.float32), known
