"""Diagnostic: streaming vs. entering each frame at the true previous position, and the median
error of visible points by track age, on the first validation clips (CPU, FP32).

  cd training && python3 diag_drift.py [--clips 4] [--ckpt checkpoints/edgetap-small.pt]
"""
import argparse
import sys

import numpy as np
import torch

sys.path.insert(0, ".")
from edgetap import evalsets, photobanks  # noqa: E402
from edgetap.engine import track_clip  # noqa: E402
from edgetap.weights import load_checkpoint_model  # noqa: E402


def delta_avg(p, tr, vis, after):
    d = (p - tr).norm(dim=-1)
    return np.mean([((d < th) & vis & after).sum().item() / (vis & after).sum().item() for th in (1, 2, 4, 8, 16)])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ckpt", default="checkpoints/edgetap-small.pt")
    ap.add_argument("--clips", type=int, default=4)
    args = ap.parse_args()
    torch.set_num_threads(2)
    m, _ = load_checkpoint_model(args.ckpt)
    seqs = evalsets.generated_sequences(photobanks.load_train_banks(".data", "cpu", "val"),
                                        dict(evalsets.VAL, clips=args.clips), "cpu")
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
        prof = [err[(age == k) & vis].median().item() for k in (1, 2, 4, 8, 16, 24) if ((age == k) & vis).any()]
        print(seq["name"], "streaming davg %.3f, entered at true previous position %.3f" % (
            delta_avg(xy, tr, vis, after), delta_avg(ps[-1], tr, vis, after)),
            "median error at age 1,2,4,8,16,24:", np.round(prof, 2))


if __name__ == "__main__":
    main()
