"""One hand of seven-card stud, razz or stud high-low, as a state machine.

Theory of operation
-------------------
A ``Hand`` is built from a ``HandStarted`` event and then fed input events
one at a time through ``apply``: cards dealt to a seat (up or down), burns,
a common card, player actions, cards shown and hands mucked at showdown.
Nothing else changes it, and it does no I/O, so the same list of events
always rebuilds an equal hand (``Hand.replay``): that is what the event store
and the hand log rely on.

The hand moves through phases::

    DEALING(street) --all cards of the street delivered--> BETTING(street)
    BETTING(street) --round closed, 2+ live, street < 7th--> DEALING(street+1)
    BETTING(7th)    --round closed, 2+ live--> SHOWDOWN
    any phase       --one live hand left--> COMPLETE (pot awarded)
    SHOWDOWN        --every contender shown or mucked--> COMPLETE

Which events each phase accepts is the table ``ACCEPTS`` below; anything else
is refused with ``IllegalAction``, whose message names the event, the phase
and the rule that refused it.  ``apply`` checks everything before it changes
anything, so a refused input leaves the hand exactly as it was.

Dealing is checked for *what* each seat must receive on a street (third
street: two down, one up; fourth to sixth: one up; seventh: one down), not
for the order among seats: the order is the deal tracker's business
(``expected_deal`` says what a dealer would deliver next), and a deviation
there is an irregularity for the dealer, not a reason to stop the hand.

Betting is fixed limit.  One ``BettingRound`` holds a street's wagers; the
house-rule profile (``engine.rules.HouseRules``) decides the points where the
rule books differ: the open-pair big bet, the raise cap heads-up, short
all-ins, the short bring-in.  ``options()`` answers, for the player to act,
every legal action with its exact amount, and ``apply`` accepts exactly those.

Layout
------
``Hand`` (this module) keeps the state, the ``ACCEPTS`` table, the phase
transitions (``TRANSITIONS``) and ``apply``; the rest is one mixin per part:
``engine.hand.dealing`` (the deal tracker and the cards), ``engine.hand.betting``
(rounds and options), ``engine.hand.corrections`` (the ruling handlers),
``engine.hand.showdown`` (showdown and awards), ``engine.hand.board`` (board memos
and announcements), over ``engine.hand.state`` (fields and shared queries) and
``engine.hand.seats`` (what a seat holds, the streets).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from engine.events import (
    ActionWithdrawn,
    AllInDeclared,
    BringInWithdrawn,
    CallOnly,
    CardBurned,
    CardDealt,
    CardsRemoved,
    CardsShown,
    CardTakenBack,
    CommonCardDealt,
    DealCorrected,
    DeckReshuffled,
    EntryUndone,
    Event,
    ExtraCardReturned,
    FinalCardKept,
    HandKilled,
    HandMucked,
    HandStarted,
    HandVoided,
    HoleCardExposed,
    Outputs,
    PlayerAction,
    UpCardCorrected,
)
from engine.hand.betting import BettingMixin
from engine.hand.board import BoardMixin
from engine.hand.corrections import CorrectionsMixin
from engine.hand.dealing import DealingMixin
from engine.hand.seats import CARDS_IN_DECK, STREET_NAMES, SeatState, Street
from engine.hand.showdown import ShowdownMixin
from engine.hand.state import IllegalAction, Phase, _new

# The hot paths compare phases with these: in Python 3.11 every ``Phase.X`` is a metaclass
# attribute lookup, several times the cost of a module global.
_COMPLETE = Phase.COMPLETE

# Which input events each phase accepts at all (finer checks follow per event).
ACCEPTS: dict[Phase, tuple[type[Event], ...]] = {
    Phase.DEALING: (
        CardDealt, CardBurned, CommonCardDealt, DeckReshuffled, CardsShown,
        HoleCardExposed, HandKilled, HandVoided, CardsRemoved,
        DealCorrected, UpCardCorrected, ExtraCardReturned, CardTakenBack, AllInDeclared, EntryUndone,
    ),
    Phase.BETTING: (
        PlayerAction, CardsShown, HandKilled, HandVoided, CardsRemoved, ActionWithdrawn, HoleCardExposed,
        FinalCardKept, DealCorrected, UpCardCorrected, BringInWithdrawn, ExtraCardReturned, CallOnly,
        CardTakenBack, AllInDeclared, EntryUndone,
    ),
    Phase.SHOWDOWN: (CardsShown, HandMucked, HandKilled, HandVoided, EntryUndone),
    Phase.COMPLETE: (CardsShown,),
}

# Every phase change the hand makes, and why (the module docstring's picture as data;
# tests/engine/test_properties.py checks that replayed hands make no other).
TRANSITIONS: dict[tuple[Phase, Phase], str] = {
    (Phase.DEALING, Phase.BETTING): "every live seat has its cards for the street",
    (Phase.BETTING, Phase.DEALING): "the round closed with 2+ live hands before seventh street, "
    "or a burn error was corrected (RRoP stud 13)",
    (Phase.BETTING, Phase.SHOWDOWN): "the seventh-street round closed with 2+ live hands",
    (Phase.DEALING, Phase.COMPLETE): "one live hand left, or the hand voided",
    (Phase.BETTING, Phase.COMPLETE): "one live hand left (or nobody left to bet), or the hand voided",
    (Phase.SHOWDOWN, Phase.COMPLETE): "every contender shown or mucked, or the hand voided",
    (Phase.DEALING, Phase.SHOWDOWN): "the last card dealt to players all in: nobody bets",
}


class Hand(DealingMixin, BettingMixin, CorrectionsMixin, ShowdownMixin, BoardMixin):
    """One hand, from the antes to the pot awarded.  See the module docstring."""

    def __init__(self, start: HandStarted) -> None:
        entries = start.seats
        if not 2 <= len(entries) <= 8:
            raise IllegalAction("engine.seats", f"a stud hand needs 2 to 8 players; got {len(entries)}")
        previous = None
        for entry in entries:
            if (previous is not None and entry.seat <= previous) or entry.stack <= 0:
                self._refuse_seats(start)
            previous = entry.seat
        if start.absent:
            self._refuse_seats(start)
        self.start = start
        self.config = start.config
        self.hand_id = start.hand_id
        # Antes (RRoP stud 1; a stack smaller than the ante is all in for what it has).
        ante = self.config.ante
        absent = start.absent
        self.seats = [
            SeatState(
                e.seat, e.name, e.stack, e.stack - min(ante, e.stack),
                ante=min(ante, e.stack), committed=min(ante, e.stack), absent=e.seat in absent,
            )
            for e in entries
        ]
        self._index = {s.seat: i for i, s in enumerate(self.seats)}
        self.events = [start]
        self.phase = Phase.DEALING
        self.street = Street.THIRD
        self.burns = []
        self.burned_this_street = False
        self.common = []
        self.recycled = set()  # back in the stub after a reshuffle (RRoP stud 15)
        self.stub = CARDS_IN_DECK  # cards left in the dealer's hand, unknown ones included
        self.removed = []  # RRoP stud 14: premature cards set aside
        self.early = set()  # RRoP stud 14: seats that kept a seventh card dealt during sixth street
        self.burn_ahead = False  # RRoP 3.4: an extra third-street card is the fourth-street burn
        self.street_start = 1  # index in ``events`` of the current street's first card (RRoP stud 13)
        self.voided = False  # RRoP 3.2, 3.4: all action void, every chip returned
        self.seen = set()  # identified cards out of the stub: on seats, burned, common
        self._options_cache = None
        self.round = None
        self.last_round = None
        self.to_show = []
        self.awards = []
        self.pots = []
        self.announcements = []
        self.paired_announced = set()
        self._owed = 3 * len(self.seats)  # cards still owed on this street (``_after_card``)
        self._deal_from = 0  # where ``next_deal`` starts looking

    @staticmethod
    def _refuse_seats(start: HandStarted) -> None:
        """Raise the error for seats that cannot start a hand (a second look, in order)."""
        numbers = [s.seat for s in start.seats]
        if len(set(numbers)) != len(numbers):
            raise IllegalAction("engine.seats", f"a seat is listed twice: {numbers}")
        if numbers != sorted(numbers):
            raise IllegalAction(
                "engine.seats", "seats must be listed in deal order (ascending from the dealer's left)"
            )
        for entry in start.seats:
            if entry.stack <= 0:
                raise IllegalAction("engine.seats", f"seat {entry.seat} has no chips and cannot be dealt in")
        unknown_absent = set(start.absent) - set(numbers)
        if unknown_absent:
            raise IllegalAction("engine.seats", f"absent seat(s) {sorted(unknown_absent)} are not dealt in")

    # ------------------------------------------------------------------ build

    @classmethod
    def replay(cls, events: Iterable[Event]) -> Hand:
        """Fold a hand's event log back into the hand."""
        it = iter(events)
        first = next(it, None)
        if not isinstance(first, HandStarted):
            raise IllegalAction("engine.log", "a hand's log starts with hand_started")
        hand = cls(first)
        for event in it:
            hand.apply(event)
        return hand

    def secret_state(self) -> dict[str, Any]:
        """SECRET: the whole state as plain data, down cards included (replay checks, tests).

        Never for a screen: what a player may see is ``engine.public.public_state``."""
        return {
            "hand_id": self.hand_id,
            "config": self.config.to_json(),
            "phase": self.phase.value,
            "street": self.street,
            "seats": [s.secret_state() for s in self.seats],
            "burns": [str(c) for c in self.burns],
            "burned_this_street": self.burned_this_street,
            "common": [str(c) for c in self.common],
            "recycled": sorted(str(c) for c in self.recycled),
            "stub": self.stub,
            "removed": [str(c) for c in self.removed],
            "early": sorted(self.early),
            "burn_ahead": self.burn_ahead,
            "voided": self.voided,
            "round": self.round.secret_state() if self.round else None,
            "last_round": self.last_round.secret_state() if self.last_round else None,
            "to_show": list(self.to_show),
            "awards": [vars(a) for a in self.awards],
            "announcements": [vars(a) for a in self.announcements],
        }

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Hand) and self.secret_state() == other.secret_state()

    __hash__ = None  # type: ignore[assignment]

    # ---------------------------------------------------------- the driver

    def apply(self, event: Event) -> Outputs:
        """Apply one input event; raises IllegalAction (changing nothing) if refused."""
        phase = self.phase
        handler = _DISPATCH[phase].get(type(event))
        if handler is None:
            handler = self._handler_for(event)
        announcements = self.announcements
        before = len(announcements)
        handler(self, event)
        self.events.append(event)
        # ``Outputs(...)`` field by field, without the frozen dataclass's ``__init__`` (one
        # ``object.__setattr__`` per field); most inputs announce nothing and award nothing.
        out = _new(Outputs)
        fields_ = out.__dict__
        fields_["announcements"] = tuple(announcements[before:]) if len(announcements) > before else ()
        # Pots are awarded only as the hand completes (``_finish``), so until then there are
        # no awards, and the input that completes it made all of them.
        over = self.phase is _COMPLETE
        fields_["awards"] = tuple(self.awards) if over and phase is not _COMPLETE else ()
        fields_["hand_over"] = over
        fields_["extra"] = {}
        return out

    def _handler_for(self, event: Event) -> Callable[[Hand, Any], None]:
        """The slow path of ``apply``'s dispatch: subclasses of accepted events, and refusals."""
        if not isinstance(event, ACCEPTS[self.phase]):
            raise IllegalAction(
                "engine.phase",
                f"{getattr(event, 'type', type(event).__name__)} is not accepted while the hand is {self._phase_text()}",
            )
        for cls in type(event).__mro__:
            handler = HANDLERS.get(cls)
            if handler is not None:
                return handler
        raise IllegalAction("engine.phase", f"{type(event).__name__} has no handler")

    def _phase_text(self) -> str:
        if self.phase in (Phase.DEALING, Phase.BETTING):
            return f"{self.phase.value} on {STREET_NAMES[self.street]}"
        return {Phase.SHOWDOWN: "at showdown", Phase.COMPLETE: "over"}[self.phase]


# The handler of each input event, by class: the parts' methods, named once here.
HANDLERS: dict[type[Event], Callable[[Hand, Any], None]] = {
    CardDealt: Hand._on_card_dealt,
    CardBurned: Hand._on_card_burned,
    CommonCardDealt: Hand._on_common_card_dealt,
    DeckReshuffled: Hand._on_deck_reshuffled,
    PlayerAction: Hand._on_player_action,
    CardsShown: Hand._on_cards_shown,
    HandMucked: Hand._on_hand_mucked,
    HoleCardExposed: Hand._on_hole_card_exposed,
    HandKilled: Hand._on_hand_killed,
    HandVoided: Hand._on_hand_voided,
    ActionWithdrawn: Hand._on_action_withdrawn,
    AllInDeclared: Hand._on_all_in_declared,
    CardTakenBack: Hand._on_card_taken_back,
    CardsRemoved: Hand._on_cards_removed,
    FinalCardKept: Hand._on_final_card_kept,
    DealCorrected: Hand._on_deal_corrected,
    UpCardCorrected: Hand._on_up_card_corrected,
    BringInWithdrawn: Hand._on_bring_in_withdrawn,
    CallOnly: Hand._on_call_only,
    ExtraCardReturned: Hand._on_extra_card_returned,
    EntryUndone: Hand._on_entry_undone,
}

# ``apply``'s dispatch, one dict lookup per input: phase -> event class -> handler.
_DISPATCH: dict[Phase, dict[type[Event], Callable[[Hand, Any], None]]] = {
    phase: {cls: HANDLERS[cls] for cls in accepted} for phase, accepted in ACCEPTS.items()
}
