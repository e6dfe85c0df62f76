"""Hand history for floor rulings: the list of hands and a step-by-step replay.

Why replay on the console: RRoP lets management reconstruct the betting to
settle a dispute, and the floor needs the pot after every action, not just
the final result.  A finished hand's log (published after the pot is awarded
and kept in the event store) is folded here through the engine's own
``Hand.apply``, exactly as the engine folded it live, and after every event
the public projection is taken.  No poker is recomputed: the pot, the street
and the announcements at each step are the engine's.

``HistorySource`` is the small interface the browser reads; ``StoreHistory``
reads the engine's event store (SQLite), ``MemoryHistory`` holds hands given to
it (tests, screenshots).  This module is pure apart from ``StoreHistory``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from engine.events import (
    CardBurned,
    CardDealt,
    CardsShown,
    CommonCardDealt,
    Event,
    HandMucked,
    HandStarted,
    PlayerAction,
    event_from_json,
)
from engine.hand import Hand
from engine.public import public_state


@dataclass(frozen=True, slots=True)
class HandListing:
    hand_id: str
    label: str


class HistorySource(Protocol):
    """Where the browser gets finished hands from."""

    def hands(self) -> list[HandListing]: ...

    def events(self, hand_id: str) -> list[Any]: ...


@dataclass(frozen=True, slots=True)
class ReplayStep:
    index: int
    text: str
    pot: int
    street: str | None
    state: dict[str, Any]


def describe(event: Event, hand: Hand) -> str:
    """One line per event, in the words a floor person uses."""
    def who(seat: int) -> str:
        try:
            name = hand.seat(seat).name
        except Exception:  # a seat not in the hand; the number is enough
            name = ""
        return f"Seat {seat}" + (f" ({name})" if name else "")

    if isinstance(event, HandStarted):
        return f"Hand {event.hand_id} starts: {len(event.seats)} players, antes in"
    if isinstance(event, CardDealt):
        return f"{who(event.seat)} dealt {event.card} {'up' if event.face_up else 'down'}"
    if isinstance(event, CardBurned):
        return "Burn card"
    if isinstance(event, CommonCardDealt):
        return f"Common card {event.card}"
    if isinstance(event, PlayerAction):
        verb = {"bring_in": "brings it in for", "complete": "completes to", "bet": "bets",
                "raise": "raises to", "call": "calls"}.get(event.action, event.action + "s")
        amount = f" {event.amount}" if event.amount else ""
        return f"{who(event.seat)} {verb}{amount}"
    if isinstance(event, CardsShown):
        return f"{who(event.seat)} shows {' '.join(str(c) for c in event.cards)}"
    if isinstance(event, HandMucked):
        return f"{who(event.seat)} mucks"
    return event.type.replace("_", " ")


def replay_steps(events: Iterable[Any], table_id: str = "history") -> list[ReplayStep]:
    """Fold a finished hand's log, one step per event, with the public state after each."""
    steps: list[ReplayStep] = []
    hand: Hand | None = None
    for i, raw in enumerate(events):
        event = raw if isinstance(raw, Event) else event_from_json(raw)
        if hand is None:
            if not isinstance(event, HandStarted):
                raise ValueError("a hand's log starts with hand_started")
            hand = Hand(event)
        else:
            hand.apply(event)
        state = public_state(None, hand, table_id)
        steps.append(ReplayStep(i, describe(event, hand), hand.pot_total if not hand.is_over else
                                sum(a.amount for a in hand.awards), state["street"], state))
    return steps


class MemoryHistory:
    """Hands held in memory: ``{hand_id: events}`` in the order given."""

    def __init__(self, hands: Mapping[str, Sequence[Any]], labels: Mapping[str, str] | None = None) -> None:
        self._hands = dict(hands)
        self._labels = dict(labels or {})

    def hands(self) -> list[HandListing]:
        return [HandListing(h, self._labels.get(h, f"Hand {h}")) for h in self._hands]

    def events(self, hand_id: str) -> list[Any]:
        return list(self._hands[hand_id])


class StoreHistory:
    """The engine's hand log in its SQLite event store (opened per call, so the engine keeps writing)."""

    def __init__(self, path: str | Path, table: str) -> None:
        self.path = Path(path)
        self.table = table

    def _open(self) -> Any:
        from engine.store import SqliteStore

        if not self.path.exists():
            raise FileNotFoundError(f"hand log {self.path} does not exist; check history_db in the console config")
        return SqliteStore(self.path, self.table)

    def hands(self) -> list[HandListing]:
        store = self._open()
        try:
            return [HandListing(h.hand_id, f"Hand {h.hand_id} · {h.variant} · {h.ended_at or h.started_at}")
                    for h in reversed(store.list_hands())]
        finally:
            store.close()

    def events(self, hand_id: str) -> list[Any]:
        store = self._open()
        try:
            record = store.get_hand(hand_id)
            return list(record.events) if record else []
        finally:
            store.close()
