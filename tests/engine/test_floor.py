"""Every ruling is ordinary hand events: after every input of every scenario the hand
rebuilt from its own log (also through JSON) equals the live hand, chips are conserved,
and a refused input changes nothing."""

from __future__ import annotations

import copy
from pathlib import Path

import pytest

from engine.cards import Card
from engine.events import (
    BringInWithdrawn,
    DealCorrected,
    ExtraCardReturned,
    FinalCardKept,
    PlayerAction,
    UpCardCorrected,
    event_from_json,
)
from engine.floor import FloorError
from engine.hand import Hand, IllegalAction
from engine.scenario import ScenarioError, build_floor, load, step_inputs

ROOT = Path(__file__).resolve().parents[2]
SCENARIOS = sorted((ROOT / "tests" / "scenarios").glob("*.toml"))


def _check_hand(hand: Hand, total: int) -> None:
    assert Hand.replay(hand.events) == hand
    wire = [e.to_json() for e in hand.events]
    assert Hand.replay([event_from_json(d) for d in wire]) == hand
    if not hand.voided:
        assert sum(s.stack + s.reserved for s in hand.seats) + hand.pot_total == total


@pytest.mark.parametrize("path", SCENARIOS, ids=lambda p: p.stem)
def test_rulings_replay_exactly_and_conserve_chips(path: Path) -> None:
    data = load(path)
    floor, _ = build_floor(data["table"])
    for step in data["steps"]:
        try:
            inputs = step_inputs(step, floor)
        except ScenarioError:
            continue
        for inp in inputs:
            hand = floor.table.hand
            before = hand.snapshot() if hand is not None else None
            prompts = copy.deepcopy({k: p.data for k, p in floor.prompts.items()})
            try:
                floor.handle(inp)
            except FloorError:
                # Refused: nothing changed.
                if hand is not None:
                    assert hand.snapshot() == before
                assert {k: p.data for k, p in floor.prompts.items()} == prompts
                break
            hand = floor.table.hand
            if hand is not None:
                _check_hand(hand, sum(s.starting_stack for s in hand.seats))


def test_new_ruling_events_are_refused_where_they_do_not_apply() -> None:
    floor, _ = build_floor(
        {
            "variant": "F7S", "ante": 1, "bring_in": 2, "small_bet": 5, "big_bet": 10,
            "seats": [{"seat": 1, "stack": 100}, {"seat": 2, "stack": 100}],
        }
    )
    for code in ["As", "Ks", "Ah", "Kh", "2c", "9d"]:
        floor.handle({"kind": "shoe_card", "card": code})
    hand = floor.table.hand
    assert hand is not None
    for event, why in (
        (FinalCardKept(1, Card.parse("Qd")), "sixth-street"),
        (DealCorrected(0), "fourth to seventh"),
        (BringInWithdrawn(1), "only action"),
        (UpCardCorrected(1, Card.parse("As")), "already elsewhere"),
    ):
        before = hand.snapshot()
        with pytest.raises(IllegalAction, match=why):
            hand.apply(event)
        assert hand.snapshot() == before
    hand.apply(PlayerAction(1, "bring_in", 2))
    before = hand.snapshot()
    with pytest.raises(IllegalAction, match="before the first betting round"):
        hand.apply(ExtraCardReturned(Card.parse("Qd")))
    assert hand.snapshot() == before



def _two_seat_floor(shoe: bool = True):  # type: ignore[no-untyped-def]
    floor, _ = build_floor(
        {
            "variant": "F7S", "ante": 1, "bring_in": 2, "small_bet": 5, "big_bet": 10, "shoe": shoe,
            "seats": [{"seat": 1, "stack": 100}, {"seat": 2, "stack": 100}],
        }
    )
    return floor


def _play_short_hand(floor) -> None:  # type: ignore[no-untyped-def]
    """Hand 1: seat 1 shows the 7h up, seat 2 the 9d; seat 1 brings it in, seat 2 folds."""
    for code in ["As", "Ks", "Ah", "Kh", "7h", "9d"]:
        floor.handle({"kind": "shoe_card", "card": code})
    floor.handle({"kind": "action", "seat": 1, "action": "bring_in", "amount": 2})
    floor.handle({"kind": "action", "seat": 2, "action": "fold"})
    assert floor.table.hand.is_over
    floor.handle({"kind": "table", "op": "start_hand"})


OLD_PICTURE = {"kind": "camera", "seats": {"1": {"up": ["7h"], "down": 2}, "2": {"up": ["9d"], "down": 2}},
               "irregular": [{"kind": "off_felt", "seat": 2, "card": "Ah"}]}


def test_the_last_hands_picture_is_not_taken_for_this_hands_cards() -> None:
    floor = _two_seat_floor()
    _play_short_hand(floor)
    for code in ["7h", "Ks", "9d"]:  # hand 2: the same cards, reshuffled, dealt down
        floor.handle({"kind": "shoe_card", "card": code})
    # The camera re-sends its picture of hand 1 (the dealer has not pushed the cards in yet): the
    # 7h and 9d it shows face up are hand 1's, not exposed hole cards, and the Ah on the rail is not
    # a new card off the table.
    out = floor.handle(OLD_PICTURE)
    assert out.opened == [] and floor.prompts == {}
    # Hand 2's 7h really is turned up at seat 1: that is an exposed hole card.
    out = floor.handle({"kind": "camera", "seats": {"1": {"up": ["7h"], "down": 1}}, "irregular": []})
    assert [p.rule.id for p in out.opened] == ["stud.exposed-holecard"]


def test_on_a_camera_only_table_the_old_picture_is_not_dealt_again() -> None:
    floor = _two_seat_floor()
    _play_short_hand(floor)
    floor.handle({"kind": "source", "device": "shoe-1", "status": "offline"})
    floor.handle({"kind": "ruling", "prompt": next(iter(floor.prompts)), "option": "confirm"})
    hand = floor.table.hand
    assert hand is not None and hand.hand_id == 2 and not floor.shoe_active
    floor.handle(OLD_PICTURE)
    assert [len(s.cards) for s in hand.seats] == [0, 0]
    # Seat 1's cards are pushed in and its first new hole card arrives; seat 2 still shows hand 1.
    floor.handle({"kind": "camera", "seats": {"1": {"up": [], "down": 1}, "2": {"up": ["9d"], "down": 2}}})
    assert [len(s.cards) for s in hand.seats] == [1, 0]


def test_a_malformed_camera_view_is_refused_and_changes_nothing() -> None:
    floor = _two_seat_floor()
    floor.handle({"kind": "shoe_card", "card": "As"})
    before = floor.table.hand.snapshot()  # type: ignore[union-attr]
    for bad, why in (({"1": {"up": ["Zz"], "down": 0}}, "camera seat '1'"),
                     ({"x": {"up": [], "down": 0}}, "not a number"),
                     ({"1": ["Ah"]}, "must be an object")):
        with pytest.raises(FloorError, match=why):
            floor.handle({"kind": "camera", "seats": bad})
        assert floor.table.hand.snapshot() == before  # type: ignore[union-attr]
