"""Template refinement after the network (edgetap/refine.py): known sub-pixel motion is recovered,
hidden and unsure points are left alone, and the committed golden positions are the reference's."""
import json
import os
import sys

import numpy as np
import pytest
import torch

HERE = os.path.dirname(__file__)
sys.path.insert(0, os.path.join(HERE, ".."))
from edgetap import refine  # noqa: E402
from edgetap.weights import read_safetensors  # noqa: E402
from export import refined_positions  # noqa: E402

ROOT = os.path.join(HERE, "..", "..")
SIDE = 96


def texture(x, y):
    return (128 + 38 * np.sin(0.31 * x + 0.17 * y) + 30 * np.sin(-0.23 * x + 0.41 * y + 1)
            + 24 * np.sin(0.53 * x - 0.29 * y + 2) + 16 * np.sin(0.07 * x + 0.61 * y + 0.5))


def shifted_clip(shifts):
    """Frames of the texture moved by each (dx, dy): [T, 3, SIDE, SIDE] uint8."""
    y, x = np.mgrid[0:SIDE, 0:SIDE].astype(np.float64)
    frames = [np.clip(np.round(texture(x - dx, y - dy)), 0, 255) for dx, dy in shifts]
    return torch.from_numpy(np.stack(frames)[:, None].repeat(3, 1).astype(np.uint8))


def test_recovers_known_subpixel_motion_from_a_pixel_away():
    shifts = [(0, 0), (0.6, -0.3), (1.4, -0.5), (2.3, 0.2)]
    video = shifted_clip(shifts)
    q = np.array([[40.0, 44.0], [55.0, 50.0]])
    truth = q[:, None] + np.array(shifts)[None]                 # [N, T, 2]
    start = truth + np.array([0.7, -0.6])                        # the network's outputs, off by 0.9 px
    start[:, 0] = q
    xy, accepted = refine.refine_tracks(video, q, np.zeros(2, np.int64), start, np.ones((2, 4), bool))
    assert accepted == 6                                          # frames 1-3 of both tracks
    assert np.abs(xy[:, 1:] - truth[:, 1:]).max() < 0.05
    assert np.array_equal(xy[:, 0], q)                            # the query frame is the query point


def test_hidden_points_and_far_moves_keep_the_network_output():
    shifts = [(0, 0), (1.5, 0.0)]
    video = shifted_clip(shifts)
    q = np.array([[48.0, 48.0], [30.0, 60.0]])
    start = np.stack([q, q], 1)                                   # both 1.5 px behind the truth
    visible = np.array([[True, False], [True, True]])            # the first hidden in frame 1
    xy, accepted = refine.refine_tracks(video, q, np.zeros(2, np.int64), start, visible,
                                        dict(refine.DEFAULT, max_shift=1.0))
    assert accepted == 0
    assert np.array_equal(xy, start)
    xy, accepted = refine.refine_tracks(video, q, np.zeros(2, np.int64), start, visible)
    assert accepted == 1 and abs(xy[1, 1, 0] - 31.5) < 0.05 and np.array_equal(xy[0], start[0])


@pytest.mark.parametrize("name", ["edgetap-small", "edgetap-large"])
def test_committed_golden_positions_are_the_references(name):
    info = json.load(open(os.path.join(ROOT, "models", name + ".json")))
    g, meta = read_safetensors(os.path.join(ROOT, "tests", "data", "golden", name + "-golden.safetensors"))
    expected = refined_positions(g, info["refinement"], info["visible_rule"], info["vis_threshold"])
    assert np.abs(expected - g["refined_xy"]).max() < 1e-4
    assert (np.abs(g["refined_xy"] - g["out_xy"]).sum(-1) > 0).sum() > 5   # the clip moves some of them


def test_evaluation_refines_in_the_model_input_and_reports_in_the_sequence_pixels():
    # A sequence stored at half its original size: predictions and truth are in original pixels,
    # refinement works in the 96 px frames it was tracked in.
    from edgetap import evalsets
    shifts = [(0, 0), (0.6, -0.4)]
    video = shifted_clip(shifts)
    q_model = np.array([[40.0, 44.0], [60.0, 50.0]])
    to_orig = lambda a: (a + 0.5) * 2 - 0.5                     # noqa: E731
    truth_model = q_model[:, None] + np.array(shifts)[None]
    start_model = truth_model + np.array([0.5, 0.5])
    start_model[:, 0] = q_model
    seq = dict(video=video, W=2 * SIDE, H=2 * SIDE, q=to_orig(q_model), tq=np.zeros(2, np.int64))
    xy = evalsets.refined_predictions(seq, to_orig(start_model), np.ones((2, 2), bool), refine.DEFAULT)
    assert np.abs(xy[:, 1] - to_orig(truth_model[:, 1])).max() < 0.1   # 0.05 model px = 0.1 original px
    assert np.allclose(xy[:, 0], to_orig(q_model))
