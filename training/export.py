#!/usr/bin/env python3
"""Exports the trained network for the C++ engine, and golden vectors for its parity tests.

  python3 training/export.py --ckpt training/checkpoints/edgetap-small.pt --name edgetap-small

writes
  models/<name>.safetensors   FP32 weights (FP16 with --weights-dtype F16, half the size), BatchNorm
                              folded into the convolutions
  models/<name>.json          architecture, input normalization, op conventions, tensor list, costs
  tests/data/golden/<name>-golden.safetensors   a 10-frame 64x96 procedural clip, 5 queries, the
                              streaming reference's intermediates and outputs (CPU, FP32)
Runs on the CPU (no GPU needed).
"""
import argparse
import json
import math
import os
import sys

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from edgetap import refine  # noqa: E402
from edgetap.engine import StreamingTracker  # noqa: E402
from edgetap.evalsets import MAX_SUPPORT_GRID, VISIBLE_RULES, visible_by_rule  # noqa: E402
from edgetap.flops import encoder_flops, frame_flops, state_floats_per_track, track_flops  # noqa: E402
from edgetap.model import count_params  # noqa: E402
from edgetap.weights import (half_if_in_range, load_checkpoint_model, load_exported_model, read_safetensors,  # noqa: E402
                             write_safetensors)

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)

CONVENTIONS = {
    "coordinates": "pixels of the model input; pixel centres at integer coordinates; x right, y down",
    "pyramid": "level of stride s holds cell (u, v) at image position (s*u, s*v); a point p maps to p/s",
    "bilinear": "sample at (x, y) in level pixels: floor neighbours x0=floor(x), y0=floor(y), weights "
                "(1-fx)(1-fy), fx(1-fy), (1-fx)fy, fx fy; a neighbour outside [0,W-1]x[0,H-1] contributes 0 "
                "(zero padding) - grid_sample(align_corners=True, padding_mode='zeros')",
    "upsample2": "out[2i] = in[i], out[2i+1] = (in[i] + in[min(i+1, n-1)]) / 2, rows then columns",
    "conv": "weights OIHW, zero padding k//2, stride 1 or 2; output size ceil(in/stride)",
    "linear": "y = x W^T + b, W stored [out, in]",
    "layernorm": "eps 1e-5, biased variance, over the last dimension",
    "gelu": "exact: 0.5 x (1 + erf(x / sqrt 2))",
    "attention": "softmax((q k^T) / sqrt(d_head) + rel_bias[head, idx]) v; heads split contiguous "
                 "channel blocks of width d_head",
    "correlation": "per read (set, descriptor level l, window level m): dot(desc_l, bilinear(feature_m, "
                   "p/s_m + (dx, dy))) / sqrt(D), (dx, dy) in [-r, r]^2 row-major (dy outer); reads "
                   "concatenated in model.correlation_reads' order: each set's levels fine to coarse (l = m), "
                   "then with cross_scale (l, l+1) and (l, l-1)",
    "fourier": "d = (p - p_query) / disp_scale; [dx, dy, then per i in 0..n_freq-1: sin(pi 2^i dx), "
               "sin(pi 2^i dy), cos(pi 2^i dx), cos(pi 2^i dy)]",
}


def procedural_clip(T=10, H=64, W=96, seed=11):
    """Licence-free test clip: analytic colour blobs and gratings under a moving similarity
    transform, with a textured disc crossing in front (occlusions)."""
    rng = np.random.RandomState(seed)
    nb = 40
    mu = rng.uniform(-20, 120, (nb, 2))
    sig = rng.uniform(2.0, 9.0, nb)
    col = rng.uniform(-1, 1, (nb, 3))
    kv = rng.uniform(-0.4, 0.4, (3, 2))
    ys, xs = np.mgrid[0:H, 0:W].astype(np.float64)
    frames = []
    for t in range(T):
        th, tx, ty, sc = 0.03 * t, 1.5 * t, 0.7 * t, 1.0 + 0.01 * t
        c, s = math.cos(th), math.sin(th)
        u = (c * (xs - W / 2) + s * (ys - H / 2)) / sc + W / 2 - tx   # inverse map to texture coords
        v = (-s * (xs - W / 2) + c * (ys - H / 2)) / sc + H / 2 - ty
        img = np.full((H, W, 3), 0.5)
        for i in range(nb):
            g = np.exp(-((u - mu[i, 0]) ** 2 + (v - mu[i, 1]) ** 2) / (2 * sig[i] ** 2))
            img += 0.6 * g[..., None] * col[i]
        for j in range(3):
            img[..., j] += 0.12 * np.sin(kv[j, 0] * u + kv[j, 1] * v)
        cx, cy = 100 - 9.0 * t, 30 + 1.0 * t
        disc = (xs - cx) ** 2 + (ys - cy) ** 2 < 14 ** 2
        stripes = 0.5 + 0.4 * np.sign(np.sin(0.8 * (xs - cx) + 0.3 * (ys - cy)))
        img[disc] = np.stack([stripes, 1 - stripes, 0.5 * stripes], -1)[disc]
        frames.append(np.clip(img * 255, 0, 255).round().astype(np.uint8))
    return np.stack(frames)


def refined_positions(g, refinement, visible_rule, vis_threshold):
    """The golden clip's published positions after template refinement (edgetap/refine.py),
    [T, N, 2], from its network outputs: what the engine's RefinedSession must reproduce."""
    video = torch.from_numpy(g["frames"]).permute(0, 3, 1, 2)
    visible = visible_by_rule(g["out_vis"], g["out_conf"], visible_rule, vis_threshold).T
    xy, _ = refine.refine_tracks(video, g["query_xy"], g["query_t"], g["out_xy"].transpose(1, 0, 2), visible,
                                 refinement)
    return xy.transpose(1, 0, 2).astype(np.float32)


def make_golden(model, path, refinement=None, visible_rule="vis", vis_threshold=0.5):
    """refinement (a refine.py config): also the positions refined after the network (refined_xy),
    published by (visible_rule, vis_threshold)."""
    frames = procedural_clip()
    T, H, W, _ = frames.shape
    tq = torch.tensor([[0, 0, 2, 5, 9]])
    pq = torch.tensor([[[20.3, 30.7], [80.0, 10.25], [47.5, 31.5], [3.2, 60.9], [70.6, 44.1]]])
    rec = {}
    st = StreamingTracker(model, tq, pq, record=rec)
    video = torch.from_numpy(frames).permute(0, 3, 1, 2).float()
    outs = [st.step(video[t:t + 1]) for t in range(T)]
    K = model.cfg.iters
    N = tq.shape[1]
    g = {
        "frames": frames, "query_t": tq[0].numpy().astype(np.int64), "query_xy": pq[0].numpy().astype(np.float32),
        "desc": st.desc[0].numpy(),
        "p_init": torch.stack(rec["p_init"])[:, 0].numpy(),
        "corr": torch.stack(rec["corr"]).reshape(T, K, 1, N, -1)[:, :1, 0].numpy(),  # iteration 0: what the engines expose
        "token": torch.stack(rec["token"]).reshape(T, K, 1, N, -1)[:, :, 0].numpy(),
        "hidden": torch.stack(rec["hidden"]).reshape(T, K, 1, N, -1)[:, :, 0].numpy(),
        "iter_xy": torch.stack(rec["iter_xy"]).reshape(T, K, 1, N, 2)[:, :, 0].numpy(),
        "out_xy": torch.stack([o[0][0] for o in outs]).numpy(),
        "out_vis": torch.stack([o[1][0] for o in outs]).numpy(),
        "out_conf": torch.stack([o[2][0] for o in outs]).numpy(),
    }
    for t in (0, T - 1):
        for f, s in zip(rec["feats"][t], model.cfg.strides):
            g[f"enc_f{s}_t{t}"] = f[0].numpy()
    g = {k: (v.astype(np.float32) if v.dtype == np.float64 else v) for k, v in g.items()}
    if refinement:
        g["refined_xy"] = refined_positions(g, refinement, visible_rule, vis_threshold)
    meta = {
        "what": "EdgeTAP streaming reference on a procedural clip (training/export.py), CPU FP32",
        "layouts": "frames U8 [T,H,W,3] RGB; query_t [N]; query_xy [N,2]; desc [N,levels,query_patch^2,D]; "
                   "p_init [T,N,2] estimate entering iteration 0; corr [T,1,N,n_corr] (iteration 0; [T,K,N,n_corr] "
                   "in files before edgetap-large-v6); token [T,K,N,width] "
                   "(input of block 0); hidden [T,K,N,width] (output of the last block); iter_xy [T,K,N,2]; "
                   "out_xy [T,N,2]; out_vis/out_conf [T,N] probabilities (1 at the query frame); "
                   "enc_f<stride>_t<frame> [D,h,w]",
        "compare": "only entries with t >= query_t[n]; frames before a track's query are unspecified",
        "config": json.dumps(model.cfg.to_dict()),
        **({"refinement": json.dumps(dict(refinement, visible_rule=visible_rule, vis_threshold=vis_threshold)),
            "refined_xy": "[T,N,2] out_xy after template refinement (edgetap/refine.py)"} if refinement else {}),
    }
    write_safetensors(path, g, meta)
    return g


GOLDEN_LIMIT = 2 * 1024 * 1024


WEIGHTS_DTYPES = ("F32", "F16")


def stored_weights(model, weights_dtype):
    """The tensors the .safetensors holds. F16: each floating-point tensor in FP16 when it fits
    FP16's range (weights.half_if_in_range; one that does not stays FP32), and the model is
    rounded in place to exactly what the file holds."""
    if weights_dtype == "F32":
        return {k: v.float() for k, v in model.state_dict().items()}
    sd = {k: half_if_in_range(v) for k, v in model.state_dict().items()}
    model.load_state_dict({k: v.float() if v.is_floating_point() else v for k, v in sd.items()})
    return sd


def export_model(model, models_dir, golden_dir, name, visible_rule="vis", training=None, vis_threshold=0.5,
                 weights_dtype="F32", refinement=None, support_grid=0):
    """Writes <models_dir>/<name>.safetensors + .json and <golden_dir>/<name>-golden.safetensors
    for a model with folded BatchNorm; checks that the written files reproduce the model. With
    weights_dtype F16 the weights are rounded to FP16 first (the engine computes in FP32 either
    way), and the golden vectors are those of the rounded network. refinement: the template
    refinement the engine applies after the network (edgetap/refine.py; None: none), recorded
    as the .json's "refinement"; support_grid > 0: the side of the grid of support tracks the
    engine tracks beside a caller's (evalsets.run_tracker's support), its "support_grid"."""
    cfg = model.cfg
    os.makedirs(models_dir, exist_ok=True)
    st_path = os.path.join(models_dir, name + ".safetensors")
    json_path = os.path.join(models_dir, name + ".json")
    sd = stored_weights(model, weights_dtype)
    write_safetensors(st_path, sd, {"format": "pt", "version": cfg.version})
    info = {
        "format": "edgetap-weights/1",
        "version": cfg.version,
        "weights": os.path.basename(st_path),
        "weights_dtype": weights_dtype,
        "config": cfg.to_dict(),
        "input": {"color": "RGB", "range": "0..255", "normalize": f"(v / 255 - {cfg.pixel_mean}) / {cfg.pixel_std}",
                  "size_multiple": cfg.size_multiple, "trained_sizes": [192, 224, 256, 288, 320],
                  "supported_sizes": "192..384, height and width multiples of 32"},
        "outputs": {"xy": "model-input pixels", "vis": "sigmoid(vis_logit)", "conf": "sigmoid(conf_logit)"},
        "visible_rule": visible_rule, "vis_threshold": vis_threshold,
        **({"refinement": dict(refinement)} if refinement else {}),
        **({"support_grid": support_grid} if support_grid else {}),
        "conventions": CONVENTIONS,
        "streaming": "engine/STREAMING.md",
        "params": count_params(model),
        "tensors": {k: list(v.shape) for k, v in sorted(sd.items())},
        "cost_gflop_per_frame": {f"{s}x{s}@{n}": round(frame_flops(cfg, s, s, n)["total"] / 1e9, 3)
                                 for s in (192, 256, 320, 384) for n in (256, 1024)},
        "cost_detail": {"encoder_256": encoder_flops(cfg, 256, 256), "per_track": track_flops(cfg),
                        "state_floats_per_track": state_floats_per_track(cfg)},
        "training": training,
    }
    with open(json_path, "w") as f:
        json.dump(info, f, indent=1)
    # round trip: the exported file must reproduce the model exactly
    m2 = load_exported_model(st_path, json_path)
    x = torch.rand(1, 3, 64, 96) * 255
    with torch.no_grad():
        a, b = model.encoder(x), m2.encoder(x)
    assert all(torch.equal(u, v) for u, v in zip(a, b))
    os.makedirs(golden_dir, exist_ok=True)
    gpath = os.path.join(golden_dir, name + "-golden.safetensors")
    make_golden(m2, gpath, refinement, visible_rule, vis_threshold)
    g2, _ = read_safetensors(gpath)
    print(f"wrote {st_path} ({os.path.getsize(st_path)} B, {info['params']} params), "
          f"{gpath} ({os.path.getsize(gpath)} B, {len(g2)} tensors)")
    if os.path.getsize(gpath) > GOLDEN_LIMIT:
        print(f"warning: {gpath} is over the {GOLDEN_LIMIT} B the repository keeps golden vectors under "
              "(its largest entries: the correlations and the finest level's features)", file=sys.stderr)


def average_decay(ck, ema):
    """The decay of the moving average the exported weights are, or None for trained weights: the
    checkpoint's average (--ema), or an average stored as its weights (compact_checkpoint.py
    --average-as-weights) and not trained since."""
    if ema:
        return ck.get("ema_decay")
    promoted = ck.get("averaged")
    return promoted["decay"] if promoted and promoted["step"] == ck.get("step") else None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ckpt", default=os.path.join(HERE, "checkpoints", "edgetap-small.pt"))
    ap.add_argument("--name", default="edgetap-small")
    ap.add_argument("--models", default=os.path.join(ROOT, "models"))
    ap.add_argument("--golden", default=os.path.join(ROOT, "tests", "data", "golden"))
    ap.add_argument("--visible-rule", default="vis", choices=VISIBLE_RULES,
                    help="published visibility: the visibility probability, or it times the confidence")
    ap.add_argument("--vis-threshold", type=float, default=0.5,
                    help="a point is published visible when its rule's score reaches this (the C++ engine "
                         "applies rule and threshold; a camera's edgetap.visible_threshold overrides it)")
    ap.add_argument("--refinement", default="none", choices=("none", "default"),
                    help="record template refinement after the network in the .json (default: refine.DEFAULT, "
                         "as edgetap-large-v6 publishes it)")
    ap.add_argument("--support-grid", type=int, default=0,
                    help="record a grid of SIDE x SIDE support tracks in the .json (0: none; edgetap-large publishes "
                         "one, models/INFERENCE.md)")
    ap.add_argument("--version", default=None, help="weights version to record (default: the checkpoint's)")
    ap.add_argument("--ema", action="store_true", help="export the checkpoint's averaged weights (train.py --ema)")
    ap.add_argument("--weights-dtype", default="F32", choices=WEIGHTS_DTYPES,
                    help="how the .safetensors stores the weights (F16: half the file; the engine widens them)")
    ap.add_argument("--gpus", default=None, help='what it was trained on, recorded in the .json (e.g. "1x NVIDIA H200")')
    args = ap.parse_args()
    torch.set_num_threads(2)
    try:
        model, ck = load_checkpoint_model(args.ckpt, fold=True, ema=args.ema)
    except ValueError as e:
        sys.exit(f"export.py: {e}")
    if args.version:
        model.cfg.version = args.version
    decay = average_decay(ck, args.ema)
    finals = [r for r in ck.get("log", []) if r.get("final")]
    final_val = finals[-1] if finals else None
    if final_val and decay is None:   # the average's scores are not the exported weights'
        final_val = {k: v for k, v in final_val.items() if not k.endswith("_ema")}
    training = {"steps": ck.get("step"), "train_seconds": round(ck.get("seconds", 0), 1),
                "clips_seen": ck.get("clips"), "final_val": final_val}
    if args.gpus:
        training["gpus"] = args.gpus
    if decay is not None:
        training["weights"] = f"moving average of the trained weights, decay {decay}"
    if not 0.0 <= args.vis_threshold <= 1.0:
        sys.exit(f"export.py: --vis-threshold {args.vis_threshold}: must be in [0, 1]")
    if not 0 <= args.support_grid <= MAX_SUPPORT_GRID:
        sys.exit(f"export.py: --support-grid {args.support_grid}: must be in [0, {MAX_SUPPORT_GRID}]")
    export_model(model, args.models, args.golden, args.name, args.visible_rule, training, args.vis_threshold,
                 args.weights_dtype, refinement=refine.DEFAULT if args.refinement == "default" else None,
                 support_grid=args.support_grid)


if __name__ == "__main__":
    main()
