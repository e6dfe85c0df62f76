"""Pots and how they are split (RRoP 3.6, 3.7; stud high-low rules 2, 8-10).

Pots are built from what each seat put in during the hand.  Under Robert's
Rules every chip, antes included, belongs to the level it was put in at, so a
player all in for part of an ante can win only that much from each opponent.
The ``wsop2023`` profile follows PokerKit 0.7.7 instead: antes are dead money
added to the lowest pot, and pots with the same contenders are merged.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Protocol, TypeVar

from engine.cards import Card
from engine.ranking import high_value, low8_value, low_value
from engine.rules import HouseRules, Variant


class Contender(Protocol):
    """What the pots need to know of a seat (``engine.hand.SeatState`` is one)."""

    @property
    def seat(self) -> int: ...
    @property
    def folded(self) -> bool: ...
    @property
    def mucked(self) -> bool: ...
    @property
    def committed(self) -> int: ...
    @property
    def ante(self) -> int: ...
    @property
    def all_cards(self) -> list[Card]: ...


S = TypeVar("S", bound=Contender)


@dataclass(frozen=True)
class Pot:
    amount: int
    eligible: tuple[int, ...]  # seat numbers of the live hands that can win it


_new = object.__new__  # see engine/hand/state.py for what it pays


def _pot(amount: int, eligible: tuple[int, ...]) -> Pot:
    """``Pot(amount, eligible)`` without the frozen dataclass's ``__init__``."""
    pot = _new(Pot)
    fields_ = pot.__dict__
    fields_["amount"] = amount
    fields_["eligible"] = eligible
    return pot


def build_pots(seats: Sequence[S], rules: HouseRules) -> list[Pot]:
    """Main pot first, then side pots, from every seat's contribution."""
    if rules.antes_in_side_pots:
        return _pots_by_contribution(seats, rules)
    return _pots_antes_dead(seats)


def _pots_by_contribution(seats: Sequence[S], rules: HouseRules) -> list[Pot]:
    live = [s for s in seats if not s.folded and not s.mucked]
    levels = sorted({s.committed for s in live})
    pots: list[Pot] = []
    previous = 0
    for level in levels:
        amount = sum(min(s.committed, level) - min(s.committed, previous) for s in seats)
        eligible = tuple(s.seat for s in live if s.committed >= level)
        if amount:
            if not rules.separate_pots and pots and pots[-1].eligible == eligible:
                amount += pots.pop().amount
            pots.append(Pot(amount, eligible))
        previous = level
    # Chips above the highest live level (none in a well-run hand) stay with the last pot.
    leftover = sum(max(0, s.committed - previous) for s in seats)
    if leftover and pots:
        last = pots.pop()
        pots.append(Pot(last.amount + leftover, last.eligible))
    return pots


def _pots_antes_dead(seats: Sequence[S]) -> list[Pot]:
    """PokerKit 0.7.7's pots with no ante trimming: antes seed the lowest pot."""
    amount = 0
    levels = set()
    rows = []  # (chips in beyond the ante, live, seat number)
    for s in seats:
        amount += s.ante
        level = s.committed - s.ante
        levels.add(level)
        rows.append((level, not s.folded and not s.mucked, s.seat))
    previous = 0
    pots: list[Pot] = []
    for level in sorted(levels):
        reaching = 0
        live: list[int] = []
        for put, is_live, seat in rows:
            if put >= level:
                reaching += 1
                if is_live:
                    live.append(seat)
        amount += (level - previous) * reaching
        eligible = tuple(live)
        while pots and pots[-1].eligible == eligible:
            amount += pots.pop().amount
        if amount:
            pots.append(_pot(amount, eligible))
        amount = 0
        previous = level
    return pots


def pots_without(pots: Sequence[Pot], gone: set[int], rules: HouseRules) -> list[Pot] | None:
    """The pots once the hands of the seats ``gone`` are out, or None when only
    ``build_pots`` can tell (Robert's Rules: a hand out changes the levels).

    With antes dead and pots of the same contenders merged (PokerKit, ``wsop2023``), the
    levels stay: each pot loses those contenders and neighbours left with the same ones
    merge, which is what ``build_pots`` would build again."""
    if rules.antes_in_side_pots:
        return None
    merged: list[Pot] = []
    for pot in pots:
        eligible = tuple(n for n in pot.eligible if n not in gone)
        amount = pot.amount
        while merged and merged[-1].eligible == eligible:
            amount += merged.pop().amount
        merged.append(_pot(amount, eligible))
    return merged


class Scores:
    """Every live hand's cards (common card included) and values at one showdown.

    Each value is computed the first time it is asked for and then remembered:
    killing the losing hands, splitting each pot and naming the winners all ask
    for the same few.  Larger is better (engine.ranking); ``low8`` is None for
    a hand with no 8-or-better low.
    """

    __slots__ = ("_high", "_low", "_low8", "cards")

    def __init__(self, seats: Sequence[S], common: Sequence[Card]) -> None:
        self.cards: dict[int, list[Card]] = {s.seat: [*s.all_cards, *common] for s in seats if not s.folded and not s.mucked}
        self._high: dict[int, int] = {}
        self._low: dict[int, int] = {}
        self._low8: dict[int, int | None] = {}

    def high(self, seat: int) -> int:
        value = self._high.get(seat)
        if value is None:
            value = self._high[seat] = high_value(self.cards[seat])
        return value

    def low(self, seat: int) -> int:
        value = self._low.get(seat)
        if value is None:
            value = self._low[seat] = low_value(self.cards[seat])
        return value

    def low8(self, seat: int) -> int | None:
        if seat not in self._low8:
            self._low8[seat] = low8_value(self.cards[seat])
        return self._low8[seat]


def _odd_chip_key_high(cards: Sequence[Card]) -> tuple[int, int]:
    # RRoP 3.7(b): the highest card by suit, using all the player's cards.
    return max((c.rank_value, c.suit_value) for c in cards)


def _odd_chip_key_low(cards: Sequence[Card]) -> tuple[int, int]:
    # RRoP 3.7(b): the lowest card by suit in low games (ace low).
    best = min((c.low_rank_value, c.suit_value) for c in cards)
    return (-best[0], -best[1])


def _divide(
    amount: int,
    winners: list[int],
    cards_of: dict[int, list[Card]],
    low: bool,
    rules: HouseRules,
) -> list[tuple[int, int]]:
    share, odd = divmod(amount, len(winners))
    paid = {w: share for w in winners}
    if odd:
        if rules.odd_chip_by_suit:
            # RRoP 3.7: no player receives more than one odd chip.
            key = _odd_chip_key_low if low else _odd_chip_key_high
            order = sorted(winners, key=lambda w: key(cards_of[w]), reverse=True)
            for w in order[:odd]:
                paid[w] += 1
        else:
            paid[winners[0]] += odd  # PokerKit: to the first winner by position
    return [(w, paid[w]) for w in winners]


def split_pot(
    pot: Pot,
    seats: Sequence[S],
    common: Sequence[Card],
    variant: Variant,
    rules: HouseRules,
    anyone_low: bool,
    scores: Scores | None = None,
) -> list[tuple[int, int, str]]:
    """(seat, amount, share) for one pot; share is high, low or uncontested."""
    if len(pot.eligible) == 1:
        return [(pot.eligible[0], pot.amount, "uncontested")]
    if scores is None:
        scores = Scores(seats, common)
    cards_of = scores.cards
    if variant is Variant.RAZZ:
        values = {n: scores.low(n) for n in pot.eligible}
        best = max(values.values())
        winners = [n for n in pot.eligible if values[n] == best]
        return [(w, a, "low") for w, a in _divide(pot.amount, winners, cards_of, True, rules)]
    highs = {n: scores.high(n) for n in pot.eligible}
    top = max(highs.values())
    high_winners = [n for n in pot.eligible if highs[n] == top]
    if variant is Variant.STUD:
        return [(w, a, "high") for w, a in _divide(pot.amount, high_winners, cards_of, False, rules)]
    lows = {n: scores.low8(n) for n in pot.eligible}
    qualified = {n: v for n, v in lows.items() if v is not None}
    # Stud high-low 2: no qualifying low, the high hand takes the whole pot.
    low_exists = bool(qualified) if rules.low_half_needs_contender else anyone_low
    if not low_exists:
        return [(w, a, "high") for w, a in _divide(pot.amount, high_winners, cards_of, False, rules)]
    # RRoP 3.7(c), stud high-low 9: the odd chip of the split goes to the high half.
    low_amount = pot.amount // 2
    high_amount = pot.amount - low_amount
    if qualified:
        best_low = max(qualified.values())
        low_winners = [n for n in pot.eligible if lows[n] == best_low]
    else:
        low_winners = list(pot.eligible)  # PokerKit 0.7.7: nobody here qualifies, all eligible share it
    result = [(w, a, "high") for w, a in _divide(high_amount, high_winners, cards_of, False, rules)]
    result += [(w, a, "low") for w, a in _divide(low_amount, low_winners, cards_of, True, rules)]
    return [r for r in result if r[1] > 0]


def kill_losing_hands(
    pots: Sequence[Pot],
    seats: Sequence[S],
    common: Sequence[Card],
    variant: Variant,
    scores: Scores | None = None,
) -> list[S]:
    """The live hands that cannot win any part of any pot they are in."""
    by_seat = {s.seat: s for s in seats}
    if scores is None:
        scores = Scores(seats, common)
    cards_of = scores.cards
    scorers: list[Callable[[int], int | None]] = [scores.low] if variant is Variant.RAZZ else [scores.high]
    if variant is Variant.STUD8:
        scorers.append(scores.low8)
    # A hand wins something if it has the best value (high, or qualifying low) in some pot it is in.
    winners: set[int] = set()
    for f in scorers:
        table = {n: f(n) for n in cards_of}
        for pot in pots:
            values = [v for m in pot.eligible if (v := table[m]) is not None]
            if values:
                best = max(values)
                winners.update(m for m in pot.eligible if table[m] == best)
    return [by_seat[n] for n in cards_of if n not in winners]
