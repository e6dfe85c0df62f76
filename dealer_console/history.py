"""Hand history for floor rulings, as the engine answers it over the bus.

Why the engine answers: the engine's store holds every live hole card, so no screen opens it
(docs/security.md).  The console asks a ``history`` query on its command channel and the engine
answers on ``console/history`` from its hand log (``engine.handlog``), with the access rules of
the console's role: a finished hand with every card, the live hand without a down card.  Each
step comes folded by the engine's own ``Hand.apply``, with its time, its source (which console
or sensor), the cards it names, the pot and the public state after it; the last is the result.

``HistorySource`` is what the browser asks: ``dealer_console.edge.BusHistory`` at a table,
``MemoryHistory`` (hands given to it, answered by the same ``engine.handlog``) for screenshots.
This module is pure apart from ``export_hand``, which writes the files the dealer asked for.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any, Protocol

from engine import handlog
from engine.wire import MAX_HISTORY_PAGE, Role

Reply = Callable[[Mapping[str, Any]], None]


class HistorySource(Protocol):
    """Where the browser asks for hands: ``reply`` gets the answer's body (engine.wire ``console/history``)."""

    def ask(self, query: Mapping[str, Any], reply: Reply) -> None: ...


@dataclass(frozen=True, slots=True)
class HandListing:
    hand_id: str
    number: int
    label: str
    live: bool


@dataclass(frozen=True, slots=True)
class ReplayStep:
    index: int
    kind: str
    at: str
    source: str
    text: str
    cards: tuple[str, ...]
    pot: int
    street: str | None
    state: dict[str, Any] | None

    @property
    def line(self) -> str:
        """The step as the list shows it, whole (the list wraps it, nothing is cut)."""
        when = f"{self.at} · " if self.at else ""
        who = f"{self.source} · " if self.source else ""
        return f"{self.index + 1:>3}. {when}{who}{self.text}  — pot {self.pot:,}"


def local_time(at: str | None) -> str:
    """``2026-12-01T16:20:03Z`` as this screen's local time of day (the hand's date is in its listing)."""
    if not at:
        return ""
    try:
        return datetime.fromisoformat(at.replace("Z", "+00:00")).astimezone().strftime("%H:%M:%S")
    except ValueError:
        return at


def listings(answer: Mapping[str, Any]) -> list[HandListing]:
    out = []
    for h in answer.get("hands") or []:
        when = ""
        if h.get("started"):
            try:
                when = " · " + datetime.fromisoformat(str(h["started"]).replace("Z", "+00:00")).astimezone(
                ).strftime("%d %b %H:%M")
            except ValueError:
                when = f" · {h['started']}"
        label = ("LIVE · " if h.get("live") else "") + str(h.get("label", f"Hand {h.get('number')}")) + when
        out.append(HandListing(str(h["hand"]), int(h["number"]), label, bool(h.get("live"))))
    return out


def steps(detail: Mapping[str, Any]) -> list[ReplayStep]:
    return [ReplayStep(int(s["i"]), str(s["kind"]), local_time(s.get("at")), str(s.get("source") or ""),
                       str(s["text"]), tuple(s.get("cards") or ()), int(s["pot"]), s.get("street"), s.get("state"))
            for s in detail.get("steps") or []]


def search_query(by: str, typed: str, limit: int = 20) -> dict[str, Any] | str:
    """The query for what the dealer typed, searched ``by`` hand, seat or player; or why not."""
    typed = typed.strip()
    limit = max(1, min(limit, MAX_HISTORY_PAGE))
    if by == "all" or not typed:
        return {"limit": limit}
    if by in ("hand", "seat"):
        if not typed.isdigit():
            return f"type the {by} number on the number pad (got {typed!r})"
        number = int(typed)
        if by == "seat" and not 1 <= number <= 10:
            return f"seat {number} is not a seat (1 to 10)"
        if number < 1:
            return "hands are numbered from 1"
        return {by: number, "limit": 1 if by == "hand" else limit}
    return {"player": typed[:40], "limit": limit}


def export_hand(detail: Mapping[str, Any], folder: str | Path) -> list[Path]:
    """Write a finished hand as ``<hand>.phh`` (PHH, rulings as comments and ``_studtable_rulings``)
    and ``<hand>.json`` (its log, every event with its time and source) into ``folder``."""
    if detail.get("live"):
        raise ValueError("the hand is still being played; export it once the pot is awarded")
    if not detail.get("phh") or detail.get("log") is None:
        raise ValueError("the engine gave this screen no export of the hand (its role may not see hole cards)")
    where = Path(folder).expanduser()
    where.mkdir(parents=True, exist_ok=True)
    name = str(detail["hand"])
    phh_path, json_path = where / f"{name}.phh", where / f"{name}.json"
    phh_path.write_text(str(detail["phh"]), "utf-8")
    doc = {"hand": name, "number": detail["number"], "variant": detail["variant"], "events": detail["log"],
           "steps": [{k: s[k] for k in ("i", "kind", "at", "source", "text", "cards", "pot")}
                     for s in detail.get("steps") or []]}
    json_path.write_text(json.dumps(doc, indent=1, ensure_ascii=False) + "\n", "utf-8")
    return [phh_path, json_path]


class MemoryHistory:
    """Hands held in memory (``{hand_id: events}``), answered as the engine would answer the console."""

    def __init__(self, hands: Mapping[str, Sequence[Any]], table_id: str = "t1") -> None:
        self._events: dict[str, list[Any]] = {}
        self._index: list[handlog.HandEntry] = []
        self.table_id = table_id
        for events in hands.values():
            hand, _ = handlog.steps_of(events, reveal=True, table_id=table_id)
            full = f"{table_id}-{hand.hand_id}"
            self._events[full] = list(events)
            marks = [(str(e.get(handlog.SOURCE) or ""), e.get(handlog.AT)) for e in events if isinstance(e, Mapping)]
            self._index.append(handlog.entry(hand, full, marks))

    def ask(self, query: Mapping[str, Any], reply: Reply) -> None:
        reply(handlog.answer({"request": "memory", **query}, role=Role.CONSOLE, table_id=self.table_id,
                             index=self._index, live=None, fetch=self._events.get,
                             hand_id_of=lambda n: f"{self.table_id}-{n}"))
