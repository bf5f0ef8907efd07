#!/usr/bin/env python3
"""Real clips for self-training: decodes them and labels windows of their frames with a teacher.

  python3 training/prepare_real.py --decode [--shared ../shared] [--out training/.data/real]
  python3 training/prepare_real.py --label --ckpt CK [--ema] [--window 48] [--every 48] [--grid 16]
      [--teacher-side 320] [--out training/.data/real] [--device cuda]

--decode writes OUT/<clip>/frames/*.jpg (longer side 256 px) for the trainable clips under
<shared>/data/videos (opencv-doc's and Pixabay's; DAVIS and the demo clips that may not be
shipped are reserved and refused: edgetap/realvideo.py). --label tracks each window of --window
frames, starting every --every frames, forward from a --grid x --grid query grid and back, and
writes OUT/<clip>/labels.npz: starts [K], tracks [K, N, window, 2] (frame pixels), known [K, N,
window] (both directions see the point and agree within 2 px at 256 scale), and the teacher.
Prints per clip the share of point-frames labelled and of labelled tracks that move.
"""
import argparse
import glob
import json
import os
import sys
import time

import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from edgetap import realvideo  # noqa: E402
from edgetap.weights import load_checkpoint_model  # noqa: E402

TRAINABLE_CLIPS = ["opencv/box.mp4", "opencv/cup.mp4", "opencv/tree.avi", "opencv/vtest.avi", "pixabay/bees.mp4"]
MOVING_PX_256 = 4.0   # a labelled track that moves further than this (256-scaled px) counts as moving


def clip_name(rel):
    return os.path.splitext(rel.replace("/", "-"))[0]


def decode(args):
    for rel in TRAINABLE_CLIPS:
        src = os.path.join(args.shared, "data", "videos", rel)
        n = realvideo.decode_video(src, os.path.join(args.out, clip_name(rel), "frames"), args.max_side)
        print(f"{rel}: {n} frames", flush=True)


def label(args):
    dev = torch.device(args.device)
    teacher, _ = load_checkpoint_model(args.ckpt, fold=True, ema=args.ema)
    teacher = teacher.to(dev).eval()
    for clip_dir in sorted(glob.glob(os.path.join(args.out, "*", "frames"))):
        t0 = time.time()
        n = len(glob.glob(os.path.join(clip_dir, "*.jpg")))
        starts = list(range(0, n - args.window + 1, args.every))
        tracks, known = [], []
        H, W = realvideo.load_frames(clip_dir, 0, 1).shape[-2:]
        size = realvideo.teacher_size(W, H, args.teacher_side)
        for s in starts:
            video = realvideo.load_frames(clip_dir, s, args.window)
            tr, kn = realvideo.label_window(teacher, video, args.grid, size, dev)
            tracks.append(tr)
            known.append(kn)
        if not starts:
            print(f"{clip_dir}: {n} frames, shorter than a window of {args.window}; skipped", flush=True)
            continue
        tracks, known = np.stack(tracks), np.stack(known)
        kept = known.sum(-1) >= args.window // 2
        span = np.where(known[..., None], tracks, np.nan)
        reach = np.nan_to_num(np.nanmax(span, 2) - np.nanmin(span, 2)).max(-1) * 256.0 / max(W, H)
        out = os.path.join(os.path.dirname(clip_dir), "labels.npz")
        np.savez_compressed(out, starts=np.array(starts), tracks=tracks, known=known,
                            teacher=json.dumps(dict(ckpt=os.path.basename(args.ckpt), ema=args.ema,
                                                    model_size=list(size), grid=args.grid)))
        print(f"{clip_dir}: {len(starts)} windows, point-frames labelled {known.mean():.3f}, tracks labelled "
              f"over half the window {kept.mean():.3f}, of those moving > {MOVING_PX_256:g} px "
              f"{(reach[kept] > MOVING_PX_256).mean() if kept.any() else 0:.3f}; {time.time() - t0:.0f} s", flush=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--decode", action="store_true")
    ap.add_argument("--label", action="store_true")
    ap.add_argument("--shared", default=os.path.join(HERE, "..", "..", "shared"))
    ap.add_argument("--out", default=os.path.join(HERE, ".data", "real"))
    ap.add_argument("--max-side", type=int, default=256)
    ap.add_argument("--ckpt", default=os.path.join(HERE, "checkpoints", "edgetap-small.pt"))
    ap.add_argument("--ema", action="store_true", help="the teacher is the checkpoint's averaged weights")
    ap.add_argument("--window", type=int, default=48)
    ap.add_argument("--every", type=int, default=48)
    ap.add_argument("--grid", type=int, default=16)
    ap.add_argument("--teacher-side", type=int, default=320,
                    help="the teacher's input: the frames' shape with this longer side (multiples of 32)")
    ap.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    args = ap.parse_args()
    if not (args.decode or args.label):
        ap.error("--decode, --label or both")
    if args.decode:
        decode(args)
    if args.label:
        label(args)


if __name__ == "__main__":
    main()
