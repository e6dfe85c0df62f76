"""The public state, read once into typed records the widgets draw.

Theory of operation
-------------------
The engine publishes one retained JSON snapshot on ``public/state``; it has
already decided everything (who acts, each option and its exact amount, the
label a dealer reads, the announcements).  This module only *reads* it: it
checks types loosely (a console must not crash on a field it does not know),
fills defaults, and turns it into frozen dataclasses so that no widget ever
indexes raw JSON or computes poker.  It is pure (no Qt, no I/O), so it is
tested on its own and shared by the dealer console and the table monitor.

Hole-card secrecy is enforced here too, as a second line behind the broker's
access rules: a down card is given an identity only if its seat has *shown*
it (``shown`` in the state).  Anything else in the payload about a down card
is ignored, so even a wrongly built state cannot make a widget draw a hole
card.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from engine.publicstate import PublicState
    from engine.publicstate import SeatView as PublicSeat

#: keyboard letter per action kind; the first option of a kind gets the letter.
SHORTCUT_LETTERS: Mapping[str, str] = {
    "fold": "F",
    "check": "C",
    "call": "C",
    "bring_in": "B",
    "complete": "R",
    "bet": "R",
    "raise": "R",
}


@dataclass(frozen=True, slots=True)
class CardView:
    """One card at a seat as it may be drawn: ``code`` is ``None`` for a card drawn as a back."""

    code: str | None
    up: bool


@dataclass(frozen=True, slots=True)
class SeatView:
    seat: int
    name: str
    stack: int
    status: str
    bet: int
    cards: tuple[CardView, ...]
    in_hand: bool
    shown: bool
    last_action: str = ""  # what it did last this betting round, in the engine's words

    @property
    def up(self) -> tuple[str, ...]:
        return tuple(c.code for c in self.cards if c.up and c.code)

    @property
    def down_count(self) -> int:
        return sum(1 for c in self.cards if not c.up)

    @property
    def out(self) -> bool:
        """Folded, dead, mucked or sitting out: drawn dimmed."""
        return self.status in ("folded", "dead", "mucked", "sitting_out")


@dataclass(frozen=True, slots=True)
class OptionView:
    action: str
    amount: int
    all_in: bool
    label: str
    shortcut: str  # e.g. "C", "Shift+R"; empty if none

    def command_amount(self) -> int | None:
        """The amount field of the ``action`` command: none for fold and check."""
        return None if self.action in ("fold", "check") else self.amount


@dataclass(frozen=True, slots=True)
class PromptOption:
    id: str
    label: str


@dataclass(frozen=True, slots=True)
class PromptView:
    id: str
    rule: str
    seats: tuple[int, ...]
    text: str
    options: tuple[PromptOption, ...]
    clause: str


@dataclass(frozen=True, slots=True)
class Announcement:
    kind: str
    text: str
    seats: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class Award:
    pot: int
    amount: int
    seat: int
    share: str
    hand: str


@dataclass(frozen=True, slots=True)
class TableSnapshot:
    """Everything the console and monitor draw, straight from one public state."""

    table: str = ""
    hand_id: int | None = None
    phase: str = "idle"
    game_name: str = ""
    variant: str = ""
    stakes: str = ""
    limits: str = ""
    rules: str = ""
    street: str | None = None
    bet_size: int | None = None
    seat_count: int = 8
    seats: tuple[SeatView, ...] = ()
    pot: int = 0
    to_act: int | None = None
    to_call: int = 0
    options: tuple[OptionView, ...] = ()
    announcements: tuple[Announcement, ...] = ()
    awards: tuple[Award, ...] = ()
    prompts: tuple[PromptView, ...] | None = None  # None: the state did not carry prompts
    devices: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    common: tuple[str, ...] = ()  # RRoP stud 15: the common card, face up in the centre for every hand

    def seat(self, number: int) -> SeatView | None:
        for s in self.seats:
            if s.seat == number:
                return s
        return None

    @property
    def announcement(self) -> str:
        """The dealer's line: the latest announcement, or the award when the hand is over."""
        if self.awards and self.phase == "complete":
            return "  ".join(award_text(a, self) for a in self.awards)
        return self.announcements[-1].text if self.announcements else ""

    @property
    def acting_name(self) -> str:
        s = self.seat(self.to_act) if self.to_act is not None else None
        return f"Seat {s.seat} {s.name}".strip() if s else ""


def award_text(a: Award, snap: TableSnapshot) -> str:
    """An award as a dealer would say it; the words come from the state, only arranged here."""
    s = snap.seat(a.seat)
    who = s.name if s and s.name else f"Seat {a.seat}"
    pot = "the pot" if a.pot == 0 else f"side pot {a.pot}"
    share = "" if a.share in ("scoop", "uncontested", "high") else f" ({a.share})"
    hand = f" with {a.hand}" if a.hand else ""
    return f"{who} wins {a.amount} — {pot}{share}{hand}"


# ------------------------------------------------------------------ reading helpers


def _int(value: Any, default: int = 0) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else default


def _opt_int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _str(value: Any, default: str = "") -> str:
    return value if isinstance(value, str) else default


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _seat_cards(raw: Mapping[str, Any]) -> tuple[tuple[CardView, ...], bool]:
    """The seat's cards in deal order; a down card named only if the seat has shown it."""
    shown = {c for c in _list(raw.get("shown")) if isinstance(c, str)}
    cards: list[CardView] = []
    entries = _list(raw.get("cards"))
    if entries:
        for entry in entries:
            if not isinstance(entry, Mapping):
                continue
            code = _str(entry.get("card"))
            up = bool(entry.get("up"))
            if up:
                cards.append(CardView(code if code and code != "??" else None, True))
            else:
                cards.append(CardView(code if code in shown else None, False))
    else:  # an older or trimmed state: up cards and a count of backs
        cards = [CardView(None, False)] * _int(raw.get("down_count"))
        cards += [CardView(c, True) for c in _list(raw.get("up")) if isinstance(c, str)]
    return tuple(cards), bool(shown)


def _seat(raw: Mapping[str, Any]) -> SeatView:
    cards, shown = _seat_cards(raw)
    status = _str(raw.get("status"), "waiting")
    if raw.get("sitting_out") and status == "waiting":
        status = "sitting_out"
    return SeatView(
        seat=_int(raw.get("seat")),
        name=_str(raw.get("name")),
        stack=_int(raw.get("stack")),
        status=status,
        bet=_int(raw.get("bet")),
        cards=cards,
        in_hand=bool(raw.get("in_hand", bool(cards))),
        shown=shown,
        last_action=_str(raw.get("last_action")),
    )


def options_with_shortcuts(raw: Sequence[Any]) -> tuple[OptionView, ...]:
    """Options in the engine's order, each with a keyboard shortcut.

    The first option of a letter gets the bare letter (F, C, B, R); a second
    one with the same letter (the open-pair ``Bet 10`` beside ``Bet 5``, or
    the second raise size) gets Shift plus the letter.  Digits 1..9 are added
    by the widget, by position, so every button has a key.
    """
    used: set[str] = set()
    out: list[OptionView] = []
    for o in raw:
        if not isinstance(o, Mapping):
            continue
        action = _str(o.get("action"))
        letter = SHORTCUT_LETTERS.get(action, "")
        key = ""
        if letter:
            key = letter if letter not in used else f"Shift+{letter}" if f"Shift+{letter}" not in used else ""
            used.add(key or letter)
        label = _str(o.get("label")) or action.replace("_", " ").capitalize()
        out.append(OptionView(action, _int(o.get("amount")), bool(o.get("all_in")), label, key))
    return tuple(out)


def option_names(options: Sequence[tuple[str, int]]) -> tuple[str, ...]:
    """The accessible name of each action button, from ``(action, amount)`` in the engine's order.

    The first option of a kind is ``action.<kind>`` (``action.fold``, ``action.call``,
    ``action.raise``); a second of the same kind (the open pair's ``Bet 10`` beside ``Bet 5``)
    is ``action.<kind>.<amount>``.  The demo's simulated players find their button this way.
    """
    seen: set[str] = set()
    names: list[str] = []
    for action, amount in options:
        name = f"action.{action}"
        if name in seen:
            name = f"{name}.{amount}"
        seen.add(name)
        names.append(name)
    return tuple(names)


def read_prompts(raw: Any) -> tuple[PromptView, ...]:
    """Prompts in either shape the engine may send.

    ``public/state`` ``prompts``: ``[{id, rule, seats, text, options: [{id, label}], clause}]``;
    ``dealer/prompt`` ``open``: ``[{prompt, text, options: [id], labels: [label], rule}]``.
    """
    out: list[PromptView] = []
    for p in _list(raw):
        if not isinstance(p, Mapping):
            continue
        pid = _str(p.get("id")) or _str(p.get("prompt"))
        if not pid:
            continue
        labels = [x for x in _list(p.get("labels")) if isinstance(x, str)]
        options: list[PromptOption] = []
        for i, o in enumerate(_list(p.get("options"))):
            if isinstance(o, Mapping):
                oid = _str(o.get("id"))
                options.append(PromptOption(oid, _str(o.get("label")) or oid.replace("_", " ")))
            elif isinstance(o, str):
                options.append(PromptOption(o, labels[i] if i < len(labels) else o.replace("_", " ")))
        out.append(
            PromptView(
                id=pid,
                rule=_str(p.get("rule")),
                seats=tuple(s for s in _list(p.get("seats")) if isinstance(s, int)),
                text=_str(p.get("text")),
                options=tuple(options),
                clause=_str(p.get("clause")) or _str(p.get("rule")),
            )
        )
    return tuple(out)


def read_state(state: Mapping[str, Any]) -> TableSnapshot:
    """Read one ``public/state`` object.  A state of the contract (every state the engine sends:
    ``engine.wire`` has checked it with ``PublicState.from_json``) is read through the typed tree;
    anything else (a history step's trimmed picture, an older engine's state) loosely, unknown
    or missing fields falling back to defaults, so that a screen never crashes on it."""
    from engine.publicstate import PublicState, StateError

    try:
        typed = PublicState.from_json(dict(state))
    except (StateError, TypeError, ValueError):
        return read_loose_state(state)
    return from_public_state(typed)


def from_public_state(state: PublicState) -> TableSnapshot:
    """The snapshot of a typed ``public/state`` (engine.publicstate): what the widgets draw."""
    game = state.game
    service = state.service
    seats = tuple(_typed_seat(s) for s in state.seats)
    return TableSnapshot(
        table=state.table,
        hand_id=state.hand_id,
        phase=state.phase,
        game_name=game.name if game else "",
        variant=game.variant if game else "",
        stakes=(f"{game.small_bet}-{game.big_bet} · ante {game.ante} · bring-in {game.bring_in}" if game else ""),
        limits=f"{game.small_bet}/{game.big_bet}" if game else "",
        rules=game.rules if game else "",
        street=state.street or None,
        bet_size=state.bet_size,
        seat_count=max([state.seat_count] + [s.seat for s in seats] + [2]),
        seats=seats,
        pot=state.pot,
        to_act=state.to_act,
        to_call=state.to_call,
        options=options_with_shortcuts([dataclasses.asdict(o) for o in state.options]),
        announcements=tuple(Announcement(a.kind, a.text, tuple(a.seats)) for a in state.announcements),
        awards=tuple(Award(a.pot, a.amount, a.seat, a.share, a.hand) for a in state.awards),
        prompts=None if service is None or service.prompts is None else tuple(
            PromptView(p.id, p.rule, tuple(p.seats), p.text, tuple(PromptOption(o.id, o.label) for o in p.options),
                       p.clause or p.rule)
            for p in service.prompts),
        devices={} if service is None or service.devices is None else {
            name: dataclasses.asdict(d) for name, d in service.devices.items()},
        common=tuple(state.common),
    )


def _typed_seat(s: PublicSeat) -> SeatView:
    shown = set(s.shown)
    # A down card has an identity only once its seat has shown it (the second line of secrecy).
    cards = tuple(CardView(c.card if c.card != "??" else None, True) if c.up
                  else CardView(c.card if c.card in shown else None, False) for c in s.cards)
    status = "sitting_out" if s.sitting_out and s.status == "waiting" else s.status
    return SeatView(seat=s.seat, name=s.name, stack=s.stack, status=status, bet=s.bet, cards=cards,
                    in_hand=s.in_hand, shown=bool(shown), last_action=s.last_action)


def read_loose_state(state: Mapping[str, Any]) -> TableSnapshot:
    """Read a state that is not of the contract; unknown or missing fields fall back to defaults."""
    game = state.get("game") if isinstance(state.get("game"), Mapping) else {}
    assert isinstance(game, Mapping)
    stakes = limits = ""
    if game:
        limits = f"{_int(game.get('small_bet'))}/{_int(game.get('big_bet'))}"
        stakes = (
            f"{_int(game.get('small_bet'))}-{_int(game.get('big_bet'))} · ante {_int(game.get('ante'))} · "
            f"bring-in {_int(game.get('bring_in'))}"
        )
    seats = tuple(_seat(s) for s in _list(state.get("seats")) if isinstance(s, Mapping))
    seat_count = max([_int(state.get("seat_count"))] + [s.seat for s in seats] + [2])
    return TableSnapshot(
        table=_str(state.get("table")),
        hand_id=_opt_int(state.get("hand_id")),
        phase=_str(state.get("phase"), "idle"),
        game_name=_str(game.get("name")),
        variant=_str(game.get("variant")),
        stakes=stakes,
        limits=limits,
        rules=_str(game.get("rules")),
        street=_str(state.get("street")) or None,
        bet_size=_opt_int(state.get("bet_size")),
        seat_count=seat_count,
        seats=seats,
        pot=_int(state.get("pot")),
        to_act=_opt_int(state.get("to_act")),
        to_call=_int(state.get("to_call")),
        options=options_with_shortcuts(_list(state.get("options"))),
        announcements=tuple(
            Announcement(_str(a.get("kind")), _str(a.get("text")), tuple(x for x in _list(a.get("seats"))
                                                                            if isinstance(x, int)))
            for a in _list(state.get("announcements"))
            if isinstance(a, Mapping)
        ),
        awards=tuple(
            Award(_int(a.get("pot")), _int(a.get("amount")), _int(a.get("seat")), _str(a.get("share")),
                  _str(a.get("hand")))
            for a in _list(state.get("awards"))
            if isinstance(a, Mapping)
        ),
        prompts=read_prompts(state["prompts"]) if "prompts" in state else None,
        devices={k: v for k, v in state["devices"].items() if isinstance(k, str) and isinstance(v, Mapping)}
        if isinstance(state.get("devices"), Mapping)
        else {},
        common=tuple(c for c in _list(state.get("common")) if isinstance(c, str)),
    )
