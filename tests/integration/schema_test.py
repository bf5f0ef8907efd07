#!/usr/bin/env python3
"""The JSON Schemas in schema/ against real output: a running edgetapd's
track socket (hello reply, tracks messages, the error for a bad hello) and
control socket (every request and its reply, an error reply), and the shipped
configuration (as is, and with its camera examples uncommented). Each schema
is also shown to reject a broken instance, so a schema that accepts anything
fails here.

usage: schema_test.py EDGETAPD SOURCE_DIR
"""
import copy
import glob
import json
import os
import socket
import sys
import unittest

import jsonschema
import yaml

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from daemon_fixture import KLT_CAMERA, Daemon  # noqa: E402

SOURCE_DIR = sys.argv.pop(2)
EDGETAPD = sys.argv.pop(1)
SCHEMA_DIR = os.path.join(SOURCE_DIR, "schema")


def all_schemas():
    """Every schema file by its $id, so that one file's $ref into another resolves offline."""
    schemas = {}
    for file in sorted(os.listdir(SCHEMA_DIR)):
        with open(os.path.join(SCHEMA_DIR, file)) as f:
            schema = json.load(f)
        schemas[schema["$id"]] = schema
    return schemas


def validator(name, definition=None):
    """A validator for schema/NAME.schema.json, or for one of its $defs."""
    with open(os.path.join(SCHEMA_DIR, f"{name}.schema.json")) as f:
        schema = json.load(f)
    if definition is not None:
        schema = dict(schema, **{"$ref": f"#/$defs/{definition}"})
        for key in ("oneOf", "anyOf"):
            schema.pop(key, None)
    try:
        from referencing import Registry, Resource
    except ImportError:  # jsonschema before 4.18 (Debian 12's): a resolver with a store
        resolver = jsonschema.RefResolver.from_schema(schema, store=all_schemas())
        return jsonschema.Draft202012Validator(schema, resolver=resolver)
    registry = Registry().with_resources((uri, Resource.from_contents(s)) for uri, s in all_schemas().items())
    return jsonschema.Draft202012Validator(schema, registry=registry)


def assert_valid(test, name, instance, definition=None):
    errors = sorted(validator(name, definition).iter_errors(instance), key=str)
    test.assertFalse(errors, f"{name} {definition or ''}: {[e.message for e in errors[:3]]} in {json.dumps(instance)[:600]}")


def assert_invalid(test, name, instance, definition=None):
    test.assertFalse(validator(name, definition).is_valid(instance),
                     f"{name} {definition or ''} accepts a broken instance: {json.dumps(instance)[:300]}")


def subscribe(path, hello, count):
    """The hello reply and then `count` messages, decoded."""
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
        s.settimeout(20)
        s.connect(path)
        s.sendall(hello + b"\n")
        lines = s.makefile("r", encoding="utf-8")
        return [json.loads(lines.readline()) for _ in range(count + 1)]


class SchemasAreValid(unittest.TestCase):
    def test_every_schema_is_draft_2020_12(self):
        names = sorted(glob.glob(os.path.join(SCHEMA_DIR, "*.schema.json")))
        self.assertGreaterEqual(len(names), 6, names)
        for name in names:
            with open(name) as f:
                schema = json.load(f)
            self.assertEqual(schema["$schema"], "https://json-schema.org/draft/2020-12/schema", name)
            jsonschema.Draft202012Validator.check_schema(schema)


class DaemonOutput(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.daemon = Daemon(EDGETAPD, "cameras:\n" + KLT_CAMERA.format(name="north"))
        cls.daemon.wait_tracking("north")

    @classmethod
    def tearDownClass(cls):
        cls.daemon.stop()

    def test_hello_and_tracks_messages(self):
        hello = {"subscribe": ["north"], "format": "ndjson"}
        assert_valid(self, "hello", hello)
        assert_invalid(self, "hello", {"subscribe": "north"})
        reply, *messages = subscribe(self.daemon.tracks, json.dumps(hello).encode(), 5)
        assert_valid(self, "track-message", reply)
        assert_valid(self, "track-message", reply, "hello")
        for message in messages:
            assert_valid(self, "track-message", message, "tracks")
            assert_valid(self, "track-message", message)
        self.assertEqual(len([p for p in messages[0]["points"] if not p["lost"]]), 12)  # the 4 x 3 grid
        broken = copy.deepcopy(messages[0])
        del broken["points"][0]["visible"]
        assert_invalid(self, "track-message", broken)

    def test_error_for_a_bad_hello(self):
        error = subscribe(self.daemon.tracks, b'{"format": "xml"}', 0)[0]
        self.assertEqual(error["type"], "error")
        assert_valid(self, "track-message", error, "error")

    def test_control_requests_and_replies(self):
        requests = [
            ({"cmd": "list"}, "list"),
            ({"cmd": "stats", "id": 7}, "stats"),
            ({"cmd": "add_points", "camera": "north", "points": [{"id": "door", "x": 40, "y": 30}]}, "add_points"),
            ({"cmd": "remove_points", "camera": "north", "ids": ["door", "nope"]}, "remove_points"),
        ]
        for request, kind in requests:
            assert_valid(self, "control-request", request)
            reply = self.daemon.control_request(request)
            self.assertTrue(reply["ok"], reply)
            assert_valid(self, "control-reply", reply, kind)
            assert_valid(self, "control-reply", reply)
        error = self.daemon.control_request({"cmd": "add_points", "camera": "south", "points": [{"id": "a", "x": 1, "y": 1}]})
        self.assertFalse(error["ok"])
        assert_valid(self, "control-reply", error, "error")
        assert_invalid(self, "control-request", {"cmd": "add_points", "camera": "north"})
        assert_invalid(self, "control-reply", dict(self.daemon.control_request({"cmd": "list"}), ok="yes"))


class ShippedConfiguration(unittest.TestCase):
    def load(self, uncomment):
        lines = []
        with open(os.path.join(SOURCE_DIR, "config", "edgetap.yaml")) as f:
            for line in f.read().splitlines():
                if uncomment and line == "cameras: []":
                    line = "cameras:"
                if uncomment and line.startswith("#  "):
                    line = line[1:]
                lines.append(line)
        return yaml.safe_load("\n".join(lines))

    def test_as_shipped(self):
        config = self.load(uncomment=False)
        self.assertEqual(config["cameras"], [])
        assert_valid(self, "config", config)

    def test_with_the_examples_uncommented(self):
        config = self.load(uncomment=True)
        self.assertEqual(len(config["cameras"]), 5)
        assert_valid(self, "config", config)
        config["cameras"][0]["budget_mss"] = 5
        assert_invalid(self, "config", config)

    def test_rejects_what_the_loader_rejects(self):
        for broken in ({"cameras": [{"name": "a b", "source": "test:ball"}]},
                       {"cameras": [{"name": "a", "source": "test:ball", "klt": {"window": 20}}]},
                       {"cameras": [], "mqtt": {"qos": 2}},
                       {"version": 1}):
            assert_invalid(self, "config", broken)


if __name__ == "__main__":
    unittest.main()
