"""End to end over a real broker: a state the engine publishes reaches the console model, and back."""

from __future__ import annotations

from typing import Any

import pytest

from dealer_console.edge import Commands, MqttEdge
from dealer_console.model import TableModel
from dealer_console.snapshot import OptionView
from engine import wire
from engine.wire import Channel, Role

try:
    from tests.support.mqtt import TestClient
except ImportError:  # pragma: no cover
    TestClient = None  # type: ignore[assignment,misc]


@pytest.mark.skipif(TestClient is None, reason="tests.support (broker fixtures) not in this tree")
def test_state_on_the_broker_reaches_the_console_and_commands_reach_the_engine(
        qtbot: Any, mosquitto_broker: Any, recorded: list[dict[str, Any]]) -> None:
    broker = mosquitto_broker
    engine = TestClient(broker, "engine", "engine")
    assert engine.connected()
    engine.subscribe([wire.topic("t1", Channel.COMMAND)])
    state = next(r["state"] for r in recorded if "bring_in" in r["tags"])
    retained = wire.make("t1", Channel.STATE, "state", source="engine", session=1, seq=1, state=state)
    engine.publish(retained.topic, wire.encode(retained), retain=True)  # retained: a late console sees it
    online = wire.availability("t1", "engine", online=True)
    engine.publish(online.topic, wire.encode(online), retain=True)

    user, password = broker.login("console", "console-1")
    edge = MqttEdge(host=broker.host, port=broker.port, username=user, password=password, table="t1",
                    role=Role.CONSOLE, device="console-1", session=5)
    model = TableModel(self_device="console-1")
    edge.received.connect(model.apply_message)
    edge.connectionChanged.connect(model.set_broker)
    edge.start()
    try:
        qtbot.waitUntil(lambda: model.snapshot.to_act == 2 and model.controls_enabled, timeout=8000)
        assert [o.label for o in model.snapshot.options] == ["Bring in 2", "Complete to 5"]
        Commands(edge).action(2, OptionView("bring_in", 2, False, "Bring in 2", "B"))
        assert engine.wait(lambda: any(m.topic.endswith("console/command") for m in engine.received), 5)
        got = wire.decode(*next((m.topic, m.payload) for m in engine.received if m.topic.endswith("command")))
        assert (got.kind, dict(got.body), got.source) == (
            "action", {"seat": 2, "action": "bring_in", "amount": 2}, "console-1")
        # the engine's Last Will: the console locks its controls
        offline = wire.availability("t1", "engine", online=False)
        engine.publish(offline.topic, wire.encode(offline), retain=True)
        qtbot.waitUntil(lambda: not model.controls_enabled, timeout=5000)
    finally:
        edge.stop()
        engine.close()
