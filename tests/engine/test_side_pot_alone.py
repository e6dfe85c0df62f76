"""An all-in short stack left alone at the showdown wins only the pots it is in (review F4).

Seat 1 is all in for 8 on third street; seats 2 and 3 bet on to 31 each, seat 3 folds on fifth
street.  At the showdown seat 2 (to show first) mucks, or its hand is killed: seat 1 wins the
24-chip main pot; the 46 chips above its level are not its own to win (RRoP 3.6: a hand contests
the pots it is in) and go back to seat 2, the one hand still in that side pot."""

from __future__ import annotations

from typing import Any

import pytest

from engine.cards import parse_cards
from engine.floor import Floor
from engine.scenario import build_floor


def _to_the_showdown() -> Floor:
    floor, _ = build_floor({"variant": "F7S", "ante": 1, "bring_in": 2, "small_bet": 5, "big_bet": 10,
                            "seats": [{"seat": 1, "name": "A", "stack": 8}, {"seat": 2, "name": "B", "stack": 200},
                                      {"seat": 3, "name": "C", "stack": 200}]})
    deck = iter(str(c) for c in parse_cards("As Ks Qs Ah Kh Qh 2c 9d 8d 3c 4c 5c 6c 7c 8c 9c Tc Jc 2d 3d 4d 5d 6d 7d 2h 3h 4h"))
    hand = floor.table.hand
    assert hand is not None
    for _ in range(200):
        if hand.phase.value == "showdown" or hand.is_over:
            break
        if hand.phase.value == "dealing":
            floor.handle({"kind": "shoe_card", "card": next(deck)})
            continue
        opts = hand.options()
        assert opts is not None
        if opts.seat == 1:
            o = opts.find("bring_in") or opts.find("call") or opts.find("check")
        elif opts.seat == 2:
            o = opts.find("bet") or opts.find("complete") or opts.find("raise") or opts.find("call") or opts.find("check")
        else:
            o = (opts.find("fold") if hand.street >= 4 else None) or opts.find("call") or opts.find("check")
        assert o is not None
        floor.handle({"kind": "action", "seat": opts.seat, "action": o.action, "amount": o.amount})
    assert hand.phase.value == "showdown"
    assert [(s.seat, s.committed) for s in hand.seats] == [(1, 8), (2, 31), (3, 31)]
    return floor


@pytest.mark.parametrize("how", ["muck", "kill"])
def test_the_short_stack_left_alone_wins_the_main_pot_only(how: str) -> None:
    floor = _to_the_showdown()
    hand = floor.table.hand
    assert hand is not None
    inp: dict[str, Any] = {"kind": "muck", "seat": 2} if how == "muck" else \
        {"kind": "report", "report": "showdown_kill", "seat": 2}
    floor.handle(inp)
    for pid in list(floor.prompts):
        floor.handle({"kind": "ruling", "prompt": pid, "option": "confirm"})
    assert hand.is_over
    won = {}
    for a in hand.awards:
        won[a.seat] = won.get(a.seat, 0) + a.amount
    assert won == {1: 24, 2: 46}, hand.awards
    assert [(s.seat, s.stack) for s in hand.seats] == [(1, 24), (2, 215), (3, 169)]
    assert sum(s.stack for s in hand.seats) == 408  # nothing made or lost
