"""The training step's data path on the CPU: a synthesized batch serving several steps
(--clip-reuse) and a resumable chunk run with it (needs training/.data from prepare_data.py)."""
import json
import os
import subprocess
import sys
from types import SimpleNamespace

import pytest
import torch

HERE = os.path.dirname(__file__)
sys.path.insert(0, os.path.join(HERE, ".."))
import train  # noqa: E402
from chunks import train_chunk as _train  # noqa: E402
from edgetap import photobanks, synth  # noqa: E402

DATA = os.path.join(HERE, "..", ".data")
needs_data = pytest.mark.skipif(not os.path.isdir(DATA), reason="run training/prepare_data.py first")


def _rows(clip):
    """Each track as one comparable row: query frame, layer, visibility and positions."""
    B, N, T, _ = clip["tracks"].shape
    return torch.cat([clip["tq"][..., None].float(), clip["layer"][..., None].float(),
                      clip["vis"].float(), clip["tracks"].reshape(B, N, 2 * T)], dim=-1)


@needs_data
def test_reused_clips_give_each_step_its_own_share_of_the_tracks():
    banks = photobanks.load_train_banks(DATA, "cpu", split="val", n_blobs=8)
    args = SimpleNamespace(batch=2, frames=6, tracks=24)
    opt = synth.SynthOptions()
    plain = synth.make_clips(banks, 2, 6, 64, 48, torch.Generator().manual_seed(9), opt, device="cpu")
    reused = train.synthesize(banks, args, 64, torch.Generator().manual_seed(9), opt, "cpu", reuse=2)
    assert torch.equal(reused["video"], plain["video"])
    rows_plain, rows_reused = _rows(plain), _rows(reused)
    # the same 48 tracks per clip, each still whole (query frame, layer, visibility, positions)
    for b in range(2):
        key = lambda r: sorted(map(tuple, r.tolist()))  # noqa: E731
        assert key(rows_reused[b]) == key(rows_plain[b])
    assert not torch.equal(rows_reused, rows_plain)        # and reordered
    steps = [train.batch_inputs(reused, part, 24, 64, self_init=0.5) for part in range(2)]
    for st in steps:
        assert st["tracks"].shape == (2, 24, 6, 2) and st["video"] is reused["video"]
        assert st["vis"].gather(2, st["tq"][..., None]).all()          # visible at the query frame
        assert torch.equal(st["pq"], st["tracks"].gather(2, st["tq"][..., None, None].expand(-1, -1, 1, 2))[:, :, 0])
    # the two steps train on disjoint tracks that together are the synthesized ones
    both = torch.cat([steps[0]["tracks"], steps[1]["tracks"]], dim=1)
    assert torch.equal(both, reused["tracks"])


@needs_data
def test_a_chunk_with_reused_clips_counts_steps_and_clips(tmp_path):
    ck = tmp_path / "ck.pt"
    cmd = [sys.executable, os.path.join(HERE, "..", "train.py"), "--cpu", "--ckpt", str(ck), "--batch", "2",
           "--frames", "6", "--tracks", "16", "--sizes", "64", "--max-steps", "5", "--val-clips", "1",
           "--val-frames", "6", "--log-every", "1", "--total-seconds", "100", "--self-init", "0.5",
           "--clip-reuse", "2"]
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    state = torch.load(ck, map_location="cpu", weights_only=False)
    assert state["step"] == 5
    assert state["clips"] == 6              # batches synthesized at steps 0, 2 and 4, 2 clips each
    bad = subprocess.run(cmd[:-1] + ["0"], capture_output=True, text=True, timeout=60)
    assert bad.returncode != 0 and "--clip-reuse 0" in bad.stderr


@needs_data
def test_each_log_line_counts_the_batches_trained_at_each_size(tmp_path):
    """Sizes are drawn in turn; a log line covering 4 steps at 2 sizes reports 2 batches at each
    (one size per line would hide the others whenever --log-every is a multiple of their number)."""
    cmd = [sys.executable, os.path.join(HERE, "..", "train.py"), "--cpu", "--ckpt", str(tmp_path / "ck.pt"),
           "--batch", "1", "--frames", "6", "--tracks", "16", "--sizes", "64,96x64", "--max-steps", "4",
           "--val-clips", "1", "--val-frames", "6", "--log-every", "4", "--total-seconds", "100"]
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    logged = [json.loads(line) for line in out.stdout.splitlines() if line.startswith('{"loss"')]
    assert [rec["sizes"] for rec in logged] == [{"64": 2, "96x64": 2}]


def _grown_checkpoint(tmp_path):
    """A one-step checkpoint grown by a fourth block and a cross-track layer after it."""
    base, grown = tmp_path / "base.pt", tmp_path / "grown.pt"
    assert _train(base, steps=1).returncode == 0
    grow = subprocess.run([sys.executable, os.path.join(HERE, "..", "grow_checkpoint.py"), "--from", str(base),
                           "--to", str(grown), "--blocks", "4", "--cross-after", "3"],
                          capture_output=True, text=True, timeout=120)
    assert grow.returncode == 0, grow.stderr[-2000:]
    return grown


@needs_data
def test_a_grown_checkpoint_can_train_its_new_parameters_alone(tmp_path):
    """--old-lr-scale 0 on a grown checkpoint: the new block and cross-track layer learn, every
    weight trained before the growth stays as it was, over two chunks."""
    grown = _grown_checkpoint(tmp_path)
    before = torch.load(grown, map_location="cpu", weights_only=False)["model"]
    out = _train(grown, "--new-schedule", "100", "--old-lr-scale", "0", steps=3)
    assert out.returncode == 0, out.stderr[-2000:]
    # a later chunk must say the same
    bad = _train(grown, steps=4)
    assert bad.returncode != 0 and "--old-lr-scale" in bad.stderr
    out = _train(grown, "--old-lr-scale", "0", steps=4)
    assert out.returncode == 0, out.stderr[-2000:]
    after = torch.load(grown, map_location="cpu", weights_only=False)
    assert after["step"] == 4 and after["grown_from"]["config"]["blocks"] == 3
    from edgetap.model import EdgeTap, EdgeTapConfig
    params = {n for n, _ in EdgeTap(EdgeTapConfig.from_dict(after["config"])).named_parameters()}
    new = {n for n in params if n.startswith(("tracker.blocks.3.", "tracker.cross.0."))}
    assert new and all(torch.equal(before[n], after["model"][n]) for n in params - new)
    assert all(not torch.equal(before[n], after["model"][n]) for n in new if n.endswith(("qkv.weight", "proj.weight")))


@needs_data
def test_a_new_schedule_may_change_the_old_parameters_rate(tmp_path):
    """A grown checkpoint trained with --old-lr-scale 0 starts a new schedule at scale 1: its
    AdamW moments follow their parameters by name into the new groups, and the old weights learn."""
    grown = _grown_checkpoint(tmp_path)
    assert _train(grown, "--new-schedule", "100", "--old-lr-scale", "0", steps=3).returncode == 0
    ck = torch.load(grown, map_location="cpu", weights_only=False)
    from edgetap.model import EdgeTap, EdgeTapConfig
    model = EdgeTap(EdgeTapConfig.from_dict(ck["config"]))
    args = SimpleNamespace(ckpt=str(grown), lr=1e-4, wd=0.02)
    saved_opt = train.make_optimizer(model, 1e-4, 0.02, train.old_lr_scale_map(ck, model, 0.0))
    saved = {n: i for i, n in enumerate(train.param_names_in_order(saved_opt, model))}
    opt = train.make_optimizer(model, 1e-4, 0.02)
    sd = train.regrouped_state(ck["opt"], model, ck, opt, args)
    names = train.param_names_in_order(opt, model)
    assert len(sd["state"]) == len(ck["opt"]["state"]) > 0
    for i, st in sd["state"].items():
        assert torch.equal(st["exp_avg"], ck["opt"]["state"][saved[names[i]]]["exp_avg"])
    opt.load_state_dict(sd)
    # the same chunk, without a new schedule, must still refuse the change
    bad = _train(grown, "--old-lr-scale", "1", steps=4)
    assert bad.returncode != 0 and "--new-schedule" in bad.stderr
    out = _train(grown, "--new-schedule", "100", "--old-lr-scale", "1", steps=5)
    assert out.returncode == 0, out.stderr[-2000:]
    after = torch.load(grown, map_location="cpu", weights_only=False)
    assert after["step"] == 5
    old = [n for n in after["model"] if n.startswith("tracker.blocks.0.") and n.endswith("qkv.weight")]
    assert old and all(not torch.equal(ck["model"][n], after["model"][n]) for n in old)


def test_accumulated_batches_give_the_mean_of_their_gradients():
    """forward_backward over two batches, each weighted 1/2 and the second accumulated, leaves
    the mean of the two batches' own gradients in the parameters (train.py --accum)."""
    from edgetap.model import EdgeTap, EdgeTapConfig
    cfg = EdgeTapConfig(enc_channels=(8, 8, 16, 16, 16), feat_dim=16, radius=2, width=32, heads=2, blocks=2,
                        mlp_ratio=2, iters=2, window=3, n_freq=2, corr_hidden=32)
    torch.manual_seed(0)
    model = EdgeTap(cfg).eval()      # eval: BatchNorm uses its running statistics, as in a fixed function
    opt = torch.optim.SGD(model.parameters(), lr=0.0)
    amp = dict(device_type="cpu", dtype=torch.bfloat16, enabled=False)

    def batch(seed):
        g = torch.Generator().manual_seed(seed)
        tracks = torch.rand(1, 6, 4, 2, generator=g) * 60
        tq = torch.zeros(1, 6, dtype=torch.long)
        return dict(video=torch.rand(1, 4, 3, 64, 64, generator=g) * 255, tracks=tracks,
                    vis=torch.ones(1, 6, 4, dtype=torch.bool), tq=tq, pq=tracks[:, :, 0],
                    p_init=tracks + torch.randn(tracks.shape, generator=g), self_mask=None)

    def grads():
        return [p.grad.clone() if p.grad is not None else torch.zeros_like(p) for p in model.parameters()]
    a, b = batch(1), batch(2)
    train.forward_backward(model, opt, a, amp)
    ga = grads()
    train.forward_backward(model, opt, b, amp)
    gb = grads()
    train.forward_backward(model, opt, a, amp, 0.5)
    train.forward_backward(model, opt, b, amp, 0.5, accumulate=True)
    for x, y, z in zip(ga, gb, grads()):
        assert torch.allclose(z, (x + y) / 2, atol=1e-5, rtol=1e-4)
    assert any(not torch.equal(x, y) for x, y in zip(ga, gb))


@needs_data
def test_a_chunk_with_accumulated_batches_counts_steps_and_clips(tmp_path):
    ck = tmp_path / "ck.pt"
    out = _train(ck, "--accum", "3", "--log-every", "1", steps=2)
    assert out.returncode == 0, out.stderr[-2000:]
    state = torch.load(ck, map_location="cpu", weights_only=False)
    assert state["step"] == 2
    assert state["clips"] == 6              # three batches of one clip per optimizer step
    bad = _train(tmp_path / "other.pt", "--accum", "0", steps=1)
    assert bad.returncode != 0 and "--accum 0" in bad.stderr


@needs_data
def test_the_matching_loss_trains_and_logs_its_terms_and_needs_the_windowed_correlation(tmp_path):
    """--match-weight: the step adds losses.match_loss and logs it with each level's share of frames
    matched at the true cell; a network without windowed reads (query_patch 1) refuses it."""
    out = _train(tmp_path / "qp3.pt", "--query-patch", "3", "--match-weight", "0.5", "--log-every", "1", steps=2)
    assert out.returncode == 0, out.stderr[-2000:]
    logged = [json.loads(line) for line in out.stdout.splitlines() if line.startswith("{") and '"match"' in line]
    assert len(logged) == 2
    for rec in logged:
        assert rec["match"] > 0 and rec["loss"] > 0
        assert all(0.0 <= rec[f"match_top1_s{s}"] <= 1.0 for s in (4, 8, 16, 32))
    bad = _train(tmp_path / "qp1.pt", "--match-weight", "0.5", steps=1)
    assert bad.returncode != 0 and "--match-weight 0.5: the network has no windowed correlation" in bad.stderr
