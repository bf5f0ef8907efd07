"""TAP-Vid metrics (as google-deepmind/tapnet `compute_tapvid_metrics`), plus PCK for BADJA.

Shapes (numpy): one sequence at a time, N points x T frames.
  gt_xy [N, T, 2] in 256x256 coordinates, gt_vis [N, T] bool, known [N, T] bool (False = unannotated,
  never scored), tq [N] query frames, pred_xy [N, T, 2] (256x256), pred_vis [N, T] bool.
Query-first mode: frames t > tq are scored. Counts are summed over one sequence; the dataset value
is the mean over sequences (tapnet averages the per-video ratios).
"""
import numpy as np

THRESHOLDS = (1, 2, 4, 8, 16)


def tapvid_counts(gt_xy, gt_vis, known, tq, pred_xy, pred_vis):
    """Per-sequence TAP-Vid metrics (dict of floats; NaN where undefined)."""
    N, T = gt_vis.shape
    ev = (np.arange(T)[None, :] > np.asarray(tq)[:, None]) & known
    vis = gt_vis & ev
    pv = pred_vis.astype(bool)
    out = {}
    n_ev = ev.sum()
    out["OA"] = float(((pv == gt_vis) & ev).sum() / n_ev) if n_ev else float("nan")
    d2 = ((pred_xy - gt_xy) ** 2).sum(-1)
    fracs, jacs = [], []
    for th in THRESHOLDS:
        within = d2 < th * th                          # strict <, as tapnet
        correct = within & gt_vis
        n_vis = vis.sum()
        frac = (correct & ev).sum() / n_vis if n_vis else np.nan
        tp = (correct & pv & ev).sum()
        fp = (((~gt_vis) & pv) | ((~within) & pv)) & ev
        den = n_vis + fp.sum()
        jac = tp / den if den else np.nan
        out[f"pts_within_{th}"] = float(frac)
        out[f"jaccard_{th}"] = float(jac)
        fracs.append(frac)
        jacs.append(jac)
    out["delta_avg"] = float(np.mean(fracs))
    out["AJ"] = float(np.mean(jacs))
    return out


def pck(gt_xy_orig, gt_vis, known, tq, pred_xy_orig, mask_area, alpha=0.2):
    """BADJA-style PCK: a visible annotated frame after the query is correct when the error in
    original pixels is < alpha * sqrt(mask_area[t]). Returns (correct, total)."""
    T = gt_vis.shape[1]
    ev = (np.arange(T)[None, :] > np.asarray(tq)[:, None]) & known & gt_vis
    thr = alpha * np.sqrt(np.asarray(mask_area, np.float64))[None, :]
    err = np.sqrt(((pred_xy_orig - gt_xy_orig) ** 2).sum(-1))
    return int(((err < thr) & ev).sum()), int(ev.sum())


def mean_metrics(per_seq):
    keys = per_seq[0].keys()
    return {k: float(np.nanmean([m[k] for m in per_seq])) for k in keys}
