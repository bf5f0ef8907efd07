"""A running edgetapd for Python tests: writes a configuration into a scratch
folder (sockets there too, metrics off unless asked), starts the daemon with
NOTIFY_SOCKET on a datagram socket the fixture reads (so STATUS= lines can be
checked as systemd would show them), and stops it at the end of the test.
"""
import json
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time

KLT_CAMERA = ("  - name: {name}\n    source: test:pinwheel?width=320&height=240&fps=20&speed=1\n"
              "    tracker: klt\n    model_size: [128, 96]\n    queries: {{grid: [4, 3]}}\n")


def as_root_flags(edgetapd):
    """edgetapd refuses to run as root unless told to; CI containers often are root."""
    return ["--allow-root"] if os.geteuid() == 0 else []


class Daemon:
    def __init__(self, edgetapd, cameras_yaml="cameras: []\n", extra_yaml=""):
        self.dir = tempfile.mkdtemp(prefix="edgetapd-")
        self.tracks = os.path.join(self.dir, "tracks.sock")
        self.control = os.path.join(self.dir, "control.sock")
        self.config = os.path.join(self.dir, "edgetap.yaml")
        self.write_config(cameras_yaml, extra_yaml)
        self.notify = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        self.notify.bind(os.path.join(self.dir, "notify.sock"))
        self.notify.settimeout(0.2)
        self.notifications = []
        self.log = open(os.path.join(self.dir, "daemon.log"), "w+")
        env = dict(os.environ, NOTIFY_SOCKET=os.path.join(self.dir, "notify.sock"))
        self.process = subprocess.Popen([edgetapd, "--config", self.config, *as_root_flags(edgetapd)],
                                        stdout=self.log, stderr=subprocess.STDOUT, env=env)
        if not self.wait_notification(lambda n: "READY=1" in n, 30):
            raise AssertionError("edgetapd sent no READY=1 within 30 s; log:\n" + self.log_text())

    def write_config(self, cameras_yaml, extra_yaml=""):
        with open(self.config, "w") as f:
            f.write(f"publisher: {{socket: {self.tracks}}}\ncontrol: {{socket: {self.control}}}\n"
                    f"metrics: {{listen: ''}}\n{extra_yaml}{cameras_yaml}")

    def log_text(self):
        self.log.flush()
        self.log.seek(0)
        return self.log.read()

    def wait_notification(self, matches, seconds):
        """Reads notifications until one `matches` (returns it) or `seconds` pass (returns None)."""
        deadline = time.monotonic() + seconds
        for n in self.notifications:
            if matches(n):
                return n
        while time.monotonic() < deadline and self.process.poll() is None:
            try:
                n = self.notify.recv(4096).decode(errors="replace")
            except socket.timeout:
                continue
            self.notifications.append(n)
            if matches(n):
                return n
        return None

    def reload(self):
        """SIGHUP; returns the READY=1 notification that ends the reload."""
        seen = len(self.notifications)
        self.process.send_signal(signal.SIGHUP)
        return self.wait_notification(
            lambda n: "READY=1" in n and self.notifications.index(n) >= seen and
            any("RELOADING=1" in m for m in self.notifications[seen:]), 30)

    def control_request(self, request):
        """One control request; returns the decoded reply."""
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
            s.settimeout(10)
            s.connect(self.control)
            s.sendall(json.dumps(request).encode() + b"\n")
            reply = b""
            while not reply.endswith(b"\n"):
                chunk = s.recv(65536)
                if not chunk:
                    break
                reply += chunk
        return json.loads(reply)

    def wait_tracking(self, camera, seconds=30):
        """Until `camera` has tracked a frame."""
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            stats = self.control_request({"cmd": "stats"})
            if any(c["name"] == camera and c["frames_tracked"] > 0 for c in stats["cameras"]):
                return
            time.sleep(0.2)
        raise AssertionError(f"camera {camera} tracked no frame within {seconds} s; log:\n" + self.log_text())

    def stop(self):
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(15)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self.notify.close()
        self.log.close()
        shutil.rmtree(self.dir, True)
