"""bench/torch_side_by_side.py's seed-style correlation (the full all-pairs volume, then
grid_sample twice) computes the streaming tracker's window correlation (CPU)."""
import importlib.util
import os
import sys

import pytest
import torch

HERE = os.path.dirname(__file__)
sys.path.insert(0, os.path.join(HERE, ".."))
from edgetap.engine import track_clip  # noqa: E402
from edgetap.sampling import FeatureTable, window_correlation, window_features  # noqa: E402
from make_test_model import TINY_CROSS, random_model  # noqa: E402

_spec = importlib.util.spec_from_file_location(
    "torch_side_by_side", os.path.join(HERE, "..", "..", "bench", "torch_side_by_side.py"))
sbs = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(sbs)


@pytest.mark.parametrize("patch_radius", [0, 1])
def test_seed_correlation_equals_the_window_correlation(patch_radius):
    """Random maps and points (some near or beyond the borders, where reads are zero): the
    volume's windows equal the window correlation of the descriptors sampled in the query map."""
    gen = torch.Generator().manual_seed(3)
    B, D, h, w, N, r = 2, 16, 9, 11, 13, 3
    fq, ft = torch.randn(B, D, h, w, generator=gen), torch.randn(B, D, h, w, generator=gen)
    pq = torch.rand(B, N, 2, generator=gen) * torch.tensor([w + 2.0, h + 2.0]) - 1.0
    p = torch.rand(B, N, 2, generator=gen) * torch.tensor([w + 6.0, h + 6.0]) - 3.0
    frame = torch.arange(B)[:, None].expand(B, N)
    desc = window_features(FeatureTable(fq), frame, pq, patch_radius)            # [B, N, P, D]
    want = window_correlation(FeatureTable(ft), frame, p, desc, r)
    got = sbs.seed_correlation(fq, ft, pq, p, patch_radius, r)
    assert got.shape == want.shape == (B, N, (2 * patch_radius + 1) ** 2 * (2 * r + 1) ** 2)
    assert torch.allclose(got, want, atol=1e-5, rtol=1e-5), float((got - want).abs().max())


def test_seed_style_tracker_tracks_as_the_streaming_reference():
    """A tiny random network (3x3 query patch, a cross-track layer) streams a texture clip to
    the same tracks either way; keeping the volumes changes nothing."""
    model = random_model(TINY_CROSS, seed=6)
    clip = sbs.texture_clip(5, 64)
    pq = sbs.grid_points(64, 9)
    tq = torch.zeros(1, 9, dtype=torch.long)
    want = track_clip(model, clip[None], tq, pq)[0]
    for keep in (False, True):
        got = sbs.seed_mode(model, clip, tq, pq, keep)()
        assert got.shape == want.shape == (1, 9, 5, 2)
        assert sbs.max_dxy(got, want) < 1e-3


def test_seed_style_rejects_tracks_of_several_query_frames():
    model = random_model(TINY_CROSS, seed=6)
    with pytest.raises(ValueError, match="one query frame"):
        sbs.SeedStyleTracker(model, torch.tensor([[0, 1]]), torch.zeros(1, 2, 2))
