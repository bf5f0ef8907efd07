"""CPU checks of the network's invariants (run: python3 -m pytest training/tests -q).

* streaming (engine.StreamingTracker) == parallel (EdgeTap.forward_parallel) given the same
  per-frame initial estimates - this is what makes training match the C++ streaming engine;
* BatchNorm folding does not change the encoder;
* upsample2 == bilinear sampling at i/2 with edge clamping.
"""
import os
import sys

import torch

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
from edgetap.engine import StreamingTracker, streaming_entries  # noqa: E402
from edgetap.model import CrossTrack, EdgeTap, EdgeTapConfig, upsample2  # noqa: E402
from edgetap.weights import randomize_weights_  # noqa: E402


def _small_model(seed=0, query_patch=1, cross_after=(), strides=(4, 8, 16, 32), entry_velocity=0.0,
                 recent=False, cross_scale=False):
    cfg = EdgeTapConfig(window=3, iters=2, blocks=2, query_patch=query_patch, cross_after=cross_after,
                        strides=strides, entry_velocity=entry_velocity, recent_descriptors=recent,
                        cross_scale=cross_scale)
    m = EdgeTap(cfg).eval()
    randomize_weights_(m, torch.Generator().manual_seed(seed), 0.2)
    return m


import pytest  # noqa: E402


@pytest.mark.parametrize("query_patch,cross_after,strides,recent,cross_scale", [
    (1, (), (4, 8, 16, 32), False, False), (3, (), (4, 8, 16, 32), False, False),
    (3, (0, 1), (4, 8, 16, 32), False, False), (3, (1,), (2, 4, 8, 16, 32), False, False),
    (1, (), (4, 8, 16, 32), True, False), (3, (1,), (4, 8, 16, 32), True, False),
    (1, (), (4, 8, 16, 32), False, True), (3, (1,), (4, 8, 16, 32), True, True)])
def test_streaming_equals_parallel(query_patch, cross_after, strides, recent, cross_scale):
    torch.manual_seed(0)
    m = _small_model(query_patch=query_patch, cross_after=cross_after, strides=strides, recent=recent,
                     cross_scale=cross_scale)
    B, T, N, S = 2, 7, 5, 64
    video = torch.rand(B, T, 3, S, S) * 255
    tq = torch.tensor([[0, 0, 2, 4, 6], [1, 0, 3, 0, 5]])
    pq = torch.rand(B, N, 2) * (S - 1)
    st = StreamingTracker(m, tq, pq, record={})
    outs = [st.step(video[:, t]) for t in range(T)]
    p_init = torch.stack(st.record["p_init"], 2)                     # [B, N, T, 2]
    xy_s = torch.stack([o[0] for o in outs], 2)
    with torch.no_grad():
        ps, vs, cs = m.forward_parallel(video, tq, pq, p_init)
    valid = torch.arange(T)[None, None, :] >= tq[:, :, None]
    err = (ps[-1] - xy_s).norm(dim=-1)[valid].max().item()
    assert err < 1e-3, err
    vis_s = torch.stack([o[1] for o in outs], 2)
    after = torch.arange(T)[None, None, :] > tq[:, :, None]
    verr = (torch.sigmoid(vs[-1]) - vis_s).abs()[after].max().item()
    assert verr < 1e-4, verr
    # per-iteration positions too
    it_s = torch.stack(st.record["iter_xy"]).reshape(T, m.cfg.iters, B, N, 2).permute(1, 2, 3, 0, 4)
    ierr = (ps - it_s).norm(dim=-1)[:, valid].max().item()
    assert ierr < 1e-3, ierr


@pytest.mark.parametrize("entry_velocity,recent", [(0.0, False), (1.0, False), (0.0, True)])
def test_streaming_entries_make_the_parallel_forward_stream(entry_velocity, recent):
    """Training's entering estimates (engine.streaming_entries over precomputed features) are
    the ones streaming uses, so forward_parallel given them reproduces the streamed outputs."""
    torch.manual_seed(1)
    m = _small_model(seed=3, query_patch=3 if recent else 1, entry_velocity=entry_velocity, recent=recent)
    B, T, N, S = 2, 6, 4, 64
    video = torch.rand(B, T, 3, S, S) * 255
    tq = torch.tensor([[0, 1, 3, 5], [2, 0, 0, 4]])
    pq = torch.rand(B, N, 2) * (S - 1)
    st = StreamingTracker(m, tq, pq, record={})
    xy_s = torch.stack([st.step(video[:, t])[0] for t in range(T)], 2)
    with torch.no_grad():
        feats = m.encoder(video.flatten(0, 1))
        entries = streaming_entries(m, feats, tq, pq)
        ps, _, _ = m.forward_parallel(video, tq, pq, entries, feats=feats)
    valid = torch.arange(T)[None, None, :] >= tq[:, :, None]
    assert (entries - torch.stack(st.record["p_init"], 2)).norm(dim=-1)[valid].max().item() < 1e-4
    assert (ps[-1] - xy_s).norm(dim=-1)[valid].max().item() < 1e-3


def _stream_clip(m, T, tq, S=64):
    """A random clip of T frames streamed with queries at frames tq [B, N] (random points):
    the recording tracker, the query points and the outputs [B, N, T, 2]."""
    B, N = tq.shape
    video = torch.rand(B, T, 3, S, S) * 255
    pq = torch.rand(B, N, 2) * (S - 1)
    st = StreamingTracker(m, tq, pq, record={})
    return st, pq, torch.stack([st.step(video[:, t])[0] for t in range(T)], 2)


def test_entry_velocity_extrapolates_the_last_two_outputs():
    """With entry_velocity v a frame enters at out[t-1] + v (out[t-1] - out[t-2]); the frame after
    the query enters at the query point (no displacement yet); before it, the query point."""
    torch.manual_seed(2)
    v = 0.75
    m = _small_model(seed=5, entry_velocity=v)
    T, N = 6, 3
    st, pq, out = _stream_clip(m, T, torch.tensor([[0, 2, 3]]))
    tq = st.tq
    entries = torch.stack(st.record["p_init"], 2)
    for n in range(N):
        q = int(tq[0, n])
        for t in range(T):
            if t <= q + 1:
                want = pq[0, n]
            else:
                want = out[0, n, t - 1] + v * (out[0, n, t - 1] - out[0, n, t - 2])
            assert torch.allclose(entries[0, n, t], want, atol=1e-5), (n, t)
    moved = (out[0, 0, 1] - out[0, 0, 0]).norm()
    assert moved > 1e-3       # the extrapolation is exercised, not a zero displacement


def test_recent_descriptors_are_the_previous_frame_at_the_previous_output():
    """With recent_descriptors, frame t's correlation is the query's, then the window at the
    entry against descriptors sampled in frame t-1 at the track's output there (the query's at and
    right after the query frame); and they need the previous output as the entry."""
    from edgetap.sampling import FeatureTable, window_correlation, window_features
    torch.manual_seed(4)
    m = _small_model(seed=7, query_patch=3, recent=True)
    cfg = m.cfg
    B, T, N = 1, 5, 3
    st, pq, out = _stream_clip(m, T, torch.tensor([[0, 1, 3]]))
    tq = st.tq
    half = cfg.n_corr // 2
    frame0 = torch.zeros(B, N, dtype=torch.long)
    for t in range(1, T):
        tables = [FeatureTable(f) for f in st.record["feats"][t]]
        before = [FeatureTable(f) for f in st.record["feats"][t - 1]]
        p = st.record["p_init"][t]
        corr = st.record["corr"][t * cfg.iters]                             # iteration 0
        for n in range(N):
            q = int(tq[0, n])
            if t < q:
                continue
            if t <= q + 1:      # the query frame's descriptors at the query point
                at, src = pq, [FeatureTable(f) for f in st.record["feats"][q]]
            else:
                at, src = out[:, :, t - 1], before
            for li, s in enumerate(cfg.strides):
                d = window_features(src[li], frame0, at / s, 1)
                want = window_correlation(tables[li], frame0, p / s, d, cfg.radius)[0, n]
                k = want.shape[-1]
                got = corr[0, n, half + li * k: half + (li + 1) * k]
                assert torch.allclose(got, want, atol=1e-5), (t, n, li)
    assert corr[0, :, half:].abs().max() > 0
    with pytest.raises(ValueError, match="entry_velocity"):
        _small_model(recent=True, entry_velocity=0.5)


def test_cross_scale_reads_the_query_descriptors_in_the_neighbouring_levels_windows():
    """With cross_scale, behind the same-level correlations come the query's level-l descriptors
    against level l+1's window (l fine to coarse), then against level l-1's, each window around
    the entering estimate in the current frame."""
    from edgetap.model import correlation_reads
    from edgetap.sampling import FeatureTable, window_correlation, window_features
    torch.manual_seed(5)
    m = _small_model(seed=9, query_patch=3, cross_scale=True)
    cfg = m.cfg
    L = len(cfg.strides)
    assert correlation_reads(cfg)[L:] == [(0, 0, 1), (0, 1, 2), (0, 2, 3), (0, 1, 0), (0, 2, 1), (0, 3, 2)]
    assert cfg.n_corr == (L + 2 * (L - 1)) * 9 * (2 * cfg.radius + 1) ** 2
    B, T, N = 1, 4, 3
    st, pq, _ = _stream_clip(m, T, torch.tensor([[0, 1, 2]]))
    k = 9 * (2 * cfg.radius + 1) ** 2
    frame0 = torch.zeros(B, N, dtype=torch.long)
    for t in range(1, T):
        tables = [FeatureTable(f) for f in st.record["feats"][t]]
        p = st.record["p_init"][t]
        corr = st.record["corr"][t * cfg.iters]                             # iteration 0
        for n in range(N):
            q = int(st.tq[0, n])
            if t < q:
                continue
            src = [FeatureTable(f) for f in st.record["feats"][q]]
            for r, (_, l, w) in enumerate(correlation_reads(cfg)[L:]):
                d = window_features(src[l], frame0, pq / cfg.strides[l], 1)
                want = window_correlation(tables[w], frame0, p / cfg.strides[w], d, cfg.radius)[0, n]
                got = corr[0, n, (L + r) * k:(L + r + 1) * k]
                assert torch.allclose(got, want, atol=1e-5), (t, n, l, w)
    assert corr[0, :, L * k:].abs().max() > 0


def test_cross_track_layer_sees_only_started_tracks():
    """A track's output depends on the other tracks of its clip and frame that started before
    that frame, never on a track at or before its query frame, nor on other clips."""
    torch.manual_seed(2)
    m = _small_model(seed=5, query_patch=3, cross_after=(1,))
    with torch.no_grad():
        m.tracker.cross[0].proj.weight.mul_(10.0)   # a strong layer, so that its reach shows
    B, T, N, S = 2, 5, 4, 64
    video = torch.rand(B, T, 3, S, S) * 255
    tq = torch.tensor([[0, 0, 0, 3], [0, 0, 0, 0]])
    pq = torch.rand(B, N, 2) * (S - 1)
    p_init = pq[:, :, None].expand(B, N, T, 2) + torch.randn(B, N, T, 2)

    def run(pq_, p_init_):
        with torch.no_grad():
            return m.forward_parallel(video, tq, pq_, p_init_)[0][-1]   # [B, N, T, 2]
    base = run(pq, p_init)
    moved = pq.clone()
    moved[0, 3] += 9.0                # clip 0, track 3, queried at frame 3
    out = run(moved, p_init)
    assert (out[0, :3, :4] - base[0, :3, :4]).abs().max().item() < 1e-5   # unseen up to frame 3
    assert (out[0, :3, 4] - base[0, :3, 4]).abs().max().item() > 1e-3     # seen from frame 4
    assert (out[1] - base[1]).abs().max().item() < 1e-5                   # other clip untouched
    moved = p_init.clone()
    moved[0, 0, 1] += 9.0             # clip 0, track 0 (started) at frame 1
    out = run(pq, moved)
    assert (out[0, 1:3, 1] - base[0, 1:3, 1]).abs().max().item() > 1e-3   # the others feel it
    assert (out[1] - base[1]).abs().max().item() < 1e-5


def test_cross_track_layer_a_starting_track_sees_only_itself():
    """At its query frame a track attends to itself alone: its row of the layer does not change
    when the other tracks do (the C++ engine steps starting tracks in a pass of their own)."""
    torch.manual_seed(3)
    layer = CrossTrack(16, 2)
    x = torch.randn(3, 5, 16)
    started = torch.tensor([[True, True, False, True, False]] * 3)
    base = layer(x, started)
    other = x.clone()
    other[:, [0, 1, 3]] += torch.randn(3, 3, 16)
    out = layer(other, started)
    assert (out[:, [2, 4]] - base[:, [2, 4]]).abs().max().item() < 1e-6
    assert (out[:, 0] - base[:, 0]).abs().max().item() > 1e-3


def test_bn_fold():
    m = _small_model(1)
    x = torch.rand(2, 3, 64, 96) * 255
    with torch.no_grad():
        a = m.encoder(x)
        m.fold_bn_()
        b = m.encoder(x)
    for u, v in zip(a, b):
        assert (u - v).abs().max().item() < 1e-4 * (1 + u.abs().max().item())


def test_upsample2():
    x = torch.randn(1, 2, 5, 4)
    y = upsample2(x)
    assert y.shape == (1, 2, 10, 8)
    assert torch.allclose(y[..., ::2, ::2], x)
    assert torch.allclose(y[..., 1, 0], 0.5 * (x[..., 0, 0] + x[..., 1, 0]))
    assert torch.allclose(y[..., 9, 7], x[..., 4, 3])
    assert torch.allclose(y[..., 3, 3], 0.25 * (x[..., 1, 1] + x[..., 2, 1] + x[..., 1, 2] + x[..., 2, 2]))


if __name__ == "__main__":
    test_streaming_equals_parallel()
    test_bn_fold()
    test_upsample2()
    print("3 passed, 0 failed")
