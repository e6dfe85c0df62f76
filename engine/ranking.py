"""Hand ranking for seven-card stud, razz and stud high-low 8-or-better.

Theory of operation
-------------------
Every evaluator answers with a plain ``int`` (boards: a ``tuple`` of ints)
where **larger is better** and equal means an exact tie, so the hand state
machine always picks winners with ``max`` and never needs to know which game
it is scoring.  Low hands are turned upside down to fit that rule.

A high value packs the hand's category and the five ranks that decide ties
into one int, most significant first::

    category << 20 | r1 << 16 | r2 << 12 | r3 << 8 | r4 << 4 | r5

with ranks 2..14 (ace high; 5 is the top of the wheel) ordered the way a tie
is broken (pair rank before kickers, trips before the pair of a full house).
Ordinary int comparison then *is* poker comparison, and the same int can be
read back into words for the dealer's announcement without re-evaluating.

A low value uses the same layout for the hand's *badness* under ace-to-five
rules (ace = 1, straights and flushes do not exist, pairs are categories that
count against the hand) and is stored as ``_LOW_TOP - badness``.  An
8-or-better low is simply a low value that is at least the value of
8-7-6-5-4, so ``low8_value`` and ``low_value`` share one scale.

Speed comes from never enumerating the 21 five-card subsets of a seven-card
hand at run time.  Each card contributes a precomputed integer to a running
sum: three bits per rank count (the rank multiset) and four bits per suit
count, biased by 3 so that a fifth card of a suit sets bit 3 of its field.
One ``&`` then tells whether a flush is possible; without one, the best hand
is a single dict lookup from the rank multiset, built once at import time by
dynamic programming (the best five of n cards is the best of the best fives
of each n-1 subset).  Flushes (about 3% of seven-card hands) take a slower
path through a table indexed by the suit's 13-bit rank mask.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from itertools import combinations_with_replacement
from typing import Final

from .cards import RANK_NAMES, RANK_PLURALS, RANKS, SUITS, Card, CardError

__all__ = [
    "FLUSH",
    "FOUR_OF_A_KIND",
    "FULL_HOUSE",
    "HAND_CLASSES",
    "HIGH_CARD",
    "LOW8_WORST",
    "PAIR",
    "STRAIGHT",
    "STRAIGHT_FLUSH",
    "THREE_OF_A_KIND",
    "TWO_PAIR",
    "describe_board_high",
    "describe_board_low",
    "describe_high",
    "describe_low",
    "high_board_value",
    "high_category",
    "high_category_index",
    "high_value",
    "low8_value",
    "low_board_value",
    "low_category",
    "low_value",
]

# Categories, in order of strength for high hands.  Low hands and boards reuse
# the numbers of the categories they can have (no straights or flushes).
HIGH_CARD: Final = 0
PAIR: Final = 1
TWO_PAIR: Final = 2
THREE_OF_A_KIND: Final = 3
STRAIGHT: Final = 4
FLUSH: Final = 5
FULL_HOUSE: Final = 6
FOUR_OF_A_KIND: Final = 7
STRAIGHT_FLUSH: Final = 8

HAND_CLASSES: Final[tuple[str, ...]] = (
    "high card",
    "pair",
    "two pair",
    "three of a kind",
    "straight",
    "flush",
    "full house",
    "four of a kind",
    "straight flush",
)

_CATEGORY_SHIFT: Final = 20
_LOW_TOP: Final = 1 << 24

# --- the per-card contribution to the running sum ---------------------------

_RANK_FIELD_BITS: Final = 3
_RANK_MASK: Final = (1 << (_RANK_FIELD_BITS * 13)) - 1
_SUIT_SHIFT: Final = 40
_SUIT_FIELD_BITS: Final = 4
_SUIT_BIAS: Final = sum(3 << (_SUIT_SHIFT + _SUIT_FIELD_BITS * s) for s in range(4))
_FLUSH_BITS: Final = sum(8 << (_SUIT_SHIFT + _SUIT_FIELD_BITS * s) for s in range(4))

_RANK_INDEX: Final[dict[str, int]] = {r: i for i, r in enumerate(RANKS)}
_RANK_KEY: Final[dict[str, int]] = {r: 1 << (_RANK_FIELD_BITS * i) for i, r in enumerate(RANKS)}
_SUIT_KEY: Final[dict[str, int]] = {
    s: 1 << (_SUIT_SHIFT + _SUIT_FIELD_BITS * i) for i, s in enumerate(SUITS)
}


def _encode(category: int, ranks: Iterable[int]) -> int:
    value = category
    n = 0
    for r in ranks:
        value = (value << 4) | r
        n += 1
    return value << (4 * (5 - n))


def _decode(value: int) -> tuple[int, tuple[int, ...]]:
    ranks = tuple((value >> (4 * i)) & 15 for i in range(4, -1, -1))
    return value >> _CATEGORY_SHIFT, tuple(r for r in ranks if r)


def _straight_high(distinct: set[int]) -> int:
    """Top rank (2..14) of the best straight among rank values, or 0."""
    for top in range(14, 5, -1):
        if all(r in distinct for r in range(top - 4, top + 1)):
            return top
    if {14, 2, 3, 4, 5} <= distinct:
        return 5
    return 0


def _groups(values: Iterable[int]) -> tuple[tuple[int, ...], list[int]]:
    """Count pattern and per-card ranks ordered as ties are broken: bigger groups first."""
    counts = Counter(values)
    order = sorted(counts, key=lambda r: (counts[r], r), reverse=True)
    pattern = tuple(counts[r] for r in order)
    return pattern, [r for r in order for _ in range(counts[r])]


def _category_of_pattern(pattern: tuple[int, ...]) -> int:
    """Category of a group pattern when straights and flushes do not count."""
    top = pattern[0] if pattern else 0
    second = pattern[1] if len(pattern) > 1 else 0
    if top >= 4:
        return FOUR_OF_A_KIND
    if top == 3:
        return FULL_HOUSE if second >= 2 else THREE_OF_A_KIND
    if top == 2:
        return TWO_PAIR if second == 2 else PAIR
    return HIGH_CARD


def _high5(values: Sequence[int], flush: bool) -> int:
    """Value of exactly five cards given as rank values 2..14."""
    pattern, ordered = _groups(values)
    if len(pattern) == 5:
        top = _straight_high(set(values))
        if top:
            return _encode(STRAIGHT_FLUSH if flush else STRAIGHT, (top,))
        return _encode(FLUSH if flush else HIGH_CARD, ordered)
    return _encode(_category_of_pattern(pattern), dict.fromkeys(ordered))


def _low5_badness(values: Sequence[int]) -> int:
    """Ace-to-five badness of exactly five cards given as ace-low rank values 1..13."""
    pattern, ordered = _groups(values)
    return _encode(_category_of_pattern(pattern), dict.fromkeys(ordered))


# --- tables ------------------------------------------------------------------


def _build_rank_tables() -> tuple[dict[int, int], dict[int, int]]:
    """Best high value and best low value for every rank multiset of 5 to 7 cards.

    Keys are the rank part of the per-card sum.  Flushes are not considered
    here; they depend on suits and are handled by ``_FLUSH_TABLE``.
    """
    high: dict[int, int] = {}
    low: dict[int, int] = {}
    keys = [1 << (_RANK_FIELD_BITS * i) for i in range(13)]
    for combo in combinations_with_replacement(range(13), 5):
        if any(combo.count(i) > 4 for i in set(combo)):
            continue
        key = sum(keys[i] for i in combo)
        high[key] = _high5([i + 2 for i in combo], flush=False)
        low[key] = _LOW_TOP - _low5_badness([i + 2 if i < 12 else 1 for i in combo])
    for n in (6, 7):
        for bigger in combinations_with_replacement(range(13), n):
            distinct = set(bigger)
            if any(bigger.count(i) > 4 for i in distinct):
                continue
            key = sum(keys[i] for i in bigger)
            high[key] = max(high[key - keys[i]] for i in distinct)
            low[key] = max(low[key - keys[i]] for i in distinct)
    return high, low


def _build_flush_table() -> dict[int, int]:
    """Best flush or straight flush for every 13-bit rank mask of one suit with 5+ cards."""
    table: dict[int, int] = {}
    for mask in range(1 << 13):
        if mask.bit_count() < 5:
            continue
        values = [i + 2 for i in range(12, -1, -1) if mask >> i & 1]
        top = _straight_high(set(values))
        if top:
            table[mask] = _encode(STRAIGHT_FLUSH, (top,))
        else:
            table[mask] = _encode(FLUSH, values[:5])
    return table


_RANK_TABLES: Final = _build_rank_tables()
_HIGH_TABLE: Final = _RANK_TABLES[0]
_LOW_TABLE: Final = _RANK_TABLES[1]
_FLUSH_TABLE: Final[dict[int, int]] = _build_flush_table()

LOW8_WORST: Final = _LOW_TOP - _encode(HIGH_CARD, (8, 7, 6, 5, 4))
"""The low value of 8-7-6-5-4: every qualifying 8-or-better low is at least this."""


# --- evaluators ----------------------------------------------------------------


def _key(cards: Sequence[Card], what: str) -> int:
    n = len(cards)
    if not 5 <= n <= 7:
        raise ValueError(f"{what} needs 5 to 7 cards, got {n}")
    key = _SUIT_BIAS
    try:
        for c in cards:
            key += _RANK_KEY[c.rank] + _SUIT_KEY[c.suit]
    except (KeyError, AttributeError):
        raise _bad_cards(cards, what) from None
    if len(set(cards)) != n:
        raise CardError(f"{what}: the same card appears twice in {_fmt(cards)}")
    return key


def _bad_cards(cards: Sequence[object], what: str) -> Exception:
    for c in cards:
        if not isinstance(c, Card):
            return TypeError(f"{what} takes Card objects, got {c!r}")
        if not c.known:
            return CardError(f"{what}: an unknown card cannot be ranked; the shown cards are needed")
    return CardError(f"{what}: cannot rank {cards!r}")


def _fmt(cards: Iterable[Card]) -> str:
    return " ".join(str(c) for c in cards)


def high_value(cards: Sequence[Card]) -> int:
    """The best five-card high hand in 5 to 7 known cards; larger is better, equal is a tie."""
    key = _key(cards, "high_value")
    rank_key = key & _RANK_MASK
    best = _HIGH_TABLE[rank_key]
    flush = key & _FLUSH_BITS
    if flush:
        suit = SUITS[(flush.bit_length() - 1 - _SUIT_SHIFT) // _SUIT_FIELD_BITS]
        mask = 0
        for c in cards:
            if c.suit == suit:
                mask |= 1 << _RANK_INDEX[c.rank]
        best = max(best, _FLUSH_TABLE[mask])
    return best


def low_value(cards: Sequence[Card]) -> int:
    """The best ace-to-five low (razz) in 5 to 7 known cards; larger is better (lower)."""
    return _LOW_TABLE[_key(cards, "low_value") & _RANK_MASK]


def low8_value(cards: Sequence[Card]) -> int | None:
    """The best 8-or-better low in 5 to 7 known cards, or None when the hand does not qualify.

    On the same scale as ``low_value``: a qualifying low is the low value of its
    hand, because when five distinct ranks of eight or under exist they are
    also the best razz low.
    """
    value = low_value(cards)
    return value if value >= LOW8_WORST else None


def high_category_index(value: int) -> int:
    """Category number (``HIGH_CARD`` .. ``STRAIGHT_FLUSH``) of a high value."""
    return value >> _CATEGORY_SHIFT


def high_category(value: int) -> str:
    """Category name of a high value, e.g. ``'full house'``."""
    return HAND_CLASSES[value >> _CATEGORY_SHIFT]


def low_category(value: int) -> str:
    """Category name of a low value: ``'high card'`` is an unpaired low."""
    return HAND_CLASSES[(_LOW_TOP - value) >> _CATEGORY_SHIFT]


# --- boards (who acts first) ----------------------------------------------------


def _board_values(up: Sequence[Card], what: str, ace_low: bool) -> list[int]:
    if not 1 <= len(up) <= 7:
        raise ValueError(f"{what} needs 1 to 7 up cards, got {len(up)}")
    try:
        values = [_RANK_INDEX[c.rank] + 2 for c in up]
    except (KeyError, AttributeError):
        raise _bad_cards(up, what) from None
    if ace_low:
        values = [1 if v == 14 else v for v in values]
    return values


def _board_badness_or_strength(values: list[int]) -> tuple[int, ...]:
    pattern, ordered = _groups(values)
    return (_category_of_pattern(pattern), *ordered)


def high_board_value(up: Sequence[Card]) -> tuple[int, ...]:
    """Strength of an up-card board for deciding who acts first in stud high and stud-8.

    Only pairs, two pair, trips, full houses and quads count; straights and
    flushes do not, and neither do suits: boards that tie are separated by
    seat position, which the caller knows and this function does not.
    Larger is better; ranks are listed per card, biggest group first.
    """
    return _board_badness_or_strength(_board_values(up, "high_board_value", ace_low=False))


def low_board_value(up: Sequence[Card]) -> tuple[int, ...]:
    """Strength of a razz board, where the lowest board acts first; larger is better (lower).

    Aces are low and pairs count against the board, as in razz hands.
    """
    badness = _board_badness_or_strength(_board_values(up, "low_board_value", ace_low=True))
    return tuple(-x for x in badness)


# --- words for the dealer -------------------------------------------------------


def _name(v: int) -> str:
    return RANK_NAMES[RANKS[(v if v != 1 else 14) - 2]]


# Lows are read as numbers ("eight-six-five-four-two"), not card names.
_LOW_WORDS: Final = {**RANK_NAMES, "2": "two", "3": "three"}


def _low_name(v: int) -> str:
    return _LOW_WORDS[RANKS[(v if v != 1 else 14) - 2]]


def _plural(v: int) -> str:
    return RANK_PLURALS[RANKS[(v if v != 1 else 14) - 2]]


def _describe_groups(category: int, ranks: Sequence[int], tail: str, low: bool = False) -> str:
    """Words for categories that boards, high hands and low hands share."""
    if category == PAIR:
        return f"pair of {_plural(ranks[0])}"
    if category == TWO_PAIR:
        return f"two pair, {_plural(ranks[0])} and {_plural(ranks[1])}"
    if category == THREE_OF_A_KIND:
        return f"trip {_plural(ranks[0])}"
    if category == FULL_HOUSE:
        return f"full house, {_plural(ranks[0])} full of {_plural(ranks[1])}"
    if category == FOUR_OF_A_KIND:
        return f"four {_plural(ranks[0])}"
    name = _low_name if low else _name
    return "-".join(name(r) for r in ranks[:2]) + tail


def describe_high(cards: Sequence[Card]) -> str:
    """The best high hand as a dealer reads it at showdown: 'full house, treys full of nines'."""
    category, ranks = _decode(high_value(cards))
    if category == STRAIGHT_FLUSH:
        return "royal flush" if ranks[0] == 14 else f"{_name(ranks[0])}-high straight flush"
    if category == FLUSH:
        return f"{_name(ranks[0])}-high flush"
    if category == STRAIGHT:
        return f"{_name(ranks[0])}-high straight"
    return _describe_groups(category, ranks, " high")


def describe_low(cards: Sequence[Card], *, full: bool = False) -> str:
    """The best razz low as a dealer reads it: 'seven-five low', or every card with ``full``.

    ``full=True`` reads all five ranks ('eight-six-five-four-two'), as a dealer
    does when two lows share their top cards.  Paired lows are read by their
    pairs ('pair of fours').
    """
    category, ranks = _decode(_LOW_TOP - low_value(cards))
    if category == HIGH_CARD and full:
        return "-".join(_low_name(r) for r in ranks)
    return _describe_groups(category, ranks, " low", low=True)


def describe_board_high(up: Sequence[Card]) -> str:
    """An up-card board as the dealer announces the high hand: 'pair of kings', 'ace-king high'."""
    category, *ranks = high_board_value(up)
    return _describe_groups(category, list(dict.fromkeys(ranks)), " high")


def describe_board_low(up: Sequence[Card]) -> str:
    """A razz board as the dealer announces the low hand: 'seven-four low', 'pair of nines'."""
    category, *ranks = (-x for x in low_board_value(up))
    return _describe_groups(category, list(dict.fromkeys(ranks)), " low", low=True)
