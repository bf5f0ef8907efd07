"""Diagnostic: do the generated evaluation set's misses follow the change of a point's
surroundings since its query frame? (reserved photos, evalsets.GEN_EVAL; CPU, FP32.)

Every track belongs to one layer of the generated clip (the background, a cut-out or one of its
limbs), and the tracks of a layer move together. For a track's query frame q and a frame t, the
least-squares affine map from its layer's ground truth at q to that at t gives the scale
(sqrt |det|) and rotation by which the neighbourhood the query descriptor was sampled from has
changed (a homography or a turning body only approximately; layers with fewer than 4 tracks are
left out). The scored point-frames (visible, after the query) are split by speed, then by that
scale change (|log2|) and by that rotation, with the share within 2 and 16 px of each group.

  cd training && python3 diag_appearance.py [--weights W | --ckpt CK [--ema]]
"""
import os
import sys

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from edgetap import diag_cli, evalsets  # noqa: E402
from diag_generated import scored_and_speed, shares  # noqa: E402

SPEEDS = ((0, 2), (2, 10), (10, np.inf))
SCALE_BINS = (0, 0.05, 0.15, 0.3, np.inf)          # |log2 scale| since the query frame
ROTATION_BINS = (0, 3, 10, 30, np.inf)             # degrees since the query frame
MIN_LAYER_TRACKS = 4


def affine_change(src, dst):
    """src, dst [K, 2] the same points at two frames -> (scale, rotation in degrees) of the
    least-squares affine map src -> dst: sqrt |det| of its linear part, and the angle of that
    part's rotation component."""
    a = np.concatenate([src, np.ones((len(src), 1))], axis=1)
    m, *_ = np.linalg.lstsq(a, dst, rcond=None)                  # [3, 2]: dst = [x y 1] m
    lin = m[:2].T                                                # [[a, b], [c, d]]: dst = lin @ src
    scale = np.sqrt(abs(np.linalg.det(lin)))
    rotation = np.degrees(np.arctan2(lin[1, 0] - lin[0, 1], lin[0, 0] + lin[1, 1]))
    return scale, rotation


def layer_changes(gt, layer, tq):
    """gt [N, T, 2], layer [N], tq [N] -> log2 scale (positive: grown) and |rotation| [N, T] of
    each track's layer between its query frame and every frame (nan where its layer has too few
    tracks)."""
    N, T, _ = gt.shape
    log_scale = np.full((N, T), np.nan)
    rotation = np.full((N, T), np.nan)
    for lay in np.unique(layer):
        members = np.flatnonzero(layer == lay)
        if len(members) < MIN_LAYER_TRACKS:
            continue
        for q in np.unique(tq[members]):
            rows = members[tq[members] == q]
            for t in range(T):
                s, r = affine_change(gt[members, q], gt[members, t])
                log_scale[rows, t] = np.log2(max(s, 1e-6))
                rotation[rows, t] = abs(r)
    return log_scale, rotation


def main():
    args = diag_cli.generated_parser(__doc__.split("\n\n")[0]).parse_args()
    model = diag_cli.model_of(args, "diag_appearance.py")
    seqs = diag_cli.generated_set(args)
    cols = {k: [] for k in ("err", "speed", "scale", "rot")}
    for s in seqs:
        with torch.no_grad():
            xy, _, _ = evalsets.run_tracker(model, s, "cpu")
        gt, vis, tq = s["gt_xy"], s["gt_vis"], s["tq"]
        scored, speed = scored_and_speed(gt, vis, tq)
        log_scale, rotation = layer_changes(gt, s["layer"], tq)
        keep = scored & np.isfinite(log_scale)
        cols["err"].append(np.linalg.norm(xy - gt, axis=-1)[keep])
        cols["speed"].append(speed[keep])
        cols["scale"].append(np.abs(log_scale[keep]))
        cols["rot"].append(rotation[keep])
    err, speed, scale, rot = (np.concatenate(cols[k]) for k in ("err", "speed", "scale", "rot"))
    for lo, hi in SPEEDS:
        fast = (speed >= lo) & (speed < hi)
        print(f"speed {lo}-{hi} px/frame: {shares(err, fast)}")
        for name, value, bins in (("|log2 scale|", scale, SCALE_BINS), ("|rotation| deg", rot, ROTATION_BINS)):
            for a, b in zip(bins[:-1], bins[1:]):
                print(f"  {name:>15} {a:>5}-{b:<5} {shares(err, fast & (value >= a) & (value < b))}")


if __name__ == "__main__":
    main()
