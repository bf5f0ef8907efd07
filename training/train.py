#!/usr/bin/env python3
"""Trains EdgeTAP in resumable chunks on clips synthesized on the GPU.

  python3 training/train.py --ckpt training/checkpoints/edgetap-small.pt --chunk-seconds 480 \
      --total-seconds 1300 [--data training/.data] [--out DIR]
  torchrun --nproc_per_node=2 training/train.py ...      (data parallel; same flags)

The learning-rate schedule is a function of accumulated TRAINING seconds (warm-up by steps, then
cosine to 2% at --total-seconds), stored in the checkpoint with the step count, so a run split
into chunks of any length follows one schedule. The checkpoint holds fp32 weights, bf16 Adam
moments, step, seconds, config and the log (with --ema, the weights' moving average too); each
chunk replaces it. --accum K makes each optimizer step's gradient the mean over K batches, so one
GPU can take the steps of K GPUs' clips per step at 1/K of their rate.
"""
import argparse
import contextlib
import json
import math
import os
import sys
import time

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from edgetap import data_parallel, evalsets, fused_reads, photobanks, synth, synth_options  # noqa: E402
from edgetap.ema import WeightAverage  # noqa: E402
from edgetap.grow import new_parameter_names  # noqa: E402
from edgetap.handback import copy_checkpoint_for_handback  # noqa: E402
from edgetap.losses import match_loss, noisy_init, tracking_loss  # noqa: E402
from edgetap.realclips import RealClips  # noqa: E402
from edgetap.model import EdgeTap, EdgeTapConfig, count_params  # noqa: E402
from edgetap.weights import load_checkpoint  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))


def parse():
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", default=os.path.join(HERE, ".data"))
    ap.add_argument("--ckpt", default=os.path.join(HERE, "checkpoints", "edgetap-small.pt"))
    ap.add_argument("--out", default=None, help="also copy checkpoint and log here")
    ap.add_argument("--chunk-seconds", type=float, default=480,
                    help="wall-clock bound of this run from its start, set-up, final validation and save included "
                         "(the loop stops early by as long as the last mid-chunk validation and save took)")
    ap.add_argument("--total-seconds", type=float, default=None, help="schedule end, in accumulated training seconds (kept in ckpt)")
    ap.add_argument("--new-schedule", type=float, default=None,
                    help="start a new warm-up + cosine schedule of this many training seconds from the resumed checkpoint")
    ap.add_argument("--batch", type=int, default=8, help="clips per GPU")
    ap.add_argument("--frames", type=int, default=24)
    ap.add_argument("--tracks", type=int, default=256)
    ap.add_argument("--sizes", default="192,224,256,288,320",
                    help="clip sizes drawn per step: sides of square clips or WxH (e.g. 448x256), multiples of 32")
    ap.add_argument("--lr", type=float, default=6e-4)
    ap.add_argument("--wd", type=float, default=0.02)
    ap.add_argument("--huber", type=float, default=4.0,
                    help="the position loss's quadratic zone in 256-scaled px (edgetap/losses.py position_loss); "
                         "beyond it the slope is the same for every zone")
    ap.add_argument("--match-weight", type=float, default=0.0,
                    help="weight of the descriptor matching loss beside the tracking loss (edgetap/losses.py "
                         "match_loss; needs the windowed correlation; 0: off, rounds 1-27)")
    ap.add_argument("--match-tau", type=float, default=0.1, help="the matching loss's temperature on cosines")
    ap.add_argument("--warmup", type=int, default=150)
    ap.add_argument("--old-lr-scale", type=float, default=1.0,
                    help="grown checkpoints: the rate of the parameters trained before the growth, as a "
                         "fraction of the schedule's (the new ones take the schedule's); every chunk alike")
    ap.add_argument("--self-init", type=float, default=0.5,
                    help="fraction of tracks entering each frame with the model's own streamed estimate")
    ap.add_argument("--accum", type=int, default=1,
                    help="batches per optimizer step (gradient accumulation): K x --batch clips per GPU per step")
    ap.add_argument("--photo-repeat", type=int, default=1,
                    help="draw photo backgrounds K times as often as texture patterns (1: uniformly, rounds 1-18)")
    ap.add_argument("--blobs", type=int, default=photobanks.N_BLOBS,
                    help="blob cut-outs made from the training photos, beside the photo cut-outs (the "
                         "generated evaluation set occludes with blobs only; rounds 1-20: %(default)s)")
    ap.add_argument("--real", default=os.path.join(HERE, ".data", "real"),
                    help="real clips labelled by a teacher (prepare_real.py), for --real-every")
    ap.add_argument("--real-every", type=int, default=0,
                    help="every K-th batch comes from the labelled real clips instead of the generator (0: never)")
    ap.add_argument("--ema", type=float, default=0.0,
                    help="keep an exponential moving average of the weights with this decay (e.g. 0.999), "
                         "validate it beside the trained weights and save it in the checkpoint (0: off)")
    ap.add_argument("--val-every", type=float, default=150, help="seconds")
    ap.add_argument("--log-every", type=int, default=50)
    ap.add_argument("--max-steps", type=int, default=0,
                    help="stop once the step count, the resumed checkpoint's steps included, reaches this "
                         "(smoke tests; a resumed checkpoint past it trains one step)")
    ap.add_argument("--seed", type=int, default=0)
    add_step_args(ap)
    ap.add_argument("--query-patch", type=int, default=1,
                    help="new checkpoint only: query descriptors per level, side (1, or 3 for local 4D correlation)")
    ap.add_argument("--config", type=json.loads, default=None,
                    help="new checkpoint only: a JSON object of network hyper-parameters (EdgeTapConfig fields) "
                         "replacing the defaults, e.g. '{\"width\": 256, \"blocks\": 4}'")
    ap.add_argument("--entry-velocity", type=float, default=None,
                    help="set the network's entry_velocity (new or resumed checkpoint; kept in it): each frame "
                         "is entered with the previous output plus this much of its last displacement")
    ap.add_argument("--val-clips", type=int, default=evalsets.VAL["clips"])
    ap.add_argument("--val-frames", type=int, default=evalsets.VAL["frames"])
    ap.add_argument("--val-long", action="store_true",
                    help="also validate on evalsets.VAL_LONG (8 clips x 96 frames of slow motion): val_long_AJ")
    ap.add_argument("--val-sizes", default="",
                    help="also validate on the validation clips rendered at these sizes (comma list, e.g. 768x448; "
                         "evaluate.py --sets val --size S): val_WxH_AJ")
    for name, (_, what) in evalsets.VAL_VARIANTS.items():
        ap.add_argument("--" + name, action="store_true",
                        help=f"also validate on the validation clips with {what} (evaluate.py's {name}): "
                             f"{name.replace('-', '_')}_AJ")
    ap.add_argument("--cpu", action="store_true", help="CPU, fp32 (tests only)")
    return ap.parse_args()


def add_step_args(ap):
    """The generator's options and how the step runs, shared with bench_step.py."""
    synth_options.add_option_args(ap)
    ap.add_argument("--clip-reuse", type=int, default=1,
                    help="steps each synthesized batch serves, each step with tracks of its own (the generator "
                         "draws clip-reuse x tracks per clip)")
    ap.add_argument("--graph-entries", action="store_true",
                    help="GPU: run the exact-streaming entries pass as CUDA graph replays (edgetap/graphed_entries.py)")
    ap.add_argument("--fused-reads", action="store_true",
                    help="GPU: window correlations in one Triton kernel each way (edgetap/fused_reads.py)")


def lr_at(state, base, warmup, seconds=None):
    """Warm-up over `warmup` steps, then cosine to 2% at total_seconds; both counted from the
    schedule's start (sched_step, sched_seconds: 0 for the first schedule). A chunk that resumed
    without AdamW moments (rewarm_step: a compact checkpoint) also ramps over `warmup` steps
    from where it resumed. `seconds`: the schedule's clock (default state["seconds"])."""
    s0, t0 = state.get("sched_step", 0), state.get("sched_seconds", 0.0)
    seconds = state["seconds"] if seconds is None else seconds
    f = min(1.0, (seconds - t0) / max(state["total_seconds"] - t0, 1.0))
    cos = 0.02 + 0.98 * 0.5 * (1 + math.cos(math.pi * f))
    ramp = min(1.0, (state["step"] - s0 + 1) / warmup)
    if "rewarm_step" in state:
        ramp *= min(1.0, (state["step"] - state["rewarm_step"] + 1) / warmup)
    return base * ramp * cos


def new_config(args):
    """The hyper-parameters of a new checkpoint: the defaults, --query-patch, then --config."""
    try:
        return EdgeTapConfig(query_patch=args.query_patch).replaced(args.config or {})
    except (TypeError, ValueError) as e:
        sys.exit(f"train.py: --config: {e}")


def make_optimizer(model, lr, wd, lr_scale=None):
    """AdamW, weight decay on matrices and convolution kernels only. lr_scale: name -> factor
    on the schedule's rate for some parameters (each group keeps its `lr_scale`). Groups in a
    fixed order, decayed first, as the checkpoints' optimizer states were saved."""
    lr_scale = lr_scale or {}
    groups = {}
    for n, p in model.named_parameters():
        key = (p.dim() >= 2, lr_scale.get(n, 1.0))
        groups.setdefault(key, []).append(p)
    return torch.optim.AdamW([dict(params=ps, weight_decay=wd if decay else 0.0, lr_scale=scale)
                              for (decay, scale), ps in sorted(groups.items(), key=lambda g: (not g[0][0], g[0][1]))],
                             lr=lr, betas=(0.9, 0.98), eps=1e-8)


def old_lr_scale_map(state, model, scale):
    """With --old-lr-scale on a grown checkpoint: the parameters it had before growing train at
    `scale` times the rate, the new ones at the rate itself."""
    if scale == 1.0:
        return {}
    if "grown_from" not in state:
        sys.exit("train.py: --old-lr-scale needs a checkpoint made by grow_checkpoint.py (it names the new parameters)")
    new = new_parameter_names(EdgeTapConfig.from_dict(state["grown_from"]["config"]), model.cfg)
    return {n: scale for n, _ in model.named_parameters() if n not in new}


def param_names_in_order(opt, model):
    """The names of opt's parameters in its state's index order (group by group)."""
    names = {id(p): n for n, p in model.named_parameters()}
    return [names[id(p)] for g in opt.param_groups for p in g["params"]]


def group_scales(osd):
    """The learning-rate scale of each parameter group of a saved optimizer state (rounds 1-7 saved none)."""
    return [g.get("lr_scale", 1.0) for g in osd["param_groups"]]


def regrouped_state(osd, model, state, opt, args):
    """A saved optimizer state whose learning-rate scales differ from opt's (a new schedule with
    another --old-lr-scale) as opt's state dict: the AdamW moments follow their parameters by name."""
    saved = group_scales(osd)
    old = sorted({s for s in saved if s != 1.0})
    if len(old) > 1:
        sys.exit(f"train.py: {args.ckpt}: learning-rate scales {sorted(set(saved))}: at most one besides 1 expected")
    saved_opt = make_optimizer(model, args.lr, args.wd, old_lr_scale_map(state, model, old[0] if old else 1.0))
    if [len(g["params"]) for g in saved_opt.param_groups] != [len(g["params"]) for g in osd["param_groups"]]:
        sys.exit(f"train.py: {args.ckpt}: its optimizer's parameter groups do not match the network's")
    by_name = {n: osd["state"][i] for i, n in enumerate(param_names_in_order(saved_opt, model)) if i in osd["state"]}
    sd = opt.state_dict()
    sd["state"] = {i: by_name[n] for i, n in enumerate(param_names_in_order(opt, model)) if n in by_name}
    return sd


def synthesize(banks, args, S, gen, synth_opt, dev, reuse=1):
    """Clips for `reuse` steps: args.batch x args.frames at S px with reuse x args.tracks tracks in
    random order, so that each step's slice (batch_inputs) is an equal share of the query sampling."""
    with torch.no_grad():
        clip = synth.make_clips(banks, args.batch, args.frames, S, args.tracks * reuse, gen, synth_opt, device=dev)
        if reuse > 1:
            order = torch.argsort(torch.rand(clip["tq"].shape, device=dev), dim=1)
            for k in ("tracks", "vis", "tq", "layer"):
                idx = order.reshape(order.shape + (1,) * (clip[k].dim() - 2))
                clip[k] = torch.gather(clip[k], 1, idx.expand_as(clip[k]))
    clip["video"] = clip["video"].to(memory_format=torch.contiguous_format)
    return clip


def batch_inputs(clip, part, n_tracks, S, self_init, entry_velocity=0.0):
    """One step's inputs from the part-th slice of n_tracks tracks of a synthesized batch: query
    points, entering estimates, and which tracks enter with their own streamed estimate (a
    `self_init` fraction)."""
    sl = slice(part * n_tracks, (part + 1) * n_tracks)
    tracks, vis, tq = (clip[k][:, sl] for k in ("tracks", "vis", "tq"))
    return dict(
        video=clip["video"], tracks=tracks, vis=vis, tq=tq, known=clip["known"][:, sl] if "known" in clip else None,
        pq=torch.gather(tracks, 2, tq[:, :, None, None].expand(-1, -1, 1, 2))[:, :, 0],
        p_init=noisy_init(tracks, tq, synth.equivalent_side(S), velocity=entry_velocity),
        self_mask=(torch.rand(tq.shape, device=tq.device) < self_init) if self_init > 0 else None)


def forward_backward(net, opt, b, amp, scale=1.0, accumulate=False, huber=4.0, match_weight=0.0, match_tau=0.1):
    """Loss of one batch and its gradients, weighted by `scale`: left in the parameters, or with
    `accumulate` added to those already there (a step over several batches); returns the loss
    terms (unweighted). `huber`: the position loss's quadratic zone (losses.tracking_loss);
    `match_weight` > 0 adds losses.match_loss at temperature `match_tau` (synthesized clips only:
    pseudo-labelled ones are not matched)."""
    H, W = b["video"].shape[-2:]
    match = match_weight > 0 and b.get("known") is None
    with torch.autocast(**amp):
        out = net(b["video"], b["tq"], b["pq"], b["p_init"], b["self_mask"], match_at=b["tracks"] if match else None)
    ps, vl, cl = out[:3]
    loss, st = tracking_loss(ps.float(), vl.float(), cl.float(), b["tracks"], b["vis"], b["tq"],
                             synth.equivalent_side((W, H)), huber=huber, known=b.get("known"))
    if match:
        ml, top1 = match_loss(out[3], b["vis"], b["tq"], match_tau)
        loss = loss + match_weight * ml
        st["match"] = ml.detach()
        st.update({f"match_top1_s{s}": v for s, v in zip(net_config(net).strides, top1)})
    if not accumulate:
        opt.zero_grad(set_to_none=True)
    (loss * scale).backward()
    return st


def net_config(net):
    """The network's EdgeTapConfig, through a DistributedDataParallel wrapper too."""
    return getattr(net, "module", net).cfg


def optimizer_step(model, opt):
    """Clips the gradient norm at 10 and steps; returns the norm before clipping."""
    gn = torch.nn.utils.clip_grad_norm_(model.parameters(), 10.0)
    opt.step()
    return gn


def save_ckpt(path, model, opt, state, ema=None):
    sd = {k: v.detach().float().cpu() for k, v in model.state_dict().items()}
    osd = dict(opt.state_dict())   # per-param dicts are the optimizer's own: copy, never mutate

    def pack(k, v):
        if not torch.is_tensor(v):
            return v
        return v.detach().to(torch.bfloat16).cpu() if k in ("exp_avg", "exp_avg_sq") else v.detach().cpu().clone()
    osd["state"] = {i: {k: pack(k, v) for k, v in s.items()} for i, s in osd["state"].items()}
    tmp = path + ".tmp"
    extra = dict(ema=ema.state_dict(), ema_decay=ema.decay) if ema is not None else {}
    torch.save(dict(model=sd, opt=osd, **state, **extra), tmp)
    os.replace(tmp, path)


def main():
    args = parse()
    if args.clip_reuse < 1:
        sys.exit(f"train.py: --clip-reuse {args.clip_reuse}: must be at least 1")
    if args.photo_repeat < 1:
        sys.exit(f"train.py: --photo-repeat {args.photo_repeat}: must be 1 (uniform draws) or more")
    if args.blobs < 0:
        sys.exit(f"train.py: --blobs {args.blobs}: must be 0 or more")
    if args.real_every < 0:
        sys.exit(f"train.py: --real-every {args.real_every}: must be 0 (never) or more")
    if args.accum < 1:
        sys.exit(f"train.py: --accum {args.accum}: must be at least 1")
    rank, world, dev = data_parallel.start(args.cpu)
    ddp = world > 1
    dev = dev or torch.device("cpu" if args.cpu else "cuda")
    amp = dict(device_type=dev.type, dtype=torch.bfloat16, enabled=not args.cpu)
    torch.backends.cudnn.benchmark = True
    torch.backends.cuda.matmul.allow_tf32 = True
    torch.backends.cudnn.allow_tf32 = True
    t_start = time.time()

    state = dict(step=0, seconds=0.0, total_seconds=args.total_seconds or 1300.0, log=[], clips=0)
    ck = None
    if os.path.exists(args.ckpt):
        ck = load_checkpoint(args.ckpt)
        cfg = EdgeTapConfig.from_dict(ck["config"])
        if args.config:
            sys.exit(f"train.py: {args.ckpt} exists; --config only applies to a new checkpoint (give another "
                     "--ckpt path, or grow_checkpoint.py to enlarge a trained one)")
        if args.query_patch != 1 and args.query_patch != cfg.query_patch:
            sys.exit(f"train.py: {args.ckpt} has query_patch {cfg.query_patch}; --query-patch {args.query_patch} "
                     "only applies to a new checkpoint (give another --ckpt path)")
        if "ema" in ck and not args.ema:
            sys.exit(f"train.py: {args.ckpt} holds averaged weights (ema decay {ck.get('ema_decay')}); give --ema "
                     "to keep averaging them, or they would be dropped")
        for k in ("step", "seconds", "total_seconds", "log", "clips", "sched_step", "sched_seconds", "grown_from",
                  "averaged"):
            if k in ck:
                state[k] = ck[k]
        if args.total_seconds:
            state["total_seconds"] = args.total_seconds
        if args.new_schedule:
            state.update(sched_step=state["step"], sched_seconds=state["seconds"],
                         total_seconds=state["seconds"] + args.new_schedule)
    else:
        cfg = new_config(args)
    if args.entry_velocity is not None:
        cfg = cfg.replaced({"entry_velocity": args.entry_velocity})
    if args.match_weight > 0 and not cfg.windowed:
        sys.exit(f"train.py: --match-weight {args.match_weight}: the network has no windowed correlation "
                 "(query_patch 1, no recent descriptors, no cross_scale); the matching loss reads its windows")
    model = EdgeTap(cfg).to(dev)
    if ck is not None:
        model.load_state_dict(ck["model"])
    model = model.to(memory_format=torch.channels_last)
    model.graph_entries = args.graph_entries
    fused_reads.enable(args.fused_reads)
    opt = make_optimizer(model, args.lr, args.wd, old_lr_scale_map(state, model, args.old_lr_scale))
    if ck is not None and "opt" in ck:
        osd = ck["opt"]
        for s in osd["state"].values():
            for k in ("exp_avg", "exp_avg_sq"):
                s[k] = s[k].float()
        saved = group_scales(osd)
        scales = [g["lr_scale"] for g in opt.param_groups]
        if saved != scales:
            if not args.new_schedule:
                sys.exit(f"train.py: {args.ckpt} was trained with learning-rate scales {sorted(set(saved))} per "
                         f"parameter group; give the same --old-lr-scale as its earlier chunks (or start a "
                         f"new schedule with --new-schedule)")
            osd = regrouped_state(osd, model, state, opt, args)
        opt.load_state_dict(osd)
        for g, scale in zip(opt.param_groups, scales):
            g["lr_scale"] = scale
    if ck is not None and state["step"] > 0 and not args.new_schedule and not (ck.get("opt") or {}).get("state"):
        state["rewarm_step"] = state["step"]     # no AdamW moments (compact_checkpoint.py): ramp the rate again
        if rank == 0:
            print(f"{args.ckpt} has no optimizer moments: the rate re-warms over {args.warmup} steps", flush=True)
    net = data_parallel.wrap(model, dev) if ddp else model
    ema = None
    if args.ema and rank == 0:
        ema = WeightAverage(model, args.ema, ck.get("ema") if ck is not None else None)

    banks = photobanks.load_train_banks(args.data, dev, "train", n_blobs=args.blobs, seed=args.seed,
                                        photo_repeat=args.photo_repeat)
    real = None
    if args.real_every:
        try:
            real = RealClips(args.real, dev)
        except (FileNotFoundError, ValueError) as e:
            sys.exit(f"train.py: --real: {e}")
        if real.window < args.frames:
            sys.exit(f"train.py: --real {args.real}: labelled windows of {real.window} frames, "
                     f"shorter than --frames {args.frames} (prepare_real.py --label --window)")
    val_seqs = None
    more_val = {}   # further validation sets, scored as NAME_AJ (and NAME_AJ_ema)
    if rank == 0:
        val_banks = photobanks.load_train_banks(args.data, dev, "val", seed=args.seed)
        spec = dict(evalsets.VAL, clips=args.val_clips, frames=args.val_frames)
        val_seqs = evalsets.generated_sequences(val_banks, spec, dev)
        if args.val_long:
            more_val["val_long"] = evalsets.val_long_sequences(val_banks, dev)
        for name in evalsets.VAL_VARIANTS:
            if getattr(args, name.replace("-", "_")):
                more_val[name.replace("-", "_")] = evalsets.val_variant_sequences(name, val_banks, spec, dev)
        for text in filter(None, args.val_sizes.split(",")):
            W, H = synth.clip_size(synth.parse_clip_size(text))
            more_val[f"val_{W}x{H}"] = evalsets.generated_sequences(val_banks, dict(spec, size=(W, H)), dev)
        print(f"params {count_params(model)}; banks: {banks.bg.shape[0]} bg, {banks.stamps.shape[0]} stamps; "
              f"world {world}; resume step {state['step']} at {state['seconds']:.0f}s of {state['total_seconds']:.0f}s; "
              f"setup {time.time() - t_start:.1f}s", flush=True)
        if ema is not None:
            print(f"weight average: decay {ema.decay}, " + ("resumed from the checkpoint" if ema.resumed else
                  "starting at the checkpoint's weights"), flush=True)
    gen = torch.Generator().manual_seed(args.seed * 1000003 + state["step"] * 7919 + rank)
    sizes = [synth.parse_clip_size(s) for s in args.sizes.split(",")]
    size_labels = ["{}x{}".format(*S) if isinstance(S, tuple) else str(S) for S in sizes]   # log keys
    synth_opt = synth_options.options_from_args(args)

    def scores(net, seqs):
        per, per_c = evalsets.evaluate(net, seqs, dev, with_conf_variant=True)
        return evalsets.summarize(per), evalsets.summarize(per_c)

    def validate():
        model.eval()
        m, mc = scores(model, val_seqs)
        rec = dict(val_AJ=m["AJ"], val_davg=m["delta_avg"], val_OA=m["OA"], val_AJ_conf=mc["AJ"], val_OA_conf=mc["OA"])
        for name, seqs in more_val.items():
            rec[f"{name}_AJ"] = scores(model, seqs)[0]["AJ"]
        model.train()
        if ema is not None:
            m, mc = scores(ema.model, val_seqs)
            rec.update(val_AJ_ema=m["AJ"], val_AJ_conf_ema=mc["AJ"])
            for name, seqs in more_val.items():
                rec[f"{name}_AJ_ema"] = scores(ema.model, seqs)[0]["AJ"]
        return rec

    def hand_back():
        """The checkpoint (in parts if large, compacted if too large: handback.py) and the log,
        copied to --out."""
        os.makedirs(args.out, exist_ok=True)
        with open(os.path.join(args.out, "train_log.jsonl"), "w") as f:
            f.write("\n".join(json.dumps(r) for r in state["log"]) + "\n")
        return copy_checkpoint_for_handback(args.ckpt, args.out)

    model.train()
    last_val = time.time()
    val_cost = 0.0    # seconds the last mid-chunk validation and save took: reserved for the final one
    acc = {}
    n_acc = 0
    sizes_seen = {}   # clip size -> batches trained at it since the last log line
    t_loop = time.time()
    part = 0          # which slice of the synthesized batch's tracks this step trains on
    clock = state["seconds"]   # what the rate and self-init follow; with ranks, rank 0's at the last sync
    while True:
        t0 = time.time()
        step = state["step"]
        lr = lr_at(state, args.lr, args.warmup, clock)
        for g in opt.param_groups:
            g["lr"] = lr * g["lr_scale"]
        self_init = args.self_init if clock > 0.08 * state["total_seconds"] else 0.0
        terms = []
        for micro in range(args.accum):     # --accum K: one step's gradient over K batches
            if part == 0:
                k = ((step * args.accum + micro) * 2654435761 + args.seed) % len(sizes)
                S, label = sizes[k], size_labels[k]
                if real is not None and (step * args.accum + micro) % args.real_every == args.real_every - 1:
                    clip = real.sample(args.batch, args.frames, S, args.tracks * args.clip_reuse, gen)
                else:
                    clip = synthesize(banks, args, S, gen, synth_opt, dev, args.clip_reuse)
                state["clips"] += args.batch * world
            batch = batch_inputs(clip, part, args.tracks, S, self_init, cfg.entry_velocity)
            sizes_seen[label] = sizes_seen.get(label, 0) + 1
            part = (part + 1) % args.clip_reuse
            last = micro == args.accum - 1
            with net.no_sync() if ddp and not last else contextlib.nullcontext():   # all-reduce once
                terms.append(forward_backward(net, opt, batch, amp, 1.0 / args.accum, accumulate=micro > 0,
                                               huber=args.huber, match_weight=args.match_weight,
                                               match_tau=args.match_tau))
        keys = dict.fromkeys(k for t in terms for k in t)      # in order: the log lines start with the loss
        # a term only some batches have (match_loss skips pseudo-labelled ones) averages over those
        st = {k: sum(t[k] for t in terms if k in t) / sum(k in t for t in terms) for k in keys}
        gn = optimizer_step(model, opt)
        if ema is not None:
            ema.update(model)
        dt = time.time() - t0
        state["step"] += 1
        state["seconds"] += dt
        st["gnorm"] = gn
        for k, v in st.items():   # stays on the GPU until logged: no per-step sync
            acc[k] = acc.get(k, 0.0) + v.detach().float()
        n_acc += 1
        if rank == 0 and state["step"] % args.log_every == 0:
            rec = {k: round(float(v) / n_acc, 4) for k, v in acc.items()}
            rec.update(step=state["step"], sec=round(state["seconds"], 1), lr=round(lr, 6),
                       sizes=sizes_seen,
                       ms_per_step=round(1000 * (time.time() - t_loop) / n_acc, 1), clips=state["clips"])
            print(json.dumps(rec), flush=True)
            state["log"].append(rec)
            acc, n_acc, sizes_seen, t_loop = {}, 0, {}, time.time()
        done = (time.time() - t_start + val_cost > args.chunk_seconds) or (args.max_steps and state["step"] >= args.max_steps) \
            or state["seconds"] >= state["total_seconds"]
        if rank == 0 and not done and time.time() - last_val > args.val_every:
            t_val = time.time()
            v = validate()
            v.update(step=state["step"], sec=round(state["seconds"], 1))
            print(json.dumps(v), flush=True)
            state["log"].append(v)
            state["config"] = cfg.to_dict()
            os.makedirs(os.path.dirname(args.ckpt), exist_ok=True)
            save_ckpt(args.ckpt, model, opt, state, ema)       # safety copy mid-chunk
            if args.out:
                hand_back()
            last_val = time.time()
            val_cost = last_val - t_val
            t_loop = time.time()
        if ddp and state["step"] % data_parallel.SYNC_EVERY == 0:
            done, clock = data_parallel.sync(done, state["seconds"], rank, dev)
            state["seconds"] = clock
        elif ddp:
            done = False
        else:
            clock = state["seconds"]
        if done:
            break
    if rank == 0:
        v = validate()
        v.update(step=state["step"], sec=round(state["seconds"], 1), final=True)
        print(json.dumps(v), flush=True)
        state["log"].append(v)
        state["config"] = cfg.to_dict()
        os.makedirs(os.path.dirname(args.ckpt), exist_ok=True)
        save_ckpt(args.ckpt, model, opt, state, ema)
        if args.out:
            for part in hand_back():
                print(f"for the trip back: {part}", flush=True)
        print(f"saved {args.ckpt}: step {state['step']}, {state['seconds']:.0f}s trained, "
              f"wall {time.time() - t_start:.0f}s", flush=True)
    if ddp:
        spread = data_parallel.weight_spread(model, dev)
        data_parallel.finish()
        if spread > 0:
            sys.exit(f"train.py: rank {rank}: the ranks' weights differ (parameter sums by up to {spread:.3g})")
        if rank == 0:
            print(f"the {world} ranks' weights are identical", flush=True)


if __name__ == "__main__":
    main()
