"""Clients of edgetapd's two Unix sockets.

Subscriber: the track socket (default /run/edgetap/tracks.sock). Sends the
hello, checks the reply, then yields one TrackMessage per processed frame.
ControlClient: the control socket (default /run/edgetap/control.sock), one
JSON request and reply per line; an error reply raises ControlError.
"""
import json
import socket
from dataclasses import dataclass, field
from typing import Iterable, Iterator, List, Optional, Sequence, Tuple

SCHEMA_VERSION = 1
DEFAULT_TRACK_SOCKET = "/run/edgetap/tracks.sock"
DEFAULT_CONTROL_SOCKET = "/run/edgetap/control.sock"


class SubscribeError(RuntimeError):
    """The track socket refused the subscription or sent something this client does not understand."""


class ControlError(RuntimeError):
    """edgetapd answered a control request with {"ok": false, "error": ...}."""


@dataclass(frozen=True)
class Point:
    id: str
    x: float
    y: float
    visible: bool
    confidence: float
    lost: bool


@dataclass(frozen=True)
class TrackMessage:
    camera: str
    seq: int
    frame: int
    capture_us: int
    publish_us: int
    latency_ms: float
    tracker_ms: float
    rung: str
    queue_drops: int
    size: Tuple[int, int]
    points: List[Point]
    dropped: int = 0

    @staticmethod
    def from_json(message: dict) -> "TrackMessage":
        if message.get("v") != SCHEMA_VERSION:
            raise SubscribeError(f"schema version {message.get('v')!r}, this client reads {SCHEMA_VERSION}")
        try:
            return TrackMessage(
                camera=message["camera"], seq=message["seq"], frame=message["frame"],
                capture_us=message["capture_us"], publish_us=message["publish_us"],
                latency_ms=message["latency_ms"], tracker_ms=message["tracker_ms"], rung=message["rung"],
                queue_drops=message["queue_drops"], size=(message["size"][0], message["size"][1]),
                points=[Point(p["id"], p["x"], p["y"], p["visible"], p["confidence"], p["lost"])
                        for p in message["points"]],
                dropped=message.get("dropped", 0))
        except (KeyError, IndexError, TypeError) as e:
            raise SubscribeError(f"a tracks message without the field {e}: {json.dumps(message)[:200]}") from None


@dataclass(frozen=True)
class PointsChange:
    """The reply to add_points (applied = added) or remove_points (applied = removed)."""
    applied: List[str]
    rejected: List[str] = field(default_factory=list)


def _connect(path: str, timeout: Optional[float]) -> socket.socket:
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.settimeout(timeout)
    try:
        sock.connect(path)
    except OSError as e:
        sock.close()
        hint = {2: "does edgetapd run, and is this the socket its configuration names?",
                13: "join the socket's group (the service's: edgetap) and log in again",
                111: "nothing listens on it any more"}.get(e.errno, "")
        raise ConnectionError(f"{path}: {e.strerror}" + (f" ({hint})" if hint else "")) from None
    return sock


class Subscriber:
    """Reads track messages; `cameras` empty = every camera. Use as an iterator, ideally in a `with`."""

    def __init__(self, path: str = DEFAULT_TRACK_SOCKET, cameras: Sequence[str] = (), timeout: Optional[float] = 30):
        self.path = path
        self._sock = _connect(path, timeout)
        self._sock.sendall(json.dumps({"subscribe": list(cameras), "format": "ndjson"}).encode() + b"\n")
        self._lines = self._sock.makefile("r", encoding="utf-8")
        reply = self._read()
        if reply is None:
            raise SubscribeError(f"{path}: the connection closed before the hello reply")
        if reply.get("type") != "hello":
            raise SubscribeError(f"{path}: {reply.get('error', json.dumps(reply)[:200])}")
        self.hello = reply

    def _read(self) -> Optional[dict]:
        line = self._lines.readline()
        if not line:
            return None
        try:
            return json.loads(line)
        except json.JSONDecodeError as e:
            raise SubscribeError(f"{self.path}: not a JSON line ({e}): {line[:200]!r}") from None

    def __iter__(self) -> Iterator[TrackMessage]:
        while True:
            message = self._read()
            if message is None:
                return
            if message.get("type") == "error":
                raise SubscribeError(f"{self.path}: {message.get('error')}")
            if message.get("type") == "tracks":
                yield TrackMessage.from_json(message)

    def close(self) -> None:
        self._lines.close()
        self._sock.close()

    def __enter__(self) -> "Subscriber":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


class ControlClient:
    """One connection to the control socket; requests are answered in order."""

    def __init__(self, path: str = DEFAULT_CONTROL_SOCKET, timeout: Optional[float] = 30):
        self.path = path
        self._sock = _connect(path, timeout)
        self._lines = self._sock.makefile("r", encoding="ascii")

    def request(self, request: dict) -> dict:
        """Sends `request`, returns the reply; raises ControlError on {"ok": false}."""
        self._sock.sendall(json.dumps(request).encode() + b"\n")
        line = self._lines.readline()
        if not line:
            raise ControlError(f"{self.path}: the connection closed without a reply")
        reply = json.loads(line)
        if not reply.get("ok"):
            raise ControlError(reply.get("error", line.strip()))
        return reply

    def list(self) -> List[dict]:
        return self.request({"cmd": "list"})["cameras"]

    def stats(self) -> dict:
        return self.request({"cmd": "stats"})

    def add_points(self, camera: str, points: Iterable[Tuple[str, float, float]]) -> PointsChange:
        """Points (id, x, y) in source pixels of the camera's latest frame."""
        reply = self.request({"cmd": "add_points", "camera": camera,
                              "points": [{"id": i, "x": x, "y": y} for i, x, y in points]})
        return PointsChange(reply["added"], reply["rejected"])

    def remove_points(self, camera: str, ids: Iterable[str]) -> PointsChange:
        reply = self.request({"cmd": "remove_points", "camera": camera, "ids": list(ids)})
        return PointsChange(reply["removed"], reply["rejected"])

    def close(self) -> None:
        self._lines.close()
        self._sock.close()

    def __enter__(self) -> "ControlClient":
        return self

    def __exit__(self, *exc) -> None:
        self.close()
