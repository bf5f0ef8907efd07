#!/usr/bin/env python3
"""RSS of edgetapd across camera restarts: the soak's RSS rule, taken apart.

Runs edgetapd with test-pattern cameras and restarts one of them N times by
reloads that change its query grid (as the soak's valid reloads do), and prints
RSS after each restart as JSON lines: the restart path alone, without the
soak's file and RTSP cameras and subscribers.

  restart_rss.py EDGETAPD --restarts 60
"""
import argparse
import json
import os
import signal
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from soak import control, proc_status  # noqa: E402


def configuration(work, grid, cameras):
    lines = [f'publisher: {{socket: "{work}/tracks.sock"}}', f'control: {{socket: "{work}/control.sock"}}',
             'metrics: {listen: ""}', "defaults:", "  tracker: klt", "  model_size: [160, 128]",
             "  queries: {policy: grid, grid: [8, 8]}", "cameras:",
             f'  - {{name: moving, source: "test:ball?width=320&height=240&fps=30", queries: {{grid: [{grid}, {grid}]}}}}']
    for i in range(cameras - 1):
        lines.append(f'  - {{name: steady{i}, source: "test:pinwheel?width=320&height=240&fps=30"}}')
    return "\n".join(lines) + "\n"


def wait_for(predicate, seconds):
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        if predicate():
            return True
        time.sleep(0.05)
    return False


def tracked(control_path, camera):
    try:
        stats = control(control_path, {"cmd": "stats"})
    except OSError:
        return -1
    return next((c["frames_tracked"] for c in stats.get("cameras", []) if c["name"] == camera), -1)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("edgetapd")
    ap.add_argument("--restarts", type=int, default=60)
    ap.add_argument("--cameras", type=int, default=2)
    args = ap.parse_args()
    work = tempfile.mkdtemp(prefix="edgetap-restarts-")
    config_path = os.path.join(work, "edgetap.yaml")
    control_path = os.path.join(work, "control.sock")
    with open(config_path, "w") as f:
        f.write(configuration(work, 8, args.cameras))
    as_root = ["--allow-root"] if os.geteuid() == 0 else []
    log = open(os.path.join(work, "edgetapd.log"), "w")
    daemon = subprocess.Popen([args.edgetapd, *as_root, "--config", config_path], stdout=log, stderr=log)
    pid = daemon.pid
    if not wait_for(lambda: tracked(control_path, "moving") > 30, 60):
        print(f"edgetapd did not track (log: {work}/edgetapd.log)", file=sys.stderr)
        daemon.kill()
        return 1
    status = 0
    for restart in range(args.restarts + 1):
        if restart > 0:
            with open(config_path, "w") as f:
                f.write(configuration(work, 8 + restart % 2, args.cameras))
            os.kill(pid, signal.SIGHUP)
            # The restarted camera counts from 0 again: wait until it tracked a second's frames.
            time.sleep(0.3)
            if not wait_for(lambda: tracked(control_path, "moving") > 30, 30):
                print(f"restart {restart}: the camera did not track again", file=sys.stderr)
                status = 1
                break
        print(json.dumps({"restart": restart, **proc_status(pid)}), flush=True)
    os.kill(pid, signal.SIGTERM)
    daemon.wait(timeout=60)
    return status


if __name__ == "__main__":
    sys.exit(main())
