#!/usr/bin/env python3
"""Scores EdgeTAP (streaming reference, FP32) and an OpenCV LK baseline in the TAP-Vid protocol.

  python3 training/evaluate.py --weights models/edgetap-small.safetensors \
      --sets gen,badja,pairs,val --klt --out training/results/eval.json
  (or --ckpt training/checkpoints/edgetap-small.pt)

Sets (all query-first; coordinates scaled to 256x256; thresholds 1,2,4,8,16 px, strict <):
  gen    fixed generated set from RESERVED photos (lomiri-wallpapers-20.04 and
         plasma-workspace-wallpapers), evalsets.GEN_EVAL: seed 2026, 16 clips x 48 frames,
         256x256, 64 points; occluders are blob cut-outs of the reserved photos
  val    the held-out generated validation set used during training (training photos held out)
  val-long  long tracks of slow points: the validation photos, evalsets.VAL_LONG: 8 clips x 96
         frames, every motion at 0.4 of the generator's speed (train.py --val-long)
  val-turn  the validation clips with every cut-out that neither deforms, articulates nor has a
         limb turning round (synth_options turn_prob 1; train.py --val-turn)
  val-pale  the validation clips with every cut-out drawn pale, weakly textured (pale_prob 1;
         train.py --val-pale): the same clips and tracks as val
  val-follow  the validation clips with the camera panning with a body (follow_prob 1;
         train.py --val-follow): the same photos and bodies as val, other paths
  val-relight  the validation clips with every cut-out relit while it moves (relight_prob 1;
         train.py --val-relight): the same clips and tracks as val
  (--bend-prob, --tilt-prob, --shake-prob, --limb-prob, --flat-prob, --turn-prob, --pale-prob,
  --follow-prob, --relight-prob, --time-scale render gen and val with a training round's generator
  options instead of the defaults that define the sets; val-long keeps its own time scale, the
  val-turn, val-pale, val-follow and val-relight sets their own option to 1)
  badja  shared/data/eval/badja (AJ, delta_avg, OA, PCK@0.2*sqrt(mask area) in original pixels)
  pairs  shared/data/eval/pairs (2-frame sequences)
  any other name: a folder of sequences under --eval-root (e.g. synth-eval-v1, the eval issue's
         fixed generated set, with --eval-root build/eval-data)
Runs on the CPU or a GPU; numbers are reported for both visibility rules at 0.5 (`vis`: the
visibility probability; `vis*conf`: it times the confidence) and as published
(`edgetap[published]`: the rule and threshold of the model's JSON, `visible_rule` and
`vis_threshold`, as the C++ engine applies them; for a checkpoint `vis*conf` at --vis-threshold).
"""
import argparse
import json
import os
import sys
import time

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from edgetap import evalsets, photobanks, refine, synth, synth_options  # noqa: E402
from edgetap.weights import load_model_or_exit  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))


def klt_track(seq, win=21, levels=3):
    """OpenCV pyramidal Lucas-Kanade, frame to frame from each query (query-first), on the same
    frames the network sees (256x256 unless --size). A track whose status drops is lost: invisible thereafter."""
    import cv2
    video = seq["video"].permute(0, 2, 3, 1).numpy()
    T = video.shape[0]
    W, H = seq["W"], seq["H"]
    h_in, w_in = video.shape[1:3]
    s = np.array([w_in / W, h_in / H])
    q = (seq["q"] + 0.5) * s - 0.5
    tq = seq["tq"]
    N = len(tq)
    pos = q.astype(np.float32).copy()
    alive = np.zeros(N, bool)
    xy = np.zeros((N, T, 2))
    vis = np.zeros((N, T), bool)
    prev = None
    for t in range(T):
        g = cv2.cvtColor(video[t], cv2.COLOR_RGB2GRAY)
        run = alive & (tq < t)
        if prev is not None and run.any():
            p1, st, _ = cv2.calcOpticalFlowPyrLK(prev, g, pos[run].reshape(-1, 1, 2), None, winSize=(win, win),
                                                 maxLevel=levels,
                                                 criteria=(cv2.TERM_CRITERIA_COUNT | cv2.TERM_CRITERIA_EPS, 30, 0.01))
            idx = np.where(run)[0]
            ok = st.reshape(-1) == 1
            pos[idx[ok]] = p1.reshape(-1, 2)[ok]
            alive[idx[~ok]] = False
        start = tq == t
        pos[start] = q[start]
        alive[start] = True
        inside = (pos[:, 0] >= 0) & (pos[:, 0] <= w_in - 1) & (pos[:, 1] >= 0) & (pos[:, 1] <= h_in - 1)
        xy[:, t] = pos
        vis[:, t] = alive & inside
        prev = g
    return (xy + 0.5) / s - 0.5, vis


def size_label(size):
    """The model input size as results files name it: "WxH"."""
    return "{}x{}".format(*size) if isinstance(size, tuple) else f"{size}x{size}"


def load_set(name, data, device, size=256, eval_root=None, gen_opt=None):
    """gen_opt: generator options for the generated sets (None: the defaults that define them)."""
    if name == "gen":
        return evalsets.generated_sequences(photobanks.load_reserved_banks(data, device),
                                            dict(evalsets.GEN_EVAL, size=size), device, gen_opt)
    if name == "val":
        return evalsets.generated_sequences(photobanks.load_train_banks(data, device, "val"),
                                            dict(evalsets.VAL, size=size), device, gen_opt)
    if name == "val-long":
        return evalsets.val_long_sequences(photobanks.load_train_banks(data, device, "val"), device, gen_opt, size)
    if name in evalsets.VAL_VARIANTS:
        return evalsets.val_variant_sequences(name, photobanks.load_train_banks(data, device, "val"),
                                              dict(evalsets.VAL, size=size), device, gen_opt)
    root = os.path.join(eval_root or os.path.join(data, "eval"), name)
    seqs = sorted(s for s in os.listdir(root) if os.path.isfile(os.path.join(root, s, "gt.json")))
    if not seqs:
        raise SystemExit(f"evaluate: {root}: no sequence folders with a gt.json")
    return [evalsets.load_sequence(os.path.join(root, s), size=size) for s in seqs]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--weights", default=os.path.join(HERE, "..", "models", "edgetap-small.safetensors"))
    ap.add_argument("--ckpt", default=None, help="use a training checkpoint instead of --weights")
    ap.add_argument("--ema", action="store_true", help="with --ckpt: its averaged weights (train.py --ema)")
    ap.add_argument("--data", default=os.path.join(HERE, ".data"))
    ap.add_argument("--sets", default="gen,badja,pairs,val")
    ap.add_argument("--klt", action="store_true")
    ap.add_argument("--out", default=os.path.join(HERE, "results", "eval.json"))
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--size", type=synth.parse_clip_size, default=256,
                    help="model input size: a side or WxH (multiples of 32); badja/pairs frames are resized "
                         "to it, the generated sets (gen, val) rendered at it")
    ap.add_argument("--eval-root", default=None, help="full-resolution sets (e.g. ../shared/data/eval) for --size != 256")
    ap.add_argument("--resize-generated", type=synth.parse_clip_size, default=None,
                    help="render gen and val at --size (the fixed sets at 256), then resize their frames to this "
                         "model input (a side or WxH): the daemon's model_size above a camera's resolution")
    ap.add_argument("--support", type=int, default=None,
                    help="also track a SUPPORT x SUPPORT grid from frame 0, unscored (context for the cross-track "
                         "layers; default: the model JSON's support_grid, 0 for --ckpt; 0: none)")
    ap.add_argument("--vis-threshold", type=float, default=None,
                    help="threshold of the published rule (default: the model JSON's vis_threshold; 0.5 for --ckpt)")
    ap.add_argument("--refinement", choices=("published", "on", "off"), default="published",
                    help="template refinement of the positions (edgetap/refine.py): as the model's JSON says "
                         "(its 'refinement'; none for --ckpt), on with refine.DEFAULT, or off")
    ap.add_argument("--fp16", action="store_true",
                    help="GPU only: run the network under float16 autocast (FP16 convolutions and matrix products)")
    synth_options.add_option_args(ap)     # e.g. --limb-prob 0.3: render gen/val with a round's training options
    args = ap.parse_args()
    gen_opt = synth_options.options_from_args(args)
    torch.set_num_threads(args.threads)
    dev = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    if args.fp16 and dev.type != "cuda":
        raise SystemExit("evaluate: --fp16 needs a CUDA GPU")
    precision = torch.autocast("cuda", dtype=torch.float16, enabled=args.fp16)
    model = load_model_or_exit("evaluate", args.weights, args.ckpt, args.ema)
    if args.ckpt:
        rule, threshold, refinement, support = "vis*conf", 0.5, None, 0
    else:
        info = json.load(open(os.path.splitext(args.weights)[0] + ".json"))
        rule, threshold = info.get("visible_rule", "vis"), info.get("vis_threshold", 0.5)
        refinement, support = info.get("refinement"), info.get("support_grid", 0)
    if args.support is not None:
        if not 0 <= args.support <= evalsets.MAX_SUPPORT_GRID:
            raise SystemExit(f"evaluate: --support {args.support}: must be in [0, {evalsets.MAX_SUPPORT_GRID}]")
        support = args.support
    refinement = {"published": refinement, "on": refinement or refine.DEFAULT, "off": None}[args.refinement]
    if args.vis_threshold is not None:
        threshold = args.vis_threshold
    model = model.to(dev).eval()
    weights = f"{args.ckpt} ({'averaged' if args.ema else 'trained'} weights)" if args.ckpt else args.weights
    results = dict(weights=weights, device=str(dev), torch=torch.__version__, visible_rule=rule, vis_threshold=threshold,
                   size=size_label(args.size), support_grid=support, resize_generated=args.resize_generated,
                   refinement=refinement,
                   precision="fp16 autocast" if args.fp16 else "fp32",
                   generator_options={n: getattr(args, n) for n, _ in synth_options.OPTION_FLAGS}, sets={})
    for name in args.sets.split(","):
        t0 = time.time()
        seqs = load_set(name, args.data, dev, args.size, args.eval_root, gen_opt)
        if args.resize_generated and name in ("gen", "val", "val-long"):
            seqs = [evalsets.resized_sequence(seq, args.resize_generated) for seq in seqs]
        with precision:
            per_v, per_c = evalsets.evaluate(model, seqs, dev, with_conf_variant=True, keep_preds=True,
                                             support=support, refinement=refinement,
                                             published=(rule, threshold))
        per_p = evalsets.rescore(seqs, per_v, rule, threshold)
        entry = {"edgetap[vis]": evalsets.summarize(per_v), "edgetap[vis*conf]": evalsets.summarize(per_c),
                 "edgetap[published]": evalsets.summarize(per_p),
                 "per_sequence[vis*conf]": [{k: v for k, v in m.items() if k != "pred"} for m in per_c],
                 "seconds": round(time.time() - t0, 1),
                 "frames": int(sum(s["video"].shape[0] for s in seqs)),
                 "points": int(sum(len(s["tq"]) for s in seqs))}
        if args.klt:
            per_k = []
            for seq in seqs:
                xy, vis = klt_track(seq)
                m = evalsets.score_sequence(seq, xy, vis)
                m["name"] = seq["name"]
                per_k.append(m)
            entry[f"klt(opencv-lk,{seqs[0]['video'].shape[-1]}px)"] = evalsets.summarize(per_k)
        results["sets"][name] = entry
        os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
        with open(args.out, "w") as f:
            json.dump(results, f, indent=1)
        brief = {k: {m: round(v, 3) for m, v in entry[k].items() if m in ("AJ", "delta_avg", "OA", "PCK@0.2", "PCK@0.2_pooled")}
                 for k in entry if k.startswith(("edgetap[", "klt"))}
        print(name, json.dumps(brief), f"{entry['seconds']}s", flush=True)
    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    with open(args.out, "w") as f:
        json.dump(results, f, indent=1)
    print("wrote", args.out)


if __name__ == "__main__":
    main()
