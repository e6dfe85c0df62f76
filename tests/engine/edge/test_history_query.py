"""Hand history over the bus (issue 18 item 5, issue 19 item 4): a real engine answers a console's
history query from its hand log on ``console/history``, on both brokers.

A finished hand comes with every step, its time and source, burns and down cards as cards and the
result; the live hand never names a down card (checked against the cards the shoe really dealt);
the monitor can neither ask nor read an answer; a forged or oversized query is refused with its
reason and changes nothing.
"""

from __future__ import annotations

import json
import random
import threading
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from engine import wire
from engine.bus import BusClient
from engine.cards import DECK
from engine.service import EngineService
from engine.wire import Channel, Message
from tests.engine.edge.test_service import TABLE, client, draw, engine_config, wait_state
from tests.support.mqtt import TestClient


class Asker:
    """A console on the bus that asks history queries and keeps the answers."""

    def __init__(self, broker: Any, device: str = "console-1") -> None:
        self.answers: list[Message] = []
        self._cond = threading.Condition()
        user, password = broker.login("console", device)
        self.bus = BusClient(host=broker.host, port=broker.port, username=user, password=password, table=TABLE,
                             device=device, role="console", session=int(time.time() * 1000), on_message=self._on)
        self.bus.subscribe(Channel.HISTORY_REPLY)
        self.bus.start()

    def _on(self, msg: Message) -> None:
        if msg.channel is Channel.HISTORY_REPLY:
            with self._cond:
                self.answers.append(msg)
                self._cond.notify_all()

    def wait(self, request: str | None, timeout: float = 10.0) -> dict[str, Any]:
        with self._cond:
            ok = self._cond.wait_for(lambda: any(m.body["request"] == request for m in self.answers), timeout)
            assert ok, f"no answer to {request}; got {[m.body for m in self.answers]}"
            return dict(next(m.body for m in self.answers if m.body["request"] == request))

    def ask(self, **query: Any) -> dict[str, Any]:
        request = f"q{uuid.uuid4().hex[:8]}"
        self.bus.publish(Channel.COMMAND, "history", request=request, **({"limit": 10} | query))
        return self.wait(request)

    def close(self) -> None:
        self.bus.stop()


@pytest.fixture
def table(mqtt_broker: Any, tmp_path: Path) -> Iterator[Any]:
    service = EngineService(engine_config(mqtt_broker, tmp_path / "engine.db")).start()
    monitor = TestClient(mqtt_broker, "monitor")
    assert monitor.connected()
    monitor.subscribe([wire.topic(TABLE, Channel.STATE)])
    bridge = client(mqtt_broker, "bridge", "shoe-1")
    console = client(mqtt_broker, "console", "console-3")
    asker = Asker(mqtt_broker)
    yield mqtt_broker, service, monitor, bridge, console, asker
    asker.close()
    console.stop()
    bridge.stop()
    monitor.close()
    service.stop()


def deal_third_street(bridge: BusClient, deck: list[str], counter: int) -> tuple[int, set[str], set[str]]:
    """Three seats, two down and one up each: returns the counter and the down and up cards."""
    down, up = set(), set()
    for k in range(9):
        counter += 1
        card = deck.pop()
        (down if k < 6 else up).add(card)
        draw(bridge, counter, card)
    return counter, down, up


def play_first_hand(service: EngineService, monitor: TestClient, bridge: BusClient, console: BusClient,
                    deck: list[str]) -> tuple[int, set[str]]:
    """Hand 1: third street from the shoe, the bring-in from the console, then both others fold."""
    counter, down, _ = deal_third_street(bridge, deck, 0)
    while True:
        state = wait_state(monitor, lambda s: s["phase"] in ("betting", "complete") or s["hand_id"] != 1)
        if state["hand_id"] != 1 or state["phase"] == "complete":
            break
        opt = next((o for o in state["options"] if o["action"] == "bring_in"), None)
        before = len(monitor.received)
        if opt is not None:
            console.publish(Channel.COMMAND, "action", seat=state["to_act"], action="bring_in", amount=opt["amount"])
        else:
            console.publish(Channel.COMMAND, "action", seat=state["to_act"], action="fold", amount=None)
        monitor.wait(lambda b=before: len(monitor.received) > b)
    assert service.core.floor.hands[0].is_over
    return counter, down


def test_a_console_gets_a_finished_hands_steps_with_time_source_and_cards(table: Any) -> None:
    _broker, service, monitor, bridge, console, asker = table
    deck = [str(c) for c in DECK]
    random.Random(18).shuffle(deck)
    play_first_hand(service, monitor, bridge, console, deck)
    deadline = time.monotonic() + 10
    while not service.store.list_hands() and time.monotonic() < deadline:
        time.sleep(0.05)
    page = asker.ask(limit=5)
    assert page["error"] is None and [h["number"] for h in page["hands"]][-1] == 1
    found = asker.ask(hand=1)
    assert found["error"] is None
    hand = found["hand"]
    played = service.store.get_hand(f"{TABLE}-1")
    assert played is not None and hand["hole_cards"] is True and hand["live"] is False
    real = [e for e in played.events]
    assert len(hand["steps"]) == len(real) + 1  # every event, then the result
    dealt_down = [e["card"] for e in real if e["type"] == "card_dealt" and not e["face_up"]]
    for e, step in zip(real, hand["steps"], strict=False):
        assert step["at"] is not None and step["at"].endswith("Z")
        want = {"card_dealt": "shoe-1", "player_action": "console-3"}.get(e["type"])
        if want:
            assert step["source"] == want, step
        if e["type"] == "card_dealt" and not e["face_up"]:
            assert step["cards"] == [e["card"]] and e["card"] in step["text"]  # a finished hand: its down cards
    assert hand["steps"][-1]["kind"] == "result" and "wins" in hand["steps"][-1]["text"]
    assert len(dealt_down) == 6
    # The export: PHH (PokerKit's format) and the JSON log with each event's time and source.
    assert hand["phh"].startswith("variant = 'F7S'") and all(c in hand["phh"] for c in dealt_down)
    assert [e["type"] for e in hand["log"]] == [e["type"] for e in real]
    assert all(e["_source"] and e["_at"] for e in hand["log"])
    # Search: by seat and by player; a name nobody has finds nothing.
    assert [h["number"] for h in asker.ask(seat=2)["hands"] if not h["live"]] == [1]
    assert [h["number"] for h in asker.ask(player="bob")["hands"] if not h["live"]] == [1]
    assert asker.ask(player="Zed")["hands"] == []
    assert "not in this table's hand log" in asker.ask(hand=99)["error"]


def test_the_live_hand_names_no_down_card_and_a_monitor_can_neither_ask_nor_read(table: Any) -> None:
    broker, service, monitor, bridge, console, asker = table
    deck = [str(c) for c in DECK]
    random.Random(19).shuffle(deck)
    counter, _ = play_first_hand(service, monitor, bridge, console, deck)
    wait_state(monitor, lambda s: s["hand_id"] == 2)
    _, down, up = deal_third_street(bridge, deck, counter)
    wait_state(monitor, lambda s: s["hand_id"] == 2 and s["phase"] == "betting")
    live = service.core.floor.hand
    assert live is not None and live.hand_id == 2
    real_down = {str(c) for s in live.seats for c in s.down}
    assert real_down == down  # the cards the shoe really dealt face down
    # Spies: a console-role and a monitor-role client subscribed as widely as they may.
    spy = TestClient(broker, "console")
    snoop = TestClient(broker, "monitor")
    assert spy.connected() and snoop.connected()
    spy.subscribe([wire.topic(TABLE, Channel.HISTORY_REPLY)])
    snoop.subscribe(["#", wire.topic(TABLE, Channel.HISTORY_REPLY), f"studtable/v1/{TABLE}/console/+"])
    try:
        answer = asker.ask(hand=2)
        detail = answer["hand"]
        assert detail["live"] is True and detail["hole_cards"] is False and detail["phh"] is None
        assert answer["hands"][0]["live"] is True
        raw = json.dumps(answer)
        assert not {c for c in real_down if f'"{c}"' in raw or f" {c}" in raw}, "a live down card left the engine"
        assert all(c in raw for c in up)  # positive control: the up cards are there
        assert any(s["text"].endswith("dealt a card down") for s in detail["steps"])
        # What the spy received on the wire names no live down card either.
        assert spy.wait(lambda: any(m.topic.endswith("console/history") for m in spy.received))
        for m in spy.received:
            text = m.payload.decode()
            assert not {c for c in real_down if f'"{c}"' in text or f" {c}" in text}, m.topic
        # A monitor asking: its role may not publish on console/command; nothing is answered.
        request = "monitorasks"
        q = wire.make(TABLE, Channel.COMMAND, "history", source=snoop.client_id, session=1, seq=1,
                      request=request, hand=1, limit=5)
        snoop.publish(q.topic, wire.encode(q))
        control = asker.ask(hand=1)  # positive control: a console's query is answered meanwhile
        assert control["hand"]["hole_cards"] is True
        time.sleep(0.5)
        assert not any(m.body["request"] == request for m in asker.answers)
        assert [m for m in snoop.received if "console/history" in m.topic] == []
        assert not any(b"hole_cards" in m.payload for m in snoop.received)
    finally:
        spy.close()
        snoop.close()


def test_a_forged_or_oversized_query_is_refused_with_its_reason_and_changes_nothing(table: Any) -> None:
    broker, service, monitor, bridge, _console, asker = table
    deck = [str(c) for c in DECK]
    random.Random(20).shuffle(deck)
    deal_third_street(bridge, deck, 0)
    wait_state(monitor, lambda s: s["phase"] == "betting")
    raw = TestClient(broker, "console", "console-4")
    assert raw.connected()
    live = service.core.floor.hand.secret_state()
    stored = len(list(service.store.events()))
    try:
        bad = [
            ({"request": "big", "limit": 1000}, "limit"),
            ({"request": "pad", "limit": 5, "player": "x" * 5000}, "4096-byte limit"),
            ({"request": "extra", "limit": 5, "sql": "'; DROP TABLE hands; --"}, "'sql' is not part"),
            ({"request": "seat", "limit": 5, "seat": 11}, "seat"),
        ]
        for seq, (body, reason) in enumerate(bad, 1):
            doc = {"v": 1, "source": "console-4", "session": 1, "seq": seq, "kind": "history", **body}
            raw.publish(wire.topic(TABLE, Channel.COMMAND), json.dumps(doc).encode())
            answer = asker.wait(body["request"])
            assert answer["hands"] == [] and answer["hand"] is None
            assert answer["error"].startswith("history query refused") and reason in answer["error"], answer
        # A query that claims to come from the shoe: refused as forged, never answered.
        forged = {"v": 1, "source": "shoe-1", "session": 1, "seq": 9, "kind": "history", "request": "forged",
                  "limit": 5, "hand": 1}
        raw.publish(wire.topic(TABLE, Channel.COMMAND), json.dumps(forged).encode())
        asker.ask(limit=1)  # positive control (and a barrier: the engine took the messages in order)
        assert not any(m.body["request"] == "forged" for m in asker.answers)
        assert service.core.floor.hand.secret_state() == live
        # The refused ones were never stored; the honest query is (as a note: no hole in its sequence).
        after = list(service.store.events())
        assert len(after) - stored == 2  # the honest query's note, and the forged-source report
        assert not any("DROP" in json.dumps(e.payload) for e in after)
        assert service.store.list_hands() == []
    finally:
        raw.close()


@pytest.mark.parametrize("kind", ["sqlite", "postgres"])
def test_after_a_restart_each_step_keeps_the_time_and_source_it_was_stored_with(
        kind: str, mosquitto_broker: Any, tmp_path: Path, request: pytest.FixtureRequest) -> None:
    from datetime import UTC, datetime

    config = engine_config(mosquitto_broker, tmp_path / "engine.db")
    if kind == "postgres":
        dsn = request.getfixturevalue("pg_dsn")
        # A server whose clock reads another zone: the store still keeps UTC.
        config.store = dsn + ("&" if "?" in dsn else "?") + "options=-c%20TimeZone%3DPacific/Auckland"
    service = EngineService(config).start()
    bridge = client(mosquitto_broker, "bridge", "shoe-1")
    deck = [str(c) for c in DECK]
    try:
        deal_third_street(bridge, deck, 0)
        deadline = time.monotonic() + 10
        while len(service.core.floor.hand.events) < 10 and time.monotonic() < deadline:
            time.sleep(0.05)
        before = service.core.provenance.of(service.core.floor.hand)
    finally:
        bridge.stop()
        service.stop()
    again = EngineService(config).start()  # replays the store: the marks come from it
    try:
        hand = again.core.floor.hand
        marks = again.core.provenance.of(hand)
        assert [s for s, _ in marks] == [s for s, _ in before] and {s for s, _ in marks} == {"engine", "shoe-1"}
        now = datetime.now(UTC)
        for (_, at), (_, at_live) in zip(marks, before, strict=True):
            assert at is not None and at_live is not None
            stored = datetime.fromisoformat(at.replace("Z", "+00:00"))
            live = datetime.fromisoformat(at_live.replace("Z", "+00:00"))
            assert abs((stored - live).total_seconds()) <= 2 and abs((now - stored).total_seconds()) < 120
    finally:
        again.stop()
