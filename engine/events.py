"""The hand's inputs and outputs, as plain data.

A hand is a fold over its input events (event sourcing): the same list of
inputs always gives an equal hand.  Every event serialises to a JSON object
with a ``type`` field and back, so the event store, the wire and the hand
log all carry the same records.
"""

from __future__ import annotations

from dataclasses import MISSING, asdict, dataclass, field, fields
from typing import Any, ClassVar

from engine.cards import Card, CardError, card
from engine.rules import ConfigError, GameConfig


class EventError(ValueError):
    """A record that is not a well-formed event; the message names the field."""


_REGISTRY: dict[str, type[Event]] = {}


@dataclass(frozen=True)
class Event:
    type: ClassVar[str] = ""

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if cls.type:
            _REGISTRY[cls.type] = cls

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {"type": self.type}
        for f in fields(self):
            data[f.name] = _encode(getattr(self, f.name))
        return data


def _encode(value: Any) -> Any:
    if isinstance(value, Card):
        return str(value)
    if isinstance(value, GameConfig):
        return value.to_json()
    if isinstance(value, tuple | list):
        return [_encode(v) for v in value]
    if hasattr(value, "__dataclass_fields__"):
        return {k: _encode(v) for k, v in asdict(value).items()}
    return value


def event_from_json(data: Any) -> Event:
    """Rebuild an event from its JSON form; raises EventError naming the problem."""
    if not isinstance(data, dict):
        raise EventError("an event is a JSON object")
    kind = data.get("type")
    cls = _REGISTRY.get(kind) if isinstance(kind, str) else None
    if cls is None:
        raise EventError(f"unknown event type {kind!r}")
    kwargs: dict[str, Any] = {}
    for f in fields(cls):
        if f.name not in data:
            if f.default is not MISSING or f.default_factory is not MISSING:
                continue
            raise EventError(f"{kind} event is missing field {f.name!r}")
        kwargs[f.name] = data[f.name]
    try:
        return cls.from_fields(kwargs)  # type: ignore[attr-defined, no-any-return]
    except (CardError, ConfigError, TypeError, ValueError) as exc:
        raise EventError(f"bad {kind} event: {exc}") from None


def _int(name: str, value: Any, minimum: int | None = None) -> int:
    if not isinstance(value, int) or isinstance(value, bool):
        raise EventError(f"{name} must be a whole number; got {value!r}")
    if minimum is not None and value < minimum:
        raise EventError(f"{name} must be at least {minimum}; got {value}")
    return value


@dataclass(frozen=True)
class SeatEntry:
    seat: int
    name: str
    stack: int


@dataclass(frozen=True)
class HandStarted(Event):
    """Opens a hand: stakes, rules and the seats dealt in, in deal order."""

    type: ClassVar[str] = "hand_started"
    hand_id: int
    config: GameConfig
    seats: tuple[SeatEntry, ...]
    # Seats dealt in but not present (RRoP stud 6: their ante is forfeited, the hand killed in turn).
    absent: tuple[int, ...] = ()

    @classmethod
    def from_fields(cls, d: dict[str, Any]) -> HandStarted:
        seats = d["seats"]
        if not isinstance(seats, list):
            raise EventError("seats must be a list")
        entries = []
        for s in seats:
            if not isinstance(s, dict):
                raise EventError("each seat is an object with seat, name, stack")
            entries.append(
                SeatEntry(
                    _int("seat", s.get("seat"), 1), str(s.get("name", "")), _int("stack", s.get("stack"), 0)
                )
            )
        return cls(
            hand_id=_int("hand_id", d["hand_id"], 0),
            config=GameConfig.from_json(d["config"]),
            seats=tuple(entries),
            absent=tuple(_int("absent seat", a, 1) for a in d.get("absent", ())),
        )


@dataclass(frozen=True)
class CardDealt(Event):
    """A card delivered to a seat, up or down; ``??`` when nobody knows which card."""

    type: ClassVar[str] = "card_dealt"
    seat: int
    card: Card
    face_up: bool

    @classmethod
    def from_fields(cls, d: dict[str, Any]) -> CardDealt:
        if not isinstance(d["face_up"], bool):
            raise EventError("face_up must be true or false")
        return cls(_int("seat", d["seat"], 1), card(d["card"]), d["face_up"])


@dataclass(frozen=True)
class CardBurned(Event):
    type: ClassVar[str] = "card_burned"
    card: Card

    @classmethod
    def from_fields(cls, d: dict[str, Any]) -> CardBurned:
        return cls(card(d["card"]))


@dataclass(frozen=True)
class CommonCardDealt(Event):
    """RRoP stud 15: too few cards left for everyone; one up card plays in every hand."""

    type: ClassVar[str] = "common_card_dealt"
    card: Card

    @classmethod
    def from_fields(cls, d: dict[str, Any]) -> CommonCardDealt:
        return cls(card(d["card"]))


@dataclass(frozen=True)
class DeckReshuffled(Event):
    """RRoP stud 15: the stub ran short on the last card; the last card was mixed
    with the burn cards (and any removed cards), scrambled and cut."""

    type: ClassVar[str] = "deck_reshuffled"

    @classmethod
    def from_fields(cls, d: dict[str, Any]) -> DeckReshuffled:
        return cls()


ACTIONS = ("fold", "check", "call", "bring_in", "complete", "bet", "raise")


@dataclass(frozen=True)
class PlayerAction(Event):
    """A player's action.  ``amount`` is the total wagered this street for
    bring_in, complete, bet and raise ("raise to 20"); for call it is the
    chips added, and may be omitted."""

    type: ClassVar[str] = "player_action"
    seat: int
    action: str
    amount: int | None = None

    @classmethod
    def from_fields(cls, d: dict[str, Any]) -> PlayerAction:
        action = d["action"]
        if action not in ACTIONS:
            raise EventError(f"unknown action {action!r}; actions are {', '.join(ACTIONS)}")
        amount = d.get("amount")
        return cls(_int("seat", d["seat"], 1), action, None if amount is None else _int("amount", amount, 0))


@dataclass(frozen=True)
class CardsShown(Event):
    """A player shows cards (at showdown, or exposing them); shown cards become public."""

    type: ClassVar[str] = "cards_shown"
    seat: int
    cards: tuple[Card, ...]

    @classmethod
    def from_fields(cls, d: dict[str, Any]) -> CardsShown:
        cards = d["cards"]
        if not isinstance(cards, list | tuple):
            raise EventError("cards must be a list of card codes")
        return cls(_int("seat", d["seat"], 1), tuple(card(c) for c in cards))


@dataclass(frozen=True)
class HandMucked(Event):
    """A player at showdown throws the hand away unshown (concedes)."""

    type: ClassVar[str] = "hand_mucked"
    seat: int

    @classmethod
    def from_fields(cls, d: dict[str, Any]) -> HandMucked:
        return cls(_int("seat", d["seat"], 1))


# ---- rulings on irregularities (engine/irregularities.py) -------------------


@dataclass(frozen=True)
class HandKilled(Event):
    """A seat's hand is dead by ruling (RRoP 3.3; stud 5, 6, 10, 19).  With
    ``refund_ante`` the ante goes back (both hole cards dealt face up)."""

    type: ClassVar[str] = "hand_killed"
    seat: int
    rule: str
    refund_ante: bool = False

    @classmethod
    def from_fields(cls, d: dict[str, Any]) -> HandKilled:
        refund = d.get("refund_ante", False)
        if not isinstance(refund, bool):
            raise EventError("refund_ante must be true or false")
        return cls(_int("seat", d["seat"], 1), str(d["rule"]), refund)


@dataclass(frozen=True)
class HandVoided(Event):
    """All action void, every chip back to who wagered it (RRoP 3.2 misdeal; 3.4 foreign or duplicate card)."""

    type: ClassVar[str] = "hand_voided"
    rule: str

    @classmethod
    def from_fields(cls, d: dict[str, Any]) -> HandVoided:
        return cls(str(d["rule"]))


@dataclass(frozen=True)
class HoleCardExposed(Event):
    """RRoP stud 5: the seat's up card on third street is a hole card the dealer turned up.
    If it is the low card, the player to the left opens, and may fold."""

    type: ClassVar[str] = "hole_card_exposed"
    seat: int

    @classmethod
    def from_fields(cls, d: dict[str, Any]) -> HoleCardExposed:
        return cls(_int("seat", d["seat"], 1))


@dataclass(frozen=True)
class ActionWithdrawn(Event):
    """RRoP 3.5: a player unaware of a raise takes back the call, if nobody acted after."""

    type: ClassVar[str] = "action_withdrawn"
    seat: int

    @classmethod
    def from_fields(cls, d: dict[str, Any]) -> ActionWithdrawn:
        return cls(_int("seat", d["seat"], 1))


@dataclass(frozen=True)
class AllInDeclared(Event):
    """RRoP stud 17(a),(b): a player whose last card was dealt face up declares all in before
    the last betting round; the chips behind stay out of this hand."""

    type: ClassVar[str] = "all_in_declared"
    seat: int

    @classmethod
    def from_fields(cls, d: dict[str, Any]) -> AllInDeclared:
        return cls(_int("seat", d["seat"], 1))


@dataclass(frozen=True)
class CardTakenBack(Event):
    """RRoP 3.4: the card just delivered was a boxed card (or a joker): a scrap of paper.
    It leaves play and the next card from the deck replaces it."""

    type: ClassVar[str] = "card_taken_back"
    card: Card
    rule: str = "deck.boxed-card"

    @classmethod
    def from_fields(cls, d: dict[str, Any]) -> CardTakenBack:
        return cls(card(d["card"]), str(d.get("rule", "deck.boxed-card")))


@dataclass(frozen=True)
class CardsRemoved(Event):
    """RRoP stud 14: cards dealt prematurely are taken out of play (kept aside for a reshuffle)."""

    type: ClassVar[str] = "cards_removed"
    cards: tuple[Card, ...]
    rule: str = "stud.premature-card"

    @classmethod
    def from_fields(cls, d: dict[str, Any]) -> CardsRemoved:
        cards = d["cards"]
        if not isinstance(cards, list | tuple):
            raise EventError("cards must be a list of card codes")
        return cls(tuple(card(c) for c in cards), str(d.get("rule", "stud.premature-card")))


@dataclass(frozen=True)
class FinalCardKept(Event):
    """RRoP stud 14: a seventh card dealt prematurely (during sixth-street betting) that the
    player looked at or mixed in is kept; the player may only call on sixth street.  The card
    comes from the stub, or from the cards already set aside as premature."""

    type: ClassVar[str] = "final_card_kept"
    seat: int
    card: Card

    @classmethod
    def from_fields(cls, d: dict[str, Any]) -> FinalCardKept:
        return cls(_int("seat", d["seat"], 1), card(d["card"]))


@dataclass(frozen=True)
class DealCorrected(Event):
    """RRoP stud 13: the street was dealt with ``burns`` burn cards (0: none, 2: two) instead
    of one, and the cards play where they lie: the street's draws, in the order they were
    drawn, are the burn(s) and then the seats' cards in dealing order."""

    type: ClassVar[str] = "deal_corrected"
    burns: int

    @classmethod
    def from_fields(cls, d: dict[str, Any]) -> DealCorrected:
        burns = _int("burns", d["burns"], 0)
        if burns not in (0, 2):
            raise EventError("burns must be 0 (no burn) or 2 (two burns)")
        return cls(burns)


@dataclass(frozen=True)
class UpCardCorrected(Event):
    """An up card was misread (camera or dealer): the seat's up card at ``position`` (0 = the
    door card) is really ``card``.  If nobody has acted yet in the round, who acts first
    is decided again (RRoP stud 9)."""

    type: ClassVar[str] = "up_card_corrected"
    seat: int
    card: Card
    position: int = 0

    @classmethod
    def from_fields(cls, d: dict[str, Any]) -> UpCardCorrected:
        return cls(_int("seat", d["seat"], 1), card(d["card"]), _int("position", d.get("position", 0), 0))


@dataclass(frozen=True)
class BringInWithdrawn(Event):
    """RRoP stud 9: the wrong player was designated low and the next player has not acted:
    the wrong bring-in is taken back and the true low card must bring it in."""

    type: ClassVar[str] = "bring_in_withdrawn"
    seat: int

    @classmethod
    def from_fields(cls, d: dict[str, Any]) -> BringInWithdrawn:
        return cls(_int("seat", d["seat"], 1))


@dataclass(frozen=True)
class CallOnly(Event):
    """The seat may not bet or raise for the rest of this betting round (RRoP 3.5: a check out
    of turn; the call-only seat of stud 14 comes with ``FinalCardKept``)."""

    type: ClassVar[str] = "call_only"
    seat: int
    rule: str = "betting.out-of-turn"

    @classmethod
    def from_fields(cls, d: dict[str, Any]) -> CallOnly:
        return cls(_int("seat", d["seat"], 1), str(d.get("rule", "betting.out-of-turn")))


@dataclass(frozen=True)
class ExtraCardReturned(Event):
    """RRoP 3.4: one extra card dealt before the first betting round is returned to the deck
    and used as the fourth-street burn card."""

    type: ClassVar[str] = "extra_card_returned"
    card: Card

    @classmethod
    def from_fields(cls, d: dict[str, Any]) -> ExtraCardReturned:
        return cls(card(d["card"]))


@dataclass(frozen=True)
class EntryUndone(Event):
    """A dealer's entry was undone (engine/floor/undo.py): the hand was taken again without it.
    Changes nothing by itself; it keeps the correction in the hand's log, in public words."""

    type: ClassVar[str] = "entry_undone"
    text: str

    @classmethod
    def from_fields(cls, d: dict[str, Any]) -> EntryUndone:
        if not isinstance(d["text"], str):
            raise EventError("entry_undone text must be a string")
        return cls(d["text"])


# ---- the table between hands (RRoP 3.1) ------------------------------------


@dataclass(frozen=True)
class SeatTaken(Event):
    """A player sits down with a buy-in."""

    type: ClassVar[str] = "seat_taken"
    seat: int
    name: str
    buy_in: int

    @classmethod
    def from_fields(cls, d: dict[str, Any]) -> SeatTaken:
        name = d["name"]
        if not isinstance(name, str) or not name.strip():
            raise EventError("name must be a non-empty string")
        return cls(_int("seat", d["seat"], 1), name.strip(), _int("buy_in", d["buy_in"], 1))


@dataclass(frozen=True)
class SeatLeft(Event):
    type: ClassVar[str] = "seat_left"
    seat: int

    @classmethod
    def from_fields(cls, d: dict[str, Any]) -> SeatLeft:
        return cls(_int("seat", d["seat"], 1))


@dataclass(frozen=True)
class SeatChanged(Event):
    """RRoP 3.1: a player changes seats (or is moved) between hands with the same stack; not a buy-in."""

    type: ClassVar[str] = "seat_changed"
    seat: int
    to: int

    @classmethod
    def from_fields(cls, d: dict[str, Any]) -> SeatChanged:
        return cls(_int("seat", d["seat"], 1), _int("to", d["to"], 1))


@dataclass(frozen=True)
class ChipsAdded(Event):
    """RRoP 3.1: adding to a stack is not a buy-in; any amount, between hands only."""

    type: ClassVar[str] = "chips_added"
    seat: int
    amount: int

    @classmethod
    def from_fields(cls, d: dict[str, Any]) -> ChipsAdded:
        return cls(_int("seat", d["seat"], 1), _int("amount", d["amount"], 1))


@dataclass(frozen=True)
class SittingOut(Event):
    """A player sits out (is not dealt in) or comes back."""

    type: ClassVar[str] = "sitting_out"
    seat: int
    out: bool

    @classmethod
    def from_fields(cls, d: dict[str, Any]) -> SittingOut:
        if not isinstance(d["out"], bool):
            raise EventError("out must be true or false")
        return cls(_int("seat", d["seat"], 1), d["out"])


# ---- outputs -------------------------------------------------------------


@dataclass(frozen=True)
class Announcement:
    """What the dealer says aloud (RRoP stud 12; razz 5)."""

    kind: str  # low_card, high_hand, raise, pair, open_pair, all_in, showdown, winner
    text: str
    seats: tuple[int, ...] = ()


@dataclass(frozen=True)
class PotAward:
    pot: int  # 0 = main pot, then side pots in order
    amount: int
    seat: int
    share: str  # "high", "low", "scoop", "uncontested"
    hand: str = ""


@dataclass(frozen=True)
class Outputs:
    """What one accepted input produced."""

    announcements: tuple[Announcement, ...] = ()
    awards: tuple[PotAward, ...] = ()
    hand_over: bool = False
    extra: dict[str, Any] = field(default_factory=dict)
