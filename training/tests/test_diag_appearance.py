"""diag_appearance.py: the layer's scale and rotation since a track's query frame."""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import diag_appearance  # noqa: E402


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
            assert abs(log_scale[n, t] - abs(t - tq[n])) < 1e-6
            assert abs(rotation[n, t] - 10.0 * abs(t - tq[n])) < 1e-6
    assert np.isnan(log_scale[5:]).all() and np.isnan(rotation[5:]).all()
