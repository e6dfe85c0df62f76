"""Hole-card secrecy, judged by what clients actually receive, on both brokers.

mosquitto grants a subscription to ``#`` and filters each message at delivery;
amqtt (with our plugin) refuses subscriptions it cannot fully serve.  Either
way the only thing that matters is what arrives, so these tests subscribe as
broadly as a snooping client would and look at every payload.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterator
from typing import Any

import pytest

from engine import wire
from engine.publicstate import idle_state
from engine.wire import Channel
from tests.support.mqtt import TestClient

T = "t1"
SNOOP = ["#", "studtable/#", "studtable/v1/+/#", "studtable/v1/t1/sensor/shoe", "studtable/v1/t1/sensor/+",
         "studtable/v1/t1/history/hand", "studtable/v1/t1/+/+", "+/+/+/+/+"]


def shoe_secret(marker: str, seq: int) -> bytes:
    return wire.encode(wire.make(T, Channel.SHOE, "card_drawn", source="shoe-1", session=1, seq=seq,
                                 counter=seq, uid="04a1b2c3d4e5f6", card="Qs", deck=marker, quality=99,
                                 status="ok"))


def history_secret(marker: str) -> bytes:
    return wire.encode(wire.make(T, Channel.HISTORY, "hand", source="engine", session=1, seq=50, hand="h1",
                                 variant="F7S", events=[{"hole": ["Qs", "Qh"], "m": marker}], phh=marker))


def public_state(marker: str) -> bytes:
    return wire.encode(wire.make(T, Channel.STATE, "state", source="engine", session=1, seq=51,
                                 state=dict(idle_state(T).to_json(), x_public=marker)))


@pytest.fixture
def clients(mqtt_broker: Any) -> Iterator[dict[str, TestClient]]:
    made: dict[str, TestClient] = {}

    def make(name: str, role: str, client_id: str | None = None, **kw: Any) -> TestClient:
        made[name] = TestClient(mqtt_broker, role, client_id, **kw)
        assert made[name].connected(), f"{name} could not log in"
        return made[name]

    make("engine", "engine", "engine")
    made["engine"].subscribe([f"studtable/v1/{T}/#"])
    yield made  # type: ignore[misc]
    for c in made.values():
        c.close()


def test_console_and_monitor_never_receive_a_secret(mqtt_broker: Any, clients: Any) -> None:
    engine = clients["engine"]
    secret = f"SECRET-{uuid.uuid4().hex}"
    public = f"PUBLIC-{uuid.uuid4().hex}"
    # A retained secret already on the broker must not reach a new subscriber either
    # (amqtt hands retained messages to a new subscription without re-checking).
    engine.publish(wire.topic(T, Channel.SHOE), shoe_secret(secret, 1), retain=True)
    engine.publish(wire.topic(T, Channel.HISTORY), history_secret(secret), retain=True)

    snoopers = {}
    # (vision too: since session 12 it reads public/state, for the table's phase)
    for role in ("console", "monitor", "vision"):
        client = TestClient(mqtt_broker, role, f"{role}-1")
        clients[role] = client
        assert client.connected()
        client.subscribe(SNOOP)
        client.subscribe([f"studtable/v1/{T}/public/state"])  # what it legitimately needs
        snoopers[role] = client
    recorder = TestClient(mqtt_broker, "recorder", "recorder-1")
    clients["recorder"] = recorder
    assert recorder.connected()
    recorder.subscribe([*SNOOP, f"studtable/v1/{T}/history/hand"])

    engine.publish(wire.topic(T, Channel.SHOE), shoe_secret(secret, 2))
    engine.publish(wire.topic(T, Channel.HISTORY), history_secret(secret))
    engine.publish(wire.topic(T, Channel.STATE), public_state(public), retain=True)

    # Positive controls: the public state reaches both, the hand reaches the recorder.
    for client in (*snoopers.values(), recorder):
        assert client.wait(lambda c=client: any(public.encode() in m.payload or secret.encode() in m.payload
                                                for m in c.received)), f"{client.client_id} got nothing"
    assert recorder.wait(lambda: any(m.topic.endswith("history/hand") for m in recorder.received))
    time.sleep(0.3)  # let anything that is going to leak arrive

    for role, client in snoopers.items():
        assert any(public.encode() in m.payload for m in client.received), role
        leaked = [m for m in client.received if secret.encode() in m.payload
                  or wire.parse_topic(m.topic).channel in (Channel.SHOE, Channel.HISTORY)]
        assert leaked == [], f"{role} received secret data on {mqtt_broker.kind}: {leaked}"
    assert not any(m.topic.endswith("sensor/shoe") for m in recorder.received)
    # mosquitto grants '#' and filters; amqtt refuses it: both keep the secret.
    if mqtt_broker.kind == "amqtt":
        assert snoopers["console"].granted[0][0] == 0x80


def test_console_and_monitor_cannot_forge_sensor_input(mqtt_broker: Any, clients: Any) -> None:
    engine = clients["engine"]
    forged = f"FORGED-{uuid.uuid4().hex}"
    for role in ("console", "monitor", "vision"):
        client = TestClient(mqtt_broker, role, f"{role}-1")
        clients[role] = client
        assert client.connected()
        client.publish(wire.topic(T, Channel.SHOE), shoe_secret(forged, 1))
        client.publish(wire.topic(T, Channel.HISTORY), history_secret(forged))
        if role != "vision":
            client.publish(wire.topic(T, Channel.VISION), forged.encode())
        client.publish(wire.topic(T, Channel.AVAIL, "shoe-1"), b"offline")
        client.publish(wire.topic(T, Channel.STATE), public_state(forged))
    # Positive controls: the right roles do get through to the engine.
    bridge = TestClient(mqtt_broker, "bridge", "shoe-1")
    clients["bridge"] = bridge
    assert bridge.connected()
    bridge.publish(wire.topic(T, Channel.SHOE), shoe_secret("real", 9))
    clients["console"].publish(wire.topic(T, Channel.COMMAND), b"console-ok")
    assert engine.wait(lambda: sum(t.endswith(("sensor/shoe", "console/command")) for t in engine.topics()) >= 2)
    time.sleep(0.3)
    got = [m for m in engine.received if forged.encode() in m.payload]
    assert got == [], f"engine received forged input on {mqtt_broker.kind}: {got}"
    assert not any(m.topic.endswith("avail/shoe-1") and m.payload == b"offline" for m in engine.received)


def test_a_will_cannot_smuggle_a_sensor_message(mqtt_broker: Any, clients: Any) -> None:
    engine = clients["engine"]
    forged = f"WILL-{uuid.uuid4().hex}"
    sneaky = TestClient(mqtt_broker, "console", "console-9", will=(wire.topic(T, Channel.SHOE),
                                                                   shoe_secret(forged, 1)))
    clients["sneaky"] = sneaky
    sneaky.connected(3)  # mosquitto accepts the login; amqtt refuses it outright
    # Positive control: an honest Will (availability offline) is delivered.
    bridge = TestClient(mqtt_broker, "bridge", "shoe-1", will=(wire.topic(T, Channel.AVAIL, "shoe-1"), b"offline"))
    clients["bridge"] = bridge
    assert bridge.connected()
    time.sleep(0.2)
    sneaky.drop()
    bridge.drop()
    assert engine.wait(lambda: any(m.topic.endswith("avail/shoe-1") and m.payload == b"offline"
                                   for m in engine.received), 10)
    time.sleep(0.3)
    assert not any(forged.encode() in m.payload for m in engine.received)
