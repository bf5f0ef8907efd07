"""A cut-out turning round an axis in its own plane, as a body does when it turns round.

The cut-out is wrapped once round a cylinder whose axis runs through the stamp's centre, across
the unit direction n (stamp px): R = STAMP / (2 pi), so the stamp's half-width is half a turn and
its transparent margins meet behind. A stamp point at signed distance s = n . (z - centre) from
the axis lies at angle s / R round the cylinder; turned by phi it is seen (orthographically) at
s' = R sin(s / R + phi) from the axis, and it faces the camera iff cos(s / R + phi) > 0. Only
the facing half is drawn: at rest the middle half of the stamp, at scale 1 on the axis and
foreshortened towards the silhouette. As the body turns its surface flows across its outline: a
point that turns past the silhouette is hidden behind the body, and shows again when the turn
brings it back. The distance along the axis is unchanged.

`on` selects the cut-outs that turn; for the others every map is the identity and every point
faces the camera. All tensors broadcast: points [..., 2], per-point angles [...].
"""
import math

import torch

from .geometry import dot2

OUTSIDE = 1e6   # stamp px given to an output pixel off the cylinder: it samples nothing
SILHOUETTE_TOL = 1e-4   # relative: a point mapped onto the silhouette and back lands within rounding


def to_apparent(z, centre, n, R, phi, on):
    """Stamp points z -> where the turned cylinder shows them in the stamp plane."""
    s = dot2(z - centre, n)
    s_shown = R * torch.sin(s / R + phi)
    return torch.where(on[..., None], z + (s_shown - s)[..., None] * n, z)


def to_surface(y, centre, n, R, phi, on):
    """Inverse of to_apparent on the facing half: a point y of the stamp plane -> the stamp point
    drawn there (|s| <= pi R); OUTSIDE where y is off the silhouette (|s'| > R, beyond rounding)."""
    s_shown = dot2(y - centre, n)
    ratio = s_shown / R
    angle = torch.asin(ratio.clamp(-1.0, 1.0)) - phi
    angle = torch.remainder(angle + math.pi, 2 * math.pi) - math.pi
    on_cylinder = ratio.abs() <= 1.0 + SILHOUETTE_TOL
    surface = torch.where(on_cylinder[..., None], y + (R * angle - s_shown)[..., None] * n, torch.full_like(y, OUTSIDE))
    return torch.where(on[..., None], surface, y)


def facing(z, centre, n, R, phi, on):
    """True where the stamp point z faces the camera (or its cut-out does not turn)."""
    return ~on | (torch.cos(dot2(z - centre, n) / R + phi) > 0)
