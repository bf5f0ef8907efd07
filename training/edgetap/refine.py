"""Template refinement: the published positions aligned, after the network, against each track's
query patch (the reference of the C++ engine's RefinedSession, core/src/template_alignment.cpp).

At the query frame a (2r+1)^2 grey patch is sampled around the query point and normalized (zero
mean, unit sample deviation). In every later frame where the track is published visible, the
network's output p0 starts `iters` Gauss-Newton steps of an affine Lucas-Kanade alignment,
x -> p + A x over the patch's offsets, of the normalized patch there to the template; A starts at
the track's last accepted warp (the identity at first). The aligned point is published when its
normalized correlation exceeds min_ncc and it lies within max_shift px of p0; otherwise p0 is.
The network never sees the aligned points: its next frame starts from its own output.

Grey = 0.299 R + 0.587 G + 0.114 B (0..255); gradients are central differences, 0 in the outer
rows and columns; samples are bilinear with coordinates clamped to the frame.
"""
import numpy as np
import torch
import torch.nn.functional as F

# the published configuration of models/edgetap-large.json (chosen on the validation set,
# models/INFERENCE.md "Template refinement")
DEFAULT = dict(radius=9, iters=4, min_ncc=0.6, max_shift=2.0)
DEVIATION_FLOOR = 1e-6
NO_CONTRAST = 1e-3
DAMPING = 1e-3
WARP_DET_RANGE = (0.3, 3.0)   # a warp outside it (collapsed or blown up) is not carried on


def grey_planes(video):
    """[T, 3, H, W] uint8 -> grey, d/dx, d/dy, each [T, 1, H, W] float64."""
    v = video.double()
    g = 0.299 * v[:, 0:1] + 0.587 * v[:, 1:2] + 0.114 * v[:, 2:3]
    gx = torch.zeros_like(g)
    gy = torch.zeros_like(g)
    gx[..., 1:-1] = (g[..., 2:] - g[..., :-2]) / 2
    gy[..., 1:-1, :] = (g[..., 2:, :] - g[..., :-2, :]) / 2
    return g, gx, gy


def sample(plane, pts):
    """plane [1, 1, H, W], pts [N, K, 2] pixel coordinates -> [N, K], bilinear, clamped."""
    H, W = plane.shape[-2:]
    grid = torch.stack([(pts[..., 0] + 0.5) / W * 2 - 1, (pts[..., 1] + 0.5) / H * 2 - 1], -1)
    return F.grid_sample(plane, grid[None], mode="bilinear", padding_mode="border", align_corners=False)[0, 0]


def offsets(radius):
    r = torch.arange(-radius, radius + 1, dtype=torch.float64)
    oy, ox = torch.meshgrid(r, r, indexing="ij")
    return torch.stack([ox.ravel(), oy.ravel()], -1)      # [K, 2], row by row


def normalized(patch):
    """Zero mean, unit sample deviation per row; also returns the deviations."""
    sd = patch.std(1, keepdim=True)
    return (patch - patch.mean(1, keepdim=True)) / (sd + DEVIATION_FLOOR), sd[:, 0]


def align(grey, gx, gy, tmpl, p0, warp, off, iters):
    """Gauss-Newton alignment of the normalized templates tmpl [N, K] in one frame's planes,
    from points p0 [N, 2] and warps [N, 2, 2]. Returns the points, warps and final correlations."""
    K = off.shape[0]
    p, A = p0.clone(), warp.clone()
    for _ in range(iters):
        pts = p[:, None] + torch.einsum("nij,kj->nki", A, off)
        value, dx, dy = sample(grey, pts), sample(gx, pts), sample(gy, pts)
        value_n, sd = normalized(value)
        inv = 1 / (sd[:, None] + DEVIATION_FLOOR)
        dx = (dx - dx.mean(1, keepdim=True)) * inv
        dy = (dy - dy.mean(1, keepdim=True)) * inv
        residual = tmpl - value_n
        J = torch.stack([dx * off[:, 0], dx * off[:, 1], dy * off[:, 0], dy * off[:, 1], dx, dy], -1)
        H = J.transpose(1, 2) @ J
        damping = DAMPING * (H.diagonal(dim1=1, dim2=2).mean(-1) + 1)
        H = H + damping[:, None, None] * torch.eye(6, dtype=H.dtype)
        d = torch.linalg.solve(H, (J * residual[..., None]).sum(1))
        A = A + d[:, :4].view(-1, 2, 2)
        p = p + d[:, 4:]
    pts = p[:, None] + torch.einsum("nij,kj->nki", A, off)
    value_n, _ = normalized(sample(grey, pts))
    ncc = (value_n * tmpl).sum(1) / (K - 1)
    return p, A, ncc


def refine_tracks(video, q, tq, xy, visible, config=None):
    """video [T, 3, H, W] uint8 (the model input), q [N, 2] query points, tq [N] query frames,
    xy [N, T, 2] the network's outputs (model-input pixels), visible [N, T] bool (published).
    Returns the published positions [N, T, 2] (numpy float64) and how many were aligned."""
    c = dict(DEFAULT, **(config or {}))
    grey, gx, gy = grey_planes(video)
    off = offsets(c["radius"])
    q = torch.as_tensor(np.asarray(q), dtype=torch.float64)
    tq = np.asarray(tq)
    N, T = visible.shape
    tmpl = torch.zeros(N, off.shape[0], dtype=torch.float64)
    contrast = np.zeros(N, bool)
    for t in np.unique(tq):
        idx = np.where(tq == t)[0]
        patch = sample(grey[t:t + 1], q[idx][:, None] + off[None])
        tmpl[idx], sd = normalized(patch)
        contrast[idx] = (sd >= NO_CONTRAST).numpy()
    out = np.array(xy, dtype=np.float64, copy=True)
    warp = torch.eye(2, dtype=torch.float64).repeat(N, 1, 1)
    accepted = 0
    for t in range(T):
        act = np.where((tq < t) & visible[:, t] & contrast)[0]
        if len(act) == 0:
            continue
        p0 = torch.as_tensor(out[act, t])
        p, A, ncc = align(grey[t:t + 1], gx[t:t + 1], gy[t:t + 1], tmpl[act], p0, warp[act], off, c["iters"])
        ok = (ncc > c["min_ncc"]) & ((p - p0).norm(dim=1) < c["max_shift"]) & torch.isfinite(p).all(1)
        out[act[ok.numpy()], t] = p[ok].numpy()
        accepted += int(ok.sum())
        det = torch.linalg.det(A)
        keep = ok & (det > WARP_DET_RANGE[0]) & (det < WARP_DET_RANGE[1])
        warp[act[keep.numpy()]] = A[keep]
    return out, accepted
