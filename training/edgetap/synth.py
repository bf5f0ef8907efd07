"""Synthetic tracking clips rendered on the GPU from real photographs, with exact tracks.

A clip is a background photo under a smooth homography path (camera motion) plus up to
`max_objects` photo cut-outs (RGBA) under smooth affine paths with optional smooth non-rigid
deformation (travelling sine fields) or articulation (a part swinging about a hinge) and an
optional turn of the cut-out's plane in depth (perspective foreshortening), an optional turn
of the cut-out wrapped round a body turning about an axis in its plane (its surface flowing
across its outline, the far side hidden, `turn.py`) and optional limbs (a capsule of the
cut-out swinging about a joint as a layer of its own, over or under its body), optionally drawn
pale (colours blurred and pulled toward their mean, `pale.py`) or relit (shading that slides
over the body, `relight.py`), composited in a fixed z-order
over a background that may be flattened (blurred, posterized), seen by a camera that may pan
with one of the bodies (`follow.py`), with optional camera shake (sudden jolts that move the
whole image, with the streak they leave in the exposure). Every track is a point on one layer:
its position in every frame follows from the layer's transform, and it is visible where it is
inside the frame, its own layer is the topmost opaque one (alpha > 0.5) at its pixel and (on a
turning body) it faces the camera. Photometric drift per layer, global gain, noise, defocus blur
and motion blur (averaged sub-frame renders).

All paths are functions of continuous time, so motion blur is an average of renders at
t + offsets. Random parameters come from a CPU torch.Generator (deterministic per seed); pixel-
sized random tensors from a CUDA generator seeded from it.
"""
import math

import torch
import torch.nn.functional as F

from .blur import blur_images, defocus, streak
from .draws import FOLLOW_SALT, normal as _n, rand_dir as _rand_dir, side_stream as _side_stream, uniform as _u
from .follow import follow_first_object
from .geometry import apply_h, dot2, homography_from_corners, inv2x2, matvec2, pixel_grid, rot
from .photobanks import BG, STAMP
from .pale import draw_pale, paled
from .relight import draw_relight, shading
from .synth_options import SynthOptions
from .turn import facing, to_apparent, to_surface

BEND_MAX = 0.3           # largest articulation swing, rad
BEND_BAND = STAMP / 5.0  # width of the soft band between the swinging part and the rest, stamp px
BEND_STEP_TOL = 1e-4     # stamp px: the inverse of an articulated map stops iterating below this
SHAKE_EVENTS = 2        # jolts per shaken clip, at most
FLAT_SIGMA_MAX = 12.0    # strongest blur of a flattened background, px of a 256 px frame
LIMB_SWING_MAX = 0.9     # largest swing of a limb about its joint, rad
TURN_MAX = 1.2           # largest swing of a cut-out turning round its in-plane axis, rad
TURN_RADIUS = STAMP / (2 * math.pi)   # its cylinder, stamp px: the stamp wraps once round it
TILT_MAX = 0.25          # largest perspective term g.v over the cut-out's half-extent (0.25: its
                         # near side shows up to (1 + 0.25 sqrt 2) / (1 - 0.25 sqrt 2) = 2.1x its far side)


def clip_size(S):
    """A clip's size: S is the side of a square clip or (W, H) -> (W, H)."""
    return (S, S) if isinstance(S, int) else (int(S[0]), int(S[1]))


def parse_clip_size(text):
    """'256' -> 256 (square clips); '448x256' -> (448, 256). Sides must be multiples of 32 (the
    network's input grid)."""
    try:
        sides = [int(v) for v in text.lower().split("x")]
    except ValueError:
        sides = []
    if len(sides) not in (1, 2) or any(v <= 0 or v % 32 for v in sides):
        raise ValueError(f"'{text}' is not a side or WxH of multiples of 32")
    return sides[0] if len(sides) == 1 else (sides[0], sides[1])


def equivalent_side(S):
    """The side of the square with a clip's area: what motion and object sizes scale with (for
    a square clip exactly its side)."""
    W, H = clip_size(S)
    return math.sqrt(W * H)


class ClipParams:
    """All random parameters of B clips (drawn on the CPU generator, moved to `device`)."""

    def __init__(self, banks, B, T, S, gen, opt, device):
        M = opt.max_objects
        W, H = clip_size(S)
        side = equivalent_side(S)
        sc = side / 256.0
        jump = (torch.rand(B, generator=gen) < opt.jump_prob).float()
        speed_mul = 1 + jump * _u(gen, B, lo=2.0, hi=3.5)
        # --- camera: texture px per output px, centre path, rotation, zoom, perspective corners
        self.bg_idx = torch.randint(0, banks.bg.shape[0], (B,), generator=gen)
        m0 = _u(gen, B, lo=0.55, hi=1.6) * 256.0 / side        # texture px per output px
        static = (torch.rand(B, generator=gen) < opt.static_cam_prob).float()
        v = _rand_dir(gen, B) * (_u(gen, B, hi=opt.cam_speed) * speed_mul * (1 - static))[:, None]
        acc = _n(gen, B, 2, std=0.08) * (1 - static)[:, None]
        self.cam = dict(
            c0=torch.full((B, 2), BG / 2.0) + _n(gen, B, 2, std=40.0),
            v=v * m0[:, None] * sc, acc=acc * m0[:, None] * sc, m0=m0,
            th0=_n(gen, B, std=0.25), om=_n(gen, B, std=0.012) * (1 - static) * speed_mul,
            zeta=_n(gen, B, std=0.01) * (1 - static),
            e0=_n(gen, B, 4, 2, std=0.03), e1=_n(gen, B, 4, 2, std=0.03) * (1 - static)[:, None, None],
            flip=torch.where(torch.rand(B, 2, generator=gen) < 0.5, -1.0, 1.0),
        )
        # --- objects
        nobj = torch.randint(0, M + 1, (B,), generator=gen)
        nobj = torch.where(torch.rand(B, generator=gen) < 0.15, torch.ones_like(nobj), nobj)
        self.active = (torch.arange(M)[None] < nobj[:, None]).float()         # [B, M]
        self.st_idx = torch.randint(0, banks.stamps.shape[0], (B, M), generator=gen)
        size = _u(gen, B, M, lo=0.18, hi=0.6) * side
        ov = _rand_dir(gen, B, M) * (_u(gen, B, M, hi=opt.obj_speed) * sc * speed_mul[:, None])[..., None]
        self.obj = dict(
            c0=_u(gen, B, M, 2, lo=-0.05, hi=1.05) * torch.tensor([W, H]), v=ov, acc=_n(gen, B, M, 2, std=0.1 * sc),
            amp=_u(gen, B, M, 2, hi=12.0 * sc), w=_u(gen, B, M, 2, lo=0.1, hi=0.4),
            ph=_u(gen, B, M, 2, hi=2 * math.pi),
            th0=_u(gen, B, M, lo=-0.6, hi=0.6), om=_n(gen, B, M, std=0.03),
            s0=size / STAMP, zeta=_n(gen, B, M, std=0.012),
            flip=torch.where(torch.rand(B, M, generator=gen) < 0.5, -1.0, 1.0),
        )
        # deformation: 2 travelling sine components per object, in stamp pixels
        deform = (torch.rand(B, M, 1, generator=gen) < opt.deform_prob).float()
        self.deform_p = dict(
            a=_u(gen, B, M, 2, hi=4.0) * deform, k=_u(gen, B, M, 2, lo=0.4, hi=1.2),
            n=_rand_dir(gen, B, M, 2), d=_rand_dir(gen, B, M, 2), ph=_u(gen, B, M, 2, hi=2 * math.pi),
            w=_u(gen, B, M, 2, lo=0.05, hi=0.3), psi=_u(gen, B, M, 2, hi=2 * math.pi),
        )
        # articulation: the part of the stamp on one side of a line through a joint swings about
        # the joint, blended over a soft band (drawn only when enabled, so that clips of the
        # default options stay what they were)
        self.bend_p = None
        if opt.bend_prob > 0:
            bend = ((torch.rand(B, M, generator=gen) < opt.bend_prob) & (deform[..., 0] == 0)).float()
            self.bend_p = dict(
                a=_u(gen, B, M, lo=0.1, hi=BEND_MAX) * bend, w=_u(gen, B, M, lo=0.15, hi=0.5),
                psi=_u(gen, B, M, hi=2 * math.pi), j=_u(gen, B, M, 2, lo=0.3, hi=0.7) * STAMP,
                n=_rand_dir(gen, B, M),
            )
        # turn in depth: the affine image v of a stamp point is shown at c + v / (1 + g(t) . v),
        # g(t) = k sin(w t + psi) dir / (half-extent of the cut-out), |k| <= TILT_MAX
        self.tilt_p = None
        if opt.tilt_prob > 0:
            tilt = (torch.rand(B, M, generator=gen) < opt.tilt_prob).float()
            self.tilt_p = dict(k=_u(gen, B, M, lo=0.08, hi=TILT_MAX) * tilt, w=_u(gen, B, M, lo=0.05, hi=0.3),
                               psi=_u(gen, B, M, hi=2 * math.pi), dir=_rand_dir(gen, B, M))
        # photometric
        self.photo = dict(
            g0=_n(gen, B, 3, std=0.1), g1=_n(gen, B, 3, std=0.12),
            obj_g0=_n(gen, B, M, 3, std=0.12), obj_g1=_n(gen, B, M, 3, std=0.12),
            contrast=_u(gen, B, lo=0.75, hi=1.2),
            noise=_u(gen, B, hi=opt.noise_max),
            gray=(torch.rand(B, generator=gen) < 0.08).float(),
            defocus=torch.where(torch.rand(B, generator=gen) < opt.defocus_prob, _u(gen, B, lo=0.4, hi=1.3), torch.zeros(B)),
        )
        self.motion_blur = bool(torch.rand(1, generator=gen) < opt.motion_blur_prob)
        self.shutter = float(_u(gen, 1, lo=0.3, hi=0.8))
        # camera shake: per event a displacement a (output px) reached over d frames from t0, and
        # either undone (a pulse, 1 - cos 2 pi u) or kept (a step, 1 - cos pi u); u = (t - t0) / d
        self.shake_p = None
        if opt.shake_prob > 0:
            E = SHAKE_EVENTS
            on = (torch.rand(B, 1, generator=gen) < opt.shake_prob) & \
                 ((torch.arange(E)[None] == 0) | (torch.rand(B, E, generator=gen) < 0.5))
            self.shake_p = dict(
                a=_rand_dir(gen, B, E) * (_u(gen, B, E, lo=6.0, hi=36.0) * sc * on.float())[..., None],
                t0=_u(gen, B, E, lo=-opt.time_scale, hi=max(T - 2.0, 0.0) * opt.time_scale),
                d=_u(gen, B, E, lo=1.5, hi=5.0),
                pulse=(torch.rand(B, E, generator=gen) < 0.5).float(),
                shutter=_u(gen, B, lo=0.4, hi=0.9))
        # limbs (drawn last, so that clips without them stay what they were): a capsule of the
        # stamp from joint j along dir, `len` long and 2 half_width wide, turned by
        # phi(t) = a sin(w t + psi) about j; `above`: drawn over its body, else under it
        self.limb_p = None
        if opt.limb_prob > 0:
            self.limb_p = dict(
                on=(torch.rand(B, M, generator=gen) < opt.limb_prob).float(),
                j=(STAMP - 1) / 2.0 + _u(gen, B, M, 2, lo=-0.12, hi=0.12) * STAMP, dir=_rand_dir(gen, B, M),
                len=_u(gen, B, M, lo=0.3, hi=0.55) * STAMP, half_width=_u(gen, B, M, lo=0.07, hi=0.14) * STAMP,
                a=_u(gen, B, M, lo=0.3, hi=LIMB_SWING_MAX), w=_u(gen, B, M, lo=0.15, hi=0.6),
                psi=_u(gen, B, M, hi=2 * math.pi), above=(torch.rand(B, M, generator=gen) < 0.6).float())
        # flattened backgrounds (drawn last too): blur sigma in texture px (3-12 px of a 256 px
        # frame), posterize levels (0: none)
        self.flat_p = None
        if opt.flat_prob > 0:
            self.flat_p = dict(on=(torch.rand(B, generator=gen) < opt.flat_prob).float(),
                               sigma=_u(gen, B, lo=3.0, hi=FLAT_SIGMA_MAX) * m0 * side / 256.0,
                               levels=torch.where(torch.rand(B, generator=gen) < 0.5,
                                                  torch.randint(3, 9, (B,), generator=gen).float(), torch.zeros(B)))
        # turning round (drawn last too), for the objects that neither deform, articulate nor
        # have a limb: phi(t) = phi0 + a sin(w t + psi) about the axis across n; for 3 in 4 the
        # axis is near the stamp's vertical (n within about 0.2 rad of its x axis), as an
        # upright body turns round, for the others any direction
        self.turn_p = None
        if opt.turn_prob > 0:
            turn = (torch.rand(B, M, generator=gen) < opt.turn_prob) & (deform[..., 0] == 0)
            if self.bend_p is not None:
                turn = turn & (self.bend_p["a"] == 0)
            if self.limb_p is not None:
                turn = turn & (self.limb_p["on"] == 0)
            upright = torch.rand(B, M, generator=gen) < 0.75
            tipped = _n(gen, B, M, std=0.2)
            n = torch.where(upright[..., None], torch.stack([torch.cos(tipped), torch.sin(tipped)], -1),
                            _rand_dir(gen, B, M))
            self.turn_p = dict(on=turn, n=n,
                               phi0=_u(gen, B, M, lo=-0.4, hi=0.4), a=_u(gen, B, M, lo=0.3, hi=TURN_MAX),
                               w=_u(gen, B, M, lo=0.05, hi=0.2), psi=_u(gen, B, M, hi=2 * math.pi))
        # pale cut-outs (fur, skin, plain clothes; `pale.py`) and relit ones (shading sliding over
        # a body; `relight.py`), each drawn from a side stream of gen: the same clip, paler or relit
        self.pale_p = draw_pale(gen, B, M, opt.pale_prob)
        self.relight_p = draw_relight(gen, B, M, opt.relight_prob)
        # a camera following object slot 0 (`follow.py`); drawn from a side stream too
        if opt.follow_prob > 0:
            fg = _side_stream(gen, FOLLOW_SALT)
            follow = (torch.rand(B, generator=fg) < opt.follow_prob).float()
            follow_first_object(self.cam, self.obj, self.active, follow,
                                _u(fg, B, 2, lo=0.3, hi=0.7) * torch.tensor([W, H]))
        for d in (self.cam, self.obj, self.deform_p, self.photo, self.bend_p or {}, self.tilt_p or {},
                  self.shake_p or {}, self.limb_p or {}, self.flat_p or {}, self.turn_p or {}, self.pale_p or {},
                  self.relight_p or {}):
            for k in d:
                d[k] = d[k].to(device)
        self.active = self.active.to(device)
        self.bg_idx = self.bg_idx.to(device)
        self.st_idx = self.st_idx.to(device)
        self.W, self.H = W, H
        self.B, self.M = B, M

    # --- paths --------------------------------------------------------------------------------

    def cam_h(self, t):
        """t [Tt] -> [B, Tt, 3, 3] homography output px -> texture px."""
        c, W, H = self.cam, self.W, self.H
        t_ = t[None, :, None]
        ctr = c["c0"][:, None] + c["v"][:, None] * t_ + 0.5 * c["acc"][:, None] * t_ ** 2
        th = c["th0"][:, None] + c["om"][:, None] * t[None]
        m = c["m0"][:, None] * torch.exp(c["zeta"][:, None] * t[None])
        last = torch.tensor([W - 1, H - 1], dtype=torch.float32, device=t.device)
        half = last / 2.0
        corners = torch.tensor([[0, 0], [W - 1, 0], [W - 1, H - 1], [0, H - 1]], dtype=torch.float32, device=t.device)
        rel = (corners - half)[None, None] * c["flip"][:, None, None, :]          # [B, 1, 4, 2]
        pert = (c["e0"][:, None] + c["e1"][:, None] * (t[None, :, None, None] / 24.0)) * last
        rel = rel + pert                                                         # [B, Tt, 4, 2]
        R = rot(th)                                                              # [B, Tt, 2, 2]
        dst = ctr[:, :, None] + m[..., None, None] * (rel @ R.transpose(-1, -2))
        src = corners[None, None].expand_as(dst)
        H = homography_from_corners(src, dst).float()
        if self.shake_p is not None:
            # output px p shows what p - shake(t) showed without the jolt
            sh = self.shake(t[None].expand(self.B, -1))[0]                      # [B, Tt, 2]
            Tm = torch.eye(3, device=t.device).repeat(*sh.shape[:2], 1, 1)
            Tm[..., :2, 2] = -sh
            H = H @ Tm
        return H

    def _p(self, d, key, m, nd):
        """Parameter d[key][:, m] reshaped to [B, 1 x nd, ...rest] for broadcasting over time dims."""
        x = d[key][:, m]
        return x.reshape((x.shape[0],) + (1,) * nd + tuple(x.shape[1:]))

    def obj_scale(self, m, t):
        """Output px per stamp px of slot m at times t [B, *X] -> [B, *X]."""
        o, nd = self.obj, t.dim() - 1
        return self._p(o, "s0", m, nd) * torch.exp(self._p(o, "zeta", m, nd) * t)

    def obj_affine(self, m, t):
        """Object slot m at times t [B, *X] -> A [B, *X, 2, 2], c [B, *X, 2]:
        output = c + A (y - y_c), y in stamp px, y_c the stamp centre."""
        o, nd = self.obj, t.dim() - 1
        t_ = t[..., None]
        ctr = (self._p(o, "c0", m, nd) + self._p(o, "v", m, nd) * t_ + 0.5 * self._p(o, "acc", m, nd) * t_ ** 2
               + self._p(o, "amp", m, nd) * torch.sin(self._p(o, "w", m, nd) * t_ + self._p(o, "ph", m, nd)))
        if self.shake_p is not None:
            ctr = ctr + self.shake(t)[0]
        th = self._p(o, "th0", m, nd) + self._p(o, "om", m, nd) * t
        A = rot(th) * self.obj_scale(m, t)[..., None, None]
        f = self._p(o, "flip", m, nd)
        flip = torch.stack([f, torch.ones_like(f)], -1)                          # mirror x
        return A * flip[..., None, :], ctr

    def deform(self, m, y, t):
        """Smooth displacement in stamp px: y [B, *X, 2], t [B, *X] -> [B, *X, 2]."""
        return self.deformation(m, t)(y)

    def deformation(self, m, t):
        """The displacement field D of slot m at times t [B, *X], as a function of stamp points
        y [B, *X, 2] -> [B, *X, 2]. Its time-dependent terms are computed here once, so a fixed
        point iterating D (stamp_to_out) pays only for the terms that depend on y.
        Two travelling sine components: a sin(w t + psi) sin(2 pi k (n . y) / STAMP + ph) d, plus
        the articulation (bend) where enabled."""
        d, nd = self.deform_p, t.dim() - 1
        amp = self._p(d, "a", m, nd) * torch.sin(self._p(d, "w", m, nd) * t[..., None] + self._p(d, "psi", m, nd))
        n, k, ph, dirs = (self._p(d, key, m, nd) for key in ("n", "k", "ph", "d"))
        bend = self.bending(m, t) if self.bend_p is not None else None

        def field(y):
            phase = (y[..., None, :] * n).sum(-1)
            phase = phase * (2 * math.pi / STAMP) * k + ph
            disp = ((amp * torch.sin(phase))[..., None] * dirs).sum(-2)
            return disp if bend is None else disp + bend(y)
        return field

    def bending(self, m, t):
        """Articulation of slot m at times t [B, *X] as a function of stamp points y:
        s(y) (R(phi(t)) - I)(y - j), s = sigmoid(n . (y - j) / BEND_BAND), phi = a sin(w t + psi).
        |grad| <= BEND_MAX (1 + max|y - j| / (4 BEND_BAND)) < 0.7: the map y -> y + D(y) stays
        one-to-one and stamp_to_out's fixed point converges."""
        d, nd = self.bend_p, t.dim() - 1
        phi = self._p(d, "a", m, nd) * torch.sin(self._p(d, "w", m, nd) * t + self._p(d, "psi", m, nd))
        R = rot(phi)
        j, n = self._p(d, "j", m, nd), self._p(d, "n", m, nd)

        def field(y):
            r = y - j
            side = torch.sigmoid(dot2(r, n) / BEND_BAND)
            return side[..., None] * (matvec2(R, r) - r)
        return field

    def shake(self, t):
        """Camera-shake displacement of the whole image and its rate: t [B, *X] ->
        (offset [B, *X, 2] output px, velocity [B, *X, 2] px per frame)."""
        d, nd = self.shake_p, t.dim() - 1
        p = {k: v.reshape((v.shape[0],) + (1,) * nd + tuple(v.shape[1:])) for k, v in d.items() if k != "shutter"}
        u = (t[..., None] - p["t0"]) / p["d"]                                    # [B, *X, E]
        inside = ((u > 0) & (u < 1)).float()
        w = math.pi * (1 + p["pulse"])                                           # 2 pi pulse, pi step
        uc = u.clamp(0, 1)
        # (1 - cos w u) / 2: a pulse (w = 2 pi) is back at 0 for u >= 1, a step (w = pi) stays at 1
        shape = (1 - torch.cos(w * uc)) / 2
        rate = inside * w * torch.sin(w * uc) / (2 * p["d"])
        return (shape[..., None] * p["a"]).sum(-2), (rate[..., None] * p["a"]).sum(-2)

    def tilt(self, m, t):
        """Perspective vector g [B, *X, 2] (1 / output px) of slot m at times t [B, *X]; zero
        without tilt. Scaled by the cut-out's current half-extent, so |g . v| <= TILT_MAX sqrt 2
        over the stamp: the denominator 1 + g . v stays >= 0.64."""
        d, nd = self.tilt_p, t.dim() - 1
        half = self.obj_scale(m, t) * (STAMP / 2.0)
        k = self._p(d, "k", m, nd) * torch.sin(self._p(d, "w", m, nd) * t + self._p(d, "psi", m, nd))
        return (k / half)[..., None] * self._p(d, "dir", m, nd)

    def turning(self, m, t):
        """The arguments of turn.py's maps for slot m at times t [B, *X]: (centre, n, R, phi, on)."""
        d, nd = self.turn_p, t.dim() - 1
        phi = self._p(d, "phi0", m, nd) + self._p(d, "a", m, nd) * torch.sin(
            self._p(d, "w", m, nd) * t + self._p(d, "psi", m, nd))
        on = self._p(d, "on", m, nd).expand_as(phi)
        return (STAMP - 1) / 2.0, self._p(d, "n", m, nd), TURN_RADIUS, phi, on

    def faces_camera(self, m, z, t):
        """[B, *X] bool: the stamp point z [B, *X, 2] of slot m faces the camera at t (always,
        unless the cut-out turns round)."""
        if self.turn_p is None:
            return torch.ones(z.shape[:-1], dtype=torch.bool, device=z.device)
        return facing(z, *self.turning(m, t))

    def limb_swing(self, m, t):
        """Rotation of slot m's limb about its joint at times t [B, *X] -> [B, *X, 2, 2]."""
        d, nd = self.limb_p, t.dim() - 1
        return rot(self._p(d, "a", m, nd) * torch.sin(self._p(d, "w", m, nd) * t + self._p(d, "psi", m, nd)))

    def limb_to_body(self, m, y, t):
        """A limb point (stamp px, limb at rest) -> where the swung limb puts it in the body's
        stamp px: j + R(phi(t)) (y - j). y [B, *X, 2], t [B, *X]."""
        j = self._p(self.limb_p, "j", m, t.dim() - 1)
        return j + matvec2(self.limb_swing(m, t), y - j)

    def body_to_limb(self, m, y, t):
        """Inverse of limb_to_body: j + R(phi(t))^T (y - j)."""
        j = self._p(self.limb_p, "j", m, t.dim() - 1)
        return j + matvec2(self.limb_swing(m, t).transpose(-1, -2), y - j)

    def limb_mask(self, m, y, nd):
        """Soft capsule of slot m's limb at stamp points y [B, *X, 2] (limb at rest; nd = the
        number of *X dims) -> [B, *X] in 0..1; 0 for objects without a limb."""
        d = self.limb_p
        j, u, length = self._p(d, "j", m, nd), self._p(d, "dir", m, nd), self._p(d, "len", m, nd)
        r = y - j
        along = torch.minimum(dot2(r, u).clamp_min(0), length)
        dist = (r - along[..., None] * u).norm(dim=-1)
        inside = ((self._p(d, "half_width", m, nd) - dist) / 1.5 + 0.5).clamp(0, 1)
        return inside * self._p(d, "on", m, nd)

    def out_to_stamp(self, m, x, t):
        """Output px -> the stamp px that slot m shows there. x [B, *X, 2], t [B, *X]."""
        A, c = self.obj_affine(m, t)
        yc = (STAMP - 1) / 2.0
        u = x - c
        if self.tilt_p is not None:
            # undo u = v / (1 + g.v): v = u / (1 - g.u). A pixel with 1 - g.u <= 0.05 lies near or
            # beyond the plane's horizon, where v would blow up (|g.v| >= 1, while the stamp has
            # |g.v| <= 0.36): it shows nothing of this cut-out
            den = 1 - dot2(self.tilt(m, t), u)[..., None]
            u = torch.where(den > 0.05, u / den.clamp_min(0.05), torch.full_like(u, 1e6))
        y = matvec2(inv2x2(A), u) + yc
        if self.turn_p is not None:
            y = to_surface(y, *self.turning(m, t))
        return y + self.deform(m, y, t)

    def stamp_to_out(self, m, z, t, iters=None):
        """Inverse of out_to_stamp. Fixed point y = z - D(y), a contraction since |grad D| < 0.5
        (sine fields: 8 iterations) or < 0.7 (articulation: up to 40, stopping once a step moves
        no point by BEND_STEP_TOL; the typical rate is 0.3 per step, so about 12 are run)."""
        articulated = self.bend_p is not None
        iters = iters or (40 if articulated else 8)
        D = self.deformation(m, t)
        if self.turn_p is not None:   # a turning cut-out neither deforms nor articulates: D = 0 there
            z = to_apparent(z, *self.turning(m, t))
        y = z
        for i in range(iters):
            y_next = z - D(y)
            settled = articulated and i % 4 == 3 and float((y_next - y).abs().max()) < BEND_STEP_TOL
            y = y_next
            if settled:
                break
        A, c = self.obj_affine(m, t)
        v = matvec2(A, y - (STAMP - 1) / 2.0)
        if self.tilt_p is not None:
            v = v / (1 + dot2(self.tilt(m, t), v)[..., None])
        return v + c


def _sample_tex(tex, coords, size):
    """tex [B, C, size, size] float, coords [B, Hg, Wg, 2] in texture px -> [B, C, Hg, Wg]."""
    g = coords * (2.0 / (size - 1)) - 1.0
    return F.grid_sample(tex, g, mode="bilinear", padding_mode="zeros", align_corners=True)


def _render(banks, P, times, bg=None, stamps=None):
    """Renders frames at times [T] over the background textures bg (default _backgrounds) with
    the cut-outs stamps (default _stamps) -> (rgb [B, T, 3, H, W] in 0..1, top layer id [B, T, H, W])."""
    B, M, W, H = P.B, P.M, P.W, P.H
    T = times.shape[0]
    dev = times.device
    pix = pixel_grid(W, H, dev)[None]                                           # [1, H*W, 2]
    cam = P.cam_h(times)                                                          # [B, T, 3, 3]
    src = apply_h(cam, pix[None].expand(B, T, H * W, 2))                         # [B, T, H*W, 2]
    # reflection padding keeps the frame filled when the camera looks past the photo's edge
    g = src * (2.0 / (BG - 1)) - 1.0
    bg = _backgrounds(banks, P) if bg is None else bg
    stamps = _stamps(banks, P) if stamps is None else stamps
    img = F.grid_sample(bg, g.reshape(B, T * H, W, 2), mode="bilinear", padding_mode="reflection",
                        align_corners=True).reshape(B, 3, T, H, W).permute(0, 2, 1, 3, 4)
    ph = P.photo
    tt = (times / 24.0)[None, :, None]
    gain = torch.exp(ph["g0"][:, None] + ph["g1"][:, None] * tt)                 # [B, T, 3]
    img = img * gain[..., None, None]
    top = torch.zeros(B, T, H, W, dtype=torch.uint8, device=dev)
    tgrid = times[None, :, None].expand(B, T, 1)       # per-frame transforms, broadcast over pixels
    for m in range(M):
        z = P.out_to_stamp(m, pix[:, None], tgrid)                               # [B, T, H*W, 2]
        st = stamps[:, m]                                                        # [B, 4, STAMP, STAMP]
        og = torch.exp(ph["obj_g0"][:, m, None] + ph["obj_g1"][:, m, None] * tt)[..., None, None]  # [B, T, 3, 1, 1]
        active = P.active[:, m, None, None, None, None]

        def sample(coords):   # stamp px [B, T, H*W, 2] -> [B, T, 4, H, W]
            return _sample_tex(st, coords.reshape(B, T * H, W, 2), STAMP).reshape(B, 4, T, H, W).permute(0, 2, 1, 3, 4)

        def per_pixel(mask):  # [B, T, H*W] -> [B, T, 1, H, W]
            return mask.reshape(B, T, 1, H, W)

        def lit(coords):      # the layer's gain at stamp px coords: its drift, times its shading if relit
            return og if P.relight_p is None else og * per_pixel(shading(P.relight_p, m, coords, tgrid))
        layer = sample(z)
        alpha = layer[:, :, 3:4] * active
        if P.limb_p is not None:
            # the limb's pixels leave the body and are drawn, swung, as layer M + 1 + m
            z_limb = P.body_to_limb(m, z, tgrid)
            limb = sample(z_limb)
            limb_alpha = limb[:, :, 3:4] * active * per_pixel(P.limb_mask(m, z_limb, 2))
            alpha = alpha * (1 - per_pixel(P.limb_mask(m, z, 2)))
            above = P.limb_p["above"][:, m, None, None, None, None]
            limb_gain = lit(z_limb)
            img, top = _over(img, top, limb[:, :, :3], limb_gain, limb_alpha * (1 - above), M + 1 + m)
        img, top = _over(img, top, layer[:, :, :3], lit(z), alpha, m + 1)
        if P.limb_p is not None:
            img, top = _over(img, top, limb[:, :, :3], limb_gain, limb_alpha * above, M + 1 + m)
    return img, top


def _backgrounds(banks, P):
    """The clips' background textures [B, 3, BG, BG] in 0..1, flattened where P.flat_p says so:
    a Gaussian blur of sigma texture px, then (levels > 0) each channel rounded to that many
    levels and softened by a 1 px blur, which leaves flat bands with soft edges."""
    bg = banks.bg[P.bg_idx].float() / 255.0
    if P.flat_p is None or not bool(P.flat_p["on"].any()):
        return bg
    f = P.flat_p
    flat = blur_images(bg, f["sigma"])
    levels = f["levels"][:, None, None, None]
    banded = blur_images(torch.round(flat * levels.clamp_min(1)) / levels.clamp_min(1), torch.ones_like(f["sigma"]))
    flat = torch.where(levels > 0, banded, flat)
    on = f["on"][:, None, None, None]
    return on * flat + (1 - on) * bg


def _stamps(banks, P):
    """The clips' cut-outs [B, M, 4, STAMP, STAMP] in 0..1, pale where P.pale_p says so."""
    st = banks.stamps[P.st_idx].float() / 255.0
    if P.pale_p is None or not bool(P.pale_p["on"].any()):
        return st
    return torch.stack([paled(st[:, m], P.pale_p, m) for m in range(P.M)], 1)


def _over(img, top, rgb, gain, alpha, layer_id):
    """Composites a layer (rgb [B, T, 3, H, W] times gain [B, T, 3, 1, 1], alpha [B, T, 1, H, W])
    over the frames; pixels where it is opaque (alpha > 0.5) get its id in the top-layer map
    [B, T, H, W]."""
    img = alpha * rgb * gain + (1 - alpha) * img
    return img, torch.where(alpha[:, :, 0] > 0.5, torch.full_like(top, layer_id), top)


def make_clips(banks, B, T, S, N, gen, opt=None, device="cuda"):
    """S: the side of square clips, or (W, H). Returns dict: video [B, T, 3, H, W] float 0..255,
    tracks [B, N, T, 2] (x, y pixels of the clip, centres at integers), vis [B, N, T] bool,
    tq [B, N] long (vis[b, n, tq] is True), layer [B, N] (0: background, m + 1: object slot m,
    above M: a limb), bg_tracks [B, N, T, 2] (the path of the background point under each query)."""
    opt = opt or SynthOptions()
    P = ClipParams(banks, B, T, S, gen, opt, device)
    M, W, H = P.M, P.W, P.H
    cg = torch.Generator(device=device)
    cg.manual_seed(int(torch.randint(0, 2 ** 62, (1,), generator=gen)))
    times = torch.arange(T, device=device, dtype=torch.float32) * opt.time_scale
    bg, stamps = _backgrounds(banks, P), _stamps(banks, P)      # drawn once for every sub-frame render
    img, top = _render(banks, P, times, bg, stamps)
    if P.motion_blur:
        acc = img
        for off in (-0.5, 0.5):
            acc = acc + _render(banks, P, times + off * P.shutter * opt.time_scale, bg, stamps)[0]
        img = acc / 3.0
    if P.shake_p is not None:
        # the jolt moves every layer alike: the exposure is a line average of the frame itself
        vel = P.shake(times[None].expand(P.B, T))[1] * (P.shake_p["shutter"][:, None, None] * opt.time_scale)
        img = streak(img, vel)
    ph = P.photo
    mean = img.mean(dim=(2, 3, 4), keepdim=True)
    img = (img - mean) * ph["contrast"][:, None, None, None, None] + mean
    gray = img.mean(2, keepdim=True).expand_as(img)
    gw = ph["gray"][:, None, None, None, None]
    img = gw * gray + (1 - gw) * img
    if bool((ph["defocus"] > 0).any()):
        img = defocus(img, ph["defocus"])
    img = img + torch.randn(img.shape, generator=cg, device=device) * ph["noise"][:, None, None, None, None]
    video = (img.clamp(0, 1) * 255.0)

    # ---- queries: candidates at random (frame, pixel), weighted toward objects, Gumbel top-N
    C = 4 * N
    tq_c = torch.where(torch.rand(B, C, generator=cg, device=device) < opt.tq_zero_prob,
                       torch.zeros(B, C, device=device, dtype=torch.long),
                       torch.randint(0, max(1, T - 3), (B, C), generator=cg, device=device))
    if W == H:   # one draw for both coordinates: square clips stay what they were before W x H
        px = torch.randint(0, W, (B, C, 2), generator=cg, device=device)
    else:
        px = torch.stack([torch.randint(0, W, (B, C), generator=cg, device=device),
                          torch.randint(0, H, (B, C), generator=cg, device=device)], -1)
    bidx = torch.arange(B, device=device)[:, None].expand(B, C)
    layer_c = top[bidx, tq_c, px[..., 1], px[..., 0]].long()
    w = 1.0 + opt.obj_point_weight * (layer_c > 0).float()
    if P.limb_p is not None:
        w = w + opt.limb_point_weight * (layer_c > M).float()
    gumbel = -torch.log(-torch.log(torch.rand(B, C, generator=cg, device=device).clamp(1e-9, 1 - 1e-9)))
    sel = torch.topk(torch.log(w) + gumbel, N, dim=1).indices
    tq = torch.gather(tq_c, 1, sel)
    layer = torch.gather(layer_c, 1, sel)
    xq = torch.gather(px, 1, sel[..., None].expand(B, N, 2)).float()
    xq = xq + torch.rand(B, N, 2, generator=cg, device=device) - 0.5   # sub-pixel, same rounded pixel

    # ---- trajectories on every layer, then pick each track's own
    cam = P.cam_h(times)                                                    # [B, T, 3, 3]
    cam_q = cam[torch.arange(B, device=device)[:, None], tq]                # [B, N, 3, 3]
    u = apply_h(cam_q, xq[:, :, None, :])[:, :, 0]                          # texture px [B, N, 2]
    Hinv = torch.linalg.inv(cam.double()).float()
    bg_tr = apply_h(Hinv, u[:, None].expand(B, T, N, 2)).permute(0, 2, 1, 3)   # [B, N, T, 2]
    # objects: stamp coordinate at the query frame, then the inverse map at every frame; a limb
    # point is a fixed point of the limb at rest, carried into the body's stamp at each frame; a
    # point of a cut-out turning round is hidden while it faces away
    tall = times[None, None].expand(B, N, T)
    tracks = bg_tr
    faces = torch.ones(B, N, T, dtype=torch.bool, device=device)
    t_q = tq.float() * opt.time_scale                                       # the query frames' times
    for m in range(M):
        zq = P.out_to_stamp(m, xq, t_q)                                     # [B, N, 2]
        z = zq[:, :, None].expand(B, N, T, 2)
        if P.limb_p is not None:
            z_limb = P.limb_to_body(m, P.body_to_limb(m, zq, t_q)[:, :, None].expand(B, N, T, 2), tall)
            both = P.stamp_to_out(m, torch.cat([z, z_limb], 1), torch.cat([tall, tall], 1))
            tracks = torch.where((layer == M + 1 + m)[:, :, None, None], both[:, N:], tracks)
            z_tr = both[:, :N]
            faces = torch.where((layer == M + 1 + m)[:, :, None], P.faces_camera(m, z_limb, tall), faces)
        else:
            z_tr = P.stamp_to_out(m, z, tall)                               # [B, N, T, 2]
        tracks = torch.where((layer == m + 1)[:, :, None, None], z_tr, tracks)
        faces = torch.where((layer == m + 1)[:, :, None], P.faces_camera(m, z, tall), faces)
    inside = (tracks[..., 0] >= 0) & (tracks[..., 0] <= W - 1) & (tracks[..., 1] >= 0) & (tracks[..., 1] <= H - 1)
    rx = tracks[..., 0].round().clamp(0, W - 1).long()
    ry = tracks[..., 1].round().clamp(0, H - 1).long()
    tt = torch.arange(T, device=device)[None, None].expand(B, N, T)
    bb = torch.arange(B, device=device)[:, None, None].expand(B, N, T)
    top_at = top[bb, tt, ry, rx].long()
    vis = inside & (top_at == layer[:, :, None]) & faces
    # the query frame is visible by construction; enforce it against rounding at the border
    vis = vis | (tt == tq[:, :, None])
    return dict(video=video, tracks=tracks, vis=vis, tq=tq, layer=layer, bg_tracks=bg_tr)
