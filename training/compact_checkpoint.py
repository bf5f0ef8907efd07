#!/usr/bin/env python3
"""Writes a compact copy of a training checkpoint, to commit it and carry it to the GPU host.
A 7 M-parameter network's full checkpoint (FP32 weights, bf16 AdamW moments, averaged weights)
is about 86 MB, more than the device carries (64 MiB with the tree and the data). The copy has
FP16 weights, no AdamW moments and, unless --keep-ema, no averaged weights (edgetap/weights.py
compact_checkpoint): 2 bytes per parameter.

  python3 training/compact_checkpoint.py --from training/.work/large.pt --to training/checkpoints/edgetap-large.pt \
      [--keep-ema | --average-as-weights]

--average-as-weights stores the averaged weights in the trained weights' place: the checkpoint then
reproduces an export of the average (export.py without --ema) and training resumes from it.

Resume it with train.py as any checkpoint: the rate re-warms over --warmup steps from the step
it was saved at, while AdamW rebuilds its moments; the schedule goes on where it stopped.
"""
import argparse
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from edgetap.weights import compact_checkpoint, load_checkpoint  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--from", dest="src", required=True)
    ap.add_argument("--to", dest="dst", required=True)
    ap.add_argument("--keep-ema", action="store_true", help="keep the averaged weights (FP16) as well")
    ap.add_argument("--average-as-weights", action="store_true",
                    help="store the averaged weights as the trained weights (training resumes from the average)")
    args = ap.parse_args()
    try:
        ck = load_checkpoint(args.src)
    except (OSError, RuntimeError) as e:
        sys.exit(f"compact_checkpoint.py: --from {args.src}: {e}")
    if not isinstance(ck, dict) or "model" not in ck or "config" not in ck:
        sys.exit(f"compact_checkpoint.py: --from {args.src}: not a train.py checkpoint (no model or config)")
    try:
        out = compact_checkpoint(ck, args.keep_ema, args.average_as_weights)
    except ValueError as e:
        sys.exit(f"compact_checkpoint.py: --from {args.src}: {e}")
    tmp = args.dst + ".tmp"
    torch.save(out, tmp)
    os.replace(tmp, args.dst)
    print(f"{args.dst}: step {ck.get('step')}, {os.path.getsize(args.src) / 1e6:.1f} MB -> "
          f"{os.path.getsize(args.dst) / 1e6:.1f} MB")


if __name__ == "__main__":
    main()
