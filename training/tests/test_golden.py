"""The shipped weights, and tiny random ones of settings they lack, reproduce the golden vectors
(the C++ engine's parity target)."""
import os
import sys

import numpy as np
import pytest
import torch

HERE = os.path.dirname(__file__)
sys.path.insert(0, os.path.join(HERE, ".."))
from edgetap.engine import StreamingTracker  # noqa: E402
from edgetap.weights import load_exported_model, read_safetensors  # noqa: E402
from make_test_model import TEST_MODELS  # noqa: E402

ROOT = os.path.join(HERE, "..", "..")
SHIPPED = ("edgetap-small", "edgetap-large")
TINY = tuple(TEST_MODELS)     # tiny random networks whose weights live beside their golden vectors


@pytest.mark.parametrize("name", SHIPPED + TINY)
def test_golden_parity(name):
    model = os.path.join(ROOT, "tests", "data", "golden", name) if name in TINY else os.path.join(ROOT, "models", name)
    m = load_exported_model(model + ".safetensors", model + ".json")
    g, _ = read_safetensors(os.path.join(ROOT, "tests", "data", "golden", name + "-golden.safetensors"))
    tq = torch.from_numpy(g["query_t"])[None]
    pq = torch.from_numpy(g["query_xy"])[None]
    st = StreamingTracker(m, tq, pq)
    video = torch.from_numpy(g["frames"]).permute(0, 3, 1, 2).float()
    T = video.shape[0]
    xy = torch.stack([st.step(video[t:t + 1])[0][0] for t in range(T)]).numpy()
    valid = np.arange(T)[:, None] >= g["query_t"][None, :]
    err = np.abs(xy - g["out_xy"])[valid].max()
    assert err < 1e-3, err


def test_metrics_hand_cases():
    from edgetap.metrics import tapvid_counts
    # 1 point, 4 frames, query at 0. Frame 1: error exactly 1 px (strict <: not within 1, within 2).
    # Frame 2: gt occluded, predicted visible -> false positive. Frame 3: unknown, skipped.
    gt = np.zeros((1, 4, 2))
    pred = np.zeros((1, 4, 2))
    pred[0, 1] = [1.0, 0.0]
    gt_vis = np.array([[True, True, False, True]])
    known = np.array([[True, True, True, False]])
    pred_vis = np.array([[True, True, True, True]])
    m = tapvid_counts(gt, gt_vis, known, np.array([0]), pred, pred_vis)
    assert m["pts_within_1"] == 0.0 and m["pts_within_2"] == 1.0
    # threshold 1: tp 0, gt positives 1, fp 2 (occluded frame + too far) -> 0; others: tp 1 / (1 + 1)
    assert m["jaccard_1"] == 0.0 and m["jaccard_2"] == 0.5
    assert abs(m["OA"] - 0.5) < 1e-9


if __name__ == "__main__":
    for name in SHIPPED + TINY:
        test_golden_parity(name)
    test_metrics_hand_cases()
    print(f"{len(SHIPPED + TINY) + 1} passed, 0 failed")
