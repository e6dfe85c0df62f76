"""The floor's inputs, typed: one frozen dataclass per kind, parsed and checked once.

Theory of operation
-------------------
Everything the floor (``engine.floor.Floor``) accepts arrives as a JSON object with a
``kind``: from the wire (``engine.service.input_from_message``), from the event store
on replay, from a scenario script.  ``parse_input`` turns that object into one of the
dataclasses below, or refuses it with an ``InputError`` that names the field and says
what was expected.  It is the only parser: the floor dispatches on the dataclass type,
and no handler looks at raw JSON again.

The bounds are here too (issue #19 item 5: a table command is bounded): seat numbers
within the table, chip amounts from 0 (or 1) to ``MAX_CHIPS``, names of at most
``MAX_NAME`` printable characters, lists no longer than a table can hold, no field the
kind does not have.  A refusal never repeats a card code it was given (a shoe input is
SECRET; DESIGN: what reaches a non-engine role is built from public data only).

``to_json`` gives each input back as the JSON object it came from (normalised), so
``parse_input(x.to_json()) == x``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar

from engine.cards import UNKNOWN, Card, CardError

#: The longest player name (a name is drawn on both screens; RRoP 2.2 names a player, not a novel).
MAX_NAME = 40
#: The largest chip amount in any input (a buy-in, chips added, a wager).
MAX_CHIPS = 100_000_000
#: The largest seat number on any table (engine.table.MAX_SEATS is 8; the wire allows 10).
MAX_SEAT = 10
MAX_TEXT = 200  # a report's note, a device id, a prompt or option id

TABLE_OPS = ("seat", "leave", "move", "add_chips", "sit_out", "sit_in", "start_hand", "game")
#: What a ``game`` table op may change (``engine.rules.GameConfig``'s fields; the rest stay as they are).
GAME_FIELDS = ("variant", "ante", "bring_in", "small_bet", "big_bet", "max_raises", "rules", "min_buy_in")
GAME_VARIANTS = ("F7S", "F7S/8", "FR", "stud", "stud8", "stud-8", "razz")
CORRECTION_OPS = ("undo",)
#: The floor's authority on a correction, as the engine service found it (the PIN itself is never
#: stored): ``ok`` the floor PIN matched, ``wrong`` it did not, ``unset`` the table has none.
FLOOR_AUTHORITY = ("ok", "wrong", "unset", "locked")  # locked: not compared, too many wrong PINs in the hand
ACTIONS = ("fold", "check", "call", "bring_in", "complete", "bet", "raise")
SHOE_STATUSES = ("ok", "unknown_tag", "foreign_deck", "duplicate")
# gap: messages skipped; restart: a device restarted and may have lost some; forged: a message
# claimed a source that may not send on its channel; store: the event store cannot write.
#: ``absent``: the table has no such device at all (a table without a shoe): no prompt.
#: ``config``: the engine's config says what the table's log no longer is (``problem`` says what).
SOURCE_STATUSES = ("online", "offline", "gap", "restart", "forged", "store", "lost", "absent", "config")


class InputError(ValueError):
    """An input that is not well formed; ``field`` names the field (``""``: the whole input)."""

    def __init__(self, kind: str, field_name: str, message: str) -> None:
        where = f"{kind} input" if kind else "input"
        super().__init__(f"{where}: field {field_name!r} {message}" if field_name else f"{where}: {message}")
        self.kind = kind
        self.field = field_name
        self.reason = message


# --------------------------------------------------------------------------- the inputs


@dataclass(frozen=True, slots=True)
class Input:
    """Base of every floor input."""

    kind: ClassVar[str] = ""

    def to_json(self) -> dict[str, Any]:
        raise NotImplementedError


@dataclass(frozen=True, slots=True)
class TableOp(Input):
    """Seating and the next hand, between hands (RRoP 3.1)."""

    kind: ClassVar[str] = "table"
    op: str
    seat: int | None = None
    name: str = ""
    amount: int = 0
    to: int | None = None  # move: the seat the player changes to (RRoP 3.1)
    game: Mapping[str, Any] | None = None  # game: the fields that change, from the next hand

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {"kind": self.kind, "op": self.op}
        if self.game is not None:
            data["game"] = dict(self.game)
        if self.seat is not None:
            data["seat"] = self.seat
        if self.to is not None:
            data["to"] = self.to
        if self.op == "seat":
            data["name"] = self.name
        if self.op in ("seat", "add_chips"):
            data["amount"] = self.amount
        return data


@dataclass(frozen=True, slots=True)
class Action(Input):
    """A player's action as the dealer entered it (``amount``: see ``events.PlayerAction``)."""

    kind: ClassVar[str] = "action"
    seat: int
    action: str
    amount: int | None = None

    def to_json(self) -> dict[str, Any]:
        return {"kind": self.kind, "seat": self.seat, "action": self.action, "amount": self.amount}


@dataclass(frozen=True, slots=True)
class ShoeCard(Input):
    """A card drawn from the shoe: SECRET (its identity is a down card's, often)."""

    kind: ClassVar[str] = "shoe_card"
    card: Card | None  # None: the tag is in no enrolled deck; UNKNOWN ("??"): read, not identified
    status: str = "ok"
    counter: int | None = None
    boot: int | None = None  # the shoe's boot count: the service deals a (shoe, boot, counter) once

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {"kind": self.kind, "card": None if self.card is None else str(self.card),
                                "status": self.status, "counter": self.counter}
        if self.boot is not None:
            data["boot"] = self.boot
        return data

    def __repr__(self) -> str:  # never a card in a log line or a traceback
        return f"ShoeCard(status={self.status!r}, counter={self.counter!r})"


@dataclass(frozen=True, slots=True)
class SeatSeen:
    """What the camera sees at one seat: the up cards in order, and how many down."""

    seat: int
    up: tuple[Card, ...] = ()
    down: int = 0


@dataclass(frozen=True, slots=True)
class Irregular:
    """Something the camera sees that is not a seat's cards (``off_felt``: a card off the felt)."""

    kind: str
    seat: int | None = None
    card: str | None = None  # a face-up card's code, or "??"


@dataclass(frozen=True, slots=True)
class CameraView(Input):
    """The camera's debounced view of the felt (face-up cards only are named)."""

    kind: ClassVar[str] = "camera"
    seats: tuple[SeatSeen, ...] = ()
    irregular: tuple[Irregular, ...] = ()

    def to_json(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "seats": {str(s.seat): {"up": [str(c) for c in s.up], "down": s.down} for s in self.seats},
            "irregular": [{"kind": i.kind, "seat": i.seat, "card": i.card} for i in self.irregular],
        }


@dataclass(frozen=True, slots=True)
class ManualCard(Input):
    """A card keyed in by the dealer when shoe or camera is down (``??`` if unknown); ``common``: the
    common card of RRoP stud 15 (face up in the centre, no seat: ``seat`` is 0)."""

    kind: ClassVar[str] = "manual_card"
    seat: int
    card: Card = UNKNOWN
    face_up: bool = False
    common: bool = False

    def to_json(self) -> dict[str, Any]:
        if self.common:
            return {"kind": self.kind, "seat": None, "card": str(self.card), "face_up": True, "common": True}
        return {"kind": self.kind, "seat": self.seat, "card": str(self.card), "face_up": self.face_up}


@dataclass(frozen=True, slots=True)
class Show(Input):
    """The cards a player shows at showdown: the down cards, or all seven."""

    kind: ClassVar[str] = "show"
    seat: int
    cards: tuple[Card, ...]

    def to_json(self) -> dict[str, Any]:
        return {"kind": self.kind, "seat": self.seat, "cards": [str(c) for c in self.cards]}


@dataclass(frozen=True, slots=True)
class Muck(Input):
    """A player throws the hand away at showdown."""

    kind: ClassVar[str] = "muck"
    seat: int

    def to_json(self) -> dict[str, Any]:
        return {"kind": self.kind, "seat": self.seat}


@dataclass(frozen=True, slots=True)
class Report(Input):
    """Something the dealer saw that no sensor sees: a rule id or short name, and particulars."""

    kind: ClassVar[str] = "report"
    report: str
    seat: int | None = None
    card: Card | None = None  # the card concerned (a boxed card, a true up card, a card kept)
    burns: int | None = None  # RRoP stud 13: 0 (no burn) or 2 (two burns)
    count: int | None = None  # RRoP stud 10: cards a player holds
    note: str = ""

    def details(self) -> dict[str, Any]:
        """The particulars given, as plain data (what the prompt keeps)."""
        data: dict[str, Any] = {}
        if self.card is not None:
            data["card"] = str(self.card)
        if self.burns is not None:
            data["burns"] = self.burns
        if self.count is not None:
            data["count"] = self.count
        if self.note:
            data["note"] = self.note
        return data

    def to_json(self) -> dict[str, Any]:
        return {"kind": self.kind, "report": self.report, "seat": self.seat, **self.details()}


@dataclass(frozen=True, slots=True)
class Ruling(Input):
    """The dealer's choice of an option on an open prompt."""

    kind: ClassVar[str] = "ruling"
    prompt: str
    option: str

    def to_json(self) -> dict[str, Any]:
        return {"kind": self.kind, "prompt": self.prompt, "option": self.option}


@dataclass(frozen=True, slots=True)
class SourceStatus(Input):
    """A device went offline, came back, skipped or lost messages, or was impersonated."""

    kind: ClassVar[str] = "source"
    device: str
    status: str
    missing: int | None = 1  # gap, restart: messages (cards) that may be missing; None: unknown
    channel: str = ""  # forged: the channel the message came on
    problem: str = ""  # store: why the event store cannot write

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {"kind": self.kind, "device": self.device, "status": self.status}
        if self.status in ("gap", "restart", "lost"):
            data["missing"] = self.missing
        if self.channel:
            data["channel"] = self.channel
        if self.problem:
            data["problem"] = self.problem
        return data


@dataclass(frozen=True, slots=True)
class Correction(Input):
    """The dealer undoes one of the hand's inputs (``input``: its number in the hand, as the
    public state's ``dealer_inputs`` lists it); recorded, never a deletion (engine/floor/undo.py)."""

    kind: ClassVar[str] = "correction"
    op: str
    hand: int
    input: int
    floor: str | None = None  # FLOOR_AUTHORITY; None: no PIN given

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {"kind": self.kind, "op": self.op, "hand": self.hand, "input": self.input}
        if self.floor is not None:
            data["floor"] = self.floor
        return data


SENSOR_INPUTS: tuple[type[Input], ...] = (ShoeCard, CameraView)


# --------------------------------------------------------------------------- the parser


@dataclass(slots=True)
class _Fields:
    """One input object being read: each field taken once, the rest refused at the end."""

    kind: str
    data: Mapping[str, Any]
    seat_count: int
    taken: set[str] = field(default_factory=lambda: {"kind"})

    def fail(self, name: str, message: str) -> InputError:
        return InputError(self.kind, name, message)

    def has(self, name: str) -> bool:
        return name in self.data and self.data[name] is not None

    def raw(self, name: str) -> Any:
        self.taken.add(name)
        return self.data.get(name)

    def integer(self, name: str, lo: int, hi: int, default: int | None = None, required: bool = True) -> int | None:
        value = self.raw(name)
        if value is None:
            if required and default is None:
                raise self.fail(name, "is missing")
            return default
        if isinstance(value, bool) or not isinstance(value, int):
            raise self.fail(name, f"must be a whole number from {lo} to {hi}; got {_shown(value)}")
        if not lo <= value <= hi:
            raise self.fail(name, f"must be from {lo} to {hi}; got {value}")
        return value

    def seat(self, name: str = "seat", required: bool = True) -> int | None:
        value = self.raw(name)
        if value is None:
            if required:
                raise self.fail(name, "is missing")
            return None
        if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= self.seat_count:
            raise self.fail(name, f"must be a seat number from 1 to {self.seat_count}; got {_shown(value)}")
        return value

    def text(self, name: str, max_len: int = MAX_TEXT, default: str | None = None) -> str:
        value = self.raw(name)
        if value is None:
            if default is None:
                raise self.fail(name, "is missing")
            return default
        if not isinstance(value, str):
            raise self.fail(name, f"must be a string; got {_shown(value)}")
        if len(value) > max_len:
            raise self.fail(name, f"must be at most {max_len} characters; got {len(value)}")
        if not value.isprintable():
            raise self.fail(name, "must be printable text (no control characters)")
        return value

    def choice(self, name: str, choices: tuple[str, ...], default: str | None = None) -> str:
        value = self.raw(name)
        if value is None and default is not None:
            return default
        if not isinstance(value, str) or value not in choices:
            raise self.fail(name, f"must be one of {', '.join(choices)}; got {_shown(value)}")
        return value

    def boolean(self, name: str, default: bool | None = None) -> bool:
        value = self.raw(name)
        if value is None and default is not None:
            return default
        if not isinstance(value, bool):
            raise self.fail(name, "must be true or false")
        return value

    def done(self) -> None:
        for key in self.data:
            if key not in self.taken:
                raise self.fail(str(key)[:40], f"is not part of a {self.kind} input")


def _shown(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def _card(f: _Fields, name: str, value: Any, unknown_ok: bool) -> Card:
    # The value is never repeated: it may be a down card's identity.
    if not isinstance(value, str):
        raise f.fail(name, "must be a card code such as 'Ah'")
    try:
        c = Card.parse(value)
    except CardError:
        raise f.fail(name, "must be a card code such as 'Ah' (rank 2-9, T, J, Q, K, A; suit c, d, h, s)") from None
    if not c.known and not unknown_ok:
        raise f.fail(name, "must name the card ('??' is not allowed here)")
    return c


def _cards(f: _Fields, name: str, value: Any, max_len: int, unknown_ok: bool) -> tuple[Card, ...]:
    if not isinstance(value, list | tuple) or len(value) > max_len:
        raise f.fail(name, f"must be a list of at most {max_len} card codes")
    return tuple(_card(f, f"{name}[{i}]", v, unknown_ok) for i, v in enumerate(value))


def _table(f: _Fields) -> TableOp:
    op = f.choice("op", TABLE_OPS)
    if op == "start_hand":
        f.raw("seat")  # a console may send seat: null with every table op
        if f.has("seat"):
            raise f.fail("seat", "is not part of start_hand")
        return TableOp(op)
    if op == "game":
        f.raw("seat")
        if f.has("seat"):
            raise f.fail("seat", "is not part of a game change")
        return TableOp(op, game=_game(f))
    seat = f.seat()
    if op == "seat":
        name = f.text("name", MAX_NAME).strip()
        if not name:
            raise f.fail("name", "must name the player")
        amount = f.integer("amount", 1, MAX_CHIPS)
        assert amount is not None
        return TableOp(op, seat, name, amount)
    if op == "add_chips":
        amount = f.integer("amount", 1, MAX_CHIPS)
        assert amount is not None
        return TableOp(op, seat, amount=amount)
    if op == "move":
        return TableOp(op, seat, to=f.seat("to"))
    return TableOp(op, seat)


def _game(f: _Fields) -> dict[str, Any]:
    """The fields of a game change, each checked for its type (``GameConfig`` checks how they fit)."""
    value = f.raw("game")
    if not isinstance(value, Mapping) or not value:
        raise f.fail("game", "must be an object with the fields that change: " + ", ".join(GAME_FIELDS))
    out: dict[str, Any] = {}
    for key, item in value.items():
        name = f"game.{str(key)[:20]}"
        if key not in GAME_FIELDS:
            raise f.fail(name, "is not a game field; the fields are " + ", ".join(GAME_FIELDS))
        if key == "variant":
            if item not in GAME_VARIANTS:
                raise f.fail(name, f"must be one of {', '.join(GAME_VARIANTS)}; got {_shown(item)}")
        elif key == "rules":
            if not isinstance(item, str | Mapping):
                raise f.fail(name, "must name a house-rule profile (rrop, wsop2023)")
            item = item if isinstance(item, str) else dict(item)
        elif not (key == "min_buy_in" and item is None) and (
                isinstance(item, bool) or not isinstance(item, int) or not 0 <= item <= MAX_CHIPS):
            raise f.fail(name, f"must be a whole number of chips from 0 to {MAX_CHIPS}; got {_shown(item)}")
        out[str(key)] = item
    return out


def _correction(f: _Fields) -> Correction:
    op = f.choice("op", CORRECTION_OPS)
    hand = f.integer("hand", 1, (1 << 53) - 1)
    index = f.integer("input", 1, 1 << 20)
    assert hand is not None and index is not None
    floor = f.raw("floor")
    if floor is not None and floor not in FLOOR_AUTHORITY:
        raise f.fail("floor", f"must be one of {', '.join(FLOOR_AUTHORITY)}")
    return Correction(op, hand, index, floor)


def _action(f: _Fields) -> Action:
    seat = f.seat()
    assert seat is not None
    return Action(seat, f.choice("action", ACTIONS), f.integer("amount", 0, MAX_CHIPS, required=False))


def _shoe_card(f: _Fields) -> ShoeCard:
    value = f.raw("card")
    c = None if value is None else _card(f, "card", value, unknown_ok=True)
    status = f.choice("status", SHOE_STATUSES, default="ok")
    counter = f.integer("counter", 0, (1 << 53) - 1, required=False)
    # the shoe's boot count: the service deals a (shoe, boot, counter) once (engine/service.py)
    return ShoeCard(c, status, counter, f.integer("boot", 0, (1 << 53) - 1, required=False))


def _camera(f: _Fields) -> CameraView:
    seats_in = f.raw("seats")
    if seats_in is None:
        seats_in = {}
    if not isinstance(seats_in, Mapping) or len(seats_in) > MAX_SEAT:
        raise f.fail("seats", f"must be an object keyed by seat number, at most {MAX_SEAT} seats")
    seats: list[SeatSeen] = []
    for key, view in seats_in.items():
        path = f"seats.{str(key)[:10]}"
        try:
            number = int(key)
        except (TypeError, ValueError):
            raise f.fail(path, "must be keyed by a seat number") from None
        if not 1 <= number <= f.seat_count:
            raise f.fail(path, f"must be a seat number from 1 to {f.seat_count}")
        if not isinstance(view, Mapping) or not set(view) <= {"up", "down"}:
            raise f.fail(path, "must be an object with 'up' (card codes) and 'down' (a count)")
        up = _cards(f, f"{path}.up", view.get("up", []), 8, unknown_ok=True)
        down = view.get("down", 0)
        if isinstance(down, bool) or not isinstance(down, int) or not 0 <= down <= 8:
            raise f.fail(f"{path}.down", "must be a count from 0 to 8")
        seats.append(SeatSeen(number, up, down))
    items_in = f.raw("irregular")
    if items_in is None:
        items_in = []
    if not isinstance(items_in, list | tuple) or len(items_in) > 32:
        raise f.fail("irregular", "must be a list of at most 32 items")
    items: list[Irregular] = []
    for i, item in enumerate(items_in):
        if not isinstance(item, Mapping):
            continue  # the camera's other notes are not the floor's business
        sub = _Fields(f.kind, item, f.seat_count, set())
        kind = sub.text("kind", 64)
        seat = sub.seat(required=False)
        card = sub.raw("card")
        code = None if card is None else str(_card(sub, f"irregular[{i}].card", card, unknown_ok=True))
        items.append(Irregular(kind, seat, code))
    return CameraView(tuple(seats), tuple(items))


def _manual_card(f: _Fields) -> ManualCard:
    common = f.boolean("common", default=False)
    seat = f.seat(required=not common)
    value = f.raw("card")
    c = UNKNOWN if value is None else _card(f, "card", value, unknown_ok=True)
    if common:
        if seat is not None:
            raise f.fail("seat", "must be null for the common card (it plays for every seat)")
        if not c.known:
            raise f.fail("card", "must name the common card: it is dealt face up")
        if not f.boolean("face_up", default=True):
            raise f.fail("face_up", "must be true for the common card: it is turned face up")
        return ManualCard(0, c, True, True)
    assert seat is not None
    return ManualCard(seat, c, f.boolean("face_up"))


def _show(f: _Fields) -> Show:
    seat = f.seat()
    assert seat is not None
    return Show(seat, _cards(f, "cards", f.raw("cards") or [], 7, unknown_ok=False))


def _muck(f: _Fields) -> Muck:
    seat = f.seat()
    assert seat is not None
    return Muck(seat)


def _report(f: _Fields) -> Report:
    name = f.text("report", 64)
    seat = f.seat(required=False)
    value = f.raw("card")
    card = None if value is None else _card(f, "card", value, unknown_ok=False)
    burns = f.integer("burns", 0, 2, required=False)
    if burns == 1:
        raise f.fail("burns", "must be 0 (no card burned) or 2 (two cards burned)")
    count = f.integer("count", 0, 52, required=False)
    return Report(name, seat, card, burns, count, f.text("note", MAX_TEXT, default=""))


def _ruling(f: _Fields) -> Ruling:
    return Ruling(f.text("prompt", 64), f.text("option", 64))


def _source(f: _Fields) -> SourceStatus:
    device = f.text("device", 64, default="device")
    status = f.choice("status", SOURCE_STATUSES)
    if status == "restart":
        missing = f.integer("missing", 0, 1 << 31, required=False)
    else:
        missing = f.integer("missing", 0, 1 << 31, default=1)
    return SourceStatus(device, status, missing, f.text("channel", 64, default=""), f.text("problem", 500, default=""))


_PARSERS: dict[str, Any] = {
    TableOp.kind: _table,
    Action.kind: _action,
    ShoeCard.kind: _shoe_card,
    CameraView.kind: _camera,
    ManualCard.kind: _manual_card,
    Show.kind: _show,
    Muck.kind: _muck,
    Report.kind: _report,
    Ruling.kind: _ruling,
    SourceStatus.kind: _source,
    Correction.kind: _correction,
}
KINDS: tuple[str, ...] = tuple(_PARSERS)


def parse_input(data: Any, seat_count: int = MAX_SEAT) -> Input:
    """The typed input a JSON object stands for; ``InputError`` naming the field if it is not one.

    ``seat_count``: the table's seats (a seat number above it is refused)."""
    if isinstance(data, Input):
        return data
    if not isinstance(data, Mapping):
        raise InputError("", "", "an input is a JSON object with a 'kind'")
    kind = data.get("kind")
    parser = _PARSERS.get(kind) if isinstance(kind, str) else None
    if parser is None:
        raise InputError("", "kind", f"must be one of {', '.join(KINDS)}; got {_shown(kind)}")
    f = _Fields(str(kind), data, seat_count)
    parsed: Input = parser(f)
    f.done()
    return parsed
