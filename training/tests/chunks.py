"""A tiny CPU training chunk of train.py, for the tests that resume and inspect checkpoints."""
import os
import subprocess
import sys

TRAIN = os.path.join(os.path.dirname(__file__), "..", "train.py")


def train_chunk(ck, *extra, steps, warmup=1):
    """train.py on the CPU up to `steps` steps (1 clip of 6 frames, 16 tracks, 64 px), checkpoint ck."""
    cmd = [sys.executable, TRAIN, "--cpu", "--ckpt", str(ck), "--batch", "1", "--frames", "6", "--tracks", "16",
           "--sizes", "64", "--max-steps", str(steps), "--val-clips", "1", "--val-frames", "6",
           "--total-seconds", "100", "--warmup", str(warmup), *extra]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=300)
