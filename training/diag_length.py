"""Diagnostic: how much of the generated set's loss is its clips' length (48 frames; training
clips have 32) and how much its photos (reserved, flatter than the training ones). Scores the
fixed generated set (evalsets.GEN_EVAL) and clips of the validation photos rendered at the
same length (evalsets.VAL's seed, 16 clips x 48 frames) on their first 16, 24, 32 and 48
frames (the tracker is causal, so a prefix scores as the shorter clip would; queries after the
prefix drop out), and reports the ground-truth speed of visible points and the visible share
by frame range (CPU, FP32, `vis` rule).

  cd training && python3 diag_length.py [--ckpt CK [--ema]] [--out results/diag_length.json]
"""
import argparse
import json
import os
import sys

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from edgetap import evalsets, photobanks  # noqa: E402
from edgetap.weights import load_model_or_exit  # noqa: E402

PREFIXES = (16, 24, 32, 48)
RANGES = ((1, 16), (16, 32), (32, 48))


def prefix_score(seq, xy, vis, T):
    keep = seq["tq"] < T
    cut = dict(seq, gt_xy=seq["gt_xy"][keep, :T], gt_vis=seq["gt_vis"][keep, :T],
               known=seq["known"][keep, :T], tq=seq["tq"][keep])
    return evalsets.score_sequence(cut, xy[keep, :T], vis[keep, :T] > 0.5)


def motion_by_range(seqs):
    """Speed (px per frame at 256) of points visible in both frames, and the visible share, per frame range."""
    out = {}
    for a, b in RANGES:
        speeds, shares = [], []
        for s in seqs:
            v = np.linalg.norm(np.diff(s["gt_xy"], axis=1), axis=-1)[:, a - 1:b - 1]
            both = s["gt_vis"][:, a - 1:b - 1] & s["gt_vis"][:, a:b]
            speeds.append(v[both])
            shares.append(s["gt_vis"][:, a:b].mean())
        sp = np.concatenate(speeds)
        out[f"frames {a}-{b - 1}"] = dict(speed_median=round(float(np.median(sp)), 2),
                                          speed_p90=round(float(np.percentile(sp, 90)), 2),
                                          speed_p99=round(float(np.percentile(sp, 99)), 2),
                                          visible_share=round(float(np.mean(shares)), 3))
    return out


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    root = os.path.dirname(here)
    ap = argparse.ArgumentParser()
    ap.add_argument("--ckpt", default=None, help="a training checkpoint instead of the exported weights")
    ap.add_argument("--ema", action="store_true", help="with --ckpt: its averaged weights (train.py --ema)")
    ap.add_argument("--data", default=os.path.join(here, ".data"))
    ap.add_argument("--out", default=None)
    args = ap.parse_args()
    torch.set_num_threads(os.cpu_count() or 1)
    dev = torch.device("cpu")
    model = load_model_or_exit("diag_length", os.path.join(root, "models", "edgetap-small.safetensors"),
                               args.ckpt, args.ema)
    sets = {"gen (reserved photos)": (photobanks.load_reserved_banks(args.data, dev), evalsets.GEN_EVAL),
            "val photos, 48 frames": (photobanks.load_train_banks(args.data, dev, "val"),
                                      dict(evalsets.VAL, clips=16, frames=48))}
    result = {}
    for name, (banks, spec) in sets.items():
        seqs = evalsets.generated_sequences(banks, spec, dev)
        per = evalsets.evaluate(model, seqs, dev, keep_preds=True)
        scores = {}
        for T in PREFIXES:
            ms = [prefix_score(s, m["pred"][0], m["pred"][1], T) for s, m in zip(seqs, per)]
            scores[f"first {T}"] = {k: round(float(np.nanmean([x[k] for x in ms])), 3) for k in ("AJ", "delta_avg", "OA")}
            print(name, T, scores[f"first {T}"], flush=True)
        result[name] = dict(scores=scores, motion=motion_by_range(seqs))
        print(name, result[name]["motion"], flush=True)
    if args.out:
        with open(args.out, "w") as f:
            json.dump(result, f, indent=1)


if __name__ == "__main__":
    main()
