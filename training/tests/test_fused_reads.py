"""GPU checks that the Triton window correlation (edgetap/fused_reads.py) equals the PyTorch
path of sampling.window_correlation: values and gradients, points inside, across the edges and
far outside, descriptors shared over frames, float32 and bfloat16 maps. Skipped without a CUDA
device or Triton (run on the GPU host: python3 training/tests/test_fused_reads.py)."""
import os
import sys

import pytest
import torch

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
from edgetap import fused_reads  # noqa: E402
from edgetap.sampling import FeatureTable, window_correlation  # noqa: E402

pytestmark = pytest.mark.skipif(not torch.cuda.is_available() or fused_reads.triton is None,
                                reason="needs a CUDA device and Triton")


def _case(seed, dtype=torch.float32):
    """6 maps [6, 64, 13, 17]; windows [2, 6, 3] (2 clips, 6 tracks, 3 frames: map 3b + t),
    descriptors [2, 6, 1, 9, 64] shared over the frames; some centres outside the maps."""
    g = torch.Generator().manual_seed(seed)
    maps = torch.randn(6, 64, 13, 17, generator=g).to("cuda", dtype)
    xy = torch.rand(2, 6, 3, 2, generator=g) * torch.tensor([16.0, 12.0])
    xy[0, 1] = torch.tensor([-2.4, 5.5])                 # straddles the left edge
    xy[1, 2] = torch.tensor([16.7, 12.2])                # straddles the bottom-right corner
    xy[1, 3] = torch.tensor([-60.0, 90.0])               # far outside
    xy[0, 4] = torch.tensor([3.0, 7.0])                  # on integers
    desc = torch.randn(2, 6, 1, 9, 64, generator=g).to("cuda", dtype)
    frame = (torch.arange(2)[:, None] * 3 + torch.arange(3))[:, None].cuda()     # [2, 1, 3]
    weights = torch.randn(2, 6, 3, 9 * 49, generator=g).cuda()
    return maps, xy.cuda(), desc, frame, weights


def _run(fused, maps, xy, desc, frame, weights, grads):
    fused_reads.enable(fused)
    try:
        m = maps.clone().requires_grad_(grads)
        d = desc.clone().requires_grad_(grads)
        c = window_correlation(FeatureTable(m), frame, xy, d, 3)
        if not grads:
            return c, None, None
        (c * weights).sum().backward()
        return c.detach(), m.grad, d.grad
    finally:
        fused_reads.enable(False)


def test_values_and_gradients_equal_the_pytorch_path():
    case = _case(1)
    c0, gm0, gd0 = _run(False, *case, grads=True)
    c1, gm1, gd1 = _run(True, *case, grads=True)
    assert c1.shape == c0.shape == (2, 6, 3, 9 * 49)
    assert torch.allclose(c1, c0, atol=1e-4), (c1 - c0).abs().max()
    assert torch.allclose(gm1, gm0, atol=1e-3), (gm1 - gm0).abs().max()
    assert torch.allclose(gd1, gd0, atol=1e-3), (gd1 - gd0).abs().max()
    assert c1[1, 3].abs().max() == 0                      # far outside reads nothing


def test_half_precision_maps_without_gradients():
    case = _case(2, torch.bfloat16)
    with torch.no_grad():
        c0, _, _ = _run(False, *case, grads=False)
        c1, _, _ = _run(True, *case, grads=False)
    # the PyTorch path dots in bfloat16, the kernel in float32: compare at bfloat16's precision
    assert torch.allclose(c1, c0.float(), atol=0.1, rtol=0.02), (c1 - c0.float()).abs().max()


def test_one_descriptor_set_per_window_as_the_engine_reads():
    """The streaming engine's layout: windows [B, N], map b for clip b, descriptors [B, N, P, D]."""
    maps, xy, desc, _, weights = _case(3)
    frame = torch.arange(2, device="cuda")[:, None].expand(2, 6)
    with torch.no_grad():
        c0, _, _ = _run(False, maps[:2], xy[:, :, 0], desc[:, :, 0], frame, weights, grads=False)
        c1, _, _ = _run(True, maps[:2], xy[:, :, 0], desc[:, :, 0], frame, weights, grads=False)
    assert torch.allclose(c1, c0, atol=1e-4), (c1 - c0).abs().max()


def test_graphed_entries_with_the_kernel_match_the_eager_pytorch_pass():
    """The training step's entries pass captures the kernel in its CUDA graphs."""
    from edgetap.engine import streaming_entries
    from edgetap.graphed_entries import graphed_streaming_entries
    from make_test_model import TINY_CROSS, random_model
    model = random_model(TINY_CROSS, seed=6).cuda()
    g = torch.Generator().manual_seed(7)
    B, T, N, S = 2, 6, 7, 64
    with torch.no_grad():
        feats = [f.contiguous() for f in model.encoder((torch.rand(B * T, 3, S, S, generator=g) * 255).cuda())]
        tq = torch.randint(0, T - 1, (B, N), generator=g).cuda()
        pq = (torch.rand(B, N, 2, generator=g) * (S - 1)).cuda()
        eager = streaming_entries(model, feats, tq, pq)
        fused_reads.enable(True)
        try:
            graphed = graphed_streaming_entries(model, feats, tq, pq)
        finally:
            fused_reads.enable(False)
    diff = (graphed - eager).abs().max().item()
    assert diff < 1e-2, f"graphed entries with the kernel differ from the eager pass by {diff} px"


if __name__ == "__main__":     # the GPU host may have no pytest runner: call the tests
    if not torch.cuda.is_available() or fused_reads.triton is None:
        sys.exit("skipped: needs a CUDA device and Triton")
    tests = [test_values_and_gradients_equal_the_pytorch_path, test_half_precision_maps_without_gradients,
             test_one_descriptor_set_per_window_as_the_engine_reads,
             test_graphed_entries_with_the_kernel_match_the_eager_pytorch_pass]
    for test in tests:
        test()
    print(f"{len(tests)} passed, 0 failed")
