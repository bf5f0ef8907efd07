"""Real clips labelled by a teacher: what may be labelled, the forward-backward rule, the batches
drawn from them (crops, resizing and mirroring keep labels on their points), and the loss on them."""
import os
import shutil
import subprocess
import sys

import numpy as np
import pytest
import torch
from PIL import Image

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, ".."))
from edgetap import realclips, realvideo  # noqa: E402
from edgetap.losses import tracking_loss  # noqa: E402
from edgetap.model import EdgeTap, EdgeTapConfig  # noqa: E402
from edgetap.weights import randomize_weights_  # noqa: E402


def test_reserved_material_is_refused_by_path():
    for path in ("../shared/data/videos/davis/blackswan", "/x/shared/data/eval/badja/dog/frames",
                 "/x/videos/cotracker-demo/cat.mp4"):
        with pytest.raises(ValueError, match="never trained on"):
            realvideo.check_trainable(path)
    realvideo.check_trainable("../shared/data/videos/pixabay/bees.mp4")


def test_labels_run_from_the_query_while_both_directions_see_the_point_and_agree():
    fwd = np.zeros((3, 4, 2))
    bwd = fwd.copy()
    bwd[1, 2] = [3.0, 0.0]                       # disagree by 3 px
    fwd_vis = np.ones((3, 4), bool)
    bwd_vis = np.ones((3, 4), bool)
    bwd_vis[2, 3] = False                        # the backward pass lost it
    bwd[0, 1] = [0.0, 5.0]                       # disagree, then agree again
    tracks, known = realvideo.consistent_labels(fwd, fwd_vis, bwd, bwd_vis, tol=2.0)
    assert known.tolist() == [[True, False, False, False],       # no label after a break
                              [True, True, False, False],
                              [True, True, True, False]]
    assert np.allclose(tracks[1, 1], [0.0, 0.0]) and np.allclose(tracks[0, 0], [0.0, 0.0])


def test_teacher_sizes_keep_the_shape_in_multiples_of_32():
    assert realvideo.teacher_size(256, 192, 320) == (320, 256)
    assert realvideo.teacher_size(256, 144, 320) == (320, 192)


def _dot_clip(root, name, T=10, W=128, H=96):
    """A clip of dark frames with 6 bright 3x3 dots moving on known paths, labelled exactly."""
    frames = os.path.join(root, name, "frames")
    os.makedirs(frames)
    g = np.random.default_rng(0)
    p0 = g.uniform([10, 10], [W - 30, H - 30], (6, 2)).round()
    v = g.integers(-1, 2, (6, 2))
    tracks = np.stack([p0 + t * v for t in range(T)], 1).astype(np.float32)     # [6, T, 2]
    for t in range(T):
        im = np.full((H, W, 3), 20, np.uint8)
        for x, y in tracks[:, t].astype(int):
            im[y - 1:y + 2, x - 1:x + 2] = 250
        Image.fromarray(im).save(os.path.join(frames, f"{t:05d}.jpg"), quality=95)
    np.savez_compressed(os.path.join(root, name, "labels.npz"), starts=np.array([0]), tracks=tracks[None],
                        known=np.ones((1, 6, T), bool))


def test_batches_keep_labels_on_their_points(tmp_path):
    _dot_clip(str(tmp_path), "dots")
    rc = realclips.RealClips(str(tmp_path), "cpu")
    gen = torch.Generator().manual_seed(3)
    for S in (64, (96, 64)):
        b = rc.sample(4, 6, S, 16, gen)
        W, H = (S, S) if isinstance(S, int) else S
        assert b["video"].shape == (4, 6, 3, H, W) and b["tracks"].shape == (4, 16, 6, 2)
        assert torch.equal(b["vis"], b["known"])
        assert b["known"].gather(2, b["tq"][..., None]).all()        # queries lie on labelled frames
        assert (b["known"].sum(2) >= 2).all()
        bright = 0
        for i, n, t in b["known"].nonzero().tolist():
            x, y = b["tracks"][i, n, t].round().long().tolist()
            assert 0 <= x < W and 0 <= y < H
            bright += b["video"][i, t, :, y, x].mean() > 120
        assert bright == b["known"].sum()        # every label sits on its (magnified) dot


def test_a_missing_labels_folder_is_named(tmp_path):
    with pytest.raises(FileNotFoundError, match=str(tmp_path)):
        realclips.RealClips(str(tmp_path), "cpu")


def test_unlabelled_point_frames_and_visibility_cost_nothing():
    g = torch.Generator().manual_seed(0)
    B, N, T, K = 2, 5, 6, 2
    tracks = torch.rand(B, N, T, 2, generator=g) * 50
    ps = tracks[None].repeat(K, 1, 1, 1, 1) + torch.randn(K, B, N, T, 2, generator=g)
    vl, cl = torch.randn(K, B, N, T, generator=g), torch.randn(K, B, N, T, generator=g)
    known = torch.rand(B, N, T, generator=g) > 0.4
    tq = torch.zeros(B, N, dtype=torch.long)
    base, st = tracking_loss(ps, vl, cl, tracks, known, tq, 64, known=known)
    moved = ps.clone()
    moved[:, ~known] += 30.0                      # wrong where nothing is labelled
    assert torch.isclose(tracking_loss(moved, -vl, cl, tracks, known, tq, 64, known=known)[0], base)
    moved[:, known] += 30.0                       # wrong where labelled
    assert tracking_loss(moved, vl, cl, tracks, known, tq, 64, known=known)[0] > base + 1


@pytest.mark.skipif(shutil.which("gst-launch-1.0") is None, reason="needs GStreamer")
def test_a_video_is_decoded_and_a_window_labelled(tmp_path):
    src = str(tmp_path / "clip.avi")
    made = subprocess.run(["gst-launch-1.0", "-q", "videotestsrc", "pattern=ball", "num-buffers=12", "!",
                           "video/x-raw,width=160,height=120,framerate=10/1", "!", "videoconvert", "!",
                           "jpegenc", "!", "avimux", "!", "filesink", f"location={src}"],
                          capture_output=True, text=True, timeout=60)
    assert made.returncode == 0, made.stderr
    n = realvideo.decode_video(src, str(tmp_path / "frames"), max_side=64)
    video = realvideo.load_frames(str(tmp_path / "frames"))
    assert n == 12 and video.shape == (12, 3, 48, 64)
    cfg = EdgeTapConfig(enc_channels=(8, 8, 16, 16, 16), feat_dim=16, radius=2, width=32, heads=2, blocks=2,
                        mlp_ratio=2, iters=2, window=3, n_freq=2, corr_hidden=32)
    teacher = randomize_weights_(EdgeTap(cfg), torch.Generator().manual_seed(1), 0.2).eval()
    tracks, known = realvideo.label_window(teacher, video[:8], 4, (64, 64), "cpu")
    assert tracks.shape == (16, 8, 2) and known.shape == (16, 8) and known.dtype == bool
    with pytest.raises(ValueError, match="davis"):
        realvideo.decode_video(str(tmp_path / "davis" / "x.avi"), str(tmp_path / "f2"))


@pytest.mark.skipif(not os.path.isdir(os.path.join(HERE, "..", ".data")), reason="run training/prepare_data.py first")
def test_a_chunk_trains_on_real_batches_between_generated_ones(tmp_path):
    _dot_clip(str(tmp_path / "real"), "dots")
    ck = tmp_path / "ck.pt"
    cmd = [sys.executable, os.path.join(HERE, "..", "train.py"), "--cpu", "--ckpt", str(ck), "--batch", "1",
           "--frames", "6", "--tracks", "16", "--sizes", "64", "--max-steps", "4", "--val-clips", "1",
           "--val-frames", "6", "--log-every", "1", "--total-seconds", "100", "--real", str(tmp_path / "real"),
           "--real-every", "2"]
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    logged = [line for line in out.stdout.splitlines() if line.startswith('{"loss"')]
    assert len(logged) == 4
    # steps 1 and 3 are real: no visibility term
    assert [float(line.split('"vis": ')[1].split(",")[0]) == 0.0 for line in logged] == [False, True, False, True]
    bad = subprocess.run(cmd[:-4] + ["--real", str(tmp_path / "none"), "--real-every", "2"],
                         capture_output=True, text=True, timeout=120)
    assert bad.returncode != 0 and str(tmp_path / "none") in bad.stderr
    long = [a if a != "6" or cmd[i - 1] != "--frames" else "12" for i, a in enumerate(cmd)]
    bad = subprocess.run(long, capture_output=True, text=True, timeout=120)
    assert bad.returncode != 0 and "labelled windows of 10 frames, shorter than --frames 12" in bad.stderr
