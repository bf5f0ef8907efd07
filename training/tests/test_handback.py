"""handback.copy_for_handback: what comes back from the GPU host rejoins to the checkpoint."""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from edgetap.handback import copy_for_handback, part_names  # noqa: E402


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
