"""The engine's core: wire messages in, ``Floor`` inputs out, each taken once.

``EngineCore`` turns a wire message into a ``Floor`` input, recognises a message it has already
seen (``engine.bus.SourceTracker``), says what to publish, and can be rebuilt by replaying the
stored inputs; ``engine.service.EngineService`` is the edge around it (MQTT, the store, threads).
"""

from __future__ import annotations

import dataclasses
import hmac
import logging
import time
from collections.abc import Mapping
from typing import Any

from engine import handlog, phh
from engine.broker.acl import device_role
from engine.bus import SourceTracker
from engine.citations import in_words
from engine.engineconfig import EngineConfig
from engine.floor import Floor, FloorError, FloorOutputs
from engine.hand import Hand
from engine.public import game_view, public_state
from engine.wire import CHANNELS, Channel, Message, Role

log = logging.getLogger("engine.service")

TRACKED_CHANNELS = frozenset({Channel.SHOE, Channel.VISION, Channel.COMMAND})
NOTE = "note"  # a stored message that is not an input to the table
ENGINE_SOURCE = "engine"  # inputs the engine makes itself (seating from the config, automatic next hand)
#: wrong floor PINs taken in one hand; after them a PIN is not compared until the next hand
MAX_WRONG_PINS = 5
#: the most prompts one dealer/prompt message carries (engine/wire.py: the ``open`` list's limit)
MAX_WIRE_PROMPTS = 32


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
