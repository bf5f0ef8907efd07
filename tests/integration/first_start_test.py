#!/usr/bin/env python3
"""edgetapd as the package first starts it: the shipped configuration runs no
camera, the daemon starts anyway, says in STATUS= (what `systemctl status`
shows) and in its log what to edit, and a reload that adds a camera starts it.

usage: first_start_test.py EDGETAPD SOURCE_DIR
"""
import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from daemon_fixture import KLT_CAMERA, Daemon  # noqa: E402

SOURCE_DIR = sys.argv.pop(2)
EDGETAPD = sys.argv.pop(1)


class FirstStartTest(unittest.TestCase):
    def test_the_shipped_configuration_runs_no_camera(self):
        with open(os.path.join(SOURCE_DIR, "config", "edgetap.yaml")) as f:
            shipped = f.read()
        self.assertIn("\ncameras: []\n", shipped)
        self.assertNotIn("\n  - name:", shipped, "a camera entry is not commented out")

    def test_no_cameras_says_what_to_edit_and_reload_adds_one(self):
        daemon = Daemon(EDGETAPD)
        self.addCleanup(daemon.stop)
        ready = daemon.wait_notification(lambda n: "READY=1" in n, 1)
        self.assertIn("STATUS=no cameras configured: add one under 'cameras:' in " + daemon.config, ready)
        self.assertIn("systemctl reload edgetapd", ready)
        self.assertIn("no cameras configured", daemon.log_text())
        self.assertEqual(daemon.control_request({"cmd": "list"}), {"ok": True, "cameras": []})

        daemon.write_config("cameras:\n" + KLT_CAMERA.format(name="porch"))
        ready = daemon.reload()
        self.assertIsNotNone(ready, "no READY=1 after the reload; log:\n" + daemon.log_text())
        daemon.wait_tracking("porch")
        self.assertEqual([c["name"] for c in daemon.control_request({"cmd": "list"})["cameras"]], ["porch"])
        status = daemon.wait_notification(lambda n: "STATUS=1 of 1 cameras running" in n, 10)
        self.assertIsNotNone(status, f"notifications: {daemon.notifications[-3:]}")


if __name__ == "__main__":
    unittest.main()
