"""Answers to a console's history query, built from the engine's hand log (pure: no store, no bus).

Theory of operation
-------------------
A finished hand's record in the hand log is its event list (``engine.service.hand_record``);
each event carries where it came from: ``_at`` (UTC, the time its input was stored) and
``_source`` (the console or sensor whose input made it, or ``engine``).  ``EngineCore`` keeps
those marks per hand while the hand is played (``Provenance``) and a small index of the finished
hands (``HandEntry``), so a search needs no store read and a hand's steps need one.

``answer`` turns a query (``engine.wire``'s ``console/command`` kind ``history``) into the body of
the ``console/history`` answer: a page of matching hands, newest first, and the steps of the
hand asked for.  Each step is one event folded through ``Hand.apply`` (as the engine folded it
live) with its words, time, source, the cards it names, the pot and the public state after it;
the last step of a finished hand is its result (who won what with which hand, and the losing
hands that were shown, labelled as shown).

What a step may name (DESIGN: secrecy of hole cards; docs/security.md):

* the live hand: never a down card, a burn or any card of a correction, to anyone; only the
  cards the table saw (up cards, the common card, exposed and shown cards);
* a finished hand: every card (down cards, burns, mucked hands) only to a role in
  ``SEES_FINISHED_HOLE_CARDS`` (the console), with the hand's PHH and JSON log for export;
  to any other role the same public words as for the live hand, and no export.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

from engine import phh
from engine.cards import Card
from engine.events import (
    CardBurned,
    CardDealt,
    CardsShown,
    CommonCardDealt,
    EntryUndone,
    Event,
    HandMucked,
    HandStarted,
    HoleCardExposed,
    PlayerAction,
    event_from_json,
)
from engine.hand import Hand
from engine.public import public_state
from engine.wire import MAX_HISTORY_PAGE, MAX_HISTORY_STEPS, Role

#: Plain play: what PHH can say.  Any other event in a hand's log is a ruling or a dealer correction.
PHH_EVENTS: Final = frozenset({"hand_started", "card_dealt", "card_burned", "common_card_dealt",
                               "deck_reshuffled", "player_action", "cards_shown", "hand_mucked"})
#: The roles that may see the hole cards of a finished hand (docs/security.md says why: the console
#: is the dealer's and the floor's screen, used for rulings; the monitor faces the players).
SEES_FINISHED_HOLE_CARDS: Final = frozenset({Role.ENGINE, Role.CONSOLE})
#: The fields the engine adds to each event of a hand's record.
AT, SOURCE = "_at", "_source"


@dataclass(frozen=True, slots=True)
class HandEntry:
    """One finished hand in the index: enough to list and search it without reading the store."""

    hand_id: str
    number: int
    variant: str
    players: tuple[tuple[int, str], ...]
    label: str
    started: str | None
    ended: str | None

    def listing(self, live: bool = False) -> dict[str, Any]:
        return {"hand": self.hand_id, "number": self.number, "variant": self.variant, "live": live,
                "label": self.label, "players": [[s, n] for s, n in self.players],
                "started": self.started, "ended": self.ended}


class Provenance:
    """Per hand number, the (source, time) of each of its events, in order."""

    def __init__(self) -> None:
        self._marks: dict[int, list[tuple[str, str | None]]] = {}

    def note(self, hand: Hand, source: str, at: str | None) -> None:
        """The events ``hand`` has beyond those already marked came from ``source`` at ``at``."""
        marks = self._marks.setdefault(hand.hand_id, [])
        n = len(hand.events)
        if n < len(marks):  # events taken back (a correction that rebuilt the hand): forget their marks
            del marks[n:]
        marks.extend([(source, at)] * (n - len(marks)))

    def set(self, hand: Hand, marks: Sequence[tuple[str, str | None]]) -> None:
        """The marks of every event of ``hand``, as the engine worked them out (after a correction
        took the hand again, engine/floor/undo.py: each event keeps the input that made it)."""
        self._marks[hand.hand_id] = list(marks)

    def of(self, hand: Hand) -> list[tuple[str, str | None]]:
        marks = self._marks.get(hand.hand_id, [])
        return marks + [("engine", None)] * (len(hand.events) - len(marks))

    def forget(self, number: int) -> None:
        self._marks.pop(number, None)


def marked_events(hand: Hand, marks: Sequence[tuple[str, str | None]]) -> list[dict[str, Any]]:
    """The hand's events as the hand log keeps them: each with its ``_source`` and ``_at``."""
    out = []
    for event, (source, at) in zip(hand.events, marks, strict=False):
        out.append(event.to_json() | {SOURCE: source, AT: at})
    return out


def _who(hand: Hand, seat: int) -> str:
    try:
        name = hand.seat(seat).name
    except Exception:  # a seat not in the hand; the number is enough
        name = ""
    return f"Seat {seat}" + (f" ({name})" if name else "")


def _cards_in(event: Event) -> list[str]:
    """Every card an event names (for a finished hand shown to a role that may see them)."""
    out: list[str] = []
    for name in getattr(event, "__dataclass_fields__", {}):
        value = getattr(event, name)
        values = value if isinstance(value, tuple | list) else (value,)
        out += [str(v) for v in values if isinstance(v, Card)]
    return out


def describe(event: Event, hand: Hand, reveal: bool) -> tuple[str, list[str]]:
    """One line per event in the words a floor person uses, and the cards it may show.

    ``hand`` is the hand after the event.  Without ``reveal`` only what the table saw is named."""
    if isinstance(event, HandStarted):
        return f"Hand {event.hand_id} starts: {len(event.seats)} players, antes in", []
    if isinstance(event, CardDealt):
        if event.face_up:
            return f"{_who(hand, event.seat)} dealt {event.card} up", [str(event.card)]
        if reveal:
            return f"{_who(hand, event.seat)} dealt {event.card} down", [str(event.card)]
        return f"{_who(hand, event.seat)} dealt a card down", []
    if isinstance(event, CardBurned):
        return (f"Burn card {event.card}", [str(event.card)]) if reveal else ("Burn card", [])
    if isinstance(event, CommonCardDealt):
        return f"Common card {event.card}", [str(event.card)]
    if isinstance(event, PlayerAction):
        verb = {"bring_in": "brings it in for", "complete": "completes to", "bet": "bets",
                "raise": "raises to", "call": "calls"}.get(event.action, event.action + "s")
        amount = f" {event.amount}" if event.amount else ""
        return f"{_who(hand, event.seat)} {verb}{amount}", []
    if isinstance(event, CardsShown):
        cards = [str(c) for c in event.cards]
        return f"{_who(hand, event.seat)} shows {' '.join(cards)}", cards
    if isinstance(event, HandMucked):
        return f"{_who(hand, event.seat)} mucks", []
    if isinstance(event, HoleCardExposed):
        # RRoP stud 5: the exposed card is the seat's up card now, in plain sight.
        up = [str(c) for c in hand.seat(event.seat).up]
        return f"{_who(hand, event.seat)}: hole card exposed ({' '.join(up)} up)", up
    if isinstance(event, EntryUndone):  # engine/floor/undo.py: public words, never a card's name
        return f"Undone: {event.text}", []
    words = "Ruling: " + event.type.replace("_", " ")
    seat = getattr(event, "seat", None)
    if isinstance(seat, int):
        words += f", {_who(hand, seat)}"
    if reveal:
        cards = _cards_in(event)
        return words + (f" ({' '.join(cards)})" if cards else ""), cards
    return words, []


def result_text(hand: Hand) -> str:
    """The hand's result: each pot's winners with their hands; losing hands that were shown."""
    if hand.voided:
        return "Result: the hand is void, every chip returned"
    parts = []
    for a in hand.awards:
        pot = "main pot" if a.pot == 0 else f"side pot {a.pot}"
        with_hand = f" with {a.hand}" if a.hand else ""
        share = "" if a.share in ("scoop", "uncontested", "high") else f" ({a.share})"
        parts.append(f"{_who(hand, a.seat)} wins {a.amount} from the {pot}{share}{with_hand}")
    winners = {a.seat for a in hand.awards}
    shown = [e.seat for e in hand.events if isinstance(e, CardsShown)]
    for seat in dict.fromkeys(shown):
        if seat not in winners:
            cards = " ".join(str(c) for c in hand.seat(seat).all_cards)
            parts.append(f"{_who(hand, seat)} shown, loses ({cards})")
    return "Result: " + ("; ".join(parts) if parts else "no award")


def _label(hand: Hand) -> str:
    top = sorted(hand.awards, key=lambda a: -a.amount)
    names = []
    for a in top:
        who = _who(hand, a.seat)
        if who not in names:
            names.append(who)
    won = (" · " + ", ".join(names[:2]) + " won " + f"{sum(a.amount for a in hand.awards)}") if names else ""
    return f"Hand {hand.hand_id} · {hand.config.variant.value}" + (" · void" if hand.voided else won)


def entry(hand: Hand, hand_id: str, marks: Sequence[tuple[str, str | None]]) -> HandEntry:
    times = [at for _, at in marks if at]
    return HandEntry(hand_id, hand.hand_id, hand.config.variant.value,
                     tuple((s.seat, s.name) for s in hand.start.seats), _label(hand),
                     times[0] if times else None, times[-1] if times else None)


def steps_of(events: Iterable[Any], *, reveal: bool, table_id: str) -> tuple[Hand, list[dict[str, Any]]]:
    """Every step of a hand: words, time, source, cards, the pot and the public state after it."""
    hand: Hand | None = None
    out: list[dict[str, Any]] = []
    for i, raw in enumerate(events):
        event = raw if isinstance(raw, Event) else event_from_json(raw)
        if hand is None:
            if not isinstance(event, HandStarted):
                raise ValueError("a hand's log starts with hand_started")
            hand = Hand(event)
        else:
            hand.apply(event)
        text, cards = describe(event, hand, reveal)
        state = public_state(None, hand, table_id)
        out.append({"i": i, "kind": event.type, "at": _get(raw, AT), "source": _get(raw, SOURCE), "text": text,
                    "cards": cards, "pot": hand.pot_total, "street": state["street"], "state": state})
    if hand is None:
        raise ValueError("a hand's log is empty")
    if hand.is_over:
        last = out[-1]
        out.append({"i": len(out), "kind": "result", "at": last["at"], "source": "engine",
                    "text": result_text(hand), "cards": [], "pot": sum(a.amount for a in hand.awards),
                    "street": last["street"], "state": last["state"]})
    return hand, out


def _get(raw: Any, key: str) -> str | None:
    value = raw.get(key) if isinstance(raw, Mapping) else None
    return str(value) if value is not None else None


def export_phh(hand: Hand, steps: Sequence[Mapping[str, Any]]) -> str:
    """The hand as PHH; the rulings and corrections (which PHH has no action for) as comments and
    the ``_studtable_rulings`` field, so the file still says what the floor decided."""
    rulings = [s for s in steps if s["kind"] not in PHH_EVENTS and s["kind"] != "result"]
    text = phh.dumps(hand)
    if not rulings and not hand.voided:
        return text
    notes = [f"step {s['i'] + 1}, {s['at'] or 'time unknown'}, {s['source'] or 'engine'}: {s['text']}"
             for s in rulings]
    head = ["# studtable: rulings changed this hand; its actions below are the plain play, the JSON log "
            "has every step"] + [f"# studtable: {n}" for n in notes]
    tail = [f"_studtable_rulings = {json.dumps(notes, ensure_ascii=False)}"]
    if hand.voided:
        tail.append("_studtable_voided = true")
    return "\n".join(head) + "\n" + text + "\n".join(tail) + "\n"


def fit(body: dict[str, Any], max_bytes: int) -> dict[str, Any]:
    """The answer made to fit one message: a very long hand's steps keep their words, cards and pots
    and lose the table picture of each step (the console says so); a hand still too long (or of
    more steps than the wire carries) is refused with what to do instead."""
    detail = body.get("hand")
    if detail is None or (_size(body) <= max_bytes and len(detail["steps"]) <= MAX_HISTORY_STEPS):
        return body
    for step in detail["steps"]:
        step["state"] = None
    if _size(body) <= max_bytes and len(detail["steps"]) <= MAX_HISTORY_STEPS:
        return body
    return {**body, "hand": None,
            "error": f"hand {detail['number']} is too long to send to a screen ({len(detail['steps'])} steps); "
                     f"export it on the engine's machine: studtable history export --hand {detail['hand']}"}


def _size(body: Mapping[str, Any]) -> int:
    return len(json.dumps(body, separators=(",", ":"), ensure_ascii=False).encode("utf-8"))


def matches(e: HandEntry, query: Mapping[str, Any]) -> bool:
    if query.get("hand") is not None and e.number != query["hand"]:
        return False
    if query.get("before") is not None and e.number >= query["before"]:
        return False
    if query.get("seat") is not None and all(s != query["seat"] for s, _ in e.players):
        return False
    player = str(query.get("player") or "").strip().casefold()
    return not player or any(player in n.casefold() for _, n in e.players)


def answer(query: Mapping[str, Any], *, role: Role, table_id: str, index: Sequence[HandEntry],
           live: Sequence[Mapping[str, Any]] | None,
           fetch: Callable[[str], Sequence[Any] | None], hand_id_of: Callable[[int], str]) -> dict[str, Any]:
    """The ``console/history`` answer to ``query`` (already checked by the wire contract).

    ``live`` is the hand being played, as ``marked_events`` gives it (None: no hand is being
    played); ``fetch(hand_id)`` reads a finished hand's events from the hand log (None: not there).
    Pure, and it reads nothing the engine changes: the engine answers on a thread of its own."""
    limit = min(int(query.get("limit") or MAX_HISTORY_PAGE), MAX_HISTORY_PAGE)
    reveal = role in SEES_FINISHED_HOLE_CARDS
    hands: list[dict[str, Any]] = []
    live_entry = None
    if live:
        start = event_from_json(live[0])
        if not isinstance(start, HandStarted):
            raise ValueError("a hand's log starts with hand_started")
        hand = Hand(start)
        for raw in live[1:]:
            hand.apply(event_from_json(raw))
        live_entry = entry(hand, hand_id_of(hand.hand_id), [(str(e.get(SOURCE)), e.get(AT)) for e in live])
        if matches(live_entry, query):
            hands.append(live_entry.listing(live=True))
    for e in reversed(index):
        if len(hands) >= limit:
            break
        if matches(e, query):
            hands.append(e.listing())
    body: dict[str, Any] = {"request": query.get("request"), "hands": hands[:limit], "hand": None, "error": None}
    number = query.get("hand")
    if number is None:
        return body
    if live_entry is not None and live and live_entry.number == number:
        # The live hand: what the table saw, to everyone (no down card, no burn).
        _, steps = steps_of(live, reveal=False, table_id=table_id)
        body["hand"] = {"hand": live_entry.hand_id, "number": number, "variant": live_entry.variant, "live": True,
                        "hole_cards": False, "steps": steps, "phh": None, "log": None}
        return body
    found = next((e for e in reversed(index) if e.number == number), None)
    events = fetch(found.hand_id) if found is not None else None
    if found is None or events is None:
        body["error"] = f"hand {number} is not in this table's hand log"
        return body
    hand, steps = steps_of(events, reveal=reveal, table_id=table_id)
    body["hand"] = {"hand": found.hand_id, "number": number, "variant": found.variant, "live": False,
                    "hole_cards": reveal, "steps": steps,
                    "phh": export_phh(hand, steps) if reveal else None,
                    "log": [dict(e) for e in events] if reveal else None}
    return body
