"""Corrections (issue 21, 4) and game changes between hands (issue 21, 3), in the floor's pure core.

An undo is an input: the floor takes the hand's inputs again without the voided one, so a floor
fed the same inputs (a restart replaying the store) is the same floor, and the result equals a
floor that never got the voided input.  A refused correction changes nothing at all.
"""

from __future__ import annotations

import contextlib
import copy
from pathlib import Path
from typing import Any

import pytest

from engine.floor import Floor, FloorError
from engine.rules import Variant
from engine.scenario import ScenarioError, build_floor, load, step_inputs

TABLE = {"variant": "F7S", "ante": 1, "bring_in": 2, "small_bet": 5, "big_bet": 10,
         "seats": [{"seat": 1, "name": "Ann", "stack": 100}, {"seat": 2, "name": "Bob", "stack": 100}]}
# Third street: seat 1 As Ah / 7h up, seat 2 Ks Kh / 9d up; the 7h brings it in.
THIRD = [{"kind": "shoe_card", "card": c} for c in ("As", "Ks", "Ah", "Kh", "7h", "9d")]
BRING_IN = {"kind": "action", "seat": 1, "action": "bring_in", "amount": 2}


def _floor(**table: Any) -> tuple[Floor, list[dict[str, Any]]]:
    floor, _ = build_floor({**TABLE, **table})
    return floor, []  # the log of what the test feeds after the seating and the start


def _feed(floor: Floor, inputs: list[dict[str, Any]], log: list[dict[str, Any]]) -> None:
    for inp in inputs:
        floor.handle(inp)
        log.append(inp)


def _undo(floor: Floor, index: int, authority: str | None = None) -> dict[str, Any]:
    hand = floor.table.hand
    assert hand is not None
    inp: dict[str, Any] = {"kind": "correction", "op": "undo", "hand": hand.hand_id, "input": index}
    if authority is not None:
        inp["floor"] = authority
    return inp


def _entry(floor: Floor, text: str) -> dict[str, Any]:
    found = [e for e in floor.dealer_inputs() if e["text"] == text]
    assert found, [e["text"] for e in floor.dealer_inputs()]
    return found[0]


def _table_of(floor: Floor) -> Any:
    return floor.table.secret_state(), [p["rule"] for p in floor.open_prompts()]


def _as_if_never(table: dict[str, Any], log: list[dict[str, Any]], voided: dict[str, Any]) -> Floor:
    """A floor fed the log without the voided input (refusals skipped, as the correction skips them)."""
    floor, _ = _floor(**table)
    for inp in log:
        if inp is voided or inp.get("kind") == "correction":
            continue
        with contextlib.suppress(FloorError):
            floor.handle(inp)
    return floor


def test_the_last_action_is_undone_and_the_player_acts_again() -> None:
    floor, log = _floor()
    wrong = {"kind": "action", "seat": 2, "action": "complete", "amount": 5}
    _feed(floor, [*THIRD, BRING_IN, wrong], log)
    entry = _entry(floor, "seat 2 Bob complete to 5 (third street)")
    assert entry["last"] and not entry["undone"] and entry["after"] == ""
    correction = _undo(floor, entry["input"])
    out = floor.handle(correction)
    log.append(correction)
    hand = floor.table.hand
    assert hand is not None and hand.to_act == 2 and hand.seat(2).bet == 0
    assert "undone: seat 2 Bob complete to 5 (third street)" in out.notes
    assert _entry(floor, "seat 2 Bob complete to 5 (third street)")["undone"]
    assert _table_of(floor) == _table_of(_as_if_never({}, log, wrong))
    # The right action now; and the hand log never holds the voided one.
    floor.handle({"kind": "action", "seat": 2, "action": "call", "amount": 2})
    assert [e.to_json().get("action") for e in hand.events if e.type == "player_action"] == ["bring_in", "call"]
    # The same inputs again (a restart replaying the store) give the same floor.
    again, _ = _floor()
    for inp in [*log, {"kind": "action", "seat": 2, "action": "call", "amount": 2}]:
        again.handle(inp)
    assert again.state() == floor.state()


def test_an_older_input_needs_the_floor_and_a_refusal_changes_nothing() -> None:
    floor, log = _floor()
    complete = {"kind": "action", "seat": 2, "action": "complete", "amount": 5}
    call = {"kind": "action", "seat": 1, "action": "call", "amount": 3}
    fourth = [{"kind": "shoe_card", "card": c} for c in ("2c", "Qd", "Jd")]  # the burn, then 4th street
    _feed(floor, [*THIRD, BRING_IN, complete, call, *fourth], log)
    entry = _entry(floor, "seat 2 Bob complete to 5 (third street)")
    assert not entry["last"] and entry["after"] == "3 cards and 1 action"
    for authority, reason in ((None, "the floor's PIN is needed"), ("wrong", "the floor PIN is wrong"),
                              ("unset", "no floor PIN configured")):
        whole = copy.deepcopy(floor.state())
        with pytest.raises(FloorError, match=reason):
            floor.handle(_undo(floor, entry["input"], authority))
        assert floor.state() == whole
    # With the floor's authority, still refused: taken again without the complete, the three cards
    # drawn after it would turn premature and be set aside (RRoP stud 13, 14: a drawn card stays).
    whole = copy.deepcopy(floor.state())
    with pytest.raises(FloorError, match=r"3 card\(s\) dealt after it would not stay .*RRoP stud 13, 14"):
        floor.handle(_undo(floor, entry["input"], "ok"))
    assert floor.state() == whole
    # Before the next street is drawn it is taken: the complete is gone, and what came after it is
    # taken again as the rules take it: seat 1's call is now out of turn (RRoP 3.5).
    floor, log = _floor()
    _feed(floor, [*THIRD, BRING_IN, complete, call], log)
    entry = _entry(floor, "seat 2 Bob complete to 5 (third street)")
    correction = _undo(floor, entry["input"], "ok")
    floor.handle(correction)
    log.append(correction)
    assert _table_of(floor) == _table_of(_as_if_never({}, log, complete))
    hand = floor.table.hand
    assert hand is not None and hand.street == 0
    assert [p["rule"] for p in floor.open_prompts()] == ["betting.out-of-turn"]


def test_an_undo_that_would_move_a_drawn_card_to_another_seat_is_refused() -> None:
    """The review's F12: a card keyed by hand for seat 2 is undone after the shoe dealt on; taken
    again without it, every later shoe card would go one seat along.  Refused, nothing changed."""
    floor, log = _floor()
    shoe = [{"kind": "shoe_card", "card": c} for c in ("As", "Ah")]
    keyed = {"kind": "manual_card", "seat": 2, "card": "Ks", "face_up": False}
    more = [{"kind": "shoe_card", "card": c} for c in ("Kh", "7h", "9d")]
    _feed(floor, [*shoe[:1], keyed, *shoe[1:], *more], log)
    before = {s.seat: [(str(c), up) for c, up in s.cards] for s in floor.table.hand.seats}
    entry = _entry(floor, next(e["text"] for e in floor.dealer_inputs() if "seat 2" in e["text"]))
    whole = copy.deepcopy(floor.state())
    with pytest.raises(FloorError, match=r"would not stay where they lie.*RRoP stud 13, 14"):
        floor.handle(_undo(floor, entry["input"], "ok"))
    assert floor.state() == whole
    assert {s.seat: [(str(c), up) for c, up in s.cards] for s in floor.table.hand.seats} == before


def test_a_second_undo_in_a_row_needs_the_floor() -> None:
    floor, _ = _floor()
    _feed(floor, [*THIRD, BRING_IN, {"kind": "action", "seat": 2, "action": "call", "amount": 2}], [])
    floor.handle(_undo(floor, _entry(floor, "seat 2 Bob call 2 (third street)")["input"]))
    bring = _entry(floor, "seat 1 Ann bring-in 2 (third street)")
    whole = copy.deepcopy(floor.state())
    with pytest.raises(FloorError, match="not the last input entered"):
        floor.handle(_undo(floor, bring["input"]))
    assert floor.state() == whole
    floor.handle(_undo(floor, bring["input"], "ok"))
    hand = floor.table.hand
    assert hand is not None and hand.to_act == 1 and hand.pot_total == 2  # the antes only
    # Each undo stays in the hand's log at its place (the hand log and the history show it).
    assert [e.to_json()["text"] for e in hand.events if e.type == "entry_undone"] == [
        "seat 2 Bob call 2 (third street)", "seat 1 Ann bring-in 2 (third street)"]
    assert [e.type for e in hand.events][-2:] == ["entry_undone", "entry_undone"]


def test_a_card_from_the_shoe_is_not_undone() -> None:
    floor, _ = _floor()
    _feed(floor, THIRD, [])
    whole = copy.deepcopy(floor.state())
    with pytest.raises(FloorError, match="a drawn card cannot go back") as refused:
        floor.handle(_undo(floor, 1, "ok"))
    assert refused.value.rule == "RRoP stud 14"
    assert floor.state() == whole


def test_a_card_keyed_face_up_instead_of_down_is_undone_and_keyed_again() -> None:
    floor, _ = _floor(shoe=False)
    wrong = {"kind": "manual_card", "seat": 1, "card": "Ah", "face_up": True}
    floor.handle(wrong)  # a hole card face up: the stud rule's prompt opens (RRoP stud 5)
    assert [p["rule"] for p in floor.open_prompts()] == ["stud.exposed-holecard"]
    assert [e["text"] for e in floor.dealer_inputs()] == ["seat 1 Ann: a card keyed face up (third street)"]
    floor.handle(_undo(floor, _entry(floor, "seat 1 Ann: a card keyed face up (third street)")["input"]))
    hand = floor.table.hand
    assert hand is not None and hand.seat(1).cards == [] and floor.open_prompts() == []
    floor.handle({"kind": "manual_card", "seat": 1, "card": "Ah", "face_up": False})
    floor.handle({"kind": "manual_card", "seat": 2, "card": "Kh", "face_up": False})
    assert [up for _, up in hand.seat(1).cards] == [False]
    # A card keyed face down is never named (public/state carries these words).
    texts = [e["text"] for e in floor.dealer_inputs()]
    assert texts[1:] == ["seat 1 Ann: a card keyed face down (third street)",
                         "seat 2 Bob: a card keyed face down (third street)"]
    assert all("Ah" not in t and "Kh" not in t for t in texts[1:])


def test_a_finished_hand_is_not_undone() -> None:
    floor, _ = _floor()
    _feed(floor, [*THIRD, BRING_IN, {"kind": "action", "seat": 2, "action": "fold"}], [])
    hand = floor.table.hand
    assert hand is not None and hand.is_over
    whole = copy.deepcopy(floor.state())
    with pytest.raises(FloorError, match="is over and its pot awarded"):
        floor.handle({"kind": "correction", "op": "undo", "hand": hand.hand_id, "input": 8, "floor": "ok"})
    assert floor.state() == whole


def test_a_game_change_waits_for_the_next_hand_and_never_touches_a_hand_played() -> None:
    floor, _ = _floor()
    razz = {"kind": "table", "op": "game", "game": {"variant": "FR", "ante": 1, "bring_in": 3, "small_bet": 10,
                                                       "big_bet": 20}}
    _feed(floor, [*THIRD, BRING_IN], [])
    out = floor.handle(razz)  # during a hand: taken, from the next hand
    assert "from the next hand" in out.notes[-1]
    hand = floor.table.hand
    assert hand is not None and hand.config.variant is Variant.STUD and floor.config.variant is Variant.STUD
    floor.handle({"kind": "action", "seat": 2, "action": "fold"})
    floor.handle({"kind": "table", "op": "start_hand"})
    assert floor.table.hand is not None and floor.table.hand.config.variant is Variant.RAZZ
    assert floor.table.hand.config.small_bet == 10 and floor.config.variant is Variant.RAZZ
    assert floor.hands[0].config.variant is Variant.STUD and floor.hands[0].config.small_bet == 5


def test_a_game_change_that_cannot_be_played_is_refused_naming_the_field() -> None:
    floor, _ = _floor()
    whole = copy.deepcopy(floor.state())
    with pytest.raises(FloorError, match="bring_in"):
        floor.handle({"kind": "table", "op": "game", "game": {"bring_in": 50}})
    with pytest.raises(FloorError, match=r"game\.limit"):
        floor.handle({"kind": "table", "op": "game", "game": {"limit": 50}})
    assert floor.state() == whole


def test_an_undo_after_a_game_change_in_the_hand_keeps_the_hand_s_game() -> None:
    floor, _ = _floor()
    _feed(floor, [*THIRD, {"kind": "table", "op": "game", "game": {"variant": "razz"}}, BRING_IN], [])
    floor.handle(_undo(floor, _entry(floor, "seat 1 Ann bring-in 2 (third street)")["input"]))
    hand = floor.table.hand
    assert hand is not None and hand.config.variant is Variant.STUD and hand.to_act == 1
    assert floor.table.config.variant is Variant.RAZZ  # still waiting for the next hand


SCENARIOS = sorted((Path(__file__).resolve().parents[1] / "scenarios").glob("*.toml"))


@pytest.mark.parametrize("path", SCENARIOS, ids=lambda p: p.stem)
def test_undoing_any_entry_of_a_scripted_hand_is_the_hand_without_it(path: Path) -> None:
    """Every scenario, stopped at each dealer entry of its last hand: undoing it (with the floor's
    authority) gives the floor that never had it, and replaying the inputs with the correction
    gives the same floor again (an engine restarted from its store)."""
    data = load(path)
    floor, setup = build_floor(data["table"])
    taken: list[Any] = list(setup)
    # The last moment of the script with a hand in progress and a dealer entry in it (most
    # scenarios end with the hand over: they are checked where it was last live).
    last_live: tuple[Any, list[Any]] | None = None
    for step in data["steps"]:
        try:
            inputs = step_inputs(step, floor)
        except ScenarioError:
            break
        for inp in inputs:
            try:
                floor.handle(inp)
            except FloorError:
                continue
            taken.append(inp)
        hand = floor.table.hand
        if hand is not None and not hand.is_over and floor.dealer_inputs():
            last_live = (copy.deepcopy(floor), list(taken))
    if last_live is None:
        pytest.skip("no dealer entry is ever made in a hand in progress")
    floor, taken = last_live
    for entry in floor.dealer_inputs()[-3:]:
        voided = taken[len(taken) - len(floor.hand_inputs) + entry["input"]]
        fresh, _ = build_floor({**data["table"], "start": False})
        for inp in taken[len(setup) - (1 if data["table"].get("start", True) else 0):]:
            fresh.handle(inp)
        assert fresh.state() == floor.state()
        try:
            fresh.handle(_undo(fresh, entry["input"], "ok"))
        except FloorError as exc:
            # RRoP stud 13, 14: refused only where a card drawn after the entry would not stay
            # where it lies; and then nothing changed.
            later = fresh.hand_inputs[entry["input"] + 1:]
            assert "RRoP stud 13, 14" in str(exc) and any(h.input.kind == "shoe_card" for h in later), str(exc)
            assert fresh.state() == floor.state()
            continue
        never, _ = build_floor({**data["table"], "start": False})
        for inp in taken[len(setup) - (1 if data["table"].get("start", True) else 0):]:
            if inp is voided:
                continue
            with contextlib.suppress(FloorError):
                never.handle(inp)
        assert _table_of(fresh) == _table_of(never), entry["text"]
