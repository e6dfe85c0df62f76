"""The table across hands: seats, buy-ins, stacks carried over, hands numbered.

Like the hand, the table is a fold over events.  Seating changes and chips
are accepted only between hands (RRoP 3.1: chips are added between hands;
a full buy-in at limit poker is at least ten times the maximum bet unless the
table says otherwise, and a player may make one short buy-in).  ``start_hand``
produces the ``HandStarted`` event for everyone seated, present and with chips;
the hand's own events then go through ``apply`` until the pot is awarded, and
the finishing stacks come back to the seats.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from engine.events import (
    ChipsAdded,
    Event,
    HandStarted,
    Outputs,
    SeatChanged,
    SeatEntry,
    SeatLeft,
    SeatTaken,
    SittingOut,
)
from engine.hand import Hand, IllegalAction
from engine.rules import GameConfig

MAX_SEATS = 8


class TableError(IllegalAction):
    """A table change the rules refuse (nothing was changed)."""


@dataclass
class TableSeat:
    seat: int
    name: str
    stack: int
    short_buy_ins: int = 0
    sitting_out: bool = False

    def to_json(self) -> dict[str, Any]:
        return {
            "seat": self.seat,
            "name": self.name,
            "stack": self.stack,
            "short_buy_ins": self.short_buy_ins,
            "sitting_out": self.sitting_out,
        }


class Table:
    def __init__(self, config: GameConfig, seat_count: int = MAX_SEATS) -> None:
        if not 2 <= seat_count <= MAX_SEATS:
            raise TableError("engine.table", f"a stud table has 2 to {MAX_SEATS} seats; got {seat_count}")
        self.config = config
        self.seat_count = seat_count
        self.seats: dict[int, TableSeat] = {}
        self.hand: Hand | None = None
        self.hands_played = 0
        # RRoP 3.1: short buy-ins used, by player name (a player's history follows the name here).
        self.short_buy_ins: dict[str, int] = {}
        # RRoP 2.2: players who left this game, by name: the stack they took and their short buy-ins.
        self.left: dict[str, tuple[int, int]] = {}

    @property
    def in_hand(self) -> bool:
        return self.hand is not None and not self.hand.is_over

    def _between_hands(self, what: str) -> None:
        if self.in_hand:
            # RRoP 3.1: chips and seats change only between hands.
            raise TableError(
                "RRoP 3.1", f"{what} only between hands; hand #{self.hands_played} is still live"
            )

    def _seat(self, number: int) -> TableSeat:
        try:
            return self.seats[number]
        except KeyError:
            raise TableError("engine.table", f"seat {number} is empty") from None

    def apply(self, event: Event) -> Outputs:
        """Apply a table event, or a hand event to the hand in progress."""
        if isinstance(event, SeatTaken):
            self._take_seat(event)
        elif isinstance(event, SeatLeft):
            self._between_hands("a player leaves")
            left = self._seat(event.seat)
            # RRoP 2.2: "If you return to the same game within one hour of cashing out, your
            # buy-in must be equal to the amount removed when leaving that game."
            self.left[left.name] = (left.stack, left.short_buy_ins)
            del self.seats[event.seat]
        elif isinstance(event, SeatChanged):
            self._change_seat(event)
        elif isinstance(event, ChipsAdded):
            self._between_hands("chips are added")
            self._seat(event.seat).stack += event.amount
        elif isinstance(event, SittingOut):
            self._between_hands("sitting out changes")
            self._seat(event.seat).sitting_out = event.out
        elif isinstance(event, HandStarted):
            self._check_start(event)
            self.hand = Hand(event)
            self.hands_played = event.hand_id
        else:
            if self.hand is None or self.hand.is_over:
                raise TableError("engine.table", f"{event.type}: no hand is in progress")
            outputs = self.hand.apply(event)
            if self.hand.is_over:
                for s in self.hand.seats:
                    self.seats[s.seat].stack = s.stack
            return outputs
        return Outputs()

    def _change_seat(self, e: SeatChanged) -> None:
        # RRoP 3.1: the player keeps the same stack, short or not; a seat change is not a buy-in.
        self._between_hands("a seat changes")
        moving = self._seat(e.seat)
        if not 1 <= e.to <= self.seat_count:
            raise TableError("engine.table", f"seat {e.to} does not exist at this {self.seat_count}-seat table")
        if e.to in self.seats:
            raise TableError("engine.table", f"seat {e.to} is taken by {self.seats[e.to].name}")
        del self.seats[e.seat]
        moving.seat = e.to
        self.seats[e.to] = moving

    def _take_seat(self, e: SeatTaken) -> None:
        self._between_hands("a player sits down")
        if not 1 <= e.seat <= self.seat_count:
            raise TableError(
                "engine.table", f"seat {e.seat} does not exist at this {self.seat_count}-seat table"
            )
        if e.seat in self.seats:
            raise TableError("engine.table", f"seat {e.seat} is taken by {self.seats[e.seat].name}")
        if any(s.name == e.name for s in self.seats.values()):
            raise TableError("RRoP 2.2", f"{e.name} already has a seat at this table")
        full = self.config.full_buy_in
        short = 0
        returning = self.left.get(e.name)
        if returning is not None:
            # RRoP 2.2: back in the same game, "your buy-in must be equal to the amount removed when
            # leaving": that same stack, short or not, is not a new buy-in; less is refused; more
            # is an ordinary buy-in (3.1).
            taken, shorts = returning
            if e.buy_in < taken:
                raise TableError(
                    "RRoP 2.2", f"{e.name} left this game with {taken}: coming back, the buy-in is {taken}"
                )
            if e.buy_in == taken:
                del self.left[e.name]
                self.seats[e.seat] = TableSeat(e.seat, e.name, e.buy_in, shorts)
                return
        if e.buy_in < full:
            # RRoP 3.1: only one short buy-in.
            used = self.short_buy_ins.get(e.name, 0)
            if used >= 1:
                raise TableError(
                    "RRoP 3.1", f"{e.name} has had the one short buy-in allowed; a full buy-in is {full}"
                )
            short = 1
        self.short_buy_ins[e.name] = self.short_buy_ins.get(e.name, 0) + short
        self.seats[e.seat] = TableSeat(e.seat, e.name, e.buy_in, self.short_buy_ins[e.name])

    def dealt_in(self) -> list[TableSeat]:
        return [s for _, s in sorted(self.seats.items()) if not s.sitting_out and s.stack > 0]

    def start_hand(self) -> HandStarted:
        """The next hand's opening event, for everyone seated, present and with chips."""
        self._between_hands("a new hand starts")
        players = self.dealt_in()
        if len(players) < 2:
            raise TableError("engine.table", f"a hand needs two players with chips; {len(players)} dealt in")
        return HandStarted(
            self.hands_played + 1,
            self.config,
            tuple(SeatEntry(s.seat, s.name, s.stack) for s in players),
        )

    def _check_start(self, e: HandStarted) -> None:
        self._between_hands("a new hand starts")
        if e.hand_id != self.hands_played + 1:
            raise TableError("engine.table", f"the next hand is #{self.hands_played + 1}, not #{e.hand_id}")
        for entry in e.seats:
            s = self._seat(entry.seat)
            if s.stack != entry.stack or s.name != entry.name:
                raise TableError(
                    "engine.table", f"seat {entry.seat} does not match the table ({s.name}, {s.stack})"
                )

    def secret_state(self) -> dict[str, Any]:
        """SECRET: the table and its hand as plain data, down cards included (``Hand.secret_state``)."""
        return {
            "config": self.config.to_json(),
            "seat_count": self.seat_count,
            "seats": [s.to_json() for _, s in sorted(self.seats.items())],
            "hands_played": self.hands_played,
            "short_buy_ins": dict(sorted(self.short_buy_ins.items())),
            "hand": self.hand.secret_state() if self.hand else None,
        }
