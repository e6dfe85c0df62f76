"""Hand ranking for seven-card stud, razz and stud high-low 8-or-better.

Theory of operation
-------------------
Every evaluator answers with a plain ``int`` (boards: a ``tuple`` of ints)
where **larger is better** and equal means an exact tie, so the hand state
machine always picks winners with ``max`` and never needs to know which game
it is scoring.  Low hands are turned upside down to fit that rule.

A high value packs the hand's category and the ranks that decide ties into
one int, most significant first::

    category << 20 | r1 << 16 | r2 << 12 | r3 << 8 | r4 << 4 | r5

with ranks 2..14 (ace high; 5 is the top of the wheel) in the order a tie is
broken (pair before kickers, trips before the pair of a full house) and unused
places zero.  Plain int comparison then *is* poker comparison, and the value
reads back into the dealer's words without evaluating again.

A low value uses the same layout for the hand's *badness* under ace-to-five
rules (ace = 1; straights and flushes do not exist; pairs, two pair, trips,
full house and quads are ever worse categories) and is ``_LOW_TOP - badness``.
An 8-or-better low is a low value of at least 8-7-6-5-4's, so ``low8_value``
and ``low_value`` share one scale: a qualifying low *is* the razz low of the
same cards, since five distinct ranks of eight or under are also the lowest
five distinct ranks.

How it is fast (and why the tables are small)
---------------------------------------------
Nothing enumerates the 21 five-card subsets of seven cards.  Each card of the
deck has one precomputed integer, and a hand's *key* is their sum:

* bits 0..38: three bits per rank holding how many cards of that rank;
* bits 40..55: four bits per suit holding 3 + how many cards of that suit, so a
  fifth card of one suit sets bit 3 of its field and one ``&`` detects a flush;
* bits 56..107: one bit per card (``Card.index``); the sum of distinct powers
  of two has exactly one bit per card, so a card given twice shows up as a
  popcount smaller than the number of cards.

From the rank counts a few shifts give masks of the ranks present, paired,
tripled and quadrupled, one bit per rank, three apart.  The best hand follows
from those masks with a handful of dict lookups in tables indexed by such a
mask (a few thousand entries each, built at import in milliseconds): the
straight or high card of an unpaired set of ranks, the top one, two or three
ranks of a set as kickers, the five lowest ranks of a set for razz.  A flush
reads its suit's ranks straight out of the card bits.

The per-card integers are found by ``id()``: ``Card.parse`` and
``engine.cards.DECK`` hand out one object per card for the life of the
process, and a C-level ``sum(map(...))`` over ids is several times cheaper than
hashing the frozen dataclass.  Any other object (a ``Card`` built directly, a
copy, the unknown card, a wrong type) misses that dict and takes a slower path
by rank and suit, which also produces the errors.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from itertools import combinations
from typing import Final

from .cards import DECK, RANK_NAMES, RANK_PLURALS, RANKS, SUITS, Card, CardError

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

_CAT: Final = 20  # category shift
_LOW_TOP: Final = 1 << 24


def _encode(category: int, ranks: Iterable[int]) -> int:
    value = category
    n = 0
    for r in ranks:
        value = (value << 4) | r
        n += 1
    return value << (4 * (5 - n))


def _decode(value: int) -> tuple[int, tuple[int, ...]]:
    ranks = tuple((value >> (4 * i)) & 15 for i in range(4, -1, -1))
    return value >> _CAT, tuple(r for r in ranks if r)


# --- the key: one integer per card, summed ---------------------------------------

_SUIT_SHIFT: Final = 40
_CARD_SHIFT: Final = 56
_M1: Final = sum(1 << (3 * i) for i in range(13))  # the low bit of every rank field
_BIAS: Final = sum(3 << (_SUIT_SHIFT + 4 * s) for s in range(4))
_FLUSH_BITS: Final = sum(8 << (_SUIT_SHIFT + 4 * s) for s in range(4))
_SUIT_RANKS: Final = sum(1 << (4 * i) for i in range(13))  # one suit's card bits, at rank*4
_RANK_INDEX: Final[dict[str, int]] = {r: i for i, r in enumerate(RANKS)}
_SUIT_INDEX: Final[dict[str, int]] = {s: i for i, s in enumerate(SUITS)}


def _card_key(rank: int, suit: int) -> int:
    return (1 << (3 * rank)) + (1 << (_SUIT_SHIFT + 4 * suit)) + (1 << (_CARD_SHIFT + 4 * rank + suit))


# Holding the deck here keeps its objects alive as long as this table, so no
# other object can ever be given one of these ids (even if engine.cards were
# reloaded and its DECK replaced).
_KEYED_CARDS: Final = DECK
_KEY_BY_ID: Final[dict[int, int]] = {
    id(c): _card_key(_RANK_INDEX[c.rank], _SUIT_INDEX[c.suit]) for c in _KEYED_CARDS
}


def _slow_key(cards: Sequence[object], what: str) -> int:
    """The key of cards that are not the deck's own objects, or the error they deserve."""
    key = _BIAS
    for c in cards:
        if not isinstance(c, Card):
            raise TypeError(f"{what} takes Card objects, got {c!r}")
        if not c.known:
            raise CardError(f"{what}: an unknown card cannot be ranked; the shown cards are needed")
        key += _card_key(_RANK_INDEX[c.rank], _SUIT_INDEX[c.suit])
    return key


def _bad_count(cards: Sequence[Card], key: int, what: str) -> ValueError:
    n = len(cards)
    if 5 <= n <= 7 and (key >> _CARD_SHIFT).bit_count() != n:
        listed = " ".join(str(c) for c in cards)
        return CardError(f"{what}: the same card appears twice in {listed}")
    return ValueError(f"{what} needs 5 to 7 cards, got {n}")


# --- tables over rank masks --------------------------------------------------------
#
# A rank mask here has bit 3*i set for rank index i (0 = deuce .. 12 = ace), the
# positions of the low bits of the rank count fields.  Tables are dicts keyed
# by such masks; only the sizes the evaluators can meet are stored.

_BIT: Final = [1 << (3 * i) for i in range(13)]
_ACE_LOW: Final = [i + 2 for i in range(12)] + [1]  # ace-to-five rank value of rank index i


def _subsets(sizes: Iterable[int]) -> Iterable[tuple[int, ...]]:
    """Rank-index sets, each ascending."""
    for k in sizes:
        yield from combinations(range(13), k)


def _pack(values: Iterable[int]) -> int:
    packed = 0
    for v in values:
        packed = packed << 4 | v
    return packed


def _build_tables() -> dict[str, dict[int, int]]:
    """Every table over rank sets, in one pass over the sets (written for import speed)."""
    t: dict[str, dict[int, int]] = {
        name: {} for name in ("top_bit", "top1", "top2", "top3", "nopair", "straight", "flush", "low5")
    }
    top_bit, top1, top2, top3 = t["top_bit"], t["top1"], t["top2"], t["top3"]
    nopair, straights, flushes, low5 = t["nopair"], t["straight"], t["flush"], t["low5"]
    for k in range(1, 6):
        for ranks, mask in zip(combinations(range(13), k), map(sum, combinations(_BIT, k)), strict=True):
            hi = ranks[-1] + 2
            if k <= 3:
                top_bit[mask] = _BIT[ranks[-1]]
                top1[mask] = hi
            if 2 <= k <= 4:
                top2[mask] = hi << 4 | ranks[-2] + 2
            if k >= 3:
                top3[mask] = hi << 8 | (ranks[-2] + 2) << 4 | ranks[-3] + 2
    straight_flush_head = STRAIGHT_FLUSH << _CAT
    flush_head = FLUSH << _CAT
    for k in (5, 6, 7):
        for ranks, mask, suited, compact in zip(
            combinations(range(2, 15), k),
            map(sum, combinations(_BIT, k)),
            map(sum, combinations([1 << (4 * i) for i in range(13)], k)),
            map(sum, combinations([2 << i for i in range(13)], k)),
            strict=True,
        ):
            # Rank value v at bit v - 1, the ace at both ends: five in a row is a straight.
            row = compact | compact >> 13
            run = row & row >> 1 & row >> 2 & row >> 3 & row >> 4
            if run:
                value = (run.bit_length() + 4) << 16  # the top rank of the highest run
                straights[mask] = nopair[mask] = (STRAIGHT << _CAT) | value
                flushes[suited] = straight_flush_head | value
            else:
                a, b, c, d, e = ranks[:-6:-1]
                value = a << 16 | b << 12 | c << 8 | d << 4 | e
                nopair[mask] = value
                flushes[suited] = flush_head | value
            if ranks[-1] == 14:  # the ace is the lowest card
                a, b, c, d = ranks[3::-1]
                low5[mask] = _LOW_TOP - (a << 16 | b << 12 | c << 8 | d << 4 | 1)
            else:
                a, b, c, d, e = ranks[4::-1]
                low5[mask] = _LOW_TOP - (a << 16 | b << 12 | c << 8 | d << 4 | e)
    return t


_T: Final = _build_tables()
_TOP_BIT: Final = _T["top_bit"]  # the highest rank of a set, as a one-rank mask
_TOP1: Final = _T["top1"]  # the highest rank value of a set
_TOP2: Final = _T["top2"]  # the two highest, packed as r1 << 4 | r2
_TOP3: Final = _T["top3"]  # the three highest
_NOPAIR: Final = _T["nopair"]  # value of 5 to 7 unpaired ranks: straight or high card
_STRAIGHT: Final = _T["straight"]  # straight value of a set that holds one
_FLUSH: Final = _T["flush"]  # by one suit's card bits: flush or straight flush
_LOW5: Final = _T["low5"]  # low value of the five lowest ranks (ace low) of 5+ ranks

# Heads of the values whose leading rank is one rank of a one-rank mask.
_QUADS: Final = {_BIT[i]: _encode(FOUR_OF_A_KIND, (i + 2,)) for i in range(13)}
_FULL: Final = {_BIT[i]: _encode(FULL_HOUSE, (i + 2,)) for i in range(13)}
_TRIPS: Final = {_BIT[i]: _encode(THREE_OF_A_KIND, (i + 2,)) for i in range(13)}
_TWO_PAIR: Final = {_BIT[i]: _encode(TWO_PAIR, (i + 2,)) for i in range(13)}
_SECOND: Final = {_BIT[i]: (i + 2) << 12 for i in range(13)}
_PAIR: Final = {_BIT[i]: _encode(PAIR, (i + 2,)) for i in range(13)}

# Razz: ace is the lowest rank, so "lowest" and "descending" follow _ACE_LOW.
_LOW_RANK: Final = {_BIT[i]: _ACE_LOW[i] for i in range(13)}
_LOWEST_BIT: Final = {
    mask: min((b for b in _BIT if mask & b), key=_LOW_RANK.__getitem__)
    for mask in (sum(_BIT[i] for i in ranks) for ranks in _subsets((1, 2, 3)))
}

_LOW_DESC: Final = {
    sum(_BIT[i] for i in ranks): _pack(sorted((_ACE_LOW[i] for i in ranks), reverse=True))
    for ranks in _subsets((1, 2, 3))
}  # ranks of a set, highest first, packed like r1 << 8 | r2 << 4 | r3 for three

_A_TO_8: Final = _BIT[12] | sum(_BIT[i] for i in range(7))
_LOW8: Final = {m: v for m, v in _LOW5.items() if not m & ~_A_TO_8}
del _T

LOW8_WORST: Final = _LOW_TOP - _encode(HIGH_CARD, (8, 7, 6, 5, 4))
"""The low value of 8-7-6-5-4: every qualifying 8-or-better low is at least this."""


# --- evaluators ------------------------------------------------------------------


def high_value(cards: Sequence[Card]) -> int:
    """The best five-card high hand in 5 to 7 known cards; larger is better, equal is a tie."""
    try:
        k = sum(map(_KEY_BY_ID.__getitem__, map(id, cards)), _BIAS)
    except KeyError:
        k = _slow_key(cards, "high_value")
    n = (k >> _CARD_SHIFT).bit_count()
    if n != len(cards) or not 5 <= n <= 7:
        raise _bad_count(cards, k, "high_value")
    flush = k & _FLUSH_BITS
    if flush:
        # Five cards of one suit leave at most two others: no full house or quads
        # is possible, so the flush (or straight flush) is the hand.
        suit = (flush.bit_length() - _SUIT_SHIFT - 4) >> 2  # bit 3 of its field
        return _FLUSH[(k >> (_CARD_SHIFT + suit)) & _SUIT_RANKS]
    k1 = k >> 1
    k2 = k >> 2
    paired = (k1 | k2) & _M1
    if not paired:
        return _NOPAIR[k & _M1]
    present = (k | paired) & _M1
    quads = k2 & _M1
    if quads:
        return _QUADS[quads] | _TOP1[present ^ quads] << 12
    trips = k & k1 & _M1
    if trips:
        top = _TOP_BIT[trips]
        rest = paired ^ top
        if rest:
            return _FULL[top] | _TOP1[rest] << 12
        return _STRAIGHT.get(present) or _TRIPS[top] | _TOP2[present ^ top] << 8
    straight = _STRAIGHT.get(present)
    if straight:
        return straight
    top = _TOP_BIT[paired]
    rest = paired ^ top
    if rest:
        second = _TOP_BIT[rest]
        return _TWO_PAIR[top] | _SECOND[second] | _TOP1[present ^ top ^ second] << 8
    return _PAIR[top] | _TOP3[present ^ top] << 4


def low_value(cards: Sequence[Card]) -> int:
    """The best ace-to-five low (razz) in 5 to 7 known cards; larger is better (lower)."""
    try:
        k = sum(map(_KEY_BY_ID.__getitem__, map(id, cards)), _BIAS)
    except KeyError:
        k = _slow_key(cards, "low_value")
    n = (k >> _CARD_SHIFT).bit_count()
    if n != len(cards) or not 5 <= n <= 7:
        raise _bad_count(cards, k, "low_value")
    present = (k | k >> 1 | k >> 2) & _M1
    return _LOW5.get(present) or _low_paired(k, present)


def _low_paired(k: int, present: int) -> int:
    """Razz low when fewer than five ranks are present, so pairs must play.

    With four ranks the lowest rank that has a second card pairs; with three,
    two pair beats trips and the two lowest pairs play; with two, the full house
    with the lowest trips, or quads when one rank has a single card.
    """
    paired = (k >> 1 | k >> 2) & _M1
    distinct = present.bit_count()
    if distinct == 4:
        pair = _LOWEST_BIT[paired]
        badness = _encode(PAIR, (_LOW_RANK[pair],)) | _LOW_DESC[present ^ pair] << 4
    elif distinct == 3:
        low = _LOWEST_BIT[paired]
        if paired ^ low:
            high = _LOWEST_BIT[paired ^ low]
            kicker = present ^ low ^ high
            badness = _encode(TWO_PAIR, (_LOW_RANK[high], _LOW_RANK[low], _LOW_RANK[kicker]))
        else:
            badness = _encode(THREE_OF_A_KIND, (_LOW_RANK[low],)) | _LOW_DESC[present ^ low] << 8
    else:
        trips = (k & k >> 1 | k >> 2) & _M1
        low = _LOWEST_BIT[trips]
        other = present ^ low
        category = FULL_HOUSE if other & paired else FOUR_OF_A_KIND
        badness = _encode(category, (_LOW_RANK[low], _LOW_RANK[other]))
    return _LOW_TOP - badness


def low8_value(cards: Sequence[Card]) -> int | None:
    """The best 8-or-better low in 5 to 7 known cards, or None when the hand does not qualify.

    On the same scale as ``low_value``: a qualifying low is the low value of its
    hand, because when five distinct ranks of eight or under exist they are
    also the best razz low.
    """
    try:
        k = sum(map(_KEY_BY_ID.__getitem__, map(id, cards)), _BIAS)
    except KeyError:
        k = _slow_key(cards, "low8_value")
    n = (k >> _CARD_SHIFT).bit_count()
    if n != len(cards) or not 5 <= n <= 7:
        raise _bad_count(cards, k, "low8_value")
    return _LOW8.get((k | k >> 1 | k >> 2) & _A_TO_8)


def high_category_index(value: int) -> int:
    """Category number (``HIGH_CARD`` .. ``STRAIGHT_FLUSH``) of a high value."""
    return value >> _CAT


def high_category(value: int) -> str:
    """Category name of a high value, e.g. ``'full house'``."""
    return HAND_CLASSES[value >> _CAT]


def low_category(value: int) -> str:
    """Category name of a low value: ``'high card'`` is an unpaired low."""
    return HAND_CLASSES[(_LOW_TOP - value) >> _CAT]


# --- boards (who acts first) ----------------------------------------------------


def _groups(values: Iterable[int]) -> tuple[tuple[int, ...], list[int]]:
    """Count pattern and per-card ranks ordered as ties are broken: bigger groups first."""
    counts = Counter(values)
    order = sorted(counts, key=lambda r: (counts[r], r), reverse=True)
    return tuple(counts[r] for r in order), [r for r in order for _ in range(counts[r])]


def _category_of_pattern(pattern: tuple[int, ...]) -> int:
    """Category of a group pattern when straights and flushes do not count."""
    top = pattern[0]
    second = pattern[1] if len(pattern) > 1 else 0
    if top >= 4:
        return FOUR_OF_A_KIND
    if top == 3:
        return FULL_HOUSE if second >= 2 else THREE_OF_A_KIND
    if top == 2:
        return TWO_PAIR if second == 2 else PAIR
    return HIGH_CARD


def _board(up: Sequence[Card], what: str, ace_low: bool) -> tuple[int, ...]:
    """Category, then every card's rank, biggest group first (ace low when asked)."""
    if not 1 <= len(up) <= 7:
        raise ValueError(f"{what} needs 1 to 7 up cards, got {len(up)}")
    try:
        values = [_RANK_INDEX[c.rank] + 2 for c in up]
    except (KeyError, AttributeError):
        _slow_key(up, what)  # raises the error that names the card at fault
        raise
    if ace_low:
        values = [1 if v == 14 else v for v in values]
    pattern, ordered = _groups(values)
    return (_category_of_pattern(pattern), *ordered)


def high_board_value(up: Sequence[Card]) -> tuple[int, ...]:
    """Strength of an up-card board for deciding who acts first in stud high and stud-8.

    Only pairs, two pair, trips, full houses and quads count; straights and
    flushes do not, and neither do suits: boards that tie are separated by
    seat position, which the caller knows and this function does not.
    Larger is better; ranks are listed per card, biggest group first, so a
    board with more cards never loses a tie-break to one with fewer.
    """
    return _board(up, "high_board_value", ace_low=False)


def low_board_value(up: Sequence[Card]) -> tuple[int, ...]:
    """Strength of a razz board, where the lowest board acts first; larger is better (lower).

    Aces are low and pairs count against the board, as in razz hands.
    """
    return tuple(-x for x in _board(up, "low_board_value", ace_low=True))


# --- words for the dealer -------------------------------------------------------


def _name(v: int) -> str:
    return RANK_NAMES[RANKS[(v if v != 1 else 14) - 2]]


def _plural(v: int) -> str:
    return RANK_PLURALS[RANKS[(v if v != 1 else 14) - 2]]


# Lows are read as numbers ("eight-six-five-four-two"), not card names.
_LOW_WORDS: Final = {**RANK_NAMES, "2": "two", "3": "three"}


def _low_name(v: int) -> str:
    return _LOW_WORDS[RANKS[(v if v != 1 else 14) - 2]]


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
