"""A small real MQTT test client (paho-mqtt 2.x) that records what it receives."""

from __future__ import annotations

import itertools
import threading
import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import paho.mqtt.client as mqtt
from paho.mqtt.enums import CallbackAPIVersion

from engine.broker.acl import DEVICE_PREFIXES


@dataclass(frozen=True)
class Received:
    topic: str
    payload: bytes
    retain: bool
    qos: int


_counter = itertools.count()


def _next_device(role: str) -> str:
    """A fresh device id of the role that is also a broker user (mosquitto binds the client id to
    the username, so two clients of one user would throw each other off): ``<role>-9`` down to ``-2``
    in turn, or a random one for a role without device users."""
    from engine.wire import Role

    try:
        prefix = DEVICE_PREFIXES[Role(role)][0]
    except ValueError:
        return f"{role}-{uuid.uuid4().hex[:6]}"
    return f"{prefix}-{9 - next(_counter) % 8}"


class TestClient:
    """Connects with a role's credentials; ``received`` lists every message that arrived."""

    __test__ = False  # not a pytest class

    def __init__(self, broker: Any, role: str, client_id: str | None = None, *,
                 password: str | None = None, will: tuple[str, bytes] | None = None) -> None:
        self.client_id = client_id or _next_device(role)
        self.received: list[Received] = []
        self.granted: list[list[int]] = []
        self.connect_rc: Any = None
        self._cond = threading.Condition()
        self._client = mqtt.Client(CallbackAPIVersion.VERSION2, client_id=self.client_id,
                                   protocol=mqtt.MQTTv311, clean_session=True)
        # A device logs in with its own login where the broker has that user (engine.broker.acl).
        user, pw = broker.login(role, self.client_id)
        self._client.username_pw_set(user, password if password is not None else pw)
        if will:
            self._client.will_set(will[0], will[1], qos=1)
        self._client.on_connect = self._on_connect
        self._client.on_message = self._on_message
        self._client.on_subscribe = self._on_subscribe
        self._client.connect(broker.host, broker.port, keepalive=5)
        self._client.loop_start()

    def _on_connect(self, client: Any, userdata: Any, flags: Any, rc: Any, props: Any) -> None:
        with self._cond:
            self.connect_rc = rc
            self._cond.notify_all()

    def _on_message(self, client: Any, userdata: Any, msg: mqtt.MQTTMessage) -> None:
        with self._cond:
            self.received.append(Received(msg.topic, bytes(msg.payload), bool(msg.retain), msg.qos))
            self._cond.notify_all()

    def _on_subscribe(self, client: Any, userdata: Any, mid: int, codes: list[Any], props: Any) -> None:
        with self._cond:
            self.granted.append([c.value for c in codes])
            self._cond.notify_all()

    def wait(self, predicate: Callable[[], bool], timeout: float = 5.0) -> bool:
        deadline = time.monotonic() + timeout
        with self._cond:
            while not predicate():
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                self._cond.wait(left)
        return True

    def connected(self, timeout: float = 5.0) -> bool:
        """True once the broker accepted us; False if it refused or never answered."""
        self.wait(lambda: self.connect_rc is not None, timeout)
        return self.connect_rc is not None and not self.connect_rc.is_failure

    def subscribe(self, filters: Sequence[str], qos: int = 1) -> list[int]:
        before = len(self.granted)
        self._client.subscribe([(f, qos) for f in filters])
        assert self.wait(lambda: len(self.granted) > before), "no SUBACK"
        return self.granted[before]

    def publish(self, topic: str, payload: bytes, *, retain: bool = False, qos: int = 1) -> None:
        info = self._client.publish(topic, payload, qos=qos, retain=retain)
        info.wait_for_publish(5)

    def topics(self) -> list[str]:
        with self._cond:
            return [m.topic for m in self.received]

    def drop(self) -> None:
        """Close the socket without DISCONNECT, so the broker sends the Will."""
        self._client.loop_stop()
        sock = self._client.socket()
        if sock is not None:
            sock.close()

    def close(self) -> None:
        self._client.disconnect()
        self._client.loop_stop()
