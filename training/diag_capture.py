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
from edgetap.weights import load_model_or_exit  # noqa: E402

BADJA_GRID = 16
BADJA_BODY_RADIUS = 150.0   # original px: grid points this near the query are taken as the body


def capture_rows(xy, gt, t0, ts, scene, lost_px, apart_px):
    """One track's scored frames ts after its query frame t0 (xy, gt [T, 2]; scene [len(ts), 2]: the
    scene's motion since t0), kept where the point's and the scene's motions are over apart_px
    apart: (lost: error at least lost_px, a number or one per frame; distance of the estimate's
    motion from the point's; from the scene's)."""
    pred, truth = xy[ts] - xy[t0], gt[ts] - gt[t0]
    apart = np.linalg.norm(truth - scene, axis=-1) > apart_px
    lost = np.linalg.norm(xy[ts] - gt[ts], axis=-1) >= lost_px
    return lost[apart], np.linalg.norm(pred - truth, axis=-1)[apart], np.linalg.norm(pred - scene, axis=-1)[apart]


def report(name, rows):
    lost, d_truth, d_scene = (np.concatenate(a) for a in zip(*rows))
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
        g_pts = evalsets.support_grid(BADJA_GRID, W_in, H_in)
        g_q = np.stack([(g_pts[:, 0] + 0.5) * seq["W"] / W_in - 0.5,
                        (g_pts[:, 1] + 0.5) * seq["H"] / H_in - 0.5], -1)        # original px
        with torch.no_grad():   # one grid per query frame, so that its motion counts from there
            grid = {t0: evalsets.run_tracker(model, dict(seq, q=g_q, tq=np.full(len(g_q), t0)), "cpu")[0]
                    for t0 in sorted(set(int(t) for t in seq["tq"]))}
            xy = evalsets.run_tracker(model, seq, "cpu")[0]
        area = np.asarray(seq["mask_area"], float)
        rows = []
        for i, t0 in enumerate(int(t) for t in seq["tq"]):
            ts = [t for t in range(t0 + 1, xy.shape[1]) if seq["known"][i, t] and area[t]]
            if not ts:
                continue
            gxy = grid[t0]
            far = np.linalg.norm(gxy[:, t0] - seq["gt_xy"][i, t0], axis=-1) > BADJA_BODY_RADIUS
            scene = np.median(gxy[far][:, ts] - gxy[far][:, t0:t0 + 1], axis=0)
            rows.append(capture_rows(xy[i], seq["gt_xy"][i], t0, ts, scene, 0.2 * np.sqrt(area[ts]), 40.0))
        report(f"badja/{name} at {W_in}x{H_in}", rows)


def generated(model, data, opt):
    seqs = evalsets.generated_sequences(photobanks.load_train_banks(data, "cpu", "val"), evalsets.VAL, "cpu", opt)
    rows = []
    for seq in seqs:
        with torch.no_grad():
            xy = evalsets.run_tracker(model, seq, "cpu")[0]
        for i in np.nonzero(seq["layer"] > 0)[0]:
            t0 = int(seq["tq"][i])
            ts = [t for t in range(t0 + 1, xy.shape[1]) if seq["gt_vis"][i, t]]
            if ts:
                scene = seq["bg_xy"][i, ts] - seq["bg_xy"][i, t0]
                rows.append(capture_rows(xy[i], seq["gt_xy"][i], t0, ts, scene, 8.0, 8.0))
    report("val (cut-out tracks)", rows)


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
    model = load_model_or_exit("diag_capture", args.weights, args.ckpt, args.ema)
    if args.badja:
        badja(model, args.eval_root, args.size)
    if args.val:
        generated(model, args.data, synth_options.options_from_args(args))


if __name__ == "__main__":
    main()
