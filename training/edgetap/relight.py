"""Relit cut-outs for the clip synthesizer: a body whose shading changes while it moves under the
light (its surface turning toward and away from it, shadows and highlights sliding over it). Drawn
as a smooth gain over the cut-out's own surface, bands that travel and turn across it during the
clip: the texture and the tracks are unchanged, the brightness around every point drifts, which
the point's descriptor from its query frame must see past."""
import math

import torch

from .draws import RELIGHT_SALT, side_stream, uniform
from .photobanks import STAMP

RELIGHT_LOG_GAIN_MAX = 0.6   # strongest shading: a gain between exp(-0.6) = 0.55 and exp(0.6) = 1.8


def draw_relight(gen, B, M, prob):
    """Relight parameters of B clips x M object slots (None where prob is 0), from a side stream of
    gen: a clip drawn with them is the same clip (paths, tracks, the clips after it) as without.
    The gain is exp(a sin(2 pi k (n(t) . y) / STAMP + ph + w t)) at stamp point y: k cycles across
    the stamp, the bands' direction n turning by spin rad per unit time, travelling w rad per unit
    time (a quarter to one cycle over 32 frames)."""
    if prob <= 0:
        return None
    g = side_stream(gen, RELIGHT_SALT)
    return dict(on=(torch.rand(B, M, generator=g) < prob).float(),
                a=uniform(g, B, M, lo=0.2, hi=RELIGHT_LOG_GAIN_MAX), k=uniform(g, B, M, lo=0.5, hi=1.5),
                th0=uniform(g, B, M, hi=2 * math.pi), spin=uniform(g, B, M, lo=-0.05, hi=0.05),
                ph=uniform(g, B, M, hi=2 * math.pi), w=uniform(g, B, M, lo=0.05, hi=0.2))


def shading(rp, m, z, t):
    """The gain [B, T, P] of object slot m at its stamp points z [B, T, P, 2] (stamp px) at times
    t [B, T, 1]; 1 where the slot is not relit."""
    p = {k: v[:, m, None, None] for k, v in rp.items()}                     # [B, 1, 1]
    th = p["th0"] + p["spin"] * t                                            # [B, T, 1]
    n = torch.stack([torch.cos(th), torch.sin(th)], -1)                      # [B, T, 1, 2]
    phase = (z * n).sum(-1) * (2 * math.pi / STAMP) * p["k"] + p["ph"] + p["w"] * t
    return torch.exp(p["on"] * p["a"] * torch.sin(phase))
