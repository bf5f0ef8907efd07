"""photobanks.load_train_banks on a tiny data folder built here (no ../shared needed)."""
import os
import sys

import numpy as np
import torch
from PIL import Image

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
from edgetap import photobanks  # noqa: E402

# sorted, the patterns come first; photo_003_ and pattern_000 are validation backgrounds (VAL_BG)
BACKGROUNDS = ("pattern_000", "pattern_001", "pattern_002", "photo_000_0", "photo_001_0", "photo_002_0", "photo_003_0")


def make_data(root):
    bg = os.path.join(root, "train", "bg")
    st = os.path.join(root, "train", "stamps")
    os.makedirs(bg)
    os.makedirs(st)
    rng = np.random.default_rng(0)
    for name in BACKGROUNDS:
        Image.fromarray(rng.integers(0, 256, (64, 64, 3), dtype=np.uint8)).save(os.path.join(bg, name + ".jpg"))
    for i in range(11):   # stamps 0 and 10 are validation-only
        Image.fromarray(rng.integers(0, 256, (32, 32, 4), dtype=np.uint8)).save(os.path.join(st, f"stamp_{i:03d}.png"))
    return root


def test_photo_repeat_draws_photos_more_often_and_changes_nothing_else(tmp_path):
    data = make_data(str(tmp_path))
    plain = photobanks.load_train_banks(data, "cpu", n_blobs=4)
    more = photobanks.load_train_banks(data, "cpu", n_blobs=4, photo_repeat=3)
    # training split: patterns 001-002, photos 000-002; each photo twice more after the plain bank
    assert plain.bg.shape[0] == 5
    assert more.bg.shape[0] == 5 + 2 * 3
    assert torch.equal(more.bg[:5], plain.bg)
    photos = plain.bg[2:]
    assert torch.equal(more.bg[5:8], photos) and torch.equal(more.bg[8:], photos)
    # the cut-outs (9 training stamps, 4 blobs of the photos) do not depend on the repeat
    assert plain.stamps.shape[0] == 9 + 4
    assert torch.equal(more.stamps, plain.stamps)


def test_validation_split_is_disjoint_and_repeats_its_photos_alike(tmp_path):
    data = make_data(str(tmp_path))
    train = photobanks.load_train_banks(data, "cpu", n_blobs=4)
    val = photobanks.load_train_banks(data, "cpu", split="val", n_blobs=4, photo_repeat=2)
    assert val.bg.shape[0] == 2 + 1     # pattern_000, photo_003_0, then photo_003_0 again
    assert torch.equal(val.bg[1], val.bg[2])
    assert not any(torch.equal(v, t) for v in val.bg for t in train.bg)
    assert val.stamps.shape[0] == 2 + 1  # stamps 0 and 10, one blob


def test_blob_count_sets_the_blobs_and_keeps_the_photo_cut_outs(tmp_path):
    data = make_data(str(tmp_path))
    plain = photobanks.load_train_banks(data, "cpu", n_blobs=4)
    more = photobanks.load_train_banks(data, "cpu", n_blobs=12)
    none = photobanks.load_train_banks(data, "cpu", n_blobs=0)
    # 9 training stamps first, then the blobs; the backgrounds do not depend on the count
    assert more.stamps.shape[0] == 9 + 12 and none.stamps.shape[0] == 9
    assert torch.equal(more.stamps[:9], plain.stamps[:9]) and torch.equal(none.stamps, plain.stamps[:9])
    assert torch.equal(more.bg, plain.bg)
    # a blob is a soft-edged cut-out: opaque at its centre, transparent in the corners
    alpha = more.stamps[9:, 3].float()
    c = photobanks.STAMP // 2
    assert (alpha[:, c, c] == 255).all() and (alpha[:, 0, 0] == 0).all()
