"""Evaluation-set helpers: the support grid beside a sequence's points, generated sets of any
clip size (CPU, tiny random networks; the generated-set check needs training/.data)."""
import os
import sys

import numpy as np
import pytest
import torch

HERE = os.path.dirname(__file__)
sys.path.insert(0, os.path.join(HERE, ".."))
from edgetap import evalsets, photobanks  # noqa: E402
from make_test_model import TINY, TINY_CROSS, random_model  # noqa: E402

DATA = os.path.join(HERE, "..", ".data")


def test_support_grid_covers_the_frame_evenly():
    g = evalsets.support_grid(4, 96, 64)
    assert g.shape == (16, 2)
    assert np.allclose(np.unique(g[:, 0]), [11.5, 35.5, 59.5, 83.5])      # cell centres, x along W
    assert np.allclose(np.unique(g[:, 1]), [7.5, 23.5, 39.5, 55.5])       # y along H


def _sequence(T=6, N=5, W=96, H=64):
    gen = torch.Generator().manual_seed(3)
    video = (torch.rand(T, 3, H, W, generator=gen) * 255).to(torch.uint8)
    q = np.stack([np.linspace(10, 80, N), np.linspace(8, 50, N)], -1)
    return dict(name="s", video=video, W=W, H=H, q=q, tq=np.array([0, 0, 1, 2, 3])[:N])


def test_support_points_are_tracked_but_not_returned():
    """Without a cross-track layer every track is computed alone, so a support grid changes
    nothing; with one, the sequence's tracks see the grid, yet only theirs come back."""
    seq = _sequence()
    alone = random_model(TINY, seed=5)
    xy0, vis0, conf0 = evalsets.run_tracker(alone, seq, "cpu")
    xy4, vis4, conf4 = evalsets.run_tracker(alone, seq, "cpu", support=4)
    assert xy4.shape == xy0.shape == (5, 6, 2) and vis4.shape == (5, 6)
    assert np.allclose(xy4, xy0, atol=1e-4) and np.allclose(vis4, vis0, atol=1e-5)
    crossing = random_model(TINY_CROSS, seed=6)
    xy0, _, _ = evalsets.run_tracker(crossing, seq, "cpu")
    xy4, _, _ = evalsets.run_tracker(crossing, seq, "cpu", support=4)
    assert xy4.shape == xy0.shape
    assert np.abs(xy4 - xy0).max() > 1e-3


@pytest.mark.skipif(not os.path.isdir(DATA), reason="run training/prepare_data.py first")
def test_generated_sequences_of_a_wide_size():
    banks = photobanks.load_train_banks(DATA, "cpu", split="val", n_blobs=8)
    seqs = evalsets.generated_sequences(banks, dict(evalsets.VAL, clips=1, frames=4, size=(128, 64), points=16), "cpu")
    s = seqs[0]
    assert (s["W"], s["H"]) == (128, 64) and tuple(s["video"].shape) == (4, 3, 64, 128)
    assert s["gt_xy"][..., 0].max() > 64     # x runs along the width


@pytest.mark.skipif(not os.path.isdir(DATA), reason="run training/prepare_data.py first")
def test_a_rounds_generator_flags_reach_the_generated_sets():
    """evaluate.py --limb-prob/--flat-prob ... render gen/val with a round's training options;
    without them the sets are the fixed defaults."""
    import argparse
    sys.path.insert(0, os.path.join(HERE, ".."))
    from evaluate import load_set
    from edgetap import synth_options
    ap = argparse.ArgumentParser()
    synth_options.add_option_args(ap)
    assert synth_options.options_from_args(ap.parse_args([])) == synth_options.SynthOptions()
    opt = synth_options.options_from_args(ap.parse_args(["--flat-prob", "1", "--limb-prob", "0.3"]))
    assert opt == synth_options.SynthOptions(flat_prob=1.0, limb_prob=0.3)
    slow = synth_options.options_from_args(ap.parse_args(["--time-scale", "0.5"]))
    assert slow == synth_options.SynthOptions(time_scale=0.5)
    # val-long keeps a round's options but its own time scale
    assert evalsets.val_long_options(opt) == synth_options.SynthOptions(
        flat_prob=1.0, limb_prob=0.3, time_scale=evalsets.VAL_LONG_TIME_SCALE)
    long_set = load_set("val-long", DATA, "cpu", size=64)
    assert len(long_set) == evalsets.VAL_LONG["clips"]
    assert tuple(long_set[0]["video"].shape) == (evalsets.VAL_LONG["frames"], 3, 64, 64)
    # val-turn keeps a round's options and turns every body that may
    assert evalsets.val_variant_options("val-turn", opt) == synth_options.SynthOptions(
        flat_prob=1.0, limb_prob=0.3, turn_prob=1.0)
    assert evalsets.val_variant_options("val-pale") == synth_options.SynthOptions(pale_prob=1.0)
    assert evalsets.val_variant_options("val-follow", slow) == synth_options.SynthOptions(follow_prob=1.0, time_scale=0.5)
    turn_set = load_set("val-turn", DATA, "cpu", size=64)
    assert len(turn_set) == evalsets.VAL["clips"]
    plain_set = load_set("val", DATA, "cpu", size=64)
    assert tuple(turn_set[0]["video"].shape) == tuple(plain_set[0]["video"].shape)
    assert any(not np.array_equal(p["video"].numpy(), q["video"].numpy()) for p, q in zip(plain_set, turn_set))
    pale_set = load_set("val-pale", DATA, "cpu", size=64)
    # the same clips, only paler: the pale cut-outs' draw leaves the generator's stream alone
    assert all(np.array_equal(p["gt_xy"], q["gt_xy"]) and np.array_equal(p["gt_vis"], q["gt_vis"])
               for p, q in zip(plain_set, pale_set))
    assert any(not np.array_equal(p["video"].numpy(), q["video"].numpy()) for p, q in zip(plain_set, pale_set))
    relit_set = load_set("val-relight", DATA, "cpu", size=64)
    # relit: the same clips and tracks too, their bodies' shading changed
    assert all(np.array_equal(p["gt_xy"], q["gt_xy"]) and np.array_equal(p["gt_vis"], q["gt_vis"])
               for p, q in zip(plain_set, relit_set))
    assert any(not np.array_equal(p["video"].numpy(), q["video"].numpy()) for p, q in zip(plain_set, relit_set))
    plain = plain_set[0]
    flat = load_set("val", DATA, "cpu", size=64, gen_opt=opt)[0]
    assert plain["video"].shape == flat["video"].shape
    assert not np.array_equal(plain["video"].numpy(), flat["video"].numpy())


def test_a_resized_sequence_keeps_its_pixels_and_maps_positions_through_the_scale():
    """evaluate.py --resize-generated: frames resized, everything scored stays in the
    sequence's pixels; a point x of the original lands on (x + 0.5) * s - 0.5 of the resized
    frames (run_tracker's mapping), where a horizontal ramp keeps its value."""
    seq = _sequence(W=96, H=64)
    assert evalsets.resized_sequence(seq, (192, 96))["video"].dtype == torch.uint8
    seq["video"] = (torch.arange(96, dtype=torch.float32) * 2).expand(6, 3, 64, 96)    # value 2x at x
    big = evalsets.resized_sequence(seq, (192, 96))
    assert tuple(big["video"].shape) == (6, 3, 96, 192)
    assert (big["W"], big["H"]) == (96, 64) and big["q"] is seq["q"]
    for x_big in (20, 21, 81, 160):
        x = (x_big + 0.5) / 2 - 0.5                         # where the resized pixel sits in the original
        assert float(big["video"][0, 0, 30, x_big]) == pytest.approx(2 * x, abs=1e-3)
    seq["video"] = seq["video"].to(torch.uint8)
    small = evalsets.resized_sequence(seq, 64)
    assert tuple(small["video"].shape) == (6, 3, 64, 64)
    xy, vis, _ = evalsets.run_tracker(random_model(TINY, seed=5), small, "cpu")
    assert xy.shape == (5, 6, 2) and np.allclose(xy[:, 0][seq["tq"] == 0], seq["q"][seq["tq"] == 0], atol=1e-3)
