"""Training batches from real clips labelled by a teacher (prepare_real.py, realvideo.py).

Each batch clip is a run of consecutive frames from one labelled window, cropped at a random
place and scale to the step's shape, resized to its size and mirrored half the time; its tracks
are pseudo-labelled points, query frames drawn among their labelled frames, moving points
preferred. `known` marks the point-frames with a label: the loss scores positions only there and
no visibility at all (a label says where a point is, never that it is hidden).
"""
import glob
import os

import numpy as np
import torch
import torch.nn.functional as F

from . import realvideo, synth

MOVE_PX = 4.0      # 256-scaled px of travel from which a track counts as moving
MOVING_WEIGHT = 10.0   # how much likelier a moving track is drawn than a still one: the labelled
                       # clips are mostly still points (v5's labels: 2,801 of 12,451 tracks move)


class RealClips:
    """Every labelled clip under root (frames and labels held on `device`) and its windows."""

    def __init__(self, root, device):
        self.clips = []
        for lab in sorted(glob.glob(os.path.join(root, "*", "labels.npz"))):
            z = np.load(lab)
            frames = realvideo.load_frames(os.path.join(os.path.dirname(lab), "frames")).to(device)
            self.clips.append(dict(name=os.path.basename(os.path.dirname(lab)), frames=frames,
                                   starts=z["starts"], tracks=torch.from_numpy(z["tracks"]).to(device),
                                   known=torch.from_numpy(z["known"]).to(device)))
        if not self.clips:
            raise FileNotFoundError(f"{root}: no labelled real clips (run training/prepare_real.py --decode --label)")
        self.windows = [(c, k) for c in range(len(self.clips)) for k in range(len(self.clips[c]["starts"]))]

    def __len__(self):
        return len(self.windows)

    @property
    def window(self):
        """The shortest labelled window, in frames: the longest clip a batch can have."""
        return min(c["tracks"].shape[2] for c in self.clips)

    def sample(self, B, T, S, N, gen):
        """B clips of T frames at S (a side or (W, H)) with N tracks each, in make_clips' form plus
        known [B, N, T]. gen: a CPU torch.Generator (every draw comes from it)."""
        W, H = synth.clip_size(S)
        out = [self._one(T, W, H, N, gen) for _ in range(B)]
        return {k: torch.stack([o[k] for o in out]) for k in out[0]}

    def _one(self, T, W, H, N, gen):
        for _ in range(20):     # a crop may hold too few labelled tracks: draw another
            c, k = self.windows[int(torch.randint(len(self.windows), (1,), generator=gen))]
            clip = self.clips[c]
            L = clip["tracks"].shape[2]
            if L < T:
                raise ValueError(f"real clip {clip['name']}: windows of {L} frames, shorter than {T}")
            t0 = int(torch.randint(L - T + 1, (1,), generator=gen))
            f0 = int(clip["starts"][k]) + t0
            video = clip["frames"][f0:f0 + T].float()
            tracks = clip["tracks"][k, :, t0:t0 + T].clone()
            known = clip["known"][k, :, t0:t0 + T].clone()
            video, tracks, known = _crop_resize(video, tracks, known, W, H, gen)
            got = _pick_tracks(tracks, known, N, (W * H) ** 0.5, gen)
            if got is not None:
                idx, tq = got
                return dict(video=video, tracks=tracks[idx], vis=known[idx], known=known[idx], tq=tq)
        raise RuntimeError("real clips: no crop with labelled tracks in 20 draws")


def _crop_resize(video, tracks, known, W, H, gen):
    """A crop of W:H shape covering 60-100% of the largest that fits, resized (bilinear) to W x H,
    mirrored with probability 1/2; tracks follow (pixel centres at integers), labels outside it are
    dropped. The stored frames are small (prepare_real.py: 256 px), so crops are magnified and need
    no anti-aliasing."""
    Hf, Wf = video.shape[-2:]
    full = min(Wf / W, Hf / H)
    s = full * (0.6 + 0.4 * float(torch.rand((), generator=gen)))
    cw, ch = W * s, H * s
    x0 = float(torch.rand((), generator=gen)) * (Wf - cw)
    y0 = float(torch.rand((), generator=gen)) * (Hf - ch)
    xs = x0 + (torch.arange(W, device=video.device) + 0.5) * (cw / W) - 0.5   # the crop's pixel centres
    ys = y0 + (torch.arange(H, device=video.device) + 0.5) * (ch / H) - 0.5
    grid = torch.stack(torch.meshgrid(xs / (Wf - 1) * 2 - 1, ys / (Hf - 1) * 2 - 1, indexing="xy"), -1)
    out = F.grid_sample(video, grid[None].expand(video.shape[0], -1, -1, -1), mode="bilinear",
                        padding_mode="border", align_corners=True)
    tr = torch.stack([(tracks[..., 0] - x0 + 0.5) * (W / cw) - 0.5, (tracks[..., 1] - y0 + 0.5) * (H / ch) - 0.5], -1)
    if float(torch.rand((), generator=gen)) < 0.5:
        out = out.flip(-1)
        tr[..., 0] = (W - 1) - tr[..., 0]
    inside = (tr[..., 0] >= 0) & (tr[..., 0] <= W - 1) & (tr[..., 1] >= 0) & (tr[..., 1] <= H - 1)
    return out, tr, known & inside


def label_reach(tracks, known):
    """How far each track travels over its labelled frames: the larger side of the box they span,
    in the tracks' pixels (0 without labels). tracks [..., T, 2], known [..., T] -> [...]."""
    hi = torch.where(known[..., None], tracks, -torch.inf).amax(-2)
    lo = torch.where(known[..., None], tracks, torch.inf).amin(-2)
    return torch.where(known.any(-1)[..., None], hi - lo, 0.0).amax(-1)


def _pick_tracks(tracks, known, N, side, gen):
    """N tracks (with repeats when fewer qualify) labelled at two frames at least, moving ones
    preferred, each with a query frame drawn among its labelled frames but the last; None if
    none qualifies."""
    T = known.shape[1]
    last = torch.where(known, torch.arange(T, device=known.device), -1).max(1).values
    ok = known.sum(1) >= 2
    if not ok.any():
        return None
    reach = label_reach(tracks, known) * (256.0 / side)
    w = (1.0 + (MOVING_WEIGHT - 1.0) * (reach / MOVE_PX).clamp(0, 1)) * ok
    idx = torch.multinomial(w.cpu(), N, replacement=True, generator=gen).to(known.device)
    # query frame: uniform among the labelled frames before the track's last one
    cand = known[idx] & (torch.arange(T, device=known.device)[None] < last[idx, None])
    r = torch.rand(cand.shape, generator=gen).to(known.device) * cand
    return idx, r.argmax(1)
