"""The wire contract: every MQTT topic studtable uses and every payload on it.

Theory of operation
-------------------
Every process at a table (engine, shoe bridge, cameras, dealer console, table
monitor, hand recorder) talks over one MQTT broker.  This module is the only
place that knows what the topics are called and what their payloads look like,
so the producers and the consumers cannot drift apart.  It is pure: no socket,
no clock, no file.

Topics are ``studtable/v1/<table>/<channel>[/<device>]``.  The version is in the
topic (not only in the payload) so that a v2 deployment can run beside v1 on
one broker during a migration, and so that broker ACLs can be written per
version.

``CHANNELS`` is a data table, one row per channel: who may publish, who may
read, QoS, retained or not, and whether the channel carries SECRET data (the
identity of a down card while the hand is live).  The broker configuration in
``engine.broker`` is rendered from this table, so the access rules and the
contract are one fact, not two.

Payloads are UTF-8 JSON objects, except availability, which is the bare text
``online`` / ``offline`` (what a Last Will can carry and what every MQTT tool
shows readably).  Every JSON payload carries the header

    {"v": 1, "source": <device id>, "session": <int>, "seq": <int>, "kind": <str>}

followed by the fields of its kind, flat beside the header.  ``session`` is the
publisher's restart counter (it grows by one each time the device process
starts; it is also announced in the retained birth message) and ``seq`` counts
the messages the publisher sent in that session.  Together ``(source, session,
seq)`` identify one input for ever: the engine's event store de-duplicates on
it and ``engine.bus.SourceTracker`` spots gaps and restarts with it.

The body of each kind is checked against a ``Schema`` (a tuple of named field
rules) from a registry keyed by ``(channel, kind)``.  Validation is strict:
unknown kinds, missing fields, wrong types and values out of range are all
refused with a ``WireError`` whose message names the topic, the kind and the
exact field path (``seats.3.up[1]``) and says what was expected.  A
``WireError`` is the only exception ``decode`` raises, whatever bytes arrive;
the receiving edge logs it and drops the message.

Console commands are deliberately generic: ``register_schema`` lets the engine
add or refine command kinds when its command set settles, without changing the
envelope.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, Final

from engine.publicstate import PublicState, StateError

WIRE_VERSION: Final = 1
ROOT: Final = f"studtable/v{WIRE_VERSION}"

#: Largest payload accepted on any topic, before JSON parsing (a hand history of
#: a long seven-handed hand with its PHH text is well under 256 KiB).
MAX_PAYLOAD_BYTES: Final = 1 << 20
#: A console command (console/command) is a few fields: its payload is capped far below
#: MAX_PAYLOAD_BYTES, so that padding (``table`` and ``report`` take extra fields) cannot fill the
#: engine's store.  A longer one is refused by the contract, before anything stores it.
MAX_COMMAND_BYTES: Final = 4096
#: Counters are limited to what a JSON number carries exactly in every language.
MAX_COUNTER: Final = (1 << 53) - 1
#: The most hands one history query may ask for (a page of the console's history list).
MAX_HISTORY_PAGE: Final = 50
#: The longest player name a history search takes (engine.inputs.MAX_NAME is the seating limit).
MAX_HISTORY_NAME: Final = 40
#: The most steps (events and the result) one history answer carries.
MAX_HISTORY_STEPS: Final = 2000

_ID_RE: Final = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}")
_KIND_RE: Final = re.compile(r"[a-z][a-z0-9_]{0,63}")
_HEX_RE: Final = re.compile(r"(?:[0-9a-f]{2}){4,10}")
_CARD_RE: Final = re.compile(r"[23456789TJQKA][cdhs]")

AVAILABILITY_ONLINE: Final = "online"
AVAILABILITY_OFFLINE: Final = "offline"


class WireError(ValueError):
    """A topic or payload that breaks the wire contract; the message says where and why."""


class Role(StrEnum):
    """The broker users, one per kind of process at a table."""

    ENGINE = "engine"
    BRIDGE = "bridge"
    VISION = "vision"
    CONSOLE = "console"
    MONITOR = "monitor"
    RECORDER = "recorder"


class Channel(StrEnum):
    """The topic families below ``studtable/v1/<table>/``."""

    AVAIL = "avail"
    BIRTH = "birth"
    SHOE = "sensor/shoe"
    VISION = "sensor/vision"
    COMMAND = "console/command"
    STATE = "public/state"
    PROMPT = "dealer/prompt"
    HISTORY = "history/hand"
    HISTORY_REPLY = "console/history"


class Secrecy(StrEnum):
    PUBLIC = "public"
    SECRET = "secret"


@dataclass(frozen=True, slots=True)
class ChannelSpec:
    """One row of the contract: how a channel is used and who may touch it.

    ``per_device`` channels end in ``/<device>`` and each process may publish
    only under its own device id (its MQTT client id); the broker enforces it.
    ``writers`` empty with ``per_device`` means: every role, for itself.
    """

    channel: Channel
    writers: frozenset[Role]
    readers: frozenset[Role]
    qos: int
    retained: bool
    secrecy: Secrecy
    per_device: bool
    purpose: str


_ALL: Final = frozenset(Role)
_E: Final = Role.ENGINE

CHANNELS: Final[Mapping[Channel, ChannelSpec]] = {
    spec.channel: spec
    for spec in (
        ChannelSpec(
            Channel.AVAIL,
            _ALL,
            frozenset({_E, Role.CONSOLE, Role.MONITOR}),
            1,
            True,
            Secrecy.PUBLIC,
            True,
            "process availability; the Last Will sets it offline",
        ),
        ChannelSpec(
            Channel.BIRTH,
            _ALL,
            frozenset({_E, Role.CONSOLE}),
            1,
            True,
            Secrecy.PUBLIC,
            True,
            "who a process is: session counter, version, capabilities",
        ),
        ChannelSpec(
            Channel.SHOE,
            frozenset({Role.BRIDGE, _E}),
            frozenset({_E}),
            1,
            False,
            Secrecy.SECRET,
            False,
            "every card drawn from the RFID shoe, with its identity",
        ),
        ChannelSpec(
            Channel.VISION,
            frozenset({Role.VISION, _E}),
            frozenset({_E}),
            1,
            False,
            Secrecy.PUBLIC,
            False,
            "what the cameras see on the felt (face-up cards only)",
        ),
        ChannelSpec(
            Channel.COMMAND,
            frozenset({Role.CONSOLE, _E}),
            frozenset({_E}),
            1,
            False,
            Secrecy.PUBLIC,
            False,
            "dealer actions, reports, rulings, manual cards, seating",
        ),
        ChannelSpec(
            Channel.STATE,
            frozenset({_E}),
            # (vision: the phase says when cards may lie tabled, the showdown; the state is public)
            frozenset({_E, Role.CONSOLE, Role.MONITOR, Role.VISION}),
            1,
            True,
            Secrecy.PUBLIC,
            False,
            "everything a player may see, as one retained snapshot",
        ),
        ChannelSpec(
            Channel.PROMPT,
            frozenset({_E}),
            frozenset({_E, Role.CONSOLE}),
            1,
            True,
            Secrecy.PUBLIC,
            False,
            "open irregularity prompts for the dealer, as one retained list",
        ),
        ChannelSpec(
            Channel.HISTORY,
            frozenset({_E}),
            frozenset({_E, Role.RECORDER}),
            1,
            False,
            Secrecy.SECRET,
            False,
            "a finished hand, published only after the pot is awarded",
        ),
        ChannelSpec(
            Channel.HISTORY_REPLY,
            frozenset({_E}),
            frozenset({_E, Role.CONSOLE}),
            1,
            False,
            Secrecy.PUBLIC,
            False,
            "the engine's answer to a console's history query (finished hands' hole cards; never a live one's)",
        ),
    )
}

SENSOR_CHANNELS: Final = frozenset({Channel.SHOE, Channel.VISION})


# --------------------------------------------------------------------------- topics


def _check_id(what: str, value: str) -> str:
    if not isinstance(value, str) or not _ID_RE.fullmatch(value):
        raise WireError(
            f"{what} {value!r} is not a valid id: use 1 to 64 letters, digits, '_', '.' or '-', "
            "starting with a letter or digit (no '/', '+' or '#')"
        )
    return value


def topic(table: str, channel: Channel, device: str | None = None) -> str:
    """The topic string for ``channel`` at ``table`` (and ``device`` for avail/birth)."""
    _check_id("table id", table)
    spec = CHANNELS[channel]
    if spec.per_device:
        if device is None:
            raise WireError(f"channel {channel} needs a device id")
        return f"{ROOT}/{table}/{channel}/{_check_id('device id', device)}"
    if device is not None:
        raise WireError(f"channel {channel} has no device part")
    return f"{ROOT}/{table}/{channel}"


def topic_filter(table: str, channel: Channel) -> str:
    """The subscription filter for a channel (``+`` in place of the device for per-device channels)."""
    if table != "+":
        _check_id("table id", table)
    spec = CHANNELS[channel]
    return f"{ROOT}/{table}/{channel}" + ("/+" if spec.per_device else "")


@dataclass(frozen=True, slots=True)
class TopicInfo:
    table: str
    channel: Channel
    device: str | None


_CHANNEL_BY_PATH: Final = {str(c): c for c in Channel}


def parse_topic(name: str) -> TopicInfo:
    """Split a topic into table, channel and device; ``WireError`` if it is not one of ours."""
    if not isinstance(name, str):
        raise WireError(f"topic must be a string, got {type(name).__name__}")
    prefix = ROOT + "/"
    if not name.startswith(prefix):
        raise WireError(f"topic {name!r} is not under {prefix!r}")
    parts = name[len(prefix) :].split("/")
    if len(parts) < 2:
        raise WireError(f"topic {name!r} has no channel after the table id")
    table = _check_id("table id", parts[0])
    rest = parts[1:]
    for length in (2, 1):
        path = "/".join(rest[:length])
        channel = _CHANNEL_BY_PATH.get(path)
        if channel is None or len(rest) < length:
            continue
        extra = rest[length:]
        if CHANNELS[channel].per_device:
            if len(extra) != 1:
                raise WireError(f"topic {name!r}: channel {channel} needs exactly one device id after it")
            return TopicInfo(table, channel, _check_id("device id", extra[0]))
        if extra:
            raise WireError(f"topic {name!r}: unexpected levels after channel {channel}")
        return TopicInfo(table, channel, None)
    raise WireError(
        f"topic {name!r}: unknown channel {'/'.join(rest)!r}; known: {', '.join(map(str, Channel))}"
    )


# --------------------------------------------------------------------------- field rules

Check = Callable[[Any, str], Any]


def _fail(path: str, expected: str, value: Any, echo: bool = True) -> WireError:
    if not echo:
        # A card field: whatever came is not repeated (it may be a down card's identity, and the
        # error may be logged or shown; DESIGN: trust boundaries).
        return WireError(f"field {path!r} must be {expected}")
    shown = repr(value)
    if len(shown) > 60:
        shown = shown[:57] + "..."
    return WireError(f"field {path!r} must be {expected}, got {shown}")


def integer(lo: int = 0, hi: int = MAX_COUNTER) -> Check:
    def check(value: Any, path: str) -> Any:
        if isinstance(value, bool) or not isinstance(value, int) or not lo <= value <= hi:
            raise _fail(path, f"an integer from {lo} to {hi}", value)
        return value

    return check


def number(lo: float, hi: float) -> Check:
    def check(value: Any, path: str) -> Any:
        if (
            isinstance(value, bool)
            or not isinstance(value, int | float)
            or not math.isfinite(value)
            or not lo <= value <= hi
        ):
            raise _fail(path, f"a number from {lo} to {hi}", value)
        return value

    return check


def text(
    max_len: int = 1000, pattern: re.Pattern[str] | None = None, expected: str = "", echo: bool = True
) -> Check:
    def check(value: Any, path: str) -> Any:
        if not isinstance(value, str) or len(value) > max_len or (pattern and not pattern.fullmatch(value)):
            raise _fail(path, expected or f"a string of at most {max_len} characters", value, echo)
        return value

    return check


def one_of(*choices: str) -> Check:
    def check(value: Any, path: str) -> Any:
        if not isinstance(value, str) or value not in choices:
            raise _fail(path, "one of " + ", ".join(repr(c) for c in choices), value)
        return value

    return check


def boolean(value: Any, path: str) -> Any:
    if not isinstance(value, bool):
        raise _fail(path, "true or false", value)
    return value


def nullable(inner: Check) -> Check:
    def check(value: Any, path: str) -> Any:
        return None if value is None else inner(value, path)

    return check


def list_of(inner: Check, max_len: int = 64) -> Check:
    def check(value: Any, path: str) -> Any:
        if not isinstance(value, list) or len(value) > max_len:
            raise _fail(path, f"a list of at most {max_len} items", value)
        return [inner(item, f"{path}[{i}]") for i, item in enumerate(value)]

    return check


def any_object(value: Any, path: str) -> Any:
    if not isinstance(value, dict):
        raise _fail(path, "a JSON object", value)
    return value


def any_json(value: Any, path: str) -> Any:
    return value


card = text(2, _CARD_RE, "a card code such as 'Ah' or 'Td'", echo=False)
card_or_unknown = text(
    2, re.compile(r"[23456789TJQKA][cdhs]|\?\?"), "a card code such as 'Ah', or '??'", echo=False
)
ident = text(64, _ID_RE, "an id of letters, digits, '_', '.' or '-'")
word = text(64, _KIND_RE, "a lower-case word such as 'off_felt'")
uid_hex = text(20, _HEX_RE, "a tag UID in lower-case hex, 4 to 10 bytes (8 to 20 digits)")
seat_no = integer(1, 10)
_COUNTER: Final = integer()
chips = integer(0, MAX_COUNTER)


@dataclass(frozen=True, slots=True)
class F:
    """One field of a schema: its name, its rule, and whether it may be left out."""

    name: str
    check: Check
    required: bool = True


@dataclass(frozen=True, slots=True)
class Schema:
    """The body of one message kind.

    ``extra`` allows fields not listed (kept as they are), for kinds whose
    details belong to another package (a dealer report's particulars).
    ``rule`` is a whole-body check run after the fields, for cross-field
    invariants (a card drawn with status ``ok`` must name its card).
    """

    fields: tuple[F, ...]
    extra: bool = False
    rule: Callable[[Mapping[str, Any]], str | None] | None = None
    doc: str = ""


HEADER_FIELDS: Final = ("v", "source", "session", "seq", "kind")


def _card_drawn_rule(body: Mapping[str, Any]) -> str | None:
    status = body["status"]
    if status in ("ok", "duplicate") and (body["card"] is None or body["deck"] is None):
        return f"status {status!r} needs both 'card' and 'deck'"
    if status == "unknown_tag" and body["card"] is not None:
        return "status 'unknown_tag' must have 'card': null (the tag is not in any enrolled deck)"
    return None


def _seat_view(value: Any, path: str) -> Any:
    any_object(value, path)
    for key in value:
        if key not in ("up", "down"):
            raise WireError(f"field {path + '.' + str(key)!r} is not allowed; a seat has 'up' and 'down'")
    if "up" not in value or "down" not in value:
        raise WireError(f"field {path!r} must have both 'up' and 'down'")
    list_of(card_or_unknown, 8)(value["up"], f"{path}.up")
    integer(0, 8)(value["down"], f"{path}.down")
    return value


def _seats(value: Any, path: str) -> Any:
    any_object(value, path)
    if len(value) > 10:
        raise _fail(path, "an object of at most 10 seats", value)
    for key, view in value.items():
        if not (
            isinstance(key, str)
            and key.isascii()
            and key.isdigit()
            and 1 <= int(key) <= 10
            and str(int(key)) == key
        ):
            raise _fail(f"{path}.{key}", "keyed by a seat number '1' to '10'", key)
        _seat_view(view, f"{path}.{key}")
    return value


def _irregular(value: Any, path: str) -> Any:
    any_object(value, path)
    body = _check_fields(
        value,
        (F("kind", word), F("seat", nullable(seat_no)), F("card", nullable(card_or_unknown))),
        extra=False,
        path=path + ".",
    )
    return body


def _public_state(value: Any, path: str) -> Any:
    """The ``state`` of ``public/state``: the typed tree of ``engine.publicstate``."""
    try:
        PublicState.from_json(value)
    except StateError as exc:
        raise WireError(f"{path}: {exc}") from None
    return value


def _prompt_entry(value: Any, path: str) -> Any:
    any_object(value, path)
    return _check_fields(
        value,
        (
            F("prompt", ident),
            F("text", text(2000)),
            F("options", list_of(ident, 16)),
            F("labels", list_of(text(200), 16), required=False),
            F("rule", nullable(text(200)), required=False),
        ),
        extra=True,
        path=path + ".",
    )


def _history_listing(value: Any, path: str) -> Any:
    any_object(value, path)
    return _check_fields(
        value,
        (
            F("hand", ident),
            F("number", integer(1)),
            F("variant", text(16)),
            F("live", boolean),
            F("label", text(500)),
            F("players", list_of(list_of(any_json, 2), 10)),
            F("started", nullable(text(32))),
            F("ended", nullable(text(32))),
        ),
        extra=False,
        path=path + ".",
    )


def _history_step(value: Any, path: str) -> Any:
    any_object(value, path)
    return _check_fields(
        value,
        (
            F("i", integer()),
            F("kind", text(64)),
            F("at", nullable(text(32))),
            F("source", nullable(text(64))),
            F("text", text(2000)),
            F("cards", list_of(card_or_unknown, 14)),
            F("pot", chips),
            F("street", nullable(text(32))),
            # The public state after the step (engine.publicstate's tree, built by the engine's own
            # public_state).  Checked as an object only: the full check of every step's state cost
            # ~55 ms per 60-step answer at each end, and the console's reader
            # (dealer_console.snapshot.read_state) takes any object, falling back to defaults.
            F("state", nullable(any_object)),
        ),
        extra=False,
        path=path + ".",
    )


def _history_detail(value: Any, path: str) -> Any:
    any_object(value, path)
    return _check_fields(
        value,
        (
            F("hand", ident),
            F("number", integer(1)),
            F("variant", text(16)),
            F("live", boolean),
            F("hole_cards", boolean),
            F("steps", list_of(_history_step, MAX_HISTORY_STEPS)),
            F("phh", nullable(text(MAX_PAYLOAD_BYTES))),
            F("log", nullable(list_of(any_object, MAX_HISTORY_STEPS))),
        ),
        extra=False,
        path=path + ".",
    )


_REGISTRY: dict[tuple[Channel, str], Schema] = {}


def register_schema(channel: Channel, kind: str, schema: Schema) -> None:
    """Add or replace the schema of ``kind`` on ``channel`` (how the engine declares its commands)."""
    if not _KIND_RE.fullmatch(kind):
        raise WireError(f"kind {kind!r} must be a lower-case word")
    if channel is Channel.AVAIL:
        raise WireError("availability payloads are plain text, they have no schema")
    _REGISTRY[(channel, kind)] = schema


def schemas() -> Mapping[tuple[Channel, str], Schema]:
    """A read-only view of the registry (for the docs and tests)."""
    return dict(_REGISTRY)


_DEFAULTS: tuple[tuple[Channel, str, Schema], ...] = (
    (
        Channel.BIRTH,
        "birth",
        Schema(
            (
                F("role", one_of(*map(str, Role))),
                F("version", text(64)),
                F("capabilities", list_of(word, 32)),
                F("last_seq", integer()),
            ),
            doc="sent retained at every connect with seq 0; 'session' is the restart counter, 'last_seq' the "
            "highest seq sent so far in this session",
        ),
    ),
    (
        Channel.SHOE,
        "card_drawn",
        Schema(
            (
                F("counter", integer()),
                F("uid", uid_hex),
                F("card", nullable(card)),
                F("deck", nullable(ident)),
                F("quality", integer(0, 255)),
                F("status", one_of("ok", "unknown_tag", "foreign_deck", "duplicate")),
                # the shoe's boot count: with the device's source and ``counter`` it names one draw
                # for good, so a card the bridge publishes twice (resent after its restart) is
                # recognised by the engine
                F("boot", integer(), required=False),
            ),
            rule=_card_drawn_rule,
            doc="one card drawn from the shoe, in draw order",
        ),
    ),
    (
        Channel.SHOE,
        "tag_seen",
        Schema(
            (
                F("counter", integer()),
                F("antenna", integer(0, 10)),
                F("uid", uid_hex),
                F("card", nullable(card)),
                F("deck", nullable(ident)),
                F("quality", integer(0, 255)),
            ),
            doc="a tag arrived at a seat antenna (optional hardware)",
        ),
    ),
    (
        Channel.SHOE,
        "shoe_loaded",
        Schema((F("deck", nullable(ident), required=False),), doc="a deck was loaded into the shoe"),
    ),
    (Channel.SHOE, "shoe_empty", Schema((), doc="the shoe reports no cards left")),
    (
        Channel.SHOE,
        "device_error",
        Schema((F("code", text(64)), F("text", text(500))), doc="the shoe or its link reports a fault"),
    ),
    (
        Channel.SHOE,
        "reset",
        Schema(
            (F("reason", text(200), required=False),),
            doc="the shoe device restarted; its counter starts again",
        ),
    ),
    (
        Channel.VISION,
        "observation",
        Schema(
            (
                F("frame", integer()),
                F("seats", _seats),
                F("changed", list_of(seat_no, 10)),
                F("irregular", list_of(_irregular, 32)),
                F("fps", number(0, 1000)),
            ),
            doc="the debounced view of the felt; only face-up cards are named",
        ),
    ),
    (
        Channel.COMMAND,
        "action",
        Schema(
            (F("seat", seat_no), F("action", word), F("amount", nullable(chips))),
            doc="a player's action as the dealer entered it",
        ),
    ),
    (
        Channel.COMMAND,
        "report",
        Schema(
            (F("report", word), F("seat", nullable(seat_no))),
            extra=True,
            doc="something the dealer saw that no sensor sees",
        ),
    ),
    (
        Channel.COMMAND,
        "ruling",
        Schema((F("prompt", ident), F("option", ident)), doc="the dealer's choice on an open prompt"),
    ),
    (
        Channel.COMMAND,
        "manual_card",
        Schema(
            (F("seat", nullable(seat_no)), F("card", card_or_unknown), F("face_up", boolean),
             F("common", boolean, required=False)),
            doc="a card entered by hand when shoe or camera is down; 'common': true (seat null) for the "
            "common card of RRoP stud 15",
        ),
    ),
    (
        Channel.COMMAND,
        "show",
        Schema(
            (F("seat", seat_no), F("cards", list_of(card, 7))),
            doc="the cards a player shows at showdown (the down cards, or all seven)",
        ),
    ),
    (Channel.COMMAND, "muck", Schema((F("seat", seat_no),), doc="a player throws the hand away at showdown")),
    (
        Channel.COMMAND,
        "table",
        Schema(
            (F("op", word), F("seat", nullable(seat_no))),
            extra=True,
            doc="seat, leave, buy-in and the like, between hands; op 'game' with 'game' (variant, ante, "
            "bring_in, small_bet, big_bet): the game and stakes from the next hand",
        ),
    ),
    (
        Channel.COMMAND,
        "correction",
        Schema(
            (F("op", one_of("undo")), F("hand", integer(1)), F("input", integer(1, 1 << 20)),
             F("pin", text(12), required=False)),
            doc="undo one dealer entry of the hand in progress ('input': its number in public/state "
            "dealer_inputs); an older entry than the last needs the floor PIN (checked by the engine, never "
            "stored or published)",
        ),
    ),
    (
        Channel.COMMAND,
        "history",
        Schema(
            (
                F("request", ident),
                F("hand", nullable(integer(1)), required=False),
                F("seat", nullable(seat_no), required=False),
                F("player", nullable(text(MAX_HISTORY_NAME)), required=False),
                F("before", nullable(integer(1)), required=False),
                F("limit", integer(1, MAX_HISTORY_PAGE)),
            ),
            doc="a history query: the hands that match (newest first, at most 'limit', below hand 'before'), "
            "and the steps of hand 'hand'; answered on console/history with the same 'request'",
        ),
    ),
    (
        Channel.HISTORY_REPLY,
        "answer",
        Schema(
            (
                F("request", nullable(ident)),
                F("hands", list_of(_history_listing, MAX_HISTORY_PAGE + 1)),
                F("hand", nullable(_history_detail)),
                F("error", nullable(text(500))),
            ),
            doc="the answer to one history query: a page of hands, one hand's steps, or why it was refused",
        ),
    ),
    (
        Channel.STATE,
        "state",
        Schema((F("state", _public_state),), doc="the public table snapshot (engine.publicstate.PublicState)"),
    ),
    (Channel.PROMPT, "prompts", Schema((F("open", list_of(_prompt_entry, 32)),), doc="all open prompts")),
    (
        Channel.HISTORY,
        "hand",
        Schema(
            (
                F("hand", ident),
                F("variant", text(16)),
                F("events", list_of(any_json, 100_000)),
                F("phh", nullable(text(MAX_PAYLOAD_BYTES))),
            ),
            extra=True,
            doc="a finished hand, sent after the pot is awarded",
        ),
    ),
)
for _channel, _kind, _schema in _DEFAULTS:
    register_schema(_channel, _kind, _schema)


def _check_fields(
    body: Mapping[str, Any], fields: Iterable[F], *, extra: bool, path: str = ""
) -> dict[str, Any]:
    out: dict[str, Any] = {}
    names = set()
    for spec in fields:
        names.add(spec.name)
        if spec.name not in body:
            if spec.required:
                raise WireError(f"field {path + spec.name!r} is missing")
            continue
        out[spec.name] = spec.check(body[spec.name], path + spec.name)
    for key, value in body.items():
        if key in names:
            continue
        if not extra:
            raise WireError(f"field {path + str(key)!r} is not part of this message")
        out[key] = value
    return out


# --------------------------------------------------------------------------- messages


@dataclass(frozen=True, slots=True)
class Message:
    """One message on the bus, already checked against the contract.

    For availability ``kind`` is ``online`` or ``offline``, ``source`` is the
    device from the topic, and ``session``/``seq`` are ``None``.  For every other
    channel ``body`` holds the fields of ``kind`` (the header is not repeated in it).
    """

    table: str
    channel: Channel
    kind: str
    source: str
    session: int | None = 0
    seq: int | None = 0
    body: Mapping[str, Any] = field(default_factory=dict)

    @property
    def topic(self) -> str:
        spec = CHANNELS[self.channel]
        return topic(self.table, self.channel, self.source if spec.per_device else None)

    @property
    def spec(self) -> ChannelSpec:
        return CHANNELS[self.channel]

    @property
    def key(self) -> tuple[str, int, int]:
        """``(source, session, seq)``: what the event store de-duplicates on."""
        if self.session is None or self.seq is None:
            raise WireError("availability messages have no sequence key")
        return (self.source, self.session, self.seq)


def availability(table: str, device: str, online: bool) -> Message:
    return Message(
        table, Channel.AVAIL, AVAILABILITY_ONLINE if online else AVAILABILITY_OFFLINE, device, None, None, {}
    )


def make(
    table: str, channel: Channel, kind: str, *, source: str, session: int, seq: int, **body: Any
) -> Message:
    """Build a message and check it now, so that a bad message fails at the sender, not the receiver."""
    msg = Message(table, channel, kind, source, session, seq, dict(body))
    return validate(msg)


def validate(msg: Message) -> Message:
    """Check a message against the contract; return it with its body normalised."""
    where = f"{msg.channel}/{msg.kind}"
    _check_id("table id", msg.table)
    _check_id("source", msg.source)
    if msg.channel is Channel.AVAIL:
        if msg.kind not in (AVAILABILITY_ONLINE, AVAILABILITY_OFFLINE):
            raise WireError(f"{where}: availability is 'online' or 'offline'")
        return msg
    schema = _REGISTRY.get((msg.channel, msg.kind))
    if schema is None:
        known = sorted(k for c, k in _REGISTRY if c is msg.channel)
        raise WireError(f"{msg.channel}: unknown kind {msg.kind!r}; known kinds: {', '.join(known)}")
    try:
        _COUNTER(msg.session, "session")
        _COUNTER(msg.seq, "seq")
        for name in HEADER_FIELDS:
            if name in msg.body:
                raise WireError(f"field {name!r} is a header field and may not appear in the body")
        body = _check_fields(msg.body, schema.fields, extra=schema.extra)
        if msg.channel is Channel.COMMAND:
            _check_command_size(body)
        if schema.rule is not None:
            problem = schema.rule(body)
            if problem:
                raise WireError(problem)
    except WireError as exc:
        raise WireError(f"{where} from {msg.source!r}: {exc}") from None
    return Message(msg.table, msg.channel, msg.kind, msg.source, msg.session, msg.seq, body)


def _check_command_size(body: Mapping[str, Any]) -> None:
    try:
        size = len(json.dumps(body, separators=(",", ":"), ensure_ascii=False, allow_nan=False).encode("utf-8"))
    except (TypeError, ValueError):
        return  # not plain JSON: encode says so
    if size > MAX_COMMAND_BYTES:
        raise WireError(f"a console command's body of {size} bytes exceeds the {MAX_COMMAND_BYTES}-byte limit "
                        "for console commands")


def encode(msg: Message, *, checked: bool = False) -> bytes:
    """The payload bytes of ``msg``, validated first unless ``checked``: built by ``make`` (or
    ``availability``) and not changed since; the engine's state is checked once, not twice."""
    if not checked:
        msg = validate(msg)
    if msg.channel is Channel.AVAIL:
        return msg.kind.encode("ascii")
    doc: dict[str, Any] = {
        "v": WIRE_VERSION,
        "source": msg.source,
        "session": msg.session,
        "seq": msg.seq,
        "kind": msg.kind,
    }
    doc.update(msg.body)
    try:
        return json.dumps(doc, separators=(",", ":"), ensure_ascii=False, allow_nan=False).encode("utf-8")
    except (TypeError, ValueError) as exc:
        raise WireError(f"{msg.channel}/{msg.kind}: body is not plain JSON: {exc}") from None


def _no_constants(name: str) -> Any:
    raise WireError(f"{name} is not valid JSON")


def _finite_float(literal: str) -> float:
    value = float(literal)
    if not math.isfinite(value):
        raise WireError(f"number {literal[:40]} is out of range")
    return value


def decode(topic_name: str, payload: bytes) -> Message:
    """Parse and check one received message.  Raises ``WireError`` (only) if anything is wrong."""
    info = parse_topic(topic_name)
    if not isinstance(payload, bytes | bytearray):
        raise WireError(f"{topic_name}: payload must be bytes")
    if len(payload) > MAX_PAYLOAD_BYTES:
        raise WireError(f"{topic_name}: payload of {len(payload)} bytes exceeds {MAX_PAYLOAD_BYTES}")
    if info.channel is Channel.COMMAND and len(payload) > MAX_COMMAND_BYTES + 512:  # + the header fields
        raise WireError(f"{topic_name}: payload of {len(payload)} bytes exceeds the {MAX_COMMAND_BYTES}-byte "
                        "limit for console commands")
    try:
        raw = bytes(payload).decode("utf-8")
    except UnicodeDecodeError as exc:
        raise WireError(f"{topic_name}: payload is not UTF-8 ({exc.reason} at byte {exc.start})") from None
    if info.channel is Channel.AVAIL:
        assert info.device is not None
        if raw not in (AVAILABILITY_ONLINE, AVAILABILITY_OFFLINE):
            raise WireError(f"{topic_name}: availability must be 'online' or 'offline', got {raw[:40]!r}")
        return availability(info.table, info.device, raw == AVAILABILITY_ONLINE)
    try:
        doc = json.loads(raw, parse_constant=_no_constants, parse_float=_finite_float)
    except WireError as exc:
        raise WireError(f"{topic_name}: {exc}") from None
    except json.JSONDecodeError as exc:
        raise WireError(
            f"{topic_name}: payload is not JSON ({exc.msg} at line {exc.lineno} column {exc.colno})"
        ) from None
    except ValueError as exc:  # e.g. an integer literal longer than Python's digit limit
        raise WireError(f"{topic_name}: payload is not usable JSON ({exc})"[:300]) from None
    except RecursionError:
        raise WireError(f"{topic_name}: payload JSON is nested too deeply") from None
    if not isinstance(doc, dict):
        raise WireError(f"{topic_name}: payload must be a JSON object, got {type(doc).__name__}")
    version = doc.get("v")
    if version != WIRE_VERSION or isinstance(version, bool):
        raise WireError(f"{topic_name}: field 'v' must be {WIRE_VERSION}, got {version!r}")
    for name in ("source", "session", "seq", "kind"):
        if name not in doc:
            raise WireError(f"{topic_name}: field {name!r} is missing")
    kind = doc["kind"]
    if not isinstance(kind, str):
        raise WireError(f"{topic_name}: field 'kind' must be a string, got {kind!r}"[:200])
    source = doc["source"]
    if not isinstance(source, str):
        raise WireError(f"{topic_name}: field 'source' must be a device id string")
    if info.device is not None and source != info.device:
        raise WireError(
            f"{topic_name}: field 'source' {source!r} does not match the topic's device {info.device!r}"
        )
    body = {k: v for k, v in doc.items() if k not in HEADER_FIELDS}
    try:
        return validate(Message(info.table, info.channel, kind, source, doc["session"], doc["seq"], body))
    except WireError as exc:
        raise WireError(f"{topic_name}: {exc}") from None
    except RecursionError:
        raise WireError(f"{topic_name}: payload JSON is nested too deeply") from None
