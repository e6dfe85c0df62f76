"""The hand's state: what every part of the hand reads and changes.

``HandState`` declares the fields (``Hand.__init__`` in ``engine.hand.core`` sets
them) and the queries the dealing, betting, corrections and showdown parts
share.  Each part is a mixin over it; ``Hand`` puts them together.
"""

from __future__ import annotations

from collections.abc import Iterable
from enum import StrEnum
from typing import TYPE_CHECKING, Self

from engine.cards import UNKNOWN, Card
from engine.events import Announcement, CardBurned, CardDealt, Event, HandStarted, PotAward
from engine.hand.seats import CARDS_IN_DECK, DUE, SeatState, Street
from engine.rules import GameConfig
from engine.showdown import Pot

if TYPE_CHECKING:
    from engine.hand.betting import BettingRound, Options


class Phase(StrEnum):
    DEALING = "dealing"
    BETTING = "betting"
    SHOWDOWN = "showdown"
    COMPLETE = "complete"


class IllegalAction(ValueError):
    """An input the hand refuses; nothing was changed.

    ``rule`` is the clause (or engine invariant) that refuses it, so a
    dealer's screen can say why.
    """

    def __init__(self, rule: str, message: str) -> None:
        super().__init__(f"{message} [{rule}]")
        self.rule = rule
        self.reason = message


# Frozen dataclasses built on the hot path (announcements, options, outputs, pots) are made field
# by field, without their ``__init__``.  Measured 2026-12-01, the same run, CPU clock, engine only
# (bench_engine.engine_hands, 2 x 5 runs of 2,000 hands): with these 1190/1265/1299 hands/s
# (F7S, F7S/8, FR, medians averaged), with plain constructors 1148/1175/1209 (+4 %, +8 %, +7 %);
# bench_engine.py --hands 2000 --clock cpu: 1197/1193/1151 against 996/1050/1135.  Kept.
_new = object.__new__


def _announcement(kind: str, text: str, seats: tuple[int, ...] = ()) -> Announcement:
    """``Announcement(kind, text, seats)`` without the frozen dataclass's ``__init__``."""
    a = _new(Announcement)
    fields_ = a.__dict__
    fields_["kind"] = kind
    fields_["text"] = text
    fields_["seats"] = seats
    return a


class HandState:
    """The fields of a hand and the queries every part of it asks."""

    start: HandStarted
    config: GameConfig
    hand_id: int
    seats: list[SeatState]
    _index: dict[int, int]  # seat number -> index in ``seats``
    events: list[Event]
    phase: Phase
    street: Street
    burns: list[Card]
    burned_this_street: bool
    common: list[Card]
    recycled: set[Card]  # back in the stub after a reshuffle (RRoP stud 15)
    stub: int  # cards left in the dealer's hand, unknown ones included
    removed: list[Card]  # RRoP stud 14: premature cards set aside
    early: set[int]  # RRoP stud 14: seats that kept a seventh card dealt during sixth street
    burn_ahead: bool  # RRoP 3.4: an extra third-street card is the fourth-street burn
    street_start: int  # index in ``events`` of the current street's first card (RRoP stud 13)
    voided: bool  # RRoP 3.2, 3.4: all action void, every chip returned
    seen: set[Card]  # identified cards out of the stub: on seats, burned, common
    _options_cache: tuple[int, Options] | None
    round: BettingRound | None
    last_round: BettingRound | None
    to_show: list[int]
    awards: list[PotAward]
    pots: list[Pot]
    announcements: list[Announcement]
    paired_announced: set[tuple[int, str]]  # (seat index, rank): RRoP stud 12, razz 5
    _owed: int  # cards still owed on this street (``_after_card``)
    _deal_from: int  # where ``next_deal`` starts looking

    if TYPE_CHECKING:
        # Provided by the parts (engine.hand.core puts them together).
        @classmethod
        def replay(cls, events: Iterable[Event]) -> Self: ...
        def options(self) -> Options | None: ...
        def _after_card(self) -> None: ...
        def _owed_cards(self) -> int: ...
        def _begin_betting(self) -> None: ...
        def _maybe_close_round(self) -> None: ...
        def _end_round(self) -> None: ...
        def _begin_showdown(self, last: BettingRound) -> None: ...
        def _maybe_settle(self) -> None: ...
        def _award_uncontested(self) -> None: ...
        def _announce_board(self, opener: int, rnd: BettingRound, paired: list[int]) -> None: ...

    def seat(self, number: int) -> SeatState:
        try:
            return self.seats[self._index[number]]
        except KeyError:
            raise IllegalAction("engine.seats", f"seat {number} is not in this hand") from None

    @property
    def live_seats(self) -> list[SeatState]:
        return [s for s in self.seats if not s.folded and not s.mucked]

    @property
    def pot_total(self) -> int:
        return sum(s.committed for s in self.seats) - sum(a.amount for a in self.awards)

    @property
    def to_act(self) -> int | None:
        """The seat number whose turn it is, if betting is open."""
        if self.phase is Phase.BETTING and self.round and self.round.to_act:
            return self.seats[self.round.to_act[0]].seat
        if self.phase is Phase.SHOWDOWN and self.to_show:
            return self.seats[self.to_show[0]].seat
        return None

    @property
    def is_over(self) -> bool:
        return self.phase is Phase.COMPLETE

    def due(self, s: SeatState) -> tuple[int, int]:
        """(down, up) cards this seat holds once the current street is dealt."""
        down_due, up_due = DUE[self.street]
        if s.last_up and self.street == Street.SEVENTH:
            return (down_due - 1, up_due + 1)  # RRoP stud 16-17: the last card plays face up
        return (down_due, up_due)

    def needs(self, s: SeatState) -> tuple[int, int]:
        """(down, up) cards this seat still needs on the current street."""
        if self.phase is not Phase.DEALING or not s.live or (self.common and self.street == Street.SEVENTH):
            return (0, 0)
        down_due, up_due = self.due(s)
        return (max(0, down_due - s.n_down), max(0, up_due - s.n_up))

    def common_card_street(self) -> bool:
        return bool(self.common) and self.street == Street.SEVENTH

    def stub_size(self) -> int:
        """Cards left in the dealer's hand (unknown cards count too)."""
        return self.stub

    def reshuffle_pool(self) -> int:
        """Cards the dealer can still deliver if the burns are reshuffled (RRoP stud 15)."""
        folded = sum(len(s.cards) for s in self.seats if not s.live)
        live = sum(len(s.cards) for s in self.seats if s.live)
        muck = folded if self.config.rules.reshuffle_includes_muck else 0
        return CARDS_IN_DECK - live - len(self.common) - (folded - muck)

    def up_cards_for_ranking(self, s: SeatState) -> list[Card]:
        return [c for c, up in s.cards if up and c.known] + self.common

    @staticmethod
    def _recount(s: SeatState) -> None:
        """A seat's counts and board key from its cards, after a ruling changed them."""
        n_up = 0
        up_key = 1
        for c, up in s.cards:
            if up:
                n_up += 1
                up_key *= c.prime
        s.n_up = n_up
        s.n_down = len(s.cards) - n_up
        s.up_key = up_key

    def _take_from_stub(self, c: Card) -> None:
        self.stub -= 1
        if self.recycled:
            self.recycled.discard(c)
        if c.known:
            self.seen.add(c)

    def _check_new_card(self, c: Card, what: str, seat: int | None = None) -> None:
        """Refuse a card the stub cannot give; ``what`` (with ``seat``) says where it went."""
        if self.stub <= 0:
            raise IllegalAction(
                "RRoP stud 15", "no cards are left in the deck; reshuffle the burn cards first"
            )
        if c.known and c in self.seen and self.is_public(c):
            # RRoP 3.4: two cards of the same rank and suit; the irregularity layer rules on it.
            # Only a twin in plain sight is refused: refusing the twin of a down card would answer
            # a console yes or no about that card (DESIGN: nothing a non-engine role gets may depend
            # on a secret card).  Such a duplicate is caught by the shoe, or when the cards are shown.
            raise IllegalAction(
                "RRoP 3.4 duplicate card",
                f"the {c.name} ({c}) was already dealt in this hand ({what if seat is None else f'{what} {seat}'})",
            )

    def is_public(self, c: Card) -> bool:
        """Whether everyone at the table can see ``c`` now: an up card, a card of a hand shown,
        the common card.  Every other identity (down cards, burns, cards set aside) is SECRET
        while the hand is live, and no refusal or prompt may name it."""
        if c in self.common:
            return True
        return any(d == c and (up or s.shown) for s in self.seats for d, up in s.cards)

    def street_draws(self) -> list[CardBurned | CardDealt]:
        """This street's burns and cards, in the order they were dealt."""
        return [ev for ev in self.events[self.street_start:] if isinstance(ev, CardBurned | CardDealt)]

    # --------------------------------------------------------------- views

    def finishing_stacks(self) -> list[int]:
        return [s.stack for s in self.seats]

    def public_cards(self, s: SeatState) -> list[str]:
        """The cards a player at the table can see for a seat: up cards, and shown down cards."""
        return [str(c) if (up or s.shown) else str(UNKNOWN) for c, up in s.cards]
