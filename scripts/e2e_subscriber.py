#!/usr/bin/env python3
"""A track-socket subscriber for scripts/gpu-e2e.sh: reads every camera's
messages for a while and summarizes what a subscriber saw, from the messages'
own fields. Per camera: messages, capture -> publish latency p50/p99
(publish_us - capture_us), the rungs in force in order, whether every track
alive before a rung change was alive after it, the longest gap between
messages, the messages per second before and after a given time (the
fault's), the latency p99 over the run's second half (once the governor
had time to settle), the first messages' latency and tracker time, and which
messages came later than the budget, and the frames between two messages
that no message covers beyond the queue's drops (frames a rung strided or a
tracker failed on: the "untracked" of a start). Writes one JSON object to --out.

usage: e2e_subscriber.py --socket PATH --seconds S --out FILE [--split-after S]
"""
import argparse
import json
import socket
import time


BUDGET_MS = 33.0  # the scenarios' budget_ms
FIRST_MESSAGES = 12


def percentile(values, q):
    if not values:
        return None
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q / 100.0 * len(ordered)))]


class Camera:
    def __init__(self):
        self.latency_ms = []
        self.publish_s = []
        self.rungs = []
        self.ids_lost_at_change = []
        self.last_live = set()
        self.seq_gaps = 0
        self.last_seq = None
        self.tracker_ms = []
        self.queue_drops = []
        self.last_frame = None
        self.frames_untracked = 0
        self.capture_restarts = 0

    def add(self, m):
        live = {p["id"] for p in m["points"] if not p["lost"]}
        rung = m["rung"]
        if self.rungs and rung != self.rungs[-1]:
            lost = sorted(self.last_live - live)
            if lost:
                self.ids_lost_at_change.append({"from": self.rungs[-1], "to": rung, "lost": lost[:10]})
        if not self.rungs or rung != self.rungs[-1]:
            self.rungs.append(rung)
        if self.last_seq is not None and m["seq"] != self.last_seq + 1:
            self.seq_gaps += 1
        self.last_seq = m["seq"]
        frame, drops = m["frame"], m.get("queue_drops", 0)
        if self.last_frame is not None:
            if frame <= self.last_frame:
                self.capture_restarts += 1  # a looped file or a restarted pipeline counts from 0 again
            else:
                self.frames_untracked += (frame - self.last_frame - 1) - (drops - self.queue_drops[-1])
        self.last_frame = frame
        self.last_live = live
        self.latency_ms.append((m["publish_us"] - m["capture_us"]) / 1000.0)
        self.tracker_ms.append(m.get("tracker_ms", 0.0))
        self.queue_drops.append(m.get("queue_drops", 0))
        self.publish_s.append(m["publish_us"] / 1e6)

    def summary(self, split_s, half_s):
        gaps = [b - a for a, b in zip(self.publish_s, self.publish_s[1:])]
        out = {
            "messages": len(self.publish_s),
            "latency_ms_p50": percentile(self.latency_ms, 50),
            "latency_ms_p99": percentile(self.latency_ms, 99),
            "rungs": self.rungs,
            "ids_lost_at_rung_change": self.ids_lost_at_change,
            "longest_gap_s": max(gaps) if gaps else None,
            "seq_gaps": self.seq_gaps,
            "frames_untracked": self.frames_untracked,
            "capture_restarts": self.capture_restarts,
            # Where a start's slow frames are: the first messages' latency, tracker time and the
            # queue's drops so far, and the index of every message over the budget.
            "first_messages": [{"latency_ms": round(a, 1), "tracker_ms": b, "queue_drops": c}
                               for a, b, c in zip(self.latency_ms[:FIRST_MESSAGES], self.tracker_ms, self.queue_drops)],
            "over_budget_at": [i for i, ms in enumerate(self.latency_ms) if ms > BUDGET_MS],
            "latency_ms_p99_second_half": percentile(
                [ms for ms, t in zip(self.latency_ms, self.publish_s) if t >= half_s], 99),
        }
        if self.publish_s:
            span = self.publish_s[-1] - self.publish_s[0]
            out["fps"] = (len(self.publish_s) - 1) / span if span > 0 else None
        if split_s is not None and self.publish_s:
            before = [t for t in self.publish_s if t < split_s]
            after = [t for t in self.publish_s if t >= split_s]
            out["fps_before_split"] = (len(before) - 1) / (before[-1] - before[0]) if len(before) > 1 else None
            out["fps_after_split"] = (len(after) - 1) / (after[-1] - after[0]) if len(after) > 1 else None
        return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--socket", required=True)
    ap.add_argument("--seconds", type=float, required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--split-after", type=float, default=None, help="seconds after the start")
    args = ap.parse_args()

    for _ in range(100):
        try:
            s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            s.connect(args.socket)
            break
        except OSError:
            time.sleep(0.2)
    else:
        raise SystemExit(f"cannot connect to {args.socket}")
    s.sendall(b'{"format": "ndjson"}\n')
    start = time.time()
    split = start + args.split_after if args.split_after is not None else None
    cameras = {}
    buffer = b""
    s.settimeout(1.0)
    while time.time() - start < args.seconds:
        try:
            chunk = s.recv(1 << 20)
        except socket.timeout:
            continue
        if not chunk:
            break
        buffer += chunk
        *lines, buffer = buffer.split(b"\n")
        for line in lines:
            if not line.strip():
                continue
            m = json.loads(line)
            if m.get("type") != "tracks":
                continue
            cameras.setdefault(m["camera"], Camera()).add(m)
    half = start + args.seconds / 2
    result = {name: cam.summary(split, half) for name, cam in sorted(cameras.items())}
    with open(args.out, "w") as f:
        json.dump(result, f, indent=1)


if __name__ == "__main__":
    main()
