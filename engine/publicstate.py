"""The schema of ``public/state``: what both screens draw from, as a typed tree.

Theory of operation
-------------------
``PublicState`` and the dataclasses under it are the whole public snapshot of a
table (engine/public.py builds it from the table and its hand; the engine service
adds its own part, ``ServiceView``).  ``to_json`` gives the JSON object carried in
the ``state`` field of a ``public/state`` message; ``from_json`` reads one back
and refuses anything else with ``StateError``, naming the field path
(``seats[2].cards[0].up``).  ``engine.wire`` registers ``from_json`` as the check of
the ``state`` field, so the sender and every receiver hold the same contract.

Fields that are only sometimes present are ``None`` here and absent from the JSON
(``next_deal`` outside dealing, the service part when a state is built without
it); ``Optional`` fields that JSON carries as ``null`` are listed in
``_NULLABLE``.  The tree imports nothing of the engine: any client may use it.

Top-level fields named ``x_...`` are extensions for tools (a bench's send time, a
test's marker): any JSON, not checked, ignored by the screens.

Nothing in it is SECRET: a down card appears as ``"??"`` until its player shows it.
"""

from __future__ import annotations

import dataclasses
import functools
import types
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, ClassVar, Union, get_args, get_origin, get_type_hints

STATE_VERSION = 1
EXTENSION = "x_"  # top-level fields for tools, not checked (see the module docstring)


class StateError(ValueError):
    """A ``public/state`` object that breaks the schema; the message names the field path."""


@dataclass(frozen=True, slots=True)
class GameView:
    variant: str  # F7S, F7S/8, FR
    name: str
    ante: int
    bring_in: int
    small_bet: int
    big_bet: int
    max_raises: int
    rules: str  # the house-rule profile: rrop, wsop2023


@dataclass(frozen=True, slots=True)
class CardView:
    card: str  # a card code, or "??" for a down card its player has not shown
    up: bool


@dataclass(frozen=True, slots=True)
class SeatView:
    seat: int
    name: str
    stack: int
    sitting_out: bool
    in_hand: bool
    status: str  # waiting, sitting_out, active, folded, dead (killed by a ruling), mucked, all_in
    bet: int
    committed: int
    up: list[str]
    down_count: int
    shown: list[str]  # down cards shown at the showdown
    cards: list[CardView]  # in deal order
    # What the seat did last this betting round, in words ("checked", "called 5", "raised to 10",
    # "brought in 2", "completed to 5", "bet 5", "folded"); "" before it acts and at each new street.
    last_action: str = ""


@dataclass(frozen=True, slots=True)
class OptionView:
    action: str
    amount: int
    all_in: bool
    label: str


@dataclass(frozen=True, slots=True)
class AnnouncementView:
    kind: str
    text: str
    seats: list[int]


@dataclass(frozen=True, slots=True)
class AwardView:
    pot: int
    amount: int
    seat: int
    share: str
    hand: str


@dataclass(frozen=True, slots=True)
class DealView:
    """The next card due: ``burn`` or ``card`` (seat, face_up), or ``set_aside`` (count) (RRoP stud 14)."""

    kind: str
    seat: int | None
    face_up: bool
    count: int | None = None  # set_aside only


@dataclass(frozen=True, slots=True)
class PromptOptionView:
    id: str
    label: str


@dataclass(frozen=True, slots=True)
class PromptView:
    id: str
    rule: str
    title: str
    seats: list[int]
    text: str
    clause: str
    options: list[PromptOptionView]


@dataclass(frozen=True, slots=True)
class DeviceView:
    online: bool
    role: str | None = None  # the broker role (engine, bridge, vision, ...), if known
    last_seen_s: float | None = None  # seconds since its last message, if known


@dataclass(frozen=True, slots=True)
class ErrorView:
    """The last refused input: who sent it, its kind, and the reason (public data only)."""

    source: str
    input: str | None
    reason: str


@dataclass(frozen=True, slots=True)
class InputView:
    """The wire header of the last device input applied."""

    source: str
    session: int | None
    seq: int | None


@dataclass(frozen=True, slots=True)
class DealerInputView:
    """One dealer entry of the hand in progress that an undo may void (engine/floor/undo.py)."""

    hand: int
    input: int  # its number in the hand: what a correction names
    text: str  # "seat 3 Bob raise to 10 (third street)"; a card keyed face down is never named
    last: bool  # the dealer's last entry: undone without the floor's PIN
    undone: bool
    dropped: bool  # no longer taken after an undo of an input before it
    after: str  # what an undo takes again after it ("3 cards and 1 action")


@dataclass(frozen=True, slots=True)
class ServiceView:
    """The engine service's part of the state (engine/service.py sets every field; a tool that
    builds states without a service, such as the console's scripted hand, may set some)."""

    prompts: list[PromptView] | None = None
    devices: dict[str, DeviceView] | None = None
    last_error: ErrorView | None = None
    input: InputView | None = None
    shoe_active: bool | None = None
    camera_active: bool | None = None
    dealer_inputs: list[DealerInputView] | None = None
    next_game: GameView | None = None  # a game change taken during the hand: it starts with the next


@dataclass(frozen=True, slots=True)
class PublicState:
    """The whole public snapshot of a table; see the module docstring."""

    v: int
    table: str
    seat_count: int
    hand_id: int | None
    hands_played: int
    game: GameView | None
    phase: str  # idle, dealing, betting, showdown, complete
    street: str | None
    street_index: int | None
    bet_size: int | None
    seats: list[SeatView]
    pot: int
    common: list[str]
    to_act: int | None
    options: list[OptionView]
    to_call: int
    announcements: list[AnnouncementView]
    awards: list[AwardView]
    next_deal: list[DealView] | None = None  # present while dealing
    service: ServiceView | None = field(default=None)  # flat in the JSON, beside the rest

    _FLAT: ClassVar[str] = "service"

    def to_json(self) -> dict[str, Any]:
        data = _encode(self)
        assert isinstance(data, dict)
        service = data.pop(self._FLAT, None)
        if service is not None:
            data.update(service)
        return data

    @classmethod
    def from_json(cls, data: Any) -> PublicState:
        if not isinstance(data, dict):
            raise StateError("the state must be a JSON object")
        own, service_names = _top_names()
        body = {k: v for k, v in data.items() if k not in service_names and not str(k).startswith(EXTENSION)}
        flat = {k: v for k, v in data.items() if k in service_names}
        unknown = set(body) - own
        if unknown:
            raise StateError(f"field {sorted(unknown)[0]!r} is not part of the state")
        state = _decode(cls, body, "")
        if flat:  # the service's fields, named flat as they travel
            service = _decode(ServiceView, flat, "")
            state = dataclasses.replace(state, service=service)
        assert isinstance(state, PublicState)
        if state.v != STATE_VERSION:
            raise StateError(f"field 'v' must be {STATE_VERSION}, got {state.v}")
        return state


@functools.cache
def _top_names() -> tuple[frozenset[str], frozenset[str]]:
    """The state's own top-level fields, and the service's (flat beside them)."""
    own = frozenset(f.name for f in dataclasses.fields(PublicState)) - {PublicState._FLAT}
    return own, frozenset(f.name for f in dataclasses.fields(ServiceView))


def idle_state(table: str, seat_count: int = 8) -> PublicState:
    """The state of a table with nobody seated and no hand (a start, or a placeholder in tests)."""
    return PublicState(
        v=STATE_VERSION, table=table, seat_count=seat_count, hand_id=None, hands_played=0, game=None,
        phase="idle", street=None, street_index=None, bet_size=None, seats=[], pot=0, common=[], to_act=None,
        options=[], to_call=0, announcements=[], awards=[],
    )


# Fields whose JSON is ``null`` when unset (the others are left out of the JSON when ``None``).
_NULLABLE = frozenset(
    {
        ("PublicState", "hand_id"), ("PublicState", "game"), ("PublicState", "street"),
        ("PublicState", "street_index"), ("PublicState", "bet_size"), ("PublicState", "to_act"),
        ("DealView", "seat"), ("ServiceView", "last_error"), ("ServiceView", "input"),
        ("ErrorView", "input"), ("InputView", "session"), ("InputView", "seq"),
    }
)


# The codec is compiled once per type into closures (``_decoder``, ``_field_plan``): the engine
# checks every state it publishes and each screen every state it draws, so walking the type hints
# per value (``get_origin``, ``dataclasses.fields``) cost about half of the engine's time on a card.
# A path is built only for an error: ``_Bad`` collects it on the way out.


class _Bad(Exception):
    """A value off the schema, deep in the tree: its path is collected as the error rises."""

    def __init__(self, problem: str, *segments: str) -> None:
        super().__init__(problem)
        self.problem = problem
        self.segments = list(segments)  # innermost first

    def state_error(self) -> StateError:
        where = "".join(reversed(self.segments)).removeprefix(".") or "state"
        return StateError(f"field {where!r}{self.problem}")


Decoder = Callable[[Any], Any]


def _field_plan(cls: type) -> tuple[tuple[str, bool], ...]:
    """(name, kept when None) for each field of a dataclass, in order."""
    plan = _FIELD_PLANS.get(cls)
    if plan is None:
        plan = _FIELD_PLANS[cls] = tuple((f.name, (cls.__name__, f.name) in _NULLABLE) for f in dataclasses.fields(cls))
    return plan


_FIELD_PLANS: dict[type, tuple[tuple[str, bool], ...]] = {}


def _encode(value: Any) -> Any:
    cls = type(value)
    if cls in _DATACLASSES or (dataclasses.is_dataclass(value) and not isinstance(value, type)):
        _DATACLASSES.add(cls)
        out: dict[str, Any] = {}
        for name, nullable in _field_plan(cls):
            item = getattr(value, name)
            if item is None and not nullable:
                continue
            out[name] = _encode(item)
        return out
    if cls is list:
        return [_encode(v) for v in value]
    if cls is dict:
        return {k: _encode(v) for k, v in value.items()}
    return value


_DATACLASSES: set[type] = set()
_DECODERS: dict[Any, Decoder] = {}


def _decode(tp: Any, value: Any, path: str) -> Any:
    """``value`` read as ``tp``; a value off the schema is a ``StateError`` naming its field path
    (``path``: where ``value`` lies, "" at the top)."""
    try:
        return _decoder(tp)(value)
    except _Bad as bad:
        if path:
            bad.segments.append(path if path.startswith("[") else "." + path)
        raise bad.state_error() from None


def _decoder(tp: Any) -> Decoder:
    found = _DECODERS.get(tp)
    if found is None:
        found = _DECODERS[tp] = _compile(tp)
    return found


def _compile(tp: Any) -> Decoder:
    origin = get_origin(tp)
    if origin in (Union, types.UnionType):
        inner = _decoder(next(a for a in get_args(tp) if a is not type(None)))
        return lambda value: None if value is None else inner(value)
    if origin is list:
        item = _decoder(get_args(tp)[0])

        def a_list(value: Any) -> Any:
            if not isinstance(value, list):
                raise _Bad(" must be a list")
            out = []
            for i, v in enumerate(value):
                try:
                    out.append(item(v))
                except _Bad as bad:
                    bad.segments.append(f"[{i}]")
                    raise
            return out

        return a_list
    if origin is dict:
        entry = _decoder(get_args(tp)[1])

        def an_object(value: Any) -> Any:
            if not isinstance(value, dict):
                raise _Bad(" must be an object")
            out = {}
            for k, v in value.items():
                try:
                    out[str(k)] = entry(v)
                except _Bad as bad:
                    bad.segments.append(f".{k}")
                    raise
            return out

        return an_object
    if isinstance(tp, type) and dataclasses.is_dataclass(tp):
        return _compile_dataclass(tp)
    checks: dict[Any, tuple[Callable[[Any], bool], str]] = {
        bool: (lambda v: isinstance(v, bool), " must be true or false"),
        int: (lambda v: isinstance(v, int) and not isinstance(v, bool), " must be a whole number"),
        float: (lambda v: isinstance(v, int | float) and not isinstance(v, bool), " must be a number"),
        str: (lambda v: isinstance(v, str), " must be a string"),
    }
    if tp not in checks:
        raise TypeError(f"the public state's schema has no rule for {tp!r}")  # a schema bug, at first use
    ok, problem = checks[tp]

    def a_scalar(value: Any) -> Any:
        if not ok(value):
            raise _Bad(problem)
        return value

    return a_scalar


def _compile_dataclass(tp: type) -> Decoder:
    hints = get_type_hints(tp)
    names = frozenset(f.name for f in dataclasses.fields(tp))
    # (name, decoder, whether it may be absent)
    fields: list[tuple[str, Decoder, bool]] = []
    for f in dataclasses.fields(tp):
        omitted_when_none = (tp.__name__, f.name) not in _NULLABLE and _optional(hints[f.name])
        may_be_absent = f.default is not dataclasses.MISSING or omitted_when_none
        fields.append((f.name, _decoder(hints[f.name]), may_be_absent))

    def a_dataclass(value: Any) -> Any:
        if not isinstance(value, dict):
            raise _Bad(" must be an object")
        if not names.issuperset(value):
            raise _Bad(" is not part of the state", "." + sorted(set(value) - names)[0])
        kwargs: dict[str, Any] = {}
        for name, decode, may_be_absent in fields:
            if name not in value:
                if may_be_absent:
                    continue
                raise _Bad(" is missing", "." + name)
            try:
                kwargs[name] = decode(value[name])
            except _Bad as bad:
                bad.segments.append("." + name)
                raise
        return tp(**kwargs)

    return a_dataclass


def _optional(tp: Any) -> bool:
    return get_origin(tp) in (Union, types.UnionType) and type(None) in get_args(tp)
