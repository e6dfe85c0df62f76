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


def _eight_without_a_shoe(fold_on_fourth: int = 0, shoe: bool = False, fold_street: Street = Street.FOURTH) -> Floor:
    """Eight seats at a table with no shoe (status absent); the dealer keys every card (down cards
    unknown, up cards by face) where ``next_deal`` says, all check or call to seventh street; the
    first ``fold_on_fourth`` players facing seat 1's fourth-street bet fold."""
    floor, _ = build_floor({"variant": "F7S", "ante": 1, "bring_in": 2, "small_bet": 5, "big_bet": 10,
                            "seats": [{"seat": n, "stack": 200} for n in range(1, 9)]})
    if not shoe:
        out = floor.handle({"kind": "source", "device": "shoe", "status": "absent"})
        assert not out.opened and not floor.shoe_active
    deck = iter(str(c) for c in parse_cards(" ".join(
        f"{r}{s}" for s in "cdhs" for r in "23456789TJQKA")))
    hand = floor.table.hand
    folds = fold_on_fourth
    while not (hand.street == Street.SEVENTH and hand.phase is Phase.DEALING) and not floor.prompts:
        if hand.phase is Phase.BETTING:
            opts = hand.options()
            if hand.street == fold_street and folds and (opts.find("bet") or opts.find("complete")) and (
                    fold_street != Street.THIRD or hand.round.acted):
                o = opts.find("bet") or opts.find("complete")
            elif hand.street == fold_street and folds and opts.find("fold"):
                folds -= 1
                o = opts.find("fold")
            else:
                o = opts.find("check") or opts.find("call") or opts.find("bring_in")
            floor.handle({"kind": "action", "seat": opts.seat, "action": o.action, "amount": o.amount})
        elif shoe:
            floor.handle({"kind": "shoe_card", "card": next(deck)})
        else:
            [slot] = floor.next_deal()
            if slot[0] == "burn":  # the old code asked for a burn nobody can key
                floor.asked_for_burns = True  # type: ignore[attr-defined]
                slot = next(sl for sl in floor.table.hand.expected_deal() if sl[0] == "card")
            floor.handle({"kind": "manual_card", "seat": slot[1], "card": next(deck) if slot[2] else "??",
                          "face_up": slot[2]})
    return floor


def test_a_table_without_a_shoe_counts_the_burns_so_eight_players_run_out_of_cards() -> None:
    """RRoP stud 13/15 on a table with no shoe: nobody reports the burns, but the dealer makes them.
    Uncounted (the old code), 52 - 48 = 4 cards seemed left for eight players on seventh street, no
    prompt opened and the first seventh card was refused.  Counted: 52 - 48 - 3 burns = 1 card,
    the out-of-cards prompt opens; the pool (the last card and the burns) is 4 for 8 players, so
    the common card, keyed on the console, plays for everyone."""
    floor = _eight_without_a_shoe()
    hand = floor.table.hand
    assert not hasattr(floor, "asked_for_burns")  # the burns are the dealer's own: never asked for
    assert hand.street == Street.SEVENTH and len(hand.burns) == 3 and all(not c.known for c in hand.burns)
    assert hand.stub_size() == 1
    [prompt] = floor.prompts.values()
    assert prompt.rule.id == "stud.out-of-cards" and {o.id for o in prompt.options} == {"reshuffle", "common"}
    floor.handle({"kind": "ruling", "prompt": prompt.id, "option": "common"})
    assert floor.next_deal() == [("common", None, True)]
    with pytest.raises(FloorError):  # a seat's card is not what is due now
        floor.handle({"kind": "manual_card", "seat": 1, "card": "??", "face_up": False})
    floor.handle({"kind": "manual_card", "seat": None, "card": "As", "face_up": True, "common": True})
    assert [str(c) for c in hand.common] == ["As"] and hand.phase is Phase.BETTING
    assert hand.stub_size() == 0 and len(hand.burns) == 3  # one card left: no burn, it is the common card


def test_a_table_without_a_shoe_announces_the_common_card_before_any_seventh_card() -> None:
    """One player folded on fourth street: 3 cards left for 7 players, and with the 4 burns (the
    folded hand stays in the muck) only 6: RRoP stud 15's common card, announced before anyone
    gets a seventh card; the dealer burns one (counted) and the camera or console gives the card."""
    floor = _eight_without_a_shoe(fold_on_fourth=1)
    hand = floor.table.hand
    assert len(hand.live_seats) == 7 and hand.stub_size() == 3 and hand.reshuffle_pool() == 6
    [prompt] = floor.prompts.values()
    assert prompt.rule.id == "stud.out-of-cards" and [o.id for o in prompt.options] == ["common"]
    floor.handle({"kind": "ruling", "prompt": prompt.id, "option": "common"})
    floor.handle({"kind": "camera", "seats": {}, "irregular": [{"kind": "common", "seat": None, "card": "Ks"}]})
    assert [str(c) for c in hand.common] == ["Ks"] and hand.phase is Phase.BETTING
    assert len(hand.burns) == 4 and hand.stub_size() == 1  # burned, then turned up


def test_a_shoe_table_short_of_fresh_cards_gets_the_common_card_prompt_before_seventh_street() -> None:
    """The same seven players with a shoe: 3 cards left, 6 with the burns.  The old code opened
    no prompt until one card was left, so it burned one and then refused the next draw ("deal one
    common card") with nothing to rule on: the hand could not go on."""
    floor = _eight_without_a_shoe(fold_on_fourth=1, shoe=True)
    hand = floor.table.hand
    [prompt] = floor.prompts.values()
    assert prompt.rule.id == "stud.out-of-cards" and hand.stub_size() == 3
    floor.handle({"kind": "ruling", "prompt": prompt.id, "option": "common"})
    floor.handle({"kind": "shoe_card", "card": "Qs"})
    floor.handle({"kind": "shoe_card", "card": "Ks"})
    assert len(hand.burns) == 4 and [str(c) for c in hand.common] == ["Ks"] and hand.phase is Phase.BETTING


def test_a_common_card_keyed_before_the_shoe_burns_is_refused_and_changes_nothing() -> None:
    """RRoP stud 15: "The dealer burns a card and turns one card face up in the center".  At a shoe
    table the old code took a common card keyed on the console at once: the burn was lost and the
    shoe's real burn then came as a premature card.  Keyed after the burn, it is taken."""
    floor = _eight_without_a_shoe(fold_on_fourth=1, shoe=True)
    hand = floor.table.hand
    [prompt] = floor.prompts.values()
    floor.handle({"kind": "ruling", "prompt": prompt.id, "option": "common"})
    keyed = {"kind": "manual_card", "seat": None, "card": "As", "face_up": True, "common": True}
    with pytest.raises(FloorError, match="the burn comes first"):
        floor.handle(keyed)
    assert not hand.common and len(hand.burns) == 3 and hand.stub_size() == 3 and not floor.prompts
    floor.handle({"kind": "shoe_card", "card": "Qs"})  # the burn
    floor.handle(keyed)
    assert [str(c) for c in hand.common] == ["As"] and len(hand.burns) == 4 and hand.phase is Phase.BETTING
    assert not floor.prompts
    assert floor.hand_inputs[-1].text == "the common card keyed (seventh street)"  # no "seat 0"


def test_a_common_card_is_not_keyed_where_every_player_gets_a_fresh_card() -> None:
    """RRoP stud 15: one common card only "if there are not enough cards": with a fresh card for
    each of the seven (one folded on third street) a keyed common card is refused."""
    floor = _eight_without_a_shoe(fold_on_fourth=1, fold_street=Street.THIRD)
    hand = floor.table.hand
    with pytest.raises(FloorError, match="not the next card due"):
        floor.handle({"kind": "manual_card", "seat": None, "card": "As", "face_up": True, "common": True})
    assert not hand.common and len(hand.burns) == 3 and hand.stub_size() == 4


def test_a_table_without_a_shoe_reshuffles_its_unknown_burns_and_burns_again_only_if_they_allow() -> None:
    """One player folded on third street: seventh street has 4 cards for 7 players, 7 with the burns.
    The dealer burns (counted), deals two, and at the last card the prompt offers only the
    reshuffle (enough fresh cards: no common card); the four unknown burns go back with the last
    card: 5 cards for 5 players, so no burn again (RRoP stud 15) and each gets a fresh card."""
    floor = _eight_without_a_shoe(fold_on_fourth=1, fold_street=Street.THIRD)
    hand = floor.table.hand
    assert not floor.prompts and len(hand.live_seats) == 7 and hand.stub_size() == 4
    for _ in range(2):
        [slot] = floor.next_deal()
        floor.handle({"kind": "manual_card", "seat": slot[1], "card": "??", "face_up": False})
    assert len(hand.burns) == 4 and hand.stub_size() == 1
    [prompt] = floor.prompts.values()
    assert [o.id for o in prompt.options] == ["reshuffle"]
    floor.handle({"kind": "ruling", "prompt": prompt.id, "option": "reshuffle"})
    assert hand.stub_size() == 5 and hand.waiting_count() == 5
    for _ in range(5):
        [slot] = floor.next_deal()
        assert slot[0] == "card"
        floor.handle({"kind": "manual_card", "seat": slot[1], "card": "??", "face_up": False})
    assert len(hand.burns) == 4 and hand.stub_size() == 0 and hand.phase is Phase.BETTING
