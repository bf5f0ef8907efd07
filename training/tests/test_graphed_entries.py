"""The streaming-entries pass replayed as CUDA graphs gives the eager pass's entries (GPU), and
what the graph relies on holds (CPU)."""
import os
import sys

import pytest
import torch

HERE = os.path.dirname(__file__)
sys.path.insert(0, os.path.join(HERE, ".."))
from edgetap.engine import StreamingTracker, streaming_entries  # noqa: E402
from make_test_model import TINY_CROSS, random_model  # noqa: E402

# the tiny cross-track network; the same entering frames at its extrapolated estimate; the same
# correlating recent descriptors beside the query's
MOVING = TINY_CROSS.replaced({"entry_velocity": 1.0})
RECENT = TINY_CROSS.replaced({"recent_descriptors": True})
CONFIGS = dict(argvalues=[TINY_CROSS, MOVING, RECENT], ids=["previous-output", "extrapolated", "recent"])

needs_gpu = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")


@pytest.mark.parametrize("cfg", **CONFIGS)
def test_a_restarted_sync_free_tracker_steps_as_a_fresh_one(cfg):
    """What the graph relies on, on the CPU: a sync-free tracker that already streamed one clip
    and is restarted with new tracks gives, frame by frame, exactly a fresh tracker's output."""
    model = random_model(cfg, seed=6)
    B, T, N, S = 2, 6, 7, 64
    gen = torch.Generator().manual_seed(4)
    with torch.no_grad():
        feats = model.encoder(torch.rand(B * T, 3, S, S, generator=gen) * 255)
    per_clip = [f.reshape(B, T, *f.shape[1:]) for f in feats]
    tracks = [(torch.randint(0, T - 1, (B, N), generator=gen), torch.rand(B, N, 2, generator=gen) * (S - 1))
              for _ in range(2)]
    reused = StreamingTracker(model, *tracks[0], sync_free=True)
    for t in range(T):
        reused.step_features([f[:, t] for f in per_clip])
    reused.restart(*tracks[1])
    fresh = StreamingTracker(model, *tracks[1])
    for t in range(T):
        a = fresh.step_features([f[:, t] for f in per_clip])
        b = reused.step_features([f[:, t] for f in per_clip])
        for x, y in zip(a, b):
            assert torch.equal(x, y)


def test_the_streaming_pass_runs_under_bf16_autocast():
    """The training step runs the entries pass under bf16 autocast (the caches stay FP32):
    it must run there and stay near the FP32 pass."""
    model = random_model(TINY_CROSS, seed=6)
    B, T, N, S = 2, 6, 7, 64
    gen = torch.Generator().manual_seed(4)
    video = torch.rand(B * T, 3, S, S, generator=gen) * 255
    tq = torch.randint(0, T - 1, (B, N), generator=gen)
    pq = torch.rand(B, N, 2, generator=gen) * (S - 1)
    with torch.no_grad():
        feats = [f.contiguous() for f in model.encoder(video)]
    exact = streaming_entries(model, feats, tq, pq)
    with torch.autocast("cpu", dtype=torch.bfloat16):
        half = streaming_entries(model, feats, tq, pq)
    assert half.dtype == torch.float32
    # px; the random network moves points by up to ~70 px a frame, which amplifies bf16 rounding
    assert torch.isfinite(half).all() and (half - exact).abs().mean().item() < 0.25


def _clip(model, B, T, N, S, seed):
    gen = torch.Generator().manual_seed(seed)
    video = (torch.rand(B * T, 3, S, S, generator=gen) * 255).cuda()
    with torch.no_grad():
        feats = [f.contiguous() for f in model.encoder(video)]
    tq = torch.randint(0, T - 1, (B, N), generator=gen).cuda()
    pq = (torch.rand(B, N, 2, generator=gen) * (S - 1)).cuda()
    return feats, tq, pq


@needs_gpu
@pytest.mark.parametrize("autocast", [False, True])
@pytest.mark.parametrize("cfg", **CONFIGS)
def test_graph_replays_match_the_eager_pass(autocast, cfg):
    from edgetap.graphed_entries import graphed_streaming_entries
    model = random_model(cfg, seed=6).cuda()
    tol = 1e-3 if not autocast else 0.05

    def both(feats, tq, pq):
        # one autocast region per pass, as per training step: autocast caches its weight casts
        # until the region ends, so a region spanning a weight change would feed the eager pass
        # the old weights
        with torch.autocast("cuda", dtype=torch.bfloat16, enabled=autocast):
            eager = streaming_entries(model, feats, tq, pq)
        with torch.autocast("cuda", dtype=torch.bfloat16, enabled=autocast):
            graphed = graphed_streaming_entries(model, feats, tq, pq)
        return (graphed - eager).abs().max().item()

    for seed in (1, 2):   # the second clip reuses the graph captured for the first
        diff = both(*_clip(model, 2, 6, 7, 64, seed))
        assert diff < tol, f"autocast {autocast}, clip {seed}: graph and eager differ by {diff} px"
    with torch.no_grad():  # weights changed in place (as the optimizer does) reach the replays
        for p in model.tracker.parameters():
            p.mul_(1.05)
    diff = both(*_clip(model, 2, 6, 7, 64, 2))
    assert diff < tol, f"autocast {autocast}, changed weights: graph and eager differ by {diff} px"


if __name__ == "__main__":     # the GPU host may have no pytest
    for cfg in (TINY_CROSS, MOVING):
        test_a_restarted_sync_free_tracker_steps_as_a_fresh_one(cfg)
    test_the_streaming_pass_runs_under_bf16_autocast()
    if not torch.cuda.is_available():
        sys.exit("3 passed; the graph tests skipped: needs a CUDA GPU")
    for cfg in (TINY_CROSS, MOVING):
        for autocast in (False, True):
            test_graph_replays_match_the_eager_pass(autocast, cfg)
    print("7 passed, 0 failed")
