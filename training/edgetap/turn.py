"""A cut-out turning in depth about an axis in its own plane, as a body does when it turns round.

The cut-out is wrapped round a cylinder of radius R whose axis runs through the stamp's centre,
across the unit direction n (stamp px). A stamp point at signed distance s from the axis (s =
n . (z - centre)) lies at angle alpha = s / R round the cylinder; turned by phi it is seen
(orthographically, along the cylinder's normal at rest) at s' = R sin(alpha + phi) from the axis,
and it faces the camera iff cos(alpha + phi) > 0. Only the facing half is drawn: a point turned
past the silhouette is hidden by the body's near side, and it shows again when the turn comes
back. Foreshortening grows towards the silhouette. The distance along the axis is unchanged.

`on` selects the cut-outs that turn; for the others every map is the identity and every point
faces the camera. All tensors broadcast: points [..., 2], per-point angles and radii [...].
"""
import torch

from .geometry import dot2

OUTSIDE = 1e6   # stamp px given to an output pixel off the cylinder: it samples nothing
SILHOUETTE_TOL = 1e-4   # relative: a point mapped onto the silhouette and back lands within rounding


def to_apparent(z, centre, n, R, phi, on):
    """Stamp points z on the surface -> where the turned cylinder shows them in the stamp plane."""
    s = dot2(z - centre, n)
    s_shown = R * torch.sin(s / R + phi)
    return torch.where(on[..., None], z + (s_shown - s)[..., None] * n, z)


def to_surface(y, centre, n, R, phi, on):
    """Inverse of to_apparent on the facing half: a point y of the stamp plane -> the surface
    point drawn there; OUTSIDE where y is off the cylinder's silhouette (|s'| > R, beyond rounding)."""
    s_shown = dot2(y - centre, n)
    ratio = s_shown / R
    s = R * (torch.asin(ratio.clamp(-1.0, 1.0)) - phi)
    surface = torch.where((ratio.abs() <= 1.0 + SILHOUETTE_TOL)[..., None], y + (s - s_shown)[..., None] * n,
                          torch.full_like(y, OUTSIDE))
    return torch.where(on[..., None], surface, y)


def facing(z, centre, n, R, phi, on):
    """True where the surface point z faces the camera (or its cut-out does not turn)."""
    return ~on | (torch.cos(dot2(z - centre, n) / R + phi) > 0)
