#!/usr/bin/env python3
"""edgetapd under a long mixed load, checked from outside (ctest label soak).

Four cameras at 30 fps: the bundled clip looped, a test pattern, a second
looped file and a real RTSP server (tests/support/rtsp_server_main.cpp) that is
killed and restarted half-way. Six subscribers: a normal NDJSON one, a CBOR
one, one that never reads, one that reconnects every few seconds, one that
sends garbage, one that floods bytes after its hello. Every 20 s a reload
(valid and invalid in turn) and every 7 s an add_points/remove_points pair. A valid reload changes one
camera (it restarts, the others run on).
Every 5 s it samples the daemon's RSS, fds and threads and its stats.

Asserts: the daemon never dies and exits 0 on SIGTERM; RSS after warm-up grows
less than 2%; no fd or thread growth; the normal subscriber's seq per camera
has no gap that the messages' "dropped" does not count; every frame captured
is tracked, strided or counted as a queue drop.

usage: soak.py EDGETAPD RTSP_SERVER SOURCE_DIR [--minutes M]   (default $EDGETAP_SOAK_MINUTES or 10)
Writes its samples to $EDGETAP_SOAK_LOG (a JSON file) when set.
"""
import argparse
import json
import os
import random
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time

# Allowed growth after warm-up, and the slack for sockets a reconnecting
# subscriber may hold open at the moment of a sample.
RSS_GROWTH = 0.02
FD_SLACK = 4
THREAD_SLACK = 2
WARMUP_SHARE = 0.25  # the first quarter of the run is warm-up


def proc_status(pid):
    fields = {}
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            key, _, value = line.partition(":")
            fields[key] = value.strip()
    return {"rss_kb": int(fields["VmRSS"].split()[0]), "threads": int(fields["Threads"]),
            "fds": len(os.listdir(f"/proc/{pid}/fd"))}


def control(path, request, timeout=5.0):
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
        s.settimeout(timeout)
        s.connect(path)
        s.sendall(json.dumps(request).encode() + b"\n")
        return json.loads(s.makefile().readline())


def connect(path):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.settimeout(2.0)
    s.connect(path)
    return s


class Subscriber(threading.Thread):
    def __init__(self, path, stop, kind):
        super().__init__(daemon=True)
        self.path, self.stop, self.kind = path, stop, kind
        self.messages = 0
        self.gaps = 0          # seq gaps not covered by "dropped"
        self.dropped = 0
        self.errors = []

    def run(self):
        try:
            getattr(self, self.kind)()
        except Exception as e:  # a subscriber's own failure is reported, not raised in its thread
            self.errors.append(f"{self.kind}: {e!r}")

    def stream(self, fmt):
        """The bytes the daemon sends after a hello asking for `fmt`, until the run stops."""
        s = connect(self.path)
        s.sendall(json.dumps({"format": fmt}).encode() + b"\n")
        while not self.stop.is_set():
            try:
                chunk = s.recv(1 << 20)
            except socket.timeout:
                continue
            if not chunk:
                self.errors.append(f"{self.kind}: the daemon closed the stream")
                return
            yield chunk

    def normal(self):
        last_seq, buffer, missing = {}, b"", 0
        for chunk in self.stream("ndjson"):
            buffer += chunk
            *lines, buffer = buffer.split(b"\n")
            for line in lines:
                m = json.loads(line)
                if m.get("type") != "tracks":
                    continue
                self.messages += 1
                self.dropped += m.get("dropped", 0)
                previous = last_seq.get(m["camera"])
                # A camera restarted by a reload starts its seq again: not a gap.
                if previous is not None and m["seq"] > previous + 1:
                    missing += m["seq"] - previous - 1
                last_seq[m["camera"]] = m["seq"]
        self.gaps = max(0, missing - self.dropped)

    def cbor(self):
        for _ in self.stream("cbor"):
            self.messages += 1  # reads, not messages: the stream is CBOR

    def never_reads(self):
        s = connect(self.path)
        s.sendall(b'{"format": "ndjson"}\n')
        self.stop.wait()
        s.close()

    def reconnecting(self):
        while not self.stop.is_set():
            s = connect(self.path)
            s.sendall(b'{"format": "ndjson"}\n')
            try:
                self.messages += s.recv(65536).count(b"\n")
            except socket.timeout:
                pass
            s.close()
            self.stop.wait(random.uniform(0.5, 3.0))

    def garbage(self):
        while not self.stop.is_set():
            s = connect(self.path)
            s.sendall(bytes(random.getrandbits(8) for _ in range(random.randint(1, 4096))) + b"\n")
            try:
                s.recv(4096)
            except (socket.timeout, ConnectionResetError):
                pass
            s.close()
            self.stop.wait(1.0)

    def flooding(self):
        while not self.stop.is_set():
            s = connect(self.path)
            s.sendall(b'{"format": "ndjson"}\n')
            try:
                while not self.stop.is_set():
                    s.sendall(b"x" * 65536)
                    s.recv(65536)
            except OSError:
                pass  # dropped by the daemon: connect again
            s.close()
            self.stop.wait(0.5)


def configuration(work, source_dir, rtsp_url, grid):
    clip = os.path.join(source_dir, "assets/demo/vtest-pedestrians.avi")
    return f"""publisher: {{socket: "{work}/tracks.sock", subscriber_queue: 64}}
control: {{socket: "{work}/control.sock"}}
metrics: {{listen: ""}}
defaults:
  tracker: klt
  model_size: [160, 128]
  budget_ms: 200
  queries: {{policy: grid, grid: [8, 8]}}
  capture: {{pace: realtime, at_eof: loop, queue: 4, retry: {{initial_ms: 200, max_ms: 2000}}, stall_timeout_s: 3}}
cameras:
  - {{name: clip, source: "file://{clip}"}}
  - {{name: pattern, source: "test:pinwheel?width=320&height=240&fps=30&speed=2"}}
  - {{name: ball, source: "test:ball?width=320&height=240&fps=30", queries: {{grid: [{grid}, {grid}]}}}}
  - {{name: rtsp, source: "{rtsp_url}"}}
"""


def start_rtsp(server, port=0):
    p = subprocess.Popen([server, str(port)], stdout=subprocess.PIPE, text=True)
    line = p.stdout.readline().split()
    if len(line) != 2 or line[0] != "PORT":
        raise SystemExit(f"the RTSP server said {line}")
    return p, int(line[1])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("edgetapd")
    ap.add_argument("rtsp_server")
    ap.add_argument("source_dir")
    ap.add_argument("--minutes", type=float, default=float(os.environ.get("EDGETAP_SOAK_MINUTES", "10")))
    ap.add_argument("--subscribers", default="normal,cbor,never_reads,reconnecting,garbage,flooding",
                    help="which subscribers run (to find what a failure comes from)")
    ap.add_argument("--reload-every", type=float, default=20.0, help="seconds between reloads (0: none)")
    args = ap.parse_args()
    seconds = args.minutes * 60
    work = tempfile.mkdtemp(prefix="edgetap-soak-")
    rtsp, port = start_rtsp(args.rtsp_server)
    rtsp_url = f"rtsp://127.0.0.1:{port}/test"
    config_path = os.path.join(work, "edgetap.yaml")
    with open(config_path, "w") as f:
        f.write(configuration(work, args.source_dir, rtsp_url, 8))
    # edgetapd refuses to run as root unless told to; CI containers often are root.
    knows_allow_root = "--allow-root" in subprocess.run([args.edgetapd, "--help"], capture_output=True, text=True).stdout
    as_root = ["--allow-root"] if os.geteuid() == 0 and knows_allow_root else []
    log = open(os.path.join(work, "edgetapd.log"), "w")
    daemon = subprocess.Popen([args.edgetapd, *as_root, "--config", config_path], stdout=log, stderr=log)
    for _ in range(100):
        if os.path.exists(os.path.join(work, "tracks.sock")) and os.path.exists(os.path.join(work, "control.sock")):
            break
        time.sleep(0.1)

    stop = threading.Event()
    kinds = args.subscribers.split(",")
    subscribers = [Subscriber(os.path.join(work, "tracks.sock"), stop, k) for k in kinds]
    for s in subscribers:
        s.start()

    failures, samples = [], []
    start = time.monotonic()
    # Points go on the latest tracked frame: the first change waits for the cameras to run.
    next_sample = next_reload = start
    next_points = start + 10
    reloads = points_changes = 0
    rtsp_restarted = False
    while time.monotonic() - start < seconds:
        now = time.monotonic()
        if daemon.poll() is not None:
            failures.append(f"edgetapd died with status {daemon.returncode} after {now - start:.0f} s")
            break
        if not rtsp_restarted and now - start > seconds / 2:
            rtsp.kill()
            rtsp.wait()
            time.sleep(2)
            rtsp, _ = start_rtsp(args.rtsp_server, port)
            rtsp_restarted = True
        if args.reload_every > 0 and now >= next_reload:
            valid = reloads % 2 == 0
            with open(config_path, "w") as f:
                text = configuration(work, args.source_dir, rtsp_url, 8 + reloads % 3)
                f.write(text if valid else text + "  - {name: broken, budget_ms: -1}\n")
            daemon.send_signal(signal.SIGHUP)
            reloads += 1
            next_reload = now + args.reload_every
        if now >= next_points:
            try:
                added = control(os.path.join(work, "control.sock"),
                                {"cmd": "add_points", "camera": "pattern", "points": [{"id": f"soak{points_changes}", "x": 100, "y": 80}]})
                removed = control(os.path.join(work, "control.sock"),
                                  {"cmd": "remove_points", "camera": "pattern", "ids": [f"soak{points_changes}"]})
                if not added.get("ok") or not removed.get("ok"):
                    failures.append(f"points change refused: {added} / {removed}")
            except OSError as e:
                failures.append(f"control socket: {e!r}")
            points_changes += 1
            next_points = now + 7
        if now >= next_sample:
            sample = {"t": round(now - start, 1), **proc_status(daemon.pid)}
            try:
                stats = control(os.path.join(work, "control.sock"), {"cmd": "stats"})
                sample["cameras"] = {c["name"]: {k: c.get(k) for k in ("state", "frames_captured", "frames_tracked",
                                                                        "queue_drops", "frames_strided",
                                                                        "latency_percentile_ms")}
                                     for c in stats.get("cameras", [])}
                sample["socket"] = stats.get("socket")
            except OSError as e:
                failures.append(f"stats: {e!r}")
            samples.append(sample)
            next_sample = now + 5
        time.sleep(0.2)

    stop.set()
    for s in subscribers:
        s.join(timeout=5)
    final_stats = None
    if daemon.poll() is None:
        final_stats = control(os.path.join(work, "control.sock"), {"cmd": "stats"})
        daemon.send_signal(signal.SIGTERM)
        try:
            status = daemon.wait(timeout=30)
            if status != 0:
                failures.append(f"edgetapd exited {status} on SIGTERM")
        except subprocess.TimeoutExpired:
            daemon.kill()
            failures.append("edgetapd did not stop within 30 s of SIGTERM")
    rtsp.kill()

    # Growth after warm-up: the last sample against the warm-up's end.
    steady = [s for s in samples if s["t"] >= WARMUP_SHARE * seconds]
    if len(steady) >= 2:
        base, last = steady[0], steady[-1]
        peak_rss = max(s["rss_kb"] for s in steady[: max(1, len(steady) // 4)])
        if last["rss_kb"] > peak_rss * (1 + RSS_GROWTH):
            failures.append(f"RSS grew from {peak_rss} kB to {last['rss_kb']} kB after warm-up")
        if last["fds"] > max(s["fds"] for s in steady[: max(1, len(steady) // 4)]) + FD_SLACK:
            failures.append(f"fds grew from {base['fds']} to {last['fds']}")
        if last["threads"] > max(s["threads"] for s in steady[: max(1, len(steady) // 4)]) + THREAD_SLACK:
            failures.append(f"threads grew from {base['threads']} to {last['threads']}")
    normal = next((s for s in subscribers if s.kind == "normal"), Subscriber("", stop, "normal"))
    if "normal" in kinds and normal.messages == 0:
        failures.append("the normal subscriber got no message")
    if normal.gaps:
        failures.append(f"the normal subscriber saw {normal.gaps} seq gaps no 'dropped' counted")
    for s in subscribers:
        failures.extend(s.errors)
    if final_stats:
        for c in final_stats.get("cameras", []):
            missing = c["frames_captured"] - c["frames_tracked"] - c["queue_drops"] - c.get("frames_strided", 0)
            # Frames still in the queue (at most its length) or in flight are not lost.
            if missing > 4 + 1:
                failures.append(f"camera {c['name']}: {missing} captured frames neither tracked nor counted as dropped")

    summary = {"minutes": args.minutes, "reloads": reloads, "points_changes": points_changes,
               "rtsp_restarted": rtsp_restarted,
               "subscribers": {s.kind: s.messages for s in subscribers}, "normal_dropped": normal.dropped,
               "first_steady": steady[0] if steady else None, "last": samples[-1] if samples else None,
               "failures": failures}
    if os.environ.get("EDGETAP_SOAK_LOG"):
        with open(os.environ["EDGETAP_SOAK_LOG"], "w") as f:
            json.dump({"summary": summary, "samples": samples}, f, indent=1)
    print(json.dumps(summary, indent=1))
    if failures:
        print(f"soak: FAILED (daemon log: {work}/edgetapd.log)", file=sys.stderr)
        return 1
    print("soak: passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
