"""noisy_init: the entering estimates training draws for tracks that do not stream their own."""
import os
import sys

import torch

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
from edgetap.losses import noisy_init  # noqa: E402


def test_velocity_shifts_the_entry_by_the_previous_step_from_two_frames_after_the_query():
    """The same draws with velocity v differ from v = 0 by v (gt[t-1] - gt[t-2]) from frame tq+2
    on, as the streaming engine's extrapolated entry; up to tq+1 both enter at the query point."""
    B, N, T = 2, 5, 9
    tracks = torch.cumsum(torch.randn(B, N, T, 2) * 3, dim=2) + 100
    tq = torch.tensor([[0, 1, 3, 7, 8], [2, 0, 5, 6, 0]])
    v = 0.8
    torch.manual_seed(4)
    still = noisy_init(tracks, tq, 256, velocity=0.0)
    torch.manual_seed(4)
    moving = noisy_init(tracks, tq, 256, velocity=v)
    for b in range(B):
        for n in range(N):
            q = int(tq[b, n])
            for t in range(T):
                if t <= q + 1:
                    want = torch.zeros(2)
                    assert torch.equal(moving[b, n, t], tracks[b, n, q])
                else:
                    want = v * (tracks[b, n, t - 1] - tracks[b, n, t - 2])
                assert torch.allclose(moving[b, n, t] - still[b, n, t], want, atol=1e-4), (b, n, t)
