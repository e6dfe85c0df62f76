"""The table across hands: buy-ins (RRoP 3.1), stacks carried over, hands numbered."""

from __future__ import annotations

import random

import pytest

from engine.events import ChipsAdded, SeatLeft, SeatTaken, SittingOut
from engine.rules import GameConfig, Variant
from engine.simulate import SimulatedDealer
from engine.table import Table, TableError


def table() -> Table:
    return Table(GameConfig(Variant.STUD, 1, 2, 5, 10))


def test_full_buy_in_is_ten_big_bets_and_one_short_buy_in_is_allowed() -> None:
    t = table()
    t.apply(SeatTaken(1, "Ann", 100))  # full: 10 x 10
    t.apply(SeatTaken(2, "Bob", 40))  # his one short buy-in
    t.apply(SeatLeft(2))
    with pytest.raises(TableError, match="one short buy-in"):
        t.apply(SeatTaken(2, "Bob", 50))
    t.apply(SeatTaken(2, "Bob", 100))
    with pytest.raises(TableError, match="taken by Ann"):
        t.apply(SeatTaken(1, "Cy", 100))
    with pytest.raises(TableError, match="does not exist"):
        t.apply(SeatTaken(9, "Cy", 100))


def test_configured_minimum_buy_in() -> None:
    t = Table(GameConfig(Variant.RAZZ, 1, 2, 5, 10, min_buy_in=300))
    t.apply(SeatTaken(1, "Ann", 200))
    assert t.seats[1].short_buy_ins == 1


def test_hands_carry_stacks_and_number_themselves() -> None:
    t = table()
    for seat, name in ((1, "Ann"), (3, "Bob"), (5, "Cy")):
        t.apply(SeatTaken(seat, name, 200))
    rng = random.Random(5)
    for number in (1, 2, 3):
        start = t.start_hand()
        assert start.hand_id == number
        t.apply(start)
        assert t.hand is not None
        dealer = SimulatedDealer(t.hand, rng)
        with pytest.raises(TableError, match="between hands"):
            t.apply(ChipsAdded(1, 50))
        while (event := dealer.next_event()) is not None:
            if event.type == "deck_reshuffled":
                dealer.apply(event)
                continue
            t.apply(event)
        assert sum(s.stack for s in t.seats.values()) == 600
        assert [t.seats[s.seat].stack for s in t.hand.seats] == t.hand.finishing_stacks()
    t.apply(ChipsAdded(1, 50))
    assert sum(s.stack for s in t.seats.values()) == 650


def test_sitting_out_and_busted_players_are_not_dealt_in() -> None:
    t = table()
    for seat, name in ((1, "Ann"), (2, "Bob"), (3, "Cy")):
        t.apply(SeatTaken(seat, name, 200))
    t.apply(SittingOut(2, True))
    assert [e.seat for e in t.start_hand().seats] == [1, 3]
    t.apply(SittingOut(3, True))
    with pytest.raises(TableError, match="two players"):
        t.start_hand()
