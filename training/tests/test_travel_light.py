"""travel_light.sh: the files it sets aside leave the tree and come back unchanged."""
import os
import shutil
import subprocess

import pytest

SCRIPT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "travel_light.sh")
TRAVELLING = ["models/edgetap-large.safetensors", "models/edgetap-small.safetensors",
              "training/checkpoints/edgetap-large.pt", "training/checkpoints/edgetap-small.pt",
              "tests/data/golden/edgetap-large-golden.safetensors",
              "tests/data/golden/edgetap-tiny-fine.safetensors"]
STAYING = ["models/edgetap-large.json", "training/train.py"]

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="needs git")


@pytest.fixture
def repo(tmp_path):
    """A git repository with the layout the script expects, each file holding its own path."""
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    for f in TRAVELLING + STAYING:
        os.makedirs(tmp_path / os.path.dirname(f), exist_ok=True)
        (tmp_path / f).write_text(f)
    (tmp_path / ".gitignore").write_text("training/.work/\n")
    subprocess.run(["git", "-C", str(tmp_path), "add", "-A"], check=True)
    return tmp_path


def run(repo, *args):
    return subprocess.run(["bash", SCRIPT, *args], cwd=repo, capture_output=True, text=True)


def test_aside_then_back_restores_every_file(repo):
    assert run(repo, "aside").returncode == 0
    for f in TRAVELLING:
        assert not (repo / f).exists()
        assert (repo / "training/.work/aside" / f).read_text() == f
    for f in STAYING:
        assert (repo / f).read_text() == f
    assert run(repo, "back").returncode == 0
    for f in TRAVELLING + STAYING:
        assert (repo / f).read_text() == f
    assert not (repo / "training/.work/aside").exists()


def test_aside_twice_is_refused_and_loses_nothing(repo):
    assert run(repo, "aside").returncode == 0
    second = run(repo, "aside")
    assert second.returncode == 1 and "run 'back' first" in second.stderr
    assert run(repo, "back").returncode == 0
    for f in TRAVELLING:
        assert (repo / f).read_text() == f


def test_back_keeps_a_file_that_reappeared_in_the_tree(repo):
    assert run(repo, "aside").returncode == 0
    (repo / TRAVELLING[0]).write_text("new")
    back = run(repo, "back")
    assert back.returncode == 1 and TRAVELLING[0] in back.stderr
    assert (repo / TRAVELLING[0]).read_text() == "new"
    assert (repo / "training/.work/aside" / TRAVELLING[0]).read_text() == TRAVELLING[0]


def test_missing_file_refuses_before_moving_any(repo):
    os.remove(repo / TRAVELLING[2])
    out = run(repo, "aside")
    assert out.returncode == 1 and TRAVELLING[2] in out.stderr
    assert (repo / TRAVELLING[0]).exists()


def test_unknown_command_prints_usage(repo):
    out = run(repo, "pack")
    assert out.returncode == 2 and "usage" in out.stderr
