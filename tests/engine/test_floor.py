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

