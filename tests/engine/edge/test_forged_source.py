"""Issue 19 item 2: a message's source is the role that sent it (its channel), not what its
payload says.

A console publishes, on its own command channel, a message that claims to come from
``shoe-1`` with a huge session number.  Before, every later shoe card was dropped as stale,
and the stored claim kept it so after a restart.  Now duplicate and gap detection is keyed
by (channel, source), the forged message is refused, and the dealer is told.  Real engine
service, real brokers.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from engine import wire
from engine.service import EngineService
from engine.wire import Channel
from tests.engine.edge.test_service import client, draw, engine_config, wait_state
from tests.support.mqtt import TestClient

T = "t1"
THIRD_STREET = ["As", "Kd", "Qh", "Js", "Tc", "9d", "2c", "3h", "4s"]


def forged(channel: Channel, kind: str, source: str, session: int, **body: Any) -> bytes:
    return wire.encode(wire.make(T, channel, kind, source=source, session=session, seq=1, **body))


def test_a_console_claiming_to_be_the_shoe_is_refused_and_the_shoe_still_deals(mqtt_broker: Any,
                                                                             tmp_path: Path) -> None:
    config = engine_config(mqtt_broker, tmp_path / "engine.db")
    service = EngineService(config).start()
    monitor = TestClient(mqtt_broker, "monitor")
    console = TestClient(mqtt_broker, "console", "console-1")
    vision = TestClient(mqtt_broker, "vision", "cam-1")
    bridge = None
    try:
        assert monitor.connected() and console.connected() and vision.connected()
        monitor.subscribe([wire.topic(T, Channel.STATE)])
        wait_state(monitor, lambda s: s["phase"] == "dealing")
        huge = 10**15
        console.publish(wire.topic(T, Channel.COMMAND),
                        forged(Channel.COMMAND, "action", "shoe-1", huge, seat=1, action="fold", amount=None))
        vision.publish(wire.topic(T, Channel.VISION),
                       forged(Channel.VISION, "observation", "shoe-1", huge, frame=1, seats={}, changed=[],
                              irregular=[], fps=10.0))
        state = wait_state(monitor, lambda s: any(p["rule"] == "source.forged" for p in s["prompts"]))
        texts = [p["text"] for p in state["prompts"] if p["rule"] == "source.forged"]
        assert any("console/command" in t and "shoe-1" in t for t in texts), texts
        # A restart: what the engine stored of the attack must not bite later either.
        service.stop()
        service = EngineService(config).start()
        bridge = client(mqtt_broker, "bridge", "shoe-1")
        for counter, card in enumerate(THIRD_STREET, 1):
            draw(bridge, counter, card)
        state = wait_state(monitor, lambda s: s["phase"] == "betting" and s["hand_id"] == 1, 15)
        assert [c for s in state["seats"] for c in s["up"]] == THIRD_STREET[6:]
    finally:
        if bridge is not None:
            bridge.stop()
        for c in (monitor, console, vision):
            c.close()
        service.stop()
    # The forged claim left no trace in the shoe's key: its messages were never stored.
    from engine.store import open_store

    with open_store(tmp_path / "engine.db", T) as store:
        heads = store.heads()
        events = list(store.events())
    assert heads["sensor/shoe:shoe-1"] == (1, len(THIRD_STREET))
    assert not any(e.session == huge for e in events)
    assert json.dumps(heads)


def test_a_forged_shoe_message_does_not_refresh_the_shoes_health(mqtt_broker: Any, tmp_path: Path) -> None:
    """Security review item 4: the shoe's last_seen is set by messages on the shoe's channel only."""
    import time

    service = EngineService(engine_config(mqtt_broker, tmp_path / "engine.db")).start()
    monitor = TestClient(mqtt_broker, "monitor")
    console = TestClient(mqtt_broker, "console", "console-1")
    bridge = client(mqtt_broker, "bridge", "shoe-1")
    try:
        assert monitor.connected() and console.connected()
        monitor.subscribe([wire.topic(T, Channel.STATE)])
        draw(bridge, 1, THIRD_STREET[0])
        wait_state(monitor, lambda s: "last_seen_s" in s["devices"].get("shoe-1", {}))
        time.sleep(2.0)
        console.publish(wire.topic(T, Channel.COMMAND),
                        forged(Channel.COMMAND, "action", "shoe-1", 1, seat=1, action="fold", amount=None))
        state = wait_state(monitor, lambda s: any(p["rule"] == "source.forged" for p in s["prompts"]))
        assert state["devices"]["shoe-1"]["last_seen_s"] >= 1.5, state["devices"]
    finally:
        bridge.stop()
        for c in (monitor, console):
            c.close()
        service.stop()
