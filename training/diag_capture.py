"""Diagnostic: is a lost track captured by the scene behind it? For every scored point-frame where
a point on a moving body and the scene behind its query position have moved apart, whether the
estimate's motion since the query is nearer the scene's than the point's own.

- BADJA (real video, `--size`, default the frames' shape 768x448): the scene's motion is the median
  motion of a 16 x 16 grid of tracks started at the point's query frame, leaving out the grid
  points within 150 original px of the query (the body); the network's own estimate, so trusted
  only on the textured ground these sequences have. Lost: an error of at least the PCK@0.2
  threshold. Apart: truth and scene more than 40 original px apart.
- Generated clips (`--val`, the 32 validation clips with the generator options given, e.g.
  --pale-prob 1): the scene's motion is the true path of the background point under the query
  (synth.make_clips bg_tracks); only tracks on cut-outs. Lost: more than 8 px off (at 256 px).
  Apart: more than 8 px.

  cd training && python3 diag_capture.py [--ckpt CK [--ema]] [--badja] [--val [--pale-prob 1 ...]]
(CPU, FP32; BADJA about 1 min, the validation clips about 3 min)
"""
import argparse
import os
import sys

import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from edgetap import evalsets, photobanks, synth, synth_options  # noqa: E402
from edgetap.weights import load_model  # noqa: E402

BADJA_GRID = 16
BADJA_BODY_RADIUS = 150.0   # original px: grid points this near the query are taken as the body


def capture_rows(pred, truth, scene, lost, apart):
    """Per scored point-frame: |pred - truth| and |pred - scene| of the motions since the query,
    for the frames where `apart`; returns (lost mask, distance to truth, distance to scene)."""
    return lost[apart], np.linalg.norm(pred - truth, axis=-1)[apart], np.linalg.norm(pred - scene, axis=-1)[apart]


def report(name, lost, d_truth, d_scene):
    for tag, m in (("lost", lost), ("held", ~lost)):
        if not m.any():
            print(f"{name} {tag}: none")
            continue
        print(f"{name} {tag}: {int(m.sum())} point-frames apart from the scene; estimate's motion nearer "
              f"the scene's in {(d_scene[m] < d_truth[m]).mean():.2f}; median px off the point's motion "
              f"{np.median(d_truth[m]):.0f}, off the scene's {np.median(d_scene[m]):.0f}")


def badja(model, eval_root, size):
    W_in, H_in = synth.clip_size(size)
    for name in ("camel", "cows", "dog"):
        seq = evalsets.load_sequence(os.path.join(eval_root, "badja", name), size=size)
        N = len(seq["q"])
        starts = sorted(set(int(t) for t in seq["tq"]))
        grid = {}
        for t0 in starts:      # one grid per query frame, so its motion is counted from there
            g = dict(seq, q=np.zeros((0, 2)), tq=np.zeros(0, np.int64))
            g_pts = evalsets.support_grid(BADJA_GRID, W_in, H_in)
            g["q"] = np.stack([(g_pts[:, 0] + 0.5) * seq["W"] / W_in - 0.5,
                               (g_pts[:, 1] + 0.5) * seq["H"] / H_in - 0.5], -1)   # original px
            g["tq"] = np.full(len(g_pts), t0)
            with torch.no_grad():
                grid[t0] = evalsets.run_tracker(model, g, "cpu")[0]
        with torch.no_grad():
            xy = evalsets.run_tracker(model, seq, "cpu")[0]
        rows = ([], [], [])
        for i in range(N):
            t0 = int(seq["tq"][i])
            gxy = grid[t0]
            far = np.linalg.norm(gxy[:, t0] - seq["gt_xy"][i, t0], axis=-1) > BADJA_BODY_RADIUS
            ts = [t for t in range(t0 + 1, xy.shape[1]) if seq["known"][i, t] and seq["mask_area"][t]]
            if not ts:
                continue
            pred = xy[i, ts] - xy[i, t0]
            truth = seq["gt_xy"][i, ts] - seq["gt_xy"][i, t0]
            scene = np.median(gxy[far][:, ts] - gxy[far][:, t0:t0 + 1], axis=0)
            thr = 0.2 * np.sqrt(np.asarray(seq["mask_area"], float)[ts])
            lost = np.linalg.norm(xy[i, ts] - seq["gt_xy"][i, ts], axis=-1) >= thr
            apart = np.linalg.norm(truth - scene, axis=-1) > 40.0
            for acc, v in zip(rows, capture_rows(pred, truth, scene, lost, apart)):
                acc.append(v)
        report(f"badja/{name} at {W_in}x{H_in}", *(np.concatenate(a) for a in rows))


def generated(model, data, opt):
    seqs = evalsets.generated_sequences(photobanks.load_train_banks(data, "cpu", "val"), evalsets.VAL, "cpu", opt)
    rows = ([], [], [])
    for seq in seqs:
        with torch.no_grad():
            xy = evalsets.run_tracker(model, seq, "cpu")[0]
        for i in np.nonzero(seq["layer"] > 0)[0]:
            t0 = int(seq["tq"][i])
            ts = [t for t in range(t0 + 1, xy.shape[1]) if seq["gt_vis"][i, t]]
            if not ts:
                continue
            pred = xy[i, ts] - xy[i, t0]
            truth = seq["gt_xy"][i, ts] - seq["gt_xy"][i, t0]
            scene = seq["bg_xy"][i, ts] - seq["bg_xy"][i, t0]
            lost = np.linalg.norm(xy[i, ts] - seq["gt_xy"][i, ts], axis=-1) > 8.0
            apart = np.linalg.norm(truth - scene, axis=-1) > 8.0
            for acc, v in zip(rows, capture_rows(pred, truth, scene, lost, apart)):
                acc.append(v)
    report("val (cut-out tracks)", *(np.concatenate(a) for a in rows))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--weights", default=os.path.join(HERE, "..", "models", "edgetap-small.safetensors"))
    ap.add_argument("--ckpt", default=None, help="a training checkpoint instead of --weights")
    ap.add_argument("--ema", action="store_true", help="with --ckpt: its averaged weights")
    ap.add_argument("--badja", action="store_true", help="the BADJA sequences")
    ap.add_argument("--val", action="store_true", help="the 32 validation clips (with the generator options given)")
    ap.add_argument("--size", type=synth.parse_clip_size, default=(768, 448), help="BADJA's model input: a side or WxH")
    ap.add_argument("--data", default=os.path.join(HERE, ".data"))
    ap.add_argument("--eval-root", default=os.path.join(HERE, "..", "..", "shared", "data", "eval"))
    synth_options.add_option_args(ap)
    args = ap.parse_args()
    torch.set_num_threads(2)
    model = load_model(args.weights, args.ckpt, args.ema)
    if args.badja:
        badja(model, args.eval_root, args.size)
    if args.val:
        generated(model, args.data, synth_options.options_from_args(args))


if __name__ == "__main__":
    main()
