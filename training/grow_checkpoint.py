#!/usr/bin/env python3
"""Grows a training checkpoint into a larger architecture that computes the same function
(edgetap/grow.py says how), for a new round that keeps the earlier rounds' training.

  python3 training/grow_checkpoint.py --from training/checkpoints/edgetap-small.pt \
      --to training/checkpoints/edgetap-small.pt.new [--query-patch 3] [--blocks 4] [--cross-after 1,2] [--window 16] [--fine-level]
      [--enc-channels 32,64,128,160,160] [--recent-descriptors] [--cross-scale]

The new checkpoint keeps step, trained seconds, clip count and log; it has no optimizer state
(shapes changed), so resume it with a fresh schedule: train.py --ckpt NEW --new-schedule S.
"""
import argparse
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from edgetap.grow import grow_state_dict  # noqa: E402
from edgetap.model import FINE_PYRAMID_STRIDES, EdgeTapConfig  # noqa: E402
from edgetap.weights import load_checkpoint  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--from", dest="src", required=True)
    ap.add_argument("--to", dest="dst", required=True)
    ap.add_argument("--query-patch", type=int, default=None)
    ap.add_argument("--blocks", type=int, default=None)
    ap.add_argument("--cross-after", default=None,
                    help="comma-separated temporal blocks to follow with a cross-track attention layer")
    ap.add_argument("--window", type=int, default=None,
                    help="a longer causal window (frames); keeps the function on each track's first W frames")
    ap.add_argument("--fine-level", action="store_true",
                    help="add a stride-2 pyramid level (strides 2, 4, 8, 16, 32)")
    ap.add_argument("--enc-channels", default=None,
                    help="wider encoder: five comma-separated widths at strides 2..32, each at least the old one")
    ap.add_argument("--recent-descriptors", action="store_true",
                    help="correlate a second descriptor set per track, sampled at its previous output")
    ap.add_argument("--cross-scale", action="store_true",
                    help="also correlate each level's query descriptors with the neighbouring levels' windows")
    args = ap.parse_args()
    if os.path.abspath(args.src) == os.path.abspath(args.dst):
        sys.exit("grow_checkpoint.py: --to must differ from --from (the source stays as it is)")
    ck = load_checkpoint(args.src)
    old = EdgeTapConfig.from_dict(ck["config"])
    d = old.to_dict()
    if args.query_patch is not None:
        d["query_patch"] = args.query_patch
    if args.blocks is not None:
        d["blocks"] = args.blocks
    if args.window is not None:
        d["window"] = args.window
    if args.fine_level:
        d["strides"] = list(FINE_PYRAMID_STRIDES)
    if args.enc_channels is not None:
        d["enc_channels"] = [int(c) for c in args.enc_channels.split(",")]
    if args.recent_descriptors:
        d["recent_descriptors"] = True
    if args.cross_scale:
        d["cross_scale"] = True
    if args.cross_after is not None:
        d["cross_after"] = [int(b) for b in args.cross_after.split(",") if b.strip()]
    new = EdgeTapConfig.from_dict(d)
    try:
        sd = grow_state_dict(ck["model"], old, new)
    except ValueError as e:
        sys.exit(f"grow_checkpoint.py: {args.src}: {e}")
    # the optimizer state and a weight average have the old shapes: a grown network starts both anew
    out = {k: v for k, v in ck.items() if k not in ("model", "opt", "config", "ema", "ema_decay")}
    out.update(model=sd, config=new.to_dict(), grown_from=dict(config=old.to_dict(), step=ck.get("step", 0)))
    torch.save(out, args.dst)
    print(f"{args.dst}: query_patch {old.query_patch} -> {new.query_patch}, blocks {old.blocks} -> {new.blocks}, "
          f"cross_after {list(old.cross_after)} -> {list(new.cross_after)}, window {old.window} -> {new.window}, "
          f"strides {list(old.strides)} -> {list(new.strides)}, "
          f"enc_channels {list(old.enc_channels)} -> {list(new.enc_channels)}, "
          f"recent_descriptors {old.recent_descriptors} -> {new.recent_descriptors}, "
          f"cross_scale {old.cross_scale} -> {new.cross_scale}, "
          f"step {out.get('step', 0)}")


if __name__ == "__main__":
    main()
