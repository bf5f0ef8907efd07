"""CPU checks that the patch reads (edgetap/sampling.py) equal their definition, grid_sample per
window point: values and gradients, inside the maps, across their edges and far outside, for
maps in either memory format (run: python3 -m pytest training/tests -q)."""
import os
import sys

import pytest
import torch

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
from edgetap.sampling import (FeatureTable, patch_correlation, sample_around, window_correlation,  # noqa: E402
                              window_features, window_offsets)


def _maps_and_points(seed, channels_last=False):
    g = torch.Generator().manual_seed(seed)
    maps = torch.randn(3, 8, 9, 11, generator=g)          # 3 maps, D = 8, h = 9, w = 11
    if channels_last:
        maps = maps.contiguous(memory_format=torch.channels_last)
    # 3 maps x 7 points: inside, on the edges, straddling them, far outside, on integers
    xy = torch.rand(3, 7, 2, generator=g) * torch.tensor([10.0, 8.0])
    xy[:, 1] = torch.tensor([-1.3, 4.2])
    xy[:, 2] = torch.tensor([10.6, 8.5])
    xy[:, 3] = torch.tensor([-40.0, 70.25])
    xy[:, 4] = torch.tensor([3.0, 5.0])
    xy[:, 5] = torch.tensor([0.0, 8.0])
    return maps, xy, g


@pytest.mark.parametrize("radius", [1, 3])
@pytest.mark.parametrize("channels_last", [False, True])
def test_window_features_equal_grid_sample(radius, channels_last):
    maps, xy, _ = _maps_and_points(radius, channels_last)
    ref = sample_around(maps, xy, window_offsets(radius, xy.device))           # [3, 7, k*k, D]
    frame = torch.arange(3)[:, None].expand(3, 7)
    got = window_features(FeatureTable(maps), frame, xy, radius)
    assert got.shape == ref.shape
    assert torch.allclose(got, ref, atol=1e-5), (got - ref).abs().max()
    # the points far outside read nothing
    assert got[:, 3].abs().max() == 0


def test_window_features_read_the_named_map():
    maps, xy, _ = _maps_and_points(5)
    tab = FeatureTable(maps)
    frame = torch.tensor([2, 0, 1, 2, 2, 1, 0])                               # one map per point
    got = window_features(tab, frame, xy[0], 1)
    ref = torch.stack([sample_around(maps[f:f + 1], xy[0, i:i + 1][None], window_offsets(1, xy.device))[0, 0]
                       for i, f in enumerate(frame.tolist())])
    assert torch.allclose(got, ref, atol=1e-5)


def test_window_correlation_equals_definition_with_gradients():
    maps, xy, g = _maps_and_points(7)
    desc = torch.randn(3, 7, 9, 8, generator=g)
    frame = torch.arange(3)[:, None].expand(3, 7)
    weights = torch.randn(3, 7, 9 * 49, generator=g)

    def run(fast):
        m = maps.clone().requires_grad_()
        d = desc.clone().requires_grad_()
        if fast:
            c = window_correlation(FeatureTable(m), frame, xy, d, 3)
        else:
            c = patch_correlation(sample_around(m, xy, window_offsets(3, xy.device)), d, 8)
        (c * weights).sum().backward()
        return c.detach(), m.grad, d.grad

    (c0, gm0, gd0), (c1, gm1, gd1) = run(False), run(True)
    assert c1.shape == c0.shape == (3, 7, 9 * 49)
    assert torch.allclose(c1, c0, atol=1e-5), (c1 - c0).abs().max()
    assert torch.allclose(gm1, gm0, atol=1e-4), (gm1 - gm0).abs().max()
    assert torch.allclose(gd1, gd0, atol=1e-4), (gd1 - gd0).abs().max()


def test_descriptors_broadcast_over_frames():
    """The training forward dots one set of descriptors per track with its windows in every frame."""
    maps, _, g = _maps_and_points(9)
    xy = torch.rand(1, 4, 3, 2, generator=g) * 8                               # [B, N, T, 2]
    desc = torch.randn(1, 4, 9, 8, generator=g)                                # [B, N, P, D]
    frame = torch.arange(3)[None, None]                                        # map t for frame t
    got = window_correlation(FeatureTable(maps), frame, xy, desc[:, :, None], 2)
    for t in range(3):
        ref = patch_correlation(sample_around(maps[t:t + 1], xy[:, :, t], window_offsets(2, xy.device)), desc, 8)
        assert torch.allclose(got[:, :, t], ref, atol=1e-5)


if __name__ == "__main__":
    sys.exit(pytest.main([__file__, "-q"]))
