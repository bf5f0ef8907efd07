"""compare_badja.py: reading diag_badja.py's rows, and the paired bootstrap over tracks."""
import os
import sys

import numpy as np
import pytest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import compare_badja  # noqa: E402
import diag_badja  # noqa: E402


def diag_text(errors):
    """diag_badja.py's lines for one sequence 'camel' whose tracks have these error ratios (frames 1..)."""
    T = errors.shape[1] + 1
    seq = dict(gt_xy=np.zeros((len(errors), T, 2)), known=np.ones((len(errors), T), bool),
               gt_vis=np.ones((len(errors), T), bool), tq=np.zeros(len(errors), int),
               mask_area=np.full(T, 2500.0), q=np.zeros((len(errors), 2)))     # threshold 10 px
    xy = np.zeros_like(seq["gt_xy"])
    xy[:, 1:, 0] = 10.0 * errors
    hits = (errors < 1).mean()
    return [f"camel at (256, 256): PCK@0.2 {hits:.3f}"] + diag_badja.error_rows(seq, xy) + [
        diag_badja.age_line("camel", diag_badja.hits_by_age(seq, xy))]


def test_rows_give_each_tracks_hits_and_frames():
    errors = np.array([[0.1, 0.5, 2.0, 0.2], [1.5, 1.2, 0.3, 0.9]])
    counts = compare_badja.parse_diag(diag_text(errors))
    assert counts["camel"].tolist() == [[3, 4], [2, 4]]
    assert compare_badja.pck(counts["camel"]) == pytest.approx(5 / 8)


def test_a_header_that_disagrees_with_its_rows_is_an_error_naming_the_line():
    lines = diag_text(np.array([[0.1, 2.0]]))
    lines[0] = "camel at (256, 256): PCK@0.2 0.900"
    with pytest.raises(ValueError, match="line 1: camel"):
        compare_badja.parse_diag(lines)


def test_identical_networks_differ_by_nothing_and_a_uniform_gain_is_inside_its_interval():
    rng = np.random.default_rng(1)
    a = {"camel": np.stack([rng.integers(0, 10, 20), np.full(20, 10)], -1)}
    same = compare_badja.paired_bootstrap(a, a, 500)
    assert np.all(same == 0)
    b = {"camel": a["camel"] + np.array([1, 0]) * (a["camel"][:, :1] < 10)}    # one more hit where possible
    d = compare_badja.paired_bootstrap(a, b, 500)
    gain = compare_badja.pck(b["camel"]) - compare_badja.pck(a["camel"])
    assert np.percentile(d, 5) <= gain <= np.percentile(d, 95)
    assert np.all(d >= 0)


def test_files_of_different_tracks_are_refused():
    a = compare_badja.parse_diag(diag_text(np.array([[0.1, 2.0]])))
    b = compare_badja.parse_diag(diag_text(np.array([[0.1, 2.0, 0.3]])))
    with pytest.raises(ValueError, match="camel: the files annotate different tracks"):
        compare_badja.check_same_tracks(a, b)
