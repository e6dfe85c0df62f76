"""What each seat holds, and what each street deals it.

A street is a ``Street`` (an ``IntEnum`` whose value is its place in the deal,
third street = 0), so it indexes the deal tables below and names itself.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import IntEnum
from typing import Any

from engine.cards import Card


class Street(IntEnum):
    """The five streets of a stud hand; the value is the street's index in ``STREET_DEAL``."""

    THIRD = 0
    FOURTH = 1
    FIFTH = 2
    SIXTH = 3
    SEVENTH = 4

    @property
    def label(self) -> str:
        return STREET_NAMES[self]


STREET_NAMES = ("third street", "fourth street", "fifth street", "sixth street", "seventh street")
# (down, up) cards each live seat receives on each street (RRoP 8.0; 001 dealing order).
STREET_DEAL = ((2, 1), (0, 1), (0, 1), (0, 1), (1, 0))
# (down, up) a seat holds once each street is fully dealt.
DUE = tuple(
    (sum(d for d, _ in STREET_DEAL[: k + 1]), sum(u for _, u in STREET_DEAL[: k + 1])) for k in range(len(STREET_DEAL))
)
HELD = tuple(d + u for d, u in DUE)  # cards a seat holds once each street is fully dealt
CARDS_IN_DECK = 52


@dataclass(slots=True)
class SeatState:
    seat: int
    name: str
    starting_stack: int
    stack: int
    cards: list[tuple[Card, bool]] = field(default_factory=list)  # (card, face_up) in deal order
    folded: bool = False
    mucked: bool = False
    shown: bool = False
    bet: int = 0  # this street
    committed: int = 0  # everything put in this hand, antes included
    ante: int = 0
    absent: bool = False
    n_down: int = 0  # counts of cards held, kept beside ``cards`` because dealing asks often
    n_up: int = 0
    exposed_door: bool = False  # RRoP stud 5: the up card on third street is an exposed hole card
    last_up: bool = False  # RRoP stud 16-17: the seventh card was dealt face up and plays so
    killed: str = ""  # the rule that killed the hand, if a ruling did
    reserved: int = 0  # RRoP stud 17: chips behind a declared all-in, out of this hand
    # The product of the identified up cards' rank primes (``Card.prime``): the board's ranks as
    # one number, whatever their order, for the board memo.  Derived from ``cards`` and kept with
    # them (``HandState._recount`` after any change other than a deal), so not compared or shown.
    up_key: int = field(default=1, repr=False, compare=False)

    @property
    def live(self) -> bool:
        return not self.folded and not self.mucked

    @property
    def all_in(self) -> bool:
        return self.live and self.stack == 0

    @property
    def up(self) -> list[Card]:
        return [c for c, up in self.cards if up]

    @property
    def down(self) -> list[Card]:
        return [c for c, up in self.cards if not up]

    @property
    def all_cards(self) -> list[Card]:
        return [c for c, _ in self.cards]

    def secret_state(self) -> dict[str, Any]:
        return {
            "seat": self.seat,
            "name": self.name,
            "starting_stack": self.starting_stack,
            "stack": self.stack,
            "cards": [[str(c), up] for c, up in self.cards],
            "folded": self.folded,
            "mucked": self.mucked,
            "shown": self.shown,
            "bet": self.bet,
            "committed": self.committed,
            "ante": self.ante,
            "absent": self.absent,
            "exposed_door": self.exposed_door,
            "last_up": self.last_up,
            "killed": self.killed,
            "reserved": self.reserved,
        }
