"""The moving average of the weights (train.py --ema): its arithmetic, resuming it, and a chunk
that keeps, validates and saves it (the chunk needs training/.data from prepare_data.py)."""
import json
import os
import subprocess
import sys

import pytest
import torch

HERE = os.path.dirname(__file__)
sys.path.insert(0, os.path.join(HERE, ".."))
from edgetap.ema import WeightAverage  # noqa: E402
from edgetap.model import EdgeTap, EdgeTapConfig  # noqa: E402
from edgetap.weights import load_checkpoint, load_checkpoint_model, randomize_weights_  # noqa: E402

DATA = os.path.join(HERE, "..", ".data")
TINY = EdgeTapConfig(enc_channels=(8, 8, 16, 16, 16), feat_dim=16, radius=2, width=32, heads=2, blocks=2,
                     mlp_ratio=2, iters=2, window=3, n_freq=2, corr_hidden=32)


def _model(seed):
    return randomize_weights_(EdgeTap(TINY), torch.Generator().manual_seed(seed), 0.2)


def test_the_average_moves_by_one_minus_decay_and_copies_counters():
    model = _model(1)
    start = {k: v.clone() for k, v in model.state_dict().items()}
    avg = WeightAverage(model, 0.9)
    assert not avg.resumed
    with torch.no_grad():
        for p in model.parameters():
            p.add_(1.0)
        model.encoder.stem.bn.running_mean.add_(2.0)
        model.encoder.stem.bn.num_batches_tracked.add_(5)
    avg.update(model)
    got = avg.state_dict()
    for k, v in model.state_dict().items():
        if v.is_floating_point():
            assert torch.allclose(got[k], 0.9 * start[k] + 0.1 * v, atol=1e-6), k
        else:
            assert torch.equal(got[k], v), k
    # the trained network is not touched, and the average is its own copy
    assert torch.allclose(model.encoder.stem.bn.running_mean, start["encoder.stem.bn.running_mean"] + 2.0)
    assert all(not p.requires_grad for p in avg.model.parameters())


def test_a_saved_average_resumes_only_when_it_fits_the_network():
    model = _model(2)
    saved = {k: v + 0.5 if v.is_floating_point() else v for k, v in _model(3).state_dict().items()}
    resumed = WeightAverage(model, 0.99, saved)
    assert resumed.resumed
    assert torch.equal(resumed.state_dict()["tracker.h0"], saved["tracker.h0"])
    grown = EdgeTapConfig(**dict(TINY.__dict__, strides=(2, 4, 8, 16, 32)))
    fresh = WeightAverage(randomize_weights_(EdgeTap(grown), torch.Generator().manual_seed(4), 0.2), 0.99, saved)
    assert not fresh.resumed


def test_decay_outside_the_open_unit_interval_is_refused():
    for decay in (0.0, 1.0, 1.5):
        with pytest.raises(ValueError, match="decay"):
            WeightAverage(_model(5), decay)


@pytest.mark.skipif(not os.path.isdir(DATA), reason="run training/prepare_data.py first")
def test_a_chunk_keeps_validates_and_saves_the_average(tmp_path):
    ck = tmp_path / "ck.pt"
    base = [sys.executable, os.path.join(HERE, "..", "train.py"), "--cpu", "--ckpt", str(ck), "--batch", "1",
            "--frames", "6", "--tracks", "16", "--sizes", "64", "--val-clips", "1", "--val-frames", "6",
            "--log-every", "1", "--total-seconds", "100", "--self-init", "0"]
    out = subprocess.run(base + ["--max-steps", "3", "--ema", "0.5", "--val-sizes", "96x64"], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    assert "weight average: decay 0.5, starting at the checkpoint's weights" in out.stdout
    final = [json.loads(line) for line in out.stdout.splitlines() if line.startswith('{"val_AJ"')][-1]
    assert "val_AJ_ema" in final and "val_AJ_conf_ema" in final
    assert 0 <= final["val_96x64_AJ"] <= 1 and 0 <= final["val_96x64_AJ_ema"] <= 1   # clips rendered at 96x64
    state = load_checkpoint(str(ck))
    assert state["ema_decay"] == 0.5 and state["ema"].keys() == state["model"].keys()
    differs = [k for k in state["model"] if state["model"][k].is_floating_point()
               and not torch.equal(state["model"][k], state["ema"][k])]
    assert differs, "three steps at decay 0.5 leave the average behind the trained weights"
    averaged, _ = load_checkpoint_model(str(ck), fold=False, ema=True)
    assert torch.equal(averaged.state_dict()["tracker.h0"], state["ema"]["tracker.h0"])
    # a later chunk resumes the average; one without --ema is refused rather than dropping it
    out = subprocess.run(base + ["--max-steps", "4", "--ema", "0.5"], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0 and "resumed from the checkpoint" in out.stdout, out.stderr[-2000:]
    out = subprocess.run(base + ["--max-steps", "5"], capture_output=True, text=True, timeout=300)
    assert out.returncode != 0 and f"{ck} holds averaged weights" in out.stderr


def test_a_checkpoint_without_an_average_is_named_when_one_is_asked_for(tmp_path):
    ck = tmp_path / "plain.pt"
    torch.save(dict(model=_model(6).state_dict(), config=TINY.to_dict()), ck)
    with pytest.raises(ValueError, match=f"{ck}: no averaged weights"):
        load_checkpoint_model(str(ck), ema=True)
