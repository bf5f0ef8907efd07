"""Diagnostic: where each BADJA track is lost. For every point of a sequence, its error on each
annotated frame after its query as a multiple of that frame's PCK@0.2 threshold (0.2 sqrt(mask
area), original pixels); `*` marks a miss (>= 1). Then the share of hits by track age (frames
since the query; training clips have 32 frames), per sequence and pooled. Streams the network
over the sequence at the given input size (CPU, FP32).

  cd training && python3 diag_badja.py [--size 768x448] [--ckpt CK [--ema]] [--eval-root ../../shared/data/eval] [dog ...]
"""
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from edgetap import diag_cli, evalsets, synth  # noqa: E402

AGE_EDGES = (16, 32, 48)   # track-age ranges 1-15, 16-31, 32-47, 48+


def pck_ratios(seq, xy):
    """(point, frame, error / PCK@0.2 threshold) for every annotated visible frame after the query."""
    gt, known, vis, tq, area = seq["gt_xy"], seq["known"], seq["gt_vis"], seq["tq"], seq["mask_area"]
    for i in range(len(tq)):
        for t in range(tq[i] + 1, gt.shape[1]):
            if known[i, t] and vis[i, t] and area[t]:
                yield i, t, np.linalg.norm(xy[i, t] - gt[i, t]) / (0.2 * np.sqrt(area[t]))


def error_rows(seq, xy):
    """One line per point: query frame, query position and error / threshold per annotated frame."""
    cells = {i: [] for i in range(len(seq["tq"]))}
    for i, t, ratio in pck_ratios(seq, xy):
        cells[i].append(f"{t}:{ratio:.1f}{'*' if ratio >= 1 else ''}")
    return [f"  p{i:02d} query frame {seq['tq'][i]:3d} at ({seq['q'][i][0]:4.0f}, {seq['q'][i][1]:4.0f})  "
            + " ".join(c) for i, c in cells.items()]


def age_label(k, edges=AGE_EDGES):
    lo = 1 if k == 0 else edges[k - 1]
    return f"{lo}+" if k == len(edges) else f"{lo}-{edges[k] - 1}"


def hits_by_age(seq, xy, edges=AGE_EDGES):
    """[hits, annotated frames] per track-age range (frames since the query), ranges split at edges."""
    counts = np.zeros((len(edges) + 1, 2), dtype=int)
    for i, t, ratio in pck_ratios(seq, xy):
        k = int(np.searchsorted(edges, t - seq["tq"][i], side="right"))
        counts[k] += (ratio < 1, 1)
    return counts


def age_line(name, counts):
    return f"{name:8s} hits by track age: " + "  ".join(
        f"{age_label(k)}: {h / n:.3f} ({n})" if n else f"{age_label(k)}: - (0)" for k, (h, n) in enumerate(counts))


def main():
    args = diag_cli.badja_parser().parse_args()
    pooled = np.zeros((len(AGE_EDGES) + 1, 2), dtype=int)
    ages = []
    for name, seq, xy in diag_cli.badja_runs(diag_cli.model_of(args, "diag_badja"), args, "diag_badja"):
        m = evalsets.score_sequence(seq, xy, np.ones_like(seq["gt_vis"]))
        print(f"{name} at {synth.clip_size(args.size)}: PCK@0.2 {m['PCK@0.2']:.3f}")
        print("\n".join(error_rows(seq, xy)))
        counts = hits_by_age(seq, xy)
        pooled += counts
        ages.append(age_line(name, counts))
    print("\n".join(ages + [age_line("pooled", pooled)]))


if __name__ == "__main__":
    main()
