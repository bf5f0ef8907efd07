"""Diagnostic: where each BADJA track is lost. For every point of a sequence, its error on each
annotated frame after its query as a multiple of that frame's PCK@0.2 threshold (0.2 sqrt(mask
area), original pixels); `*` marks a miss (>= 1). Streams the network over the sequence at the
given input size (CPU, FP32).

  cd training && python3 diag_badja.py [--size 768x448] [--ckpt CK [--ema]] [--eval-root ../../shared/data/eval] [dog ...]
"""
import argparse
import os
import sys

import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from edgetap import evalsets, synth  # noqa: E402
from edgetap.weights import load_model  # noqa: E402


def error_rows(seq, xy):
    """One line per point: query frame, query position and error / threshold per annotated frame."""
    gt, known, vis, tq, area = seq["gt_xy"], seq["known"], seq["gt_vis"], seq["tq"], seq["mask_area"]
    rows = []
    for i in range(len(tq)):
        cells = []
        for t in range(tq[i] + 1, gt.shape[1]):
            if known[i, t] and vis[i, t] and area[t]:
                ratio = np.linalg.norm(xy[i, t] - gt[i, t]) / (0.2 * np.sqrt(area[t]))
                cells.append(f"{t}:{ratio:.1f}{'*' if ratio >= 1 else ''}")
        rows.append(f"  p{i:02d} query frame {tq[i]:3d} at ({seq['q'][i][0]:4.0f}, {seq['q'][i][1]:4.0f})  " + " ".join(cells))
    return rows


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("sequences", nargs="*", default=["camel", "cows", "dog"])
    ap.add_argument("--size", type=synth.parse_clip_size, default=(768, 448), help="model input: a side or WxH")
    ap.add_argument("--weights", default=os.path.join(HERE, "..", "models", "edgetap-small.safetensors"))
    ap.add_argument("--ckpt", default=None, help="a training checkpoint instead of --weights")
    ap.add_argument("--ema", action="store_true", help="with --ckpt: its averaged weights")
    ap.add_argument("--eval-root", default=os.path.join(HERE, "..", "..", "shared", "data", "eval"))
    args = ap.parse_args()
    torch.set_num_threads(2)
    model = load_model(args.weights, args.ckpt, args.ema)
    for name in args.sequences:
        folder = os.path.join(args.eval_root, "badja", name)
        if not os.path.isfile(os.path.join(folder, "gt.json")):
            raise SystemExit(f"diag_badja: {folder}: no gt.json (is --eval-root the shared eval folder?)")
        seq = evalsets.load_sequence(folder, size=args.size)
        with torch.no_grad():
            xy, _, _ = evalsets.run_tracker(model, seq, "cpu")
        m = evalsets.score_sequence(seq, xy, np.ones_like(seq["gt_vis"]))
        print(f"{name} at {synth.clip_size(args.size)}: PCK@0.2 {m['PCK@0.2']:.3f}")
        print("\n".join(error_rows(seq, xy)))


if __name__ == "__main__":
    main()
