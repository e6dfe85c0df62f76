"""Camera observations do not hold up the shoe (issue 22, at the table; docs/vision.md session 11).

Each camera observation used to be stored with an fsync of its own and answered with a state, on the
thread that takes the next shoe card; a shoe card queued behind every one of them.  Now an
observation is stored without an fsync of its own (the next fsync covers it, within
``SYNC_AFTER_S``), it is acknowledged only once durable, and a state goes out for it only when
the table's state changed.  Real engine service, real mosquitto, real SQLite.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from engine import wire
from engine.service import EngineService
from engine.store import Appended, SqliteStore, open_store
from engine.wire import Channel
from tests.engine.edge.test_service import TABLE, client, draw, engine_config, wait_state
from tests.support.mqtt import TestClient

BURST = 200


def states(c: TestClient) -> list[dict[str, Any]]:
    return [json.loads(r.payload)["state"] for r in c.received if r.topic.endswith("/public/state")]


def test_a_burst_of_camera_views_that_change_nothing_publishes_no_state_each_and_the_card_goes_next(
        mosquitto_broker: Any, tmp_path: Path) -> None:
    service = EngineService(engine_config(mosquitto_broker, tmp_path / "e.db")).start()
    monitor = TestClient(mosquitto_broker, "monitor")
    cam = client(mosquitto_broker, "vision", "cam-1")
    bridge = client(mosquitto_broker, "bridge", "shoe-1")
    try:
        monitor.subscribe([wire.topic(TABLE, Channel.STATE)])
        wait_state(monitor, lambda s: s["phase"] == "dealing")
        before = len(states(monitor))
        # The camera's view of a table with nothing dealt yet, again and again (a heartbeat, a
        # camera re-sending its view): nothing for the table.
        for frame in range(BURST):
            cam.publish(Channel.VISION, "observation", frame=frame, seats={}, changed=[], irregular=[], fps=12)
        # Every one acknowledged with no other input after it: the engine syncs them by itself.
        assert cam.flush(30)
        draw(bridge, 1, "As")
        seq = bridge.last_seq
        wait_state(monitor, lambda s: (s.get("input") or {}).get("source") == "shoe-1" and s["input"]["seq"] == seq)
        got = states(monitor)[before:]
        card_at = next(i for i, s in enumerate(got) if (s.get("input") or {}).get("source") == "shoe-1")
        # Before: one state per observation (200) ahead of the card's.  Now only the refreshes of
        # the camera's age (one a second at most) while the burst comes in.
        assert card_at < 10, f"{card_at} states went out for {BURST} observations that changed nothing"
    finally:
        cam.stop()
        bridge.stop()
        monitor.close()
        service.stop()
    with open_store(tmp_path / "e.db", TABLE) as store:
        views = [e for e in store.events() if e.source.endswith("cam-1")]
    assert len(views) == BURST  # every acknowledged observation is in the store


class WatchedStore(SqliteStore):
    """The real store, noting the order of its appends (durable or not) and syncs."""

    def __init__(self, path: Path, table: str, log: list[str]) -> None:
        super().__init__(path, table)
        self.log = log

    def append(self, source: str, session: int, seq: int, kind: str, payload: Any, *,
               durable: bool = True) -> Appended:
        got = super().append(source, session, seq, kind, payload, durable=durable)
        self.log.append("append" if durable else "lazy")
        return got

    def sync(self) -> None:
        super().sync()
        self.log.append("sync")


def test_a_camera_view_that_changes_the_table_is_durable_before_its_state_goes_out(
        mosquitto_broker: Any, tmp_path: Path) -> None:
    log: list[str] = []
    service = EngineService(engine_config(mosquitto_broker, tmp_path / "e.db"))
    service.store.close()
    service.store = WatchedStore(tmp_path / "e.db", TABLE, log)
    bus_publish: Any = None

    def publish(channel: Channel, kind: str, **body: Any) -> Any:
        log.append(f"publish {channel}")
        return bus_publish(channel, kind, **body)

    service.start()
    bus_publish, service._bus.publish = service._bus.publish, publish
    monitor = TestClient(mosquitto_broker, "monitor")
    cam = client(mosquitto_broker, "vision", "cam-1")
    bridge = client(mosquitto_broker, "bridge", "shoe-1")
    try:
        monitor.subscribe([wire.topic(TABLE, Channel.STATE)])
        wait_state(monitor, lambda s: s["phase"] == "dealing")
        draw(bridge, 1, "As")  # seat 1's first card, face down
        wait_state(monitor, lambda s: (s.get("input") or {}).get("source") == "shoe-1")
        log.clear()
        # The camera sees seat 1's hole card face up: a prompt (RRoP stud 17), a state that changed.
        cam.publish(Channel.VISION, "observation", frame=1, seats={"1": {"up": ["As"], "down": 0}}, changed=[1],
                    irregular=[], fps=12)
        wait_state(monitor, lambda s: any("exposed" in str(p.get("rule")) for p in s.get("prompts", [])))
    finally:
        cam.stop()
        bridge.stop()
        monitor.close()
        service.stop()
    assert "lazy" in log, log  # stored without an fsync of its own ...
    shown = log.index(f"publish {Channel.STATE}", log.index("lazy"))
    assert "sync" in log[log.index("lazy"):shown], log  # ... and synced before its state went out
