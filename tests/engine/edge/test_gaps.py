"""Issue 19 item 11: gaps always prompt, and the next card never silently takes a lost card's slot.

Real engine service on real brokers: a shoe that restarts (its reset notice), an embedded broker
that crashes with an acknowledged card still queued for the engine (amqtt keeps nothing), and a
gap in the console's command sequence numbers.  The shoe cases hold the shoe's next card until
the dealer has ruled on the prompt."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from engine import wire
from engine.bus import BusClient
from engine.service import EngineService
from engine.wire import Channel
from tests.engine.edge.test_service import client, draw, engine_config, latest_state, wait_state
from tests.support.mqtt import TestClient

T = "t1"


def dealt(state: dict[str, Any]) -> int:
    return sum(len(s.get("cards", [])) for s in state["seats"])


def prompt(state: dict[str, Any], rule: str) -> dict[str, Any] | None:
    return next((p for p in state["prompts"] if p["rule"] == rule), None)


def confirm(console: BusClient, p: dict[str, Any]) -> None:
    console.publish(Channel.COMMAND, "ruling", prompt=p["id"], option="confirm")


@pytest.fixture
def table(mqtt_broker: Any, tmp_path: Path) -> Any:
    service = EngineService(engine_config(mqtt_broker, tmp_path / "engine.db")).start()
    monitor = TestClient(mqtt_broker, "monitor")
    assert monitor.connected()
    monitor.subscribe([wire.topic(T, Channel.STATE)])
    wait_state(monitor, lambda s: s["phase"] == "dealing")
    made: list[BusClient] = []
    yield mqtt_broker, service, monitor, made
    for c in made:
        c.stop()
    monitor.close()
    service.stop()


def test_a_shoe_reset_prompts_and_holds_the_next_card(table: Any) -> None:
    broker, _service, monitor, made = table
    bridge = client(broker, "bridge", "shoe-1")
    console = client(broker, "console", "console-1")
    made += [bridge, console]
    draw(bridge, 1, "As")
    wait_state(monitor, lambda s: dealt(s) == 1)
    bridge.publish(Channel.SHOE, "reset", reason="the shoe restarted (brownout)")
    state = wait_state(monitor, lambda s: prompt(s, "source.restart") is not None)
    p = prompt(state, "source.restart")
    assert p is not None and "shoe-1 restarted" in p["text"] and "Count the cards" in p["text"]
    draw(bridge, 1, "Kd")  # the rebooted shoe's first card: held, not dealt into the next slot
    monitor.wait(lambda: False, 1.0)
    state = latest_state(monitor)
    assert state is not None and dealt(state) == 1
    confirm(console, p)
    wait_state(monitor, lambda s: dealt(s) == 2 and prompt(s, "source.restart") is None)


def test_a_broker_crash_that_loses_an_acknowledged_card_prompts(amqtt_broker: Any, tmp_path: Path) -> None:
    config = engine_config(amqtt_broker, tmp_path / "engine.db")
    service = EngineService(config).start()
    monitor = TestClient(amqtt_broker, "monitor")
    bridge = client(amqtt_broker, "bridge", "shoe-1")
    console = client(amqtt_broker, "console", "console-1")
    try:
        assert monitor.connected()
        monitor.subscribe([wire.topic(T, Channel.STATE)])
        draw(bridge, 1, "As")
        wait_state(monitor, lambda s: dealt(s) == 1)
        service.stop()  # the engine away: its persistent session queues for it
        draw(bridge, 2, "Kd")
        assert bridge.flush(5)  # the broker acknowledged the card...
        amqtt_broker.restart()  # ...and crashed with it (amqtt keeps nothing)
        service = EngineService(config).start()
        monitor.close()
        monitor = TestClient(amqtt_broker, "monitor")
        assert monitor.connected()
        monitor.subscribe([wire.topic(T, Channel.STATE)])
        assert bridge.wait_connected(15) and console.wait_connected(15)
        draw(bridge, 3, "Qh")
        state = wait_state(monitor, lambda s: prompt(s, "source.lost") is not None, 15)
        p = prompt(state, "source.lost")
        assert p is not None and p["text"].startswith("1 message(s) from shoe-1 never arrived")
        assert dealt(state) == 1  # the card after the lost one does not take its slot
        confirm(console, p)
        wait_state(monitor, lambda s: dealt(s) == 2 and prompt(s, "source.lost") is None)
    finally:
        bridge.stop()
        console.stop()
        monitor.close()
        service.stop()


def test_a_gap_in_the_consoles_commands_prompts(table: Any) -> None:
    broker, _service, monitor, made = table
    console = client(broker, "console", "console-1")
    made.append(console)
    console.publish(Channel.COMMAND, "report", report="note", seat=None, note="first")
    console._seq += 2  # two commands that never reached the engine
    console.publish(Channel.COMMAND, "report", report="note", seat=None, note="after the gap")
    state = wait_state(monitor, lambda s: prompt(s, "source.gap") is not None)
    p = prompt(state, "source.gap")
    assert p is not None and "console-1 skipped 2 message(s)" in p["text"]
