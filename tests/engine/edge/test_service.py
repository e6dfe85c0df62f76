"""The engine service over a real broker: inputs in, state out, stored before published,
replayed after a restart, duplicates ignored, and no hole card reaching console or monitor."""

from __future__ import annotations

import json
import random
import time
from pathlib import Path
from typing import Any

import pytest

from engine import wire
from engine.bus import BusClient
from engine.cards import DECK
from engine.service import EngineConfig, EngineService
from engine.wire import Channel
from tests.support.mqtt import TestClient

TABLE = "t1"


def engine_config(broker: Any, store: Path) -> EngineConfig:
    user, password = broker.login("engine")
    return EngineConfig.from_dict(
        {
            "table": TABLE,
            "game": {"variant": "F7S", "ante": 1, "bring_in": 2, "small_bet": 5, "big_bet": 10},
            "seats": [
                {"seat": 1, "name": "Ann", "stack": 200},
                {"seat": 2, "name": "Bob", "stack": 200},
                {"seat": 3, "name": "Cy", "stack": 200},
            ],
            "store": {"url": str(store)},
            "broker": {"host": broker.host, "port": broker.port, "username": user, "password": password},
            "engine": {"auto_start": True},  # these tests deal hand after hand with no dealer to tap Next hand
        }
    )


def client(broker: Any, role: str, device: str) -> BusClient:
    user, password = broker.login(role, device)
    return BusClient(host=broker.host, port=broker.port, username=user, password=password, table=TABLE,
                     device=device, role=role, session=1).start()


def latest_state(c: TestClient) -> dict[str, Any] | None:
    for r in reversed(c.received):
        if r.topic.endswith("/public/state"):
            return json.loads(r.payload)["state"]
    return None


def wait_state(c: TestClient, predicate: Any, timeout: float = 10.0) -> dict[str, Any]:
    assert c.wait(lambda: (s := latest_state(c)) is not None and predicate(s), timeout), latest_state(c)
    state = latest_state(c)
    assert state is not None
    return state


def draw(bridge: BusClient, counter: int, card: str) -> None:
    bridge.publish(Channel.SHOE, "card_drawn", counter=counter, uid=f"04{counter:012x}", card=card, deck="d1",
                   quality=200, status="ok")


@pytest.fixture
def table(mqtt_broker: Any, tmp_path: Path) -> Any:
    """The engine service on each broker (mosquitto and the embedded amqtt), SQLite store."""
    service = EngineService(engine_config(mqtt_broker, tmp_path / "engine.db")).start()
    yield mqtt_broker, service, tmp_path
    service.stop()


def test_a_hand_over_the_bus_with_hole_cards_kept_secret(table: Any) -> None:
    broker, service, _ = table
    # Two spies subscribe to everything (mosquitto grants '#' and filters; amqtt refuses it);
    # what they receive is checked below.  The hand is driven from the monitor's public state.
    spy_monitor = TestClient(broker, "monitor")
    console_rx = TestClient(broker, "console")
    monitor = TestClient(broker, "monitor")
    assert spy_monitor.connected() and console_rx.connected() and monitor.connected()
    spy_monitor.subscribe(["#"])
    console_rx.subscribe(["#"])
    monitor.subscribe([wire.topic(TABLE, Channel.STATE), wire.topic_filter(TABLE, Channel.AVAIL)])
    console = client(broker, "console", "console-1")
    bridge = client(broker, "bridge", "shoe-1")
    deck = list(DECK)
    random.Random(3).shuffle(deck)
    down_cards: set[str] = set()
    counter = 0
    # Third street from the shoe: down, down, up to seats 1-3.
    for k in range(9):
        counter += 1
        card = str(deck.pop())
        if k < 6:
            down_cards.add(card)
        draw(bridge, counter, card)
    state = wait_state(monitor, lambda s: s["phase"] == "betting")
    to_act = state["to_act"]
    assert [o["action"] for o in state["options"]] == ["bring_in", "complete"]
    # Play it out by the options the state offers: bring in, call, call; then check it down.
    while True:
        state = wait_state(monitor, lambda s: s["phase"] in ("betting", "dealing", "complete", "showdown"))
        if state["phase"] == "complete" or state["hand_id"] != 1:
            break
        if state["phase"] == "betting":
            to_act = state["to_act"]
            opt = next(o for o in state["options"] if o["action"] in ("bring_in", "check", "call"))
            before = len(monitor.received)
            console.publish(Channel.COMMAND, "action", seat=to_act, action=opt["action"], amount=opt["amount"])
            monitor.wait(lambda b=before: len(monitor.received) > b)
        elif state["phase"] == "dealing":
            counter += 1
            card = str(deck.pop())
            slot = state.get("next_deal", [{}])[0]
            if slot.get("kind") == "card" and not slot.get("face_up"):
                down_cards.add(card)
            before = len(monitor.received)
            draw(bridge, counter, card)
            monitor.wait(lambda b=before: len(monitor.received) > b)
        else:  # showdown: the dealer shows each hand from the console
            seat = state["to_act"]
            hand = service.core.floor.hand
            cards = [str(c) for c in hand.seat(seat).down]
            before = len(monitor.received)
            console.publish(Channel.COMMAND, "show", seat=seat, cards=cards)
            monitor.wait(lambda b=before: len(monitor.received) > b)
    hand = service.core.floor.hands[0]
    assert hand.is_over
    assert sum(hand.finishing_stacks()) == 600
    # Secrecy: nothing the monitor or console received named a down card before it was shown.
    shown = {str(c) for s in hand.seats if s.shown for c in s.down}
    for who in (spy_monitor, console_rx, monitor):
        for r in who.received:
            assert "/sensor/shoe" not in r.topic and "/history/" not in r.topic
            text = r.payload.decode("utf-8", "replace")
            leaked = {c for c in down_cards - shown if f'"{c}"' in text}
            assert not leaked, (r.topic, leaked)
    console.stop()
    bridge.stop()
    for c in (spy_monitor, console_rx, monitor):
        c.close()


def test_inputs_are_stored_before_state_and_replayed_after_restart(table: Any) -> None:
    broker, service, tmp_path = table
    bridge = client(broker, "bridge", "shoe-1")
    monitor = TestClient(broker, "monitor")
    assert monitor.connected()
    monitor.subscribe([wire.topic(TABLE, Channel.STATE)])
    deck = [str(c) for c in DECK]
    for k in range(9):
        draw(bridge, k + 1, deck[k * 3])
    state = wait_state(monitor, lambda s: s["phase"] == "betting")
    console = client(broker, "console", "console-1")
    console.publish(Channel.COMMAND, "action", seat=state["to_act"], action="bring_in", amount=2)
    state = wait_state(monitor, lambda s: s["pot"] == 5)
    live = service.core.floor.hand.secret_state()
    service.stop()
    # A new engine process on the same store: it replays and is exactly where the old one was.
    again = EngineService(engine_config(broker, tmp_path / "engine.db")).start()
    try:
        assert again.replayed >= 12
        assert again.core.floor.hand.secret_state() == live
        # A redelivered shoe message (same source, session, seq) is recognised and ignored.
        raw = TestClient(broker, "bridge", client_id="shoe-1")
        assert raw.connected()
        dup = wire.make(TABLE, Channel.SHOE, "card_drawn", source="shoe-1", session=1, seq=3, counter=3,
                        uid="04aaaaaaaaaaaa", card="Qs", deck="d1", quality=200, status="ok")
        raw.publish(dup.topic, wire.encode(dup))
        time.sleep(0.5)
        assert again.core.floor.hand.secret_state() == live
        raw.close()
    finally:
        again.stop()
        console.stop()
        bridge.stop()
        monitor.close()


def test_a_refused_command_changes_nothing_and_says_why(table: Any) -> None:
    broker, service, _ = table
    monitor = TestClient(broker, "monitor")
    assert monitor.connected()
    monitor.subscribe([wire.topic(TABLE, Channel.STATE)])
    console = client(broker, "console", "console-1")
    before = service.core.floor.hand.secret_state()
    console.publish(Channel.COMMAND, "action", seat=2, action="raise", amount=99)
    state = wait_state(monitor, lambda s: s.get("last_error") is not None)
    assert "no hand is in progress" in state["last_error"]["reason"] or "not accepted" in state["last_error"]["reason"]
    assert service.core.floor.hand.secret_state() == before
    console.stop()
    monitor.close()


def test_postgres_store_replays_like_sqlite(mosquitto_broker: Any, pg_dsn: str) -> None:
    """The same durability with the cardroom's PostgreSQL as the event store."""
    config = engine_config(mosquitto_broker, Path("unused"))
    config.store = pg_dsn
    service = EngineService(config).start()
    bridge = client(mosquitto_broker, "bridge", "shoe-1")
    monitor = TestClient(mosquitto_broker, "monitor")
    assert monitor.connected()
    monitor.subscribe([wire.topic(TABLE, Channel.STATE)])
    try:
        deck = [str(c) for c in DECK]
        for k in range(9):
            draw(bridge, k + 1, deck[k * 3 + 1])
        wait_state(monitor, lambda s: s["phase"] == "betting")
        live = service.core.floor.hand.secret_state()
        service.stop()
        again = EngineService(config).start()
        try:
            assert again.core.floor.hand.secret_state() == live
        finally:
            again.stop()
    finally:
        bridge.stop()
        monitor.close()


def test_a_flood_of_malformed_messages_does_not_stop_the_hand(table: Any) -> None:
    """Garbage on every topic the engine reads, between real inputs: logged and dropped."""
    broker, service, _ = table
    rng = random.Random(9)
    raw_bridge = TestClient(broker, "bridge", client_id="shoe-junk")
    raw_console = TestClient(broker, "console", client_id="console-junk")
    assert raw_bridge.connected() and raw_console.connected()
    bridge = client(broker, "bridge", "shoe-1")
    monitor = TestClient(broker, "monitor")
    assert monitor.connected()
    monitor.subscribe([wire.topic(TABLE, Channel.STATE)])
    junk = [b"", b"{", b"null", b"[]", b'{"v": 1}', b'{"v":1,"source":"x","session":1,"seq":1,"kind":"card_drawn"}',
            b'{"v":1,"source":"shoe-junk","session":1,"seq":2,"kind":"card_drawn","counter":1,"uid":"zz",'
            b'"card":"Zz","deck":null,"quality":1,"status":"ok"}', bytes(rng.randrange(256) for _ in range(64))]
    deck = [str(c) for c in DECK]
    for k in range(9):
        for _ in range(3):
            raw_bridge.publish(wire.topic(TABLE, Channel.SHOE), rng.choice(junk))
            raw_console.publish(wire.topic(TABLE, Channel.COMMAND), rng.choice(junk))
        draw(bridge, k + 1, deck[k * 5 % 52])
    state = wait_state(monitor, lambda s: s["phase"] == "betting")
    hand = service.core.floor.hand
    assert sum(len(s.cards) for s in hand.seats) == 9
    assert state["options"][0]["action"] == "bring_in"
    for c in (raw_bridge, raw_console, monitor):
        c.close()
    bridge.stop()


def test_each_state_names_its_input_and_prompts_go_out_when_they_change(table: Any) -> None:
    """public/state says which device input it follows (a sender can match its command to the
    state it caused); dealer/prompt is republished only when the open prompts change."""
    broker = table[0]
    console_rx = TestClient(broker, "console")
    assert console_rx.connected()
    console_rx.subscribe([wire.topic(TABLE, Channel.STATE), wire.topic(TABLE, Channel.PROMPT)])
    assert console_rx.wait(lambda: any(r.topic.endswith("/dealer/prompt") for r in console_rx.received))
    time.sleep(0.3)
    prompts_before = sum(r.topic.endswith("/dealer/prompt") for r in console_rx.received)
    bridge = client(broker, "bridge", "shoe-1")
    deck = [str(c) for c in DECK]
    for k in range(9):
        draw(bridge, k + 1, deck[k * 3])
    state = wait_state(console_rx, lambda s: s["phase"] == "betting")
    assert state["input"] == {"source": "shoe-1", "session": 1, "seq": 9}
    console = client(broker, "console", "console-1")
    msg = console.publish(Channel.COMMAND, "action", seat=state["to_act"], action="bring_in", amount=2)
    state = wait_state(console_rx, lambda s: s["pot"] == 5)
    assert state["input"] == {"source": "console-1", "session": 1, "seq": msg.seq}
    states = [json.loads(r.payload)["state"] for r in console_rx.received if r.topic.endswith("/public/state")]
    # One state per card, in order (a state republished for another reason names the same input).
    seqs = [s["input"]["seq"] for s in states if s["input"] and s["input"]["source"] == "shoe-1"]
    assert seqs == sorted(seqs) and set(seqs) == set(range(1, 10))
    # Ten inputs and no prompt opened or closed: no prompts message.
    assert sum(r.topic.endswith("/dealer/prompt") for r in console_rx.received) == prompts_before
    # Once the table is quiet the engine checkpoints its store (off the path of any input).
    store = table[1].store
    deadline = time.monotonic() + 5
    while store._since_checkpoint and time.monotonic() < deadline:
        time.sleep(0.1)
    assert store._since_checkpoint == 0
    console.stop()
    bridge.stop()
    console_rx.close()
