"""The engine against PokerKit 0.7.7 under the wsop2023 profile.

Random hands in all three variants, 2 to 8 players, random stacks with short
all-ins, random legal actions, the same cards: at every decision the same set
of legal options, and the same finishing stacks.
"""

from __future__ import annotations

import random

import pytest

from engine.events import DeckReshuffled
from engine.rules import Variant
from tests.engine.pokerkit_oracle import run_differential

HANDS_PER_VARIANT = 300


@pytest.mark.parametrize("variant", list(Variant), ids=lambda v: v.value)
def test_engine_matches_pokerkit(variant: Variant) -> None:
    mismatches = []
    players_seen = set()
    all_ins = 0
    showdowns = 0
    decisions = 0
    for k in range(HANDS_PER_VARIANT):
        result = run_differential(random.Random(f"diff-{variant.value}-{k}"), variant)
        players_seen.add(len(result.stacks))
        decisions += result.decisions
        hand = result.hand
        assert hand is not None
        if any(s.stack == 0 for s in hand.seats):
            all_ins += 1
        if any(a.share in ("high", "low") for a in hand.awards):
            showdowns += 1
        if result.mismatches:
            mismatches.append((k, result.stacks, result.mismatches))
    assert mismatches == []
    # The sample really covers what it claims to.
    assert players_seen == set(range(2, 9))
    assert all_ins > HANDS_PER_VARIANT // 10
    assert showdowns > HANDS_PER_VARIANT // 10
    assert decisions > HANDS_PER_VARIANT * 5


@pytest.mark.parametrize("variant", list(Variant), ids=lambda v: v.value)
def test_engine_matches_pokerkit_when_the_deck_runs_out(variant: Variant) -> None:
    # Six to eight players who rarely fold: the deck often runs out on seventh street, and
    # PokerKit reshuffles the burns and the folded hands (wsop2023 reshuffle_includes_muck) or
    # deals a common card, which does not decide who opens (wsop2023 common_card_opens = False).
    mismatches = []
    out_of_cards = reshuffled = 0
    for k in range(120):
        result = run_differential(random.Random(f"out-{variant.value}-{k}"), variant, fold_rarely=True)
        if result.out_of_cards:
            out_of_cards += 1
            reshuffled += any(isinstance(e, DeckReshuffled) for e in result.events)
        if result.mismatches:
            mismatches.append((k, result.mismatches))
    assert mismatches == []
    assert out_of_cards > 20 and reshuffled > 5, (out_of_cards, reshuffled)
