"""Evaluation sets and scoring in the TAP-Vid protocol (query-first, 256x256 scaling).

Datasets on disk use the project format (shared/DESIGN.md): <seq>/frames/*, <seq>/gt.json with
pixel coordinates of the ORIGINAL frames. prepare_data.py stores frames resized to 256x256; the
model tracks in those pixels. Conversions (pixel centres at integers):
    model = (orig + 0.5) * 256 / W - 0.5        orig = (model + 0.5) * W / 256 - 0.5
Metrics use the TAP-Vid scaling of both ground truth and prediction: orig * 256 / W.
"""
import dataclasses
import glob
import json
import os

import numpy as np
import torch
from PIL import Image

from . import metrics, refine, synth
from .synth_options import SynthOptions
from .engine import track_clip

GEN_EVAL = dict(seed=2026, clips=16, frames=48, size=256, points=64)
VAL = dict(seed=7, clips=32, frames=32, size=256, points=64)   # clips 0-7: the 8-clip set of rounds 1-6
# long tracks of slow points: the validation photos, 96 frames, every motion at VAL_LONG_TIME_SCALE
# of the generator's speed (about 1 px per frame at 256, as BADJA's camel); tracks up to 95 frames
# old, where training clips had at most 32 frames
VAL_LONG = dict(seed=7, clips=8, frames=96, size=256, points=64)
VAL_LONG_TIME_SCALE = 0.4


def load_sequence(seq_dir, size=256):
    """One sequence folder, its frames resized to size (a side, or (W, H))."""
    w_in, h_in = synth.clip_size(size)
    gt = json.load(open(os.path.join(seq_dir, "gt.json")))
    W, H = gt["size"]
    files = sorted(glob.glob(os.path.join(seq_dir, "frames", "*")))
    frames = []
    for f in files:
        im = Image.open(f).convert("RGB")
        if im.size != (w_in, h_in):
            im = im.resize((w_in, h_in), Image.BILINEAR)
        frames.append(np.asarray(im))
    video = torch.from_numpy(np.stack(frames)).permute(0, 3, 1, 2)        # [T, 3, s, s] uint8
    T = len(files)
    N = len(gt["points"])
    xy = np.zeros((N, T, 2))
    known = np.zeros((N, T), bool)
    vis = np.zeros((N, T), bool)
    tq = np.zeros(N, np.int64)
    q = np.zeros((N, 2))
    for i, p in enumerate(gt["points"]):
        tq[i] = int(round(p["query"][0]))
        q[i] = p["query"][1:3]
        for t in range(T):
            if p["xy"][t] is not None:
                xy[i, t] = p["xy"][t]
                known[i, t] = True
                vis[i, t] = bool(p["visible"][t])
    return dict(name=os.path.basename(seq_dir.rstrip("/")), video=video, W=W, H=H, gt_xy=xy, known=known,
                gt_vis=vis, tq=tq, q=q, mask_area=gt.get("mask_area"))


MAX_SUPPORT_GRID = 32   # the largest side a model's .json may declare (the C++ engine's kMaxSupportGrid)


def support_grid(side, w_in, h_in):
    """side x side points spread evenly over a w_in x h_in frame (cell centres), [side^2, 2]."""
    u = (np.arange(side) + 0.5) / side
    gx, gy = np.meshgrid(u * w_in - 0.5, u * h_in - 0.5)
    return np.stack([gx.ravel(), gy.ravel()], -1)


def resized_sequence(seq, size):
    """The sequence with its frames resized (bilinear; antialiased when shrinking) to size, an int
    side or a (W, H) pair. Queries, truth and scores stay in the sequence's own pixels: run_tracker
    maps them to the frames' size and back."""
    w, h = synth.clip_size(size)
    video = seq["video"]
    out = torch.nn.functional.interpolate(video.float(), size=(h, w), mode="bilinear", align_corners=False,
                                          antialias=w < video.shape[-1] or h < video.shape[-2])
    if not video.is_floating_point():
        out = out.round().clamp(0, 255)
    return dict(seq, video=out.to(video.dtype))


def frame_scale(seq):
    """Frame pixels per original pixel, (x, y): the model input's size over the sequence's."""
    h_in, w_in = seq["video"].shape[-2:]
    return np.array([w_in / seq["W"], h_in / seq["H"]])


def to_frame_pixels(seq, xy):
    """ORIGINAL-pixel points [..., 2] in the pixels of the stored frames (pixel centres at integers)."""
    return (xy + 0.5) * frame_scale(seq) - 0.5


def to_original_pixels(seq, xy):
    """The inverse of to_frame_pixels."""
    return (xy + 0.5) / frame_scale(seq) - 0.5


def run_tracker(model, seq, device, support=0):
    """Streams the model over one sequence (at its stored frame size); returns predictions in
    ORIGINAL pixels and vis/conf. support > 0 tracks a support x support grid queried at frame 0
    beside the sequence's points (context for the cross-track layer) and drops it from the output."""
    h_in, w_in = seq["video"].shape[-2:]
    N = len(seq["q"])
    pq = to_frame_pixels(seq, seq["q"])
    tq = seq["tq"]
    if support:
        pq = np.concatenate([pq, support_grid(support, w_in, h_in)])
        tq = np.concatenate([tq, np.zeros(support * support, tq.dtype)])
    tq = torch.from_numpy(tq)[None].to(device)
    pq = torch.from_numpy(pq).float()[None].to(device)
    xy, vis, conf = track_clip(model, seq["video"][None], tq, pq)
    xy, vis, conf = xy[:, :N], vis[:, :N], conf[:, :N]
    out = to_original_pixels(seq, xy[0].cpu().double().numpy())
    return out, vis[0].cpu().numpy(), conf[0].cpu().numpy()


def score_sequence(seq, pred_xy, pred_vis):
    s = np.array([256.0 / seq["W"], 256.0 / seq["H"]])
    m = metrics.tapvid_counts(seq["gt_xy"] * s, seq["gt_vis"], seq["known"], seq["tq"], pred_xy * s, pred_vis)
    if seq.get("mask_area") is not None:
        c, n = metrics.pck(seq["gt_xy"], seq["gt_vis"], seq["known"], seq["tq"], pred_xy, seq["mask_area"])
        m["pck_correct"], m["pck_total"] = c, n
        m["PCK@0.2"] = c / max(n, 1)
    return m


# validation clips with one generator option on for every body it may apply to, by set name
# (evaluate.py --sets NAME; train.py --val-turn, --val-pale, ... score them as val_turn_AJ, val_pale_AJ, ...)
VAL_VARIANTS = {
    "val-turn": ("turn_prob", "every cut-out that neither deforms, articulates nor has a limb turning round"),
    "val-pale": ("pale_prob", "every cut-out drawn pale (weakly textured)"),
    "val-follow": ("follow_prob", "a camera panning with a body, the scene sweeping past"),
    "val-relight": ("relight_prob", "every cut-out relit while it moves: shading sliding over it"),
}


def val_variant_options(name, opt=None):
    """The generator options of the variant set `name`: opt's (default: the defaults) with its option at 1."""
    return dataclasses.replace(opt or SynthOptions(), **{VAL_VARIANTS[name][0]: 1.0})


def val_variant_sequences(name, val_banks, spec, device, opt=None):
    """The validation clips of spec (evalsets.VAL or train.py's shorter set) as the variant `name`."""
    return generated_sequences(val_banks, spec, device, val_variant_options(name, opt))


def val_long_options(opt=None):
    """The generator options of VAL_LONG: opt's (default: the defaults) at VAL_LONG_TIME_SCALE."""
    return dataclasses.replace(opt or SynthOptions(), time_scale=VAL_LONG_TIME_SCALE)


def val_long_sequences(val_banks, device, opt=None, size=256):
    """The VAL_LONG clips (rendered at size) of the validation photos, with opt's other options."""
    return generated_sequences(val_banks, dict(VAL_LONG, size=size), device, val_long_options(opt))


def generated_sequences(banks, spec, device, opt=None):
    """Deterministic generated clips (CPU-seeded parameters) as sequences in the same dict form."""
    gen = torch.Generator().manual_seed(spec["seed"])
    out = []
    S = spec["size"]
    W, H = synth.clip_size(S)
    for c in range(spec["clips"]):
        clip = synth.make_clips(banks, 1, spec["frames"], S, spec["points"], gen, opt, device=device)
        tr = clip["tracks"][0].cpu().double().numpy()
        out.append(dict(name=f"gen{c:02d}", video=clip["video"][0].round().clamp(0, 255).to(torch.uint8).cpu(),
                        W=W, H=H, gt_xy=tr, known=np.ones(tr.shape[:2], bool),
                        gt_vis=clip["vis"][0].cpu().numpy(), tq=clip["tq"][0].cpu().numpy(),
                        q=tr[np.arange(tr.shape[0]), clip["tq"][0].cpu().numpy()], mask_area=None,
                        layer=clip["layer"][0].cpu().numpy(), bg_xy=clip["bg_tracks"][0].cpu().double().numpy()))
    return out


VISIBLE_RULES = ("vis", "vis*conf")


def visible_by_rule(vis, conf, rule, threshold):
    """The published visibility: the rule's score (the visibility probability, or it times the
    confidence, so that an unsure position counts as hidden) above the threshold."""
    if rule not in VISIBLE_RULES:
        raise ValueError(f"visible rule {rule!r}: one of {', '.join(VISIBLE_RULES)}")
    return (vis if rule == "vis" else vis * conf) > threshold


def rescore(seqs, per, rule, threshold):
    """Per-sequence metrics of the predictions kept by evaluate(..., keep_preds=True) under a
    visibility rule and threshold."""
    out = []
    for seq, m in zip(seqs, per):
        xy, vis, conf = m["pred"]
        r = score_sequence(seq, xy, visible_by_rule(vis, conf, rule, threshold))
        r["name"] = seq["name"]
        out.append(r)
    return out


def refined_predictions(seq, xy, visible, config):
    """The predictions (ORIGINAL pixels) with template refinement (refine.py) applied in the
    sequence's frames, where `visible` (the published rule) holds."""
    xy_model, _ = refine.refine_tracks(seq["video"], to_frame_pixels(seq, seq["q"]), seq["tq"],
                                       to_frame_pixels(seq, xy), visible, config)
    return to_original_pixels(seq, xy_model)


def evaluate(model, seqs, device, vis_threshold=0.5, with_conf_variant=False, keep_preds=False, support=0,
             refinement=None, published=("vis", 0.5)):
    """Per-sequence metrics; visible = vis prob > threshold. The variant (second list) uses
    vis prob * conf prob > threshold. support: see run_tracker. refinement: a refine.py config
    (None: the network's positions), applied where the published (rule, threshold) says visible."""
    per = []
    for seq in seqs:
        xy, vis, conf = run_tracker(model, seq, device, support)
        if refinement is not None:
            xy = refined_predictions(seq, xy, visible_by_rule(vis, conf, *published), refinement)
        per.append(dict(pred=(xy, vis, conf)))
    scored = rescore(seqs, per, "vis", vis_threshold)
    per_c = rescore(seqs, per, "vis*conf", vis_threshold) if with_conf_variant else None
    if keep_preds:
        for m, p in zip(scored, per):
            m["pred"] = p["pred"]
    return (scored, per_c) if with_conf_variant else scored


def summarize(per):
    keys = [k for k in per[0] if k not in ("name", "pck_correct", "pck_total", "pred")]
    out = {k: float(np.nanmean([m[k] for m in per])) for k in keys}
    if "pck_total" in per[0]:
        # PCK pooled over all annotated frames of all sequences (the BADJA convention) and per-seq mean
        out["PCK@0.2_pooled"] = sum(m["pck_correct"] for m in per) / max(1, sum(m["pck_total"] for m in per))
    return out
