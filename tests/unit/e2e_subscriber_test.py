#!/usr/bin/env python3
"""scripts/e2e_subscriber.py's counts, which the GPU end-to-end runs' "untracked
frames" rest on: frames between two of a camera's messages that no message
covers beyond the queue's drops, a capture that counts from 0 again, and
sequence gaps.

usage: e2e_subscriber_test.py SOURCE_DIR
"""
import importlib.util
import sys
import unittest

spec = importlib.util.spec_from_file_location("e2e_subscriber", f"{sys.argv.pop(1)}/scripts/e2e_subscriber.py")
subscriber = importlib.util.module_from_spec(spec)
spec.loader.exec_module(subscriber)


def message(seq, frame, drops=0, rung="a", ids=("1",)):
    return {"seq": seq, "frame": frame, "queue_drops": drops, "rung": rung, "capture_us": 1000 * frame,
            "publish_us": 1000 * frame + 4000, "tracker_ms": 3.0,
            "points": [{"id": i, "lost": False} for i in ids]}


def summary(messages):
    camera = subscriber.Camera()
    for m in messages:
        camera.add(m)
    return camera.summary(None, 0.0)


class Counts(unittest.TestCase):
    def test_every_frame_tracked(self):
        s = summary([message(i, i) for i in range(10)])
        self.assertEqual(s["frames_untracked"], 0)
        self.assertEqual(s["seq_gaps"], 0)

    def test_frames_the_queue_dropped_are_not_untracked(self):
        s = summary([message(0, 0), message(1, 1), message(2, 4, drops=2), message(3, 5, drops=2)])
        self.assertEqual(s["frames_untracked"], 0)

    def test_a_frame_no_message_covers_is_untracked(self):
        s = summary([message(0, 0), message(1, 1), message(2, 4, drops=1), message(3, 6, drops=1)])
        self.assertEqual(s["frames_untracked"], 2)  # frames 2 or 3 (one dropped) and 5

    def test_a_capture_counting_from_zero_again_is_a_restart_not_a_gap(self):
        s = summary([message(0, 10), message(1, 11), message(2, 0), message(3, 1)])
        self.assertEqual(s["frames_untracked"], 0)
        self.assertEqual(s["capture_restarts"], 1)

    def test_a_missing_message_is_a_sequence_gap(self):
        s = summary([message(0, 0), message(2, 2), message(3, 3)])
        self.assertEqual(s["seq_gaps"], 1)


if __name__ == "__main__":
    unittest.main()
