"""export.py writes weights the engine reads back exactly, in FP32 or in FP16."""
import json
import os
import sys

import numpy as np
import torch

HERE = os.path.dirname(__file__)
sys.path.insert(0, os.path.join(HERE, ".."))
from edgetap.engine import StreamingTracker  # noqa: E402
from edgetap.weights import load_exported_model, read_safetensors  # noqa: E402
from export import export_model  # noqa: E402
from make_test_model import TINY, random_model  # noqa: E402


def replay_golden(model, golden):
    """The streamed positions of the golden clip's queries."""
    st = StreamingTracker(model, torch.from_numpy(golden["query_t"])[None], torch.from_numpy(golden["query_xy"])[None])
    video = torch.from_numpy(golden["frames"]).permute(0, 3, 1, 2).float()
    return torch.stack([st.step(video[t:t + 1])[0][0] for t in range(video.shape[0])]).numpy()


def export_tiny(tmp_path, weights_dtype):
    torch.set_num_threads(2)
    out = str(tmp_path / weights_dtype)
    model = random_model(TINY, seed=5)
    export_model(model, out, out, "tiny", weights_dtype=weights_dtype)
    return model, os.path.join(out, "tiny")


def test_fp16_export_stores_half_precision_and_reloads_exactly(tmp_path):
    reference = random_model(TINY, seed=5).state_dict()
    model, stem = export_tiny(tmp_path, "F16")
    tensors, _ = read_safetensors(stem + ".safetensors")
    assert {str(v.dtype) for v in tensors.values()} == {"float16"}
    assert json.load(open(stem + ".json"))["weights_dtype"] == "F16"
    # the exported network is the rounded one, and the file holds exactly it
    reloaded = load_exported_model(stem + ".safetensors", stem + ".json").state_dict()
    for k, v in model.state_dict().items():
        assert torch.equal(reloaded[k], v), k
        assert torch.equal(v, reference[k].half().float()), k
    # rounding moved some weights, so the test above is not comparing a model with itself
    assert any(not torch.equal(v, reference[k]) for k, v in model.state_dict().items())
    # the golden vectors are those of the rounded network read back from the file
    golden, _ = read_safetensors(os.path.join(os.path.dirname(stem), "tiny-golden.safetensors"))
    xy = replay_golden(load_exported_model(stem + ".safetensors", stem + ".json"), golden)
    valid = np.arange(xy.shape[0])[:, None] >= golden["query_t"][None, :]
    assert np.abs(xy - golden["out_xy"])[valid].max() < 1e-4


def test_fp16_file_is_about_half_the_fp32_file(tmp_path):
    _, stem32 = export_tiny(tmp_path, "F32")
    _, stem16 = export_tiny(tmp_path, "F16")
    size32, size16 = (os.path.getsize(s + ".safetensors") for s in (stem32, stem16))
    assert 0.45 * size32 < size16 < 0.55 * size32
    assert json.load(open(stem32 + ".json"))["weights_dtype"] == "F32"


def test_a_support_grid_is_recorded_only_when_asked_for(tmp_path):
    model = random_model(TINY, seed=5)
    export_model(model, str(tmp_path / "with"), str(tmp_path / "with"), "tiny", support_grid=8)
    export_model(model, str(tmp_path / "without"), str(tmp_path / "without"), "tiny")
    assert json.load(open(tmp_path / "with" / "tiny.json"))["support_grid"] == 8
    assert "support_grid" not in json.load(open(tmp_path / "without" / "tiny.json"))


def test_declaring_a_support_grid_keeps_the_rest_of_the_file(tmp_path):
    from declare_support import declare
    model = random_model(TINY, seed=5)
    export_model(model, str(tmp_path), str(tmp_path), "tiny")
    stem = str(tmp_path / "tiny")
    before = json.load(open(stem + ".json"))
    after = declare(stem, 12)
    keys = list(after)
    assert keys.index("support_grid") == keys.index("vis_threshold") + 1
    assert {k: v for k, v in after.items() if k != "support_grid"} == before
    assert json.load(open(stem + ".json"))["support_grid"] == 12
    assert "support_grid" not in declare(stem, 0)
