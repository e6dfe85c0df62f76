"""Cards as the whole system names them.

A card is a two-character code, rank then suit (``Ah``, ``Td``, ``2c``), or
``??`` for a card whose identity nobody knows (a down card on a table without
a shoe).  Cards are small immutable objects so that the rules code can compare
them cheaply; ``Card.index`` (0..51) is the compact form used by the hand
evaluator and the shoe's deck registry.

Suit order for the bring-in and odd chips (RRoP 3.7; stud high-low rule 4):
clubs < diamonds < hearts < spades.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Final

RANKS: Final = "23456789TJQKA"
SUITS: Final = "cdhs"  # RRoP 3.7: spades > hearts > diamonds > clubs
UNKNOWN_CODE: Final = "??"
RANK_PRIMES: Final = (2, 3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37, 41)  # ``Card.prime``, deuce to ace

RANK_NAMES: Final = {
    "2": "deuce",
    "3": "trey",
    "4": "four",
    "5": "five",
    "6": "six",
    "7": "seven",
    "8": "eight",
    "9": "nine",
    "T": "ten",
    "J": "jack",
    "Q": "queen",
    "K": "king",
    "A": "ace",
}
RANK_PLURALS: Final = {
    "2": "deuces",
    "3": "treys",
    "4": "fours",
    "5": "fives",
    "6": "sixes",
    "7": "sevens",
    "8": "eights",
    "9": "nines",
    "T": "tens",
    "J": "jacks",
    "Q": "queens",
    "K": "kings",
    "A": "aces",
}
SUIT_NAMES: Final = {"c": "clubs", "d": "diamonds", "h": "hearts", "s": "spades"}


class CardError(ValueError):
    """A card code that is not a card."""


class Card:
    """One card, or the unknown card when ``rank`` and ``suit`` are ``?``.

    Immutable; the values the rules code asks for on every deal (rank and suit
    values, whether it is known, its hash) are computed once, here.
    """

    __slots__ = (
        "_hash", "index_or_none", "known", "low_rank_value", "prime", "rank", "rank_value", "suit", "suit_value"
    )

    rank: str
    suit: str
    known: bool
    rank_value: int  # 2..14, ace high
    low_rank_value: int  # 1..13, ace low (razz, the low half of stud-8)
    suit_value: int  # 0..3, clubs lowest (RRoP 3.7)
    index_or_none: int | None
    # A prime per rank (deuce 2, trey 3, four 5, ... ace 41; the unknown card 1): the product
    # over a set of cards names its ranks whatever their order (the board memo's key).
    prime: int
    _hash: int

    def __init__(self, rank: str, suit: str) -> None:
        known = not (rank == "?" and suit == "?")
        if known and (not isinstance(rank, str) or not isinstance(suit, str) or len(rank) != 1 or len(suit) != 1
                      or rank not in RANKS or suit not in SUITS):
            raise CardError(f"not a card: {rank}{suit!s}")
        rank_value = RANKS.index(rank) + 2 if known else 0
        setattr_ = object.__setattr__
        setattr_(self, "rank", rank)
        setattr_(self, "suit", suit)
        setattr_(self, "known", known)
        setattr_(self, "rank_value", rank_value)
        setattr_(self, "low_rank_value", (1 if rank_value == 14 else rank_value) if known else 0)
        setattr_(self, "suit_value", SUITS.index(suit) if known else -1)
        setattr_(self, "index_or_none", (rank_value - 2) * 4 + SUITS.index(suit) if known else None)
        setattr_(self, "prime", RANK_PRIMES[rank_value - 2] if known else 1)
        setattr_(self, "_hash", hash((rank, suit)))

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError("cards are immutable")

    def __eq__(self, other: object) -> bool:
        if self is other:
            return True
        if not isinstance(other, Card):
            return NotImplemented
        return self.rank == other.rank and self.suit == other.suit

    def __hash__(self) -> int:
        return self._hash

    def __reduce__(self) -> tuple[type[Card], tuple[str, str]]:
        return (Card, (self.rank, self.suit))

    @classmethod
    def parse(cls, code: str) -> Card:
        """Parse ``Ah``, ``td`` (rank case is forgiven), or ``??``."""
        if not isinstance(code, str) or len(code) != 2:
            raise CardError(f"a card is two characters, rank and suit (e.g. 'Ah'); got {code!r}")
        if code == UNKNOWN_CODE:
            return UNKNOWN
        rank, suit = code[0].upper(), code[1].lower()
        if rank not in RANKS:
            raise CardError(f"unknown rank {code[0]!r} in {code!r}; ranks are {RANKS}")
        if suit not in SUITS:
            raise CardError(f"unknown suit {code[1]!r} in {code!r}; suits are {SUITS}")
        return _BY_CODE[rank + suit]

    @property
    def index(self) -> int:
        """0..51: rank-major, suit-minor; the unknown card has no index."""
        if self.index_or_none is None:
            raise CardError("the unknown card has no index")
        return self.index_or_none

    @property
    def name(self) -> str:
        """How a dealer says it: 'deuce of clubs'."""
        if not self.known:
            return "unknown card"
        return f"{RANK_NAMES[self.rank]} of {SUIT_NAMES[self.suit]}"

    def __str__(self) -> str:
        return self.rank + self.suit

    def __repr__(self) -> str:
        return f"Card({str(self)!r})"


UNKNOWN: Final = Card("?", "?")
DECK: Final[tuple[Card, ...]] = tuple(Card(r, s) for r in RANKS for s in SUITS)
_BY_CODE: Final = {str(c): c for c in DECK}


def card(code: str | Card) -> Card:
    """A card from a code, or the card itself."""
    return code if isinstance(code, Card) else Card.parse(code)


def parse_cards(text: str | Iterable[str | Card]) -> tuple[Card, ...]:
    """``'AhKd??'`` or ``'Ah Kd ??'`` or a list of codes -> cards."""
    if isinstance(text, str):
        compact = "".join(text.split())
        if len(compact) % 2:
            raise CardError(f"card list {text!r} has an odd number of characters")
        return tuple(Card.parse(compact[i : i + 2]) for i in range(0, len(compact), 2))
    return tuple(card(c) for c in text)

