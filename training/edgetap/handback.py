"""Copies of a checkpoint for the trip back from the GPU host, which hands back at most 8 files of
at most 16 MiB each, 64 MiB together: a larger file goes in parts NAME.part-aa, -ab, ... (the
names `split` gives), which `cat NAME.part-* > NAME` joins. A checkpoint too large for the trip
even in parts (one keeping averaged weights beside AdamW's moments: L1's is 86 MB) goes back
compacted instead. Written after every save, so that a call stopped before its end still hands
back the last saved checkpoint."""
import glob
import os
import shutil

import torch

from .weights import compact_checkpoint, load_checkpoint

PART_BYTES = 15 * 1024 * 1024
# What one checkpoint may take of the 64 MiB that come back; the rest is for the logs.
CHECKPOINT_BYTES = 56 * 1024 * 1024


def part_names(n):
    """The first n suffixes `split` gives: aa, ab, ..., az, ba, ..."""
    letters = "abcdefghijklmnopqrstuvwxyz"
    return [letters[i // 26] + letters[i % 26] for i in range(n)]


def copy_for_handback(path, out_dir, part_bytes=PART_BYTES):
    """Copies path into out_dir whole, or in parts of part_bytes when larger; the copy or parts of
    an earlier save are replaced. Returns the files written."""
    os.makedirs(out_dir, exist_ok=True)
    dest = os.path.join(out_dir, os.path.basename(path))
    for old in glob.glob(glob.escape(dest) + ".part-*") + glob.glob(glob.escape(dest)):
        os.remove(old)
    size = os.path.getsize(path)
    if size <= part_bytes:
        shutil.copy(path, dest)
        return [dest]
    n = (size + part_bytes - 1) // part_bytes
    written = []
    with open(path, "rb") as src:
        for suffix in part_names(n):
            part = f"{dest}.part-{suffix}"
            with open(part, "wb") as f:
                f.write(src.read(part_bytes))
            written.append(part)
    return written


def copy_checkpoint_for_handback(path, out_dir, limit=CHECKPOINT_BYTES, part_bytes=PART_BYTES):
    """copy_for_handback of a training checkpoint. One over `limit` bytes goes back compacted
    (weights.compact_checkpoint with its averaged weights: FP16, no AdamW moments; a resume from
    it re-warms the rate), under the same name; the full one stays where it is, for a later call
    on the same machine. Returns the files written."""
    if os.path.getsize(path) > limit:
        folder = os.path.join(os.path.dirname(os.path.abspath(path)), ".handback")
        os.makedirs(folder, exist_ok=True)
        compact = os.path.join(folder, os.path.basename(path))
        torch.save(compact_checkpoint(load_checkpoint(path), keep_ema=True), compact)
        print(f"handing back {path} compacted: {os.path.getsize(path) / 1e6:.1f} MB -> "
              f"{os.path.getsize(compact) / 1e6:.1f} MB (no optimizer moments)", flush=True)
        path = compact
    return copy_for_handback(path, out_dir, part_bytes)
