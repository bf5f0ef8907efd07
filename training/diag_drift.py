"""Diagnostic: streaming vs. entering each frame at the true previous position, and the median
error of visible points by track age, on the first validation clips (CPU, FP32). --frames and
--time-scale render longer and slower clips of the same photos (the generator's time per frame:
0.4 moves points about 1 px per frame at 256, as BADJA's camel does), to see whether a track
drifts with age when its point moves slowly.

  cd training && python3 diag_drift.py [--clips 4] [--ckpt checkpoints/edgetap-small.pt]
                                       [--frames 96 --time-scale 0.4]
"""
import argparse
import sys

import numpy as np
import torch

sys.path.insert(0, ".")
from edgetap import evalsets, photobanks  # noqa: E402
from edgetap.synth_options import SynthOptions  # noqa: E402
from edgetap.engine import track_clip  # noqa: E402
from edgetap.weights import load_checkpoint_model  # noqa: E402


def delta_avg(p, tr, vis, after):
    d = (p - tr).norm(dim=-1)
    return np.mean([((d < th) & vis & after).sum().item() / (vis & after).sum().item() for th in (1, 2, 4, 8, 16)])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ckpt", default="checkpoints/edgetap-small.pt")
    ap.add_argument("--clips", type=int, default=4)
    ap.add_argument("--frames", type=int, default=evalsets.VAL["frames"])
    ap.add_argument("--time-scale", type=float, default=1.0, help="the generator's time per frame")
    args = ap.parse_args()
    ages = [k for k in (1, 2, 4, 8, 16, 24, 32, 48, 64, 80) if k < args.frames]
    torch.set_num_threads(2)
    m, _ = load_checkpoint_model(args.ckpt)
    seqs = evalsets.generated_sequences(photobanks.load_train_banks(".data", "cpu", "val"),
                                        dict(evalsets.VAL, clips=args.clips, frames=args.frames), "cpu",
                                        SynthOptions(time_scale=args.time_scale))
    pooled = {k: [] for k in ages}
    for seq in seqs:
        video = seq["video"][None].float()
        tq = torch.from_numpy(seq["tq"])[None]
        tr = torch.from_numpy(seq["gt_xy"]).float()[None]
        vis = torch.from_numpy(seq["gt_vis"])[None]
        T = tr.shape[2]
        pq = torch.gather(tr, 2, tq[:, :, None, None].expand(-1, -1, 1, 2))[:, :, 0]
        xy, _, _ = track_clip(m, video, tq, pq)
        prev = torch.cat([tr[:, :, :1], tr[:, :, :-1]], 2)
        first = torch.arange(T)[None, None, :, None] <= tq[:, :, None, None] + 1
        with torch.no_grad():
            ps, _, _ = m.forward_parallel(video, tq, pq, torch.where(first, pq[:, :, None].expand_as(tr), prev))
        after = torch.arange(T)[None, None] > tq[:, :, None]
        age = torch.arange(T)[None, None] - tq[:, :, None]
        err = (xy - tr).norm(dim=-1)
        prof = [err[(age == k) & vis].median().item() if ((age == k) & vis).any() else float("nan") for k in ages]
        for k in ages:
            pooled[k].append(err[(age == k) & vis].numpy())
        step = (tr[:, :, 1:] - tr[:, :, :-1]).norm(dim=-1)[vis[:, :, 1:] & vis[:, :, :-1]].median().item()
        print(seq["name"], "median speed %.2f px/frame, streaming davg %.3f, entered at true previous position %.3f" % (
            step, delta_avg(xy, tr, vis, after), delta_avg(ps[-1], tr, vis, after)),
            "median error at age %s:" % ",".join(map(str, ages)), np.round(prof, 2))
    for k in ages:
        e = np.concatenate(pooled[k])
        if e.size:
            print("all clips, age %d: median error %.2f px, within 4 / 8 / 16 px %.2f / %.2f / %.2f (%d points)" % (
                k, np.median(e), (e < 4).mean(), (e < 8).mean(), (e < 16).mean(), e.size))


if __name__ == "__main__":
    main()
