#!/usr/bin/env python3
"""edgetapd as a service, tested from outside like systemd and a user would:
the sd_notify protocol against a NOTIFY_SOCKET this test listens on (READY,
STATUS, WATCHDOG, RELOADING, STOPPING), SIGHUP reload (unchanged cameras keep
running, changed ones restart, removed ones stop, new ones start, a bad file
keeps the running configuration), the control socket (list, stats, add and
remove points, bad requests), and /metrics and /healthz over HTTP.

usage: service_test.py EDGETAPD
"""
import grp
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
import unittest
import urllib.request

EDGETAPD = sys.argv.pop(1) if len(sys.argv) > 1 else "edgetapd"
# edgetapd refuses to run as root unless told to; CI containers often are root.
AS_ROOT = ["--allow-root"] if os.geteuid() == 0 else []


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def camera(name, pattern, size="[128, 96]"):
    return (f"  - name: {name}\n    source: test:{pattern}?width=320&height=240&fps=20&speed=1\n"
            f"    tracker: klt\n    model_size: {size}\n    queries: {{grid: [4, 3]}}\n")


class Notifications:
    """The service manager's side of sd_notify: a datagram socket."""

    def __init__(self, path):
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        self.sock.bind(path)
        self.seen = []

    def wait_for(self, key, timeout=15.0):
        """The next datagram holding KEY (e.g. 'READY=1'), as a dict."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            self.sock.settimeout(max(0.01, deadline - time.monotonic()))
            try:
                data = self.sock.recv(4096).decode()
            except socket.timeout:
                break
            fields = dict(line.split("=", 1) for line in data.splitlines() if "=" in line)
            self.seen.append(fields)
            if key in data.splitlines():
                return fields
        raise AssertionError(f"no {key} within {timeout} s; saw {self.seen[-5:]}")


class Control:
    def __init__(self, path):
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.connect(path)
        self.lines = self.sock.makefile("r")

    def raw(self, line):
        self.sock.sendall(line.encode() + b"\n")
        return json.loads(self.lines.readline())

    def __call__(self, **request):
        return self.raw(json.dumps(request))


class Tracks:
    def __init__(self, path, cameras=None):
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.connect(path)
        self.lines = self.sock.makefile("r")
        if cameras:
            self.sock.sendall(json.dumps({"subscribe": cameras}).encode() + b"\n")
            assert json.loads(self.lines.readline())["type"] == "hello"

    def next(self):
        return json.loads(self.lines.readline())


class ServiceTest(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()
        d = self.dir.name
        self.config = os.path.join(d, "edgetap.yaml")
        self.port = free_port()
        self.header = (f"publisher: {{socket: {d}/tracks.sock}}\ncontrol: {{socket: {d}/control.sock}}\n"
                       f"metrics: {{listen: '127.0.0.1:{self.port}'}}\ncameras:\n")
        self.write(camera("north", "pinwheel") + camera("south", "ball"))
        self.notify = Notifications(os.path.join(d, "notify.sock"))
        env = dict(os.environ, NOTIFY_SOCKET=os.path.join(d, "notify.sock"), WATCHDOG_USEC="1000000")
        self.log = open(os.path.join(d, "daemon.log"), "w+")
        self.daemon = subprocess.Popen([EDGETAPD, "--config", self.config, *AS_ROOT], env=env, stdout=self.log,
                                       stderr=subprocess.STDOUT)
        self.addCleanup(self.stop)

    def opened(self, client):
        self.addCleanup(client.sock.close)
        self.addCleanup(client.lines.close)
        return client

    def write(self, cameras):
        with open(self.config, "w") as f:
            f.write(self.header + cameras)

    def stop(self):
        if self.daemon.poll() is None:
            self.daemon.kill()
            self.daemon.wait()
        self.log.seek(0)
        if any(o for o in self._outcome.result.failures + self._outcome.result.errors if o[0] is self):
            sys.stderr.write("daemon log:\n" + self.log.read())
        self.log.close()
        self.notify.sock.close()
        self.dir.cleanup()

    def path(self, name):
        return os.path.join(self.dir.name, name)

    def wait_running(self, control, names, timeout=15.0):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            cams = {c["name"]: c for c in control(cmd="list")["cameras"]}
            if sorted(cams) == sorted(names) and all(c["state"] == "running" and c["points"] > 0
                                                     for c in cams.values()):
                return cams
            time.sleep(0.1)
        self.fail(f"cameras {names} not all running: {control(cmd='list')}")

    def test_notify_reload_control_metrics(self):
        ready = self.notify.wait_for("READY=1")
        self.assertIn("cameras running", ready.get("STATUS", ""))
        for _ in range(3):
            self.notify.wait_for("WATCHDOG=1", timeout=2.0)

        control = self.opened(Control(self.path("control.sock")))
        self.wait_running(control, ["north", "south"])

        # Control: add a point, see it tracked, remove it, see it go.
        reply = control(cmd="add_points", camera="north", points=[{"id": "door", "x": 160, "y": 120}], id=7)
        self.assertEqual(reply, {"ok": True, "added": ["door"], "rejected": [], "id": 7})
        reply = control(cmd="add_points", camera="north", points=[{"id": "door", "x": 1, "y": 1},
                                                                  {"id": "far", "x": 5000, "y": 1}])
        self.assertTrue(reply["ok"])
        self.assertEqual(reply["added"], [])
        self.assertEqual(len(reply["rejected"]), 2, reply)
        tracks = self.opened(Tracks(self.path("tracks.sock"), ["north"]))
        for _ in range(50):
            ids = {p["id"] for p in tracks.next()["points"]}
            if "door" in ids:
                break
        self.assertIn("door", ids)
        self.assertEqual(control(cmd="remove_points", camera="north", ids=["door", "ghost"]),
                         {"ok": True, "removed": ["door"], "rejected": ["ghost: no such track"]})
        removed_at_us = time.time() * 1e6
        message = tracks.next()
        while message["publish_us"] < removed_at_us:  # published before the removal
            message = tracks.next()
        for _ in range(5):
            self.assertNotIn("door", {p["id"] for p in message["points"]})
            message = tracks.next()

        # Bad requests get errors and the connection stays usable.
        self.assertFalse(control.raw("{nonsense")["ok"])
        self.assertIn("unknown cmd", control(cmd="explode")["error"])
        self.assertIn("no camera named", control(cmd="add_points", camera="nowhere",
                                                 points=[{"id": "a", "x": 1, "y": 1}])["error"])
        self.assertFalse(control(cmd="add_points", camera="north", points=[{"x": 1}])["ok"])
        stats = control(cmd="stats")
        self.assertTrue(stats["ok"])
        self.assertEqual({c["name"] for c in stats["cameras"]}, {"north", "south"})
        self.assertEqual(stats["socket"]["subscribers"], 1)

        # Metrics and health.
        body = urllib.request.urlopen(f"http://127.0.0.1:{self.port}/metrics", timeout=5).read().decode()
        self.assertIn('edgetap_frames_tracked_total{camera="north"}', body)
        self.assertIn('edgetap_latency_seconds_bucket{camera="south",le="+Inf"}', body)
        self.assertIn("edgetap_subscribers 1", body)
        self.assertIn('edgetap_rung{camera="north",rung="klt"} 0', body)
        self.assertEqual({c["rung"] for c in stats["cameras"]}, {"klt"})
        health = urllib.request.urlopen(f"http://127.0.0.1:{self.port}/healthz", timeout=5)
        self.assertEqual(health.status, 200)
        self.assertEqual(json.loads(health.read())["cameras"], {"north": "running", "south": "running"})

        # Reload: north unchanged, south changed, east new.
        north_seq = tracks.next()["seq"]
        self.write(camera("north", "pinwheel") + camera("south", "ball", "[96, 64]") + camera("east", "snow"))
        self.daemon.send_signal(signal.SIGHUP)
        self.notify.wait_for("RELOADING=1")
        self.notify.wait_for("READY=1")
        self.wait_running(control, ["north", "south", "east"])
        # North kept running without a gap: its sequence continues on the same connection.
        for _ in range(5):
            message = tracks.next()
            self.assertEqual(message["seq"], north_seq + 1, "north restarted or skipped on reload")
            north_seq = message["seq"]
        south = self.opened(Tracks(self.path("tracks.sock"), ["south"])).next()
        self.assertEqual(south["size"], [320, 240])
        self.assertLess(south["seq"], 100, "south was not restarted")

        # A bad file keeps the running configuration.
        with open(self.config, "w") as f:
            f.write(self.header + "  - name: north\n    budget_ms: -1\n")
        self.daemon.send_signal(signal.SIGHUP)
        self.notify.wait_for("RELOADING=1")
        status = self.notify.wait_for("READY=1")["STATUS"]
        self.assertIn("reload rejected", status)
        self.assertIn("edgetap.yaml:", status)
        self.wait_running(control, ["north", "south", "east"])

        # Removing a camera stops it.
        self.write(camera("north", "pinwheel") + camera("south", "ball", "[96, 64]"))
        self.daemon.send_signal(signal.SIGHUP)
        self.notify.wait_for("RELOADING=1")
        self.notify.wait_for("READY=1")
        self.wait_running(control, ["north", "south"])

        self.daemon.send_signal(signal.SIGTERM)
        self.notify.wait_for("STOPPING=1")
        self.assertEqual(self.daemon.wait(timeout=10), 0)
        self.assertFalse(os.path.exists(self.path("control.sock")))

    def test_an_inherited_bad_setting_is_a_config_error_at_start_and_on_reload(self):
        # An even klt.window in defaults, with a camera that sets another klt key.
        bad = (self.header.replace("cameras:\n", "defaults: {klt: {window: 20}}\ncameras:\n")
               + camera("north", "pinwheel") + "    klt: {levels: 2}\n")
        self.notify.wait_for("READY=1")
        control = self.opened(Control(self.path("control.sock")))
        with open(self.config, "w") as f:
            f.write(bad)
        self.daemon.send_signal(signal.SIGHUP)
        self.notify.wait_for("RELOADING=1")
        status = self.notify.wait_for("READY=1")["STATUS"]
        self.assertIn("reload rejected", status)
        self.assertIn("edgetap.yaml:4:", status)  # the line in defaults where the window is written
        self.wait_running(control, ["north", "south"])

        started = subprocess.run([EDGETAPD, "--config", self.config, *AS_ROOT], capture_output=True, text=True,
                                 timeout=30)
        self.assertEqual(started.returncode, 78, started.stderr)
        self.assertIn("defaults.klt.window: must be odd", started.stderr)

    def test_unhealthy_camera_makes_healthz_fail(self):
        self.write(camera("north", "pinwheel") + "  - name: gone\n    source: rtsp://127.0.0.1:9/x\n")
        self.daemon.kill()
        self.daemon.wait()
        env = dict(os.environ, NOTIFY_SOCKET=self.path("notify.sock"))
        self.daemon = subprocess.Popen([EDGETAPD, "--config", self.config, *AS_ROOT], env=env, stdout=self.log,
                                       stderr=subprocess.STDOUT)
        self.notify.wait_for("READY=1")
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            try:
                urllib.request.urlopen(f"http://127.0.0.1:{self.port}/healthz", timeout=5)
            except urllib.error.HTTPError as e:
                self.assertEqual(e.code, 503)
                self.assertEqual(json.loads(e.read())["cameras"]["gone"], "reconnecting")
                return
            time.sleep(0.2)
        self.fail("/healthz stayed 200 with a camera that cannot connect")

    def healthz(self, port):
        return urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=5).status

    def test_a_reload_whose_new_endpoints_fail_keeps_the_old_ones(self):
        self.notify.wait_for("READY=1")
        d = self.dir.name
        busy = socket.socket()
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        self.addCleanup(busy.close)
        cameras = camera("north", "pinwheel") + camera("south", "ball")
        # A control path that cannot be bound and a metrics port another process holds.
        with open(self.config, "w") as f:
            f.write(f"publisher: {{socket: {d}/tracks.sock}}\ncontrol: {{socket: {d}/missing/control.sock}}\n"
                    f"metrics: {{listen: '127.0.0.1:{busy.getsockname()[1]}'}}\ncameras:\n" + cameras)
        self.daemon.send_signal(signal.SIGHUP)
        self.notify.wait_for("RELOADING=1")
        status = self.notify.wait_for("READY=1")["STATUS"]
        self.assertIn("reload partly failed", status)
        self.assertIn("control.sock", status)
        self.assertIn(str(busy.getsockname()[1]), status)
        # The old endpoints still serve.
        self.assertEqual(self.healthz(self.port), 200)
        control = self.opened(Control(self.path("control.sock")))
        self.assertTrue(control(cmd="list")["ok"])

        # Endpoints that work: both move, the old ones close. As root, the control socket
        # also gets its own group, which the track socket does not share.
        port = free_port()
        group = "daemon" if os.geteuid() == 0 and "daemon" in {g.gr_name for g in grp.getgrall()} else ""
        with open(self.config, "w") as f:
            f.write(f"publisher: {{socket: {d}/tracks.sock}}\n"
                    f"control: {{socket: {d}/control2.sock, group: '{group}'}}\n"
                    f"metrics: {{listen: '127.0.0.1:{port}'}}\ncameras:\n" + cameras)
        self.daemon.send_signal(signal.SIGHUP)
        self.notify.wait_for("RELOADING=1")
        self.assertNotIn("failed", self.notify.wait_for("READY=1")["STATUS"])
        self.assertEqual(self.healthz(port), 200)
        with self.assertRaises(OSError):
            self.healthz(self.port)
        self.assertTrue(self.opened(Control(self.path("control2.sock")))(cmd="list")["ok"])
        self.assertFalse(os.path.exists(self.path("control.sock")))
        self.assertEqual(os.stat(self.path("control2.sock")).st_mode & 0o7777, 0o660)
        if group:
            self.assertEqual(os.stat(self.path("control2.sock")).st_gid, grp.getgrnam(group).gr_gid)
            self.assertNotEqual(os.stat(self.path("tracks.sock")).st_gid, grp.getgrnam(group).gr_gid)

    def test_refuses_to_run_as_root_unless_allowed(self):
        command = [EDGETAPD, "--config", self.config]
        if os.geteuid() != 0:
            command = ["unshare", "--map-root-user", *command]  # root in a user namespace
            if subprocess.run(["unshare", "--map-root-user", "true"], capture_output=True).returncode != 0:
                self.skipTest("not root, and no user namespace to be root in")
        started = subprocess.run(command, capture_output=True, text=True, timeout=30)
        self.assertEqual(started.returncode, 1, started.stderr)
        self.assertIn("refusing to run as root", started.stderr)
        self.assertIn("--allow-root", started.stderr)


if __name__ == "__main__":
    unittest.main(verbosity=2)
