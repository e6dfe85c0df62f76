"""Properties of every hand (hypothesis): chips are conserved, nobody puts in more than
their stack, a refused input changes nothing, every phase change is in the transition
table, and the log rebuilds the live hand."""

from __future__ import annotations

import contextlib
import random

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engine.cards import DECK
from engine.events import CardDealt, PlayerAction
from engine.hand import TRANSITIONS, Hand, IllegalAction, Phase
from engine.rules import GameConfig, Variant
from engine.simulate import SimulatedDealer, new_hand

ACTIONS = ("fold", "check", "call", "bring_in", "complete", "bet", "raise")


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    seed=st.integers(0, 2**32),
    variant=st.sampled_from(list(Variant)),
    rules=st.sampled_from(["rrop", "wsop2023"]),
    players=st.integers(2, 8),
    stacks=st.lists(st.integers(1, 400), min_size=8, max_size=8),
    junk=st.lists(
        st.tuples(st.integers(1, 9), st.sampled_from(ACTIONS), st.one_of(st.none(), st.integers(0, 500))),
        min_size=1,
        max_size=5,
    ),
)
def test_hand_invariants(
    seed: int,
    variant: Variant,
    rules: str,
    players: int,
    stacks: list[int],
    junk: list[tuple[int, str, int | None]],
) -> None:
    rng = random.Random(seed)
    config = GameConfig(variant, rng.choice([0, 1, 3]), 2, 5, 10, rules=rules)
    hand = new_hand(variant.value, players, rng, rules, config=config, stacks=stacks[:players])
    total = sum(stacks[:players])
    dealer = SimulatedDealer(hand, rng)
    steps = 0
    while (event := dealer.next_event()) is not None:
        # Throw some nonsense at it first: whatever is refused must change nothing.
        for seat, action, amount in junk:
            before = hand.secret_state()
            bogus = PlayerAction(seat, action, amount)
            try:
                probe = Hand.replay(hand.events)
                probe.apply(bogus)
            except (IllegalAction, KeyError):
                with contextlib.suppress(IllegalAction):
                    hand.apply(bogus)
                assert hand.secret_state() == before
        if hand.phase is not Phase.DEALING:
            before = hand.secret_state()
            try:
                hand.apply(CardDealt(1, DECK[0], False))
            except IllegalAction:
                pass
            else:
                raise AssertionError("a card was accepted outside the deal")
            assert hand.secret_state() == before
        phase = hand.phase
        dealer.apply(event)
        steps += 1
        # Every phase change is one of the hand's transitions (engine.hand.core.TRANSITIONS).
        assert hand.phase is phase or (phase, hand.phase) in TRANSITIONS, (phase, hand.phase)
        for s in hand.seats:
            assert s.stack >= 0
            assert s.committed <= s.starting_stack
        assert sum(s.stack + s.reserved for s in hand.seats) + hand.pot_total == total
        assert steps < 500
    assert hand.is_over
    assert sum(hand.finishing_stacks()) == total
    assert Hand.replay(hand.events) == hand
