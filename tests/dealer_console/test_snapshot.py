"""The pure readers: public state -> snapshot, prompts in both shapes, device health."""

from __future__ import annotations

import copy
from typing import Any

from dealer_console.health import DeviceHealth, age_text
from dealer_console.history import steps as replay_steps
from dealer_console.scripted import hand_events
from dealer_console.snapshot import read_prompts, read_state
from engine.handlog import steps_of


def by_label(recorded: list[dict[str, Any]], label: str, street: str | None = None) -> dict[str, Any]:
    return next(r["state"] for r in recorded if r["label"] == label and (street is None or r["state"]["street"] == street))


def test_bring_in_state_reads_options_with_keys(recorded: list[dict[str, Any]]) -> None:
    state = next(r["state"] for r in recorded if "bring_in" in r["tags"])
    snap = read_state(state)
    assert snap.to_act == 2 and snap.street == "third street" and snap.bet_size == 5
    assert [(o.label, o.shortcut) for o in snap.options] == [("Bring in 2", "B"), ("Complete to 5", "R")]
    assert snap.announcement == "Deuce of clubs brings it in"
    ben = snap.seat(2)
    assert ben is not None and ben.up == ("2c",) and ben.down_count == 2


def test_open_pair_second_bet_gets_shift_key(recorded: list[dict[str, Any]]) -> None:
    snap = read_state(by_label(recorded, "deal seat 6", "fourth street"))
    assert [(o.label, o.shortcut) for o in snap.options] == [("Check", "C"), ("Bet 5", "R"), ("Bet 10", "Shift+R")]
    assert [o.command_amount() for o in snap.options] == [None, 5, 10]


def test_down_card_identity_never_read_unless_shown(recorded: list[dict[str, Any]]) -> None:
    state = copy.deepcopy(by_label(recorded, "seat 6 raise"))
    # A wrongly built state that leaks a hole card must still draw a back.
    state["seats"][0]["cards"][0]["card"] = "Ah"
    snap = read_state(state)
    seat = snap.seat(1)
    assert seat is not None
    assert seat.cards[0].code is None and not seat.cards[0].up
    assert "Ah" not in [c.code for s in snap.seats for c in s.cards]


def test_shown_cards_are_named_at_showdown(recorded: list[dict[str, Any]]) -> None:
    snap = read_state(next(r["state"] for r in recorded if "complete" in r["tags"]))
    eli = snap.seat(6)
    assert eli is not None and eli.shown
    assert [c.code for c in eli.cards] == ["5h", "6c", "Ad", "Ts", "7h", "Ac", "2s"]
    assert snap.announcement.startswith("Eli wins 133")


def test_prompts_in_both_shapes() -> None:
    state_shape = [{"id": "p1", "rule": "stud.x", "seats": [4], "text": "T", "clause": "RRoP stud 9",
                    "options": [{"id": "a", "label": "Do A"}]}]
    channel_shape = [{"prompt": "p1", "text": "T", "options": ["a"], "labels": ["Do A"], "rule": "RRoP stud 9"}]
    a, b = read_prompts(state_shape), read_prompts(channel_shape)
    assert a[0].id == b[0].id == "p1"
    assert a[0].options[0].label == b[0].options[0].label == "Do A"
    assert a[0].clause == b[0].clause == "RRoP stud 9"
    assert a[0].seats == (4,)


def test_garbage_state_does_not_crash() -> None:
    snap = read_state({"seats": [None, {"seat": "x"}], "options": [3], "game": 7, "prompts": "no"})
    assert snap.phase == "idle" and snap.options == () and snap.prompts == ()


class Clock:
    def __init__(self) -> None:
        self.t = 1000.0

    def __call__(self) -> float:
        return self.t


def test_health_engine_reachable_needs_broker_and_engine() -> None:
    clock = Clock()
    h = DeviceHealth(clock)
    assert not h.engine_reachable
    h.availability("engine", True)
    assert not h.engine_reachable  # no broker link: nothing is reachable
    h.broker(True)
    assert h.engine_reachable
    h.availability("engine", False)  # the Last Will
    assert not h.engine_reachable
    h.availability("engine", True)
    h.broker(False)
    assert not h.engine_reachable


def test_health_rows_and_ages() -> None:
    clock = Clock()
    h = DeviceHealth(clock, self_device="console")
    h.broker(True)
    h.availability("engine", True)
    h.birth("shoe-7", "bridge")
    h.heard("cam-1")
    h.heard("console")
    clock.t += 12.0
    h.heard("engine")
    rows = {r.name: r for r in h.rows()}
    assert list(rows) == ["Broker", "Engine", "shoe-7", "cam-1"]
    assert rows["Engine"].online and rows["Engine"].age_s == 0.0
    assert rows["cam-1"].age_s == 12.0
    assert "console" not in [r.device for r in h.rows()]
    assert age_text(12.0) == "12 s" and age_text(None) == "never"


def test_engine_device_summary_fills_devices_we_cannot_read() -> None:
    clock = Clock()
    h = DeviceHealth(clock)
    h.broker(True)
    h.engine_summary({"shoe": {"role": "bridge", "online": False, "last_seen_s": 42.0}})
    row = next(r for r in h.rows() if r.device == "shoe")
    assert not row.online and row.age_s == 42.0 and row.name == "Shoe"


def test_history_replay_pot_at_each_step(recorded: list[dict[str, Any]]) -> None:
    _, folded = steps_of(hand_events(), reveal=True, table_id="t1")
    steps = replay_steps({"steps": folded})
    live = [r["state"]["pot"] for r in recorded]
    # every step before the award shows the pot the engine published live at that point
    assert [s.pot for s in steps[:-2]] == live[:-1]
    assert steps[-1].kind == "result" and steps[-1].pot == 133  # the result: what was awarded
    complete = next(s for s in steps if s.text == "Seat 3 (Chen) completes to 5")
    assert complete.pot == 13 and complete.street == "third street"


def test_every_state_of_the_contract_is_read_through_the_typed_tree_and_reads_the_same(
        recorded: list[dict[str, Any]]) -> None:
    """Issue 18, 3: the console's snapshot is built from engine.publicstate.PublicState; the loose
    reader is kept only for states outside the contract (a trimmed history picture), and both
    read every recorded state of a scripted hand alike."""
    from dealer_console.snapshot import from_public_state, read_loose_state
    from engine.publicstate import PublicState

    assert recorded
    for r in recorded:
        typed = PublicState.from_json(r["state"])  # every recorded state is of the contract
        assert read_state(r["state"]) == from_public_state(typed) == read_loose_state(r["state"]), r["label"]
    # A down card its seat has not shown is never named, even in a (wrongly built) typed state.
    state = copy.deepcopy(next(r["state"] for r in recorded if r["state"]["seats"] and r["state"]["seats"][0]["cards"]))
    state["seats"][0]["cards"][0] = {"card": "As", "up": False}
    snap = from_public_state(PublicState.from_json(state))
    assert snap.seats[0].cards[0].code is None
