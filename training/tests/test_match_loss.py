"""The descriptor matching loss (train.py --match-weight): what model.match_correlations reads and
what losses.match_loss scores."""
import os
import sys

import torch

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
from edgetap.losses import match_loss  # noqa: E402
from edgetap.model import EdgeTap, EdgeTapConfig  # noqa: E402
from edgetap.sampling import FeatureTable, bilinear_sample  # noqa: E402
from edgetap.weights import randomize_weights_  # noqa: E402


def _model():
    m = EdgeTap(EdgeTapConfig(window=3, iters=1, blocks=1, query_patch=3, cross_scale=True)).eval()
    randomize_weights_(m, torch.Generator().manual_seed(3), 0.2)
    return m


def test_match_correlations_read_the_centre_descriptor_against_windows_centred_on_the_truth():
    """Each level's window cell (dx, dy) is the centre query descriptor dotted with the feature at
    truth + (dx, dy) cells, / sqrt(D); the scale is |q| |f(truth)| / sqrt(D), so the centre cell
    over the scale is the cosine of the descriptor and the true position's feature."""
    torch.manual_seed(0)
    m = _model()
    B, N, T, S = 1, 3, 4, 64
    video = torch.rand(B, T, 3, S, S) * 255
    tq = torch.tensor([[0, 1, 2]])
    tracks = torch.rand(B, N, T, 2) * (S - 1)
    pq = tracks.gather(2, tq[..., None, None].expand(-1, -1, 1, 2))[:, :, 0]
    with torch.no_grad():
        feats = m.encoder(video.flatten(0, 1))
        tables = [FeatureTable(f) for f in feats]
        descs = m.query_descriptors(tables, tq, pq)
        out = m.match_correlations(tables, descs, tracks)
    r = m.cfg.radius
    assert len(out) == len(m.cfg.strides)
    for (corr, scale), f, s, d in zip(out, feats, m.cfg.strides, descs):
        D = f.shape[1]
        assert corr.shape == (B, N, T, (2 * r + 1) ** 2) and scale.shape == (B, N, T)
        q = d[:, :, d.shape[2] // 2]                                            # [B, N, D]
        for t in range(T):
            for dy, dx in ((0, 0), (-r, 2), (1, -3)):
                at = tracks[:, :, t] / s + torch.tensor([dx, dy], dtype=torch.float32)
                feat = bilinear_sample(f[t:t + 1], at)                               # [1, N, D]
                want = (feat * q).sum(-1) / D ** 0.5
                cell = (dy + r) * (2 * r + 1) + (dx + r)
                assert torch.allclose(corr[:, :, t, cell], want, atol=1e-4, rtol=1e-4)
            at_truth = bilinear_sample(f[t:t + 1], tracks[:, :, t] / s)
            want_scale = at_truth.norm(dim=-1) * q.norm(dim=-1) / D ** 0.5
            assert torch.allclose(scale[:, :, t], want_scale, atol=1e-4, rtol=1e-4)


def _matches(B=2, N=5, T=6, k=49, levels=2, seed=0):
    g = torch.Generator().manual_seed(seed)
    return [(torch.randn(B, N, T, k, generator=g), torch.rand(B, N, T, generator=g) + 0.5) for _ in range(levels)]


def test_the_loss_falls_as_the_true_cell_stands_out_and_counts_it_as_matched():
    vis = torch.ones(2, 5, 6, dtype=torch.bool)
    tq = torch.zeros(2, 5, dtype=torch.long)
    plain = _matches()
    peaked = [(c.clone(), s) for c, s in plain]
    for c, s in peaked:
        c[..., 24] = 20.0 * s         # the centre cell far above every other (randn / scale < 10 here)
    loss_plain, top_plain = match_loss(plain, vis, tq)
    loss_peaked, top_peaked = match_loss(peaked, vis, tq)
    assert loss_peaked < loss_plain
    assert all(float(t) == 1.0 for t in top_peaked)
    assert all(float(t) < 0.2 for t in top_plain)


def test_scaling_the_features_up_does_not_lower_the_loss():
    """corr and scale both grow with the features' norm: the logits, cosines, do not."""
    vis = torch.ones(2, 5, 6, dtype=torch.bool)
    tq = torch.zeros(2, 5, dtype=torch.long)
    m = _matches()
    big = [(c * 7.0, s * 7.0) for c, s in m]
    assert torch.allclose(match_loss(m, vis, tq)[0], match_loss(big, vis, tq)[0])


def test_hidden_frames_and_the_query_frame_are_not_scored():
    g = torch.Generator().manual_seed(1)
    vis = torch.rand(2, 5, 6, generator=g) < 0.6
    tq = torch.randint(0, 6, (2, 5), generator=g)
    m = _matches()
    changed = [(c.clone(), s) for c, s in m]
    skip = ~vis | (torch.arange(6)[None, None, :] == tq[:, :, None])
    for c, _ in changed:
        c[skip] = torch.randn(int(skip.sum()), 49) * 10
    assert torch.allclose(match_loss(m, vis, tq)[0], match_loss(changed, vis, tq)[0])
    scored = ~skip
    for c, _ in changed:
        c[scored] += 1.0 * torch.arange(49.0)          # a scored frame's change moves the loss
    assert not torch.allclose(match_loss(m, vis, tq)[0], match_loss(changed, vis, tq)[0])
