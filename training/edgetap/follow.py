"""Clips whose camera follows a body, for the clip synthesizer: the body stays in the frame (only
its wobble moves it) while the scene behind it, and every other body, sweeps past."""
import torch

from .geometry import rot


def follow_first_object(cam, obj, active, on, centre):
    """Rewrites the drawn paths in place for the clips `on` [B] (0/1) marks: object slot 0 is drawn,
    starts at `centre` [B, 2] (output px) and keeps only its wobble; its drift (velocity and
    acceleration, output px per frame) becomes the camera's pan, so the background moves by minus
    that drift on the screen (to first order: the camera's turn and zoom during the clip are left
    as drawn), and so do the other objects."""
    f = on[:, None]
    v0, a0 = obj["v"][:, 0].clone(), obj["acc"][:, 0].clone()
    # output px -> texture px at the clip's start: u = ctr + m0 R(th0) F (x - half)
    to_tex = cam["m0"][:, None, None] * rot(cam["th0"]) * cam["flip"][:, None, :]
    cam["v"] = (1 - f) * cam["v"] + f * (to_tex @ v0[..., None])[..., 0]
    cam["acc"] = (1 - f) * cam["acc"] + f * (to_tex @ a0[..., None])[..., 0]
    obj["v"] = obj["v"] - f[:, None] * v0[:, None]
    obj["acc"] = obj["acc"] - f[:, None] * a0[:, None]
    obj["c0"][:, 0] = torch.where(on[:, None] > 0, centre, obj["c0"][:, 0])
    active[:, 0] = torch.maximum(active[:, 0], on)
