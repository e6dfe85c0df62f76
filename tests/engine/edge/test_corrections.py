"""Corrections and game changes through the real engine service, its SQLite store and a real broker
(issue 21, 3 and 4): an undo over the bus, a wrong floor PIN that changes nothing, a restart that
reaches the same state, and hands that keep their game when the game changes."""

from __future__ import annotations

import copy
import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from engine import wire
from engine.rules import GameConfig, Variant
from engine.service import EngineConfig, EngineService
from engine.wire import Channel
from tests.engine.edge.test_service import TABLE, client, draw, engine_config, latest_state, wait_state
from tests.support.mqtt import TestClient

PIN = "2468"
# Third street, dealt seat 1, 2, 3 twice down then once up: the 2c (seat 1) brings it in.
THIRD = ("As", "Ks", "Qs", "Ah", "Kh", "Qh", "2c", "9d", "Td")
UNCHANGED_BY_A_REFUSAL = ("last_error", "input", "devices")  # what a refused input changes, on purpose


def _without(state: dict[str, Any], *keys: str) -> dict[str, Any]:
    return {k: v for k, v in state.items() if k not in keys}


def _stored(db: Path, kind: str) -> list[tuple[str, dict[str, Any]]]:
    with sqlite3.connect(db) as conn:
        rows = conn.execute("SELECT source, payload FROM events WHERE kind = ? ORDER BY event_offset", (kind,))
        return [(str(src), json.loads(payload)) for src, payload in rows]


@pytest.fixture
def pinned(mqtt_broker: Any, tmp_path: Path) -> Any:
    config = engine_config(mqtt_broker, tmp_path / "engine.db")
    config.floor_pin = PIN
    service = EngineService(config).start()
    holder = {"service": service}
    yield mqtt_broker, holder, config, tmp_path
    holder["service"].stop()


def test_an_undo_over_the_bus_a_wrong_pin_and_a_restart(pinned: Any) -> None:
    broker, holder, config, tmp_path = pinned
    monitor = TestClient(broker, "monitor")
    assert monitor.connected()
    monitor.subscribe([wire.topic(TABLE, Channel.STATE)])
    console = client(broker, "console", "console-1")
    bridge = client(broker, "bridge", "shoe-1")
    for counter, card in enumerate(THIRD, 1):
        draw(bridge, counter, card)
    wait_state(monitor, lambda s: s["phase"] == "betting" and s["to_act"] == 1)
    console.publish(Channel.COMMAND, "action", seat=1, action="bring_in", amount=2)
    wait_state(monitor, lambda s: s["to_act"] == 2)
    # The dealer taps Complete for seat 2, who called: undone as the last entry, no PIN.
    console.publish(Channel.COMMAND, "action", seat=2, action="complete", amount=5)
    state = wait_state(monitor, lambda s: s["to_act"] == 3)
    last = state["dealer_inputs"][-1]
    assert last["text"] == "seat 2 Bob complete to 5 (third street)" and last["last"]
    console.publish(Channel.COMMAND, "correction", op="undo", hand=1, input=last["input"])
    state = wait_state(monitor, lambda s: s["to_act"] == 2)
    assert state["dealer_inputs"][-1]["undone"] and state["seats"][1]["bet"] == 0
    console.publish(Channel.COMMAND, "action", seat=2, action="call", amount=2)
    wait_state(monitor, lambda s: s["to_act"] == 3)
    console.publish(Channel.COMMAND, "action", seat=3, action="call", amount=2)
    before = wait_state(monitor, lambda s: s["phase"] == "dealing")
    # Seat 2's call is not the last entry: a wrong floor PIN is refused and nothing else changes.
    call = next(e for e in before["dealer_inputs"] if e["text"] == "seat 2 Bob call 2 (third street)")
    console.publish(Channel.COMMAND, "correction", op="undo", hand=1, input=call["input"], pin="1357")
    after = wait_state(monitor, lambda s: s.get("last_error") is not None)
    assert "the floor PIN is wrong" in after["last_error"]["reason"]
    assert _without(after, *UNCHANGED_BY_A_REFUSAL) == _without(before, *UNCHANGED_BY_A_REFUSAL)
    # Nor does a PIN reach the store, or the state.
    db = tmp_path / "engine.db"
    stored = _stored(db, "correction")
    assert [p.get("floor") for _, p in stored] == [None, "wrong"]
    assert all("pin" not in p for _, p in stored) and all(src.endswith("console-1") for src, _ in stored)
    assert PIN not in json.dumps(after) and "1357" not in json.dumps(after)
    # The right PIN: the call is undone, seat 3's call after it is out of turn now (RRoP 3.5).
    console.publish(Channel.COMMAND, "correction", op="undo", hand=1, input=call["input"], pin=PIN)
    state = wait_state(monitor, lambda s: s["phase"] == "betting" and s["to_act"] == 2)
    assert [p["rule"] for p in state["prompts"]] == ["betting.out-of-turn"]
    # Restart: the store (with both corrections) replays to exactly the same table.
    service = holder["service"]
    whole = copy.deepcopy(service.core.floor.state())
    public = _without(service.core.state(), "devices")
    service.stop()
    holder["service"] = again = EngineService(config).start()
    assert again.core.floor.state() == whole
    assert _without(again.core.state(), "devices") == public


def _direct(service: EngineService, channel: Channel, kind: str, source: str, seq: int, **body: Any) -> None:
    """A message as the bus hands it to the service (the service's own path: store, then floor)."""
    service._on_message(wire.make(TABLE, channel, kind, source=source, session=1, seq=seq, **body))


def _config(tmp_path: Path, game: dict[str, Any]) -> EngineConfig:
    return EngineConfig.from_dict({
        "table": TABLE, "game": game, "store": {"url": str(tmp_path / "engine.db")}, "engine": {"auto_start": True},
        "seats": [{"seat": 1, "name": "Ann", "stack": 200}, {"seat": 2, "name": "Bob", "stack": 200}],
    })


STUD = {"variant": "F7S", "ante": 1, "bring_in": 2, "small_bet": 5, "big_bet": 10}
RAZZ = {"variant": "FR", "ante": 2, "bring_in": 5, "small_bet": 10, "big_bet": 20}


def test_a_hand_played_keeps_its_game_when_the_config_changes_and_the_engine_restarts(tmp_path: Path) -> None:
    """Fails on the code before game changes: the restart replayed hand 1 under razz."""
    service = EngineService(_config(tmp_path, STUD))
    service.replay()
    for seq, card in enumerate(("As", "Ks", "Ah", "Kh", "7h", "9d"), 1):
        _direct(service, Channel.SHOE, "card_drawn", "shoe-1", seq, counter=seq, uid=f"04{seq:012x}", card=card,
                deck="d1", quality=200, status="ok")
    _direct(service, Channel.COMMAND, "action", "console-1", 1, seat=1, action="bring_in", amount=2)
    _direct(service, Channel.COMMAND, "action", "console-1", 2, seat=2, action="fold", amount=None)
    first = service.core.floor.hands[0]
    stacks = first.finishing_stacks()
    assert first.config.variant is Variant.STUD and service.core.floor.table.hand.hand_id == 2  # type: ignore[union-attr]
    service.stop()

    service = EngineService(_config(tmp_path, RAZZ))
    service.replay()
    floor = service.core.floor
    assert floor.hands[0].config.variant is Variant.STUD and floor.hands[0].finishing_stacks() == stacks
    hand = floor.table.hand
    assert hand is not None and hand.hand_id == 2 and hand.config.variant is Variant.STUD  # dealt before
    state = service.core.state()
    assert state["game"]["variant"] == "F7S" and state["next_game"]["variant"] == "FR"
    assert floor.table.config == GameConfig.from_json(RAZZ)
    games = [(src, p["game"]["variant"]) for src, p in _stored(tmp_path / "engine.db", "table") if p["op"] == "game"]
    assert games == [("engine", "F7S"), ("engine", "FR")]
    service.stop()
    # Restarted again with the same config: no second change; and hand 2 still stud.
    service = EngineService(_config(tmp_path, RAZZ))
    service.replay()
    assert service.core.floor.table.hand.config.variant is Variant.STUD  # type: ignore[union-attr]
    assert len([p for _, p in _stored(tmp_path / "engine.db", "table") if p["op"] == "game"]) == 2
    service.stop()


def test_a_game_change_from_the_console_between_hands(mosquitto_broker: Any, tmp_path: Path) -> None:
    broker = mosquitto_broker
    config = engine_config(broker, tmp_path / "engine.db")
    config.auto_start = False
    service = EngineService(config).start()
    holder = {"service": service}
    try:
        monitor = TestClient(broker, "monitor")
        assert monitor.connected()
        monitor.subscribe([wire.topic(TABLE, Channel.STATE)])
        console = client(broker, "console", "console-1")
        bridge = client(broker, "bridge", "shoe-1")
        console.publish(Channel.COMMAND, "table", op="start_hand", seat=None)
        wait_state(monitor, lambda s: s["phase"] == "dealing")  # the shoe's cards must not overtake it
        for counter, card in enumerate(THIRD, 1):
            draw(bridge, counter, card)
        wait_state(monitor, lambda s: s["phase"] == "betting")
        console.publish(Channel.COMMAND, "table", op="game", seat=None,
                        game={"variant": "FR", "ante": 2, "bring_in": 5, "small_bet": 10, "big_bet": 20})
        state = wait_state(monitor, lambda s: s.get("next_game") is not None)
        assert state["game"]["variant"] == "F7S" and state["next_game"]["name"] == "Razz"  # from the next hand
        console.publish(Channel.COMMAND, "action", seat=1, action="bring_in", amount=2)
        wait_state(monitor, lambda s: s["to_act"] == 2)
        console.publish(Channel.COMMAND, "action", seat=2, action="fold", amount=None)
        wait_state(monitor, lambda s: s["to_act"] == 3)
        console.publish(Channel.COMMAND, "action", seat=3, action="fold", amount=None)
        wait_state(monitor, lambda s: s["phase"] == "complete")
        console.publish(Channel.COMMAND, "table", op="start_hand", seat=None)
        state = wait_state(monitor, lambda s: s["hand_id"] == 2)
        assert state["game"]["variant"] == "FR" and state["game"]["small_bet"] == 10 and "next_game" not in state
        # A game that cannot be played is refused with the reason, nothing changed.
        console.publish(Channel.COMMAND, "table", op="game", seat=None, game={"bring_in": 50})
        state = wait_state(monitor, lambda s: s.get("last_error") is not None)
        assert "bring_in" in state["last_error"]["reason"] and "next_game" not in state
        holder["service"].stop()
        holder["service"] = again = EngineService(config).start()
        floor = again.core.floor
        assert [h.config.variant for h in floor.hands] == [Variant.STUD]
        assert floor.table.hand is not None and floor.table.hand.config.variant is Variant.RAZZ
        assert latest_state(monitor) is not None
    finally:
        holder["service"].stop()


def test_after_an_undo_every_event_keeps_the_input_that_made_it(tmp_path: Path) -> None:
    """The history's who and when: the hand taken again leaves each event with its own source, and
    the undo is a step of its own (engine/handlog.py), from the console that sent it."""
    service = EngineService(_config(tmp_path, STUD))
    service.replay()
    for seq, card in enumerate(("As", "Ks", "Ah", "Kh", "7h", "9d"), 1):
        _direct(service, Channel.SHOE, "card_drawn", "shoe-1", seq, counter=seq, uid=f"04{seq:012x}", card=card,
                deck="d1", quality=200, status="ok")
    _direct(service, Channel.COMMAND, "action", "console-1", 1, seat=1, action="bring_in", amount=2)
    _direct(service, Channel.COMMAND, "action", "console-1", 2, seat=2, action="complete", amount=5)
    entry = service.core.floor.dealer_inputs()[-1]
    _direct(service, Channel.COMMAND, "correction", "console-2", 1, op="undo", hand=1, input=entry["input"])
    _direct(service, Channel.COMMAND, "action", "console-1", 3, seat=2, action="call", amount=2)
    hand = service.core.floor.table.hand
    assert hand is not None
    marks = service.core.provenance.of(hand)
    steps = [(e.type, source) for e, (source, _) in zip(hand.events, marks, strict=True)]
    assert steps == [("hand_started", "engine"), *[("card_dealt", "shoe-1")] * 6, ("player_action", "console-1"),
                     ("entry_undone", "console-2"), ("player_action", "console-1")]
    assert all(at for _, at in marks[1:])
    from engine.handlog import describe
    assert describe(hand.events[8], hand, reveal=False)[0] == "Undone: seat 2 Bob complete to 5 (third street)"
    service.stop()


@pytest.mark.parametrize("pin", ["12", "12ab", "1234567890123", 1.5])
def test_a_floor_pin_that_is_not_4_to_12_digits_is_refused_naming_the_key(pin: Any, tmp_path: Path) -> None:
    from engine.configfile import ConfigFileError

    data = {"table": TABLE, "game": STUD, "store": {"url": str(tmp_path / "e.db")}, "engine": {"floor_pin": pin}}
    with pytest.raises(ConfigFileError) as refused:
        EngineConfig.from_dict(data)
    assert refused.value.key == "engine.floor_pin" and "4 to 12 digits" in str(refused.value)
    assert EngineConfig.from_dict({**data, "engine": {"floor_pin": "4821"}}).floor_pin == "4821"
    assert "4821" not in repr(EngineConfig.from_dict({**data, "engine": {"floor_pin": "4821"}}))


def test_five_wrong_pins_lock_the_pin_until_the_next_hand_and_a_restart_counts_them(tmp_path: Path) -> None:
    def table() -> EngineService:
        config = _config(tmp_path, STUD)
        config.floor_pin = PIN
        service = EngineService(config)
        service.replay()
        return service

    service = table()
    for seq, card in enumerate(("As", "Ks", "Ah", "Kh", "7h", "9d"), 1):
        _direct(service, Channel.SHOE, "card_drawn", "shoe-1", seq, counter=seq, uid=f"04{seq:012x}", card=card,
                deck="d1", quality=200, status="ok")
    _direct(service, Channel.COMMAND, "action", "console-1", 1, seat=1, action="bring_in", amount=2)
    _direct(service, Channel.COMMAND, "action", "console-1", 2, seat=2, action="call", amount=2)
    bring_in = service.core.floor.dealer_inputs()[0]["input"]
    seq = 2
    for _ in range(5):
        seq += 1
        _direct(service, Channel.COMMAND, "correction", "console-1", seq, op="undo", hand=1, input=bring_in, pin="0000")
        assert "the floor PIN is wrong" in service.core.last_error["reason"]  # type: ignore[index]
    whole = copy.deepcopy(service.core.floor.state())
    seq += 1
    _direct(service, Channel.COMMAND, "correction", "console-1", seq, op="undo", hand=1, input=bring_in, pin=PIN)
    assert "too many wrong floor PINs" in service.core.last_error["reason"]  # type: ignore[index]
    assert service.core.floor.state() == whole
    service.stop()
    service = table()  # the store's verdicts count again: still locked
    seq += 1
    _direct(service, Channel.COMMAND, "correction", "console-1", seq, op="undo", hand=1, input=bring_in, pin=PIN)
    assert "too many wrong floor PINs" in service.core.last_error["reason"]  # type: ignore[index]
    assert [p.get("floor") for _, p in _stored(tmp_path / "engine.db", "correction")] == ["wrong"] * 5 + ["locked"] * 2
    service.stop()


def test_the_floor_pin_file_must_be_the_engine_s_alone(tmp_path: Path) -> None:
    from engine.configfile import ConfigFileError
    from engine.tableconfig import load

    pin_file = tmp_path / "floor_pin"
    pin_file.write_text("4821\n")
    pin_file.chmod(0o644)
    data = {"table": TABLE, "game": STUD, "store": {"url": str(tmp_path / "e.db")},
            "engine": {"floor_pin_file": "floor_pin"}}
    with pytest.raises(ConfigFileError) as refused:
        EngineConfig.from_dict(data, base=tmp_path)
    assert refused.value.key == "engine.floor_pin_file" and "chmod 600" in str(refused.value)
    pin_file.chmod(0o600)
    assert EngineConfig.from_dict(data, base=tmp_path).floor_pin == "4821"
    # From the table file, as a deployed engine reads it.
    table = tmp_path / "table.toml"
    table.write_text('table = "t1"\n[game]\nvariant = "F7S"\nante = 1\nbring_in = 2\nsmall_bet = 5\nbig_bet = 10\n'
                     '[broker]\nhost = "127.0.0.1"\nport = 1883\ncredentials = "creds"\n[store]\nurl = "x.db"\n'
                     '[engine]\nfloor_pin_file = "floor_pin"\n')
    assert EngineConfig.from_dict(load(table).engine_part()).floor_pin == "4821"
