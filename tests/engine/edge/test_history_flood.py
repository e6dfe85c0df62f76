"""A console flooding the engine with history queries does not hold up the table (review F13).

Each query used to be stored (an fsync) and answered; 1000 of them held the next shoe card for
about 5 s.  Past a small budget per console (HISTORY_BURST at once, HISTORY_PER_S a second) a query
is neither stored nor answered.  Real engine service, real mosquitto."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from engine import wire
from engine.service import HISTORY_BURST, EngineService
from engine.store import open_store
from engine.wire import Channel
from tests.engine.edge.test_service import client, draw, engine_config, wait_state
from tests.support.mqtt import TestClient


def test_a_flood_of_history_queries_is_cut_to_the_budget_and_the_next_card_is_dealt(mosquitto_broker: Any,
                                                                                    tmp_path: Path) -> None:
    service = EngineService(engine_config(mosquitto_broker, tmp_path / "e.db")).start()
    monitor = TestClient(mosquitto_broker, "monitor")
    console = client(mosquitto_broker, "console", "console-1")
    bridge = client(mosquitto_broker, "bridge", "shoe-1")
    try:
        monitor.subscribe([wire.topic("t1", Channel.STATE)])
        wait_state(monitor, lambda s: s["phase"] == "dealing")
        for i in range(300):
            console.publish(Channel.COMMAND, "history", request=f"q{i}", limit=50, hand=1)
        assert console.flush(30)
        draw(bridge, 1, "As")
        seq = bridge.last_seq
        wait_state(monitor, lambda s: (s.get("input") or {}).get("source") == "shoe-1" and s["input"]["seq"] == seq,
                   timeout=30)
    finally:
        console.stop()
        bridge.stop()
        monitor.close()
        service.stop()
    with open_store(tmp_path / "e.db", "t1") as store:
        queries = [e for e in store.events() if e.source.endswith("console-1") and e.kind == "note"]
    # The budget, and what refilled while 300 queries arrived; far fewer than 300.
    assert HISTORY_BURST <= len(queries) < 100, len(queries)
