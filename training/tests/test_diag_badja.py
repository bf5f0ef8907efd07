"""diag_badja.py: its PCK ratios and the hits by track age, on a hand-made sequence."""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import diag_badja  # noqa: E402


def sequence(T=60):
    """Two points, queried at frames 0 and 10, every frame annotated and visible; mask area 2500
    (a PCK@0.2 threshold of 10 px)."""
    gt = np.zeros((2, T, 2))
    return dict(gt_xy=gt, known=np.ones((2, T), bool), gt_vis=np.ones((2, T), bool), tq=np.array([0, 10]),
                mask_area=np.full(T, 2500.0), q=np.zeros((2, 2)))


def test_ratios_are_errors_over_the_threshold_after_the_query_only():
    seq = sequence(T=4)
    xy = np.zeros((2, 4, 2))
    xy[0, :, 0] = [0, 5, 10, 20]
    ratios = {(i, t): r for i, t, r in diag_badja.pck_ratios(seq, xy)}
    assert set(ratios) == {(0, 1), (0, 2), (0, 3)}          # point 1's query frame 10 is past the end
    assert np.allclose([ratios[(0, t)] for t in (1, 2, 3)], [0.5, 1.0, 2.0])


def test_hits_are_counted_by_frames_since_the_query():
    seq = sequence()
    xy = np.zeros((2, 60, 2))
    xy[0, 32:, 0] = 50.0            # point 0 lost from age 32 on
    xy[1, 10 + 16:, 1] = 50.0       # point 1 lost from age 16 on
    counts = diag_badja.hits_by_age(seq, xy)
    # ages 1-15: 15 + 15 frames, all hits; 16-31: 16 + 16, point 0's only; 32-47: 16 + 16, none;
    # 48+: point 0's frames 48-59 (12) and point 1's ages 48-49 (2), none
    assert counts.tolist() == [[30, 30], [16, 32], [0, 32], [0, 14]]
    assert [diag_badja.age_label(k) for k in range(4)] == ["1-15", "16-31", "32-47", "48+"]


def test_unmarked_frames_do_not_count():
    seq = sequence()
    seq["known"][0, 20:] = False
    seq["gt_vis"][1, :] = False
    seq["mask_area"][5] = 0
    counts = diag_badja.hits_by_age(seq, np.zeros((2, 60, 2)))
    assert counts[:, 1].sum() == 18   # point 0's frames 1-19 less frame 5; point 1 never visible
    assert (counts[:, 0] == counts[:, 1]).all()
