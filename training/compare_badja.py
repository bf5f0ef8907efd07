"""How far apart two networks are on BADJA, and how much of it is the few tracks it scores. Reads
two outputs of diag_badja.py (the same sequences and size) and reports, per sequence and for the
mean over sequences that evaluate.py reports as PCK@0.2: each network's PCK, the difference
B - A, and a 90% interval of that difference from a paired bootstrap over tracks (the same
resampled tracks for both, within each sequence), with the tracks whose hit count changed.

  cd training && python3 compare_badja.py results/diag_badja_A.txt results/diag_badja_B.txt [--draws 4000]
"""
import argparse
import re
import sys

import numpy as np

HEADER = re.compile(r"^(\S+) at \(.*\): PCK@0\.2 ([0-9.]+)$")
ROW = re.compile(r"^\s+p(\d+) query frame\s+\d+ at \(.*?\)\s*(.*)$")
CELL = re.compile(r"^(\d+):([0-9.]+)(\*?)$")


def parse_diag(lines):
    """{sequence: [hits, annotated frames] per track, as an int array [tracks, 2]}, in file order.
    Each sequence's hits must give the PCK its header states."""
    seqs, stated, name = {}, {}, None
    for n, line in enumerate(lines, 1):
        line = line.rstrip("\n")
        head = HEADER.match(line)
        if head:
            name = head.group(1)
            seqs[name], stated[name] = [], (float(head.group(2)), n)
            continue
        row = ROW.match(line)
        if not row:
            continue
        if name is None:
            raise ValueError(f"line {n}: a track row before any sequence header")
        hits = total = 0
        for cell in row.group(2).split():
            m = CELL.match(cell)
            if not m:
                raise ValueError(f"line {n}: cannot read the cell '{cell}'")
            hits += m.group(3) != "*"
            total += 1
        seqs[name].append((hits, total))
    if not seqs:
        raise ValueError("no sequence header (is this diag_badja.py's output?)")
    seqs = {k: np.array(v, dtype=int).reshape(-1, 2) for k, v in seqs.items()}
    for k, (value, n) in stated.items():
        if abs(pck(seqs[k]) - value) > 5e-4:
            raise ValueError(f"line {n}: {k}'s rows give PCK {pck(seqs[k]):.4f}, its header {value:.3f}")
    return seqs


def pck(counts, idx=None):
    c = counts if idx is None else counts[idx]
    return c[..., 0].sum(-1) / np.maximum(c[..., 1].sum(-1), 1)


def paired_bootstrap(a, b, draws, seed=0):
    """a, b: {sequence: counts}; -> [draws] of mean-over-sequences PCK(b) - PCK(a) on resampled tracks."""
    rng = np.random.default_rng(seed)
    diff = np.zeros(draws)
    for name in a:
        idx = rng.integers(0, len(a[name]), size=(draws, len(a[name])))
        diff += pck(b[name], idx) - pck(a[name], idx)
    return diff / len(a)


def check_same_tracks(a, b):
    if list(a) != list(b):
        raise ValueError(f"the files score different sequences: {list(a)} against {list(b)}")
    for name in a:
        if a[name].shape != b[name].shape or (a[name][:, 1] != b[name][:, 1]).any():
            raise ValueError(f"{name}: the files annotate different tracks or frames (different data?)")


def report(a, b, draws):
    lines = [f"{'sequence':10s} {'A':>6s} {'B':>6s} {'B-A':>7s}  90% interval     tracks changed (of)"]
    for name in a:
        d = paired_bootstrap({name: a[name]}, {name: b[name]}, draws)
        changed = int((a[name][:, 0] != b[name][:, 0]).sum())
        lines.append(f"{name:10s} {pck(a[name]):6.3f} {pck(b[name]):6.3f} {pck(b[name]) - pck(a[name]):+7.3f}"
                     f"  [{np.percentile(d, 5):+.3f}, {np.percentile(d, 95):+.3f}]  {changed} ({len(a[name])})")
    mean_a = np.mean([pck(c) for c in a.values()])
    mean_b = np.mean([pck(c) for c in b.values()])
    d = paired_bootstrap(a, b, draws)
    lines.append(f"{'mean':10s} {mean_a:6.3f} {mean_b:6.3f} {mean_b - mean_a:+7.3f}"
                 f"  [{np.percentile(d, 5):+.3f}, {np.percentile(d, 95):+.3f}]")
    return lines


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("a", help="diag_badja.py output of network A")
    ap.add_argument("b", help="diag_badja.py output of network B")
    ap.add_argument("--draws", type=int, default=4000)
    args = ap.parse_args()
    try:
        parsed = []
        for path in (args.a, args.b):
            with open(path) as f:
                try:
                    parsed.append(parse_diag(f))
                except ValueError as e:
                    raise ValueError(f"{path}: {e}") from None
        check_same_tracks(*parsed)
    except (OSError, ValueError) as e:
        sys.exit(f"compare_badja: {e}")
    print("\n".join(report(*parsed, args.draws)))


if __name__ == "__main__":
    main()
