"""Copies of a checkpoint for the trip back from the GPU host, which hands back files of at most
16 MiB: a larger file goes in parts NAME.part-aa, -ab, ... (the names `split` gives), which
`cat NAME.part-* > NAME` joins. Written after every save, so that a call stopped before its end
still hands back the last saved checkpoint."""
import glob
import os
import shutil

PART_BYTES = 15 * 1024 * 1024


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
