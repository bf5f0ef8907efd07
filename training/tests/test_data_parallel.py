"""train.py data parallel (as torchrun starts it), on the CPU with two ranks and the gloo backend: the ranks
must end with identical weights although rank 0 validates while the other waits, and the
checkpoint counts both ranks' clips (needs training/.data from prepare_data.py)."""
import os
import socket
import subprocess
import sys

import pytest
import torch

HERE = os.path.dirname(__file__)
TRAIN = os.path.join(HERE, "..", "train.py")
DATA = os.path.join(HERE, "..", ".data")
needs_data = pytest.mark.skipif(not os.path.isdir(DATA), reason="run training/prepare_data.py first")


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _two_ranks(ck, steps, *extra):
    """train.py as torchrun starts it, two ranks on this machine: returns rank 0's and rank 1's
    (return code, stdout + stderr)."""
    cmd = [sys.executable, TRAIN, "--cpu", "--ckpt", str(ck), "--batch", "1", "--frames", "6", "--tracks", "16",
           "--sizes", "64", "--max-steps", str(steps), "--val-clips", "1", "--val-frames", "6",
           "--total-seconds", "600", "--warmup", "2", "--self-init", "0.5", *extra]
    port = str(_free_port())
    procs = []
    for rank in range(2):
        env = dict(os.environ, OMP_NUM_THREADS="1", MASTER_ADDR="127.0.0.1", MASTER_PORT=port, WORLD_SIZE="2",
                   RANK=str(rank), LOCAL_RANK=str(rank))
        procs.append(subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True))
    return [(p.wait(timeout=600), p.stdout.read()) for p in procs]


@needs_data
def test_two_ranks_keep_identical_weights_while_rank_0_validates(tmp_path):
    ck = tmp_path / "ck.pt"
    # --val-every 0: rank 0 validates after every step, so the other rank's steps take longer
    (rc0, out0), (rc1, out1) = _two_ranks(ck, 20, "--val-every", "0")
    assert rc0 == 0 and rc1 == 0, out0[-3000:] + out1[-3000:]
    assert "the 2 ranks' weights are identical" in out0
    state = torch.load(ck, map_location="cpu", weights_only=False)
    assert state["step"] == 20
    assert state["clips"] == 20 * 1 * 2          # one clip per rank per step
    assert "world 2" in out0
