#!/usr/bin/env python3
"""The Python module edgetap (package python3-edgetap) against a running
edgetapd: subscribe (hello, typed messages, one camera of two), control
requests (list, stats, add and remove points, an error reply), and the errors
for a missing socket and an unknown camera's request.

usage: python_client_test.py EDGETAPD PYTHON_MODULE_DIR
"""
import os
import sys
import unittest

MODULE_DIR = sys.argv.pop(2)
EDGETAPD = sys.argv.pop(1)
sys.path.insert(0, MODULE_DIR)
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import edgetap  # noqa: E402
from daemon_fixture import KLT_CAMERA, Daemon  # noqa: E402


class PythonClient(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.daemon = Daemon(EDGETAPD, "cameras:\n" + KLT_CAMERA.format(name="north") + KLT_CAMERA.format(name="south"))
        cls.daemon.wait_tracking("north")

    @classmethod
    def tearDownClass(cls):
        cls.daemon.stop()

    def test_subscribe_to_one_camera(self):
        with edgetap.Subscriber(self.daemon.tracks, ["south"]) as tracks:
            self.assertEqual(tracks.hello["subscribe"], ["south"])
            messages = []
            for message in tracks:
                messages.append(message)
                if len(messages) == 3:
                    break
        self.assertEqual({m.camera for m in messages}, {"south"})
        self.assertEqual([m.seq - messages[0].seq for m in messages], [0, 1, 2])
        self.assertEqual(messages[0].size, (320, 240))
        self.assertEqual(len([p for p in messages[0].points if not p.lost]), 12)  # the 4 x 3 grid
        self.assertIsInstance(messages[0].points[0], edgetap.Point)

    def test_control(self):
        with edgetap.ControlClient(self.daemon.control) as control:
            self.assertEqual([c["name"] for c in control.list()], ["north", "south"])
            self.assertIn("socket", control.stats())
            added = control.add_points("north", [("door", 100, 80), ("bad\nid", 1, 1)])
            self.assertEqual(added.applied, ["door"])
            self.assertEqual(len(added.rejected), 1, added)
            self.assertIn("points[1]", added.rejected[0])
            removed = control.remove_points("north", ["door"])
            self.assertEqual(removed, edgetap.PointsChange(["door"], []))
            with self.assertRaisesRegex(edgetap.ControlError, "no camera named 'east'"):
                control.add_points("east", [("a", 1, 1)])

    def test_a_missing_socket_says_what_to_check(self):
        with self.assertRaisesRegex(ConnectionError, "does edgetapd run"):
            edgetap.ControlClient(os.path.join(self.daemon.dir, "nothing.sock"))

    def test_a_refused_subscription_raises(self):
        with self.assertRaisesRegex(edgetap.SubscribeError, "'subscribe' must be a list of camera names"):
            edgetap.Subscriber(self.daemon.tracks, [1])


if __name__ == "__main__":
    unittest.main()
