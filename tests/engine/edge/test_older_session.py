"""Security review item 2: a message of an older session than the last one heard is never
dropped silently.

A console that sends ``source=console-1, session=2^53-1`` used to silence the real console-1 for
good (the claim was stored, so even across restarts); a bridge that lost its session file starts
again at session 1 and its cards were dropped with no prompt.  Now an older session is taken as a
restart of that device, with the source.restart prompt.  Real engine service, real mosquitto.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from engine import wire
from engine.bus import BusClient
from engine.service import EngineService
from engine.wire import Channel
from tests.engine.edge.test_gaps import confirm, dealt, prompt
from tests.engine.edge.test_service import TABLE, client, draw, engine_config, wait_state
from tests.support.mqtt import TestClient


def test_a_huge_session_claim_does_not_silence_the_real_console(mosquitto_broker: Any, tmp_path: Path) -> None:
    config = engine_config(mosquitto_broker, tmp_path / "engine.db")
    service = EngineService(config).start()
    monitor = TestClient(mosquitto_broker, "monitor")
    attacker = TestClient(mosquitto_broker, "console", "console-x")
    console = None
    try:
        assert monitor.connected() and attacker.connected()
        monitor.subscribe([wire.topic(TABLE, Channel.STATE)])
        wait_state(monitor, lambda s: s["phase"] == "dealing")
        huge = 2**53 - 1
        attacker.publish(wire.topic(TABLE, Channel.COMMAND), wire.encode(wire.make(
            TABLE, Channel.COMMAND, "report", source="console-1", session=huge, seq=1, report="nothing", seat=None)))
        wait_state(monitor, lambda s: s["input"] == {"source": "console-1", "session": huge, "seq": 1})
        console = client(mosquitto_broker, "console", "console-1")
        msg = console.publish(Channel.COMMAND, "report", report="nothing", seat=None)
        state = wait_state(monitor, lambda s: s["input"] == {"source": "console-1", "session": 1, "seq": msg.seq})
        p = prompt(state, "source.restart")
        assert p is not None and "console-1" in p["text"], state["prompts"]
        # Across a restart of the engine too: the stored claim does not silence it.
        service.stop()
        service = EngineService(config).start()
        msg = console.publish(Channel.COMMAND, "report", report="nothing", seat=None)
        wait_state(monitor, lambda s: s["input"] == {"source": "console-1", "session": 1, "seq": msg.seq})
    finally:
        if console is not None:
            console.stop()
        for c in (monitor, attacker):
            c.close()
        service.stop()


def test_a_bridge_that_lost_its_session_file_is_prompted_and_its_cards_dealt(mosquitto_broker: Any,
                                                                             tmp_path: Path) -> None:
    service = EngineService(engine_config(mosquitto_broker, tmp_path / "engine.db")).start()
    monitor = TestClient(mosquitto_broker, "monitor")
    user, password = mosquitto_broker.login("bridge", "shoe-1")
    made: list[BusClient] = []
    try:
        assert monitor.connected()
        monitor.subscribe([wire.topic(TABLE, Channel.STATE)])
        wait_state(monitor, lambda s: s["phase"] == "dealing")
        before = BusClient(host=mosquitto_broker.host, port=mosquitto_broker.port, username=user,
                           password=password, table=TABLE, device="shoe-1", role="bridge", session=7).start()
        made.append(before)
        draw(before, 1, "As")
        wait_state(monitor, lambda s: dealt(s) == 1)
        before.stop()
        made.remove(before)
        after = client(mosquitto_broker, "bridge", "shoe-1")  # session 1 again: its file was lost
        console = client(mosquitto_broker, "console", "console-1")
        made += [after, console]
        draw(after, 2, "Kd")
        state = wait_state(monitor, lambda s: prompt(s, "source.restart") is not None)
        p = prompt(state, "source.restart")
        assert p is not None and "shoe-1" in p["text"]
        confirm(console, p)
        wait_state(monitor, lambda s: dealt(s) == 2 and prompt(s, "source.restart") is None)
    finally:
        for c in made:
            c.stop()
        monitor.close()
        service.stop()
