"""Diagnostic: where the network fails on the fixed generated evaluation set (reserved photos,
evalsets.GEN_EVAL): per clip, and over all visible frames after the query, the share of points
within 2 and 16 px by ground-truth speed, by local texture at the track's position, after an
occlusion, and by track age (frames since the query; training clips have 32 frames, these 48)
(CPU, FP32).

  cd training && python3 diag_generated.py [--ckpt checkpoints/edgetap-small.pt] [--ema]

Texture: mean absolute grey-level gradient (levels per pixel) of the frame smoothed by a 5x5 box
(so that the clips' pixel noise does not count as texture), over the 9x9 pixels around the true
position in that frame; reported by quartile of all scored points.
"""
import argparse
import sys

import numpy as np
import torch

sys.path.insert(0, ".")
from edgetap import evalsets, photobanks  # noqa: E402
from edgetap.weights import load_checkpoint_model  # noqa: E402


def local_texture(video, xy):
    """video [T, 3, S, S] uint8, xy [N, T, 2] -> mean |gradient| in the 9x9 box at each point [N, T]."""
    g = torch.nn.functional.avg_pool2d(video.float().mean(1)[:, None], 5, stride=1, padding=2,
                                       count_include_pad=False)[:, 0]          # [T, S, S]
    grad = torch.zeros_like(g)
    grad[:, :-1, :-1] = (g[:, :-1, 1:] - g[:, :-1, :-1]).abs() + (g[:, 1:, :-1] - g[:, :-1, :-1]).abs()
    box = torch.nn.functional.avg_pool2d(grad[:, None], 9, stride=1, padding=4)[:, 0]
    S = g.shape[-1]
    ix = torch.from_numpy(xy[..., 0]).round().long().clamp(0, S - 1)
    iy = torch.from_numpy(xy[..., 1]).round().long().clamp(0, S - 1)
    return box[torch.arange(g.shape[0])[None], iy, ix].numpy()


def after_occlusion(vis, tq):
    """[N, T] bool: visible frames that follow an occluded frame since the query."""
    out = np.zeros_like(vis)
    for n in range(vis.shape[0]):
        hidden = False
        for t in range(tq[n] + 1, vis.shape[1]):
            hidden |= not vis[n, t]
            out[n, t] = vis[n, t] and hidden
    return out


def scored_and_speed(gt, vis, tq):
    """gt [N, T, 2], vis [N, T], tq [N] -> the scored point-frames (visible, after the query) and
    the ground-truth speed in px per frame (0 at frame 0), each [N, T]."""
    scored = vis & (np.arange(vis.shape[1])[None] > tq[:, None])
    speed = np.zeros(gt.shape[:2])
    speed[:, 1:] = np.linalg.norm(np.diff(gt, axis=1), axis=-1)
    return scored, speed


def shares(err, mask):
    n = int(mask.sum())
    return f"n {n:6d}  <2 px {(err[mask] < 2).mean():.3f}  <16 px {(err[mask] < 16).mean():.3f}" if n else f"n {n:6d}"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ckpt", default="checkpoints/edgetap-small.pt")
    ap.add_argument("--ema", action="store_true", help="the checkpoint's averaged weights (train.py --ema)")
    args = ap.parse_args()
    torch.set_num_threads(2)
    m, _ = load_checkpoint_model(args.ckpt, ema=args.ema)
    seqs = evalsets.generated_sequences(photobanks.load_reserved_banks(".data", "cpu"), evalsets.GEN_EVAL, "cpu")
    errs, speeds, texs, reapp, ages = [], [], [], [], []
    print("clip   median speed px/frame   median texture   <2 px   <16 px")
    for s in seqs:
        with torch.no_grad():
            xy, _, _ = evalsets.run_tracker(m, s, "cpu")
        gt, vis, tq = s["gt_xy"], s["gt_vis"], s["tq"]
        T = vis.shape[1]
        scored, speed = scored_and_speed(gt, vis, tq)
        err = np.linalg.norm(xy - gt, axis=-1)
        tex = local_texture(s["video"], gt)
        print(f"{s['name']}   {np.median(speed[scored]):20.1f}   {np.median(tex[scored]):14.2f}   "
              f"{(err[scored] < 2).mean():.3f}   {(err[scored] < 16).mean():.3f}")
        errs.append(err[scored]), speeds.append(speed[scored]), texs.append(tex[scored])
        reapp.append(after_occlusion(vis, tq)[scored])
        ages.append((np.arange(T)[None] - tq[:, None])[scored])
    err, speed, tex, reapp, age = (np.concatenate(a) for a in (errs, speeds, texs, reapp, ages))
    print("\nby speed (px/frame at 256)")
    for lo, hi in ((0, 2), (2, 5), (5, 10), (10, 20), (20, np.inf)):
        print(f"  {lo:>4}-{hi:<4} {shares(err, (speed >= lo) & (speed < hi))}")
    print("by texture around the point (quartiles; grey levels per px)")
    q = np.quantile(tex, [0, 0.25, 0.5, 0.75, 1.0])
    for i in range(4):
        print(f"  {q[i]:5.2f}-{q[i + 1]:<6.2f} {shares(err, (tex >= q[i]) & ((tex < q[i + 1]) | (i == 3)))}")
    print(f"after an occlusion  {shares(err, reapp)}")
    print(f"never occluded      {shares(err, ~reapp)}")
    print("by track age (frames since the query)")
    for lo, hi in ((1, 4), (5, 8), (9, 16), (17, 24), (25, 31), (32, 39), (40, 47)):
        print(f"  {lo:>4}-{hi:<4} {shares(err, (age >= lo) & (age <= hi))}")


if __name__ == "__main__":
    main()
