"""Diagnostic for round 27's cross-scale reads: does a query descriptor find its point better in
the next coarser level's window once the point's surroundings have grown since the query, and in
the next finer level's once they have shrunk? On the held-out validation clips (evalsets.VAL:
training photos held out, not an evaluation set; CPU, FP32): for every scored point-frame (visible,
after the query) whose layer's scale change is measured (diag_appearance.layer_changes), the query's
centre descriptor of level l, sampled at the query point in its query frame, is correlated with a
(2r+1)^2 window of frame t centred on the true position, at level l and at levels l+1 and l-1. The
report gives, per read and per band of signed log2 scale change, the share of point-frames where
the window's centre (the truth) is its best cell. A network trained without these reads answers
for features that never learnt them: a low share does not rule the reads out, a high one at the
matching scale supports them.

  cd training && python3 diag_cross_scale.py [--weights W | --ckpt CK [--ema]] [--clips 32]
"""
import os
import sys

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from diag_appearance import layer_changes  # noqa: E402
from diag_generated import scored_and_speed  # noqa: E402
from edgetap import diag_cli, evalsets, photobanks  # noqa: E402
from edgetap.model import EdgeTapConfig, correlation_reads  # noqa: E402
from edgetap.sampling import bilinear_sample, window_offsets  # noqa: E402

BANDS = (-np.inf, -0.3, -0.1, 0.1, 0.3, np.inf)     # signed log2 scale since the query (+: grown)


def reads(strides):
    """(descriptor level, window level) of the query descriptors' reads with cross_scale
    (model.correlation_reads): each level's own, then the next coarser, then the next finer."""
    return [(l, m) for _, l, m in correlation_reads(EdgeTapConfig(strides=tuple(strides), cross_scale=True))]


def query_descriptors(feats, strides, tq, pq):
    """Per level [N, D]: each track's descriptor at its query point pq [N, 2] in its query frame tq [N]."""
    out = []
    for f, s in zip(feats, strides):
        d = torch.zeros(len(tq), f.shape[1])
        for q in np.unique(tq):
            rows = np.flatnonzero(tq == q)
            d[rows] = bilinear_sample(f[int(q)][None], torch.tensor(pq[rows] / s, dtype=torch.float32)[None])[0]
        out.append(d)
    return out


def centre_wins(feats, strides, radius, qdesc, gt, t, tracks):
    """For the tracks `tracks` at frame t: per read, [n] bool, the truth-centred window's centre is
    its best cell against the track's query descriptor of the read's level (qdesc: per level [N, D],
    query_descriptors)."""
    off = window_offsets(radius, "cpu")                                          # [k2, 2]
    centre = off.shape[0] // 2
    out = {}
    for l, m in reads(strides):
        descs = qdesc[l][tracks]                                                 # [n, D]
        pts = torch.tensor(gt[tracks, t] / strides[m], dtype=torch.float32)[:, None] + off   # [n, k2, 2]
        win = bilinear_sample(feats[m][t][None], pts.reshape(1, -1, 2))[0].reshape(len(tracks), off.shape[0], -1)
        out[(l, m)] = (torch.einsum("nkd,nd->nk", win, descs).argmax(-1) == centre).numpy()
    return out


def main():
    ap = diag_cli.generated_parser(__doc__.split("\n\n")[0])
    ap.add_argument("--clips", type=int, default=evalsets.VAL["clips"])
    args = ap.parse_args()
    model = diag_cli.model_of(args, "diag_cross_scale.py")
    cfg = model.cfg
    banks = photobanks.load_train_banks(args.data, "cpu", "val")
    wins = {r: [] for r in reads(cfg.strides)}
    scales = []
    for seq in evalsets.generated_sequences(banks, dict(evalsets.VAL, clips=args.clips), "cpu"):
        gt, vis, tq = seq["gt_xy"], seq["gt_vis"], seq["tq"]
        feats = diag_cli.encode_clip(model, seq["video"])
        qdesc = query_descriptors(feats, cfg.strides, tq, gt[np.arange(len(tq)), tq])
        scored, _ = scored_and_speed(gt, vis, tq)
        log_scale, _ = layer_changes(gt, seq["layer"], tq)
        keep = scored & np.isfinite(log_scale)
        for t in range(gt.shape[1]):
            tracks = np.flatnonzero(keep[:, t])
            if len(tracks) == 0:
                continue
            with torch.no_grad():
                for r, w in centre_wins(feats, cfg.strides, cfg.radius, qdesc, gt, t, tracks).items():
                    wins[r].append(w)
            scales.append(log_scale[tracks, t])
    scale = np.concatenate(scales)
    bands = list(zip(BANDS[:-1], BANDS[1:]))
    counts = [int(((scale >= a) & (scale < b)).sum()) for a, b in bands]
    print("share of point-frames whose truth-centred window peaks at its centre, by signed log2 scale change")
    print(f"{'read (descriptor level > window level)':<40}" + "".join(f"{f'{a:+.1f}..{b:+.1f}':>14}" for a, b in bands))
    print(f"{'point-frames':<40}" + "".join(f"{n:>14d}" for n in counts))
    for (l, m), w in wins.items():
        w = np.concatenate(w)
        cells = [f"{w[(scale >= a) & (scale < b)].mean():.3f}" if n else "-" for (a, b), n in zip(bands, counts)]
        name = f"s{cfg.strides[l]} > s{cfg.strides[m]}"
        print(f"{name:<40}" + "".join(f"{c:>14}" for c in cells))


if __name__ == "__main__":
    main()
