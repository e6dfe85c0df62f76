"""Drive the engine and PokerKit 0.7.7 side by side on the same cards and actions.

PokerKit is the reference implementation of the 2023 WSOP rules, so under
the ``wsop2023`` profile the two must agree on every legal option and on the
finishing stacks.  Used by the differential tests and by bench/bench_engine.py.
"""

from __future__ import annotations

import random
import warnings
from collections import deque
from dataclasses import dataclass, field
from typing import Any

import pokerkit as pk

from engine.cards import DECK, Card
from engine.events import (
    CardBurned,
    CardDealt,
    CardsShown,
    CommonCardDealt,
    DeckReshuffled,
    HandStarted,
    PlayerAction,
    SeatEntry,
)
from engine.hand import Hand, Phase
from engine.rules import GameConfig, Variant

PK_GAMES = {
    Variant.STUD: pk.FixedLimitSevenCardStud,
    Variant.STUD8: pk.FixedLimitSevenCardStudHighLowSplitEightOrBetter,
    Variant.RAZZ: pk.FixedLimitRazz,
}
AUTOMATIONS = (
    pk.Automation.ANTE_POSTING,
    pk.Automation.BET_COLLECTION,
    pk.Automation.HOLE_CARDS_SHOWING_OR_MUCKING,
    pk.Automation.HAND_KILLING,
    pk.Automation.CHIPS_PUSHING,
    pk.Automation.CHIPS_PULLING,
)


def pokerkit_state(config: GameConfig, stacks: list[int]) -> Any:
    game = PK_GAMES[config.variant]
    return game.create_state(
        AUTOMATIONS,
        False,
        config.ante,
        config.bring_in,
        config.small_bet,
        config.big_bet,
        stacks,
        len(stacks),
    )


def pokerkit_options(state: Any) -> set[tuple[str, int]]:
    """PokerKit's legal options, in the engine's vocabulary (complete/bet/raise -> cbr)."""
    out: set[tuple[str, int]] = set()
    if state.can_fold():
        out.add(("fold", 0))
    if state.can_check_or_call():
        amount = state.checking_or_calling_amount
        out.add(("check", 0) if amount == 0 else ("call", amount))
    if state.can_post_bring_in():
        out.add(("bring_in", state.effective_bring_in_amount))
    if state.can_complete_bet_or_raise_to():
        lo = state.min_completion_betting_or_raising_to_amount
        hi = state.max_completion_betting_or_raising_to_amount
        for amount in {lo, hi}:
            out.add(("cbr", amount))
    return out


def engine_options(hand: Hand) -> set[tuple[str, int]]:
    opts = hand.options()
    assert opts is not None
    out: set[tuple[str, int]] = set()
    for o in opts.options:
        kind = "cbr" if o.action in ("complete", "bet", "raise") else o.action
        out.add((kind, 0 if o.action in ("fold", "check") else o.amount))
    return out


@dataclass
class DiffResult:
    variant: Variant
    stacks: list[int]
    engine_stacks: list[int] = field(default_factory=list)
    pokerkit_stacks: list[int] = field(default_factory=list)
    mismatches: list[str] = field(default_factory=list)
    decisions: int = 0
    events: list[Any] = field(default_factory=list)
    hand: Hand | None = None

    @property
    def out_of_cards(self) -> bool:
        """The deck ran out on seventh street: a reshuffle or a common card (RRoP stud 15)."""
        return any(isinstance(e, DeckReshuffled | CommonCardDealt) for e in self.events)


def random_config(rng: random.Random, variant: Variant, rules: str = "wsop2023") -> GameConfig:
    ante = rng.choice([0, 1, 2, 5])
    bring_in = rng.choice([1, 2, 3, 5])
    small = bring_in * rng.choice([2, 3, 5])
    big = small * 2
    return GameConfig(variant, ante, bring_in, small, big, rules=rules)


def random_stacks(rng: random.Random, n: int, config: GameConfig) -> list[int]:
    stacks = []
    for _ in range(n):
        r = rng.random()
        if r < 0.15:
            stacks.append(rng.randint(1, max(1, config.ante + config.bring_in + 1)))  # short all-ins
        elif r < 0.4:
            stacks.append(rng.randint(1, config.big_bet * 3))
        else:
            stacks.append(rng.randint(config.big_bet * 3, config.big_bet * 40))
    return stacks


def run_differential(
    rng: random.Random,
    variant: Variant,
    players: int | None = None,
    check_options: bool = True,
    fold_rarely: bool = False,
) -> DiffResult:
    """Play one random hand in both implementations; record every disagreement.

    With ``fold_rarely`` the players fold only one time in twenty where they may fold (and the
    stacks are deep), so that six to eight of them often reach seventh street and the deck runs
    out (RRoP stud 15): a reshuffle or a common card (``DiffResult.out_of_cards``).
    """
    n = players or (rng.randint(6, 8) if fold_rarely else rng.randint(2, 8))
    config = random_config(rng, variant)
    stacks = random_stacks(rng, n, config)
    if fold_rarely:
        stacks = [config.big_bet * rng.randint(20, 60) for _ in range(n)]
    result = DiffResult(variant, stacks)
    deck = list(DECK)
    rng.shuffle(deck)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        state = pokerkit_state(config, stacks)
        start = HandStarted(1, config, tuple(SeatEntry(i + 1, f"P{i + 1}", s) for i, s in enumerate(stacks)))
        hand = Hand(start)
        result.events.append(start)
        result.hand = hand

        reshuffled = False

        def feed(event: Any) -> None:
            result.events.append(event)
            hand.apply(event)

        while state.status:
            if state.can_burn_card():
                live_needing = sum(1 for i in state.player_indices if state.statuses[i])
                if len(deck) >= live_needing + 1:
                    c = deck.pop()
                    state.burn_card(str(c))
                    feed(CardBurned(c))
                else:
                    state.burn_card("??")  # RRoP stud 15: no burn when cards are short
            elif state.can_deal_hole():
                if not deck and not reshuffled:
                    # RRoP stud 15 / PokerKit: burns (and, for PokerKit, folded hands) go back in.
                    reshuffled = True
                    feed(DeckReshuffled())
                    back = [c for c in state.burn_cards if repr(c) != "??"]
                    back += [c for c in state.mucked_cards]
                    deck = [Card.parse(repr(c)) for c in back]
                    rng.shuffle(deck)
                if not deck:
                    result.mismatches.append(
                        f"deck exhausted on street {state.street_index}: {sum(state.statuses)} live, "
                        f"burns {[str(c) for c in state.burn_cards]}, holes {[len(h) for h in state.hole_cards]}"
                    )
                    return result
                i = state.hole_dealee_index
                face_up = state.hole_dealing_statuses[i][0]
                c = deck.pop()
                state.deal_hole(str(c))
                feed(CardDealt(i + 1, c, bool(face_up)))
            elif state.can_deal_board():
                c = deck.pop()
                state.deal_board(str(c))
                feed(CommonCardDealt(c))
            elif state.actor_index is not None:
                result.decisions += 1
                if hand.phase is not Phase.BETTING or hand.to_act != state.actor_index + 1:
                    result.mismatches.append(
                        f"actor: pokerkit p{state.actor_index + 1}, engine {hand.phase.value} seat {hand.to_act}"
                    )
                    return result
                mine = engine_options(hand)
                theirs = pokerkit_options(state)
                if check_options and mine != theirs:
                    result.mismatches.append(
                        f"options seat {hand.to_act}: engine {sorted(mine)} pokerkit {sorted(theirs)}"
                    )
                    return result
                choices = sorted(theirs)
                if fold_rarely and len(choices) > 1 and rng.random() >= 0.05:
                    choices = [c for c in choices if c[0] != "fold"]
                kind, amount = rng.choice(choices)
                seat = state.actor_index + 1
                if kind == "fold":
                    state.fold()
                    feed(PlayerAction(seat, "fold"))
                elif kind in ("check", "call"):
                    state.check_or_call()
                    feed(PlayerAction(seat, kind, amount if kind == "call" else None))
                elif kind == "bring_in":
                    state.post_bring_in()
                    feed(PlayerAction(seat, "bring_in", amount))
                else:
                    opts = hand.options()
                    assert opts is not None
                    mine_cbr = [
                        o
                        for o in opts.options
                        if o.action in ("complete", "bet", "raise") and o.amount == amount
                    ]
                    state.complete_bet_or_raise_to(amount)
                    feed(PlayerAction(seat, mine_cbr[0].action if mine_cbr else "raise", amount))
            else:
                break
        # Showdown: show every contender's cards in the engine (PokerKit shows automatically).
        while hand.phase is Phase.SHOWDOWN:
            seat = hand.to_act
            assert seat is not None
            s = hand.seat(seat)
            feed(CardsShown(seat, tuple(c for c in s.down)))
    result.pokerkit_stacks = list(state.stacks)
    result.engine_stacks = hand.finishing_stacks()
    if result.engine_stacks != result.pokerkit_stacks:
        result.mismatches.append(f"stacks: engine {result.engine_stacks} pokerkit {result.pokerkit_stacks}")
    if not hand.is_over:
        result.mismatches.append(f"engine hand not over: {hand.phase.value}")
    return result


def cards_of(codes: str) -> tuple[Card, ...]:
    from engine.cards import parse_cards

    return parse_cards(codes)


# PokerKit deals these itself, from its own shuffled deck: when the deck runs out on seventh
# street it recycles the burns and the folded hands (``State.reserved_cards``), as the
# ``wsop2023`` profile does (RRoP stud 15 reshuffles only the burns and the cards set aside).
RANDOM_HAND_AUTOMATIONS = (
    *AUTOMATIONS,
    pk.Automation.CARD_BURNING,
    pk.Automation.HOLE_DEALING,
    pk.Automation.BOARD_DEALING,
)
# Random players who fold rarely (a sixth of the choices where folding is allowed), so that
# many hands reach seventh street with six to eight players and the deck runs out.
RANDOM_HAND_WEIGHTS = {"fold": 1, "check_or_call": 4, "bring_in": 3, "cbr": 1}


@dataclass
class PokerKitHand:
    variant: Variant
    text: str  # the PHH file PokerKit writes
    finishing_stacks: list[int]
    players: int
    reshuffled: bool  # PokerKit's deck ran out and it dealt recycled cards


def pokerkit_random_hand(rng: random.Random, variant: Variant, players: int | None = None) -> PokerKitHand:
    """A random hand played and dealt entirely by PokerKit, written by PokerKit as PHH."""
    n = players or rng.randint(2, 8)
    config = random_config(rng, variant)
    stacks = random_stacks(rng, n, config)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        game = PK_GAMES[variant](
            RANDOM_HAND_AUTOMATIONS, False, config.ante, config.bring_in, config.small_bet, config.big_bet
        )
        state = game(stacks, n)
        state.deck_cards = deque(rng.sample(list(state.deck_cards), len(state.deck_cards)))
        while state.status:
            choices = []
            if state.can_fold():
                choices.append("fold")
            if state.can_check_or_call():
                choices.append("check_or_call")
            if state.can_post_bring_in():
                choices.append("bring_in")
            if state.can_complete_bet_or_raise_to():
                choices.append("cbr")
            if not choices:
                raise AssertionError(f"PokerKit stopped with nothing to do: {state.status}")
            pick = rng.choices(choices, [RANDOM_HAND_WEIGHTS[c] for c in choices])[0]
            if pick == "fold":
                state.fold()
            elif pick == "check_or_call":
                state.check_or_call()
            elif pick == "bring_in":
                state.post_bring_in()
            else:
                state.complete_bet_or_raise_to()
        # More cards burned and dealt than a deck holds: some were recycled.
        drawn = sum(
            len(op.cards) if isinstance(op, pk.HoleDealing) else 1
            for op in state.operations
            if isinstance(op, pk.CardBurning | pk.HoleDealing)
        )
        reshuffled = drawn > len(DECK)
        text = pk.HandHistory.from_game_state(game, state).dumps()
    return PokerKitHand(variant, text, list(state.stacks), n, reshuffled)
