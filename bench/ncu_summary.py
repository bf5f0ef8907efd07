#!/usr/bin/env python3
"""Sums an Nsight Compute CSV (ncu --csv --metrics dram__bytes_read.sum,
dram__bytes_write.sum,gpu__time_duration.sum) per kernel name: launches, GPU
time, DRAM bytes and the bandwidth they make. Used for bench/NOTES.md.

usage: python3 bench/ncu_summary.py NCU.csv [--frames N]   (N: divide by frames)
"""
import argparse
import collections
import csv
import re

UNIT = {"byte": 1, "Kbyte": 1e3, "Mbyte": 1e6, "Gbyte": 1e9, "ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1,
        "nsecond": 1e-9, "usecond": 1e-6, "msecond": 1e-3, "second": 1}


def short(name):
    """A kernel's name without template arguments and parameters."""
    name = re.sub(r"\(.*", "", name)
    while "<" in name:
        name = re.sub(r"<[^<>]*>", "", name)
    return name.split("::")[-1].strip() or name


def read(path):
    kernels = collections.OrderedDict()
    with open(path, newline="") as f:
        lines = [line for line in f if line.startswith('"')]
    for row in csv.DictReader(lines):
        k = kernels.setdefault(row["ID"], {"name": short(row["Kernel Name"])})
        value = float(row["Metric Value"].replace(",", "")) * UNIT.get(row["Metric Unit"], 1)
        k[row["Metric Name"]] = value
    return kernels.values()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("csv")
    ap.add_argument("--frames", type=float, default=1.0)
    args = ap.parse_args()
    totals = collections.defaultdict(lambda: [0, 0.0, 0.0, 0.0])
    for k in read(args.csv):
        t = totals[k["name"]]
        t[0] += 1
        t[1] += k.get("gpu__time_duration.sum", 0.0)
        t[2] += k.get("dram__bytes_read.sum", 0.0)
        t[3] += k.get("dram__bytes_write.sum", 0.0)
    n = args.frames
    print(f"{'kernel':48s} {'launches':>9s} {'us':>9s} {'read MB':>9s} {'write MB':>9s} {'GB/s':>7s}   (per frame: /{n:g})")
    all_t = [0, 0.0, 0.0, 0.0]
    for name, (count, sec, rd, wr) in sorted(totals.items(), key=lambda kv: -kv[1][1]):
        print(f"{name[:48]:48s} {count / n:9.1f} {1e6 * sec / n:9.1f} {rd / n / 1e6:9.3f} {wr / n / 1e6:9.3f} "
              f"{(rd + wr) / sec / 1e9 if sec else 0:7.0f}")
        all_t = [a + b for a, b in zip(all_t, (count, sec, rd, wr))]
    count, sec, rd, wr = all_t
    print(f"{'all':48s} {count / n:9.1f} {1e6 * sec / n:9.1f} {rd / n / 1e6:9.3f} {wr / n / 1e6:9.3f} "
          f"{(rd + wr) / sec / 1e9 if sec else 0:7.0f}")


if __name__ == "__main__":
    main()
