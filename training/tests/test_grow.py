"""A grown network (edgetap/grow.py) computes exactly what the network it grew from computes."""
import os
import sys

import pytest
import torch

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
from edgetap.grow import grow_state_dict  # noqa: E402
from edgetap.model import EdgeTap, EdgeTapConfig, correlation_reads  # noqa: E402
from edgetap.weights import randomize_weights_  # noqa: E402


QUERY_FRAMES = torch.tensor([0, 0, 2, 3, 5])    # the tracks' query frames in _outputs' clip


def _outputs(m, seed=0):
    g = torch.Generator().manual_seed(seed)
    B, T, N, S = 1, 6, 5, 64
    video = torch.rand(B, T, 3, S, S, generator=g) * 255
    tq = QUERY_FRAMES[None]
    pq = torch.rand(B, N, 2, generator=g) * (S - 1)
    p_init = pq[:, :, None, :] + torch.randn(B, N, T, 2, generator=g) * 2
    with torch.no_grad():
        return m.forward_parallel(video, tq, pq, p_init)


@pytest.mark.parametrize("query_patch,blocks,cross_after", [(3, 2, []), (5, 2, []), (3, 3, []), (1, 4, []),
                                                        (1, 2, [1]), (3, 3, [0, 2])])
def test_grown_network_computes_the_same(query_patch, blocks, cross_after):
    old_cfg = EdgeTapConfig(window=3, iters=2, blocks=2)
    old = randomize_weights_(EdgeTap(old_cfg).eval(), torch.Generator().manual_seed(2), 0.2)
    new_cfg = EdgeTapConfig.from_dict(dict(old_cfg.to_dict(), query_patch=query_patch, blocks=blocks,
                                           cross_after=cross_after))
    new = EdgeTap(new_cfg).eval()
    new.load_state_dict(grow_state_dict(old.state_dict(), old_cfg, new_cfg))
    for a, b in zip(_outputs(old), _outputs(new)):
        assert (a - b).abs().max().item() < 1e-4
    # the new correlation inputs and cross-track layers are live: perturbing them changes the output
    with torch.no_grad():
        if cross_after:   # random, not uniform: LayerNorm removes a shift common to all channels
            new.tracker.cross[0].proj.weight.add_(0.05 * torch.randn(new.tracker.cross[0].proj.weight.shape,
                                                                     generator=torch.Generator().manual_seed(4)))
        else:
            new.tracker.corr1.weight.add_(0.05)
    assert (_outputs(old)[0] - _outputs(new)[0]).abs().max().item() > 1e-3


@pytest.mark.parametrize("query_patch", [1, 3])
def test_grown_network_with_recent_descriptors_computes_the_same(query_patch):
    """Recent descriptors grown in (round 25's step), also together with a larger query patch:
    the same function; the new inputs sit behind the old and are live."""
    old_cfg = EdgeTapConfig(window=3, iters=2, blocks=2)
    old = randomize_weights_(EdgeTap(old_cfg).eval(), torch.Generator().manual_seed(5), 0.2)
    new_cfg = EdgeTapConfig.from_dict(dict(old_cfg.to_dict(), query_patch=query_patch, recent_descriptors=True))
    new = EdgeTap(new_cfg).eval()
    new.load_state_dict(grow_state_dict(old.state_dict(), old_cfg, new_cfg))
    for a, b in zip(_outputs(old), _outputs(new)):
        assert (a - b).abs().max().item() < 1e-4
    w = new.tracker.corr1.weight
    assert w[:, new_cfg.n_corr // 2:].abs().max() == 0
    with torch.no_grad():
        w[:, new_cfg.n_corr // 2:].add_(0.05)
    assert (_outputs(old)[0] - _outputs(new)[0]).abs().max().item() > 1e-3
    with pytest.raises(ValueError, match="recent_descriptors"):
        grow_state_dict(new.state_dict(), new_cfg, old_cfg)


@pytest.mark.parametrize("recent", [False, True])
def test_grown_network_with_cross_scale_reads_computes_the_same(recent):
    """Cross-scale reads grown in (round 27's step), also behind recent descriptors: the same
    function; the new inputs sit behind all the old and are live; no shrinking back."""
    old_cfg = EdgeTapConfig(window=3, iters=2, blocks=2, query_patch=3, recent_descriptors=recent)
    old = randomize_weights_(EdgeTap(old_cfg).eval(), torch.Generator().manual_seed(6), 0.2)
    new_cfg = EdgeTapConfig.from_dict(dict(old_cfg.to_dict(), cross_scale=True))
    new = EdgeTap(new_cfg).eval()
    new.load_state_dict(grow_state_dict(old.state_dict(), old_cfg, new_cfg))
    for a, b in zip(_outputs(old), _outputs(new)):
        assert (a - b).abs().max().item() < 1e-4
    w = new.tracker.corr1.weight
    assert torch.equal(w[:, :old_cfg.n_corr], old.tracker.corr1.weight)
    assert w[:, old_cfg.n_corr:].abs().max() == 0
    with torch.no_grad():
        w[:, old_cfg.n_corr:].add_(0.05)
    assert (_outputs(old)[0] - _outputs(new)[0]).abs().max().item() > 1e-3
    with pytest.raises(ValueError, match="cross_scale on -> off"):
        grow_state_dict(new.state_dict(), new_cfg, old_cfg)


@pytest.mark.parametrize("change", [dict(strides=[2, 4, 8, 16, 32]), dict(recent_descriptors=True),
                                    dict(query_patch=3), dict(strides=[2, 4, 8, 16, 32], query_patch=3)])
def test_a_network_with_cross_scale_reads_grows_its_levels_sets_or_patch(change):
    """v6's shape grown by a stride-2 level, recent descriptors or a larger query patch: the same
    function; every old read's weights move to the new read of the same set and strides, every
    other input starts at zero, and those are live."""
    old_cfg = EdgeTapConfig(window=3, iters=2, blocks=2, query_patch=1 if "query_patch" in change else 3,
                            cross_scale=True)
    old = randomize_weights_(EdgeTap(old_cfg).eval(), torch.Generator().manual_seed(8), 0.2)
    new_cfg = EdgeTapConfig.from_dict(dict(old_cfg.to_dict(), **change))
    new = EdgeTap(new_cfg).eval()
    new.load_state_dict(grow_state_dict(old.state_dict(), old_cfg, new_cfg))
    for a, b in zip(_outputs(old), _outputs(new)):
        assert (a - b).abs().max().item() < 1e-4
    # the old cross-scale read from stride 4 descriptors into the stride 8 window, found by strides
    k2, p_old, p_new = 49, old_cfg.query_patch ** 2, new_cfg.query_patch ** 2
    old_at = correlation_reads(old_cfg).index((0, 0, 1)) * p_old * k2
    lvl4, lvl8 = list(new_cfg.strides).index(4), list(new_cfg.strides).index(8)
    new_at = correlation_reads(new_cfg).index((0, lvl4, lvl8)) * p_new * k2 + (p_new // 2 if p_old == 1 else 0) * k2
    w_old, w = old.tracker.corr1.weight, new.tracker.corr1.weight
    assert torch.equal(w[:, new_at:new_at + k2], w_old[:, old_at:old_at + k2])
    assert (w != 0).sum() == (w_old != 0).sum()          # nothing else carries weights
    zero = (w == 0).all(dim=0)
    with torch.no_grad():
        w[:, zero] = 0.05 * torch.randn(w.shape[0], int(zero.sum()), generator=torch.Generator().manual_seed(9))
    assert (_outputs(old)[0] - _outputs(new)[0]).abs().max().item() > 1e-3


def test_grown_network_with_a_cross_layer_gains_a_block_and_another_layer():
    """Round 5's shape (a cross-track layer after the last block) grown by a block and a second
    cross-track layer after it: the same function, and the new layer is live."""
    old_cfg = EdgeTapConfig(window=3, iters=2, blocks=2, cross_after=(1,))
    old = randomize_weights_(EdgeTap(old_cfg).eval(), torch.Generator().manual_seed(3), 0.2)
    new_cfg = EdgeTapConfig.from_dict(dict(old_cfg.to_dict(), blocks=3, cross_after=[1, 2]))
    new = EdgeTap(new_cfg).eval()
    new.load_state_dict(grow_state_dict(old.state_dict(), old_cfg, new_cfg))
    for a, b in zip(_outputs(old), _outputs(new)):
        assert (a - b).abs().max().item() < 1e-4
    with torch.no_grad():
        w = new.tracker.cross[1].proj.weight
        w.add_(0.05 * torch.randn(w.shape, generator=torch.Generator().manual_seed(4)))
    assert (_outputs(old)[0] - _outputs(new)[0]).abs().max().item() > 1e-3


def test_existing_cross_layers_stay_first():
    old_cfg = EdgeTapConfig(window=3, iters=2, blocks=2, cross_after=(1,))
    new_cfg = EdgeTapConfig.from_dict(dict(old_cfg.to_dict(), cross_after=[0, 1]))
    with pytest.raises(ValueError, match="appended"):
        grow_state_dict(EdgeTap(old_cfg).state_dict(), old_cfg, new_cfg)


def test_cross_after_must_name_blocks():
    old_cfg = EdgeTapConfig(window=3, iters=2, blocks=2)
    new_cfg = EdgeTapConfig.from_dict(dict(old_cfg.to_dict(), cross_after=[2]))
    with pytest.raises(ValueError, match="cross_after"):
        grow_state_dict(EdgeTap(old_cfg).state_dict(), old_cfg, new_cfg)


def test_unsupported_change_is_named():
    old_cfg = EdgeTapConfig(window=3, iters=2, blocks=2)
    new_cfg = EdgeTapConfig.from_dict(dict(old_cfg.to_dict(), width=64))
    with pytest.raises(ValueError, match="width"):
        grow_state_dict(EdgeTap(old_cfg).state_dict(), old_cfg, new_cfg)


def test_grown_window_keeps_each_tracks_first_frames():
    """window 3 -> 6: the same outputs on every track's first 3 frames (from its query frame on);
    later frames see the older frames too, so they change."""
    old_cfg = EdgeTapConfig(window=3, iters=2, blocks=2)
    old = randomize_weights_(EdgeTap(old_cfg).eval(), torch.Generator().manual_seed(5), 0.2)
    new_cfg = EdgeTapConfig.from_dict(dict(old_cfg.to_dict(), window=6))
    new = EdgeTap(new_cfg).eval()
    new.load_state_dict(grow_state_dict(old.state_dict(), old_cfg, new_cfg))
    assert new.tracker.rel_bias.shape == (old_cfg.heads, 7)
    tq = QUERY_FRAMES
    frame = torch.arange(6)
    first = (frame[None] >= tq[:, None]) & (frame[None] < tq[:, None] + 3)      # [N, T]
    later = frame[None] >= tq[:, None] + 3
    pos_old, pos_new = _outputs(old)[0], _outputs(new)[0]                      # [K, B, N, T, 2]
    diff = (pos_old - pos_new).abs().amax(dim=(0, 1, 4))                         # [N, T]
    assert diff[first].max().item() < 1e-5
    assert diff[later].max().item() > 1e-4


def test_window_cannot_shrink():
    old_cfg = EdgeTapConfig(window=4, iters=2, blocks=2)
    new_cfg = EdgeTapConfig.from_dict(dict(old_cfg.to_dict(), window=3))
    with pytest.raises(ValueError, match="window"):
        grow_state_dict(EdgeTap(old_cfg).state_dict(), old_cfg, new_cfg)


def test_grown_fine_level_computes_the_same_and_is_live():
    """v5's shape (3x3 query patch, a cross-track layer) grown by the stride-2 level: the same
    function; once its correlation inputs are non-zero, the stride-2 branch changes the output."""
    old_cfg = EdgeTapConfig(window=3, iters=2, blocks=2, query_patch=3, cross_after=(1,))
    old = randomize_weights_(EdgeTap(old_cfg).eval(), torch.Generator().manual_seed(6), 0.2)
    new_cfg = EdgeTapConfig.from_dict(dict(old_cfg.to_dict(), strides=[2, 4, 8, 16, 32]))
    new = EdgeTap(new_cfg).eval()
    new.load_state_dict(grow_state_dict(old.state_dict(), old_cfg, new_cfg))
    assert new.tracker.corr1.weight.shape[1] == old.tracker.corr1.weight.shape[1] * 5 // 4
    for a, b in zip(_outputs(old), _outputs(new)):
        assert (a - b).abs().max().item() < 1e-4
    first_level = new_cfg.n_corr // 5
    with torch.no_grad():
        new.tracker.corr1.weight[:, :first_level].normal_(0, 0.05, generator=torch.Generator().manual_seed(7))
    with_fine = _outputs(new)[0]
    assert (_outputs(old)[0] - with_fine).abs().max().item() > 1e-3
    with torch.no_grad():
        new.encoder.lat2.weight.mul_(2.0)
    assert (with_fine - _outputs(new)[0]).abs().max().item() > 1e-4


def test_only_a_stride_2_level_can_be_added():
    old_cfg = EdgeTapConfig(window=3, iters=2, blocks=2)
    new_cfg = EdgeTapConfig.from_dict(dict(old_cfg.to_dict(), strides=[8, 16, 32]))
    with pytest.raises(ValueError, match="strides"):
        grow_state_dict(EdgeTap(old_cfg).state_dict(), old_cfg, new_cfg)


def test_widened_encoder_computes_the_same_and_is_live():
    """v5's shape (with the stride-2 level, so every encoder conv widens) grown to a wider encoder:
    the same function; the new channels reach the pyramid once their outgoing weights are trained."""
    old_cfg = EdgeTapConfig(window=3, iters=2, blocks=2, query_patch=3, cross_after=(1,), strides=(2, 4, 8, 16, 32))
    old = randomize_weights_(EdgeTap(old_cfg).eval(), torch.Generator().manual_seed(8), 0.2)
    new_cfg = EdgeTapConfig.from_dict(dict(old_cfg.to_dict(), enc_channels=[40, 64, 128, 160, 144]))
    new = EdgeTap(new_cfg).eval()
    new.load_state_dict(grow_state_dict(old.state_dict(), old_cfg, new_cfg))
    assert new.encoder.res8.conv.weight.shape == (128, 128, 3, 3)
    for a, b in zip(_outputs(old), _outputs(new)):
        assert (a - b).abs().max().item() < 1e-4
    with torch.no_grad():   # the lateral's weights from the new stride-4 channels
        new.encoder.lat4.weight[:, 48:].normal_(0, 0.05, generator=torch.Generator().manual_seed(9))
    assert (_outputs(old)[0] - _outputs(new)[0]).abs().max().item() > 1e-3


def test_widened_encoder_gets_gradients_into_its_new_channels():
    """Right after the growth the new channels' outgoing weights receive gradients (their incoming
    ones start when those are non-zero), so training can use them."""
    old_cfg = EdgeTapConfig(window=3, iters=2, blocks=2)
    old = randomize_weights_(EdgeTap(old_cfg).eval(), torch.Generator().manual_seed(10), 0.2)
    new_cfg = EdgeTapConfig.from_dict(dict(old_cfg.to_dict(), enc_channels=[32, 64, 96, 128, 128]))
    new = EdgeTap(new_cfg).eval()
    new.load_state_dict(grow_state_dict(old.state_dict(), old_cfg, new_cfg))
    g = torch.Generator().manual_seed(11)
    video = torch.rand(1, 4, 3, 64, 64, generator=g) * 255
    tq = torch.zeros(1, 3, dtype=torch.long)
    pq = torch.rand(1, 3, 2, generator=g) * 63
    pos = new.forward_parallel(video, tq, pq, pq[:, :, None].expand(1, 3, 4, 2))[0]
    pos.square().sum().backward()
    assert new.encoder.lat4.weight.grad[:, 48:].abs().max().item() > 0
    assert new.encoder.down8.conv.weight.grad[:, 48:].abs().max().item() > 0   # zero at the start, trained


def test_encoder_cannot_narrow():
    old_cfg = EdgeTapConfig(window=3, iters=2, blocks=2)
    new_cfg = EdgeTapConfig.from_dict(dict(old_cfg.to_dict(), enc_channels=[32, 32, 96, 128, 128]))
    with pytest.raises(ValueError, match="enc_channels"):
        grow_state_dict(EdgeTap(old_cfg).state_dict(), old_cfg, new_cfg)
