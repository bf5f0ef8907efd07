"""CPU checks of the training-data preparation (no torch, no Debian packages needed)."""
import os
import sys

import numpy as np
from PIL import Image

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
import prepare_data  # noqa: E402


def test_flat_fraction_counts_textureless_neighbourhoods():
    rng = np.random.default_rng(0)
    flat = Image.fromarray(np.full((512, 512, 3), 120, np.uint8))
    noise = Image.fromarray(rng.integers(0, 256, (512, 512, 3), dtype=np.uint8))
    half = np.full((512, 512, 3), 120, np.uint8)
    half[:, 256:] = rng.integers(0, 256, (512, 256, 3), dtype=np.uint8)
    # a smooth ramp of 0.5 grey levels per pixel at 256 px is flat too; a hard edge is not
    ramp = Image.fromarray(np.repeat(np.tile(np.linspace(0, 255, 512).astype(np.uint8)[None, :, None],
                                             (512, 1, 1)), 3, 2))
    assert prepare_data.flat_fraction(flat) == 1.0
    assert prepare_data.flat_fraction(noise) == 0.0
    assert abs(prepare_data.flat_fraction(Image.fromarray(half)) - 0.5) < 0.05
    assert prepare_data.flat_fraction(ramp) > 0.95


def test_square_crops_cover_the_long_side():
    im = Image.fromarray(np.zeros((300, 900, 3), np.uint8))
    crops = prepare_data.square_crops(im, 128)
    assert len(crops) == 2 and all(c.size == (128, 128) for c in crops)
