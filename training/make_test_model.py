#!/usr/bin/env python3
"""Writes tiny random-weight EdgeTAP networks and their golden vectors for the C++ engine's parity
tests of configurations the shipped model does not use (a 3x3 query neighbourhood, other widths,
window and iteration counts; cross-track layers after both blocks; a stride-2 level; frames
entered with a velocity-extrapolated estimate, entry_velocity 0.5; recent descriptors; cross-scale
reads). Random
weights of fixed seeds; no training.

  python3 training/make_test_model.py [NAME ...]   (writes tests/data/golden/NAME.* and
                                                    NAME-golden.safetensors; default: all of them)
"""
import argparse
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from edgetap.model import EdgeTap, EdgeTapConfig  # noqa: E402
from edgetap.weights import randomize_weights_  # noqa: E402
from export import ROOT, export_model  # noqa: E402

TINY = EdgeTapConfig(version="edgetap-tiny-qp3 (random weights, seed 5)", enc_channels=(8, 8, 16, 16, 16),
                     feat_dim=16, radius=2, query_patch=3, width=32, heads=2, blocks=2, mlp_ratio=2,
                     iters=2, window=3, n_freq=2, corr_hidden=32)
TINY_CROSS = EdgeTapConfig(**dict(TINY.__dict__, version="edgetap-tiny-cross (random weights, seed 6)",
                                  cross_after=(0, 1)))
TINY_FINE = EdgeTapConfig(**dict(TINY.__dict__, version="edgetap-tiny-fine (random weights, seed 7)",
                                 strides=(2, 4, 8, 16, 32), cross_after=(1,)))
# 0.5, not 1: a wrong factor fails the parity test as well as an ignored one. A random network's
# displacements do not follow the clip, and extrapolating them at 1 compounds them: at the usual head
# scale its tracks end hundreds of pixels outside the 96x64 clip, where the correlations are
# padding and the engines' rounding grows past the tolerances; at 0.5 and head scale 3 they
# leave it by ~12 px, as the other tiny networks' do.
TINY_VELOCITY = EdgeTapConfig(**dict(TINY.__dict__, version="edgetap-tiny-velocity (random weights, seed 8)",
                                     entry_velocity=0.5))
# A second descriptor set per track, sampled at its previous output (3x3 per level, as the query's).
# Head scale 2: at 10 its tracks drift ~100 px out of the clip, where both sets' correlations are
# padding; at 2 they stay within ~16 px of it, so the recent half of the correlation is exercised.
TINY_RECENT = EdgeTapConfig(**dict(TINY.__dict__, version="edgetap-tiny-recent (random weights, seed 9)",
                                   recent_descriptors=True))
# Each level's query descriptors also read in the neighbouring levels' windows, over five levels
# (the stride-2 one too: 8 more reads); the shipped edgetap-large covers the four-level layout.
TINY_SCALE = EdgeTapConfig(**dict(TINY.__dict__, version="edgetap-tiny-scale (random weights, seed 10)",
                                  strides=(2, 4, 8, 16, 32), cross_scale=True))
# name: (configuration, seed, head scale)
TEST_MODELS = {
    "edgetap-tiny-qp3": (TINY, 5, 10.0),
    "edgetap-tiny-cross": (TINY_CROSS, 6, 10.0),
    "edgetap-tiny-fine": (TINY_FINE, 7, 10.0),
    "edgetap-tiny-velocity": (TINY_VELOCITY, 8, 3.0),
    "edgetap-tiny-recent": (TINY_RECENT, 9, 2.0),
    "edgetap-tiny-scale": (TINY_SCALE, 10, 3.0),
}


def random_model(cfg, seed, head_scale=10.0):
    """Random weights (the zero-initialized head included, its weights times head_scale for
    displacements of a few pixels per iteration) and random BatchNorm statistics, then folded."""
    m = randomize_weights_(EdgeTap(cfg).eval(), torch.Generator().manual_seed(seed), 0.3)
    with torch.no_grad():
        m.tracker.head.weight.mul_(head_scale)
    return m.fold_bn_()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("names", nargs="*", metavar="NAME", help="which to write (default: all): " + ", ".join(TEST_MODELS))
    ap.add_argument("--out", default=os.path.join(ROOT, "tests", "data", "golden"))
    args = ap.parse_args()
    unknown = [n for n in args.names if n not in TEST_MODELS]
    if unknown:
        ap.error(f"unknown {', '.join(unknown)}; choose from {', '.join(TEST_MODELS)}")
    torch.set_num_threads(2)
    note = {"note": "random weights for parity tests; not trained"}
    for name in args.names or TEST_MODELS:
        cfg, seed, head_scale = TEST_MODELS[name]
        export_model(random_model(cfg, seed, head_scale), args.out, args.out, name, training=note)


if __name__ == "__main__":
    main()
