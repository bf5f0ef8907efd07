"""Diagnostic: how much of the generated evaluation set's difficulty is its photos.

The fixed generated set (evalsets.GEN_EVAL: 48 frames, reserved photos, blob cut-outs of them)
and the validation set (evalsets.VAL: 32 frames, the held-out training backgrounds, tuxpaint
cut-outs and blobs) differ in three ways at once. This renders each spec with the other's
photo banks, so the three can be told apart (CPU, FP32, 16 clips each, about 18 minutes):

  cd training && python3 diag_photos.py [--ckpt checkpoints/edgetap-small.pt] [--ema]

Rows: the validation spec on its own banks, on their photo and their texture-pattern backgrounds
alone, and on the reserved banks; the generated spec on the validation banks, on their blobs
alone, and on its own reserved banks (the evaluation set). Three more rows render the validation
spec on training backgrounds: all but one source's, their photos alone, and that source's photos
alone (--new-source, as sources.txt names it; default the photos added for round 19,
mate-backgrounds, which rounds 1-18 never saw): how much better the network does on backgrounds it
was trained on than on unseen ones of the same kind.
--rows 1,4,8 runs a subset (numbered from 1 as printed).
"""
import argparse
import os
import sys

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from edgetap import evalsets, photobanks  # noqa: E402
from edgetap.weights import load_model_or_exit  # noqa: E402

NEW_IN_ROUND_19 = "debian:mate-backgrounds"


def background_sources(data_dir):
    """{background file name: source} from prepare_data.py's sources.txt."""
    out = {}
    for line in open(os.path.join(data_dir, "sources.txt")):
        parts = line.rstrip("\n").split("\t")
        if len(parts) >= 2 and parts[0].startswith("train/bg/"):
            out[os.path.basename(parts[0])] = parts[1]
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--weights", default=os.path.join(HERE, "..", "models", "edgetap-small.safetensors"))
    ap.add_argument("--ckpt", default=None)
    ap.add_argument("--ema", action="store_true")
    ap.add_argument("--data", default=os.path.join(HERE, ".data"))
    ap.add_argument("--clips", type=int, default=16)
    ap.add_argument("--rows", default=None, help="comma-separated row numbers (from 1); default all")
    ap.add_argument("--new-source", default=NEW_IN_ROUND_19,
                    help="the source (sources.txt) whose photos rows 8-10 hold apart (default: round 19's)")
    args = ap.parse_args()
    dev = torch.device("cpu")
    model = load_model_or_exit("diag_photos", args.weights, args.ckpt, args.ema).to(dev).eval()
    val = photobanks.load_train_banks(args.data, dev, "val")
    reserved = photobanks.load_reserved_banks(args.data, dev)
    val_blobs = photobanks.Banks(val.bg, val.stamps[-photobanks.blob_count("val"):])   # blobs come last
    val_spec = dict(evalsets.VAL, clips=args.clips)
    gen_spec = dict(evalsets.GEN_EVAL, clips=args.clips)
    train = photobanks.load_train_banks(args.data, dev, "train")
    photo = torch.tensor([photobanks.is_photo(f) for f in photobanks.background_files(args.data, "val")])
    train_files = photobanks.background_files(args.data, "train")
    source = background_sources(args.data)
    new = torch.tensor([source[os.path.basename(f)] == args.new_source for f in train_files])
    if not new.any():
        raise SystemExit(f"diag_photos: no training background comes from {args.new_source!r} (sources.txt)")
    train_photo = torch.tensor([photobanks.is_photo(f) for f in train_files])
    rows = [
        ("validation spec (32 frames), validation banks", val, val_spec),
        ("validation spec (32 frames), validation photo backgrounds only", photobanks.Banks(val.bg[photo], val.stamps),
         val_spec),
        ("validation spec (32 frames), validation pattern backgrounds only",
         photobanks.Banks(val.bg[~photo], val.stamps), val_spec),
        ("validation spec (32 frames), reserved banks", reserved, val_spec),
        ("generated spec (48 frames), validation banks", val, gen_spec),
        ("generated spec (48 frames), validation backgrounds, their blobs only", val_blobs, gen_spec),
        ("generated spec (48 frames), reserved banks (the evaluation set)", reserved, gen_spec),
        (f"validation spec (32 frames), training banks but {args.new_source}",
         photobanks.Banks(train.bg[~new], train.stamps), val_spec),
        ("validation spec (32 frames), their photo backgrounds only",
         photobanks.Banks(train.bg[train_photo & ~new], train.stamps), val_spec),
        (f"validation spec (32 frames), {args.new_source}'s photo backgrounds only",
         photobanks.Banks(train.bg[new], train.stamps), val_spec),
    ]
    wanted = set(range(1, len(rows) + 1)) if args.rows is None else {int(r) for r in args.rows.split(",")}
    print(f"{'':72s} {'AJ':>6s} {'d_avg':>6s} {'OA':>6s}")
    for i, (name, banks, spec) in enumerate(rows, 1):
        if i not in wanted:
            continue
        seqs = evalsets.generated_sequences(banks, spec, dev, None)
        s = evalsets.summarize(evalsets.evaluate(model, seqs, dev))
        print(f"{i} {name:70s} {s['AJ']:6.3f} {s['delta_avg']:6.3f} {s['OA']:6.3f}", flush=True)


if __name__ == "__main__":
    main()
