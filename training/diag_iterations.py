"""Diagnostic: which stage loses the fast points of the fixed generated evaluation set (reserved
photos, evalsets.GEN_EVAL). The clips are streamed as the engine runs them; for every visible
frame after the query it scores the estimate the frame is entered with (the previous frame's
output, plus EdgeTapConfig.entry_velocity of its last displacement) and the estimate after each
refinement iteration, by ground-truth speed: the share within 2 and 16 px. An entry far off that
the iterations pull in is a refinement that works; an entry close by that they do not bring
within 2 px is refinement precision. It also scores, from the same outputs, the entries a
constant-velocity extrapolation would give (`entry+0.5v`: the previous output plus half its
last displacement; for a network trained with entry_velocity 1.0, `entry+1.0v` is its own
entry) (CPU, FP32). A second table splits the point-frames by their entry: of those entered
within 2 px, the share the output keeps there; of those entered 2-16 px off, the share it pulls in.

  cd training && python3 diag_iterations.py [--weights W | --ckpt CK [--ema]]
"""
import os
import sys

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from edgetap import diag_cli  # noqa: E402
from edgetap.engine import StreamingTracker  # noqa: E402
from diag_generated import scored_and_speed  # noqa: E402

SPEED_BINS = ((0, 2), (2, 5), (5, 10), (10, 20), (20, np.inf))
EXTRAPOLATIONS = (0.5, 1.0)     # entries at the previous output plus this much of its last step


@torch.no_grad()
def stream_stages(model, video, tq, pq):
    """Streams one clip (video [T, 3, S, S] 0..255; tq [N]; pq [N, 2] model pixels) and returns
    [1 + iters, N, T, 2]: the entry estimate, then the estimate after each iteration."""
    rec = {}
    st = StreamingTracker(model, torch.as_tensor(tq)[None], torch.as_tensor(pq).float()[None], record=rec)
    stages = []
    for t in range(video.shape[0]):
        st.step(video[t][None].float())
        stages.append(torch.stack([rec["p_init"][0]] + rec["iter_xy"])[:, 0])    # [1 + K, N, 2]
        rec.clear()                                  # the record keeps one frame's tensors at a time
    return torch.stack(stages, 2).numpy()


def extrapolated_entries(out, tq, fraction):
    """What each frame would be entered with at the previous output plus `fraction` of its last
    displacement: out [N, T, 2] the streamed outputs, tq [N] -> [N, T, 2]. A track's first frame
    after its query has no displacement yet and is entered at the query point, as now."""
    ext = np.empty_like(out)
    ext[:, 0] = out[:, 0]
    ext[:, 1:] = out[:, :-1]
    step = np.zeros_like(out)
    step[:, 2:] = out[:, 1:-1] - out[:, :-2]
    moving = np.arange(out.shape[1])[None] >= tq[:, None] + 2
    return ext + fraction * np.where(moving[..., None], step, 0.0)


def stage_shares(errors, speed, scored):
    """errors [stages, N, T] px; speed [N, T]; scored [N, T] bool -> {(lo, hi): (n, [[<2, <16] per
    stage])} over the scored point-frames of each speed bin."""
    out = {}
    for lo, hi in SPEED_BINS:
        mask = scored & (speed >= lo) & (speed < hi)
        e = errors[:, mask]
        out[(lo, hi)] = (int(mask.sum()), [[float((s < 2).mean()), float((s < 16).mean())] if e.shape[1]
                                           else [float("nan")] * 2 for s in e])
    return out


def kept_and_pulled(entry, final, speed, scored):
    """entry, final [N, T] px errors of the entry and the output; speed, scored as stage_shares ->
    {(lo, hi): (n near, share kept, n off, share pulled in)}: of the point-frames entered within
    2 px, the share whose output is still within 2 px; of those entered 2-16 px off, the share
    whose output is within 2 px (nan where a bin is empty)."""
    out = {}
    for lo, hi in SPEED_BINS:
        mask = scored & (speed >= lo) & (speed < hi)
        near = mask & (entry < 2)
        off = mask & (entry >= 2) & (entry < 16)
        out[(lo, hi)] = tuple(x for m in (near, off)
                              for x in (int(m.sum()), float((final[m] < 2).mean()) if m.any() else float("nan")))
    return out


def main():
    args = diag_cli.generated_parser(__doc__.split("\n\n")[0]).parse_args()
    model = diag_cli.model_of(args, "diag_iterations.py")
    seqs = diag_cli.generated_set(args)
    errors, speeds, scoreds = [], [], []
    for s in seqs:
        if s["video"].shape[-1] != s["W"] or s["video"].shape[-2] != s["H"]:
            raise SystemExit(f"diag_iterations.py: {s['name']}: frames not at their ground truth's size")
        gt, vis, tq = s["gt_xy"], s["gt_vis"], s["tq"]
        stages = stream_stages(model, s["video"], tq, s["q"])
        ext = [extrapolated_entries(stages[-1], tq, f) for f in EXTRAPOLATIONS]
        errors.append(np.linalg.norm(np.concatenate([stages, np.stack(ext)]) - gt[None], axis=-1))
        scored, speed = scored_and_speed(gt, vis, tq)
        speeds.append(speed)
        scoreds.append(scored)
    err = np.concatenate(errors, axis=1)
    table = stage_shares(err, np.concatenate(speeds), np.concatenate(scoreds))
    iters = err.shape[0] - 1 - len(EXTRAPOLATIONS)
    names = ["entry"] + [f"iter {k + 1}" for k in range(iters)] + [f"entry+{f}v" for f in EXTRAPOLATIONS]
    print("speed px/frame      n   " + "   ".join(f"{n:>13}" for n in names) + "     (<2 px / <16 px)")
    for (lo, hi), (n, per) in table.items():
        print(f"  {lo:>4}-{hi:<4} {n:7d}   " + "   ".join(f"{a:.3f} / {b:.3f}" for a, b in per))
    print("\nspeed px/frame   entered <2 px: n, output still <2 px   entered 2-16 px off: n, output <2 px")
    for (lo, hi), (n_near, kept, n_off, pulled) in kept_and_pulled(err[0], err[iters], np.concatenate(speeds),
                                                                    np.concatenate(scoreds)).items():
        print(f"  {lo:>4}-{hi:<4}      {n_near:7d}  {kept:.3f}                       {n_off:7d}  {pulled:.3f}")


if __name__ == "__main__":
    main()
