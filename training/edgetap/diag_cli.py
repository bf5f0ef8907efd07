"""The command lines the diagnostics share: the BADJA ones (diag_badja.py, diag_features.py):
which weights, which sequences, at which input size; the generated-set ones (diag_iterations.py,
diag_appearance.py): which weights, which prepared data."""
import argparse
import os

import torch

from . import evalsets, photobanks, synth
from .weights import load_model_or_exit

TRAINING = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def badja_parser(description=None):
    """Sequences (default all three), --size (default the frames' shape), --weights / --ckpt [--ema],
    --eval-root."""
    ap = argparse.ArgumentParser(description=description)
    ap.add_argument("sequences", nargs="*", default=["camel", "cows", "dog"])
    ap.add_argument("--size", type=synth.parse_clip_size, default=(768, 448), help="model input: a side or WxH")
    ap.add_argument("--weights", default=os.path.join(TRAINING, "..", "models", "edgetap-small.safetensors"))
    ap.add_argument("--ckpt", default=None, help="a training checkpoint instead of --weights")
    ap.add_argument("--ema", action="store_true", help="with --ckpt: its averaged weights")
    ap.add_argument("--eval-root", default=os.path.join(TRAINING, "..", "..", "shared", "data", "eval"))
    return ap


def generated_parser(description=None):
    """--weights (default edgetap-large) / --ckpt [--ema], --data (prepare_data.py's folder)."""
    ap = argparse.ArgumentParser(description=description)
    ap.add_argument("--weights", default=os.path.join(TRAINING, "..", "models", "edgetap-large.safetensors"))
    ap.add_argument("--ckpt", default=None, help="a training checkpoint instead of --weights")
    ap.add_argument("--ema", action="store_true", help="with --ckpt: its averaged weights")
    ap.add_argument("--data", default=os.path.join(TRAINING, ".data"))
    return ap


def generated_set(args):
    """The fixed generated evaluation set (evalsets.GEN_EVAL, reserved photos) from --data, on the CPU."""
    return evalsets.generated_sequences(photobanks.load_reserved_banks(args.data, "cpu"), evalsets.GEN_EVAL, "cpu")


def encode_clip(model, video, chunk=8):
    """The network's feature pyramid of every frame of `video` [T, 3, H, W], `chunk` frames per
    encoder call (bounded memory on the CPU): per level [T, D, h, w]."""
    with torch.no_grad():
        return [torch.cat(f) for f in zip(*(model.encoder(video[t:t + chunk].float())
                                            for t in range(0, video.shape[0], chunk)))]


def model_of(args, tool):
    """The network the arguments name, on the CPU with 2 threads; a bad choice ends `tool`."""
    torch.set_num_threads(2)
    return load_model_or_exit(tool, args.weights, args.ckpt, args.ema)


def badja_runs(model, args, tool):
    """(name, sequence at --size, the network's estimates in original px) for each sequence named."""
    for name in args.sequences:
        folder = os.path.join(args.eval_root, "badja", name)
        if not os.path.isfile(os.path.join(folder, "gt.json")):
            raise SystemExit(f"{tool}: {folder}: no gt.json (is --eval-root the shared eval folder?)")
        seq = evalsets.load_sequence(folder, size=args.size)
        with torch.no_grad():
            xy, _, _ = evalsets.run_tracker(model, seq, "cpu")
        yield name, seq, xy
