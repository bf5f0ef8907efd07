#!/usr/bin/env python3
"""The live view in a real headless browser (Chromium, driven over the
DevTools protocol on a pipe): the camera's page shows the frame (a screenshot
that is not blank, the image at the camera's source size), and a click on the
frame adds a point there that the track socket then carries.

usage: live_view_browser_test.py EDGETAPD
Exits 77 (skipped) with a message when no Chromium is installed.
"""
import base64
import fcntl
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from live_view_support import SOURCE_SIZE, Daemon, find_point, png_pixels  # noqa: E402

EDGETAPD = sys.argv.pop(1) if len(sys.argv) > 1 else "edgetapd"
CHROMIUM = next((shutil.which(n) for n in ("chromium", "chromium-browser", "google-chrome") if shutil.which(n)), None)
BACKGROUND = (0x18, 0x18, 0x18)  # the page's


def above_four(fd):
    """`fd` moved to a number above 4, so that placing the pipes on 3 and 4 clobbers neither."""
    moved = fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, 10)
    os.close(fd)
    return moved


class Browser:
    """Headless Chromium; commands and replies are NUL-terminated JSON on fds 3 and 4."""

    def __init__(self):
        self.profile = tempfile.TemporaryDirectory(ignore_cleanup_errors=True)  # a late helper's file
        to_browser_r, self.to_browser = os.pipe()
        self.from_browser, from_browser_w = os.pipe()
        to_browser_r, from_browser_w = (above_four(fd) for fd in (to_browser_r, from_browser_w))
        flags = ["--headless", "--disable-gpu", "--no-first-run", "--no-default-browser-check",
                 "--remote-debugging-pipe", f"--user-data-dir={self.profile.name}", "--window-size=800,600"]
        if os.geteuid() == 0:
            flags.append("--no-sandbox")  # Chromium's sandbox refuses root
        # Chromium reads commands on fd 3 and writes replies on fd 4: bash (whose redirections take fds above 9) puts the pipes there.
        placed = f'exec "$0" "$@" 3<&{to_browser_r} 4>&{from_browser_w} {to_browser_r}<&- {from_browser_w}>&-'
        self.process = subprocess.Popen(["bash", "-c", placed, CHROMIUM, *flags, "about:blank"],
                                        pass_fds=(to_browser_r, from_browser_w),
                                        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        os.close(to_browser_r)
        os.close(from_browser_w)
        self.next_id, self.buffer, self.session = 0, b"", None

    def call(self, method, **params):
        self.next_id += 1
        message = {"id": self.next_id, "method": method, "params": params}
        if self.session:
            message["sessionId"] = self.session
        os.write(self.to_browser, json.dumps(message).encode() + b"\0")
        while True:
            while b"\0" not in self.buffer:
                chunk = os.read(self.from_browser, 1 << 16)
                if not chunk:
                    raise AssertionError(f"Chromium closed its pipe during {method}")
                self.buffer += chunk
            line, self.buffer = self.buffer.split(b"\0", 1)
            reply = json.loads(line)
            if reply.get("id") == self.next_id:
                if "error" in reply:
                    raise AssertionError(f"{method}: {reply['error']}")
                return reply["result"]

    def open(self, url):
        target = self.call("Target.createTarget", url=url)["targetId"]
        self.session = self.call("Target.attachToTarget", targetId=target, flatten=True)["sessionId"]

    def evaluate(self, expression):
        return self.call("Runtime.evaluate", expression=expression, returnByValue=True)["result"].get("value")

    def wait_for(self, expression, timeout=20):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            value = self.evaluate(expression)
            if value:
                return value
            time.sleep(0.1)
        raise AssertionError(f"not true within {timeout} s: {expression}")

    def close(self):
        # Browser.close ends its helper processes too (a kill would leave them writing to the profile).
        self.session = None
        try:
            self.call("Browser.close")
            self.process.wait(timeout=10)
        except (AssertionError, OSError, subprocess.TimeoutExpired):
            self.process.kill()
            self.process.wait()
        os.close(self.to_browser)
        os.close(self.from_browser)
        self.profile.cleanup()


class BrowserTest(unittest.TestCase):
    def setUp(self):
        self.daemon = Daemon(EDGETAPD)
        self.addCleanup(self.daemon.stop)
        self.browser = Browser()
        self.addCleanup(self.browser.close)
        self.browser.open(self.daemon.url("/cameras/gate/view"))
        # The page has loaded the frame at least twice: it refreshes.
        self.browser.wait_for("document.getElementById('frame').naturalWidth > 0")
        first = self.browser.evaluate("document.getElementById('frame').src")
        self.browser.wait_for(f"document.getElementById('frame').complete && "
                              f"document.getElementById('frame').src != {json.dumps(first)}")

    def frame_box(self):
        return self.browser.evaluate(
            "(() => { const r = document.getElementById('frame').getBoundingClientRect(); const i = "
            "document.getElementById('frame'); return {x: r.left, y: r.top, width: r.width, height: r.height, "
            "natural: [i.naturalWidth, i.naturalHeight]}; })()")

    def test_the_page_shows_the_frame(self):
        box = self.frame_box()
        self.assertEqual(tuple(box["natural"]), SOURCE_SIZE)
        shot = base64.b64decode(self.browser.call("Page.captureScreenshot", format="png")["data"])
        width, height, rows = png_pixels(shot)
        inside = [rows[y][x] for y in range(int(box["y"]) + 2, int(box["y"] + box["height"]) - 2, 4)
                  for x in range(int(box["x"]) + 2, int(box["x"] + box["width"]) - 2, 4)]
        self.assertGreater(len(inside), 1000, f"the frame covers too little of the {width}x{height} screenshot")
        background = sum(1 for p in inside if max(abs(a - b) for a, b in zip(p, BACKGROUND)) < 8)
        self.assertLess(background, len(inside) // 10, "the frame's area is the page's background: blank")
        # The SMPTE pattern: many distinct colours, several of them saturated.
        self.assertGreater(len({tuple(c // 32 for c in p) for p in inside}), 6, "the frame is nearly uniform")
        self.assertGreater(sum(1 for p in inside if max(p) - min(p) > 100), len(inside) // 4,
                           "too few saturated pixels for the SMPTE bars")

    def test_a_click_adds_a_point_there(self):
        sock, lines, hello = self.daemon.subscribe(["gate"])
        self.addCleanup(sock.close)
        self.assertEqual(hello["type"], "hello")
        box = self.frame_box()
        target = (100.0, 80.0)  # source pixels
        x = box["x"] + (target[0] + 0.5) * box["width"] / SOURCE_SIZE[0]
        y = box["y"] + (target[1] + 0.5) * box["height"] / SOURCE_SIZE[1]
        for kind in ("mousePressed", "mouseReleased"):
            self.browser.call("Input.dispatchMouseEvent", type=kind, x=x, y=y, button="left", clickCount=1)
        text = self.browser.wait_for(
            "(() => { const t = document.getElementById('reply').textContent; return t ? t : null; })()")
        self.assertTrue(text.startswith("added p1 at"), text)
        self.assertEqual(self.browser.evaluate("document.getElementById('point-id').value"), "p2")
        point = find_point(lines, "p1")
        self.assertIsNotNone(point, "the clicked point never reached the track socket")
        self.assertLess(abs(point["x"] - target[0]) + abs(point["y"] - target[1]), 12, point)


if __name__ == "__main__":
    if CHROMIUM is None:
        print("SKIPPED: no chromium, chromium-browser or google-chrome on PATH "
              "(scripts/install-deps.sh installs Debian's chromium)")
        sys.exit(77)
    unittest.main()
