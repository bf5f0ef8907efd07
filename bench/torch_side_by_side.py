"""The PyTorch side of the GPU comparison: workload W1 (bench/gpu_bench.cpp) through the
PyTorch reference of the same weights, several ways, in one run.

W1: 47 frames 256x256 of bench/texture_frame.hpp's texture (drifting 2 px/frame in x, 1 in y),
batch 1, 256 points on gpu_bench.cpp's grid queried at frame 0. The clip lives on the device as
uint8 before timing; each frame is widened to float inside the timed region.

Modes (each: --warmup untimed clips, then --runs clips timed with CUDA events around the whole
clip; then one profiled clip counting kernels, launch API calls and the peak memory):
  fp32       engine.track_clip: the streaming reference (engine/STREAMING.md), FP32, TF32 off.
  autocast   the same under torch.autocast(float16) (bfloat16 on the CPU).
  compile    torch.compile (--compile-mode) of the encoder and of one whole sync-free tracker
             step (StreamingTracker.step_features), the tracker restarted per clip; if the step
             does not compile, the compiled encoder with the eager step ("compile-enc").
  parallel / parallel-amp
             EdgeTap.forward_parallel over the whole clip at once (FP32 / autocast), entered
             with the streaming entries (engine.streaming_entries, computed before timing), so
             it computes the streaming function: the time of the training-time forward, not of
             a stand-alone tracker (it needs the entries).
  seed       the seed's way: per frame and level the full 4D all-pairs volume between the query
             frame's map and the frame's map, [h*w, h*w] FP32 (64 MiB at stride 4, 256x256; 68.3
             MiB a frame over the levels), each query descriptor's map [h*w] blended from the
             volume's rows at its four cells, then each window read from those maps with
             grid_sample (as RAFT's lookup). Same tracks as fp32 within FP32 rounding.
Each mode's max |dxy| (px, Euclidean) against fp32 is reported.

GPU host (torch 2.11 + CUDA 13):
  python3 bench/torch_side_by_side.py --weights models/edgetap-small.safetensors --out $OUT/torch.json
CPU smoke check (no timings worth reading):
  python3 bench/torch_side_by_side.py --device cpu --frames 4 --points 16 --runs 1
"""
import argparse
import json
import math
import os
import statistics
import sys
import time

import numpy as np
import torch
import torch.nn.functional as F

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "training"))
from edgetap.engine import StreamingTracker, streaming_entries, track_clip  # noqa: E402
from edgetap.sampling import to_grid, window_offsets  # noqa: E402
from edgetap.weights import load_model_or_exit  # noqa: E402

SEED_TOLERANCE_PX = 0.01


# ---- workload ------------------------------------------------------------------------------

def texture_clip(frames, size):
    """[T, 3, size, size] uint8: bench/texture_frame.hpp's frames, computed in float32."""
    f = np.float32
    y, x = np.mgrid[0:size, 0:size].astype(f)
    c = np.arange(3, dtype=f)[:, None, None]
    out = []
    for t in range(frames):
        u, v = x + f(2 * t), y + f(t)
        val = (f(128) + f(60) * np.sin(f(0.11) * u + f(1.3) * c) * np.cos(f(0.07) * v - f(0.5) * c)
               + f(40) * np.sin(f(0.031) * (u + v) + c))
        out.append(np.clip(val, 0, 255).astype(np.uint8))     # truncation, as static_cast
    return torch.from_numpy(np.stack(out))


def grid_points(size, points):
    """[1, N, 2]: gpu_bench.cpp's grid(): cell = size / side, centres (i % side + 0.5) * cell."""
    side = math.ceil(math.sqrt(points))
    cell = size / side
    i = torch.arange(points)
    return torch.stack([(i % side + 0.5) * cell, (i // side + 0.5) * cell], -1).float()[None]


# ---- seed-style correlation: the full 4D volume --------------------------------------------

def all_pairs_volume(fq, ft):
    """fq, ft [B, D, h, w] (query frame, current frame) -> [B, h*w, h*w]: every cell of fq (rows)
    against every cell of ft (columns), / sqrt(D), FP32."""
    D = fq.shape[1]
    return torch.bmm(fq.float().flatten(2).transpose(1, 2), ft.float().flatten(2)) * (D ** -0.5)


def descriptor_maps(volume, xy, patch_radius, h, w):
    """volume [B, h*w, h*w]; xy [B, N, 2] query points in level cells -> [B*N*P, 1, h, w]: the
    correlation map of each query descriptor (patch row-major): the bilinear blend of the volume's
    rows at the descriptor's four neighbour cells (zero outside), = dot(desc, every cell)."""
    B, hw, _ = volume.shape
    pos = (xy[:, :, None] + window_offsets(patch_radius, xy.device)).reshape(B, -1, 2)    # [B, M, 2]
    base = torch.floor(pos)
    out = 0
    for corner in ((0, 0), (1, 0), (0, 1), (1, 1)):
        cell = base + torch.tensor(corner, dtype=base.dtype, device=base.device)
        weight = (1 - (pos - cell).abs()).prod(-1)
        inside = (cell[..., 0] >= 0) & (cell[..., 0] < w) & (cell[..., 1] >= 0) & (cell[..., 1] < h)
        row = (cell[..., 1].clamp(0, h - 1) * w + cell[..., 0].clamp(0, w - 1)).long()
        rows = torch.gather(volume, 1, row[..., None].expand(-1, -1, hw))                # [B, M, h*w]
        out = out + rows * (weight * inside)[..., None]
    return out.reshape(-1, 1, h, w)


def window_lookup(maps, xy, radius):
    """maps [B*N*P, 1, h, w]; xy [B, N, 2] in level cells -> [B, N, P*k*k] (descriptor outer,
    window row-major inner), as sampling.window_correlation orders them."""
    B, N, _ = xy.shape
    h, w = maps.shape[-2:]
    P = maps.shape[0] // (B * N)
    g = xy[:, :, None, None, :].expand(B, N, P, 1, 2).reshape(B * N * P, 1, 1, 2) + window_offsets(radius, xy.device)
    v = F.grid_sample(maps, to_grid(g, h, w), mode="bilinear", padding_mode="zeros", align_corners=True)
    return v.reshape(B, N, -1)


def seed_correlation(fq, ft, pq_l, p_l, patch_radius, radius):
    """One level the seed's way: volume, descriptor maps, windows -> [B, N, P*k*k]."""
    h, w = fq.shape[-2:]
    return window_lookup(descriptor_maps(all_pairs_volume(fq, ft), pq_l, patch_radius, h, w), p_l, radius)


class SeedStyleTracker(StreamingTracker):
    """The streaming tracker with the seed's correlation: it keeps the query frame's maps and
    builds every frame's all-pairs volumes; `keep` also holds every frame's volumes (as an
    offline seed building the clip's volume before tracking would)."""

    def __init__(self, model, tq, pq, keep=False):
        if model.cfg.recent_descriptors:
            raise ValueError("seed style: recent descriptors are not modelled")
        if bool((tq != tq.flatten()[0]).any()):
            raise ValueError("seed style: all tracks must share one query frame")
        super().__init__(model, tq, pq)
        self.q_frame, self.keep, self.kept = int(tq.flatten()[0]), keep, []
        self.query_maps = self.maps = None

    def step_features(self, feats):
        if int(self.t) == self.q_frame:
            self.query_maps = [f.clone() for f in feats]
        if self.query_maps is not None:
            vols = [all_pairs_volume(fq, f) for fq, f in zip(self.query_maps, feats)]
            if self.keep:
                self.kept.append(vols)
            self.maps = [descriptor_maps(v, self.pq / s, self.cfg.query_patch // 2, *f.shape[-2:])
                         for v, s, f in zip(vols, self.cfg.strides, feats)]
        return super().step_features(feats)

    def window_corr(self, tables, p):
        if self.maps is None:       # before the query frame: nothing to correlate, outputs unused
            return super().window_corr(tables, p)
        return torch.cat([window_lookup(m, p / s, self.cfg.radius) for m, s in zip(self.maps, self.cfg.strides)], -1)


# ---- modes: each a function () -> xy [B, N, T, 2] --------------------------------------------

def stream_with(tracker, clip, encoder=None):
    """Steps `tracker` through clip [T, 3, H, W] (device, uint8), encoding with `encoder` if given."""
    xs = []
    for t in range(clip.shape[0]):
        frame = clip[t:t + 1].float()
        xy = tracker.step_features(encoder(frame))[0] if encoder is not None else tracker.step(frame)[0]
        xs.append(xy.clone())
    return torch.stack(xs, 2)


def autocast(dev, on=True):
    return torch.autocast(dev.type, dtype=torch.float16 if dev.type == "cuda" else torch.bfloat16, enabled=on)


def streaming_mode(model, clip, tq, pq, amp):
    def run():
        with torch.no_grad(), autocast(clip.device, amp):
            return track_clip(model, clip[None], tq, pq)[0]
    return run


def seed_mode(model, clip, tq, pq, keep):
    """The streaming reference with the seed's correlation, FP32."""
    return lambda: stream_with(SeedStyleTracker(model, tq, pq, keep), clip)


def parallel_mode(model, clip, tq, pq, amp):
    with torch.no_grad():
        feats = model.encoder(clip.float())
        entries = streaming_entries(model, feats, tq, pq)
        del feats

    def run():
        with torch.no_grad(), autocast(clip.device, amp):
            return model.forward_parallel(clip[None].float(), tq, pq, entries)[0][-1]
    return run


def compile_mode(model, clip, tq, pq, mode, whole_step):
    """torch.compile of the encoder and (whole_step) of the sync-free tracker step. Compiles
    lazily: the first call (a warm-up) raises if compiling fails."""
    encoder = torch.compile(model.encoder, mode=mode)
    st = StreamingTracker(model, tq, pq, sync_free=True)
    if whole_step:
        st.step_features = torch.compile(st.step_features, mode=mode)

    def run():
        st.restart(tq, pq)
        with torch.no_grad():
            return stream_with(st, clip, encoder)
    return run


# ---- measurement -----------------------------------------------------------------------------

def sync(dev):
    if dev.type == "cuda":
        torch.cuda.synchronize(dev)


def timed(run, dev):
    """-> (ms of one clip: CUDA events around it on a GPU, the host clock on the CPU, its output)."""
    if dev.type != "cuda":
        t0 = time.perf_counter()
        out = run()
        return 1e3 * (time.perf_counter() - t0), out
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    out = run()
    end.record()
    end.synchronize()
    return start.elapsed_time(end), out


def time_clips(run, dev, warmup, runs):
    """-> (ms per clip of each timed run, the last output)."""
    for _ in range(warmup):
        run()
    sync(dev)
    results = [timed(run, dev) for _ in range(runs)]
    return [ms for ms, _ in results], results[-1][1]


def raw_events(prof):
    """(name, device type) of every profiled event, read without building FunctionEvents
    (which takes minutes for a clip's ~10^5 kernels)."""
    try:
        return [(e.name(), e.device_type()) for e in prof.profiler.kineto_results.events()]
    except AttributeError:
        return [(e.name, e.device_type) for e in prof.events()]


def profile_clip(run, dev):
    """One profiled clip -> (kernels, launch API calls, peak MB, peak MB above the clip's start).
    On the CPU: (aten ops, None, None, None)."""
    from torch.profiler import ProfilerActivity, profile
    if dev.type != "cuda":
        with profile(activities=[ProfilerActivity.CPU]) as prof:
            run()
        return sum(1 for name, _ in raw_events(prof) if name.startswith("aten::")), None, None, None
    sync(dev)
    torch.cuda.reset_peak_memory_stats(dev)
    base = torch.cuda.memory_allocated(dev)
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        run()
        sync(dev)
    peak = torch.cuda.max_memory_allocated(dev)
    gpu = torch.autograd.DeviceType.CUDA
    events = raw_events(prof)
    kernels = sum(1 for name, d in events if d == gpu and not name.startswith(("Memcpy", "Memset")))
    launches = sum(1 for name, d in events if d != gpu and ("LaunchKernel" in name or "GraphLaunch" in name))
    return kernels, launches, peak / 2 ** 20, (peak - base) / 2 ** 20


def max_dxy(xy, ref):
    return float((xy.float() - ref.float()).norm(dim=-1).max())


def measure(name, make_run, dev, args, ref):
    """Builds, times, profiles and compares one mode -> (result row, its tracks or None)."""
    try:
        run = make_run()
        ms, xy = time_clips(run, dev, args.warmup, args.runs)
        kernels, launches, peak, extra = profile_clip(run, dev) if args.profile else (None,) * 4
    except Exception as e:   # noqa: BLE001 - report any failure of a mode, go on with the others
        print(f"{name}: FAILED: {type(e).__name__}: {(str(e).splitlines() or [''])[0]}", flush=True)
        return dict(mode=name, error=f"{type(e).__name__}: {e}"[:2000]), None
    row = dict(mode=name, ms=ms, median_ms=statistics.median(ms), min_ms=min(ms), max_ms=max(ms),
               kernels=kernels, launch_calls=launches, peak_mb=peak, peak_above_start_mb=extra,
               max_dxy_px=max_dxy(xy, ref) if ref is not None else 0.0)
    print(f"{name}: median {row['median_ms']:.2f} ms per clip, max |dxy| {row['max_dxy_px']:.2e} px", flush=True)
    return row, xy


def run_modes(model, clip, tq, pq, args):
    dev, wanted = clip.device, args.modes.split(",")
    row, ref = measure("fp32", lambda: streaming_mode(model, clip, tq, pq, False), dev, args, None)
    if ref is None:
        return [row]
    plan = [("autocast", "autocast", lambda: streaming_mode(model, clip, tq, pq, True)),
            ("compile", "compile", lambda: compile_mode(model, clip, tq, pq, args.compile_mode, True)),
            ("parallel", "parallel", lambda: parallel_mode(model, clip, tq, pq, False)),
            ("parallel", "parallel-amp", lambda: parallel_mode(model, clip, tq, pq, True)),
            ("seed", "seed", lambda: seed_mode(model, clip, tq, pq, args.seed_keep))]
    rows = [row]
    for key, name, make_run in plan:
        if key not in wanted:
            continue
        rows.append(measure(name, make_run, dev, args, ref)[0])
        if name == "compile" and "error" in rows[-1] and hasattr(torch, "compile"):
            torch._dynamo.reset()      # the whole step did not compile: the encoder alone
            rows.append(measure("compile-enc", lambda: compile_mode(model, clip, tq, pq, args.compile_mode, False),
                                dev, args, ref)[0])
    seed = next((r for r in rows if r["mode"] == "seed" and "error" not in r), None)
    if seed is not None:
        seed["agrees_with_fp32"] = seed["max_dxy_px"] <= SEED_TOLERANCE_PX
        print(f"seed vs fp32: max |dxy| {seed['max_dxy_px']:.3e} px: "
              f"{'agrees' if seed['agrees_with_fp32'] else 'DISAGREES'} (tolerance {SEED_TOLERANCE_PX} px)")
    return rows


# ---- report ----------------------------------------------------------------------------------

def fmt(v, spec):
    return "-" if v is None else format(v, spec)


def print_table(rows, dev):
    head = "launches" if dev.type == "cuda" else "aten ops"
    print(f"\n{'mode':<13}{'median ms':>11}{'min':>10}{'max':>10}{head:>10}{'peak MB':>10}{'max|dxy| px':>13}")
    for r in rows:
        if "error" in r:
            print(f"{r['mode']:<13}  FAILED: {r['error'].splitlines()[0][:80]}")
            continue
        print(f"{r['mode']:<13}{r['median_ms']:>11.2f}{r['min_ms']:>10.2f}{r['max_ms']:>10.2f}"
              f"{fmt(r['kernels'], 'd'):>10}{fmt(r['peak_mb'], '.1f'):>10}{r['max_dxy_px']:>13.2e}")


def seed_volume_bytes(cfg, size):
    """Bytes of one frame's all-pairs volumes (all levels, FP32) at size x size."""
    return sum(4 * ((size // s) ** 2) ** 2 for s in cfg.strides)


def parse_args(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--weights", default=os.path.join(ROOT, "models", "edgetap-small.safetensors"))
    ap.add_argument("--device", default="cuda")
    ap.add_argument("--frames", type=int, default=47)
    ap.add_argument("--size", type=int, default=256)
    ap.add_argument("--points", type=int, default=256)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--warmup", type=int, default=2)
    ap.add_argument("--modes", default="autocast,compile,parallel,seed", help="besides fp32, always run")
    ap.add_argument("--compile-mode", default="default", help="e.g. max-autotune-no-cudagraphs")
    ap.add_argument("--seed-keep", action="store_true", help="seed mode holds every frame's volumes")
    ap.add_argument("--no-profile", dest="profile", action="store_false", help="skip the kernel count and peak memory")
    ap.add_argument("--out", help="JSON results")
    return ap.parse_args(argv)


def main(argv=None):
    args = parse_args(argv)
    dev = torch.device(args.device)
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    model = load_model_or_exit("torch_side_by_side", args.weights).to(dev)
    clip = texture_clip(args.frames, args.size).to(dev)
    pq = grid_points(args.size, args.points).to(dev)
    tq = torch.zeros(pq.shape[:2], dtype=torch.long, device=dev)
    vol = seed_volume_bytes(model.cfg, args.size)
    gpu = torch.cuda.get_device_name(dev) if dev.type == "cuda" else "cpu"
    print(f"torch {torch.__version__}, {gpu}; {args.weights} ({model.cfg.version}); {args.frames} frames "
          f"{args.size}x{args.size}, {args.points} points at frame 0; seed volume {vol / 2 ** 20:.1f} MiB per frame")
    rows = run_modes(model, clip, tq, pq, args)
    print_table(rows, dev)
    if args.out:
        meta = dict(torch=torch.__version__, device=gpu, weights=args.weights, version=model.cfg.version,
                    frames=args.frames, size=args.size, points=args.points, runs=args.runs, warmup=args.warmup,
                    compile_mode=args.compile_mode, tf32=False, seed_volume_bytes_per_frame=vol)
        with open(args.out, "w") as f:
            json.dump(dict(meta=meta, modes=rows), f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
