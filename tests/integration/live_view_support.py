"""Shared by the live view tests: an edgetapd with one test camera, its
sockets and HTTP listener, and readers for JPEG and PNG images (standard
library only)."""
import json
import os
import socket
import struct
import subprocess
import tempfile
import time
import urllib.error
import urllib.request
import zlib

AS_ROOT = ["--allow-root"] if os.geteuid() == 0 else []
SOURCE_SIZE = (320, 240)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Daemon:
    """edgetapd with camera `gate` (a scrolling SMPTE pattern, klt) on a free port."""

    def __init__(self, edgetapd):
        self.dir = tempfile.TemporaryDirectory()
        d = self.dir.name
        self.port = free_port()
        self.tracks = os.path.join(d, "tracks.sock")
        self.control = os.path.join(d, "control.sock")
        config = os.path.join(d, "edgetap.yaml")
        w, h = SOURCE_SIZE
        with open(config, "w") as f:
            f.write(f"publisher: {{socket: {self.tracks}}}\ncontrol: {{socket: {self.control}}}\n"
                    f"metrics: {{listen: '127.0.0.1:{self.port}'}}\ncameras:\n"
                    f"  - name: gate\n    source: test:smpte?width={w}&height={h}&fps=15&speed=1\n"
                    f"    tracker: klt\n    model_size: [160, 120]\n    queries: {{grid: [4, 3]}}\n")
        self.log_path = os.path.join(d, "daemon.log")
        self.log = open(self.log_path, "w+")
        self.process = subprocess.Popen([edgetapd, "--config", config, *AS_ROOT], stdout=self.log,
                                        stderr=subprocess.STDOUT)
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            status, _, _ = self.get("/cameras/gate/snapshot.jpg")
            if status == 200:
                return
            if self.process.poll() is not None:
                break
            time.sleep(0.2)
        self.stop()
        raise AssertionError("edgetapd served no snapshot within 30 s:\n" + self.log_text())

    def url(self, path):
        return f"http://127.0.0.1:{self.port}{path}"

    def get(self, path):
        """(status, content type, body); (0, '', b'') when nothing listens yet."""
        try:
            with urllib.request.urlopen(self.url(path), timeout=10) as r:
                return r.status, r.headers.get("Content-Type", ""), r.read()
        except urllib.error.HTTPError as e:
            return e.code, e.headers.get("Content-Type", ""), e.read()
        except (urllib.error.URLError, ConnectionError):
            return 0, "", b""

    def post(self, path, body, content_type="application/json"):
        request = urllib.request.Request(self.url(path), data=body, method="POST",
                                         headers={"Content-Type": content_type})
        try:
            with urllib.request.urlopen(request, timeout=10) as r:
                return r.status, json.loads(r.read())
        except urllib.error.HTTPError as e:
            return e.code, json.loads(e.read())

    def ask(self, request):
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
            s.connect(self.control)
            s.sendall(json.dumps(request).encode() + b"\n")
            return json.loads(s.makefile("r").readline())

    def subscribe(self, cameras):
        """A track socket subscriber: (socket, its line reader, the hello's reply)."""
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.connect(self.tracks)
        s.settimeout(10)
        lines = s.makefile("r")
        s.sendall(json.dumps({"subscribe": cameras}).encode() + b"\n")
        return s, lines, json.loads(lines.readline())

    def log_text(self):
        self.log.flush()
        with open(self.log_path) as f:
            return f.read()

    def stop(self):
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self.log.close()
        self.dir.cleanup()


def find_point(lines, point_id, messages=100):
    """The first of the next `messages` track messages that holds `point_id`: that point."""
    for _ in range(messages):
        message = json.loads(lines.readline())
        for p in message.get("points", []):
            if p["id"] == point_id:
                return p
    return None


def jpeg_size(data):
    """(width, height) from a baseline or progressive JPEG's SOF segment; None if not a JPEG."""
    if data[:2] != b"\xff\xd8":
        return None
    at = 2
    while at + 4 <= len(data):
        if data[at] != 0xFF:
            return None
        marker = data[at + 1]
        length = struct.unpack(">H", data[at + 2:at + 4])[0]
        if marker in (0xC0, 0xC1, 0xC2):
            height, width = struct.unpack(">HH", data[at + 5:at + 9])
            return width, height
        at += 2 + length
    return None


def png_pixels(data):
    """(width, height, rows of (r, g, b) tuples) of an 8-bit RGB or RGBA PNG."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    at, idat, header = 8, b"", None
    while at < len(data):
        length, kind = struct.unpack(">I4s", data[at:at + 8])
        chunk = data[at + 8:at + 8 + length]
        if kind == b"IHDR":
            header = struct.unpack(">IIBBBBB", chunk)
        elif kind == b"IDAT":
            idat += chunk
        at += 12 + length
    width, height, depth, colour = header[:4]
    assert depth == 8 and colour in (2, 6), f"PNG depth {depth} colour type {colour} not handled"
    channels = 3 if colour == 2 else 4
    raw = zlib.decompress(idat)
    stride = width * channels
    rows, previous = [], bytearray(stride)
    for y in range(height):
        kind = raw[y * (stride + 1)]
        line = bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for i in range(stride):
            a = line[i - channels] if i >= channels else 0
            b = previous[i]
            c = previous[i - channels] if i >= channels else 0
            if kind == 1:
                line[i] = (line[i] + a) & 0xFF
            elif kind == 2:
                line[i] = (line[i] + b) & 0xFF
            elif kind == 3:
                line[i] = (line[i] + (a + b) // 2) & 0xFF
            elif kind == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 0xFF
        rows.append([tuple(line[x * channels:x * channels + 3]) for x in range(width)])
        previous = line
    return width, height, rows
