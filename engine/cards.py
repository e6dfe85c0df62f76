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

from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Final

RANKS: Final = "23456789TJQKA"
SUITS: Final = "cdhs"  # RRoP 3.7: spades > hearts > diamonds > clubs
UNKNOWN_CODE: Final = "??"

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


@dataclass(frozen=True, slots=True, order=False)
class Card:
    """One card, or the unknown card when ``rank`` and ``suit`` are ``?``."""

    rank: str
    suit: str

    def __post_init__(self) -> None:
        if self.rank == "?" and self.suit == "?":
            return
        if self.rank not in RANKS or self.suit not in SUITS:
            raise CardError(f"not a card: {self.rank}{self.suit!s}")

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
    def known(self) -> bool:
        return self.rank != "?"

    @property
    def rank_value(self) -> int:
        """2..14, ace high."""
        return RANKS.index(self.rank) + 2

    @property
    def low_rank_value(self) -> int:
        """1..13, ace low (razz, the low half of stud-8)."""
        v = self.rank_value
        return 1 if v == 14 else v

    @property
    def suit_value(self) -> int:
        """0..3, clubs lowest (RRoP 3.7)."""
        return SUITS.index(self.suit)

    @property
    def index(self) -> int:
        """0..51: rank-major, suit-minor; the unknown card has no index."""
        if not self.known:
            raise CardError("the unknown card has no index")
        return RANKS.index(self.rank) * 4 + SUITS.index(self.suit)

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


def format_cards(cards: Iterable[Card]) -> str:
    return "".join(str(c) for c in cards)


def from_index(index: int) -> Card:
    if not 0 <= index < 52:
        raise CardError(f"card index {index} is outside 0..51")
    return DECK[index]


def full_deck() -> list[Card]:
    """A fresh 52-card deck in a fixed order (shuffle it yourself)."""
    return list(DECK)


def iter_known(cards: Iterable[Card]) -> Iterator[Card]:
    return (c for c in cards if c.known)
