"""The hand's derived counters stay equal to what they summarise, after every input.

For speed the hand keeps, beside each seat's cards, the number of up and down
cards and the product of the up cards' rank primes (the board memo's key), and
while dealing the number of cards still owed on the street.  Every ruling that
changes who holds what must keep them right; these tests recount them from the
cards after every input of every scenario and of random hands under both rule
profiles.
"""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from engine.floor import FloorError
from engine.hand import Hand, Phase, SeatState
from engine.rules import RROP, WSOP2023, Variant
from engine.scenario import ScenarioError, build_floor, load, step_inputs
from engine.showdown import build_pots, pots_without
from engine.simulate import SimulatedDealer, new_hand

ROOT = Path(__file__).resolve().parents[2]
SCENARIOS = sorted((ROOT / "tests" / "scenarios").glob("*.toml"))


def check_derived(hand: Hand) -> None:
    for s in hand.seats:
        ups = [c for c, up in s.cards if up]
        assert s.n_up == len(ups), s
        assert s.n_down == len(s.cards) - len(ups), s
        key = 1
        for c in ups:
            key *= c.prime
        assert s.up_key == key, s
    if hand.phase is Phase.DEALING and not hand.common_card_street():
        owed = sum(sum(hand.needs(s)) for s in hand.seats)
        assert hand._owed == owed


def replay_checked(hand: Hand) -> None:
    """Rebuild ``hand`` input by input, checking the counters after each."""
    rebuilt = Hand(hand.start)
    check_derived(rebuilt)
    for event in hand.events[1:]:
        rebuilt.apply(event)
        check_derived(rebuilt)
    assert rebuilt == hand


@pytest.mark.parametrize("path", SCENARIOS, ids=lambda p: p.stem)
def test_counters_follow_every_ruling(path: Path) -> None:
    data = load(path)
    floor, _ = build_floor(data["table"])
    for step in data["steps"]:
        try:
            inputs = step_inputs(step, floor)
        except ScenarioError:
            continue
        for inp in inputs:
            try:
                floor.handle(inp)
            except FloorError:
                break
            hand = floor.table.hand
            if hand is not None:
                check_derived(hand)
    if floor.table.hand is not None:
        replay_checked(floor.table.hand)


@pytest.mark.parametrize("rules", ["rrop", "wsop2023"])
@pytest.mark.parametrize("variant", list(Variant))
def test_counters_in_random_hands(variant: Variant, rules: str) -> None:
    for seed in range(60):
        rng = random.Random(f"derived-{variant.value}-{rules}-{seed}")
        players = rng.randint(2, 8)
        hand = new_hand(variant.value, players, rng, rules)
        dealer = SimulatedDealer(hand, rng, burns=rng.random() < 0.8)
        while (event := dealer.next_event()) is not None:
            dealer.apply(event)
            check_derived(hand)
        assert hand.is_over


@pytest.mark.parametrize("seed", range(200))
def test_pots_after_a_kill_are_the_pots_built_again(seed: int) -> None:
    """wsop2023 (antes dead, pots of the same contenders merged): ``pots_without`` gives what
    ``build_pots`` builds again once the killed hands are out."""
    rng = random.Random(f"pots-{seed}")
    seats = []
    for n in range(1, rng.randint(2, 8) + 1):
        ante = rng.choice([0, 1, 1, 1])
        s = SeatState(n, "", 0, 0, ante=ante, committed=ante + rng.choice([0, 0, 5, 10, 15, 30, 30, 60, rng.randint(1, 90)]))
        s.folded = rng.random() < 0.3
        seats.append(s)
    pots = build_pots(seats, WSOP2023)
    live = [s for s in seats if s.live]
    gone = {s.seat for s in live if rng.random() < 0.5}
    for s in live:
        if s.seat in gone:
            s.mucked = True
    assert pots_without(pots, gone, WSOP2023) == build_pots(seats, WSOP2023)
    assert pots_without(pots, gone, RROP) is None  # Robert's Rules: built again
