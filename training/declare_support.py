#!/usr/bin/env python3
"""Declares a grid of support tracks on an exported model without re-exporting its weights: writes
the .json's "support_grid" (after its "refinement", or its "vis_threshold"), which the C++ engine
(SupportGridSession) and evaluate.py read as the published inference protocol; 0 removes it.
export.py --support-grid does the same while exporting.

  python3 training/declare_support.py models/edgetap-large 16
"""
import argparse
import collections
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from edgetap.evalsets import MAX_SUPPORT_GRID  # noqa: E402


def declare(stem, side):
    """Sets <stem>.json's support_grid to `side` (0: removes it); returns the new JSON object."""
    if not 0 <= side <= MAX_SUPPORT_GRID:
        raise SystemExit(f"declare_support: side {side} must be in [0, {MAX_SUPPORT_GRID}]")
    json_path = stem + ".json"
    info = json.load(open(json_path), object_pairs_hook=collections.OrderedDict)
    anchor = "refinement" if "refinement" in info else "vis_threshold"
    if anchor not in info:
        raise SystemExit(f"declare_support: {json_path}: no refinement or vis_threshold to place support_grid after")
    out = collections.OrderedDict()
    for key, value in info.items():
        if key == "support_grid":
            continue
        out[key] = value
        if key == anchor and side:
            out["support_grid"] = side
    with open(json_path, "w") as f:
        json.dump(out, f, indent=1)
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("stem", help="the model without its extension (models/edgetap-large)")
    ap.add_argument("side", type=int, help="the grid's side (0: no support tracks)")
    args = ap.parse_args()
    declare(args.stem, args.side)
    print(f"{args.stem}.json: support_grid {args.side}" if args.side else f"{args.stem}.json: no support grid")


if __name__ == "__main__":
    main()
