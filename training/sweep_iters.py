#!/usr/bin/env python3
"""Scores the network with other numbers of refinement iterations per frame than it was trained
with (the engine's `iters` override, a rung parameter of the degradation ladder).

  python3 training/sweep_iters.py --ckpt training/checkpoints/edgetap-small.pt --iters 1,2,3,4,6 \
      --sets gen,badja,pairs --out training/results/sweep_iters.json
"""
import argparse
import json
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from edgetap import evalsets  # noqa: E402
from edgetap.weights import load_checkpoint_model  # noqa: E402
from evaluate import load_set  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ckpt", default=os.path.join(HERE, "checkpoints", "edgetap-small.pt"))
    ap.add_argument("--data", default=os.path.join(HERE, ".data"))
    ap.add_argument("--iters", default="1,2,3,4,6")
    ap.add_argument("--sets", default="gen,badja,pairs")
    ap.add_argument("--out", default=os.path.join(HERE, "results", "sweep_iters.json"))
    args = ap.parse_args()
    dev = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    model, _ = load_checkpoint_model(args.ckpt)
    model = model.to(dev).eval()
    trained = model.cfg.iters
    sets = {name: load_set(name, args.data, dev) for name in args.sets.split(",")}
    results = dict(device=str(dev), trained_iters=trained, runs={})
    for k in (int(i) for i in args.iters.split(",")):
        model.cfg.iters = k
        for name, seqs in sets.items():
            per_v, per_c = evalsets.evaluate(model, seqs, dev, with_conf_variant=True)
            row = {"vis": evalsets.summarize(per_v), "vis*conf": evalsets.summarize(per_c)}
            results["runs"][f"{name}/iters={k}"] = row
            brief = {r: {m: round(v, 3) for m, v in row[r].items() if m in ("AJ", "delta_avg", "OA", "PCK@0.2")}
                     for r in row}
            print(name, "iters", k, json.dumps(brief), flush=True)
    model.cfg.iters = trained
    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    with open(args.out, "w") as f:
        json.dump(results, f, indent=1)


if __name__ == "__main__":
    main()
