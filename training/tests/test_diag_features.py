"""diag_features.level_scores: the measures it reports on a feature map whose answer is known."""
import os
import sys

import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from diag_features import level_scores  # noqa: E402


def test_a_unique_match_at_the_truth_ranks_first_and_beats_the_estimate():
    g = torch.Generator().manual_seed(0)
    fmap = torch.randn(16, 20, 24, generator=g) * 0.1
    desc = torch.randn(16, generator=g)
    fmap[:, 10, 12] = desc * 3            # the query's appearance, at x 12, y 10 (cells of stride 4)
    truth_beats_est, rank, peak = level_scores(fmap, desc, 4, [48.0, 40.0], [80.0, 20.0], thr=6.0)
    assert truth_beats_est and rank == 0.0 and peak


def test_a_better_match_beside_the_truth_is_counted_against_it():
    g = torch.Generator().manual_seed(1)
    fmap = torch.randn(16, 20, 24, generator=g) * 0.1
    desc = torch.randn(16, generator=g)
    fmap[:, 10, 12] = desc                # the truth matches ...
    fmap[:, 10, 16] = desc * 3            # ... a cell 16 px to its right (where the estimate is) better
    truth_beats_est, rank, peak = level_scores(fmap, desc, 4, [48.0, 40.0], [64.0, 40.0], thr=6.0)
    assert not truth_beats_est
    assert 0 < rank < 0.01                # one cell of 480 above it
    assert not peak                       # the disc's best cell lies 16 px away, over the threshold
