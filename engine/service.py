"""The engine service: the table's sensors and console in, public state out.

Theory of operation
-------------------
``EngineCore`` is pure: it turns a wire message into a ``Floor`` input,
recognises a message it has already seen (``SourceTracker``), says what to
publish, and can be rebuilt by replaying stored inputs.  ``EngineService`` is
the edge around it: the MQTT client (``engine.bus.BusClient``), the event
store, and the order that makes the table durable:

    message in -> tracked (duplicate? dropped) -> appended to the store (fsync)
               -> applied to the Floor -> public/state, dealer/prompt, history/hand out

Every input is stored before any of its effects is published, so after a
crash (even SIGKILL) the engine replays the store and carries on with the
hand exactly where it was; a message the broker delivers again is found in
the store by its (source, session, seq) and ignored.  A refused input is
stored too: replaying it refuses it again, so the replay stays exact.
"""

from __future__ import annotations

import dataclasses
import hmac
import json
import logging
import queue
import re
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from engine import handlog, phh
from engine.broker.acl import device_role
from engine.bus import SourceTracker, Verdict
from engine.citations import in_words
from engine.floor import Floor, FloorError, FloorOutputs, Prompt
from engine.hand import Hand
from engine.irregularities import BY_ID
from engine.public import game_view, public_state
from engine.rules import ConfigError, GameConfig
from engine.wire import CHANNELS, Channel, Message, Role

log = logging.getLogger(__name__)


TRACKED_CHANNELS = frozenset({Channel.SHOE, Channel.VISION, Channel.COMMAND})
#: How long the engine waits before trying a failed store write again (held inputs, owed work).
STORE_RETRY_S = 0.5


def source_key(channel: Channel | str, source: str) -> str:
    """What duplicate and gap detection is keyed by: the channel (whose ACL fixes the role that may
    publish on it) and the source the message names.  A console that names itself ``shoe-1`` on
    the command channel is another key than the shoe on ``sensor/shoe``: it cannot make the
    shoe's cards look stale."""
    return f"{channel}:{source}"


def source_of(key: str) -> str:
    """The device part of a stored key (a store written before keys had a channel holds the device alone)."""
    return key.rpartition(":")[2]


def legacy_key(source: str) -> str:
    """The key of a store row written before keys named the channel: the channel of the source's role."""
    if ":" in source:
        return source
    role = device_role(source)
    for channel in sorted(TRACKED_CHANNELS):
        if role is not None and role is not Role.ENGINE and role in CHANNELS[channel].writers:
            return source_key(channel, source)
    return source


def source_allowed(channel: Channel, source: str) -> bool:
    """Does a device of that name belong on that channel (its role may publish there)?"""
    role = device_role(source)
    return role is not None and role in CHANNELS[channel].writers
NOTE = "note"  # a stored message that is not an input to the table
ENGINE_SOURCE = "engine"  # inputs the engine makes itself (seating from the config, automatic next hand)
IDLE_AFTER_S = 0.5  # the table counts as quiet this long after an input (store upkeep then)
IDLE_CHECK_S = 0.25
#: Forged device names the engine remembers (each reported once); a flood past it is only logged.
MAX_FORGED_NAMES = 1024
#: wrong floor PINs taken in one hand; after them a PIN is not compared until the next hand
MAX_WRONG_PINS = 5
#: the most prompts one dealer/prompt message carries (engine/wire.py: the ``open`` list's limit)
MAX_WIRE_PROMPTS = 32


class ServiceConfigError(ValueError):
    """A broken engine configuration; the message names the field."""


@dataclass
class EngineConfig:
    table: str
    game: GameConfig
    seats: list[dict[str, Any]]
    store: str
    broker_host: str = "127.0.0.1"
    broker_port: int = 1883
    broker_config_dir: str | None = None
    username: str = "engine"
    password: str = ""
    device: str = "engine"
    #: False (the default): the result stays on both screens until the dealer taps Next hand
    #: (issue 21, 5); True: the next hand starts by itself, ``hold_s`` seconds after the award
    auto_start: bool = False
    hold_s: float = 0.0
    seat_count: int = 8
    #: the floor's PIN (issue 21, 4): undoing an input older than the dealer's last needs it; checked
    #: by the service in constant time, never stored, never on public/state (None: the table has none)
    floor_pin: str | None = field(default=None, repr=False)
    #: False: the table has no card shoe (camera only, or every card keyed): the camera's new cards
    #: are the deal from the first hand on, with no "shoe offline" prompt (issue 21, 12)
    shoe: bool = True
    extra: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def load(cls, path: str | Path) -> EngineConfig:
        """An engine config file, or the engine's part of the table file (``engine.tableconfig``).
        A broken one is a ``ConfigFileError`` naming the file and the key."""
        from engine.configfile import read_config
        from engine.tableconfig import part

        p = Path(path)
        data = read_config(p, "engine config")
        return cls.from_dict(part(p, data, "engine") or data, base=p.parent, file=p)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], base: Path | None = None,
                  file: Path | None = None) -> EngineConfig:
        from engine.configfile import ConfigFileError, parse_port
        from engine.tableconfig import check_game, check_seat_count, check_seats, check_table_id

        if "table" not in data:
            raise ConfigFileError(file, "table", "the table id is missing", "add table = \"t1\"")
        table = check_table_id(data["table"], file)
        seat_count = check_seat_count(data.get("seat_count", 8), file)
        try:
            game = GameConfig.from_json(dict(check_game(data.get("game"), file)))
        except ConfigError as exc:  # pragma: no cover - check_game has tried it
            raise ServiceConfigError(f"engine config [game]: {exc}") from None
        seats = check_seats(list(data.get("seats", [])), seat_count, file)
        broker = dict(data.get("broker", {}))
        store = dict(data.get("store", {}))
        url = str(store.get("url", "studtable.db"))
        if base is not None and "://" not in url and not Path(url).is_absolute():
            url = str(base / url)
        config_dir = broker.get("config_dir")
        if config_dir and base is not None and not Path(config_dir).is_absolute():
            config_dir = str(base / config_dir)
        engine = dict(data.get("engine", {}))
        floor_pin = engine.get("floor_pin")
        if engine.get("floor_pin_file"):
            floor_pin = read_floor_pin(engine["floor_pin_file"], base, file)
        if floor_pin in (None, ""):
            floor_pin = None
        elif not isinstance(floor_pin, str | int) or not re.fullmatch(r"[0-9]{4,12}", str(floor_pin)):
            where = "engine.floor_pin_file" if engine.get("floor_pin_file") else "engine.floor_pin"
            raise ConfigFileError(file, where, "the floor PIN must be 4 to 12 digits",
                                  'write it as a quoted string, e.g. floor_pin = "4821"')
        return cls(
            table=table,
            game=game,
            seats=seats,
            store=url,
            broker_host=str(broker.get("host", "127.0.0.1")),
            broker_port=parse_port(broker.get("port", 1883), file, "broker.port"),
            broker_config_dir=config_dir,
            username=str(broker.get("username", "engine")),
            password=str(broker.get("password", "")),
            device=str(engine.get("device", "engine")),
            auto_start=bool(engine.get("auto_start", False)),
            hold_s=_hold(engine.get("hold_s", 0.0), file),
            seat_count=seat_count,
            floor_pin=None if floor_pin is None else str(floor_pin),
            shoe=_flag(engine.get("shoe", True), file, "engine.shoe"),
        )


def _flag(value: Any, file: Path | None, key: str) -> bool:
    from engine.configfile import ConfigFileError

    if not isinstance(value, bool):
        raise ConfigFileError(file, key, f"must be true or false, got {value!r}", f"{key.rsplit('.', 1)[-1]} = false")
    return value


def _hold(value: Any, file: Path | None) -> float:
    from engine.configfile import ConfigFileError

    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 <= value <= 3600:
        raise ConfigFileError(file, "engine.hold_s", f"must be seconds from 0 to 3600, got {value!r}",
                              "hold_s = 10")
    return float(value)


def read_floor_pin(value: object, base: Path | None, file: Path | None) -> str:
    """The floor PIN from its own file (``engine.floor_pin_file``), which only the engine's account
    may read: the table file is readable by every service on the machine, the console's too."""
    from engine.configfile import ConfigFileError

    key = "engine.floor_pin_file"
    path = Path(str(value))
    if base is not None and not path.is_absolute():
        path = base / path
    try:
        mode = path.stat().st_mode
        text = path.read_text("utf-8").strip()
    except OSError as exc:
        raise ConfigFileError(file, key, f"cannot read {path} ({exc.strerror})",
                              "write the PIN (4 to 12 digits) into it, readable by the engine's account only") from None
    if mode & 0o077:
        raise ConfigFileError(file, key, f"{path} may be read by other accounts (mode {mode & 0o777:o})",
                              f"chmod 600 {path} (the console's account must not read the floor PIN)")
    return text


# ----------------------------------------------------------------------------- pure core


def input_from_message(msg: Message) -> dict[str, Any] | None:
    """The Floor input a wire message stands for (None: nothing for the table to do)."""
    body = dict(msg.body)
    if msg.channel is Channel.SHOE:
        if msg.kind == "card_drawn":
            inp = {"kind": "shoe_card", "card": body.get("card"), "status": body.get("status", "ok"),
                   "counter": body.get("counter")}
            if body.get("boot") is not None:
                inp["boot"] = body["boot"]  # with the source and counter: this draw, for good (see _draws)
            return inp
        if msg.kind == "device_error" and body.get("code") != "events_missing":  # that one: source.lost
            return {"kind": "source", "device": msg.source, "status": "gap", "missing": 0}
        return None
    if msg.channel is Channel.VISION and msg.kind == "observation":
        return {"kind": "camera", "seats": body.get("seats", {}), "irregular": body.get("irregular", [])}
    if msg.channel is Channel.COMMAND:
        if msg.kind == "table":
            return {"kind": "table", **body}
        if msg.kind == "manual_card":
            return {"kind": "manual_card", **body}
        if msg.kind in ("action", "report", "ruling", "show", "muck"):
            return {"kind": msg.kind, **body}
        if msg.kind == "correction":
            body.pop("floor", None)  # the floor's authority is the service's finding, never a console's claim
            return {"kind": "correction", **body}
    return None


class EngineCore:
    """The Floor plus what the service needs to feed it exactly once."""

    def __init__(self, config: EngineConfig) -> None:
        self.config = config
        self.floor = Floor(config.game, config.table, config.seat_count)
        self.tracker = SourceTracker()
        self.devices: dict[str, bool] = {}
        #: when each device was last heard (a data message or a birth; the service's monotonic clock)
        self.heard: dict[str, float] = {}
        self.last_error: dict[str, Any] | None = None
        #: the key of the last input applied, shown on public/state so a sender sees it was taken
        self.last_input: dict[str, Any] | None = None
        self.finished: list[Hand] = []
        #: wrong floor PINs in the hand in progress (hand number -> count); MAX_WRONG_PINS locks it
        self.wrong_pins: dict[int, int] = {}
        #: where each event of a hand came from and when (engine.handlog), and the finished hands
        self.provenance = handlog.Provenance()
        #: (source, time) of each input of the hand in progress, in the floor's ``hand_inputs`` order
        self._marks_hand: int | None = None
        self._input_marks: list[tuple[str, str | None]] = []
        self.index: list[handlog.HandEntry] = []

    def authorized(self, inp: dict[str, Any] | None) -> dict[str, Any] | None:
        """A correction's floor PIN turned into what the store keeps: the verdict (``floor``: ok, wrong,
        unset), never the PIN.  Compared in constant time (``hmac.compare_digest``)."""
        if inp is None or inp.get("kind") != "correction" or "pin" not in inp:
            return inp
        inp = dict(inp)
        given = str(inp.pop("pin")).encode()
        pin = self.config.floor_pin
        if pin and self.wrong_pins.get(self._hand_number(), 0) >= MAX_WRONG_PINS:
            inp["floor"] = "locked"  # not even compared: a PIN is not guessed at wire speed
        else:
            inp["floor"] = "unset" if not pin else "ok" if hmac.compare_digest(given, pin.encode()) else "wrong"
        return inp

    def _hand_number(self) -> int:
        hand = self.floor.table.hand
        return hand.hand_id if hand is not None else 0

    def game_input(self) -> dict[str, Any]:
        """The config's game as a table input: the first input of a new store, and again whenever the
        config's game changed since (from the next hand; the hands in the store keep theirs)."""
        return {"kind": "table", "op": "game", "game": self.config.game.to_json()}

    def setup_inputs(self) -> list[dict[str, Any]]:
        """The game and the seating from the config, for a table with an empty store."""
        inputs: list[dict[str, Any]] = [self.game_input()]
        if not self.config.shoe:
            inputs.append({"kind": "source", "device": "shoe", "status": "absent"})
        inputs += [
            {"kind": "table", "op": "seat", "seat": s["seat"], "name": s["name"], "amount": s["stack"]}
            for s in self.config.seats
        ]
        if self.config.auto_start and len(self.config.seats) >= 2:
            inputs.append({"kind": "table", "op": "start_hand"})
        return inputs

    def apply(
        self, source: str, inp: Mapping[str, Any], session: int | None = None, seq: int | None = None,
        at: str | None = None,
    ) -> FloorOutputs | None:
        """Apply an input; a refused one is remembered for the dealer's screen and changes nothing.

        ``session`` and ``seq`` (a device's input) become the state's ``input``; the engine's own
        inputs (seating from the config, the next hand started by itself) leave it as it was.
        ``at`` (UTC, when the input was stored) and ``source`` mark the hand events it made."""
        if source != ENGINE_SOURCE:
            self.last_input = {"source": source, "session": session, "seq": seq}
        if inp.get("kind") == "correction" and inp.get("floor") == "wrong":
            # counted from the stored verdicts, so a restart counts the same (see ``authorized``)
            number = self._hand_number()
            self.wrong_pins = {number: self.wrong_pins.get(number, 0) + 1}
        try:
            out = self.floor.handle(inp)
        except FloorError as exc:
            # the rule in words for the dealer (engine/citations.py): "[Robert's Rules, the buy-in, section 3.1]"
            self.last_error = {"source": source, "input": inp.get("kind"), "reason": in_words(str(exc))}
            log.info("refused %s from %s: %s", inp.get("kind"), source, exc)
            return None
        self.last_error = None
        self._mark(source, at)
        for hand in (self.floor.table.hand, out.hand_finished):
            if hand is not None and hand is not self.floor.table.hand:
                self.provenance.note(hand, source, at)
        if out.hand_finished is not None:
            self.finished.append(out.hand_finished)
            hand = out.hand_finished
            self.index.append(handlog.entry(hand, hand_id(hand, self.config.table), self.provenance.of(hand)))
        return out

    def _mark(self, source: str, at: str | None) -> None:
        """Who and when for each event of the hand in progress: the marks of the inputs the floor
        keeps (``hand_inputs``), mapped onto its events (``event_inputs``), so that a correction,
        which takes the hand again, leaves every event with the input that made it."""
        floor, hand = self.floor, self.floor.table.hand
        if hand is None:
            return
        if floor.hand_base is None or len(floor.event_inputs) != len(hand.events):
            self.provenance.note(hand, source, at)  # a hand the floor keeps no inputs of (not expected)
            return
        if self._marks_hand != hand.hand_id:
            self._marks_hand, self._input_marks = hand.hand_id, []
        marks = self._input_marks
        marks.extend([(source, at)] * (len(floor.hand_inputs) - len(marks)))
        self.provenance.set(hand, [marks[i] for i in floor.event_inputs])

    def next_hand_input(self) -> dict[str, Any] | None:
        """After a hand ends, the next one starts by itself (auto_start) if two players have chips
        (the service waits ``hold_s`` first)."""
        hand = self.floor.hand
        if not self.config.auto_start or hand is None or not hand.is_over or self.floor.prompts:
            return None
        if len(self.floor.table.dealt_in()) < 2:
            return None
        return {"kind": "table", "op": "start_hand"}

    def state(self, now: float | None = None) -> dict[str, Any]:
        """The public state; ``now`` (the clock ``heard`` is on) adds each device's ``last_seen_s``."""

        def device(d: str, up: bool) -> dict[str, Any]:
            info: dict[str, Any] = {"online": up}
            if now is not None and d in self.heard:
                info["last_seen_s"] = round(max(0.0, now - self.heard[d]), 1)
            return info

        table, hand = self.floor.table, self.floor.table.hand
        extra = {
            "prompts": self.floor.open_prompts(),
            "dealer_inputs": self.floor.dealer_inputs(),
            "devices": {d: device(d, up) for d, up in sorted(self.devices.items())},
            "last_error": self.last_error,
            "input": self.last_input,
            "shoe_active": self.floor.shoe_active,
            "camera_active": self.floor.camera_active,
        }
        if hand is not None and table.config != hand.config:  # a game change waits for the next hand
            extra["next_game"] = dataclasses.asdict(game_view(table.config))
        state = public_state(self.floor.table, None, self.config.table, extra)
        due = self.floor.seventh_street_due()
        if due is not None:  # RRoP stud 15: the seventh-street draw as the floor will take it
            state["next_deal"] = [{"kind": due[0], "seat": due[1], "face_up": due[2]}]
        nxt = state.get("next_deal") or []
        hand = self.floor.table.hand
        if (nxt and nxt[0].get("kind") == "burn" and hand is not None
                and not any(d.startswith(("shoe", "bridge")) for d in self.devices)):
            # A table that never had a shoe keys its cards by hand and has no burn to key: the
            # dealer's screen names the next card due instead (issue 21, 7 and 12).
            cards = [s for s in hand.expected_deal() if s[0] == "card"][:1]
            state["next_deal"] = [{"kind": k, "seat": seat, "face_up": up} for k, seat, up in cards]
        aside = self.floor.set_aside_due()
        if aside:
            # RRoP stud 14: the dealer's next draws are taken out of play, not dealt.
            state["next_deal"] = [{"kind": "set_aside", "seat": None, "face_up": False, "count": aside}]
        return state

    def prompts(self) -> list[dict[str, Any]]:
        return [p.to_wire() for p in self.floor.prompts.values()]


# Plain play: what PHH can say.  Any other event in a hand's log is a ruling or a dealer correction.
PHH_EVENTS = handlog.PHH_EVENTS


def seats_changed(first: list[tuple[Any, Any, Any]], config: list[dict[str, Any]]) -> str:
    """What differs between the seats a table first started with and its config's now, in words
    ("" if nothing): "seat 3 Cy 300 added; seat 2 Bob 200 -> 500"."""
    was = {seat: (name, amount) for seat, name, amount in first}
    now = {s["seat"]: (s["name"], s["stack"]) for s in config}
    parts: list[str] = []
    for seat in sorted(set(was) | set(now), key=lambda x: int(x) if isinstance(x, int) else 0):
        if seat not in was:
            parts.append(f"seat {seat} {now[seat][0]} {now[seat][1]} added")
        elif seat not in now:
            parts.append(f"seat {seat} {was[seat][0]} removed")
        elif was[seat] != now[seat]:
            parts.append(f"seat {seat} {was[seat][0]} {was[seat][1]} -> {now[seat][0]} {now[seat][1]}")
    return "; ".join(parts)[:480]


def utc_now() -> str:
    """The time an input is stored, as the hand log shows it (UTC, to the second)."""
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


def stored_at(recorded_at: str) -> str | None:
    """The store's ``recorded_at`` (SQLite and PostgreSQL: UTC ``YYYY-MM-DD HH:MM:SS...``) as ``utc_now`` writes it."""
    return f"{recorded_at[:10]}T{recorded_at[11:19]}Z" if len(recorded_at) >= 19 else None


def ruled(hand: Hand) -> bool:
    return hand.voided or any(e.type not in PHH_EVENTS for e in hand.events)


def hand_id(hand: Hand, table: str) -> str:
    """The hand's id in the hand log."""
    return f"{table}-{hand.hand_id}"


def hand_record(hand: Hand, table: str, marks: list[tuple[str, str | None]] | None = None) -> dict[str, Any]:
    """A finished hand for the hand log; with ``marks`` each event says its ``_source`` and ``_at``."""
    return {
        "hand": hand_id(hand, table),
        "variant": hand.config.variant.value,
        "events": handlog.marked_events(hand, marks) if marks is not None else [e.to_json() for e in hand.events],
        # A hand changed by a ruling has no PHH form; its events tell it all.
        "phh": None if ruled(hand) else phh.dumps(hand),
        "finishing_stacks": hand.finishing_stacks(),
    }


# ----------------------------------------------------------------------------- the edge


class EngineService:
    """MQTT in, store, Floor, MQTT out.  ``start()`` returns once connected; ``stop()`` ends it.

    Durability: a message is acknowledged to the broker (manual PUBACK) only once its input is
    in the store.  If the store cannot write (a full disk), the message stays unacknowledged and
    is held, with every later one, in arrival order; the dealer sees the ``source.store`` prompt;
    the housekeeping thread tries again every ``STORE_RETRY_S`` and takes the held inputs in
    order once the store writes again (a crash meanwhile loses nothing: the broker delivers the
    unacknowledged messages again to the engine's persistent session).  What the engine does by
    itself after an input (a gap prompt, keeping a finished hand, starting the next hand) is
    *owed* until it is stored, and is settled before any later input."""

    def __init__(self, config: EngineConfig) -> None:
        from engine.store import open_store

        self.config = config
        self.core = EngineCore(config)
        self.store = open_store(config.store, config.table)
        self._lock = threading.RLock()
        self._bus: Any = None
        self._prompts_sent: list[dict[str, Any]] | None = None
        self._last_input = time.monotonic()
        self._stopping = threading.Event()
        self._housekeeper: threading.Thread | None = None
        self.session = 1
        self.replayed = 0
        self.started_at = time.monotonic()
        #: messages not yet durable (the store failed), oldest first, with their PUBACK
        self._held: list[tuple[Message, Any]] = []
        #: own inputs not yet stored, and finished hands not yet in the hand log
        self._owed: list[dict[str, Any]] = []
        self._unrecorded: list[Hand] = []
        #: why the store cannot write (None: it can); shown as the ``source.store`` prompt
        self.store_problem: str | None = None
        self._store_prompt: Prompt | None = None
        self._forged_reported: set[str] = set()
        self._applied = 0  # the offset of the last stored input applied to the Floor
        #: (shoe device, boot) -> the shoe's event counters of the draws taken (a bridge that
        #: restarts may publish a draw again, under a new session: it is not dealt twice)
        self._draws: dict[tuple[str, int], set[int]] = {}
        self._last_boot: dict[str, int] = {}  # shoe device -> the boot count of its last card
        self._reset_seen: dict[str, bool] = {}  # a reset notice came after that card
        #: (key, session) -> the highest seq stored of it (an older session's message already taken)
        self._session_heads: dict[tuple[str, int], int] = {}
        self._losses_told: set[tuple[str, int, int]] = set()  # told, but the message not yet stored
        self._pending_history: list[dict[str, Any]] = []
        #: history queries to answer, each with what it needs copied (``_answer_history``); None: stop
        self._history_jobs: queue.Queue[tuple[dict[str, Any], Role, list[handlog.HandEntry],
                                               list[dict[str, Any]] | None] | None] = queue.Queue()
        self._history_thread: threading.Thread | None = None
        self._hand_over_at: float | None = None  # when the result began to hold (auto_start with hold_s)

    # -- replay ---------------------------------------------------------------------
    def replay(self) -> int:
        """Rebuild the table from the store; returns how many inputs were replayed.

        A hand that finished in the log but is not in the hand log (the engine stopped between
        the two) is kept now, and the next hand starts if it would have."""
        count = 0
        config_game: Any = None  # the config's game as last stored
        first_seats: list[tuple[Any, Any, Any]] | None = None  # the seats the config gave the first start
        seats_reported = ""  # the last config-seats report stored
        heads = self.store.heads()
        for ev in self.store.events():
            self._applied = ev.offset
            if ev.source == ENGINE_SOURCE and ev.payload.get("kind") == "table" and ev.payload.get("op") == "game":
                config_game = ev.payload.get("game")
            if ev.source == ENGINE_SOURCE and ev.session == 1 and ev.payload.get("kind") == "table" \
                    and ev.payload.get("op") == "seat":
                first_seats = (first_seats or []) + [
                    (ev.payload.get("seat"), ev.payload.get("name"), ev.payload.get("amount"))]
            if ev.source == ENGINE_SOURCE and ev.payload.get("kind") == "source" and ev.payload.get("status") == "config":
                seats_reported = str(ev.payload.get("problem", ""))
            if ev.source != ENGINE_SOURCE:
                mark = (legacy_key(ev.source), ev.session)
                self._session_heads[mark] = max(self._session_heads.get(mark, 0), ev.seq)
            if ev.kind == NOTE and ev.payload.get("message") == "reset":
                self._reset_seen[source_of(ev.source)] = True
            if ev.kind in ("engine_start", NOTE):
                continue
            self.core.apply(source_of(ev.source), ev.payload, ev.session, ev.seq, stored_at(ev.recorded_at))
            self._note_draw(source_of(ev.source), ev.payload)
            count += 1
        for source, (session, seq) in heads.items():
            if source != ENGINE_SOURCE:
                self.core.tracker.observe(legacy_key(source), session, seq)
        engine_head = heads.get(ENGINE_SOURCE)
        self.session = (engine_head[0] + 1) if engine_head else 1
        self._engine_seq = 0
        self.store.append(ENGINE_SOURCE, self.session, self._next_seq(), "engine_start", {"kind": "engine_start"})
        if count == 0:
            for inp in self.core.setup_inputs():
                self._accept_own(inp)
        elif config_game != self.config.game.to_json():
            # The config's game changed since it was last stored (or a store older than game changes
            # has none): a game change from the next hand, in the log; the hands played keep theirs.
            log.warning("the config's game is not the one stored: %s %s/%s from the next hand",
                        self.config.game.variant.long_name, self.config.game.small_bet, self.config.game.big_bet)
            self._accept_own(self.core.game_input())
        if count and first_seats is not None:
            change = seats_changed(first_seats, self.config.seats)
            if change and change != seats_reported:
                # RRoP 3.1: seats are taken at the table.  The file's new seats are not applied (the
                # table's seats and stacks are its log's); the dealer is told, once per change.
                log.warning("the config's seats changed since the table's first start (%s): not applied", change)
                self._accept_own({"kind": "source", "device": self.config.device, "status": "config",
                                  "problem": change})
        kept = {h.hand_id for h in self.store.list_hands()}
        self._unrecorded = [h for h in self.core.finished if hand_id(h, self.config.table) not in kept]
        for h in self.core.finished:
            if hand_id(h, self.config.table) in kept:
                self.core.provenance.forget(h.hand_id)
        self.core.finished.clear()
        if self._unrecorded:
            log.warning("replay: %d finished hand(s) were not in the hand log; keeping them now",
                        len(self._unrecorded))
        self._settle()
        self.replayed = count
        return count

    def _next_seq(self) -> int:
        self._engine_seq += 1
        return self._engine_seq

    def _accept_own(self, inp: dict[str, Any]) -> FloorOutputs | None:
        seq = self._next_seq()
        appended = self.store.append(ENGINE_SOURCE, self.session, seq, str(inp["kind"]), inp)
        self._applied = max(self._applied, appended.offset)
        out = self.core.apply(ENGINE_SOURCE, inp, self.session, seq, utc_now())
        self._unrecorded += self.core.finished
        self.core.finished.clear()
        return out

    def _own(self, inp: dict[str, Any]) -> None:
        """An input the engine makes itself: owed until stored (now, unless the store fails)."""
        self._owed.append(inp)
        self._settle_or_note()

    # -- bus ------------------------------------------------------------------------
    def start(self, wait: float = 10.0) -> EngineService:
        from engine.bus import BusClient
        from engine.configfile import broker_login

        username, password = self.config.username, self.config.password
        if self.config.broker_config_dir:  # before the replay: a wrong folder changes nothing in the store
            username, password = broker_login("engine", broker_dir=self.config.broker_config_dir,
                                              key="broker.config_dir", device=self.config.device)
        self.replay()
        self._bus = BusClient(
            host=self.config.broker_host,
            port=self.config.broker_port,
            username=username,
            password=password,
            table=self.config.table,
            device=self.config.device,
            role="engine",
            session=self.session,
            persistent=True,
            on_message_ack=self._on_message,
            on_connection=self._on_connection,
            on_invalid=self._on_invalid,
        )
        for channel in (Channel.SHOE, Channel.VISION, Channel.COMMAND, Channel.AVAIL):
            self._bus.subscribe(channel)
        self._bus.start(wait=wait)  # _on_connection publishes the state and the prompts
        self._housekeeper = threading.Thread(target=self._housekeeping, name="engine-housekeeping", daemon=True)
        self._housekeeper.start()
        self._history_thread = threading.Thread(target=self._history_worker, name="engine-history", daemon=True)
        self._history_thread.start()
        return self

    def stop(self) -> None:
        self._stopping.set()
        if self._housekeeper is not None:
            self._housekeeper.join(5)
        if self._history_thread is not None:
            self._history_jobs.put(None)
            self._history_thread.join(5)
        if self._bus is not None:
            self._bus.stop()
        self.store.close()

    def _housekeeping(self) -> None:
        """Store upkeep (checkpoints) when the table has been quiet for a moment, so that it
        does not hold up an input; under a steady stream of inputs ``_after`` does it now and then.
        While the store cannot write: try the held inputs again."""
        last_try = 0.0
        while not self._stopping.wait(min(IDLE_CHECK_S, STORE_RETRY_S)):
            if self._hand_over_at is not None and time.monotonic() - self._hand_over_at >= self.config.hold_s:
                with self._lock:
                    self._drain()  # the hold is over: the next hand (auto_start)
            if self.store_problem is not None and time.monotonic() - last_try >= STORE_RETRY_S:
                last_try = time.monotonic()
                with self._lock:
                    self._drain()
                continue
            if time.monotonic() - self._last_input >= IDLE_AFTER_S:
                try:
                    self.store.maintain(idle=True)
                except Exception:
                    log.exception("store upkeep failed; the next one will try again")

    def _on_connection(self, up: bool) -> None:
        # At every connect: the first, and after a broker restart, when the retained state may be
        # gone (amqtt keeps nothing): say it (again).
        if up and self._bus is not None:
            with self._lock:
                self._flush_history()
                self.publish(again=True)

    def _on_message(self, msg: Message, ack: Any = None) -> None:
        with self._lock:
            self._last_input = time.monotonic()
            self._held.append((msg, ack))
            self._drain()

    # -- durability -----------------------------------------------------------------
    def _drain(self) -> None:
        """Settle what is owed, then take the held messages in order, acknowledging each once it is
        stored; stop at the first store failure (its message stays held and unacknowledged)."""
        from engine.store import StoreError

        try:
            self._settle()
            while self._held:
                msg, ack = self._held[0]
                self._handle(msg)
                self._held.pop(0)
                if ack is not None:
                    ack()
                self._settle()
        except StoreError as exc:
            self._store_failed(str(exc))
            return
        if self.store_problem is not None:
            log.warning("the event store writes again; %s", "the held inputs were taken in order")
            self.store_problem = None
            self._store_prompt = None
            self.publish()

    def _store_failed(self, problem: str) -> None:
        first = self.store_problem is None
        self.store_problem = problem.removeprefix("the event store cannot write: ")
        if first:
            log.error("%s; %d input(s) held, not acknowledged", problem, len(self._held))
            rule = BY_ID["source.store"]
            text = rule.ruling.format(problem=self.store_problem)
            self._store_prompt = Prompt("store", rule, (), text, {"problem": self.store_problem})
            self.publish()

    def _settle_or_note(self) -> None:
        from engine.store import StoreError

        try:
            self._settle()
        except StoreError as exc:
            self._store_failed(str(exc))

    def _settle(self) -> None:
        """Store what the engine owes: its own inputs, finished hands for the hand log, the next hand."""
        while self._owed:
            self._accept_own(self._owed[0])
            self._owed.pop(0)
            self.publish()
        while self._unrecorded:
            self._record(self._unrecorded[0])
            self._unrecorded.pop(0)
        nxt = self.core.next_hand_input()
        if nxt is not None and self.config.hold_s > 0:
            # The result holds hold_s seconds on both screens; the housekeeping thread starts it then.
            over = self._hand_over_at = self._hand_over_at or time.monotonic()
            if time.monotonic() - over < self.config.hold_s:
                return
        self._hand_over_at = None
        if nxt is not None:
            self._accept_own(nxt)
            self.publish()
            self._settle()  # a hand can finish at once (everyone all in); never more than a few

    def _handle(self, msg: Message) -> None:
        if msg.channel is Channel.AVAIL:
            online = msg.kind == "online"
            if msg.source == self.config.device:
                return
            was = self.core.devices.get(msg.source)
            self.core.devices[msg.source] = online
            if was is not None and was != online and msg.source.startswith(("shoe", "bridge", "cam", "vision")):
                self._owed.append({"kind": "source", "device": msg.source, "status": "online" if online else "offline"})
            self.publish()
            return
        if msg.session is None or msg.seq is None or msg.channel not in TRACKED_CHANNELS:
            return
        if not source_allowed(msg.channel, msg.source):
            # The channel's ACL fixes the role that published; the payload's source must be one of
            # that role's devices, or the message is refused and the dealer told (once per name).
            key = source_key(msg.channel, msg.source)
            log.warning("refused a message on %s claiming to be from %r", msg.channel, msg.source)
            if key not in self._forged_reported and len(self._forged_reported) < MAX_FORGED_NAMES:
                # Each name once (stored: the floor folds it into the channel's open prompt, so a
                # restart replays the count); past MAX_FORGED_NAMES a flood is only logged.
                self._forged_reported.add(key)
                self._owed.append({"kind": "source", "device": msg.source, "status": "forged",
                                   "channel": str(msg.channel)})
            return
        if msg.source != self.config.device:
            # After the sender check: only a device that may send on this channel is heard (a
            # console naming itself shoe-1 must not refresh the shoe's health).
            self.core.heard[msg.source] = time.monotonic()  # the console shows the age since this
        key = source_key(msg.channel, msg.source)
        before = self.core.tracker.snapshot(key)
        tracked = self.core.tracker.observe(key, msg.session, msg.seq)
        restarted = False
        if tracked.verdict is Verdict.STALE:
            # An older session than the last one heard: never dropped silently (a console that
            # claimed a huge session must not silence the real one; a bridge that lost its
            # session file starts again at 1).  A message of a session already taken is a
            # redelivery; any other starts that session again, with a source.restart prompt
            # (the shoe's (boot, counter) keeps a draw from being dealt twice).
            head = self._session_heads.get((key, msg.session))
            if head is not None and msg.seq <= head:
                return
            log.warning("%s sent session %d, older than the last one heard: taken as a restart, prompted",
                        key, msg.session)
            self.core.tracker.restore(key, None if head is None else (msg.session, head, [], 0))
            tracked = self.core.tracker.observe(key, msg.session, msg.seq)
            restarted = True
        if not tracked.verdict.accept:
            return
        from engine.store import StoreError

        inp = self.core.authorized(input_from_message(msg))  # a floor PIN is never stored
        if inp is not None and self._drawn_before(msg.source, inp):
            log.warning("%s published draw %s (boot %s) again; not dealt twice", msg.source, inp.get("counter"),
                        inp.get("boot"))
            inp = None  # stored as a note: the sequence keeps no hole
        try:
            # What this message says about messages that never came is told first, so that a
            # blocking prompt holds the card that revealed the loss (it must not take a lost
            # card's slot).  Stored before the message; not told twice if its append fails.
            mark = (key, msg.session, msg.seq)
            if mark not in self._losses_told:
                for own in self._losses(msg, tracked, inp, restarted):
                    self._accept_own(own)
                    self.publish()
                self._losses_told.add(mark)
            if inp is None:
                # Nothing for the table (shoe loaded, a reset notice): stored all the same, so the
                # sequence has no hole after a restart.
                appended = self.store.append(key, msg.session, msg.seq, NOTE, {"kind": NOTE, "message": msg.kind})
            else:
                appended = self.store.append(key, msg.session, msg.seq, str(inp["kind"]), inp)
        except StoreError:
            self.core.tracker.restore(key, before)  # delivered again later: it must not look seen
            raise
        if self._session_heads.get((key, msg.session), 0) < msg.seq:
            self._session_heads[(key, msg.session)] = msg.seq
        if appended.duplicate and appended.offset <= self._applied:
            return
        self._applied = max(self._applied, appended.offset)
        self._losses_told.discard(mark)
        if msg.channel is Channel.COMMAND and msg.kind == "history":
            self._answer_history(msg)  # stored as a note (the sequence keeps no hole); changes nothing
            return
        if inp is None:
            return
        out = self.core.apply(msg.source, inp, msg.session, msg.seq, utc_now())
        self._note_draw(msg.source, inp)
        self._after(out)

    def _losses(self, msg: Message, tracked: Any, inp: Mapping[str, Any] | None,
                restarted: bool = False) -> list[dict[str, Any]]:
        """Gaps always prompt (issue 19 item 11): messages that never came (a sequence gap, a new
        session not starting at 1: on the shoe's channel ``source.lost``, whose prompt holds the
        shoe's next cards until the dealer has counted; elsewhere ``source.gap``), a shoe that
        restarted (its reset notice, or a new boot count seen on its cards: ``source.restart``),
        events the shoe itself lost (``source.lost`` with their count)."""
        own: list[dict[str, Any]] = []
        if restarted:  # an older session than the last one heard (see _handle)
            own.append({"kind": "source", "device": msg.source, "status": "restart"})
            if inp is not None and inp.get("kind") == "shoe_card" and inp.get("boot") is not None:
                self._reset_seen[msg.source] = True  # that restart is told: not again for its boot
        if tracked.verdict in (Verdict.GAP, Verdict.NEW_SESSION) and tracked.missing:
            missing = tracked.missing[1] - tracked.missing[0] + 1
            if msg.channel is Channel.SHOE:
                own.append({"kind": "source", "device": msg.source, "status": "lost", "missing": missing})
            else:  # the floor folds it into the channel's open source.gap prompt, if any
                own.append({"kind": "source", "device": msg.source, "status": "gap", "missing": missing,
                            "channel": str(msg.channel)})
        if msg.channel is Channel.SHOE:
            if msg.kind == "reset":
                self._reset_seen[msg.source] = True
                own.append({"kind": "source", "device": msg.source, "status": "restart"})
            elif msg.kind == "device_error" and msg.body.get("code") == "events_missing":
                found = re.search(r"lost (\d+) event", str(msg.body.get("text", "")))
                own.append({"kind": "source", "device": msg.source, "status": "lost",
                            "missing": int(found.group(1)) if found else 1})
            elif inp is not None and inp.get("kind") == "shoe_card" and inp.get("boot") is not None:
                last = self._last_boot.get(msg.source)
                if last is not None and last != int(inp["boot"]) and not self._reset_seen.get(msg.source):
                    own.append({"kind": "source", "device": msg.source, "status": "restart"})
                self._reset_seen[msg.source] = False
        return own

    def _drawn_before(self, source: str, inp: Mapping[str, Any]) -> bool:
        if inp.get("kind") != "shoe_card" or inp.get("boot") is None or inp.get("counter") is None:
            return False
        return int(inp["counter"]) in self._draws.get((source, int(inp["boot"])), set())

    def _note_draw(self, source: str, inp: Mapping[str, Any]) -> None:
        if inp.get("kind") == "shoe_card" and inp.get("boot") is not None:
            self._last_boot[source] = int(inp["boot"])
            self._reset_seen[source] = False
            if inp.get("counter") is not None:
                self._draws.setdefault((source, int(inp["boot"])), set()).add(int(inp["counter"]))

    def _after(self, out: FloorOutputs | None) -> None:
        # The input's own effect first: the state that follows from it (for the input that ends
        # a hand: the awards).  What the engine does by itself after it (keep a finished hand in
        # the hand log and send it to the recorder, start the next hand) is owed and settled next
        # (``_settle``), so none of that holds up the state of the input.
        self.publish()
        self._unrecorded += self.core.finished
        self.core.finished.clear()
        try:
            self.store.maintain()  # a checkpoint if many commits gathered; see _housekeeping
        except Exception:
            log.exception("store upkeep failed; the next one will try again")

    def _record(self, hand: Hand) -> None:
        from engine.store import HandRecord

        rec = hand_record(hand, self.config.table, self.core.provenance.of(hand))
        now = time.strftime("%Y-%m-%dT%H:%M:%S")
        self.store.record_hand(
            HandRecord(rec["hand"], self.config.table, rec["variant"], now, now, rec["events"], rec["phh"])
        )
        self.core.provenance.forget(hand.hand_id)
        self._pending_history.append(rec)
        self._flush_history()

    def _flush_history(self) -> None:
        if self._bus is None:
            return  # replay: sent once connected
        while self._pending_history:
            rec = self._pending_history.pop(0)
            self._bus.publish(Channel.HISTORY, "hand", hand=rec["hand"], variant=rec["variant"],
                              events=rec["events"], phh=rec["phh"])

    # -- history queries (engine.handlog) ------------------------------------------------
    def _answer_history(self, msg: Message) -> None:
        """Answer a console's history query on ``console/history`` (only the console role reads it),
        from the hand log: finished hands' hole cards for a role allowed them, never a live one's.

        What the answer needs is copied here, under the engine's lock (the index, the live hand's
        events); the folding, the store read and the publish happen on the history thread, so a
        query (about 40 ms for a 60-event hand) never holds up the table's inputs."""
        if self._bus is None:
            return  # replay: a query is answered once, when it comes
        role = device_role(msg.source) or Role.MONITOR
        live = self.core.floor.table.hand
        playing = live is not None and not live.is_over
        job = (dict(msg.body), role, list(self.core.index),
               handlog.marked_events(live, self.core.provenance.of(live)) if live is not None and playing else None)
        self._history_jobs.put(job)

    def _history_worker(self) -> None:
        while True:
            job = self._history_jobs.get()
            if job is None:
                return
            query, role, index, live = job

            def fetch(hid: str) -> list[Any] | None:
                record = self.store.get_hand(hid)
                return list(record.events) if record is not None else None

            try:
                body = handlog.answer(query, role=role, table_id=self.config.table, index=index, live=live,
                                      fetch=fetch, hand_id_of=lambda n: f"{self.config.table}-{n}")
            except Exception as exc:  # a hand log the engine cannot read or fold: said, never raised
                log.exception("history query %s failed", query.get("request"))
                body = {"request": query.get("request"), "hands": [], "hand": None,
                        "error": f"the hand log cannot answer: {type(exc).__name__}"}
            self._send_answer(body)

    def _send_answer(self, body: dict[str, Any]) -> None:
        from engine.wire import MAX_PAYLOAD_BYTES, WireError

        body = handlog.fit(body, MAX_PAYLOAD_BYTES - 4096)  # a very long hand: without its table pictures
        try:
            self._bus.publish(Channel.HISTORY_REPLY, "answer", **body)
        except WireError:
            log.exception("the history answer could not be sent")

    def _on_invalid(self, topic_name: str, payload: bytes, exc: Exception) -> None:
        """A history query the wire contract refused: the console is told why on ``console/history``
        (nothing was stored; the table does not change)."""
        from engine.wire import MAX_PAYLOAD_BYTES, WireError, parse_topic

        try:
            if parse_topic(topic_name).channel is not Channel.COMMAND or len(payload) > MAX_PAYLOAD_BYTES:
                return
            doc = json.loads(payload)
        except (WireError, ValueError, RecursionError):
            return
        if not isinstance(doc, dict) or doc.get("kind") != "history" or self._bus is None:
            return
        request = doc.get("request")
        if not isinstance(request, str) or not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}", request):
            request = None
        reason = str(exc).removeprefix(f"{topic_name}: ")
        self._send_answer({"request": request, "hands": [], "hand": None,
                           "error": f"history query refused: {reason}"[:500]})

    def publish(self, *, again: bool = False) -> None:
        """Publish the state; and the open prompts when they changed (or ``again``: at start and
        after a reconnect, when the broker may have lost its retained copy)."""
        if self._bus is None:
            return
        state = self.core.state(time.monotonic())
        prompts = self.core.prompts()
        if self._store_prompt is not None:  # outside the Floor and the log: it goes when the store writes
            state["prompts"] = [*state.get("prompts", []), self._store_prompt.to_json()]
            prompts = [*prompts, self._store_prompt.to_wire()]
        if len(prompts) > MAX_WIRE_PROMPTS:
            # The wire carries at most 32: the oldest are kept (the store prompt, last, goes in
            # their place) rather than failing the publish after an input is stored (not yet acked).
            log.error("%d prompts open, more than the %d dealer/prompt carries: sending the first ones",
                      len(prompts), MAX_WIRE_PROMPTS)
            keep = prompts[-1:] if self._store_prompt is not None else []
            prompts = prompts[:MAX_WIRE_PROMPTS - len(keep)] + keep
        from engine.wire import WireError

        try:
            self._bus.publish(Channel.STATE, "state", state=state)
        except WireError:
            log.exception("the state could not be published; the next input publishes it again")
        if again or prompts != self._prompts_sent:
            try:
                self._bus.publish(Channel.PROMPT, "prompts", open=prompts)
            except WireError:
                log.exception("the prompts could not be published; the next change publishes them again")
                return
            self._prompts_sent = prompts
