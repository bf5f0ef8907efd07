"""Pale cut-outs for the clip synthesizer: bodies of weak texture (fur, skin, plain cloth) over a
textured scene, drawn by blurring a cut-out's colours and pulling them toward their mean."""
import torch

from .blur import blur_images
from .draws import PALE_SALT, side_stream, uniform

PALE_SIGMA_MAX = 6.0     # strongest blur of a pale cut-out, stamp px
PALE_KEEP = (0.15, 0.5)  # range of the share of its contrast a pale cut-out keeps


def draw_pale(gen, B, M, prob):
    """Pale parameters of B clips x M object slots (None where prob is 0): which are pale, their
    blur (stamp px) and the share of their contrast they keep. From a side stream of gen, so that a
    clip drawn with them is the same clip (paths, tracks, the clips after it) as without, only paler."""
    if prob <= 0:
        return None
    g = side_stream(gen, PALE_SALT)
    return dict(on=(torch.rand(B, M, generator=g) < prob).float(),
                sigma=uniform(g, B, M, lo=1.5, hi=PALE_SIGMA_MAX), keep=uniform(g, B, M, lo=PALE_KEEP[0], hi=PALE_KEEP[1]))


def paled(st, pale, m):
    """Cut-outs st [B, 4, S, S] (0..1) of object slot m; those that pale['on'][:, m] marks get their
    colours blurred by pale['sigma'][:, m] stamp px (weighted by alpha, so the transparent surround
    does not bleed in) and pulled toward their alpha-weighted mean, keeping pale['keep'][:, m] of
    their contrast. Alpha is unchanged."""
    rgb, a = st[:, :3], st[:, 3:4]
    sigma = pale["sigma"][:, m]
    blurred = blur_images(rgb * a, sigma) / blur_images(a, sigma).clamp_min(1e-3)
    mean = (rgb * a).sum((2, 3), keepdim=True) / a.sum((2, 3), keepdim=True).clamp_min(1e-3)
    keep, on = pale["keep"][:, m, None, None, None], pale["on"][:, m, None, None, None]
    rgb = on * (mean + keep * (blurred - mean)) + (1 - on) * rgb
    return torch.cat([rgb, a], 1)
