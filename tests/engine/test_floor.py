"""Every ruling is ordinary hand events: after every input of every scenario the hand
rebuilt from its own log (also through JSON) equals the live hand, chips are conserved,
and a refused input changes nothing."""

from __future__ import annotations

import copy
from pathlib import Path

import pytest

from engine.cards import Card, parse_cards
from engine.events import (
    BringInWithdrawn,
    DealCorrected,
    ExtraCardReturned,
    FinalCardKept,
    PlayerAction,
    UpCardCorrected,
    event_from_json,
)
from engine.floor import Floor, FloorError, FloorOutputs
from engine.hand import TRANSITIONS, Hand, IllegalAction, Phase, Street
from engine.inputs import Ruling
from engine.scenario import ScenarioError, build_floor, load, step_inputs

ROOT = Path(__file__).resolve().parents[2]
SCENARIOS = sorted((ROOT / "tests" / "scenarios").glob("*.toml"))


def _check_hand(hand: Hand, total: int) -> None:
    assert Hand.replay(hand.events) == hand
    rebuilt = Hand(hand.events[0])  # type: ignore[arg-type]
    for event in hand.events[1:]:
        phase = rebuilt.phase
        rebuilt.apply(event)
        # Rulings too change phases only along the hand's transitions (engine.hand.core.TRANSITIONS).
        assert rebuilt.phase is phase or (phase, rebuilt.phase) in TRANSITIONS, (event, phase, rebuilt.phase)
    wire = [e.to_json() for e in hand.events]
    assert Hand.replay([event_from_json(d) for d in wire]) == hand
    if not hand.voided:
        assert sum(s.stack + s.reserved for s in hand.seats) + hand.pot_total == total


@pytest.mark.parametrize("path", SCENARIOS, ids=lambda p: p.stem)
def test_rulings_replay_exactly_and_conserve_chips(path: Path) -> None:
    data = load(path)
    floor, _ = build_floor(data["table"])
    for step in data["steps"]:
        try:
            inputs = step_inputs(step, floor)
        except ScenarioError:
            continue
        for inp in inputs:
            hand = floor.table.hand
            before = hand.secret_state() if hand is not None else None
            whole = copy.deepcopy(floor.state())
            try:
                floor.handle(inp)
            except FloorError:
                # Refused: nothing changed, the hand nor the floor's own bookkeeping.
                if hand is not None:
                    assert hand.secret_state() == before
                assert floor.state() == whole
                break
            hand = floor.table.hand
            if hand is not None:
                _check_hand(hand, sum(s.starting_stack for s in hand.seats))


def test_new_ruling_events_are_refused_where_they_do_not_apply() -> None:
    floor, _ = build_floor(
        {
            "variant": "F7S", "ante": 1, "bring_in": 2, "small_bet": 5, "big_bet": 10,
            "seats": [{"seat": 1, "stack": 100}, {"seat": 2, "stack": 100}],
        }
    )
    for code in ["As", "Ks", "Ah", "Kh", "2c", "9d"]:
        floor.handle({"kind": "shoe_card", "card": code})
    hand = floor.table.hand
    assert hand is not None
    for event, why in (
        (FinalCardKept(1, Card.parse("Qd")), "sixth-street"),
        (DealCorrected(0), "fourth to seventh"),
        (BringInWithdrawn(1), "only action"),
        (UpCardCorrected(1, Card.parse("9d")), "already face up"),  # seat 2's door card
    ):
        before = hand.secret_state()
        with pytest.raises(IllegalAction, match=why):
            hand.apply(event)
        assert hand.secret_state() == before
    hand.apply(PlayerAction(1, "bring_in", 2))
    before = hand.secret_state()
    with pytest.raises(IllegalAction, match="before the first betting round"):
        hand.apply(ExtraCardReturned(Card.parse("Qd")))
    assert hand.secret_state() == before



def _two_seat_floor(shoe: bool = True):  # type: ignore[no-untyped-def]
    floor, _ = build_floor(
        {
            "variant": "F7S", "ante": 1, "bring_in": 2, "small_bet": 5, "big_bet": 10, "shoe": shoe,
            "seats": [{"seat": 1, "stack": 100}, {"seat": 2, "stack": 100}],
        }
    )
    return floor


def _play_short_hand(floor) -> None:  # type: ignore[no-untyped-def]
    """Hand 1: seat 1 shows the 7h up, seat 2 the 9d; seat 1 brings it in, seat 2 folds."""
    for code in ["As", "Ks", "Ah", "Kh", "7h", "9d"]:
        floor.handle({"kind": "shoe_card", "card": code})
    floor.handle({"kind": "action", "seat": 1, "action": "bring_in", "amount": 2})
    floor.handle({"kind": "action", "seat": 2, "action": "fold"})
    assert floor.table.hand.is_over
    floor.handle({"kind": "table", "op": "start_hand"})


OLD_PICTURE = {"kind": "camera", "seats": {"1": {"up": ["7h"], "down": 2}, "2": {"up": ["9d"], "down": 2}},
               "irregular": [{"kind": "off_felt", "seat": 2, "card": "Ah"}]}


def test_the_last_hands_picture_is_not_taken_for_this_hands_cards() -> None:
    floor = _two_seat_floor()
    _play_short_hand(floor)
    for code in ["7h", "Ks", "9d"]:  # hand 2: the same cards, reshuffled, dealt down
        floor.handle({"kind": "shoe_card", "card": code})
    # The camera re-sends its picture of hand 1 (the dealer has not pushed the cards in yet): the
    # 7h and 9d it shows face up are hand 1's, not exposed hole cards, and the Ah on the rail is not
    # a new card off the table.
    out = floor.handle(OLD_PICTURE)
    assert out.opened == [] and floor.prompts == {}
    # Hand 2's 7h really is turned up at seat 1: that is an exposed hole card.
    out = floor.handle({"kind": "camera", "seats": {"1": {"up": ["7h"], "down": 1}}, "irregular": []})
    assert [p.rule.id for p in out.opened] == ["stud.exposed-holecard"]


def test_on_a_camera_only_table_the_old_picture_is_not_dealt_again() -> None:
    floor = _two_seat_floor()
    _play_short_hand(floor)
    floor.handle({"kind": "source", "device": "shoe-1", "status": "offline"})
    floor.handle({"kind": "ruling", "prompt": next(iter(floor.prompts)), "option": "confirm"})
    hand = floor.table.hand
    assert hand is not None and hand.hand_id == 2 and not floor.shoe_active
    floor.handle(OLD_PICTURE)
    assert [len(s.cards) for s in hand.seats] == [0, 0]
    # Seat 1's cards are pushed in and its first new hole card arrives; seat 2 still shows hand 1.
    floor.handle({"kind": "camera", "seats": {"1": {"up": [], "down": 1}, "2": {"up": ["9d"], "down": 2}}})
    assert [len(s.cards) for s in hand.seats] == [1, 0]


def test_a_malformed_camera_view_is_refused_and_changes_nothing() -> None:
    floor = _two_seat_floor()
    floor.handle({"kind": "shoe_card", "card": "As"})
    before = floor.table.hand.secret_state()  # type: ignore[union-attr]
    for bad, why in (({"1": {"up": ["Zz"], "down": 0}}, r"field 'seats\.1\.up\[0\]' must be a card code"),
                     ({"x": {"up": [], "down": 0}}, r"field 'seats\.x' must be keyed by a seat number"),
                     ({"1": ["Ah"]}, r"field 'seats\.1' must be an object")):
        with pytest.raises(FloorError, match=why):
            floor.handle({"kind": "camera", "seats": bad})
        assert floor.table.hand.secret_state() == before  # type: ignore[union-attr]


# ---------------------------------------------------------------------------- all or nothing


def _to_seventh_street(floor) -> None:  # type: ignore[no-untyped-def]
    """Deal and check a two-seat hand to seventh street, burn included, before any seventh card."""
    deck = iter(parse_cards("As Ks Ah Kh 7h 9d 2c 3c 4c 2d 3d 4d 2h 3h 4h 2s 3s 4s 5c"))
    hand = floor.table.hand
    while not (hand.street == Street.SEVENTH and hand.burned_this_street):
        if hand.phase is Phase.BETTING:
            opts = hand.options()
            o = opts.find("check") or opts.find("call") or opts.find("bring_in")
            floor.handle({"kind": "action", "seat": opts.seat, "action": o.action, "amount": o.amount})
        else:
            floor.handle({"kind": "shoe_card", "card": str(next(deck))})


def test_a_ruling_refused_half_way_leaves_hand_and_floor_as_they_were() -> None:
    """The last-card-up ruling turns seat 1's card up and then deals the card keyed for it; the
    card keyed is seat 2's door card (a duplicate), so the second step is refused: the first
    (HoleCardExposed) must not stay applied, and the prompt stays open with its number."""
    floor = _two_seat_floor()
    _to_seventh_street(floor)
    out = floor.handle({"kind": "manual_card", "seat": 1, "card": "9d", "face_up": True})
    assert [p.rule.id for p in out.opened] == ["stud.last-card-up"]
    before = copy.deepcopy(floor.state())
    n_events = len(floor.table.hand.events)
    with pytest.raises(FloorError) as refused:
        floor.handle({"kind": "ruling", "prompt": out.opened[0].id, "option": "confirm"})
    assert floor.state() == before
    assert len(floor.table.hand.events) == n_events and not floor.table.hand.seat(1).last_up
    err = refused.value
    assert err.rule == "RRoP 3.4 duplicate card" and err.phase == "dealing"
    assert err.input == Ruling(out.opened[0].id, "confirm")


def test_refused_inputs_of_every_kind_leave_the_whole_floor_state_unchanged() -> None:
    floor = _two_seat_floor()
    for code in ["As", "Ks", "Ah", "Kh", "7h", "9d"]:
        floor.handle({"kind": "shoe_card", "card": code})
    floor.handle({"kind": "report", "report": "absent", "seat": 2})  # a prompt open, blocking actions
    floor.handle({"kind": "shoe_card", "card": "2c"})  # drawn during the betting: a prompt blocking deals
    floor.handle({"kind": "shoe_card", "card": "3c"})  # held while that one is open
    assert floor.held and len(floor.prompts) == 2
    refused = [
        {"kind": "table", "op": "seat", "seat": 3, "name": "Cy", "amount": 200},  # only between hands
        {"kind": "table", "op": "start_hand"},  # a hand is live, a prompt is open
        {"kind": "table", "op": "seat", "seat": 9, "name": "Cy", "amount": 200},  # no seat 9 at 8 seats
        {"kind": "table", "op": "seat", "seat": 3, "name": "x" * 41, "amount": 200},
        {"kind": "table", "op": "seat", "seat": 3, "name": "x" * 200_000, "amount": 200},
        {"kind": "table", "op": "seat", "seat": 3, "name": "Cy", "amount": -5},
        {"kind": "table", "op": "add_chips", "seat": 1, "amount": 10**15},
        {"kind": "table", "op": "dance", "seat": 1},
        {"kind": "action", "seat": 1, "action": "bring_in", "amount": 2},  # the prompt blocks actions
        {"kind": "action", "seat": 0, "action": "fold"},
        {"kind": "action", "seat": 1, "action": "raise", "amount": -1},
        {"kind": "action", "seat": "1", "action": "fold"},
        {"kind": "action", "seat": 1, "action": "fold", "extra": True},
        {"kind": "ruling", "prompt": "p99", "option": "confirm"},
        {"kind": "ruling", "prompt": "p1", "option": "maybe"},
        {"kind": "report", "report": "no-such-report"},
        {"kind": "report", "report": "absent", "seat": 11},
        {"kind": "show", "seat": 1, "cards": ["As", "Zz"]},
        {"kind": "source", "device": "shoe-1", "status": "sideways"},
        {"kind": "camera", "seats": {"12": {"up": [], "down": 1}}},
        {"kind": "launch"},
        ["not", "an", "object"],
    ]
    for inp in refused:
        before = copy.deepcopy(floor.state())
        with pytest.raises(FloorError):
            floor.handle(inp)  # type: ignore[arg-type]
        assert floor.state() == before, inp


def test_a_refused_common_card_ruling_keeps_its_prompt_where_it_was() -> None:
    floor = _two_seat_floor()
    _to_seventh_street(floor)
    prompt = floor._open("stud.out-of-cards", (), FloorOutputs(), stub=1, waiting=2, pool=40)
    floor._open("source.gap", (), FloorOutputs(), device="cam-1", missing=1)
    before = copy.deepcopy(floor.state())
    with pytest.raises(FloorError, match="no common card") as refused:
        floor.handle({"kind": "ruling", "prompt": prompt.id, "option": "common"})
    assert floor.state() == before and list(floor.prompts) == [prompt.id, "p2"]
    assert refused.value.rule == "stud.out-of-cards"


def _camera_only_floor() -> Floor:
    from engine.scenario import build_floor

    floor, _ = build_floor({"variant": "F7S", "ante": 1, "bring_in": 2, "small_bet": 5, "big_bet": 10,
                            "seats": [{"seat": 1, "stack": 200}, {"seat": 2, "stack": 200}, {"seat": 3, "stack": 200}]})
    out = floor.handle({"kind": "source", "device": "shoe", "status": "absent"})
    assert not out.opened and not floor.shoe_active  # a table without a shoe: no "offline" prompt
    return floor


def test_a_camera_only_table_takes_several_cards_of_one_view_in_the_deals_order() -> None:
    """The dealer is quicker than the camera's still frames: one view may show a whole street.
    The cards are taken as dealt (two rounds down, then the door cards, from the dealer's left)."""
    floor = _camera_only_floor()
    hand = floor.table.hand
    floor.handle({"kind": "camera", "seats": {"1": {"up": [], "down": 1}}})
    assert [len(s.cards) for s in hand.seats] == [1, 0, 0]
    floor.handle({"kind": "camera", "seats": {"1": {"up": ["2c"], "down": 2}, "2": {"up": ["9d"], "down": 2},
                                              "3": {"up": ["Kh"], "down": 2}}})
    assert hand.phase.value == "betting"
    assert [[(str(c), up) for c, up in s.cards] for s in hand.seats] == [
        [("??", False), ("??", False), ("2c", True)], [("??", False), ("??", False), ("9d", True)],
        [("??", False), ("??", False), ("Kh", True)]]
    assert [type(e).__name__ for e in hand.events].count("CardDealt") == 9


def test_a_camera_only_table_deals_a_seat_the_same_card_as_last_hand_once_the_seat_was_cleared() -> None:
    floor = _camera_only_floor()
    first = {"1": {"up": ["2c"], "down": 2}, "2": {"up": ["9d"], "down": 2}, "3": {"up": ["Kh"], "down": 2}}
    floor.handle({"kind": "camera", "seats": first})
    hand = floor.table.hand
    for _ in range(2):  # the 2c brings it in; the others fold
        opts = hand.options()
        o = opts.find("fold") or opts.find("bring_in")
        floor.handle({"kind": "action", "seat": opts.seat, "action": o.action, "amount": o.amount})
    while not hand.is_over:
        opts = hand.options()
        o = opts.find("fold") or opts.find("check")
        floor.handle({"kind": "action", "seat": opts.seat, "action": o.action, "amount": o.amount})
    floor.handle({"kind": "table", "op": "start_hand"})
    hand = floor.table.hand
    assert hand.hand_id == 2
    # The camera still shows the last hand: not dealt again.
    floor.handle({"kind": "camera", "seats": first})
    assert sum(len(s.cards) for s in hand.seats) == 0
    # The felt is cleared (the view lists no seat), then seat 1 gets the 2c again as its door card.
    floor.handle({"kind": "camera", "seats": {}})
    floor.handle({"kind": "camera", "seats": {"1": {"up": ["2c"], "down": 2}, "2": {"up": ["Qs"], "down": 2},
                                              "3": {"up": ["4d"], "down": 2}}})
    assert [str(c) for c, up in hand.seat(1).cards if up] == ["2c"] and hand.phase.value == "betting"


def test_between_hands_the_public_seats_are_the_tables_not_the_last_hands() -> None:
    """RRoP 3.1 between hands: a player who left shows as gone and chips added count at once (the
    Seats page offered Leave again for a player already gone, and showed the old stack, until the
    next deal).  The last hand's cards stay in the state until then."""
    from engine.public import public_state
    from engine.scenario import build_floor

    floor, _ = build_floor({"variant": "F7S", "ante": 1, "bring_in": 2, "small_bet": 5, "big_bet": 10,
                            "seats": [{"seat": 1, "name": "Ann", "stack": 200}, {"seat": 2, "name": "Bob", "stack": 200},
                                      {"seat": 3, "name": "Cy", "stack": 200}]})
    hand = floor.table.hand
    for code in ("As", "Ks", "Qs", "Ah", "Kh", "Qh", "2c", "9d", "8d"):
        floor.handle({"kind": "shoe_card", "card": code})
    while not hand.is_over:
        opts = hand.options()
        o = opts.find("fold") or opts.find("bring_in")
        floor.handle({"kind": "action", "seat": opts.seat, "action": o.action, "amount": o.amount})
    floor.handle({"kind": "table", "op": "leave", "seat": 3})
    floor.handle({"kind": "table", "op": "add_chips", "seat": 2, "amount": 100})
    seats = {s["seat"]: s for s in public_state(floor.table, None, "t")["seats"]}
    assert seats[3]["name"] == "" and seats[3]["stack"] == 0 and len(seats[3]["cards"]) == 3
    assert seats[2]["name"] == "Bob" and seats[2]["stack"] == floor.table.seats[2].stack
    assert seats[2]["stack"] == hand.seat(2).stack + 100
