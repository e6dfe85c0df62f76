"""Security review item 1: more than 32 open prompts must not break publishing.

A console that names a new device in every message (forged names, or console names whose first
message is not seq 1) used to open one prompt per name; at 33 the dealer/prompt message exceeded
the wire's limit, the publish raised after the input was stored, and every later input was
acknowledged one message late while the prompt list froze.  Now such reports fold into one open
prompt per channel, and a publish never fails past a stored input (the list is shortened).
Real engine service, real mosquitto.
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


def raw(kind: str, source: str, seq: int, **body: Any) -> bytes:
    return wire.encode(wire.make(T, Channel.COMMAND, kind, source=source, session=1, seq=seq, **body))


def last_prompts(c: TestClient) -> list[dict[str, Any]] | None:
    for r in reversed(c.received):
        if r.topic.endswith("/dealer/prompt"):
            return list(json.loads(r.payload)["open"])
    return None


def test_forged_and_gap_floods_fold_into_one_prompt_per_channel(mosquitto_broker: Any, tmp_path: Path) -> None:
    service = EngineService(engine_config(mosquitto_broker, tmp_path / "engine.db")).start()
    monitor = TestClient(mosquitto_broker, "monitor")
    rx = TestClient(mosquitto_broker, "console")
    attacker = TestClient(mosquitto_broker, "console", "console-x")
    console = None
    try:
        assert monitor.connected() and rx.connected() and attacker.connected()
        monitor.subscribe([wire.topic(T, Channel.STATE)])
        rx.subscribe([wire.topic(T, Channel.PROMPT)])
        wait_state(monitor, lambda s: s["phase"] == "dealing")
        topic = wire.topic(T, Channel.COMMAND)
        for n in range(40):  # a new forged name each time, and a new console starting at seq 5
            attacker.publish(topic, raw("muck", f"shoe-{n + 2}", 1, seat=1))
            attacker.publish(topic, raw("muck", f"console-{n + 10}", 5, seat=1))
        state = wait_state(monitor, lambda s: any("40 messages" in p["text"] for p in s["prompts"]
                                                  if p["rule"] == "source.forged")
                           and any("40 reports" in p["text"] for p in s["prompts"] if p["rule"] == "source.gap"))
        rules = [p["rule"] for p in state["prompts"]]
        assert rules.count("source.forged") == 1 and rules.count("source.gap") == 1, rules
        gap = next(p for p in state["prompts"] if p["rule"] == "source.gap")
        assert "console/command" in gap["text"] and "160 message(s)" in gap["text"], gap["text"]
        assert rx.wait(lambda: (last_prompts(rx) or []) and len(last_prompts(rx) or []) == len(state["prompts"]))
        # The table still takes the real console's input at once, and says so.
        console = client(mosquitto_broker, "console", "console-1")
        msg = console.publish(Channel.COMMAND, "report", report="nothing", seat=None)
        wait_state(monitor, lambda s: s["input"] == {"source": "console-1", "session": 1, "seq": msg.seq})
    finally:
        if console is not None:
            console.stop()
        for c in (monitor, rx, attacker):
            c.close()
        service.stop()


def test_more_than_32_open_prompts_are_sent_shortened_and_every_input_is_taken(mosquitto_broker: Any,
                                                                               tmp_path: Path) -> None:
    service = EngineService(engine_config(mosquitto_broker, tmp_path / "engine.db")).start()
    monitor = TestClient(mosquitto_broker, "monitor")
    rx = TestClient(mosquitto_broker, "console")
    bridge = client(mosquitto_broker, "bridge", "shoe-1")
    console = None
    try:
        assert monitor.connected() and rx.connected()
        monitor.subscribe([wire.topic(T, Channel.STATE)])
        rx.subscribe([wire.topic(T, Channel.PROMPT)])
        wait_state(monitor, lambda s: s["phase"] == "dealing")
        for _ in range(40):  # each fault the shoe reports opens its own source.gap prompt
            bridge.publish(Channel.SHOE, "device_error", code="link", text="a link fault")
        state = wait_state(monitor, lambda s: len(s["prompts"]) == 40)
        assert rx.wait(lambda: len(last_prompts(rx) or []) == 32)
        first = state["prompts"][0]["id"]
        # The dealer rules on the first: the list sent goes on following the table (it froze before).
        console = client(mosquitto_broker, "console", "console-1")
        console.publish(Channel.COMMAND, "ruling", prompt=first, option="confirm")
        wait_state(monitor, lambda s: len(s["prompts"]) == 39)
        assert rx.wait(lambda: first not in [p["prompt"] for p in last_prompts(rx) or []]
                       and len(last_prompts(rx) or []) == 32), [p["prompt"] for p in last_prompts(rx) or []]
        # Every input is taken as it comes: the next card is dealt at once.
        draw(bridge, 1, "As")
        state = wait_state(monitor, lambda s: s["input"] is not None and s["input"]["source"] == "shoe-1"
                           and s["input"]["seq"] == 41)
        assert len(state["prompts"]) == 39
    finally:
        if console is not None:
            console.stop()
        bridge.stop()
        for c in (monitor, rx):
            c.close()
        service.stop()


def test_a_folded_prompts_count_survives_a_restart_and_its_names_stay_bounded(mosquitto_broker: Any,
                                                                               tmp_path: Path) -> None:
    """The folded count was kept in memory only: after a restart the prompt showed the first
    report.  Each report is now a stored input the floor folds, so the replay shows them all; and
    a flood of names keeps at most FOLD_NAMES_KEPT of them in the prompt."""
    from engine.floor.core import FOLD_NAMES_KEPT

    config = engine_config(mosquitto_broker, tmp_path / "engine.db")
    service = EngineService(config).start()
    monitor = TestClient(mosquitto_broker, "monitor")
    attacker = TestClient(mosquitto_broker, "console", "console-x")
    names = FOLD_NAMES_KEPT + 8
    try:
        assert monitor.connected() and attacker.connected()
        monitor.subscribe([wire.topic(T, Channel.STATE)])
        wait_state(monitor, lambda s: s["phase"] == "dealing")
        for n in range(names):
            attacker.publish(wire.topic(T, Channel.COMMAND), raw("muck", f"shoe-{n + 2}", 1, seat=1))
        wanted = f"{names} messages on console/command claimed to come from {names} device(s)"
        wait_state(monitor, lambda s: any(wanted in p["text"] for p in s["prompts"]))
        prompt = next(p for p in service.core.floor.prompts.values() if p.rule.id == "source.forged")
        assert len(prompt.data["devices"]) == FOLD_NAMES_KEPT
    finally:
        service.stop()
    monitor.received.clear()
    again = EngineService(config).start()
    try:
        state = wait_state(monitor, lambda s: any(p["rule"] == "source.forged" for p in s["prompts"]))
        forged = [p for p in state["prompts"] if p["rule"] == "source.forged"]
        assert len(forged) == 1 and wanted in forged[0]["text"], forged
    finally:
        for c in (monitor, attacker):
            c.close()
        again.stop()
