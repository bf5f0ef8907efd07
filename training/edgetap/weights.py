"""Loading and saving EdgeTAP weights: training checkpoints and the shipped safetensors files.

safetensors is written by a tiny writer of our own (no dependency): 8-byte little-endian header
length, a JSON header {name: {dtype, shape, data_offsets}, "__metadata__": {...}} padded with
spaces to a multiple of 8 bytes, then the raw little-endian tensor data in header order.
"""
import json
import os
import struct

import numpy as np
import torch

from .model import EdgeTap, EdgeTapConfig

_DT = {np.dtype("float32"): "F32", np.dtype("float16"): "F16", np.dtype("int64"): "I64", np.dtype("int32"): "I32",
       np.dtype("uint8"): "U8", np.dtype("float64"): "F64"}
_NP = {v: k for k, v in _DT.items()}


def write_safetensors(path, tensors, metadata=None):
    """tensors: dict name -> numpy array (or torch tensor); written in sorted name order."""
    arrs = {}
    for k, v in tensors.items():
        a = v.detach().cpu().numpy() if torch.is_tensor(v) else np.asarray(v)
        arrs[k] = np.ascontiguousarray(a.astype(a.dtype.newbyteorder("<")))
    header, off = {}, 0
    for k in sorted(arrs):
        a = arrs[k]
        header[k] = {"dtype": _DT[a.dtype], "shape": list(a.shape), "data_offsets": [off, off + a.nbytes]}
        off += a.nbytes
    if metadata:
        header["__metadata__"] = {k: str(v) for k, v in metadata.items()}
    hb = json.dumps(header, separators=(",", ":")).encode()
    hb += b" " * ((8 - len(hb) % 8) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(hb)))
        f.write(hb)
        for k in sorted(arrs):
            f.write(arrs[k].tobytes())


def read_safetensors(path):
    with open(path, "rb") as f:
        n = struct.unpack("<Q", f.read(8))[0]
        header = json.loads(f.read(n))
        data = f.read()
    meta = header.pop("__metadata__", {})
    out = {}
    for k, h in header.items():
        b, e = h["data_offsets"]
        out[k] = np.frombuffer(data[b:e], dtype=_NP[h["dtype"]]).reshape(h["shape"]).copy()
    return out, meta


def load_checkpoint(path):
    """A training checkpoint (train.py's dict: weights, optimizer, step, schedule, config, log)."""
    return torch.load(path, map_location="cpu", **({"weights_only": False} if torch.__version__ >= "2" else {}))


def load_checkpoint_model(path, fold=True, ema=False):
    """The checkpoint's network in eval mode: its trained weights, or with `ema` the moving
    average that train.py --ema kept beside them."""
    ck = load_checkpoint(path)
    m = EdgeTap(EdgeTapConfig.from_dict(ck["config"]))
    if ema and "ema" not in ck:
        raise ValueError(f"{path}: no averaged weights in this checkpoint (train.py --ema keeps them)")
    m.load_state_dict(ck["ema"] if ema else ck["model"])
    m.eval()
    if fold:
        m.fold_bn_()
    return m, ck


def load_exported_model(st_path, json_path):
    cfg = EdgeTapConfig.from_dict(json.load(open(json_path))["config"])
    m = EdgeTap(cfg).fold_bn_().eval()
    tensors, _ = read_safetensors(st_path)
    sd = {k: torch.from_numpy(v).float() for k, v in tensors.items()}   # F16 files widen exactly
    m.load_state_dict(sd, strict=True)
    return m


def load_model(weights, ckpt=None, ema=False):
    """The network to evaluate, in eval mode with BatchNorm folded: the training checkpoint
    `ckpt` (its averaged weights with `ema`) when given, else the exported `weights`
    (NAME.safetensors beside NAME.json)."""
    if ema and not ckpt:
        raise ValueError("--ema needs --ckpt (exported weights hold one set)")
    if ckpt:
        return load_checkpoint_model(ckpt, ema=ema)[0]
    return load_exported_model(weights, os.path.splitext(weights)[0] + ".json")


def load_model_or_exit(tool, weights, ckpt=None, ema=False):
    """load_model for a command line: a bad choice or file ends `tool` with its message."""
    try:
        return load_model(weights, ckpt, ema)
    except ValueError as e:
        raise SystemExit(f"{tool}: {e}")


@torch.no_grad()
def randomize_weights_(model, gen, scale):
    """Every parameter N(0, scale^2) (zero-initialized ones included) and random BatchNorm
    statistics, from `gen`: a network whose every op moves the outputs, for parity tests."""
    for p in model.parameters():
        p.copy_(torch.randn(p.shape, generator=gen) * scale)
    for m in model.modules():
        if isinstance(m, torch.nn.BatchNorm2d):
            m.running_mean.copy_(torch.randn(m.running_mean.shape, generator=gen) * 0.1)
            m.running_var.copy_(torch.rand(m.running_var.shape, generator=gen) + 0.5)
    return model


FP16_MAX = 65504.0


def half_if_in_range(v):
    """A floating-point tensor as FP16 when every value fits FP16's range, else unchanged."""
    if v.is_floating_point() and v.numel() and v.abs().max().item() < FP16_MAX:
        return v.detach().to(torch.float16).cpu()
    return v.detach().cpu()


def compact_checkpoint(ck, keep_ema=False, average_as_weights=False):
    """A training checkpoint small enough to commit and carry: the weights in FP16 (a tensor with
    a value beyond FP16's range stays as it is; integer buffers too), the optimizer's parameter
    groups without its moments, the averaged weights only with keep_ema (also FP16), and every
    counter and schedule entry unchanged. train.py resumes it by re-warming the rate over
    --warmup steps while AdamW rebuilds its moments.
    average_as_weights: the averaged weights take the trained weights' place (training resumes
    from the average, and export.py without --ema writes it); recorded as
    `averaged = {decay, step}`, which export.py reads while the step is still that one."""
    if average_as_weights and "ema" not in ck:
        raise ValueError("no averaged weights in this checkpoint (train.py --ema keeps them)")
    if average_as_weights and keep_ema:
        raise ValueError("keep_ema with average_as_weights would store the average twice")
    out = {k: v for k, v in ck.items() if k not in ("model", "opt", "ema", "ema_decay")}
    out["model"] = {k: half_if_in_range(v) for k, v in ck["ema" if average_as_weights else "model"].items()}
    if average_as_weights:
        out["averaged"] = dict(decay=ck["ema_decay"], step=ck["step"])
    if "opt" in ck:
        out["opt"] = dict(state={}, param_groups=ck["opt"]["param_groups"])
    if keep_ema and "ema" in ck:
        out["ema"] = {k: half_if_in_range(v) for k, v in ck["ema"].items()}
        out["ema_decay"] = ck["ema_decay"]
    out["compact"] = True
    return out
