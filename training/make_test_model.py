#!/usr/bin/env python3
"""Writes tiny random-weight EdgeTAP networks and their golden vectors for the C++ engine's parity
tests of configurations the shipped model does not use (a 3x3 query neighbourhood, other widths,
window and iteration counts; cross-track layers after both blocks; a stride-2 level). Random
weights of fixed seeds; no training.

  python3 training/make_test_model.py      (writes tests/data/golden/edgetap-tiny-qp3.*,
                                            edgetap-tiny-cross.* and edgetap-tiny-fine.*)
"""
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


def random_model(cfg, seed):
    """Random weights (the zero-initialized head included, scaled for displacements of a few
    pixels per iteration) and random BatchNorm statistics, then folded."""
    m = randomize_weights_(EdgeTap(cfg).eval(), torch.Generator().manual_seed(seed), 0.3)
    with torch.no_grad():
        m.tracker.head.weight.mul_(10.0)
    return m.fold_bn_()


def main():
    torch.set_num_threads(2)
    out = os.path.join(ROOT, "tests", "data", "golden")
    note = {"note": "random weights for parity tests; not trained"}
    export_model(random_model(TINY, seed=5), out, out, "edgetap-tiny-qp3", training=note)
    export_model(random_model(TINY_CROSS, seed=6), out, out, "edgetap-tiny-cross", training=note)
    export_model(random_model(TINY_FINE, seed=7), out, out, "edgetap-tiny-fine", training=note)


if __name__ == "__main__":
    main()
