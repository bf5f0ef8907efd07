"""Function-preserving growth of a trained EdgeTAP network into a larger architecture, so a new
round keeps what earlier rounds learned instead of starting from scratch.

* query_patch 1 -> q (odd): the q x q descriptors' centre is the old single descriptor, and the
  window correlation of the centre equals the old sampled correlation map (bilinear sampling is
  linear), so the old corr1 columns move to the centre descriptor's slots and the new columns
  start at zero.
* blocks B -> B + k: the new blocks are appended with zero output projections (attention `proj`
  and MLP `fc2`), so each is the identity on the residual stream until trained.
* cross_after (a, ...) -> (a, ..., i, ...): cross-track layers appended after temporal blocks i
  (e.g. after a block grown in the same step), with zero output projections, likewise the
  identity until trained.
* strides (4, 8, 16, 32) -> (2, 4, 8, 16, 32): the encoder gains its stride-2 side branch (off
  the backbone's path, fresh weights) and corr1 gains that level's inputs, first in the
  fine-to-coarse order, starting at zero; the old levels' columns move behind them.
* recent_descriptors off -> on: corr1 gains the recent descriptors' inputs, behind the query's
  (the old columns keep their places), starting at zero.
* cross_scale off -> on: corr1 gains the cross-scale reads' inputs (model.correlation_reads),
  behind all the others, starting at zero. A network that has them can still grow any of the
  above: every old read keeps its weights at the new read of the same set and strides
  (corr_column_map), and the reads that involve a new level or set start at zero.
* window W -> W' > W: the attention bias by frame distance gains the distances W..W'-1, each
  starting at the bias of distance W-1 (the oldest frame the old window held); the anchor's bias
  stays. This growth keeps the function only for a track's first W frames: after them the
  frames W..W'-1 back, and the anchor when it falls among them, enter the attention.
* enc_channels -> wider (each width at least the old one): every encoder conv keeps its trained
  weights in the block of old outputs x old inputs; the new output channels start at a fresh
  init (BatchNorm at its identity start) and every weight from a new channel into an old output
  (the next conv's, the residual's, the laterals') starts at zero, so the new channels compute
  but do not reach the pyramid until those weights are trained. A widened tensor holds trained
  and new weights alike, so `train.py --old-lr-scale` (which scales trained tensors) should stay 1.

The grown model computes exactly the old function (tests/test_grow.py), for window growth on
each track's first W frames.
"""
import torch

from .model import FINE_PYRAMID_STRIDES, PYRAMID_STRIDES, EdgeTap, EdgeTapConfig, correlation_reads


def corr_column_map(old, new):
    """Index into the new corr1 input for every old input. Both follow model.correlation_reads
    (read outer, then descriptor, then window position j); each old read (set, descriptor level,
    window level) goes to the new read of the same set and the same two strides; descriptor i ->
    i, or the centre descriptor when the query patch grew from 1. The new reads' inputs are the
    columns no old one maps to."""
    k2 = (2 * old.radius + 1) ** 2
    p_old, p_new = old.query_patch ** 2, new.query_patch ** 2
    new_reads = correlation_reads(new)
    level = [list(new.strides).index(s) for s in old.strides]
    cols = []
    for s, l, m in correlation_reads(old):
        base = new_reads.index((s, level[l], level[m])) * p_new * k2
        for i in range(p_old):
            desc = i if p_old == p_new else p_new // 2
            cols.extend(base + desc * k2 + j for j in range(k2))
    return torch.tensor(cols)


def rel_bias_for_window(rel_bias, old_window, new_window):
    """[heads, W+1] (distances 0..W-1, then the anchor) -> [heads, W'+1]: the distances W..W'-1
    start at distance W-1's bias."""
    oldest = rel_bias[:, old_window - 1:old_window].expand(-1, new_window - old_window)
    return torch.cat([rel_bias[:, :old_window], oldest, rel_bias[:, old_window:]], dim=1).clone()


def check_growable(old, new):
    growable = ("version", "query_patch", "blocks", "cross_after", "window", "strides", "enc_channels",
                "recent_descriptors", "cross_scale")
    same = [f for f in EdgeTapConfig.__dataclass_fields__ if f not in growable]
    diff = [f for f in same if getattr(old, f) != getattr(new, f)]
    if diff:
        raise ValueError(f"grow: only {', '.join(growable[1:])} can change; also changed: {', '.join(diff)}")
    if old.recent_descriptors and not new.recent_descriptors:
        raise ValueError("grow: recent_descriptors on -> off: their inputs cannot be removed")
    if old.cross_scale and not new.cross_scale:
        raise ValueError("grow: cross_scale on -> off: its inputs cannot be removed")
    strides = (tuple(old.strides), tuple(new.strides))
    if strides[0] != strides[1] and strides != (PYRAMID_STRIDES, FINE_PYRAMID_STRIDES):
        raise ValueError(f"grow: strides {list(old.strides)} -> {list(new.strides)}: only a stride-2 level "
                         f"can be added to {list(PYRAMID_STRIDES)}")
    if new.window < old.window:
        raise ValueError(f"grow: window {old.window} -> {new.window}: the window can only grow")
    if tuple(new.cross_after[:len(old.cross_after)]) != tuple(old.cross_after):
        raise ValueError(f"grow: cross_after {list(old.cross_after)} -> {list(new.cross_after)}: the existing "
                         "layers stay first and in order; new ones can only be appended")
    if any(b < 0 or b >= new.blocks for b in new.cross_after) or len(set(new.cross_after)) != len(new.cross_after):
        raise ValueError(f"grow: cross_after {list(new.cross_after)} must name distinct blocks in [0, {new.blocks - 1}]")
    if old.query_patch != 1 and new.query_patch != old.query_patch:
        raise ValueError(f"grow: query_patch {old.query_patch} -> {new.query_patch}: only 1 -> q is supported")
    if new.query_patch % 2 != 1 or new.query_patch < 1:
        raise ValueError(f"grow: query_patch must be odd, got {new.query_patch}")
    if new.blocks < old.blocks:
        raise ValueError(f"grow: blocks {old.blocks} -> {new.blocks}: cannot remove blocks")
    if len(new.enc_channels) != len(old.enc_channels) or any(
            n < o for n, o in zip(new.enc_channels, old.enc_channels)):
        raise ValueError(f"grow: enc_channels {list(old.enc_channels)} -> {list(new.enc_channels)}: each width "
                         "can only grow")


def widened_encoder_tensor(old, fresh):
    """An encoder tensor (conv weight [out, in, k, k], lateral, BatchNorm vector) whose channels
    grew: the old block kept, new outputs as freshly initialised, new inputs into old outputs zero."""
    w = fresh.clone()
    w[tuple(slice(0, n) for n in old.shape)] = old
    if old.dim() > 1:
        w[:old.shape[0], old.shape[1]:] = 0
    return w


@torch.no_grad()
def grow_state_dict(old_sd, old_cfg, new_cfg, seed=0):
    """old_sd: state dict of EdgeTap(old_cfg) -> state dict of EdgeTap(new_cfg) computing the
    same function. New blocks get a fresh random init (seeded) except their zeroed outputs."""
    check_growable(old_cfg, new_cfg)
    with torch.random.fork_rng(devices=[]):      # seeded init without touching the caller's RNG
        torch.manual_seed(seed)
        sd = EdgeTap(new_cfg).state_dict()
    for k, v in old_sd.items():
        if k == "tracker.corr1.weight" and new_cfg.n_corr != old_cfg.n_corr:
            w = v.new_zeros(sd[k].shape)       # in the checkpoint's precision (compact ones are FP16)
            w[:, corr_column_map(old_cfg, new_cfg)] = v
            sd[k] = w
        elif k == "tracker.rel_bias" and new_cfg.window != old_cfg.window:
            sd[k] = rel_bias_for_window(v, old_cfg.window, new_cfg.window)
        elif k.startswith("encoder.") and sd[k].shape != v.shape and new_cfg.enc_channels != old_cfg.enc_channels:
            sd[k] = widened_encoder_tensor(v, sd[k])
        else:
            if sd[k].shape != v.shape:
                raise ValueError(f"grow: {k}: shape {tuple(v.shape)} -> {tuple(sd[k].shape)} is not a supported change")
            sd[k] = v.clone()
    for b in range(old_cfg.blocks, new_cfg.blocks):
        for name in ("proj", "fc2"):
            sd[f"tracker.blocks.{b}.{name}.weight"].zero_()
            sd[f"tracker.blocks.{b}.{name}.bias"].zero_()
    for i in range(len(old_cfg.cross_after), len(new_cfg.cross_after)):
        sd[f"tracker.cross.{i}.proj.weight"].zero_()
        sd[f"tracker.cross.{i}.proj.bias"].zero_()
    return sd


def new_parameter_names(old_cfg, new_cfg):
    """Names of the parameters a growth adds (new blocks, new cross-track layers, the stride-2
    branch); the others, corr1 and widened encoder convs included, carry trained weights."""
    old = {n for n, _ in EdgeTap(old_cfg).named_parameters()}
    return {n for n, _ in EdgeTap(new_cfg).named_parameters()} - old
