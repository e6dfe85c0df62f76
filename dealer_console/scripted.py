"""A scripted hand of seven-card stud, as the public states a console would receive.

Why this exists: the console and the monitor are built and tested against the
states the engine publishes, before (and independently of) a running engine.
This module drives the real pure engine (``engine.table`` / ``engine.hand``)
through one fixed hand and projects every step with ``engine.public`` exactly
as the engine service does, so the recorded states are genuine, not mocked.
The test fixture (``tests/dealer_console/states.jsonl``) and the screenshot command
both come from here.  No I/O.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from engine.cards import Card
from engine.events import CardBurned, CardDealt, CardsShown, Event, PlayerAction, SeatTaken
from engine.hand import Phase
from engine.public import public_state
from engine.rules import GameConfig
from engine.table import Table

TABLE_ID = "t1"

PLAYERS = ((1, "Ava", 240), (2, "Ben", 180), (3, "Chen", 300), (5, "Dora", 150), (6, "Eli", 210), (7, "Fay", 260))

# Cards per seat in deal order: two down, four up, one down.
HOLE_AND_BOARD: dict[int, tuple[str, ...]] = {
    1: ("Ah", "Kd", "9s", "9h", "Qc", "4d", "8c"),
    2: ("7c", "7d", "2c", "Js", "5s", "Jh", "3h"),
    3: ("Qs", "Jd", "Kh", "Kc", "3s", "6d", "Tc"),
    5: ("8d", "8s", "Th", "4c", "9c", "2d", "6h"),
    6: ("5h", "6c", "Ad", "Ts", "7h", "Ac", "2s"),
    7: ("3c", "4h", "5d", "Qd", "6s", "Jc", "Td"),
}
BURNS = ("2h", "3d", "4s", "5c", "7s")

# Who does what on each street, in turn order; the engine rejects anything illegal.
ACTIONS: tuple[tuple[tuple[int, str, int | None], ...], ...] = (
    # third street: 2c brings it in
    ((2, "bring_in", 2), (3, "complete", 5), (5, "call", 5), (6, "call", 5), (7, "fold", None),
     (1, "call", 5), (2, "fold", None)),
    # fourth street: the pair of kings bets; seat 6 raises
    ((3, "bet", 5), (5, "call", 5), (6, "raise", 10), (1, "call", 10), (3, "call", 5), (5, "fold", None)),
    # fifth street
    ((3, "bet", 10), (6, "call", 10), (1, "call", 10)),
    # sixth street: seat 6 pairs aces and acts first
    ((6, "check", None), (1, "check", None), (3, "bet", 10), (6, "call", 10), (1, "fold", None)),
    # seventh street
    ((6, "check", None), (3, "bet", 10), (6, "call", 10)),
)


@dataclass
class Step:
    """One published state and what caused it (for names in tests and screenshots)."""

    label: str
    state: dict[str, Any]
    event: dict[str, Any] | None = None
    tags: set[str] = field(default_factory=set)


def config() -> GameConfig:
    return GameConfig.from_json({"variant": "F7S", "ante": 1, "bring_in": 2, "small_bet": 5, "big_bet": 10})


def _devices(shoe_online: bool = True) -> dict[str, Any]:
    return {
        "engine": {"role": "engine", "online": True, "last_seen_s": 0.2},
        "shoe": {"role": "bridge", "online": shoe_online, "last_seen_s": 0.8 if shoe_online else 42.0},
        "cam-1": {"role": "vision", "online": True, "last_seen_s": 0.1},
        "cam-2": {"role": "vision", "online": True, "last_seen_s": 0.1},
    }


def side_pot_actions() -> tuple[tuple[tuple[int, str, int | None], ...], ...]:
    """The same hand with Ava (seat 1) short: all in calling the raise on fourth street, so the
    later bets make a side pot between Chen and Eli."""
    return tuple(street if i < 2 else tuple(a for a in street if a[0] != 1) for i, street in enumerate(ACTIONS))


def events(actions: tuple[tuple[tuple[int, str, int | None], ...], ...] = ACTIONS,
           cards: dict[int, tuple[str, ...]] = HOLE_AND_BOARD) -> Iterator[tuple[str, Event]]:
    """The hand's inputs after the start, with a short label for each."""
    burns = iter(BURNS)
    seats = [s for s, _, _ in PLAYERS]
    folded: set[int] = set()
    for street, street_actions in enumerate(actions):
        yield "burn", CardBurned(Card.parse(next(burns)))
        idx = (0, 1, 2) if street == 0 else (street + 2,)
        for i in idx:
            for seat in seats:
                if seat in folded:
                    continue
                up = not (i < 2 or i == 6)
                yield f"deal seat {seat}", CardDealt(seat, Card.parse(cards[seat][i]), up)
        for seat, action, amount in street_actions:
            if action == "fold":
                folded.add(seat)
            yield f"seat {seat} {action}", PlayerAction(seat, action, amount)


def scripted_hand(table_id: str = TABLE_ID, *, side_pot: bool = False) -> list[Step]:
    """Every public state of the scripted hand, from seating to the pot awarded (``side_pot``:
    Ava short and all in on fourth street, so the pot is split into a main and a side pot)."""
    table = Table(config(), seat_count=8)
    for seat, name, stack in PLAYERS:
        table.apply(SeatTaken(seat, name, 16 if side_pot and seat == 1 else stack))
    steps: list[Step] = []

    def snap(label: str, event: Event | None, tags: set[str] | None = None) -> None:
        state = public_state(table, table.hand, table_id, extra={"devices": _devices()})
        steps.append(Step(label, state, event.to_json() if event else None, tags or set()))

    start = table.start_hand()
    table.apply(start)
    snap("hand started", start, {"start"})
    # Ava's second hole card a nine (trips): the short stack wins the main pot, Eli the side pot.
    cards = {**HOLE_AND_BOARD, 1: ("Ah", "9d", *HOLE_AND_BOARD[1][2:])} if side_pot else HOLE_AND_BOARD
    for label, event in events(side_pot_actions() if side_pot else ACTIONS, cards):
        table.apply(event)
        hand = table.hand
        assert hand is not None
        tags: set[str] = set()
        opts = hand.options()
        if opts is not None and any(o.action == "bring_in" for o in opts.options):
            tags.add("bring_in")
        snap(label, event, tags)
    hand = table.hand
    assert hand is not None
    while hand.phase is Phase.SHOWDOWN:
        showing = hand.to_act
        assert showing is not None
        shown = CardsShown(showing, tuple(hand.seat(showing).down))
        table.apply(shown)
        snap(f"seat {showing} shows", shown, {"showdown"})
    steps[-1].tags.add("complete")
    return steps


def hand_events() -> list[dict[str, Any]]:
    """The scripted hand's full event log as JSON (what the hand log keeps), for the history browser."""
    return [s.event for s in scripted_hand() if s.event is not None]


def exposed_card_prompt(state: dict[str, Any]) -> dict[str, Any]:
    """``state`` with an open irregularity prompt, exactly as the engine's Floor words it."""
    from engine.floor import Prompt
    from engine.irregularities import BY_ID

    rule = BY_ID["stud.exposed-holecard"]
    prompt = Prompt("p17", rule, (5,), rule.ruling.format(seat=5))
    out = dict(state)
    out["prompts"] = [prompt.to_json()]
    return out


def refusal_text() -> str:
    """The engine's own words refusing an action for a seat that is not to act (the bring-in is due)."""
    from engine.hand import IllegalAction

    table = Table(config(), seat_count=8)
    for seat, name, stack in PLAYERS:
        table.apply(SeatTaken(seat, name, stack))
    table.apply(table.start_hand())
    for _, event in events():
        table.apply(event)
        if isinstance(event, CardDealt) and event.seat == PLAYERS[-1][0] and event.face_up:
            break
    try:
        table.apply(PlayerAction(5, "call", 2))
    except IllegalAction as exc:
        return str(exc)
    return "seat 5 is not the player to act"
