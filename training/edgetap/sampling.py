"""Bilinear windows of feature maps, read as integer patches.

Every window the network reads is a (2r+1)^2 grid of unit-spaced points around one fractional
centre, so all its points share the centre's fractional part. Such a window is one integer
patch of (2r+2)^2 feature pixels plus four bilinear weights; and because the correlation is
linear in the features, a window of correlations is the same four-weight combination of the
correlations at the patch's pixels. Reading the patch with one gather (instead of four corner
reads per window point through grid_sample) reads 64 pixels per level for a 7x7 window instead
of 196, keeps the features in their own precision where no gradients flow, and its backward
adds into 64 pixels instead of 196. Reads outside a map go to one zero row appended to the
table (one copy of the maps per table, instead of a mask over every gathered patch), and the
dots are taken outside autocast, so that the patches (a training step's largest tensors) are
written once and never copied.

The plain definition, `sample_around` + `patch_correlation` (grid_sample per point), stays beside
it as the reference: `tests/test_sampling.py` checks that both give the same values and
gradients. With `fused_reads.enable()` (training on a GPU, `--fused-reads`),
`window_correlation` runs as one Triton kernel each way instead, checked against this path.
The C++ engine's window correlation (kernels/cpu/sampling.cpp) is computed the same way: dots
with the patch's pixels, then the blend.

Maps are read through a `FeatureTable`: a level's maps as rows of D features, one row per
pixel of every map, so that points of any map can be read in one gather.
"""
import torch
import torch.nn.functional as F

from . import fused_reads


def to_grid(xy, h, w):
    """Feature-pixel coordinates -> grid_sample's [-1, 1] coordinates (align_corners=True)."""
    gx = xy[..., 0] * (2.0 / max(w - 1, 1)) - 1.0
    gy = xy[..., 1] * (2.0 / max(h - 1, 1)) - 1.0
    return torch.stack([gx, gy], dim=-1)


def bilinear_sample(feat, xy):
    """feat [B, C, H, W], xy [B, P, 2] in feature pixels -> [B, P, C].
    Bilinear, pixel centers at integers, zero outside the map (each of the 4 neighbours that
    falls outside contributes 0)."""
    h, w = feat.shape[-2:]
    grid = to_grid(xy.float(), h, w)[:, :, None, :]
    out = F.grid_sample(feat.float(), grid, mode="bilinear", padding_mode="zeros", align_corners=True)
    return out[..., 0].transpose(1, 2)


def window_offsets(radius, device):
    """[(2r+1)^2, 2] offsets (dx, dy), row-major: index = (dy + r) * (2r+1) + (dx + r)."""
    r = torch.arange(-radius, radius + 1, device=device, dtype=torch.float32)
    dy, dx = torch.meshgrid(r, r, indexing="ij")
    return torch.stack([dx, dy], dim=-1).reshape(-1, 2)


def sample_around(feat, xy, offsets):
    """Reference. feat [B, D, h, w]; xy [B, M, 2] in feature pixels; offsets [K, 2] ->
    [B, M, K, D]: the features bilinearly sampled at every point plus every offset (zero
    outside the map)."""
    B, M, _ = xy.shape
    K = offsets.shape[0]
    return bilinear_sample(feat, (xy[:, :, None, :] + offsets).reshape(B, M * K, 2)).reshape(B, M, K, -1)


def patch_correlation(window_feats, desc, D):
    """Reference. window_feats [..., k*k, D] sampled around the estimate; desc [..., P, D] ->
    [..., P*k*k]: every query descriptor against every window position, query index outer,
    / sqrt(D)."""
    c = torch.einsum("...kd,...pd->...pk", window_feats, desc.to(window_feats.dtype)) * (D ** -0.5)
    return c.flatten(-2)


class FeatureTable:
    """One level's maps [F, D, h, w] as rows [F*h*w + 1, D], the last one zero. Rows keep the
    maps' precision unless gradients flow to them, where they are float32 so that the
    backward's additions (many windows share a pixel) are not rounded to half precision; one
    table serves every read of a forward pass, so the conversion is made once."""

    def __init__(self, maps):
        self.frames, self.dim, self.h, self.w = maps.shape
        rows = maps.permute(0, 2, 3, 1).reshape(-1, self.dim)
        if maps.requires_grad:
            rows = rows.float()
        # one zero row after the maps' pixels: what every read outside a map returns
        self.rows = torch.cat([rows, rows.new_zeros(1, self.dim)])
        self.zero_row = rows.shape[0]

    def patch(self, frame, corner, size):
        """frame [...] long (which map); corner [..., 2] long (x, y of the top-left pixel) ->
        [..., size, size, D]: the pixels corner + (0..size-1) in y (outer) and x, zero outside
        the map."""
        step = torch.arange(size, device=corner.device)
        xs = corner[..., 0, None] + step                                 # [..., size]
        ys = corner[..., 1, None] + step
        inside = (((ys >= 0) & (ys < self.h))[..., :, None] & ((xs >= 0) & (xs < self.w))[..., None, :])
        row = (frame[..., None, None] * self.h + ys[..., :, None]) * self.w + xs[..., None, :]
        row = torch.where(inside, row, self.zero_row)                     # [..., size, size]
        return self.rows.index_select(0, row.reshape(-1)).reshape(*row.shape, self.dim)


def _corner_and_fraction(xy, radius):
    """Window centres xy [..., 2] -> the top-left pixel of their integer patch [..., 2] (long)
    and the centres' fractional parts [..., 2] (float32)."""
    base = torch.floor(xy)
    return base.long() - radius, (xy - base).float()


def _blend(grid, frac):
    """grid [..., k+1, k+1, C] values at a patch's pixels -> [..., k, k, C]: at every window point,
    the bilinear combination of its four pixels with weights from the shared fraction, as two
    linear interpolations (along x, then y: one kernel each)."""
    fx, fy = frac[..., 0, None, None, None], frac[..., 1, None, None, None]
    along_x = torch.lerp(grid[..., :, :-1, :], grid[..., :, 1:, :], fx)              # [..., k+1, k, C]
    return torch.lerp(along_x[..., :-1, :, :], along_x[..., 1:, :, :], fy)


def window_features(table, frame, xy, radius):
    """= sample_around with window_offsets(radius): table (FeatureTable); frame [...] long;
    xy [..., 2] feature pixels -> [..., (2r+1)^2, D] (row-major window, zero outside the map)."""
    k = 2 * radius + 1
    corner, frac = _corner_and_fraction(xy, radius)
    grid = table.patch(frame, corner, k + 1)
    return _blend(grid.float(), frac).reshape(*xy.shape[:-1], k * k, table.dim)


def window_correlation(table, frame, xy, desc, radius):
    """= patch_correlation(sample_around(...), desc): table (FeatureTable); frame [...] long;
    xy [..., 2] feature pixels; desc [..., P, D] (broadcast against the leading dims) ->
    [..., P*(2r+1)^2], query index outer, / sqrt(D). The descriptors are dotted with the
    patch's pixels, then the correlations are blended."""
    corner, frac = _corner_and_fraction(xy, radius)
    if fused_reads.usable(table.rows, xy, desc):
        return fused_reads.window_correlation(table, frame, corner, frac, desc, radius)
    k = 2 * radius + 1
    grid = table.patch(frame, corner, k + 1)                              # [..., k+1, k+1, D]
    # in the rows' precision: under autocast the patches (the largest tensors of a training
    # step) would otherwise be copied to half precision, and their gradients back
    with torch.autocast(grid.device.type, enabled=False):
        c = torch.einsum("...yxd,...pd->...yxp", grid, desc.to(grid.dtype)) * (table.dim ** -0.5)
    c = _blend(c.float(), frac)                                           # [..., k, k, P]
    return c.movedim(-1, -3).flatten(-3)
