"""diag_appearance.py: the layer's scale and rotation since a track's query frame;
diag_cross_scale.py: which reads find the truth at the centre of their window."""
import os
import sys

import numpy as np
import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import diag_appearance  # noqa: E402
import diag_cross_scale  # noqa: E402


def _similarity(points, scale, degrees, shift):
    a = np.radians(degrees)
    rot = scale * np.array([[np.cos(a), -np.sin(a)], [np.sin(a), np.cos(a)]])
    return points @ rot.T + shift


def test_affine_change_recovers_a_similarity():
    src = np.random.default_rng(0).uniform(0, 200, (6, 2))
    scale, rotation = diag_appearance.affine_change(src, _similarity(src, 1.3, -20.0, [5.0, -7.0]))
    assert abs(scale - 1.3) < 1e-6 and abs(rotation + 20.0) < 1e-6


def test_layer_changes_measure_from_each_tracks_query_frame_and_skip_small_layers():
    rng = np.random.default_rng(1)
    base = rng.uniform(0, 200, (7, 2))
    T = 3
    gt = np.stack([_similarity(base, 2.0 ** t, 10.0 * t, [t, 0.0]) for t in range(T)], axis=1)   # [N, T, 2]
    layer = np.array([1, 1, 1, 1, 1, 2, 2])          # layer 2 has too few tracks
    tq = np.array([0, 0, 1, 1, 2, 0, 0])
    log_scale, rotation = diag_appearance.layer_changes(gt, layer, tq)
    for n in range(5):
        for t in range(T):
            assert abs(log_scale[n, t] - (t - tq[n])) < 1e-6      # signed: shrinking is negative
            assert abs(rotation[n, t] - 10.0 * abs(t - tq[n])) < 1e-6
    assert np.isnan(log_scale[5:]).all() and np.isnan(rotation[5:]).all()


def test_cross_scale_reads_find_a_static_point_at_their_own_level():
    """A static clip (frame 1 = frame 0) of random features: a descriptor read at its own level
    in a window centred on its own point peaks at the centre for every track; the reads are the
    model's (correlation_reads with cross_scale), and every one of them is reported."""
    strides = (4, 8, 16, 32)
    g = torch.Generator().manual_seed(0)
    feats = [torch.randn(1, 64, 64 // s, 64 // s, generator=g).expand(2, -1, -1, -1) for s in strides]
    rng = np.random.default_rng(2)
    pq = rng.integers(8, 24, (5, 2)).astype(np.float64) * 2          # on stride-4 and stride-8 cells
    gt = np.stack([pq, pq], axis=1)
    qdesc = diag_cross_scale.query_descriptors(feats, strides, np.zeros(5, int), pq)
    wins = diag_cross_scale.centre_wins(feats, strides, 1, qdesc, gt, 1, np.arange(5))
    assert list(wins) == diag_cross_scale.reads(strides)
    assert list(wins)[4:] == [(0, 1), (1, 2), (2, 3), (1, 0), (2, 1), (3, 2)]
    assert wins[(0, 0)].all() and wins[(1, 1)].all()
