"""diag_iterations.py: the stages it scores are the streamed clip's, and its shares count right."""
import os
import sys

import numpy as np
import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import diag_iterations  # noqa: E402
from edgetap.engine import track_clip  # noqa: E402
from edgetap.model import EdgeTap, EdgeTapConfig  # noqa: E402
from edgetap.weights import randomize_weights_  # noqa: E402


def test_stages_are_the_entries_and_iterations_of_streaming():
    torch.manual_seed(0)
    m = EdgeTap(EdgeTapConfig(window=3, iters=2, blocks=2, query_patch=3, cross_after=(1,))).eval()
    randomize_weights_(m, torch.Generator().manual_seed(1), 0.2)
    T, N, S = 6, 4, 64
    video = (torch.rand(T, 3, S, S) * 255).to(torch.uint8)
    tq = np.array([0, 0, 2, 4])
    pq = np.random.default_rng(0).uniform(0, S - 1, (N, 2)).astype(np.float32)
    stages = diag_iterations.stream_stages(m, video, tq, pq)
    assert stages.shape == (3, N, T, 2)
    with torch.no_grad():
        xy, _, _ = track_clip(m, video[None], torch.from_numpy(tq)[None], torch.from_numpy(pq)[None])
    np.testing.assert_allclose(stages[-1], xy[0].numpy(), atol=1e-4)      # last iteration = the output
    for n in range(N):
        t0 = tq[n]
        np.testing.assert_allclose(stages[0, n, :t0 + 1], np.broadcast_to(pq[n], (t0 + 1, 2)), atol=1e-5)
        np.testing.assert_allclose(stages[0, n, t0 + 1:], stages[-1, n, t0:-1], atol=1e-5)   # entered at t-1's
    assert np.abs(stages[1] - stages[0]).max() > 0.01                     # an iteration moves the estimate


def test_stage_shares_count_each_speed_bin():
    errors = np.array([[[1.0, 3.0, 20.0, 1.5]], [[0.5, 1.0, 10.0, 30.0]]])     # 2 stages, 1 track, 4 frames
    speed = np.array([[0.0, 1.0, 6.0, 25.0]])
    scored = np.array([[False, True, True, True]])
    table = diag_iterations.stage_shares(errors, speed, scored)
    assert table[(0, 2)] == (1, [[0.0, 1.0], [1.0, 1.0]])
    assert table[(5, 10)] == (1, [[0.0, 0.0], [0.0, 1.0]])
    assert table[(20, np.inf)] == (1, [[1.0, 1.0], [0.0, 0.0]])
    n, per = table[(2, 5)]
    assert n == 0 and all(np.isnan(v) for s in per for v in s)


def test_extrapolated_entries_add_the_last_step_once_a_track_has_one():
    out = np.zeros((2, 5, 2))
    out[:, :, 0] = [[0, 0, 2, 5, 9], [7, 7, 7, 8, 10]]                 # x per frame
    tq = np.array([0, 2])
    ext = diag_iterations.extrapolated_entries(out, tq, 0.5)
    assert ext[0, :, 0].tolist() == [0, 0, 0, 2 + 0.5 * 2, 5 + 0.5 * 3]   # from frame tq + 2 on
    assert ext[1, :, 0].tolist() == [7, 7, 7, 7, 8 + 0.5 * 1]
    np.testing.assert_array_equal(diag_iterations.extrapolated_entries(out, tq, 0.0)[:, 1:], out[:, :-1])


def test_kept_and_pulled_split_by_entry_error():
    entry = np.array([[0.5, 1.0, 3.0, 20.0, 1.5, 4.0]])
    final = np.array([[0.5, 2.5, 1.0, 1.0, 1.0, 5.0]])
    speed = np.array([[0.0, 1.0, 1.5, 1.0, 6.0, 7.0]])
    scored = np.array([[False, True, True, True, True, True]])
    table = diag_iterations.kept_and_pulled(entry, final, speed, scored)
    assert table[(0, 2)] == (1, 0.0, 1, 1.0)         # frame 0 unscored; 20 px off counts in neither
    assert table[(5, 10)] == (1, 1.0, 1, 0.0)
    n_near, kept, n_off, pulled = table[(2, 5)]
    assert n_near == 0 and n_off == 0 and np.isnan(kept) and np.isnan(pulled)
