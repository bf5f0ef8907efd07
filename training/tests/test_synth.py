"""CPU checks of the clip generator's ground truth (needs training/.data from prepare_data.py)."""
import math
import os
import sys

import pytest
import torch

HERE = os.path.dirname(__file__)
sys.path.insert(0, os.path.join(HERE, ".."))
from edgetap import photobanks, synth  # noqa: E402
from edgetap.blur import streak  # noqa: E402
from edgetap.geometry import apply_h, dot2  # noqa: E402
from edgetap.model import bilinear_sample  # noqa: E402
from edgetap.relight import shading  # noqa: E402

DATA = os.path.join(HERE, "..", ".data")


def clips_with(P, banks, B, T, S, N, gen, opt):
    """make_clips with the clip parameters P (make_clips draws its own: ClipParams is replaced
    while it runs), so that a test can set them."""
    orig = synth.ClipParams
    synth.ClipParams = lambda *a, **k: P
    try:
        return synth.make_clips(banks, B, T, S, N, gen, opt, device="cpu")
    finally:
        synth.ClipParams = orig


def clips_on_and_off(P, option, banks, B, T, S, N, seed, opt):
    """The clips of P drawn with the option's parameters P.<option>["on"] all set, then all clear
    (the same draws otherwise); asserts that the two have the same tracks, visibility and layers.
    Leaves the option on."""
    clips = []
    for on in (0.0, 1.0):
        getattr(P, option)["on"].fill_(on)
        clips.append(clips_with(P, banks, B, T, S, N, torch.Generator().manual_seed(seed), opt))
    plain, drawn = clips
    for key in ("tracks", "vis", "tq", "layer", "bg_tracks"):
        assert torch.equal(drawn[key], plain[key]), key
    return drawn, plain


def test_object_maps_invert_exactly():
    """stamp_to_out is the inverse of out_to_stamp for sine-deformed, articulated and tilted
    objects: the ground truth of every object track rests on it."""
    banks = photobanks.Banks(torch.zeros(1, 3, photobanks.BG, photobanks.BG, dtype=torch.uint8),
                        torch.zeros(1, 4, photobanks.STAMP, photobanks.STAMP, dtype=torch.uint8))
    for opt in (synth.SynthOptions(deform_prob=1.0), synth.SynthOptions(deform_prob=0.0, bend_prob=1.0),
                synth.SynthOptions(deform_prob=0.5, bend_prob=1.0, tilt_prob=1.0)):
        P = synth.ClipParams(banks, 6, 16, 128, torch.Generator().manual_seed(5), opt, "cpu")
        moved = 0.0
        for m in range(P.M):
            z = torch.rand(6, 200, 16, 2, generator=torch.Generator().manual_seed(m)) * photobanks.STAMP
            t = torch.arange(16.0)[None, None].expand(6, 200, 16)
            x = P.stamp_to_out(m, z, t)
            assert (P.out_to_stamp(m, x, t) - z).norm(dim=-1).max().item() < 1e-3
            moved = max(moved, P.deform(m, z, t).norm(dim=-1).max().item())
        assert moved > 2.0          # the deformation is really there (stamp px)


FOLLOW_CONTENT_CASES = [
    (0.0, 0.0, 0.0, 96, 1.0, 0.0), (1.0, 0.0, 0.0, 96, 1.0, 0.0), (0.0, 1.0, 0.0, 96, 1.0, 0.0),
    (0.0, 0.0, 1.0, 96, 1.0, 0.0), (0.0, 0.0, 0.0, (128, 72), 1.0, 0.0), (1.0, 1.0, 1.0, (72, 128), 1.0, 0.0),
    (1.0, 1.0, 1.0, 96, 0.4, 0.0), (0.0, 0.0, 0.0, 128, 1.0, 1.0), (0.5, 1.0, 1.0, (72, 128), 1.0, 1.0)]


@pytest.mark.skipif(not os.path.isdir(DATA), reason="run training/prepare_data.py first")
@pytest.mark.parametrize("bend_prob,tilt_prob,shake_prob,size,time_scale,turn_prob", FOLLOW_CONTENT_CASES)
def test_tracks_follow_content(bend_prob, tilt_prob, shake_prob, size, time_scale, turn_prob):
    banks = photobanks.load_train_banks(DATA, "cpu", split="val", n_blobs=8)
    opt = synth.SynthOptions(motion_blur_prob=0, defocus_prob=0, noise_max=0, bend_prob=bend_prob,
                             tilt_prob=tilt_prob, shake_prob=shake_prob, time_scale=time_scale,
                             turn_prob=turn_prob,   # turning cut-outs are those that do not deform
                             deform_prob=0.0 if turn_prob else synth.SynthOptions.deform_prob)
    gen = torch.Generator().manual_seed(3)
    B, T, N = 3, 8, 64
    W, H = synth.clip_size(size)
    P = synth.ClipParams(banks, B, T, size, torch.Generator().manual_seed(3), opt, "cpu")
    for d in (P.photo,):
        d["g0"].zero_(), d["g1"].zero_(), d["obj_g0"].zero_(), d["obj_g1"].zero_()
        d["contrast"].fill_(1.0), d["gray"].zero_()
    if P.shake_p is not None:
        # every clip jolts by 12-20 px inside the clip; no streak, so colours stay comparable
        P.shake_p["a"] = P.shake_p["a"] / P.shake_p["a"].norm(dim=-1, keepdim=True).clamp_min(1e-6) * 16.0
        P.shake_p["t0"].clamp_(0.0, (T - 4.0) * time_scale)
        P.shake_p["d"].mul_(time_scale)
        P.shake_p["shutter"].zero_()
        times = torch.arange(T, dtype=torch.float32)[None].expand(B, T) * time_scale
        assert P.shake(times)[0].norm(dim=-1).amax(1).min() > 8
    clip = clips_with(P, banks, B, T, size, N, gen, opt)
    v, tr, vis, tq = clip["video"], clip["tracks"], clip["vis"], clip["tq"]
    assert v.shape == (B, T, 3, H, W) and tr.shape == (B, N, T, 2)
    # points seen after their query frame spread over the whole frame, x along W and y along H
    seen = vis & (torch.arange(T)[None, None] != tq[:, :, None])
    assert tr[..., 0][seen].max().item() > 0.8 * (W - 1) and tr[..., 1][seen].max().item() > 0.8 * (H - 1)
    assert bool(vis[torch.arange(B)[:, None], torch.arange(N)[None], tq].all())
    # colour at the track in frame t vs. colour at the query: small for visible points
    cols = torch.stack([bilinear_sample(v[:, t], tr[:, :, t]) for t in range(T)], 2)   # [B, N, T, 3]
    ref = torch.gather(cols, 2, tq[:, :, None, None].expand(B, N, 1, 3))
    diff = (cols - ref).abs().mean(-1)
    shuffled = (cols - ref.roll(1, dims=1)).abs().mean(-1)
    good = diff[vis].median().item()
    base = shuffled[vis].median().item()
    assert good < 0.25 * base, (good, base)
    assert vis.float().mean().item() > 0.3
    # the objects' own maps, not the camera's, from queries after frame 0
    on_objects = vis & ((clip["layer"] > 0) & (tq > 0))[:, :, None]
    assert on_objects.sum().item() > 20 and diff[on_objects].median().item() < 0.25 * base


@pytest.mark.skipif(not os.path.isdir(DATA), reason="run training/prepare_data.py first")
def test_limbs_swing_carry_their_tracks_and_hide_their_body():
    """A limb is a swinging layer of its own: its tracks keep their colour, it moves against its
    body, and where it is drawn over its body the body's tracks there are hidden."""
    banks = photobanks.load_train_banks(DATA, "cpu", split="val", n_blobs=16)
    opt = synth.SynthOptions(limb_prob=1.0, motion_blur_prob=0, defocus_prob=0, noise_max=0)
    B, T, N, S = 6, 12, 256, 128
    P = synth.ClipParams(banks, B, T, S, torch.Generator().manual_seed(4), opt, "cpu")
    for key in ("g0", "g1", "obj_g0", "obj_g1", "gray"):
        P.photo[key].zero_()
    P.photo["contrast"].fill_(1.0)
    clip = clips_with(P, banks, B, T, S, N, torch.Generator().manual_seed(4), opt)
    v, tr, vis, tq, layer = clip["video"], clip["tracks"], clip["vis"], clip["tq"], clip["layer"]
    M = P.M
    limb = (layer > M)[:, :, None].expand_as(vis)
    assert limb[:, :, 0].sum().item() >= 10
    cols = torch.stack([bilinear_sample(v[:, t], tr[:, :, t]) for t in range(T)], 2)
    ref = torch.gather(cols, 2, tq[:, :, None, None].expand(B, N, 1, 3))
    good = (cols - ref).abs().mean(-1)[limb & vis].median().item()
    base = (cols - ref.roll(1, dims=1)).abs().mean(-1)[limb & vis].median().item()
    assert good < 0.25 * base, (good, base)
    # limb points move against the body points that were under them at their query frames
    times = torch.arange(T, dtype=torch.float32)
    xq = torch.gather(tr, 2, tq[:, :, None, None].expand(B, N, 1, 2))[:, :, 0]
    apart = 0.0
    for m in range(M):
        zq = P.out_to_stamp(m, xq, tq.float())
        body = P.stamp_to_out(m, zq[:, :, None].expand(B, N, T, 2), times[None, None].expand(B, N, T))
        own = (layer == M + 1 + m)[:, :, None]
        apart = max(apart, ((body - tr).norm(dim=-1) * own).max().item())
    assert apart > 4.0
    # self-occlusion: body tracks inside the frame under their own limb are not visible
    _, top = synth._render(banks, P, times)
    inside = (tr >= 0).all(-1) & (tr[..., 0] <= S - 1) & (tr[..., 1] <= S - 1)
    rx, ry = tr[..., 0].round().clamp(0, S - 1).long(), tr[..., 1].round().clamp(0, S - 1).long()
    bb = torch.arange(B)[:, None, None].expand(B, N, T)
    tt = torch.arange(T)[None, None].expand(B, N, T)
    under_own_limb = inside & (layer[:, :, None] > 0) & (layer[:, :, None] <= M) & \
        (top[bb, tt, ry, rx].long() == layer[:, :, None] + M)
    assert under_own_limb.sum().item() > 0
    assert not vis[under_own_limb].any()


@pytest.mark.skipif(not os.path.isdir(DATA), reason="run training/prepare_data.py first")
def test_flattened_backgrounds_lose_texture_not_tracks():
    """A flattened background changes the pixels of the background only: the same clip without
    the flattening has the same tracks, visibility and objects, and a background with fewer
    textureless pixels."""
    banks = photobanks.load_train_banks(DATA, "cpu", split="val", n_blobs=8)
    opt = synth.SynthOptions(flat_prob=1.0, max_objects=1, motion_blur_prob=0, defocus_prob=0, noise_max=0)
    B, T, N, S = 4, 4, 64, 160
    P = synth.ClipParams(banks, B, T, S, torch.Generator().manual_seed(6), opt, "cpu")
    assert bool(P.flat_p["on"].all()) and bool((P.flat_p["levels"] == 0).any()) and bool((P.flat_p["levels"] > 0).any())
    clips = []
    for flat_on in (1.0, 0.0):
        P.flat_p["on"].fill_(flat_on)
        clips.append(clips_with(P, banks, B, T, S, N, torch.Generator().manual_seed(6), opt))
    flat, sharp = clips
    for key in ("tracks", "vis", "tq", "layer"):
        assert torch.equal(flat[key], sharp[key]), key
    _, top = synth._render(banks, P, torch.arange(T, dtype=torch.float32))
    background = (top == 0)[:, :, None, :, :-1]

    def texture(v):   # per clip: mean |horizontal step| and the share of steps under 1 grey level
        g = (v[..., 1:] - v[..., :-1]).abs().amax(2, keepdim=True)
        n = background.sum((1, 2, 3, 4)).clamp_min(1)
        return (g * background).sum((1, 2, 3, 4)) / n, ((g < 1.0) & background).sum((1, 2, 3, 4)) / n
    (step_flat, share_flat), (step_sharp, share_sharp) = texture(flat["video"]), texture(sharp["video"])
    assert bool((step_flat < 0.7 * step_sharp).all()) and float((share_flat - share_sharp).mean()) > 0.3



@pytest.mark.skipif(not os.path.isdir(DATA), reason="run training/prepare_data.py first")
def test_pale_cutouts_lose_texture_not_tracks():
    """A pale cut-out changes the pixels of that cut-out only: the same clip drawn without it has
    the same tracks, visibility and layers and the same background, and the cut-outs' pixels have
    less texture. bg_tracks is the track itself for a point of the background."""
    banks = photobanks.load_train_banks(DATA, "cpu", split="val", n_blobs=8)
    opt = synth.SynthOptions(pale_prob=1.0, motion_blur_prob=0, defocus_prob=0, noise_max=0)
    B, T, N, S = 4, 3, 64, 160
    P = synth.ClipParams(banks, B, T, S, torch.Generator().manual_seed(7), opt, "cpu")
    assert bool(P.pale_p["on"].all())
    P.photo["contrast"].fill_(1.0)      # the contrast stretch about the frame's mean would mix in the cut-outs
    pale, plain = clips_on_and_off(P, "pale_p", banks, B, T, S, N, 7, opt)
    on_bg = pale["layer"] == 0
    assert bool(on_bg.any()) and torch.equal(pale["bg_tracks"][on_bg], pale["tracks"][on_bg])
    times = torch.arange(T, dtype=torch.float32)
    _, top = synth._render(banks, P, times)
    # where any cut-out has alpha > 0: white cut-outs drawn over black backgrounds
    white = photobanks.Banks(torch.zeros_like(banks.bg), torch.cat([torch.full_like(banks.stamps[:, :3], 255),
                                                                    banks.stamps[:, 3:]], 1))
    background = (synth._render(white, P, times)[0] == 0).all(2, keepdim=True)
    assert torch.allclose(pale["video"] * background, plain["video"] * background, atol=1e-3)
    inner = ((top[..., 1:] > 0) & (top[..., 1:] == top[..., :-1]))[:, :, None]   # steps within one cut-out
    assert int(inner.sum()) > 1000

    def step(v):
        return ((v[..., 1:] - v[..., :-1]).abs() * inner).sum() / inner.sum()
    assert float(step(pale["video"])) < 0.6 * float(step(plain["video"]))


def test_relit_cutouts_change_brightness_not_tracks():
    """A relit cut-out is the same clip with every cut-out pixel multiplied by a smooth gain between
    exp(-a) and exp(a): the tracks, visibility and layers stay, the background stays, and the gain
    varies over a body and changes at a body point as the frames go by."""
    banks = photobanks.Banks(torch.zeros(1, 3, photobanks.BG, photobanks.BG, dtype=torch.uint8),
                             torch.full((1, 4, photobanks.STAMP, photobanks.STAMP), 100, dtype=torch.uint8))
    banks.stamps[:, 3] = 255
    opt = synth.SynthOptions(relight_prob=1.0, deform_prob=0.0, motion_blur_prob=0, defocus_prob=0, noise_max=0)
    B, T, N, S = 3, 12, 32, 96
    P = synth.ClipParams(banks, B, T, S, torch.Generator().manual_seed(3), opt, "cpu")
    assert bool(P.relight_p["on"].all())
    P.photo["gray"].zero_()             # the grey mix would blend channels of different gains
    P.photo["contrast"].fill_(1.0)      # the contrast stretch about the frame's mean would mix in the cut-outs
    relit, plain = clips_on_and_off(P, "relight_p", banks, B, T, S, N, 3, opt)
    # the scene is black: a pixel shows something of a cut-out where it is not, the cut-out's grey
    # 100 times its layer's drift, its shading where relit, and its alpha at the outline
    shown = plain["video"] > 0
    assert int((shown & (plain["video"] > 1)).sum()) > 1000
    ratio = relit["video"][shown & (plain["video"] > 1)] / plain["video"][shown & (plain["video"] > 1)]
    a = float(P.relight_p["a"].max())
    assert float(ratio.min()) > math.exp(-a) - 0.02 and float(ratio.max()) < math.exp(a) + 0.02
    assert float(ratio.max() / ratio.min()) > 1.2
    assert bool((relit["video"][~shown] == 0).all())
    # one point of slot 0's surface, over the clip: its gain changes as the bands travel
    t = torch.arange(T, dtype=torch.float32)[None, :, None].expand(B, T, 1)
    centre = torch.full((B, T, 1, 2), (photobanks.STAMP - 1) / 2.0)
    gain = shading(P.relight_p, 0, centre, t)[..., 0]                           # [B, T]
    assert float((gain.max(1).values / gain.min(1).values).min()) > 1.05


def test_a_following_camera_keeps_its_body_still_and_pans_the_scene():
    """With the camera following object slot 0, that body's tracks keep still on the screen (its
    wobble switched off), and the background and the other bodies move by minus the drift the
    body had: the same clip's other motions, seen from a panning camera."""
    banks = photobanks.Banks(torch.zeros(1, 3, photobanks.BG, photobanks.BG, dtype=torch.uint8),
                             torch.full((1, 4, photobanks.STAMP, photobanks.STAMP), 255, dtype=torch.uint8))
    B, T, S = 6, 8, 128
    draw = dict(deform_prob=0.0, motion_blur_prob=0, defocus_prob=0, noise_max=0)
    plain = synth.ClipParams(banks, B, T, S, torch.Generator().manual_seed(4), synth.SynthOptions(**draw), "cpu")
    P = synth.ClipParams(banks, B, T, S, torch.Generator().manual_seed(4),
                         synth.SynthOptions(follow_prob=1.0, **draw), "cpu")
    assert bool((P.active[:, 0] == 1).all())
    for d in (P.cam, plain.cam):    # the camera's own turn, zoom and perspective off: a pure pan
        d["om"].zero_(), d["zeta"].zero_(), d["e0"].zero_(), d["e1"].zero_()
    P.obj["amp"].zero_(), plain.obj["amp"].zero_()
    t = torch.arange(T, dtype=torch.float32)
    tb = t[None].expand(B, T)
    _, body = P.obj_affine(0, tb)
    assert float((body - body[:, :1]).norm(dim=-1).max()) < 1e-3
    drift = plain.obj_affine(0, tb)[1] - plain.obj_affine(0, tb)[1][:, :1]        # [B, T, 2]
    # a background point: where the texture point under the frame's centre at t = 0 is shown later
    cam = P.cam_h(t)
    centre = torch.tensor([(S - 1) / 2.0, (S - 1) / 2.0])
    u = apply_h(cam[:, 0], centre.expand(B, 1, 2))                              # texture px [B, 1, 2]
    seen = apply_h(torch.linalg.inv(cam.double()).float(), u[:, None].expand(B, T, 1, 2))[:, :, 0]
    assert torch.allclose(seen - centre, -drift, atol=0.05)
    for m in range(1, P.M):
        other = P.obj_affine(m, tb)[1] - P.obj_affine(m, tb)[1][:, :1]
        was = plain.obj_affine(m, tb)[1] - plain.obj_affine(m, tb)[1][:, :1]
        assert torch.allclose(other, was - drift, atol=1e-3)

def test_tilt_foreshortens_and_hides_beyond_the_horizon():
    """A tilted cut-out is shown smaller on its far side than on its near side, and an output
    pixel beyond the plane's horizon (1 - g.u <= 0) shows nothing of it."""
    banks = photobanks.Banks(torch.zeros(1, 3, photobanks.BG, photobanks.BG, dtype=torch.uint8),
                        torch.zeros(1, 4, photobanks.STAMP, photobanks.STAMP, dtype=torch.uint8))
    opt = synth.SynthOptions(deform_prob=0.0, tilt_prob=1.0)
    P = synth.ClipParams(banks, 1, 4, 128, torch.Generator().manual_seed(2), opt, "cpu")
    m, t = 0, torch.full((1, 1), 1.0)
    g = P.tilt(m, t)[0, 0]
    assert g.norm().item() > 0
    A, c = P.obj_affine(m, t)
    yc = (photobanks.STAMP - 1) / 2.0
    # stamp points a few px apart on the near (g.v < 0) and far (g.v > 0) side, along g
    dirs = torch.linalg.solve(A[0, 0], g / g.norm())          # stamp direction whose image is along g
    dirs = dirs / dirs.norm()
    def shown_length(side):
        a = torch.tensor([yc, yc]) + side * 40 * dirs
        pts = torch.stack([a, a + 2 * dirs])[None, :, None, :].expand(1, 2, 1, 2)
        x = P.stamp_to_out(m, pts, t.expand(1, 2)[..., None].reshape(1, 2, 1))
        return (x[0, 1, 0] - x[0, 0, 0]).norm().item()
    assert shown_length(+1) < shown_length(-1)
    # on the horizon (1 - g.u = 0) and beyond it: finite, and outside the stamp (transparent)
    lam = torch.tensor([1.0, 1.5, 3.0])
    beyond = c[0, 0] + lam[:, None] * g / g.norm() ** 2
    y = P.out_to_stamp(m, beyond[None], t.expand(1, 3))
    assert bool(torch.isfinite(y).all())
    assert bool(((y < 0) | (y > photobanks.STAMP - 1)).any(-1).all())


def test_shake_moves_the_whole_image():
    """A jolt of the camera displaces background and cut-outs alike by the shake offset, in the
    ground truth (camera map and object maps) and in the rendered frames."""
    import copy
    banks = photobanks.load_train_banks(DATA, "cpu", split="val", n_blobs=8) if os.path.isdir(DATA) else \
        photobanks.Banks(torch.randint(0, 255, (1, 3, photobanks.BG, photobanks.BG), dtype=torch.uint8),
                    torch.randint(0, 255, (1, 4, photobanks.STAMP, photobanks.STAMP), dtype=torch.uint8))
    B, T, S = 2, 6, 64
    opt = synth.SynthOptions(shake_prob=1.0, bend_prob=0.5, tilt_prob=0.5)
    P = synth.ClipParams(banks, B, T, S, torch.Generator().manual_seed(4), opt, "cpu")
    P.active.fill_(1.0)
    P.shake_p["a"] = torch.tensor([[[7.0, -5.0], [0.0, 0.0]], [[-3.0, 4.0], [2.5, 1.5]]])
    P.shake_p.update(t0=torch.tensor([[0.0, 0.0], [0.0, 1.2]]), d=torch.tensor([[2.0, 1.0], [1.5, 2.0]]),
                     pulse=torch.tensor([[0.0, 0.0], [0.0, 1.0]]))
    still = copy.deepcopy(P)
    still.shake_p["a"].zero_()
    t = torch.linspace(0, T - 1, 11)
    off = P.shake(t[None].expand(B, -1))[0]                                   # [B, 11, 2]
    assert off.norm(dim=-1).max() > 5
    u = torch.rand(B, 11, 1, 2) * photobanks.BG                                    # texture points
    bg_s = apply_h(torch.linalg.inv(P.cam_h(t)), u)[:, :, 0]
    bg_0 = apply_h(torch.linalg.inv(still.cam_h(t)), u)[:, :, 0]
    assert (bg_s - bg_0 - off).abs().max() < 1e-3
    z = torch.rand(B, 11, 2) * photobanks.STAMP
    for m in range(P.M):
        tb = t[None].expand(B, -1)
        assert (P.stamp_to_out(m, z, tb) - still.stamp_to_out(m, z, tb) - off).abs().max() < 1e-3
    # from frame 2 on clip 0 sits at the step's end, an integer offset: frames shift exactly
    times = torch.arange(2.0, T)
    img_s, top_s = synth._render(banks, P, times)
    img_0, top_0 = synth._render(banks, still, times)
    assert (img_s[0, :, :, :-5, 7:] - img_0[0, :, :, 5:, :-7]).abs().max() < 1e-3     # shown at p: p - (7, -5)
    assert bool((top_s[0, :, :-5, 7:] == top_0[0, :, 5:, :-7]).float().mean() > 0.999)


def test_shake_streaks_along_the_jolt():
    """A jolting camera smears each frame along the jolt's velocity, over the shutter: a lone
    bright pixel becomes a centred line of length |v| x shutter along v, and does not widen
    across it; frames outside the jolt stay sharp."""
    banks = photobanks.Banks(torch.zeros(1, 3, photobanks.BG, photobanks.BG, dtype=torch.uint8),
                        torch.zeros(1, 4, photobanks.STAMP, photobanks.STAMP, dtype=torch.uint8))
    T, S = 6, 64
    P = synth.ClipParams(banks, 1, T, S, torch.Generator().manual_seed(1), synth.SynthOptions(shake_prob=1.0), "cpu")
    P.shake_p["a"] = torch.tensor([[[24.0, 10.0], [0.0, 0.0]]])       # one pulse event
    P.shake_p.update(t0=torch.tensor([[1.0, 0.0]]), d=torch.tensor([[4.0, 1.0]]),
                     pulse=torch.tensor([[1.0, 0.0]]), shutter=torch.tensor([0.8]))
    times = torch.arange(T, dtype=torch.float32)
    off, vel = P.shake(times[None])
    assert off[0, 0].norm() == 0 and off[0, 5].norm() < 1e-4         # a pulse comes back
    assert off[0, 3].norm() > 20                                      # ... from 26 px away
    img = torch.zeros(1, T, 1, S, S)
    img[..., 32, 32] = 1.0
    out = streak(img, vel * 0.8)
    ys, xs = torch.meshgrid(torch.arange(S, dtype=torch.float32), torch.arange(S, dtype=torch.float32), indexing="ij")
    for t in range(T):
        w = out[0, t, 0]
        assert abs(w.sum().item() - 1.0) < 1e-3                          # exposure conserves light
        v = vel[0, t] * 0.8
        L = v.norm().item()
        if L < 0.5:
            assert torch.allclose(w, img[0, t, 0], atol=1e-4)            # still camera: sharp
            continue
        u = v / L
        along = (xs - 32) * u[0] + (ys - 32) * u[1]
        across = -(xs - 32) * u[1] + (ys - 32) * u[0]
        assert abs((w * along).sum().item()) < 0.05 and abs((w * across).sum().item()) < 0.05
        assert abs((w * along ** 2).sum().item() ** 0.5 - L / 12 ** 0.5) < 0.25 * L / 12 ** 0.5 + 0.3
        assert (w * across ** 2).sum().item() < 0.3


@pytest.mark.skipif(not os.path.isdir(DATA), reason="run training/prepare_data.py first")
def test_time_scale_slows_every_motion():
    """The same seed at a quarter of the time per frame: the points move far less per frame."""
    banks = photobanks.load_train_banks(DATA, "cpu", split="val", n_blobs=8)

    def median_step(time_scale):
        opt = synth.SynthOptions(time_scale=time_scale, bend_prob=0.5, tilt_prob=0.5)
        clip = synth.make_clips(banks, 4, 8, 96, 64, torch.Generator().manual_seed(5), opt, device="cpu")
        step = (clip["tracks"][:, :, 1:] - clip["tracks"][:, :, :-1]).norm(dim=-1)
        both = clip["vis"][:, :, 1:] & clip["vis"][:, :, :-1]
        return step[both].median().item()

    fast, slow = median_step(1.0), median_step(0.25)
    assert fast > 0.5 and slow < 0.5 * fast, (fast, slow)


@pytest.mark.skipif(not os.path.isdir(DATA), reason="run training/prepare_data.py first")
def test_turning_cutouts_invert_and_hide_their_far_side():
    """A cut-out turning round an axis in its plane: its maps invert exactly where it faces the
    camera, and a track is hidden while its point faces away, also where the body itself is
    drawn at its pixel (the body's near side hides it)."""
    banks = photobanks.load_train_banks(DATA, "cpu", split="val", n_blobs=8)
    opt = synth.SynthOptions(deform_prob=0.0, turn_prob=1.0, tilt_prob=0.5, motion_blur_prob=0,
                             defocus_prob=0, noise_max=0)
    B, T, N, S = 6, 16, 256, 128
    P = synth.ClipParams(banks, B, T, S, torch.Generator().manual_seed(6), opt, "cpu")
    assert bool(P.turn_p["on"].any())
    P.turn_p["a"].fill_(synth.TURN_MAX), P.turn_p["w"].fill_(0.25)    # a whole swing within the clip
    t = torch.arange(16.0)[None, None].expand(B, 200, 16)
    far = 0
    for m in range(P.M):
        z = torch.rand(B, 200, 16, 2, generator=torch.Generator().manual_seed(m)) * photobanks.STAMP
        # the stamp wraps once round its body: a point further than half a turn from the axis
        # (a corner of the stamp) is the same surface point as one a turn nearer
        centre, n, R, phi, on = P.turning(m, t)
        s = dot2(z - centre, n)
        wrapped = z - (torch.sign(s) * 2 * math.pi * R)[..., None] * n
        z = torch.where((on & (s.abs() > math.pi * R))[..., None], wrapped, z)
        x = P.stamp_to_out(m, z, t)
        near = P.faces_camera(m, z, t)
        # away from the silhouette, where the inverse's asin loses float32 digits as cos -> 0
        clear = near & (~on | (torch.cos(dot2(z - centre, n) / R + phi) > 0.1))
        err = (P.out_to_stamp(m, x, t) - z).norm(dim=-1)
        assert err[clear].max().item() < 1e-3
        assert err[near].max().item() < 0.05
        far += int((~near).sum())
    assert far > 0.05 * P.M * B * 200 * 16
    clip = clips_with(P, banks, B, T, S, N, torch.Generator().manual_seed(6), opt)
    tr, vis, layer, tq = clip["tracks"], clip["vis"], clip["layer"], clip["tq"]
    # each object track's surface point, from its query, faces the camera or not at every frame
    times = torch.arange(T, dtype=torch.float32)[None, None].expand(B, N, T)
    xq = torch.gather(tr, 2, tq[:, :, None, None].expand(B, N, 1, 2))[:, :, 0]
    faces = torch.ones(B, N, T, dtype=torch.bool)
    for m in range(P.M):
        zq = P.out_to_stamp(m, xq, tq.float())[:, :, None].expand(B, N, T, 2)
        faces = torch.where((layer == m + 1)[:, :, None], P.faces_camera(m, zq, times), faces)
    inside = (tr >= 0).all(-1) & (tr[..., 0] <= S - 1) & (tr[..., 1] <= S - 1)
    after_query = torch.arange(T)[None, None] != tq[:, :, None]   # the query frame is visible by construction
    assert not vis[~faces & after_query].any()
    assert vis[inside & faces].float().mean().item() > 0.5
    # turned away behind its own body: the layer drawn at the track's pixel is its own
    _, top = synth._render(banks, P, torch.arange(T, dtype=torch.float32))
    rx, ry = tr[..., 0].round().clamp(0, S - 1).long(), tr[..., 1].round().clamp(0, S - 1).long()
    drawn = top[torch.arange(B)[:, None, None], torch.arange(T)[None, None], ry, rx].long()
    own_layer_drawn = drawn == layer[:, :, None]
    assert (inside & ~faces & own_layer_drawn).sum().item() > 20


if __name__ == "__main__":
    test_object_maps_invert_exactly()
    for case in FOLLOW_CONTENT_CASES:
        test_tracks_follow_content(*case)
    test_limbs_swing_carry_their_tracks_and_hide_their_body()
    test_flattened_backgrounds_lose_texture_not_tracks()
    test_pale_cutouts_lose_texture_not_tracks()
    test_relit_cutouts_change_brightness_not_tracks()
    test_a_following_camera_keeps_its_body_still_and_pans_the_scene()
    test_tilt_foreshortens_and_hides_beyond_the_horizon()
    test_shake_moves_the_whole_image()
    test_shake_streaks_along_the_jolt()
    test_time_scale_slows_every_motion()
    test_turning_cutouts_invert_and_hide_their_far_side()
    print(f"{11 + len(FOLLOW_CONTENT_CASES)} passed, 0 failed")

