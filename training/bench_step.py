#!/usr/bin/env python3
"""Where a training step's time goes, per clips-per-step: synthesis, forward + backward, optimizer.

  python3 training/bench_step.py [--ckpt training/checkpoints/edgetap-small.pt] [--batches 6,12,24]
      [--size 256] [--frames 32] [--tracks 256] [--steps 8] [--warmup 3] [--self-init 0.6]
      [--bend-prob P] [--tilt-prob P] [--shake-prob P] [--limb-prob P] [--flat-prob P]
      [--graph-entries] [--fused-reads] [--clip-reuse K] [--profile FILE] [--config JSON]

One GPU, the step of train.py (bf16 autocast, exact-streaming entries for a --self-init fraction,
AdamW), each phase timed between synchronizations; medians over --steps after --warmup (synthesis:
the mean, as with --clip-reuse K it runs at one step in K; use --steps a multiple of K). Prints
one JSON line per batch size, with clips per second and the peak memory. --profile FILE: one more
step at the last batch size under the PyTorch profiler, its operators by device (CPU: host) time
written to FILE. --config JSON: the checkpoint's hyper-parameters with these replaced, e.g.
'{"width": 256, "blocks": 4}', freshly initialised (what a larger network's step would cost).
"""
import argparse
import json
import os
import statistics
import sys
import time
from types import SimpleNamespace

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import train  # noqa: E402
from edgetap import fused_reads, photobanks, synth, synth_options  # noqa: E402
from edgetap.model import EdgeTap, EdgeTapConfig, count_params  # noqa: E402
from edgetap.weights import load_checkpoint  # noqa: E402


def timed(fn, dev):
    sync = torch.cuda.synchronize if dev.type == "cuda" else (lambda: None)
    sync()
    t0 = time.perf_counter()
    out = fn()
    sync()
    return out, 1000 * (time.perf_counter() - t0)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ckpt", default=os.path.join(HERE, "checkpoints", "edgetap-small.pt"))
    ap.add_argument("--data", default=os.path.join(HERE, ".data"))
    ap.add_argument("--batches", default="6,12,24")
    ap.add_argument("--size", type=synth.parse_clip_size, default=256, help="a side or WxH")
    ap.add_argument("--frames", type=int, default=32)
    ap.add_argument("--tracks", type=int, default=256)
    ap.add_argument("--steps", type=int, default=8)
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--self-init", type=float, default=0.6)
    train.add_step_args(ap)     # generator options and --graph-entries, as train.py's
    ap.add_argument("--cpu", action="store_true", help="run on the CPU, fp32 (a smoke test of this script)")
    ap.add_argument("--profile", metavar="FILE", help="profile one more step; operator table to FILE")
    ap.add_argument("--config", type=json.loads, default=None,
                    help="JSON object of hyper-parameters replacing the checkpoint's (fresh weights)")
    args = ap.parse_args()
    synth_opt = synth_options.options_from_args(args)
    dev = torch.device("cpu" if args.cpu else "cuda")
    torch.backends.cudnn.benchmark = True
    torch.backends.cuda.matmul.allow_tf32 = True
    torch.backends.cudnn.allow_tf32 = True
    ck = load_checkpoint(args.ckpt) if os.path.exists(args.ckpt) else None
    cfg = EdgeTapConfig.from_dict(ck["config"]) if ck else EdgeTapConfig()
    if args.config:
        try:
            cfg = cfg.replaced(args.config)
        except (TypeError, ValueError) as e:
            sys.exit(f"bench_step.py: --config: {e}")
    model = EdgeTap(cfg).to(dev)
    if ck and not args.config:
        model.load_state_dict(ck["model"])
    print(f"parameters {count_params(model):,}", flush=True)
    model = model.to(memory_format=torch.channels_last).train()
    model.graph_entries = args.graph_entries
    fused_reads.enable(args.fused_reads)
    opt = train.make_optimizer(model, 1e-5, 0.02)
    banks = photobanks.load_train_banks(args.data, dev, "train")
    gen = torch.Generator().manual_seed(0)
    amp = dict(device_type=dev.type, dtype=torch.bfloat16, enabled=not args.cpu)
    name = "CPU" if args.cpu else torch.cuda.get_device_name()
    print(f"{name}; torch {torch.__version__}; size {synth.clip_size(args.size)}, {args.frames} frames, "
          f"{args.tracks} tracks", flush=True)
    clip = None

    def step(i, step_args):
        nonlocal clip
        part = i % args.clip_reuse
        ms_synth = 0.0
        if part == 0:
            clip, ms_synth = timed(lambda: train.synthesize(banks, step_args, args.size, gen, synth_opt, dev,
                                                            args.clip_reuse), dev)
        batch, ms_inputs = timed(lambda: train.batch_inputs(clip, part, args.tracks, args.size,
                                                            args.self_init, model.cfg.entry_velocity), dev)
        _, ms_fb = timed(lambda: train.forward_backward(model, opt, batch, amp), dev)
        _, ms_opt = timed(lambda: train.optimizer_step(model, opt), dev)
        return ms_synth + ms_inputs, ms_fb, ms_opt

    for B in [int(b) for b in args.batches.split(",")]:
        step_args = SimpleNamespace(batch=B, frames=args.frames, tracks=args.tracks)
        if not args.cpu:
            torch.cuda.reset_peak_memory_stats()
        t = dict(synth=[], fwd_bwd=[], optimizer=[])
        for i in range(args.warmup + args.steps):
            ms_synth, ms_fb, ms_opt = step(i, step_args)
            if i >= args.warmup:
                for k, ms in zip(t, (ms_synth, ms_fb, ms_opt)):
                    t[k].append(ms)
        # synthesis by its mean: with --clip-reuse K it runs at one step in K
        med = {k + "_ms": round((statistics.mean if k == "synth" else statistics.median)(v), 1) for k, v in t.items()}
        total = sum(med.values())
        print(json.dumps(dict(batch=B, **med, step_ms=round(total, 1), clips_per_s=round(1000 * B / total, 2),
                              synthesized_clips_per_s=round(1000 * B / total / args.clip_reuse, 2),
                              peak_GiB=None if args.cpu else round(torch.cuda.max_memory_allocated() / 2 ** 30, 2))),
              flush=True)
    if args.profile:
        write_profile(args.profile, lambda: step(0, step_args), dev)


def write_profile(path, run_step, dev):
    """Runs one step under the PyTorch profiler; writes its operators, dearest first, to path."""
    from torch.profiler import ProfilerActivity, profile
    activities = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if dev.type == "cuda" else [])
    with profile(activities=activities, record_shapes=True) as prof:
        run_step()
    key = "self_device_time_total" if dev.type == "cuda" else "self_cpu_time_total"
    averages = prof.key_averages()
    with open(path, "w") as f:
        f.write(f"one step, operators by {key}\n")
        f.write(averages.table(sort_by=key, row_limit=60, max_name_column_width=70) + "\n")
        f.write("by input shapes\n")
        f.write(prof.key_averages(group_by_input_shape=True).table(sort_by=key, row_limit=40,
                                                                    max_name_column_width=50) + "\n")
    print(f"profile written to {path}", flush=True)


if __name__ == "__main__":
    main()
