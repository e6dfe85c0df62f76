"""Random but legal hands: for the terminal demo, the benchmarks and tests.

A ``SimulatedDealer`` plays the dealer's part from a shuffled deck (burns,
up and down cards in dealing order, a reshuffle or common card when the deck
runs short) and chooses each player's action at random from the engine's own
legal options.  It is a driver of the pure engine, no I/O.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from typing import TextIO, TypeVar

from engine.cards import DECK, Card
from engine.events import (
    CardBurned,
    CardDealt,
    CardsShown,
    CommonCardDealt,
    DeckReshuffled,
    Event,
    HandStarted,
    Outputs,
    PlayerAction,
    SeatEntry,
)
from engine.hand import Hand, Option, Options, Phase
from engine.rules import GameConfig, house_rules

# How often a simulated player picks each kind of action, when it is legal.
ACTION_WEIGHTS = {"fold": 2, "check": 6, "call": 6, "bring_in": 6, "complete": 2, "bet": 3, "raise": 2}


T = TypeVar("T")


def pick_weighted(rng: random.Random, population: Sequence[T], weights: Sequence[int]) -> T:
    """``rng.choices(population, weights)[0]``, the same pick from the same random number,
    without building the cumulative weights list."""
    r = rng.random() * sum(weights)
    last = len(population) - 1
    running = 0
    for k in range(last):
        running += weights[k]
        if r < running:
            return population[k]
    return population[last]


def weighted_choice(rng: random.Random, options: tuple[Option, ...]) -> Option:
    weight = ACTION_WEIGHTS.get
    return pick_weighted(rng, options, [weight(o.action, 1) for o in options])


# Compared at every event: in Python 3.11 every ``Phase.X`` is a metaclass attribute lookup.
_DEALING, _BETTING, _SHOWDOWN = Phase.DEALING, Phase.BETTING, Phase.SHOWDOWN
_WEIGHT = ACTION_WEIGHTS.get

# Events are immutable values, and the same few recur hand after hand (a seat, a card, up or
# down; a seat, an action, an amount): built once, reused.
_MEMO_SIZE = 20_000
_actions: dict[tuple[int, str, int | None], PlayerAction] = {}
_dealt_rows: dict[tuple[int, bool], list[CardDealt | None]] = {}
_burned: dict[Card, CardBurned] = {}


def _player_action(seat: int, action: str, amount: int | None) -> PlayerAction:
    key = (seat, action, amount)
    event = _actions.get(key)
    if event is None:
        if len(_actions) >= _MEMO_SIZE:
            _actions.clear()
        event = _actions[key] = PlayerAction(seat, action, amount)
    return event


# The engine hands out the same ``Options`` values again and again (engine.hand memoises
# them): for each, the running totals of its weights (all but the last), their sum and the
# event each option makes.  Keyed by ``id``, and the entry holds the options themselves, so
# the id cannot be another object's while the entry lives.
_choices: dict[int, tuple[Options, tuple[int, ...], int, tuple[PlayerAction, ...]]] = {}


def _choice_entry(opts: Options) -> tuple[Options, tuple[int, ...], int, tuple[PlayerAction, ...]]:
    if len(_choices) >= _MEMO_SIZE:
        _choices.clear()
    running: list[int] = []
    total = 0
    for o in opts.options:
        total += _WEIGHT(o.action, 1)
        running.append(total)
    events = tuple(
        _player_action(opts.seat, o.action, None if o.action == "fold" or o.action == "check" else o.amount)
        for o in opts.options
    )
    entry = _choices[id(opts)] = (opts, tuple(running[:-1]), total, events)
    return entry


def _card_dealt(seat: int, card: Card, face_up: bool) -> CardDealt:
    # One row of 52 per seat and face, by card index (no hashing of the card).
    row = _dealt_rows.get((seat, face_up))
    if row is None:
        row = _dealt_rows[(seat, face_up)] = [None] * 52
    index = card.index_or_none
    if index is None:
        return CardDealt(seat, card, face_up)
    event = row[index]
    if event is None or event.card is not card:
        event = row[index] = CardDealt(seat, card, face_up)
    return event


def _card_burned(card: Card) -> CardBurned:
    event = _burned.get(card)
    if event is None:
        event = _burned[card] = CardBurned(card)
    return event


class SimulatedDealer:
    """Deals a hand from a shuffled deck and asks a chooser for every decision."""

    def __init__(self, hand: Hand, rng: random.Random, burns: bool = True) -> None:
        self.hand = hand
        self.rng = rng
        self.deck: list[Card] = list(DECK)
        rng.shuffle(self.deck)
        self.burns = burns

    def next_event(self, choose: Callable[[Hand], Event] | None = None) -> Event | None:
        """The next thing that happens at the table, or None when the hand is over."""
        hand = self.hand
        phase = hand.phase
        if phase is _BETTING:
            if choose is not None:
                return choose(hand)
            opts = hand.options()
            assert opts is not None
            # ``weighted_choice``, inline: the same pick from the same random number, with the
            # running weights and the events for these options worked out once (``_choices``).
            entry = _choices.get(id(opts))
            if entry is None or entry[0] is not opts:
                entry = _choice_entry(opts)
            _, running, total, events = entry
            r = self.rng.random() * total
            for k, bound in enumerate(running):
                if r < bound:
                    return events[k]
            return events[-1]
        if phase is _DEALING:
            slot = hand.next_deal()
            assert slot is not None
            kind, seat, face_up = slot
            waiting = 0
            if hand.street == 4:
                live = hand.live_seats
                # Only when the stub may be short (or to decide on a burn) are the waiting players counted.
                if kind == "burn" or hand.stub_size() < len(live):
                    waiting = sum(1 for s in live if hand.needs(s) != (0, 0))
                    if hand.stub_size() < waiting:
                        if hand.reshuffle_pool() < waiting:
                            return CommonCardDealt(self.deck.pop())
                        if not self.deck:
                            return DeckReshuffled()
            if kind == "burn":
                # RRoP stud 15: no burn when there are not enough cards for everyone.
                if self.burns and len(self.deck) > waiting:
                    return _card_burned(self.deck.pop())
                kind, seat, face_up = hand.expected_deal()[1]
            assert seat is not None
            return _card_dealt(seat, self.deck.pop(), face_up)
        if phase is _SHOWDOWN:
            seat = hand.to_act
            assert seat is not None
            return CardsShown(seat, tuple(hand.seat(seat).down))
        return None

    def apply(self, event: Event) -> Outputs:
        if isinstance(event, DeckReshuffled):
            outputs = self.hand.apply(event)
            # Whatever the reshuffle put back in the stub (burns, removed cards, and under
            # wsop2023 the folded hands) plus what was left, in a fixed order, then shuffled.
            self.deck = sorted(set(self.deck) | self.hand.recycled, key=lambda c: c.index)
            self.rng.shuffle(self.deck)
            return outputs
        return self.hand.apply(event)


def new_hand(
    variant: str,
    players: int,
    rng: random.Random,
    rules: str = "rrop",
    config: GameConfig | None = None,
    stacks: list[int] | None = None,
    hand_id: int = 1,
) -> Hand:
    cfg = config or GameConfig.from_json(
        {"variant": variant, "ante": 1, "bring_in": 2, "small_bet": 5, "big_bet": 10, "rules": rules}
    )
    cfg = (
        GameConfig(
            cfg.variant,
            cfg.ante,
            cfg.bring_in,
            cfg.small_bet,
            cfg.big_bet,
            cfg.max_raises,
            house_rules(rules),
        )
        if config is None
        else cfg
    )
    stacks = stacks or [rng.randint(60, 300) for _ in range(players)]
    key = tuple(stacks)
    seats = _seat_entries.get(key)
    if seats is None:
        if len(_seat_entries) >= _MEMO_SIZE:
            _seat_entries.clear()
        seats = _seat_entries[key] = tuple(SeatEntry(i + 1, f"Player {i + 1}", s) for i, s in enumerate(stacks))
    return Hand(HandStarted(hand_id, cfg, seats))


_seat_entries: dict[tuple[int, ...], tuple[SeatEntry, ...]] = {}  # by stacks: immutable, reused


def play_random_hand(
    variant: str = "F7S",
    players: int = 6,
    seed: int | None = None,
    rules: str = "rrop",
    out: TextIO | None = None,
) -> Hand:
    """Deal and play one hand at random, printing it as a dealer would call it."""
    rng = random.Random(seed)
    hand = new_hand(variant, players, rng, rules)
    dealer = SimulatedDealer(hand, rng)
    if out:
        cfg = hand.config
        print(
            f"{cfg.variant.long_name}, {cfg.bring_in} bring-in, {cfg.small_bet}-{cfg.big_bet} "
            f"({cfg.rules.name} rules), {players} players",
            file=out,
        )
        for s in hand.seats:
            print(f"  seat {s.seat}: {s.name}, {s.starting_stack} chips", file=out)
    street = -1
    while (event := dealer.next_event()) is not None:
        outputs = dealer.apply(event)
        if out:
            if hand.street != street and hand.phase is Phase.BETTING:
                street = hand.street
                from engine.hand import STREET_NAMES

                print(f"-- {STREET_NAMES[street]} (pot {hand.pot_total})", file=out)
                for s in hand.live_seats:
                    print(f"   seat {s.seat}: {' '.join(hand.public_cards(s))}", file=out)
            if isinstance(event, PlayerAction):
                print(
                    f"   seat {event.seat} {event.action.replace('_', ' ')}"
                    + (f" {event.amount}" if event.amount else ""),
                    file=out,
                )
            if isinstance(event, CardsShown):
                print(
                    f"   seat {event.seat} shows {' '.join(str(c) for c, _ in hand.seat(event.seat).cards)}",
                    file=out,
                )
            for a in outputs.announcements:
                print(f"   dealer: {a.text}", file=out)
    if out:
        print("finishing stacks: " + ", ".join(f"seat {s.seat} {s.stack}" for s in hand.seats), file=out)
    return hand
