"""Diagnostic: when a BADJA track is lost, do the network's features still find the point? For
every annotated point-frame after the query, the query descriptor (the centre of the query patch,
sampled at the query point in its query frame) is correlated, per level, with the frame's whole
feature map, as the correlation does inside its windows (dot product / sqrt(D)). Reported
separately for lost point-frames (error at least the PCK@0.2 threshold) and held ones:

- truth > est: the share where the map at the true position beats the map at the estimate (the
  features prefer the truth: the search or the temporal model lost it);
- rank: median share of the map's cells scoring above the truth (0: the truth is the frame's
  best match; 0.5: no better than a random cell);
- peak near truth: the share where the best cell within 3 thresholds of the truth lies within
  one threshold of it (a search that wide around the truth would land on it).

  cd training && python3 diag_features.py [--size 768x448] [--ckpt CK [--ema]] [--eval-root DIR] [dog ...]
  cd training && python3 diag_features.py --val 8 [--turn-prob 1 ...]   # generated clips' cut-out tracks
(CPU, FP32; about 20 s per BADJA sequence at 768x448)
"""
import os
import sys

import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from edgetap import diag_cli, evalsets, photobanks, synth, synth_options  # noqa: E402
from edgetap.sampling import bilinear_sample  # noqa: E402

NEAR = 3.0   # thresholds: the disc around the truth searched for the best cell
VAL_LOST_PX = 8.0
AGE_BANDS = ((1, 8), (9, 20), (21, 40), (41, 10 ** 6))   # frames since the query


def level_scores(fmap, desc, stride, truth, est, thr):
    """One level, one point-frame. fmap [D, h, w]; desc [D]; truth, est in model px; thr in model px.
    Returns (truth beats est, share of cells above the truth, peak within thr of the truth)."""
    D, h, w = fmap.shape
    cmap = torch.einsum("dhw,d->hw", fmap, desc) * D ** -0.5
    at = bilinear_sample(cmap[None, None], torch.tensor([[truth, est]], dtype=torch.float32) / stride)[0, :, 0]
    rank = (cmap > at[0]).float().mean().item()
    ys, xs = torch.meshgrid(torch.arange(h), torch.arange(w), indexing="ij")
    cells = torch.stack([xs, ys], -1).float() * stride
    dist = (cells - torch.tensor(truth, dtype=torch.float32)).norm(dim=-1)
    disc = dist <= NEAR * thr
    if not disc.any():
        return bool(at[0] > at[1]), rank, False
    best = torch.where(disc, cmap, torch.full_like(cmap, -float("inf"))).flatten().argmax()
    return bool(at[0] > at[1]), rank, bool(dist.flatten()[best] <= thr)


def descriptors(feats, strides, frame, p):
    """Per level the D-vector of frame `frame` at p (model px)."""
    pt = torch.tensor(np.array([[p]]), dtype=torch.float32)
    return [bilinear_sample(f[frame][None], pt / s)[0, 0] for f, s in zip(feats, strides)]


def sequence_rows(model, seq, xy, fixed_px=None, template="query", tracks=None):
    """Per annotated point-frame after the query: (lost, age, [(truth > est, rank, peak) per level]).
    The threshold: PCK@0.2's from the mask area, or fixed_px (the sequence's own pixels).
    template: "query" (the query frame's descriptor) or "recent" (the previous frame's, at the
    tracker's own estimate there: what a streaming tracker could keep up to date).
    tracks: the indices of the tracks to score (default all)."""
    W, H = seq["W"], seq["H"]
    h_in, w_in = seq["video"].shape[-2:]
    scale = np.array([w_in / W, h_in / H])

    def to_model(p):
        return (np.asarray(p) + 0.5) * scale - 0.5
    feats = diag_cli.encode_clip(model, seq["video"])
    strides = model.cfg.strides
    gt, known, vis, tq, area = seq["gt_xy"], seq["known"], seq["gt_vis"], seq["tq"], seq["mask_area"]
    rows = []
    for i in (range(len(tq)) if tracks is None else tracks):
        query_descs = descriptors(feats, strides, tq[i], to_model(seq["q"][i]))
        for t in range(tq[i] + 1, gt.shape[1]):
            if not (known[i, t] and vis[i, t] and (fixed_px or area[t])):
                continue
            thr_orig = fixed_px or 0.2 * np.sqrt(area[t])
            lost = np.linalg.norm(xy[i, t] - gt[i, t]) >= thr_orig
            thr = thr_orig * scale.mean()
            truth, est = to_model(gt[i, t]).tolist(), to_model(xy[i, t]).tolist()
            descs = query_descs if template == "query" else descriptors(feats, strides, t - 1, to_model(xy[i, t - 1]))
            rows.append((lost, t - tq[i], [level_scores(f[t], d, s, truth, est, thr)
                                for f, d, s in zip(feats, descs, strides)]))
    return rows


def report(name, rows, strides):
    for tag, want in (("lost", True), ("held", False)):
        sel = [lv for lost, _, lv in rows if lost == want]
        if not sel:
            print(f"{name} {tag}: none")
            continue
        a = np.array(sel, dtype=float)                      # [n, levels, 3]
        parts = [f"s{s}: truth>est {a[:, k, 0].mean():.2f} rank {np.median(a[:, k, 1]):.3f} "
                 f"peak-near-truth {a[:, k, 2].mean():.2f}" for k, s in enumerate(strides)]
        print(f"{name} {tag} ({len(sel)} point-frames): " + "; ".join(parts))
    ages = np.array([age for _, age, _ in rows])
    lost = np.array([lost for lost, _, _ in rows])
    rank = np.array([lv[0][1] for _, _, lv in rows])
    bands = []
    for lo, hi in AGE_BANDS:
        k = (ages >= lo) & (ages <= hi)
        if k.any():
            bands.append(f"{lo}-{hi if hi < 10 ** 6 else ''}: {int(k.sum())} lost {lost[k].mean():.2f} "
                         f"rank {np.median(rank[k]):.3f}")
    print(f"{name} by frames since the query (s{strides[0]} rank): " + "; ".join(bands))


def main():
    ap = diag_cli.badja_parser()
    ap.add_argument("--val", type=int, default=0, metavar="N",
                    help="instead: the first N validation clips' cut-out tracks (256 px, lost: %g px off)" % VAL_LOST_PX)
    ap.add_argument("--data", default=os.path.join(HERE, ".data"))
    ap.add_argument("--template", choices=("query", "recent"), default="query",
                    help="the descriptor correlated: the query frame's, or the previous frame's at the estimate")
    synth_options.add_option_args(ap)     # with --val: e.g. --turn-prob 1
    args = ap.parse_args()
    model = diag_cli.model_of(args, "diag_features")
    if args.val:
        spec = dict(evalsets.VAL, clips=args.val)
        rows = []
        banks = photobanks.load_train_banks(args.data, "cpu", "val")
        for seq in evalsets.generated_sequences(banks, spec, "cpu", synth_options.options_from_args(args)):
            with torch.no_grad():
                xy, _, _ = evalsets.run_tracker(model, seq, "cpu")
            bodies = np.flatnonzero(seq["layer"] > 0)     # the cut-outs' points, as BADJA's are the animals'
            rows += sequence_rows(model, seq, xy, VAL_LOST_PX, args.template, bodies)
        report(f"val[:{args.val}] cut-out tracks", rows, model.cfg.strides)
        return
    for name, seq, xy in diag_cli.badja_runs(model, args, "diag_features"):
        print(f"{name} at {synth.clip_size(args.size)}:")
        report(name, sequence_rows(model, seq, xy, template=args.template), model.cfg.strides)


if __name__ == "__main__":
    main()
