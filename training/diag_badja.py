"""Diagnostic: where each BADJA track is lost. For every point of a sequence, its error on each
annotated frame after its query as a multiple of that frame's PCK@0.2 threshold (0.2 sqrt(mask
area), original pixels); `*` marks a miss (>= 1). Streams the network over the sequence at the
given input size (CPU, FP32).

  cd training && python3 diag_badja.py [--size 768x448] [--ckpt CK [--ema]] [--eval-root ../../shared/data/eval] [dog ...]
"""
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from edgetap import diag_cli, evalsets, synth  # noqa: E402


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
    args = diag_cli.badja_parser().parse_args()
    for name, seq, xy in diag_cli.badja_runs(diag_cli.model_of(args), args, "diag_badja"):
        m = evalsets.score_sequence(seq, xy, np.ones_like(seq["gt_vis"]))
        print(f"{name} at {synth.clip_size(args.size)}: PCK@0.2 {m['PCK@0.2']:.3f}")
        print("\n".join(error_rows(seq, xy)))


if __name__ == "__main__":
    main()
