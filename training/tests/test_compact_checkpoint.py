"""Compact checkpoints (compact_checkpoint.py): FP16 weights without AdamW moments, and train.py
resuming one with the rate re-warmed; train.py --config for a new network (the chunks need
training/.data from prepare_data.py)."""
import json
import os
import subprocess
import sys

import pytest
import torch

HERE = os.path.dirname(__file__)
sys.path.insert(0, os.path.join(HERE, ".."))
import train  # noqa: E402
from chunks import train_chunk  # noqa: E402
from edgetap.model import EdgeTap, EdgeTapConfig  # noqa: E402
from edgetap.weights import compact_checkpoint, randomize_weights_  # noqa: E402

DATA = os.path.join(HERE, "..", ".data")
needs_data = pytest.mark.skipif(not os.path.isdir(DATA), reason="run training/prepare_data.py first")
TINY = dict(enc_channels=[8, 8, 16, 16, 16], feat_dim=16, radius=2, width=32, heads=2, blocks=2, mlp_ratio=2,
            iters=2, window=3, n_freq=2, corr_hidden=32)


def _checkpoint():
    model = randomize_weights_(EdgeTap(EdgeTapConfig.from_dict(TINY)), torch.Generator().manual_seed(1), 0.2)
    sd = model.state_dict()
    sd["tracker.h0"] = sd["tracker.h0"].clone()
    sd["tracker.h0"][0] = 1e6                        # beyond FP16's range: must stay FP32
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    for p in model.parameters():
        p.grad = torch.ones_like(p)
    opt.step()
    ema = {k: v + 0.25 if v.is_floating_point() else v for k, v in sd.items()}
    return dict(model=sd, opt=opt.state_dict(), ema=ema, ema_decay=0.998, step=7, seconds=12.5,
                total_seconds=100.0, sched_step=3, sched_seconds=2.0, log=[{"step": 7}], clips=14,
                config=EdgeTapConfig.from_dict(TINY).to_dict())


def test_compact_keeps_weights_to_fp16_precision_and_drops_the_moments():
    ck = _checkpoint()
    out = compact_checkpoint(ck)
    for k, v in ck["model"].items():
        got = out["model"][k]
        if k == "tracker.h0":
            assert got.dtype == torch.float32 and torch.equal(got, v)
        elif v.is_floating_point():
            assert got.dtype == torch.float16, k
            assert torch.allclose(got.float(), v, rtol=1e-3, atol=1e-7), k
        else:
            assert torch.equal(got, v), k                    # counters stay exact
    assert out["opt"]["state"] == {} and out["opt"]["param_groups"] == ck["opt"]["param_groups"]
    assert "ema" not in out and "ema_decay" not in out
    for k in ("step", "seconds", "total_seconds", "sched_step", "sched_seconds", "log", "clips", "config"):
        assert out[k] == ck[k], k
    kept = compact_checkpoint(ck, keep_ema=True)
    assert kept["ema_decay"] == 0.998 and kept["ema"]["tracker.h0"].dtype == torch.float32
    # the original is untouched
    assert ck["model"]["encoder.stem.conv.weight"].dtype == torch.float32 and ck["opt"]["state"]


def test_the_average_can_take_the_weights_place():
    ck = _checkpoint()
    out = compact_checkpoint(ck, average_as_weights=True)
    for k, v in ck["ema"].items():
        if v.is_floating_point() and k != "tracker.h0":
            assert torch.allclose(out["model"][k].float(), v, rtol=1e-3, atol=1e-7), k
            assert not torch.allclose(out["model"][k].float(), ck["model"][k], rtol=1e-3, atol=1e-7), k
    assert "ema" not in out and "ema_decay" not in out
    assert out["averaged"] == dict(decay=0.998, step=7)
    with pytest.raises(ValueError, match="twice"):
        compact_checkpoint(ck, keep_ema=True, average_as_weights=True)
    with pytest.raises(ValueError, match="no averaged weights"):
        compact_checkpoint({k: v for k, v in ck.items() if k != "ema"}, average_as_weights=True)


def _export_json(ckpt, tmp_path, *extra):
    out = tmp_path / "export"
    run = subprocess.run([sys.executable, os.path.join(HERE, "..", "export.py"), "--ckpt", str(ckpt), "--name", "tiny",
                          "--models", str(out), "--golden", str(out), *extra],
                         capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr[-2000:]
    return json.load(open(out / "tiny.json"))["training"]


def test_export_of_a_promoted_average_says_so_until_trained_further(tmp_path):
    ck = _checkpoint()
    ck["log"].append(dict(val_AJ=0.5, val_AJ_ema=0.6, step=7, final=True))
    path = tmp_path / "avg.pt"
    torch.save(compact_checkpoint(ck, average_as_weights=True), path)
    training = _export_json(path, tmp_path)
    assert training["weights"] == "moving average of the trained weights, decay 0.998"
    assert training["final_val"]["val_AJ_ema"] == 0.6
    # once trained past the recorded step, the weights are trained ones again
    later = dict(torch.load(path, map_location="cpu", weights_only=False), step=9)
    torch.save(later, path)
    training = _export_json(path, tmp_path)
    assert "weights" not in training and "val_AJ_ema" not in training["final_val"]


def test_the_rate_re_warms_from_the_resumed_step():
    state = dict(step=20, seconds=50.0, total_seconds=100.0, sched_step=0, sched_seconds=0.0)
    full = train.lr_at(state, 1e-3, 10)
    state["rewarm_step"] = 20
    assert train.lr_at(state, 1e-3, 10) == pytest.approx(full / 10)
    state["step"] = 24
    assert train.lr_at(dict(state, rewarm_step=24 - 9), 1e-3, 10) == pytest.approx(train.lr_at(
        {k: v for k, v in state.items() if k != "rewarm_step"}, 1e-3, 10))


def _train(ck, *extra, steps):
    return train_chunk(ck, *extra, steps=steps, warmup=4)


def test_config_names_an_unknown_hyper_parameter(tmp_path):
    out = _train(tmp_path / "new.pt", "--config", json.dumps(dict(TINY, widht=64)), steps=1)
    assert out.returncode != 0 and "widht" in out.stderr and "width" in out.stderr
    assert not (tmp_path / "new.pt").exists()


@needs_data
def test_a_new_network_from_config_resumes_from_its_compact_checkpoint(tmp_path):
    ck, small = tmp_path / "large.pt", tmp_path / "large-compact.pt"
    out = _train(ck, "--config", json.dumps(TINY), steps=2)
    assert out.returncode == 0, out.stderr[-2000:]
    full = torch.load(ck, map_location="cpu", weights_only=False)
    assert full["config"]["width"] == 32 and full["config"]["enc_channels"] == [8, 8, 16, 16, 16]
    assert full["opt"]["state"]
    # --config on an existing checkpoint is refused
    bad = _train(ck, "--config", json.dumps(TINY), steps=3)
    assert bad.returncode != 0 and "--config only applies to a new checkpoint" in bad.stderr
    comp = subprocess.run([sys.executable, os.path.join(HERE, "..", "compact_checkpoint.py"), "--from", str(ck),
                           "--to", str(small)], capture_output=True, text=True, timeout=120)
    assert comp.returncode == 0, comp.stderr[-2000:]
    assert os.path.getsize(small) < os.path.getsize(ck) / 2
    out = _train(small, "--log-every", "1", steps=4)
    assert out.returncode == 0, out.stderr[-2000:]
    assert "re-warms over 4 steps" in out.stdout
    after = torch.load(small, map_location="cpu", weights_only=False)
    assert after["step"] == 4 and after["config"] == full["config"] and after["opt"]["state"]
    lrs = {json.loads(line)["step"]: json.loads(line)["lr"] for line in out.stdout.splitlines()
           if line.startswith("{") and '"lr"' in line}
    # past the schedule's own 4-step warm-up, so without the re-warming the rate would be at
    # least 0.9 x 6e-4 (the cosine has barely begun); re-warmed it is a quarter or a half of it
    assert lrs and all(lr <= 0.5 * 6e-4 for lr in lrs.values()), lrs
