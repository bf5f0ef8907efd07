"""EdgeTAP's Python client: subscribe to edgetapd's track socket and drive its
control socket (standard library only). Schema version 1 (README "Versions and
compatibility"); the JSON Schemas are in /usr/share/edgetap/schema.
"""
from edgetap.client import (ControlClient, ControlError, Point, PointsChange, SubscribeError, Subscriber,
                            TrackMessage)

__all__ = ["ControlClient", "ControlError", "Point", "PointsChange", "SubscribeError", "Subscriber", "TrackMessage"]
