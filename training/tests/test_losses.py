"""noisy_init: the entering estimates training draws for tracks that do not stream their own;
position_loss: the position term's shape."""
import os
import sys

import torch

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
from edgetap.losses import noisy_init, position_loss  # noqa: E402


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


def test_position_loss_at_4_px_is_the_huber_loss_of_rounds_1_to_25():
    err = torch.linspace(-20, 20, 161)
    want = torch.nn.functional.huber_loss(err, torch.zeros_like(err), reduction="none", delta=4.0)
    assert torch.allclose(position_loss(err, 4.0), want, atol=1e-6)


def test_a_narrower_quadratic_zone_pulls_harder_on_small_errors_only():
    """Gradients: beyond both zones the same slope (4 per px); at 0.5 px, 4 x 0.5 / zone."""
    err = torch.tensor([0.5, -0.5, 6.0, -9.0], requires_grad=True)
    for zone, small in ((4.0, 0.5), (1.0, 2.0), (0.5, 4.0)):
        g, = torch.autograd.grad(position_loss(err, zone).sum(), err)
        assert torch.allclose(g, torch.tensor([small, -small, 4.0, -4.0])), (zone, g)
