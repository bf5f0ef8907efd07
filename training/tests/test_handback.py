"""handback.copy_for_handback: what comes back from the GPU host rejoins to the checkpoint."""
import os
import sys

import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from edgetap.handback import copy_checkpoint_for_handback, copy_for_handback, part_names  # noqa: E402


def test_a_large_file_goes_in_parts_that_rejoin_and_a_later_copy_replaces_them(tmp_path):
    ckpt = tmp_path / "run.pt"
    data = bytes(range(256)) * 3 + b"tail"                  # 772 bytes
    ckpt.write_bytes(data)
    out = tmp_path / "out"
    parts = copy_for_handback(str(ckpt), str(out), part_bytes=300)
    assert [os.path.basename(p) for p in parts] == ["run.pt.part-aa", "run.pt.part-ab", "run.pt.part-ac"]
    assert all(os.path.getsize(p) <= 300 for p in parts)
    assert b"".join(open(p, "rb").read() for p in sorted(parts)) == data
    ckpt.write_bytes(b"small now")
    assert copy_for_handback(str(ckpt), str(out), part_bytes=300) == [str(out / "run.pt")]
    assert sorted(os.listdir(out)) == ["run.pt"]               # the earlier parts are gone
    assert (out / "run.pt").read_bytes() == b"small now"


def test_part_names_follow_split():
    assert part_names(28)[:3] == ["aa", "ab", "ac"] and part_names(28)[25:] == ["az", "ba", "bb"]


def test_a_checkpoint_over_the_limit_goes_back_compacted_with_its_average(tmp_path):
    torch.manual_seed(0)
    w = {"layer.weight": torch.randn(64, 64)}
    moments = {0: {"step": torch.tensor(7.0), "exp_avg": torch.randn(64, 64), "exp_avg_sq": torch.rand(64, 64)}}
    ck = dict(model=w, opt=dict(state=moments, param_groups=[{"lr": 1e-4, "params": [0]}]), step=7, seconds=3.0,
              ema={"layer.weight": w["layer.weight"] * 0.5}, ema_decay=0.998)
    path = tmp_path / "run.pt"
    torch.save(ck, path)
    out = tmp_path / "out"
    # under the limit: the full checkpoint, byte for byte
    [whole] = copy_checkpoint_for_handback(str(path), str(out), limit=os.path.getsize(path))
    assert open(whole, "rb").read() == path.read_bytes()
    # over it: the compact one, same name, in parts if need be; the full one is left in place
    parts = copy_checkpoint_for_handback(str(path), str(out), limit=1000, part_bytes=20000)
    assert all(os.path.basename(p).startswith("run.pt") for p in parts)
    back = tmp_path / "back.pt"
    back.write_bytes(b"".join(open(p, "rb").read() for p in sorted(parts)))
    got = torch.load(back)
    assert got["compact"] and got["step"] == 7 and got["opt"]["state"] == {}
    assert torch.equal(got["model"]["layer.weight"], w["layer.weight"].half())
    assert torch.equal(got["ema"]["layer.weight"], (w["layer.weight"] * 0.5).half()) and got["ema_decay"] == 0.998
    assert torch.load(path)["opt"]["state"][0]["exp_avg"].shape == (64, 64)
