"""Hand histories in PHH, the Poker Hand History format PokerKit reads.

PHH is TOML.  For stud (variants ``F7S``, ``F7S/8``, ``FR``) a file holds the
stakes, the starting stacks and the actions: ``d dh pN CARDS`` deals cards
to a player (third street deals three in one action: two down then the door
card; fourth to sixth one up; seventh one down), ``d db CARDS`` a common
card, ``pN pb`` the bring-in, ``pN cbr X`` complete, bet or raise to X,
``pN cc`` check or call, ``pN f`` fold, ``pN sm CARDS`` show (``-`` mucks).
Up or down is not written; it follows from the street.

Burns are not PHH actions either.  A dealer (and PokerKit) burns one card
before the cards of fourth to seventh street, so the import burns an
unidentified card there: the stub then holds what the real stub held, and
it runs out where the real one did.  When it is out on seventh street, the
next card comes from the reshuffled cards (RRoP stud 15; 002 8.1): under
``wsop2023``, as PokerKit does it, every burn and every folded hand goes back
in (``HouseRules.reshuffle_includes_muck``), so a card of a folded hand may
be dealt again; under ``rrop`` only the burns and the cards set aside.

An exported hand that ran out of cards says what happened in the action
comments, which PokerKit keeps as commentary and the import reads back:
``# studtable: reshuffle`` on the first card dealt from the reshuffled cards
(``reshuffle, burn`` when the dealer burned again after it; ``no burn, ...``
when no card was burned before the street's first card), and the user field
``_studtable_reshuffled = true``.

Importing turns a file into the engine's events (so replaying is just
``Hand.replay``); exporting writes any hand the engine played.
"""

from __future__ import annotations

import tomllib
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from engine.cards import UNKNOWN, parse_cards
from engine.events import (
    CardBurned,
    CardDealt,
    CardsShown,
    CommonCardDealt,
    DeckReshuffled,
    Event,
    HandMucked,
    HandStarted,
    PlayerAction,
    SeatEntry,
)
from engine.hand import STREET_DEAL, Hand, IllegalAction, Phase
from engine.rules import GameConfig, HouseRules, Variant, house_rules
from engine.tomlwrite import toml_value


class PHHError(ValueError):
    """A PHH file the engine cannot replay; the message says where and why."""


@dataclass
class ImportedHand:
    config: GameConfig
    events: list[Event]
    hand: Hand
    players: list[str]


def loads(text: str, rules: str | HouseRules = "rrop", hand_id: int = 1) -> ImportedHand:
    """Parse a PHH document and replay it through the engine."""
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise PHHError(f"not valid PHH (TOML): {exc}") from None
    return from_fields(data, rules, hand_id)


def _field(data: dict[str, Any], name: str) -> Any:
    if name not in data:
        raise PHHError(f"PHH field {name!r} is required for stud")
    return data[name]


def from_fields(data: dict[str, Any], rules: str | HouseRules = "rrop", hand_id: int = 1) -> ImportedHand:
    variant_code = _field(data, "variant")
    try:
        variant = Variant(variant_code)
    except ValueError:
        raise PHHError(f"variant {variant_code!r} is not a stud game (F7S, F7S/8, FR)") from None
    stacks = _field(data, "starting_stacks")
    antes = _field(data, "antes")
    if not isinstance(stacks, list) or not all(isinstance(s, int) for s in stacks):
        raise PHHError("starting_stacks must be a list of whole numbers")
    n = len(stacks)
    if isinstance(antes, int):
        antes = [antes] * n
    if not isinstance(antes, list) or len(set(antes)) > 1:
        raise PHHError(f"antes must be the same for every player; got {antes!r}")
    ante = antes[0] if antes else 0
    if data.get("ante_trimming_status", False):
        raise PHHError("ante_trimming_status = true is not a stud table's ante")
    try:
        config = GameConfig(
            variant,
            ante,
            _field(data, "bring_in"),
            _field(data, "small_bet"),
            _field(data, "big_bet"),
            rules=house_rules(rules),
        )
    except ValueError as exc:
        raise PHHError(str(exc)) from None
    seats = data.get("seats") or list(range(1, n + 1))
    players = data.get("players") or [f"p{i + 1}" for i in range(n)]
    if len(seats) != n or len(players) != n:
        raise PHHError("seats and players must list one entry per starting stack")
    start = HandStarted(
        int(data.get("hand", hand_id)) if isinstance(data.get("hand", hand_id), int) else hand_id,
        config,
        tuple(
            SeatEntry(int(seat), str(name), int(stack))
            for seat, name, stack in zip(seats, players, stacks, strict=True)
        ),
    )
    try:
        hand = Hand(start)
    except IllegalAction as exc:
        raise PHHError(str(exc)) from None
    events: list[Event] = [start]
    seat_of = {f"p{i + 1}": int(seats[i]) for i in range(n)}

    def feed(event: Event, where: str) -> None:
        try:
            hand.apply(event)
        except IllegalAction as exc:
            raise PHHError(f"{where}: {exc}") from None
        events.append(event)

    actions = _field(data, "actions")
    if not isinstance(actions, list):
        raise PHHError("actions must be a list of strings")
    for k, action in enumerate(actions):
        where = f"action {k + 1} ({action!r})"
        text, _, comment = str(action).partition("#")
        parts = text.split()
        if not parts:
            continue
        if parts[0] == "d":
            _deal(hand, parts, seat_of, feed, where, _deal_note(comment))
            continue
        if parts[0] not in seat_of or len(parts) < 2:
            raise PHHError(f"{where}: not a stud action")
        seat = seat_of[parts[0]]
        verb = parts[1]
        if verb == "f":
            feed(PlayerAction(seat, "fold"), where)
        elif verb == "pb":
            feed(PlayerAction(seat, "bring_in"), where)
        elif verb == "cc":
            opts = hand.options()
            kind = "check" if opts is not None and opts.find("check") else "call"
            feed(PlayerAction(seat, kind), where)
        elif verb == "cbr":
            if len(parts) < 3 or not parts[2].isdigit():
                raise PHHError(f"{where}: cbr needs an amount")
            amount = int(parts[2])
            opts = hand.options()
            kinds = [
                o.action for o in (opts.options if opts else ()) if o.action in ("complete", "bet", "raise")
            ]
            feed(PlayerAction(seat, kinds[0] if kinds else "raise", amount), where)
        elif verb == "sm":
            if len(parts) < 3 or parts[2] == "-":
                feed(HandMucked(seat), where)
            else:
                try:
                    cards = parse_cards(parts[2])
                except ValueError as exc:
                    raise PHHError(f"{where}: {exc}") from None
                feed(CardsShown(seat, cards), where)
        else:
            raise PHHError(f"{where}: unknown action {verb!r}")
    # PokerKit shows the remaining hands itself; so do we, where the cards are known.
    while hand.phase is Phase.SHOWDOWN:
        seat_no = hand.to_act
        assert seat_no is not None
        s = hand.seat(seat_no)
        if any(not c.known for c in s.down):
            raise PHHError(
                f"seat {seat_no}'s down cards are unknown at showdown; the file must show them (sm)"
            )
        feed(CardsShown(seat_no, tuple(s.down)), "showdown")
    return ImportedHand(config, events, hand, [str(p) for p in players])


NOTE_PREFIX = "studtable:"
NOTE_WORDS = ("no burn", "reshuffle", "burn")  # in the order they happen before the card


def _deal_note(comment: str) -> tuple[str, ...]:
    """What an exported action's comment says happened before its card (``NOTE_WORDS``)."""
    note = comment.strip()
    if not note.startswith(NOTE_PREFIX):
        return ()
    words = tuple(w.strip() for w in note[len(NOTE_PREFIX):].split(","))
    return tuple(w for w in words if w in NOTE_WORDS)


def _before_card(hand: Hand, feed: Any, where: str, note: tuple[str, ...]) -> None:
    """The burn and reshuffle a dealer makes before a card, which PHH does not write."""
    if (
        "no burn" not in note
        and hand.street > 0
        and not hand.burned_this_street
        and hand.stub_size() > 0
        and hand.next_deal() == ("burn", None, False)
    ):
        feed(CardBurned(UNKNOWN), where)  # the burn before the street's first card
    if "reshuffle" in note or (not note and hand.stub_size() <= 0):
        feed(DeckReshuffled(), where)  # RRoP stud 15 / PokerKit: the stub ran out
        if "burn" in note:
            feed(CardBurned(UNKNOWN), where)  # RRoP stud 15: the dealer burns again


def _deal(
    hand: Hand,
    parts: list[str],
    seat_of: dict[str, int],
    feed: Any,
    where: str,
    note: tuple[str, ...] = (),
) -> None:
    if len(parts) < 3:
        raise PHHError(f"{where}: incomplete deal")
    if parts[1] == "db":
        for c in parse_cards(parts[2]):
            _before_card(hand, feed, where, note)
            note = ()
            feed(CommonCardDealt(c), where)
        return
    if parts[1] != "dh" or len(parts) < 4 or parts[2] not in seat_of:
        raise PHHError(f"{where}: not a stud deal (d dh pN CARDS or d db CARDS)")
    seat = seat_of[parts[2]]
    try:
        cards = parse_cards(parts[3])
    except ValueError as exc:
        raise PHHError(f"{where}: {exc}") from None
    s = hand.seat(seat)
    for c in cards:
        # Third street: two down cards, then the door card (RRoP 8.0); then the street's own way.
        down_needed = hand.needs(s)[0]
        face_up = down_needed == 0 if hand.street == 0 else STREET_DEAL[hand.street][1] > 0
        _before_card(hand, feed, where, note)
        note = ()
        feed(CardDealt(seat, c, face_up), where)


def load_file(path: str, rules: str | HouseRules = "rrop") -> ImportedHand:
    with open(path, encoding="utf-8") as fh:
        return loads(fh.read(), rules)


# ------------------------------------------------------------------ export


def _toml_value(value: Any) -> str:
    if not isinstance(value, bool | int | str | list):
        raise TypeError(f"cannot write {value!r} to PHH")
    return toml_value(value, literal_strings=True)  # the one TOML writer; PHH's own quoting style


def actions_of(events: Iterable[Event]) -> list[str]:
    """The PHH action strings for a hand's events.

    Burns and reshuffles are not PHH actions.  Where the deal departs from a burn before each
    street's first card, the card's action carries a comment the import reads back:
    ``# studtable: no burn`` (no burn before the street's first card), ``# studtable: reshuffle``
    (the cards ran out and this is the first card from the reshuffled ones, RRoP stud 15),
    ``# studtable: reshuffle, burn`` (the dealer burned again), or these words combined.
    """
    events = list(events)
    start = events[0]
    assert isinstance(start, HandStarted)
    player = {entry.seat: f"p{i + 1}" for i, entry in enumerate(start.seats)}
    replay = Hand(start)
    out: list[str] = []
    pending: dict[int, str] = {}
    street = 0
    note: list[str] = []  # what the next card's action must say about the deal before it

    def flush() -> None:
        out.extend(f"d dh {player[seat]} {cards}" for seat, cards in pending.items())
        pending.clear()

    def noted(action: str) -> None:
        flush()
        out.append(f"{action} # {NOTE_PREFIX} {', '.join(note)}")
        note.clear()

    for e in events[1:]:
        if isinstance(e, CardDealt | CommonCardDealt):
            if replay.street != street:
                flush()
                street = replay.street
            if replay.street > 0 and not replay.burned_this_street and replay.next_deal() == ("burn", None, False):
                note.insert(0, "no burn")
            replay.apply(e)
            if isinstance(e, CommonCardDealt):
                if note:
                    noted(f"d db {e.card}")
                else:
                    flush()
                    out.append(f"d db {e.card}")
            elif note:
                noted(f"d dh {player[e.seat]} {e.card}")
            else:
                pending[e.seat] = pending.get(e.seat, "") + str(e.card)
            continue
        amount = e.amount if isinstance(e, PlayerAction) else None
        if isinstance(e, PlayerAction) and amount is None and e.action in ("complete", "bet", "raise"):
            # Entered without an amount (the one the engine offers): PHH writes the amount.
            opts = replay.options()
            offered = [o.amount for o in (opts.options if opts else ()) if o.action == e.action]
            amount = offered[0] if offered else None
        replay.apply(e)
        if isinstance(e, DeckReshuffled):
            note.append("reshuffle")
            continue
        if isinstance(e, CardBurned):
            if note:
                note.append("burn")  # the burn after a reshuffle
            continue
        flush()
        if isinstance(e, PlayerAction):
            p = player[e.seat]
            if e.action == "fold":
                out.append(f"{p} f")
            elif e.action == "bring_in":
                out.append(f"{p} pb")
            elif e.action in ("check", "call"):
                out.append(f"{p} cc")
            else:
                out.append(f"{p} cbr {amount}")
        elif isinstance(e, CardsShown):
            # PokerKit reads the shown cards as the whole hand, so write all of them in deal order.
            shown = replay.seat(e.seat).all_cards
            out.append(f"{player[e.seat]} sm {''.join(str(c) for c in shown)}")
        elif isinstance(e, HandMucked):
            out.append(f"{player[e.seat]} sm -")
    flush()
    return out


def dumps(hand: Hand) -> str:
    """Write a hand (finished or not) as PHH."""
    start = hand.start
    cfg = hand.config
    n = len(start.seats)
    lines = [
        f"variant = {_toml_value(cfg.variant.value)}",
        "ante_trimming_status = false",
        f"antes = {_toml_value([cfg.ante] * n)}",
        f"bring_in = {cfg.bring_in}",
        f"small_bet = {cfg.small_bet}",
        f"big_bet = {cfg.big_bet}",
        f"starting_stacks = {_toml_value([s.stack for s in start.seats])}",
        f"actions = {_toml_value(actions_of(hand.events))}",
        f"hand = {start.hand_id}",
        f"seats = {_toml_value([s.seat for s in start.seats])}",
        f"players = {_toml_value([s.name for s in start.seats])}",
    ]
    if hand.is_over:
        lines.append(f"finishing_stacks = {_toml_value(hand.finishing_stacks())}")
    lines.append(f"_studtable_rules = {_toml_value(cfg.rules.name)}")
    if any(isinstance(e, DeckReshuffled) for e in hand.events):
        # RRoP stud 15: the deck ran out on seventh street (the action comments say where).
        lines.append("_studtable_reshuffled = true")
    return "\n".join(lines) + "\n"
