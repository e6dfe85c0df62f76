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
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from functools import lru_cache
from typing import Any

from engine.cards import UNKNOWN, Card
from engine.events import (
    ActionWithdrawn,
    AllInDeclared,
    Announcement,
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
    PotAward,
    UpCardCorrected,
)
from engine.ranking import (
    describe_board_high,
    describe_board_low,
    describe_high,
    describe_low,
    high_board_value,
    high_value,
    low_board_value,
    low_value,
)
from engine.rules import GameConfig, Variant
from engine.showdown import Pot, Scores, build_pots, kill_losing_hands, pots_without, split_pot

STREET_NAMES = ("third street", "fourth street", "fifth street", "sixth street", "seventh street")
# (down, up) cards each live seat receives on each street (RRoP 8.0; 001 dealing order).
STREET_DEAL = ((2, 1), (0, 1), (0, 1), (0, 1), (1, 0))
# (down, up) a seat holds once each street is fully dealt.
DUE = tuple(
    (sum(d for d, _ in STREET_DEAL[: k + 1]), sum(u for _, u in STREET_DEAL[: k + 1])) for k in range(len(STREET_DEAL))
)
HELD = tuple(d + u for d, u in DUE)  # cards a seat holds once each street is fully dealt
CARDS_IN_DECK = 52


class Phase(StrEnum):
    DEALING = "dealing"
    BETTING = "betting"
    SHOWDOWN = "showdown"
    COMPLETE = "complete"


# The hot paths compare phases with these: in Python 3.11 every ``Phase.X`` is a metaclass
# attribute lookup, several times the cost of a module global.
_DEALING, _BETTING, _COMPLETE = Phase.DEALING, Phase.BETTING, Phase.COMPLETE
_RAZZ = Variant.RAZZ
_new = object.__new__

# Which input events each phase accepts at all (finer checks follow per event).
ACCEPTS: dict[Phase, tuple[type[Event], ...]] = {
    Phase.DEALING: (
        CardDealt, CardBurned, CommonCardDealt, DeckReshuffled, CardsShown,
        HoleCardExposed, HandKilled, HandVoided, CardsRemoved,
        DealCorrected, UpCardCorrected, ExtraCardReturned, CardTakenBack, AllInDeclared,
    ),
    Phase.BETTING: (
        PlayerAction, CardsShown, HandKilled, HandVoided, CardsRemoved, ActionWithdrawn, HoleCardExposed,
        FinalCardKept, DealCorrected, UpCardCorrected, BringInWithdrawn, ExtraCardReturned, CallOnly,
        CardTakenBack, AllInDeclared,
    ),
    Phase.SHOWDOWN: (CardsShown, HandMucked, HandKilled, HandVoided),
    Phase.COMPLETE: (CardsShown,),
}


_HANDLERS: dict[type[Event], str] = {
    cls: "_on_" + cls.type for accepted in ACCEPTS.values() for cls in accepted
}


class IllegalAction(ValueError):
    """An input the hand refuses; nothing was changed.

    ``rule`` is the clause (or engine invariant) that refuses it, so a
    dealer's screen can say why.
    """

    def __init__(self, rule: str, message: str) -> None:
        super().__init__(f"{message} [{rule}]")
        self.rule = rule
        self.reason = message


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
    # them (``Hand._recount`` after any change other than a deal), so not compared or shown.
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

    def snapshot(self) -> dict[str, Any]:
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


@dataclass(frozen=True)
class Option:
    """One legal action: ``amount`` is chips added for call and bring-in, the
    street total ("to") for complete, bet and raise."""

    action: str
    amount: int = 0
    all_in: bool = False

    @property
    def label(self) -> str:
        suffix = " (all in)" if self.all_in else ""
        match self.action:
            case "fold" | "check":
                return self.action.capitalize() + suffix
            case "call":
                return f"Call {self.amount}{suffix}"
            case "bring_in":
                return f"Bring in {self.amount}{suffix}"
            case "complete":
                return f"Complete to {self.amount}{suffix}"
            case "bet":
                return f"Bet {self.amount}{suffix}"
            case _:
                return f"Raise to {self.amount}{suffix}"

    def to_json(self) -> dict[str, Any]:
        return {"action": self.action, "amount": self.amount, "all_in": self.all_in, "label": self.label}


@dataclass(frozen=True)
class Options:
    seat: int
    options: tuple[Option, ...]
    to_call: int

    def find(self, action: str, amount: int | None = None) -> Option | None:
        for o in self.options:
            if o.action == action and (amount is None or o.amount == amount):
                return o
        return None

    def to_json(self) -> dict[str, Any]:
        return {"seat": self.seat, "to_call": self.to_call, "options": [o.to_json() for o in self.options]}


@dataclass(slots=True)
class BettingRound:
    """A street's wagers.  Field names follow the rule text where they can."""

    street: int
    unit: int  # the bet for this street (small or big)
    big_option: bool = False  # RRoP stud 4: open pair on 4th, small or big bet until a big one is made
    to: int = 0  # the level everyone must match ("current bet")
    full_to: int = 0  # the last level reached by a full wager (RRoP 3.5 short all-ins)
    count: int = 0  # bets/completions/raises counted against the cap
    capped: bool = False
    bring_in_open: bool = False  # third street before anyone has brought it in
    bring_in_forced: bool = False  # the player to act must bring in or complete (cannot fold)
    completion_pending: bool = False  # third street before anyone has completed
    last_increment: int = 0  # largest wager increment so far (PokerKit's reopen test)
    short_all_ins: list[int] = field(default_factory=list)
    acted: set[int] = field(default_factory=set)  # seats that acted since the last full wager
    to_act: list[int] = field(default_factory=list)
    aggressor: int | None = None
    opener: int | None = None
    # Seats that may only call on this street (RRoP stud 14: premature seventh card kept).
    call_only: set[int] = field(default_factory=set)

    def snapshot(self) -> dict[str, Any]:
        return {
            "street": self.street,
            "unit": self.unit,
            "big_option": self.big_option,
            "to": self.to,
            "full_to": self.full_to,
            "count": self.count,
            "capped": self.capped,
            "bring_in_open": self.bring_in_open,
            "bring_in_forced": self.bring_in_forced,
            "completion_pending": self.completion_pending,
            "last_increment": self.last_increment,
            "short_all_ins": list(self.short_all_ins),
            "acted": sorted(self.acted),
            "to_act": list(self.to_act),
            "aggressor": self.aggressor,
            "opener": self.opener,
            "call_only": sorted(self.call_only),
        }


# Options are immutable values and the same few recur at every table: built once, reused.
_option: Callable[[str, int, bool], Option] = lru_cache(maxsize=1024)(Option)
_OPTIONS_MEMO_SIZE = 20_000
_OPTIONS: dict[tuple[int | str | bool, ...], Options] = {}  # see ``Hand._options_for``
_wager_words: dict[tuple[int | str | bool, ...], Announcement] = {}  # see ``Hand._wager``
_RAISE_NAMES = {2: "Raise", 3: "Three bets", 4: "Four bets"}
_FOLD = Option("fold")
_CHECK = Option("check")


def _options(seat: int, options: tuple[Option, ...], to_call: int) -> Options:
    """``Options(seat, options, to_call)`` without the frozen dataclass's ``__init__``."""
    opts = _new(Options)
    fields_ = opts.__dict__
    fields_["seat"] = seat
    fields_["options"] = options
    fields_["to_call"] = to_call
    return opts


def _announcement(kind: str, text: str, seats: tuple[int, ...] = ()) -> Announcement:
    """``Announcement(kind, text, seats)`` without the frozen dataclass's ``__init__``."""
    a = _new(Announcement)
    fields_ = a.__dict__
    fields_["kind"] = kind
    fields_["text"] = text
    fields_["seats"] = seats
    return a


class Hand:
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
        self.config: GameConfig = start.config
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
        self.events: list[Event] = [start]
        self.phase = Phase.DEALING
        self.street = 0
        self.burns: list[Card] = []
        self.burned_this_street = False
        self.common: list[Card] = []
        self.recycled: set[Card] = set()  # back in the stub after a reshuffle (RRoP stud 15)
        self.stub = CARDS_IN_DECK  # cards left in the dealer's hand, unknown ones included
        self.removed: list[Card] = []  # RRoP stud 14: premature cards set aside
        self.early: set[int] = set()  # RRoP stud 14: seats that kept a seventh card dealt during sixth street
        self.burn_ahead = False  # RRoP 3.4: an extra third-street card is the fourth-street burn
        self.street_start = 1  # index in ``events`` of the current street's first card (RRoP stud 13)
        self.voided = False  # RRoP 3.2, 3.4: all action void, every chip returned
        self.seen: set[Card] = set()  # identified cards out of the stub: on seats, burned, common
        self._options_cache: tuple[int, Options] | None = None
        self.round: BettingRound | None = None
        self.last_round: BettingRound | None = None
        self.to_show: list[int] = []
        self.awards: list[PotAward] = []
        self.pots: list[Pot] = []
        self.announcements: list[Announcement] = []
        self.paired_announced: set[int] = set()
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

    def snapshot(self) -> dict[str, Any]:
        """The whole state as plain data (secret cards included)."""
        return {
            "hand_id": self.hand_id,
            "config": self.config.to_json(),
            "phase": self.phase.value,
            "street": self.street,
            "seats": [s.snapshot() for s in self.seats],
            "burns": [str(c) for c in self.burns],
            "burned_this_street": self.burned_this_street,
            "common": [str(c) for c in self.common],
            "recycled": sorted(str(c) for c in self.recycled),
            "stub": self.stub,
            "removed": [str(c) for c in self.removed],
            "early": sorted(self.early),
            "burn_ahead": self.burn_ahead,
            "voided": self.voided,
            "round": self.round.snapshot() if self.round else None,
            "last_round": self.last_round.snapshot() if self.last_round else None,
            "to_show": list(self.to_show),
            "awards": [vars(a) for a in self.awards],
            "announcements": [vars(a) for a in self.announcements],
        }

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Hand) and self.snapshot() == other.snapshot()

    __hash__ = None  # type: ignore[assignment]

    # ------------------------------------------------------------- queries

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
        if s.last_up and self.street == 4:
            return (down_due - 1, up_due + 1)  # RRoP stud 16-17: the last card plays face up
        return (down_due, up_due)

    def needs(self, s: SeatState) -> tuple[int, int]:
        """(down, up) cards this seat still needs on the current street."""
        if self.phase is not Phase.DEALING or not s.live or (self.common and self.street == 4):
            return (0, 0)
        down_due, up_due = self.due(s)
        return (max(0, down_due - s.n_down), max(0, up_due - s.n_up))

    def common_card_street(self) -> bool:
        return bool(self.common) and self.street == 4

    def stub_size(self) -> int:
        """Cards left in the dealer's hand (unknown cards count too)."""
        return self.stub

    def reshuffle_pool(self) -> int:
        """Cards the dealer can still deliver if the burns are reshuffled (RRoP stud 15)."""
        folded = sum(len(s.cards) for s in self.seats if not s.live)
        live = sum(len(s.cards) for s in self.seats if s.live)
        muck = folded if self.config.rules.reshuffle_includes_muck else 0
        return CARDS_IN_DECK - live - len(self.common) - (folded - muck)

    def expected_deal(self) -> list[tuple[str, int | None, bool]]:
        """What a dealer delivers next this street, in order: ("burn", None, False)
        or ("card", seat, face_up).  Burns are optional for the hand itself."""
        if self.phase is not Phase.DEALING:
            return []
        slots: list[tuple[str, int | None, bool]] = []
        if (
            self.street > 0
            and not self.burned_this_street
            and not any(
                len(s.cards) > sum(d + u for d, u in STREET_DEAL[: self.street]) and s.seat not in self.early
                for s in self.live_seats
            )
        ):
            slots.append(("burn", None, False))
        if self.street == 0:
            # Two rounds of down cards, then the door cards, each from the dealer's left
            # (a seat whose hole card was turned up gets its third card down: RRoP stud 5).
            counts = {s.seat: (s.n_down, s.n_up) for s in self.live_seats}
            for rnd in range(3):
                for s in self.live_seats:
                    n_down, n_up = counts[s.seat]
                    if n_down + n_up <= rnd:
                        face_up = n_up == 0 if rnd == 2 else n_down >= 2
                        slots.append(("card", s.seat, face_up))
                        counts[s.seat] = (n_down + (not face_up), n_up + face_up)
        else:
            for s in self.live_seats:
                down, up = self.needs(s)
                if down or up:
                    slots.append(("card", s.seat, bool(up)))
        return slots

    def next_deal(self) -> tuple[str, int | None, bool] | None:
        """The first of ``expected_deal``, found without listing the rest."""
        if self.phase is not _DEALING:
            return None
        street = self.street
        if street > 0 and not self.burned_this_street:
            delivered = DUE[street - 1]
            held = delivered[0] + delivered[1]
            for s in self.seats:
                if not s.folded and not s.mucked and s.n_down + s.n_up > held and not (self.early and s.seat in self.early):
                    break
            else:
                return ("burn", None, False)
        # The seats are looked at in dealing order from ``_deal_from``: every place before it
        # was found served already on this street, and a served seat stays served until a
        # ruling takes cards back (which resets it, in ``_after_card``).
        seats = self.seats
        n = len(seats)
        start = self._deal_from
        if street == 0:
            # Third street: round 0 and 1 down, round 2 the door card (places rnd * n + i).
            for rnd in (0, 1, 2):
                base = rnd * n
                if start >= base + n:
                    continue
                for i in range(start - base if start > base else 0, n):
                    s = seats[i]
                    if s.n_down + s.n_up <= rnd and not s.folded and not s.mucked:
                        self._deal_from = base + i
                        return ("card", s.seat, s.n_up == 0 if rnd == 2 else s.n_down >= 2)
            self._deal_from = 3 * n
            return None
        elif street == 4 and self.common:
            return None  # the common card plays for everyone (see ``needs``)
        down_due, up_due = DUE[street]
        for i in range(start, n):
            s = seats[i]
            if not s.folded and not s.mucked:
                if s.last_up and street == 4:
                    d, u = self.due(s)
                    if s.n_down < d or s.n_up < u:
                        self._deal_from = i
                        return ("card", s.seat, s.n_up < u and s.n_down >= d)
                elif s.n_down < down_due or s.n_up < up_due:
                    self._deal_from = i
                    return ("card", s.seat, s.n_up < up_due and s.n_down >= down_due)
        self._deal_from = n
        return None

    def options(self) -> Options | None:
        """Every legal action for the player to act, with exact amounts."""
        rnd = self.round
        if self.phase is not _BETTING or rnd is None or not rnd.to_act:
            return None
        # Asked once by the screen and once more by ``apply``: computed once per position in the log.
        cached = self._options_cache
        position = len(self.events)
        if cached is not None and cached[0] == position:
            return cached[1]
        opts = self._options_for(rnd.to_act[0])
        self._options_cache = (position, opts)
        return opts

    def up_cards_for_ranking(self, s: SeatState) -> list[Card]:
        return [c for c, up in s.cards if up and c.known] + self.common

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
        handler: Callable[[Hand, Any], None] = getattr(Hand, _HANDLERS[type(event)])
        return handler

    def _phase_text(self) -> str:
        if self.phase in (Phase.DEALING, Phase.BETTING):
            return f"{self.phase.value} on {STREET_NAMES[self.street]}"
        return {Phase.SHOWDOWN: "at showdown", Phase.COMPLETE: "over"}[self.phase]

    # ------------------------------------------------------------- dealing

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

    def _seen_cards(self) -> set[Card]:
        return set(self.seen)

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
        if c.known and c in self.seen:
            # RRoP 3.4: two cards of the same rank and suit; the irregularity layer rules on it.
            raise IllegalAction(
                "RRoP 3.4 duplicate card",
                f"the {c.name} ({c}) was already dealt in this hand ({what if seat is None else f'{what} {seat}'})",
            )

    def _on_card_dealt(self, e: CardDealt) -> None:
        try:
            s = self.seats[self._index[e.seat]]
        except KeyError:
            s = None
        if s is None:
            s = self.seat(e.seat)  # refuses the unknown seat
        if s.folded or s.mucked:
            raise IllegalAction("engine.deal", f"seat {e.seat} is out of this hand and gets no cards")
        street = self.street
        face_up = e.face_up
        if street == 4 and (self.common or s.last_up):
            if self.common:
                down_due = up_due = -1  # the common card was the seventh card for everyone
            else:
                down_due, up_due = self.due(s)
        else:
            down_due, up_due = DUE[street]
        n_down = s.n_down
        n_up = s.n_up
        if (n_up >= up_due) if face_up else (n_down >= down_due):
            down, up = max(0, down_due - n_down), max(0, up_due - n_up)
            if down <= 0 and up <= 0:
                raise IllegalAction(
                    "engine.deal", f"seat {e.seat} already has its cards for {STREET_NAMES[self.street]}"
                )
            want = "down" if down > 0 else "up"
            got = "up" if face_up else "down"
            raise IllegalAction(
                "RRoP stud 5/17",
                f"seat {e.seat}'s next card on {STREET_NAMES[self.street]} is dealt {want}, not {got}",
            )
        # RRoP stud 15: before the first seventh card, with the stub short, a common card if
        # even the burns reshuffled cannot give every player a card.
        if street == 4 and self.stub < self._owed and not any(o.n_down == 3 for o in self.live_seats):
            waiting = sum(1 for o in self.live_seats if self.needs(o) != (0, 0))
            if self.reshuffle_pool() < waiting:
                raise IllegalAction(
                    "RRoP stud 15",
                    f"only {self.reshuffle_pool()} cards for {waiting} players: deal one common card face up",
                )
        c = e.card
        # ``_check_new_card`` and ``_take_from_stub``, inline: every card of every hand comes here.
        if self.stub <= 0 or (c.known and c in self.seen):
            self._check_new_card(c, "dealt to seat", e.seat)
        self.stub -= 1
        if self.recycled:
            self.recycled.discard(c)
        if c.known:
            self.seen.add(c)
        s.cards.append((c, face_up))
        if face_up:
            s.n_up = n_up = n_up + 1
            s.up_key *= c.prime
        else:
            s.n_down = n_down = n_down + 1
        owed = self._owed - 1
        self._owed = owed
        if owed == 0:
            self._begin_betting()  # every live seat has its cards for the street
        elif owed < 0:
            self._after_card()  # cannot happen (test_hand_derived); count again to be safe

    def _on_card_burned(self, e: CardBurned) -> None:
        if self.burned_this_street:
            # RRoP stud 13: two burns for one round is a dealer error to correct.
            raise IllegalAction("RRoP stud 13", f"a card was already burned on {STREET_NAMES[self.street]}")
        delivered = HELD[self.street - 1] if self.street else 0
        for s in self.seats:
            if not s.folded and not s.mucked and len(s.cards) > delivered:
                if not self._burn_may_follow_cards(delivered):
                    raise IllegalAction("RRoP stud 13", "the burn comes before the street's first card")
                break
        c = e.card
        # ``_check_new_card`` and ``_take_from_stub``, inline as for a card dealt.
        if self.stub <= 0 or (c.known and c in self.seen):
            self._check_new_card(c, "burned")
        self._take_from_stub(c)
        self.burns.append(c)
        self.burned_this_street = True

    def _on_common_card_dealt(self, e: CommonCardDealt) -> None:
        # RRoP stud 15: a common card only when there are not enough fresh cards for every player.
        if self.street != 4:
            raise IllegalAction(
                "RRoP stud 15", "a common card is dealt only for the last (seventh-street) card"
            )
        waiting = [s for s in self.live_seats if self.needs(s) != (0, 0)]
        if len(waiting) < len(self.live_seats):
            raise IllegalAction(
                "RRoP stud 15", "some players already have their seventh card; deal theirs to all"
            )
        if self.reshuffle_pool() >= len(waiting):
            raise IllegalAction(
                "RRoP stud 15",
                f"{self.reshuffle_pool()} cards can be dealt to {len(waiting)} players: "
                "deal each a card (reshuffle the burns if needed), no common card",
            )
        if not e.card.known:
            raise IllegalAction("engine.deal", "the common card is face up and must be identified")
        self._check_new_card(e.card, "as the common card")
        self._take_from_stub(e.card)
        self.common.append(e.card)
        self.announcements.append(
            Announcement("common_card", f"Common card: the {e.card.name} plays in every hand", ())
        )
        self._after_card()

    def _on_deck_reshuffled(self, e: DeckReshuffled) -> None:
        # RRoP stud 15: only on the last card, when the stub cannot serve every player.
        if self.street != 4:
            raise IllegalAction(
                "RRoP stud 15", "the deck is reshuffled only for the last (seventh-street) card"
            )
        waiting = sum(1 for s in self.live_seats if self.needs(s) != (0, 0))
        if self.stub_size() > waiting:
            raise IllegalAction(
                "RRoP stud 15",
                f"{self.stub_size()} cards are left for {waiting} players; no reshuffle is needed",
            )
        back = list(self.burns) + list(self.removed)  # RRoP stud 15: and any cards removed from the deck
        if self.config.rules.reshuffle_includes_muck:
            back += [c for s in self.seats if not s.live for c in s.all_cards]
        back = [c for c in back if c not in self.recycled or not c.known]
        self.stub += len(back)
        self.recycled |= {c for c in back if c.known}
        self.seen -= self.recycled
        self.burned_this_street = False  # RRoP stud 15: the dealer burns again (if cards allow)
        self.announcements.append(
            Announcement(
                "reshuffle", "Out of cards: the last card is mixed with the burn cards, scrambled and cut"
            )
        )

    # ------------------------------------------------------------ rulings

    def _on_hole_card_exposed(self, e: HoleCardExposed) -> None:
        s = self.seat(e.seat)
        if not s.live:
            raise IllegalAction("engine.ruling", f"seat {e.seat} is out of the hand")
        if self.street == 0:
            # RRoP stud 5: a first or second hole card turned up becomes the up card; the third comes down.
            if s.n_up == 0 and s.n_down > 0:
                k = max(i for i, (_, up) in enumerate(s.cards) if not up)
                s.cards[k] = (s.cards[k][0], True)
                self._recount(s)
            elif not (s.n_up == 1 and s.n_down < 2):
                raise IllegalAction("RRoP stud 5", f"seat {e.seat} has no exposed hole card on third street")
            s.exposed_door = True
            self.announcements.append(
                Announcement("ruling", f"Seat {e.seat}'s hole card was exposed: the third card comes down", (e.seat,))
            )
        elif self.street == 4:
            # RRoP stud 16-17: the last card dealt face up is kept and plays face up.
            rnd = self.round
            if rnd is not None and (rnd.acted or rnd.to or s.n_down <= 2):
                raise IllegalAction("RRoP stud 17", "the last card is ruled face up before the betting starts")
            if s.n_down > 2:
                k = max(i for i, (_, up) in enumerate(s.cards) if not up)
                s.cards[k] = (s.cards[k][0], True)
                self._recount(s)
            s.last_up = True
            self.announcements.append(
                Announcement("ruling", f"Seat {e.seat}'s last card plays face up", (e.seat,))
            )
        else:
            raise IllegalAction("RRoP stud 5", "a hole card is exposed on third or seventh street only")
        if self.round is not None:
            # RRoP stud 17: the last card was dealt before anyone acted: the hand now high on the
            # board using all the up cards starts the action.
            self.round = None
            self._begin_betting()
            return
        self._after_card()

    def _on_hand_killed(self, e: HandKilled) -> None:
        s = self.seat(e.seat)
        if not s.live:
            raise IllegalAction("engine.ruling", f"seat {e.seat}'s hand is already out")
        idx = self._index[e.seat]
        s.folded = True
        s.killed = e.rule
        if e.refund_ante:
            # RRoP stud 5: both hole cards dealt up: dead hand, ante returned.
            s.stack += s.ante
            s.committed -= s.ante
            s.ante = 0
        self.announcements.append(Announcement("dead_hand", f"Seat {e.seat}'s hand is dead", (e.seat,)))
        if len(self.live_seats) == 1:
            self._award_uncontested()
            return
        if self.phase is Phase.BETTING and self.round is not None:
            if idx in self.round.to_act:
                self.round.to_act.remove(idx)
            self._maybe_close_round()
        elif self.phase is Phase.DEALING:
            self._after_card()
        elif self.phase is Phase.SHOWDOWN:
            if idx in self.to_show:
                self.to_show.remove(idx)
            self._maybe_settle()

    def _on_hand_voided(self, e: HandVoided) -> None:
        # RRoP 3.2 misdeal; 3.4 foreign or duplicate card: all action void, chips back to who wagered them.
        for s in self.seats:
            s.stack = s.starting_stack
            s.committed = 0
            s.bet = 0
            s.reserved = 0
        self.voided = True
        self.round = None
        self.to_show = []
        self.phase = Phase.COMPLETE
        self.announcements.append(Announcement("voided", "All action is void: every chip goes back", ()))

    def _on_action_withdrawn(self, e: ActionWithdrawn) -> None:
        # RRoP 3.5: unaware of a raise, a player may withdraw the chips and reconsider,
        # provided no one else has acted after.  The hand is rebuilt without that action.
        last = self.events[-1] if self.events else None
        if not isinstance(last, PlayerAction) or last.seat != e.seat:
            raise IllegalAction(
                "RRoP 3.5", f"only seat {e.seat}'s own last action, with nobody acting after it, can be withdrawn"
            )
        full = self.events
        rebuilt = Hand.replay(full[:-1])
        self.__dict__.update(rebuilt.__dict__)
        self.events = full
        self._options_cache = None
        self.announcements.append(
            Announcement("ruling", f"Seat {e.seat} takes back the {last.action}: seat {self.to_act} to act", (e.seat,))
        )

    def _on_all_in_declared(self, e: AllInDeclared) -> None:
        # RRoP stud 17(a),(b): the player whose last card was dealt face up may declare all in
        # before the betting starts; the chips behind are set aside until the hand is over.
        s = self.seat(e.seat)
        rnd = self.round
        if self.street != 4 or not s.live or not s.last_up:
            raise IllegalAction("RRoP stud 17", f"seat {e.seat}'s last card was not dealt face up")
        if self.phase is Phase.BETTING and rnd is not None and (rnd.count or rnd.acted or rnd.to):
            raise IllegalAction("RRoP stud 17", "the all-in is declared before the betting action starts")
        if s.stack == 0:
            raise IllegalAction("RRoP stud 17", f"seat {e.seat} is all in already")
        s.reserved, s.stack = s.stack, 0
        self.announcements.append(Announcement("all_in", f"Seat {e.seat} declares all in", (e.seat,)))
        if self.phase is Phase.BETTING and rnd is not None:
            idx = self._index[e.seat]
            if idx in rnd.to_act:
                rnd.to_act.remove(idx)
            if len(rnd.to_act) == 1:
                rnd.to_act.clear()  # nobody left to bet against
            self._options_cache = None
            self._maybe_close_round()

    def _on_card_taken_back(self, e: CardTakenBack) -> None:
        # RRoP 3.4: a boxed card (or a joker) is a scrap of paper, replaced by the next card.
        # Only the card just delivered can be taken back; the hand is rebuilt without it and
        # the card is set aside, so the seat (or the burn) is due again.
        last = self.events[-1] if self.events else None
        if not isinstance(last, CardDealt | CardBurned) or last.card != e.card or not e.card.known:
            raise IllegalAction(
                "RRoP 3.4", f"only the card just delivered can be taken back, and the {e.card.name} was not"
            )
        full = self.events
        rebuilt = Hand.replay(full[:-1])
        rebuilt._take_from_stub(e.card)
        rebuilt.removed.append(e.card)
        self.__dict__.update(rebuilt.__dict__)
        self.events = full
        self._options_cache = None
        where = f"seat {last.seat}" if isinstance(last, CardDealt) else "the burn"
        self.announcements.append(
            Announcement("ruling", f"The {e.card.name} is a scrap of paper: the next card goes to {where}", ())
        )

    def _on_cards_removed(self, e: CardsRemoved) -> None:
        # RRoP stud 14: premature cards do not play; they are held aside for a reshuffle.
        if not e.cards:
            raise IllegalAction("RRoP stud 14", "no cards to remove")
        for c in e.cards:
            self._check_new_card(c, "set aside")
        for c in e.cards:
            self._take_from_stub(c)
            self.removed.append(c)

    def _burn_may_follow_cards(self, delivered: int) -> bool:
        """The rare cases where a burn comes after some seat already has this street's card."""
        if self.street == 4 and self.recycled:
            return True  # RRoP stud 15: after the reshuffle the dealer burns again
        return all(len(s.cards) <= delivered or s.seat in self.early for s in self.seats if s.live)

    def _on_final_card_kept(self, e: FinalCardKept) -> None:
        # RRoP stud 14: a premature final down card looked at or mixed in is kept; the player
        # may not bet or raise on sixth street (holding all seven cards), but can call.
        rnd = self.round
        if self.street != 3 or rnd is None:
            raise IllegalAction("RRoP stud 14", "only a seventh card dealt during sixth-street betting is kept early")
        s = self.seat(e.seat)
        if not s.live:
            raise IllegalAction("engine.ruling", f"seat {e.seat} is out of the hand")
        if len(s.cards) != sum(DUE[3]) or s.seat in self.early:
            raise IllegalAction("RRoP stud 14", f"seat {e.seat} already has {len(s.cards)} cards")
        if e.card.known and e.card in self.removed:
            self.removed.remove(e.card)  # it was set aside as premature: it comes back to the player
        else:
            self._check_new_card(e.card, "kept by seat", e.seat)
            self._take_from_stub(e.card)
        s.cards.append((e.card, False))
        s.n_down += 1
        self.early.add(s.seat)
        rnd.call_only.add(self._index[e.seat])
        self.announcements.append(
            Announcement(
                "ruling", f"Seat {e.seat} keeps the last card and may only call on sixth street", (e.seat,)
            )
        )

    def street_draws(self) -> list[CardBurned | CardDealt]:
        """This street's burns and cards, in the order they were dealt."""
        return [ev for ev in self.events[self.street_start:] if isinstance(ev, CardBurned | CardDealt)]

    def _on_deal_corrected(self, e: DealCorrected) -> None:
        # RRoP stud 13: two burns or no burn, and the cards cannot be put back in position:
        # the street's draws play where they lie (burn(s) first, then the seats in dealing order).
        if self.street == 0 or self.common:
            raise IllegalAction("RRoP stud 13", "only a street with a burn card (fourth to seventh) can be corrected")
        if e.burns not in (0, 2):
            raise IllegalAction("RRoP stud 13", "the correction is for no burn (0) or two burns (2)")
        rest_events = self.events[self.street_start:]
        if any(not isinstance(ev, CardBurned | CardDealt) for ev in rest_events):
            raise IllegalAction(
                "RRoP stud 13", f"too late to correct the deal on {STREET_NAMES[self.street]}: play has moved on"
            )
        draws = self.street_draws()
        if self.burned_this_street and not any(isinstance(ev, CardBurned) for ev in draws):
            raise IllegalAction("RRoP 3.4", "this street's burn was the extra card returned on third street")
        cards = [ev.card for ev in draws]
        if len(cards) <= e.burns:
            raise IllegalAction("RRoP stud 13", f"only {len(cards)} card(s) drawn on {STREET_NAMES[self.street]}")
        received: dict[int, int] = {}
        for ev in draws:
            if isinstance(ev, CardDealt):
                received[ev.seat] = received.get(ev.seat, 0) + 1
        # Each live seat's holding before this street, and what it is due on it.
        plan: list[tuple[SeatState, bool]] = []
        for s in self.seats:
            if not s.live:
                continue
            k = received.get(s.seat, 0)
            kept = s.cards[: len(s.cards) - k] if k else s.cards
            n_down = sum(1 for _, up in kept if not up)
            n_up = len(kept) - n_down
            down_due, up_due = self.due(s)
            plan += [(s, True)] * max(0, up_due - n_up) + [(s, False)] * max(0, down_due - n_down)
        rest = cards[e.burns:]
        if len(rest) > len(plan):
            raise IllegalAction(
                "RRoP stud 13", f"{len(cards)} cards were drawn for {len(plan)} players and {e.burns} burn(s)"
            )
        # Checked; now change.
        if self.burned_this_street:
            self.burns.pop()
        for s in self.seats:
            k = received.get(s.seat, 0)
            for _ in range(k):
                _, up = s.cards.pop()
                if up:
                    s.n_up -= 1
                else:
                    s.n_down -= 1
        self.burns.extend(cards[: e.burns])
        self.burned_this_street = e.burns > 0
        for c, (s, up) in zip(rest, plan, strict=False):
            s.cards.append((c, up))
        for s in self.seats:
            self._recount(s)
        what = "no card was burned" if e.burns == 0 else "two cards were burned"
        self.announcements.append(
            Announcement("ruling", f"On {STREET_NAMES[self.street]} {what}: the cards play where they lie", ())
        )
        self.round = None
        self.phase = Phase.DEALING
        self._after_card()

    def _on_up_card_corrected(self, e: UpCardCorrected) -> None:
        # An up card misread by the camera or keyed wrongly; RRoP stud 9 when it decides the bring-in.
        s = self.seat(e.seat)
        ups = [k for k, (_, up) in enumerate(s.cards) if up]
        if e.position >= len(ups):
            raise IllegalAction("engine.ruling", f"seat {e.seat} has no up card number {e.position + 1}")
        if not e.card.known:
            raise IllegalAction("engine.ruling", "the corrected card must be identified")
        k = ups[e.position]
        old = s.cards[k][0]
        if old == e.card:
            raise IllegalAction("engine.ruling", f"seat {e.seat}'s up card is already the {e.card.name}")
        if e.card in self.seen:
            raise IllegalAction("RRoP 3.4 duplicate card", f"the {e.card.name} is already elsewhere in this hand")
        s.cards[k] = (e.card, True)
        self._recount(s)
        self.seen.discard(old)
        self.seen.add(e.card)
        self.announcements.append(
            Announcement("ruling", f"Seat {e.seat}'s up card is the {e.card.name}, not the {old.name}", (e.seat,))
        )
        rnd = self.round
        if rnd is not None and not rnd.acted and rnd.to == 0 and not any(
            isinstance(ev, PlayerAction) for ev in self.events[self.street_start:]
        ):
            # Nobody has acted on this round yet: who opens is decided on the true cards.
            self.round = None
            self._begin_betting()

    def _on_bring_in_withdrawn(self, e: BringInWithdrawn) -> None:
        # RRoP stud 9: the wrong low card bet and the next player has not acted: the wager is
        # taken back and the true low card must bring it in.  The hand is rebuilt without it.
        if self.street != 0 or self.round is None:
            raise IllegalAction("RRoP stud 9", "a wrong bring-in is taken back on third street only")
        since = max(
            (k for k, ev in enumerate(self.events) if isinstance(ev, BringInWithdrawn)), default=0
        )
        actions = [k for k in range(since, len(self.events)) if isinstance(self.events[k], PlayerAction)]
        first = self.events[actions[0]] if len(actions) == 1 else None
        if not isinstance(first, PlayerAction) or first.seat != e.seat:
            raise IllegalAction(
                "RRoP stud 9",
                f"seat {e.seat}'s bring-in can be taken back only if it is the only action so far; "
                "once the next player acts the wager stands",
            )
        k = actions[0]
        full = self.events
        rebuilt = Hand.replay(full[:k] + full[k + 1:])
        self.__dict__.update(rebuilt.__dict__)
        self.events = full
        self._options_cache = None
        self.announcements.append(
            Announcement("ruling", f"Seat {e.seat} takes back the bring-in: seat {self.to_act} is low", (e.seat,))
        )

    def _on_call_only(self, e: CallOnly) -> None:
        # RRoP 3.5: a player who checks out of turn may not bet or raise on the next turn to act.
        rnd = self.round
        s = self.seat(e.seat)
        if rnd is None or not s.live:
            raise IllegalAction("RRoP 3.5", f"seat {e.seat} has no turn to act in this round")
        rnd.call_only.add(self._index[e.seat])

    def _on_extra_card_returned(self, e: ExtraCardReturned) -> None:
        # RRoP 3.4: before the first betting round one extra card goes back and is the next burn.
        rnd = self.round
        if self.street != 0 or (rnd is not None and (rnd.acted or not rnd.bring_in_open)):
            raise IllegalAction("RRoP 3.4", "only an extra card before the first betting round is returned as the burn")
        if self.burn_ahead:
            raise IllegalAction("RRoP 3.2(d)", "a second extra card in the starting hands is a misdeal")
        self._check_new_card(e.card, "returned as the burn")
        self._take_from_stub(e.card)
        self.burns.append(e.card)
        self.burn_ahead = True
        self.announcements.append(
            Announcement("ruling", "The extra card is the burn card for fourth street", ())
        )

    def _after_card(self) -> None:
        """Betting begins once every live seat has its cards for the street.

        Until then ``_owed`` counts the cards the live seats are still owed on this street:
        set when a street's deal begins and here (after every ruling that changes who holds
        what), and counted down by each card dealt (``_on_card_dealt``), which calls this
        when it reaches zero."""
        self._deal_from = 0
        if self.common and self.street == 4:
            self._begin_betting()  # RRoP stud 15: the common card is everyone's seventh card
            return
        self._owed = self._owed_cards()
        if self._owed == 0:
            self._begin_betting()

    def _owed_cards(self) -> int:
        """Cards the live seats are still owed on this street (``needs``, summed)."""
        street = self.street
        down_due, up_due = DUE[street]
        owed = 0
        for s in self.seats:
            if not s.folded and not s.mucked:
                if s.last_up and street == 4:
                    d, u = self.due(s)
                    owed += max(0, d - s.n_down) + max(0, u - s.n_up)
                    continue
                if s.n_down < down_due:
                    owed += down_due - s.n_down
                if s.n_up < up_due:
                    owed += up_due - s.n_up
        return owed

    # ------------------------------------------------------------- betting

    def _begin_betting(self) -> None:
        cfg = self.config
        street = self.street
        rnd = BettingRound(street, cfg.small_bet if street < 2 else cfg.big_bet)
        seats = self.seats
        razz = cfg.variant is _RAZZ
        # One pass over the live seats finds who opens and the two largest stacks (bet
        # included): a player can act only while someone else can still match a wager.
        live: list[int] = []
        top = second = -1
        opener = -1
        if street == 0:
            # RRoP stud 1: lowest up card by suit brings it in (ace high); razz 3: highest, ace
            # low.  As one number: rank * 4 + suit.  An unidentified door card (a gap in a
            # record) is never taken to be the bring-in, as in PokerKit.
            best = -2 if razz else 61
            for i, s in enumerate(seats):
                if s.folded or s.mucked:
                    continue
                live.append(i)
                total = s.bet + s.stack
                if total > second:
                    if total > top:
                        second, top = top, total
                    else:
                        second = total
                door = UNKNOWN
                for c, up in s.cards:
                    if up:
                        door = c
                        break
                if razz:
                    key = door.low_rank_value * 4 + door.suit_value if door.known else -1
                    if key > best:
                        opener, best = i, key
                else:
                    key = door.rank_value * 4 + door.suit_value if door.known else 60
                    if key < best:
                        opener, best = i, key
            rnd.bring_in_open = True
            rnd.completion_pending = True
            rnd.opener = opener
            low = seats[opener]
            first = opener
            if low.exposed_door:
                # RRoP stud 5: the exposed card would have been low: action starts to that player's left,
                # who may fold, bring in or complete; the exposed player acts in turn, unforced.
                first = live[(live.index(opener) + 1) % len(live)]
            k = live.index(first)
            order = live[k:] + live[:k] if k else live
            rnd.to_act = to_act = [i for i in order if seats[i].stack > 0 and second > seats[i].bet]
            rnd.bring_in_forced = bool(to_act) and (
                to_act[0] == opener or not cfg.rules.bring_in_passes_with_fold
            ) and not low.exposed_door
            door = low.up[0]
            text = f"{door.name.capitalize()} brings it in"
            if low.exposed_door:
                text = (
                    f"The exposed {door.name} would be low: seat {seats[order[0]].seat} acts first "
                    "and may fold, bring it in or complete"
                )
            elif low.stack == 0:
                # RRoP stud 8: the low card is all in for the ante; the player to the left acts first.
                text = f"{door.name.capitalize()} is low but all in for the ante; seat {self._seat_after(opener)} acts first"
            self.announcements.append(_announcement("low_card", text, (low.seat,)))
        else:
            # RRoP stud 1: high board acts first (razz 3: low board); ties by position.  Each
            # board is looked up once by its rank key (``SeatState.up_key``), for the opener,
            # the open pair and the pairs.
            memo = _BOARDS[razz]
            common_key = 1
            for c in self.common:
                common_key *= c.prime
            best_value: tuple[int, ...] | None = None
            paired: list[int] = []  # live seats with a pair among their up cards
            for i, s in enumerate(seats):
                if s.folded or s.mucked:
                    continue
                live.append(i)
                total = s.bet + s.stack
                if total > second:
                    if total > top:
                        second, top = top, total
                    else:
                        second = total
                key = s.up_key
                entry = memo.get(key)
                if entry is None:
                    entry = _board_entry(key, [c for c, up in s.cards if up and c.known], razz)
                if entry[1]:
                    paired.append(i)
                if common_key != 1:
                    # RRoP stud 15: the common card plays in every hand.
                    key *= common_key
                    entry = memo.get(key) or _board_entry(key, self.up_cards_for_ranking(s), razz)
                value = entry[0]
                if best_value is None or value > best_value:
                    opener, best_value = i, value
            rnd.opener = opener
            # RRoP stud 4: an open pair on fourth street (stud high only) allows the big bet.
            if street == 1 and paired and cfg.variant is Variant.STUD and cfg.rules.open_pair_big_bet:
                rnd.big_option = True
            k = live.index(opener)
            order = live[k:] + live[:k] if k else live
            rnd.to_act = [i for i in order if seats[i].stack > 0 and second > seats[i].bet]
            self._announce_board(opener, rnd, paired)
        # Nobody to bet against: a lone player with chips does not act.
        if len(rnd.to_act) == 1:
            rnd.to_act.clear()
        self.round = rnd
        self.phase = _BETTING
        if not rnd.to_act:
            self._end_round()

    def _board_key(self, i: int) -> tuple[int, ...]:
        up = self.up_cards_for_ranking(self.seats[i])
        if not up:
            return ()  # nothing identified on this board: it never acts first
        return _board_value(up, self.config.variant is _RAZZ)

    def _board_rank_key(self, s: SeatState) -> int:
        """``s.up_key``, with the common card when one plays (RRoP stud 15)."""
        key = s.up_key
        for c in self.common:
            key *= c.prime
        return key

    def _announce_board(self, opener: int, rnd: BettingRound, paired: list[int]) -> None:
        """``paired``: the live seats (indices) showing a pair among their up cards."""
        s = self.seats[opener]
        razz = self.config.variant is _RAZZ
        key = (razz, s.seat, self._board_rank_key(s))
        announcement = _high_hand_words.get(key)
        if announcement is None:
            text = _board_words(self.up_cards_for_ranking(s), razz)
            if len(_high_hand_words) >= _BOARD_MEMO_SIZE:
                _high_hand_words.clear()
            announcement = _high_hand_words[key] = _announcement("high_hand", f"Seat {s.seat}: {text}", (s.seat,))
        self.announcements.append(announcement)
        # RRoP stud 12: all pairs; razz 5: pairs the first time, never face-card pairs.
        announced = self.paired_announced
        for i in paired:
            if i in announced:
                continue
            other = self.seats[i]
            ranks = [c.rank for c, face_up in other.cards if face_up and c.known]
            if len(set(ranks)) == len(ranks):
                continue  # no pair showing
            pairs = {r for r in ranks if ranks.count(r) >= 2}
            if self.config.variant is Variant.RAZZ:
                pairs -= {"J", "Q", "K"}
            if pairs:
                self.paired_announced.add(i)
                from engine.cards import RANK_PLURALS

                names = " and ".join(RANK_PLURALS[r] for r in sorted(pairs, key="23456789TJQKA".index))
                self.announcements.append(
                    _announcement("pair", f"Seat {other.seat} pairs {names}", (other.seat,))
                )
        if rnd.big_option:
            cfg = self.config
            self.announcements.append(
                Announcement(
                    "open_pair",
                    f"Open pair: any player may bet {cfg.small_bet} or {cfg.big_bet}",
                    (s.seat,),
                )
            )

    def _rotate(self, indices: list[int], first: int) -> list[int]:
        """Seat indices (given in ascending order) from ``first`` round the table to its right."""
        return [i for i in indices if i >= first] + [i for i in indices if i < first]

    def _seat_after(self, index: int) -> int:
        n = len(self.seats)
        for k in range(1, n + 1):
            s = self.seats[(index + k) % n]
            if not s.folded and not s.mucked and s.stack > 0:
                return s.seat
        return self.seats[index].seat

    def _effective_stack(self, i: int) -> int:
        """Chips this player can still lose to someone who can match them."""
        s = self.seats[i]
        totals = sorted(o.bet + o.stack for o in self.seats if not o.folded and not o.mucked)
        if len(totals) < 2:
            return 0
        return min(s.stack, max(0, totals[-2] - s.bet))

    def _not_all_in_count(self) -> int:
        return sum(1 for s in self.seats if not s.folded and not s.mucked and s.stack > 0)

    def _options_for(self, idx: int) -> Options:
        rnd = self.round
        assert rnd is not None
        s = self.seats[idx]
        cfg = self.config
        stack = s.stack
        key: tuple[int | str | bool, ...]
        if rnd.bring_in_open:
            # RRoP stud 2: the forced bet may open for a full bet; stud 8: after an all-in low card
            # the next player may also fold.
            amount = min(stack, cfg.bring_in)
            complete = (
                min(stack, cfg.small_bet) if stack > cfg.bring_in or not cfg.rules.short_bring_in_calls_full else 0
            )
            key = (s.seat, "bring_in", rnd.bring_in_forced, amount, amount == stack, complete, complete == stack)
            answer = _OPTIONS.get(key)
            if answer is None:
                opts: list[Option] = []
                if not rnd.bring_in_forced:
                    opts.append(_FOLD)
                opts.append(_option("bring_in", amount, amount == stack))
                if complete:
                    opts.append(_option("complete", complete, complete == stack))
                answer = _OPTIONS[key] = _options(s.seat, tuple(opts), 0)
            return answer
        to = rnd.to
        bet = s.bet
        to_call = to - bet
        if to_call > stack:
            to_call = stack
        elif to_call < 0:
            to_call = 0
        targets = self._raise_targets(idx, s, rnd)
        # The same answers recur at every table: one memo, keyed by what decides the answer.
        if not targets:
            key = (s.seat, to_call, to_call == stack)
        elif len(targets) == 1:
            if rnd.completion_pending or (rnd.full_to == 0 and to > 0 and cfg.rules.half_bet_all_in_reopens):
                kind = "complete"
            elif to == 0:
                kind = "bet"
            else:
                kind = "raise"
            most = stack + bet
            amount = targets[0]
            if amount > most:
                amount = most
            key = (s.seat, to_call, to_call == stack, kind, amount, amount == most)
        else:
            return self._options_with_targets(s, to_call, targets)
        answer = _OPTIONS.get(key)
        if answer is None:
            answer = self._options_with_targets(s, to_call, targets)
            if len(_OPTIONS) >= _OPTIONS_MEMO_SIZE:
                _OPTIONS.clear()
            _OPTIONS[key] = answer
        return answer

    def _options_with_targets(self, s: SeatState, to_call: int, targets: list[int]) -> Options:
        """The options of the player to act who must put in ``to_call`` (0: may check) and may
        bet, complete or raise to each of ``targets`` (or all in for less)."""
        rnd = self.round
        assert rnd is not None
        stack = s.stack
        if to_call > 0:
            first: tuple[Option, ...] = (_FOLD, _option("call", to_call, to_call == stack))
        else:
            first = (_CHECK,)
        if not targets:
            return _options(s.seat, first, to_call)
        if rnd.completion_pending or (
            rnd.full_to == 0 and rnd.to > 0 and self.config.rules.half_bet_all_in_reopens
        ):
            kind = "complete"
        elif rnd.to == 0:
            kind = "bet"
        else:
            kind = "raise"
        most = stack + s.bet
        wagers = []
        for target in targets:
            amount = min(target, most)
            wagers.append(_option(kind, amount, amount == most))
        return _options(s.seat, first + tuple(wagers), to_call)

    def _raise_targets(self, idx: int, s: SeatState, rnd: BettingRound) -> list[int]:
        """The street totals the player at ``idx`` (``s``, to act in ``rnd``) may bet, complete
        or raise to (empty if none)."""
        if rnd.call_only and idx in rnd.call_only:
            return []  # RRoP stud 14: premature seventh card kept, may only call on sixth street
        to = rnd.to
        if s.stack <= to - s.bet:
            return []  # covered: calling puts this player all in
        for o in self.seats:
            if o is not s and not o.folded and not o.mucked and o.stack + o.bet > to:
                break
        else:
            return []  # nobody left who could call a raise
        # RRoP 3.5: a bet and three raises, unlimited heads-up unless capped first.
        if rnd.capped:
            return []
        cfg = self.config
        rules = cfg.rules
        if rnd.count > cfg.max_raises and not (rules.unlimited_heads_up and self._not_all_in_count() <= 2):
            return []  # ``count >= cfg.bet_cap``
        if rules.half_bet_all_in_reopens:
            # RRoP 3.5: an all-in under half a bet does not reopen betting for those who acted.
            if to > rnd.full_to and idx in rnd.acted:
                return []
            if rnd.completion_pending:
                return self._with_big_option([cfg.small_bet], rnd) if rnd.big_option else [cfg.small_bet]
            target = rnd.full_to + rnd.unit
            return self._with_big_option([target], rnd) if rnd.big_option else [target]
        # PokerKit 0.7.7 (wsop2023): only a full raise reopens the betting.
        to_call = to - s.bet  # less than the stack (covered players returned above)
        last_increment = rnd.last_increment
        if to_call < last_increment:
            return []
        if rnd.short_all_ins and sum(rnd.short_all_ins) < last_increment and idx in rnd.acted:
            return []
        if rnd.completion_pending:
            return [cfg.small_bet]
        return [to + (last_increment if last_increment > rnd.unit else rnd.unit)]

    def _with_big_option(self, targets: list[int], rnd: BettingRound) -> list[int]:
        # RRoP stud 4: with an open pair on fourth street, small or big until a big wager is made.
        if rnd.big_option and not rnd.completion_pending:
            big = rnd.full_to + self.config.big_bet
            if big not in targets:
                targets = [*targets, big]
        return targets

    def _on_player_action(self, e: PlayerAction) -> None:
        rnd = self.round
        assert rnd is not None
        idx = self._index.get(e.seat, -1)
        if idx < 0:
            self.seat(e.seat)  # refuses the unknown seat
        s = self.seats[idx]
        to_act = rnd.to_act
        if not to_act:
            raise IllegalAction("engine.turn", "no player is due to act")
        if to_act[0] != idx:
            # RRoP 3.5: acting out of turn; the irregularity layer decides whether it binds.
            raise IllegalAction(
                "RRoP 3.5 out of turn", f"seat {e.seat} acted out of turn; seat {self.to_act} is to act"
            )
        # ``options()``: usually just asked by the dealer's screen, so remembered for this position.
        cached = self._options_cache
        if cached is not None and cached[0] == len(self.events):
            opts = cached[1]
        else:
            opts = self._options_for(idx)
            self._options_cache = (len(self.events), opts)
        action = e.action
        amount = e.amount
        for chosen in opts.options:
            if chosen.action == action and (
                chosen.amount == amount or (amount is None and (action == "check" or action == "fold"))
            ):
                break  # the usual case; everything else is checked in ``_match_option``
        else:
            chosen = self._match_option(opts, e)
            action = chosen.action
        if action == "check" or action == "call":
            amount = chosen.amount
            if amount:
                s.stack -= amount
                s.bet += amount
                s.committed += amount
            del to_act[0]
            rnd.acted.add(idx)
        elif action == "fold":
            s.folded = True
            del to_act[0]
            rnd.acted.add(idx)
            live = 0
            for o in self.seats:
                if not o.folded and not o.mucked:
                    live += 1
            if live == 1:
                self._award_uncontested()
                return
            if not to_act:
                self._end_round()
            return
        elif action == "bring_in":
            self._put(s, chosen.amount)
            del to_act[0]
            rnd.acted.add(idx)
            rnd.bring_in_open = False
            rnd.bring_in_forced = False
            # RRoP stud 4 (000): others enter for at least the normal bring-in.
            level = self.config.bring_in if self.config.rules.short_bring_in_calls_full else chosen.amount
            rnd.to = max(rnd.to, level)
            rnd.aggressor = None
            self.announcements.append(
                _announcement("bring_in", f"Seat {s.seat} brings it in for {chosen.amount}", (s.seat,))
            )
        else:
            self._wager(idx, chosen)
        if s.stack == 0 and action != "check" and not s.folded and not s.mucked:
            self.announcements.append(_announcement("all_in", f"Seat {s.seat} is all in", (s.seat,)))
        if not rnd.to_act:
            self._end_round()

    def _match_option(self, opts: Options, e: PlayerAction) -> Option:
        if e.amount is not None:
            for o in opts.options:
                if o.action == e.action and o.amount == e.amount:
                    return o  # the usual case; everything else is checked below
        same = [o for o in opts.options if o.action == e.action]
        if not same:
            allowed = ", ".join(o.label.lower() for o in opts.options)
            raise IllegalAction(
                self._why_not(e.action),
                f"seat {e.seat} cannot {e.action.replace('_', ' ')} now; allowed: {allowed}",
            )
        if e.amount is None:
            if len(same) > 1:
                raise IllegalAction(
                    "RRoP stud 4", f"say how much: {' or '.join(str(o.amount) for o in same)}"
                )
            return same[0]
        for o in same:
            if o.amount == e.amount:
                return o
        amounts = " or ".join(str(o.amount) for o in same)
        what = "to" if e.action in ("complete", "bet", "raise") else "for"
        raise IllegalAction(
            "RRoP 3.5 fixed limit",
            f"seat {e.seat} cannot {e.action.replace('_', ' ')} {what} {e.amount}; the amount is {amounts}",
        )

    def _why_not(self, action: str) -> str:
        rnd = self.round
        if action == "fold" and rnd and not rnd.bring_in_open:
            return "RRoP stud 7: fold with no wager"
        if action in ("check", "call", "fold") and rnd and rnd.bring_in_open:
            return "RRoP stud 1: forced bring-in"
        if action in ("bet", "raise", "complete"):
            if rnd and rnd.capped:
                return "RRoP 3.5 raise cap"
            return "RRoP 3.5"
        return "engine.options"

    def _put(self, s: SeatState, amount: int) -> None:
        s.stack -= amount
        s.bet += amount
        s.committed += amount

    def _wager(self, idx: int, chosen: Option) -> None:
        rnd = self.round
        assert rnd is not None
        seats = self.seats
        s = seats[idx]
        rules = self.config.rules
        target = chosen.amount
        previous_to = rnd.to
        increment = target - previous_to
        added = target - s.bet
        s.stack -= added
        s.bet = target
        s.committed += added
        all_in = s.stack == 0
        rnd.bring_in_open = False
        rnd.bring_in_forced = False
        was_completion = rnd.completion_pending
        if rules.half_bet_all_in_reopens:
            base = 0 if rnd.completion_pending else rnd.full_to
            full_size = self.config.small_bet if rnd.completion_pending else rnd.unit
            # RRoP 3.5: an all-in of half a bet or more is a full bet.
            full = not all_in or (target - base) * 2 >= full_size or target >= base + full_size
            if full:
                if rnd.big_option and target - base >= self.config.big_bet and not was_completion:
                    # RRoP stud 4: after a big bet or raise on the open pair, all raises are big.
                    rnd.unit = self.config.big_bet
                    rnd.big_option = False
                rnd.full_to = target
                rnd.count += 1
                rnd.acted = {idx}
                rnd.completion_pending = False
            rnd.to = max(rnd.to, target)
        else:
            rnd.completion_pending = False
            if increment >= rnd.last_increment:
                rnd.acted = {idx}
            rnd.last_increment = max(rnd.last_increment, increment)
            rnd.count += 1
            if all_in:
                rnd.short_all_ins.append(increment)
            else:
                rnd.short_all_ins.clear()
            if sum(rnd.short_all_ins) >= rnd.last_increment:
                rnd.short_all_ins.clear()
            rnd.to = target
            rnd.full_to = target
        rnd.acted.add(idx)
        rnd.aggressor = idx
        # Everyone else who can still act must answer the wager, from this player's left.
        to_act = [i for i in range(idx + 1, len(seats)) if (o := seats[i]).stack > 0 and not o.folded and not o.mucked]
        if idx:
            to_act += [i for i in range(idx) if (o := seats[i]).stack > 0 and not o.folded and not o.mucked]
        rnd.to_act = to_act
        if rnd.count >= self.config.bet_cap and self._not_all_in_count() >= 3:
            rnd.capped = True
        # The words depend on these only, and recur: remembered.
        key = (s.seat, chosen.action, target, rnd.count, rnd.capped, was_completion)
        announcement = _wager_words.get(key)
        if announcement is None:
            if len(_wager_words) >= _OPTIONS_MEMO_SIZE:
                _wager_words.clear()
            announcement = _wager_words[key] = self._wager_announcement(s, chosen, rnd, was_completion)
        self.announcements.append(announcement)

    def _wager_announcement(
        self, s: SeatState, o: Option, rnd: BettingRound, completion: bool
    ) -> Announcement:
        if completion and o.action == "complete":
            text = f"Seat {s.seat} completes to {o.amount}"
        elif o.action == "bet":
            text = f"Seat {s.seat} bets {o.amount}"
        elif rnd.count <= 1:
            text = f"Seat {s.seat} {'completes' if o.action == 'complete' else 'raises'} to {o.amount}"
        else:
            text = _RAISE_NAMES.get(rnd.count, f"{rnd.count} bets")
            if rnd.capped:
                text += ", capped"
            text = f"{text}: seat {s.seat} to {o.amount}"
        return _announcement("raise" if rnd.count > 1 else "bet", text, (s.seat,))

    def _maybe_close_round(self) -> None:
        rnd = self.round
        assert rnd is not None
        if self.phase is Phase.COMPLETE:
            return
        if not rnd.to_act:
            self._end_round()

    def _end_round(self) -> None:
        rnd = self.round
        assert rnd is not None
        # An uncalled bet, or the part of it nobody matched, goes back to its owner: whatever
        # is above the second largest bet.
        seats = self.seats
        top = cutoff = -1
        for s in seats:
            bet = s.bet
            if bet > cutoff:
                if bet > top:
                    cutoff, top = top, bet
                else:
                    cutoff = bet
        live = 0
        for s in seats:
            if s.bet:
                if s.bet > cutoff:
                    s.stack += s.bet - cutoff
                    s.committed -= s.bet - cutoff
                s.bet = 0
            if not s.folded and not s.mucked:
                live += 1
        self.last_round = rnd
        self.round = None
        if live == 1:
            self._award_uncontested()
            return
        if self.street == 4:
            self._begin_showdown(rnd)
            return
        self.street += 1
        # RRoP 3.4: an extra card returned on third street is already the fourth-street burn.
        self.burned_this_street = self.burn_ahead
        self.burn_ahead = False
        self.street_start = len(self.events) + 1  # the input being applied is appended after this
        self.phase = _DEALING
        self._owed = self._owed_cards()
        self._deal_from = 0

    # ------------------------------------------------------------ showdown

    def _begin_showdown(self, last: BettingRound) -> None:
        # RRoP 3.6: the last bettor or raiser shows first; if all checked, the first to act.
        first = last.aggressor if last.aggressor is not None else last.opener
        assert first is not None
        live = [i for i, s in enumerate(self.seats) if not s.folded and not s.mucked]
        order = self._rotate(live, first)
        if self.config.rules.separate_pots:
            # RRoP 3.6: players in a side pot show before anyone all in for the main pot only.
            top = max(self.seats[i].committed for i in live)
            order.sort(key=lambda i: 0 if self.seats[i].committed >= top else 1)
        self.to_show = order
        self.phase = Phase.SHOWDOWN
        self.announcements.append(
            _announcement(
                "showdown",
                f"Showdown: seat {self.seats[order[0]].seat} shows first",
                (self.seats[order[0]].seat,),
            )
        )

    def _on_cards_shown(self, e: CardsShown) -> None:
        s = self.seat(e.seat)
        if not s.live:
            raise IllegalAction("engine.show", f"seat {e.seat} is out of the hand")
        down_positions = [k for k, (_, up) in enumerate(s.cards) if not up]
        shown = list(e.cards)
        if len(shown) == len(s.cards):
            # All seven given: the up cards must match what is on the table.
            for (c, up), new in zip(s.cards, shown, strict=True):
                if up and c != new:
                    raise IllegalAction(
                        "engine.show", f"seat {e.seat}'s up card {c} is on the table, not {new}"
                    )
            shown = [new for (_, up), new in zip(s.cards, shown, strict=True) if not up]
        if len(shown) != len(down_positions):
            raise IllegalAction(
                "RRoP 3.6", f"seat {e.seat} has {len(down_positions)} down cards; {len(shown)} shown"
            )
        if any(not c.known for c in shown):
            raise IllegalAction("RRoP 3.6", "a shown card must be identified")
        as_dealt = True  # the very cards dealt (identified when dealt): nothing to check or record
        for k, new in zip(down_positions, shown, strict=True):
            old = s.cards[k][0]
            if old is new:
                continue
            as_dealt = False
            if old.known and old != new:
                raise IllegalAction(
                    "RRoP 3.6 cards speak", f"seat {e.seat} was dealt {old} face down, not {new}"
                )
            if not old.known and new in self._seen_cards() - {c for c in s.all_cards if c.known}:
                raise IllegalAction(
                    "RRoP 3.4 duplicate card", f"the {new.name} is already elsewhere in this hand"
                )
        if not as_dealt:
            if len(set(shown)) != len(shown):
                raise IllegalAction("RRoP 3.4 duplicate card", "the same card is shown twice")
            for k, new in zip(down_positions, shown, strict=True):
                s.cards[k] = (new, False)
                self.seen.add(new)
        s.shown = True
        if self.phase is Phase.SHOWDOWN:
            idx = self._index[e.seat]
            if idx in self.to_show:
                self.to_show.remove(idx)
            self._maybe_settle()

    def _on_hand_mucked(self, e: HandMucked) -> None:
        s = self.seat(e.seat)
        idx = self._index[e.seat]
        if not s.live or idx not in self.to_show:
            raise IllegalAction("engine.show", f"seat {e.seat} has no hand to muck at this showdown")
        s.mucked = True
        self.to_show.remove(idx)
        if len(self.live_seats) == 1:
            self._award_uncontested()
            return
        self._maybe_settle()

    def _maybe_settle(self) -> None:
        if self.to_show:
            return
        contenders = self.live_seats
        for s in contenders:
            if any(not c.known for c, _ in s.cards):
                raise IllegalAction("RRoP 3.6", f"seat {s.seat} must show all cards to win")
        self._settle()

    def _award_uncontested(self) -> None:
        winner = self.live_seats[0]
        self.pots = build_pots(self.seats, self.config.rules)
        for k, pot in enumerate(self.pots):
            self.awards.append(PotAward(k, pot.amount, winner.seat, "uncontested"))
        self._finish()

    def _settle(self) -> None:
        rules = self.config.rules
        variant = self.config.variant
        scores = Scores(self.seats, self.common)
        pots = build_pots(self.seats, rules)
        # RRoP 3.6: all losing hands are killed before a pot is awarded.
        killed = kill_losing_hands(pots, self.seats, self.common, variant, scores)
        for s in killed:
            s.mucked = True
        if killed:
            pots = pots_without(pots, {s.seat for s in killed}, rules) or build_pots(self.seats, rules)
        self.pots = pots
        live = self.live_seats
        anyone_low = variant is Variant.STUD8 and any(scores.low8(s.seat) is not None for s in live)
        for k, pot in enumerate(self.pots):
            for seat, amount, share in split_pot(
                pot, self.seats, self.common, variant, rules, anyone_low, scores
            ):
                # A hand's words depend on its value only (engine.ranking): remembered by value.
                if share == "low" or variant is _RAZZ:
                    value = scores.low(seat)
                    desc = _low_words.get(value)
                    if desc is None:
                        desc = _low_words[value] = describe_low(scores.cards[seat])
                else:
                    value = scores.high(seat)
                    desc = _high_words.get(value)
                    if desc is None:
                        desc = _high_words[value] = describe_high(scores.cards[seat])
                self.awards.append(PotAward(k, amount, seat, share, desc))
        self._finish()

    def _finish(self) -> None:
        for a in self.awards:
            self.seat(a.seat).stack += a.amount
        for s in self.seats:
            if s.reserved:
                s.stack += s.reserved  # RRoP stud 17: a declared all-in's chips behind come back
                s.reserved = 0
        self.phase = Phase.COMPLETE
        self.round = None
        self.to_show = []
        by_seat: dict[int, int] = {}
        for a in self.awards:
            by_seat[a.seat] = by_seat.get(a.seat, 0) + a.amount
        for seat, amount in by_seat.items():
            hands = {a.hand for a in self.awards if a.seat == seat and a.hand}
            with_hand = f" with {', '.join(sorted(hands))}" if hands else ""
            self.announcements.append(
                _announcement("winner", f"Seat {seat} wins {amount}{with_hand}", (seat,))
            )

    # --------------------------------------------------------------- views

    def finishing_stacks(self) -> list[int]:
        return [s.stack for s in self.seats]

    def public_cards(self, s: SeatState) -> list[str]:
        """The cards a player at the table can see for a seat: up cards, and shown down cards."""
        return [str(c) if (up or s.shown) else str(UNKNOWN) for c, up in s.cards]


# A board's strength and its words depend on the ranks of its up cards only, in any order
# (engine.ranking), and the same few thousand sets of ranks come round hand after hand:
# remembered by the product of their rank primes (``Card.prime``, ``SeatState.up_key``),
# one table for stud and stud-8 (high boards), one for razz (low boards).  An entry is the
# board's value and whether it shows a pair (RRoP stud 4, stud 12, razz 5).
_BOARD_MEMO_SIZE = 50_000
_NO_BOARD: tuple[tuple[int, ...], bool] = ((), False)  # nothing identified: it never acts first
_BOARDS: tuple[dict[int, tuple[tuple[int, ...], bool]], ...] = ({1: _NO_BOARD}, {1: _NO_BOARD})
_BOARD_TEXTS: tuple[dict[int, str], ...] = ({}, {})
_high_hand_words: dict[tuple[bool, int, int], Announcement] = {}  # (razz, seat, rank key)
# Showdown words by hand value (``describe_high`` and ``describe_low`` read the value only);
# a few thousand values at most.
_high_words: dict[int, str] = {}
_low_words: dict[int, str] = {}


def _rank_key(cards: Iterable[Card]) -> int:
    """The product of the cards' rank primes (``Card.prime``; the unknown card counts 1)."""
    key = 1
    for c in cards:
        key *= c.prime
    return key


def _board_value(up: Sequence[Card], razz: bool) -> tuple[int, ...]:
    """``high_board_value`` (razz: ``low_board_value``) of identified up cards."""
    key = _rank_key(up)
    entry = _BOARDS[razz].get(key)
    if entry is None:
        entry = _board_entry(key, up, razz)
    return entry[0]


def _board_entry(key: int, up: Sequence[Card], razz: bool) -> tuple[tuple[int, ...], bool]:
    """``_BOARDS[razz][key]``, worked out from ``up``: the identified up cards whose rank
    primes multiply to ``key``."""
    memo = _BOARDS[razz]
    if len(memo) >= _BOARD_MEMO_SIZE:
        memo.clear()
        memo[1] = _NO_BOARD
    ranks = [c.rank for c in up]
    value = (low_board_value(up) if razz else high_board_value(up)) if up else ()
    entry = memo[key] = (value, len(set(ranks)) != len(ranks))
    return entry


def _board_words(up: Sequence[Card], razz: bool) -> str:
    """How the dealer names the board that acts first."""
    key = _rank_key(up)
    texts = _BOARD_TEXTS[razz]
    text = texts.get(key)
    if text is None:
        if razz:
            text = f"{describe_board_low(up).capitalize()} acts first"
        else:
            desc = describe_board_high(up)
            desc = desc.removesuffix(" high")  # "ace-king is high", not "ace-king high is high"
            text = f"{desc.capitalize()} is high"
        if len(texts) >= _BOARD_MEMO_SIZE:
            texts.clear()
        texts[key] = text
    return text


# ``apply``'s dispatch, one dict lookup per input: phase -> event class -> handler.
_DISPATCH: dict[Phase, dict[type[Event], Callable[[Hand, Any], None]]] = {
    phase: {cls: getattr(Hand, _HANDLERS[cls]) for cls in accepted} for phase, accepted in ACCEPTS.items()
}


def board_strength_order(hand: Hand) -> Sequence[int]:
    """Seat numbers from the best board to the worst (for displays)."""
    live = [i for i, s in enumerate(hand.seats) if s.live]
    return [hand.seats[i].seat for i in sorted(live, key=hand._board_key, reverse=True)]


def hand_value(cards: Sequence[Card], variant: Variant) -> int:
    return low_value(cards) if variant is Variant.RAZZ else high_value(cards)
