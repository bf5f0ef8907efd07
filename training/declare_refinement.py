#!/usr/bin/env python3
"""Declares template refinement on an exported model without re-exporting its weights: writes the
.json's "refinement" (edgetap/refine.py's settings) and adds refined_xy, the golden clip's outputs
after refinement, to its golden vectors. For a model whose checkpoint no longer reproduces the
shipped file exactly (edgetap-small: its committed checkpoint is compact, FP16); export.py
--refinement does the same while exporting.

  python3 training/declare_refinement.py models/edgetap-small tests/data/golden/edgetap-small-golden.safetensors
"""
import argparse
import collections
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from edgetap import refine  # noqa: E402
from edgetap.weights import read_safetensors, write_safetensors  # noqa: E402
from export import refined_positions  # noqa: E402


def declare(stem, golden_path, refinement=None):
    """Adds `refinement` (default refine.DEFAULT) to <stem>.json after its vis_threshold, and the
    matching refined_xy to the golden file. Returns the number of golden positions it moved."""
    refinement = dict(refinement or refine.DEFAULT)
    json_path = stem + ".json"
    info = json.load(open(json_path), object_pairs_hook=collections.OrderedDict)
    out = collections.OrderedDict()
    for key, value in info.items():
        if key == "refinement":
            continue
        out[key] = value
        if key == "vis_threshold":
            out["refinement"] = refinement
    if "refinement" not in out:
        raise SystemExit(f"declare_refinement: {json_path}: no vis_threshold to place the refinement after")
    g, meta = read_safetensors(golden_path)
    g["refined_xy"] = refined_positions(g, refinement, out.get("visible_rule", "vis"), out.get("vis_threshold", 0.5))
    meta = dict(meta or {})
    meta["refinement"] = json.dumps(dict(refinement, visible_rule=out.get("visible_rule", "vis"),
                                         vis_threshold=out.get("vis_threshold", 0.5)))
    meta["refined_xy"] = "[T,N,2] out_xy after template refinement (edgetap/refine.py)"
    with open(json_path, "w") as f:
        json.dump(out, f, indent=1)
    write_safetensors(golden_path, g, meta)
    return int(((abs(g["refined_xy"] - g["out_xy"])).sum(-1) > 0).sum())


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("stem", help="the model without its extension (models/edgetap-small)")
    ap.add_argument("golden", help="its golden vectors (.safetensors)")
    args = ap.parse_args()
    moved = declare(args.stem, args.golden)
    print(f"declared refinement {refine.DEFAULT} in {args.stem}.json; {args.golden}: refined_xy ({moved} positions moved)")


if __name__ == "__main__":
    main()
