"""The hand state machine: who acts, what it costs, what it refuses, what it announces."""

from __future__ import annotations

import json
import random

import pytest

from engine.cards import UNKNOWN, Card, parse_cards
from engine.events import (
    CardBurned,
    CardDealt,
    CardsShown,
    CommonCardDealt,
    HandMucked,
    HandStarted,
    PlayerAction,
    event_from_json,
)
from engine.hand import Hand, IllegalAction, Phase
from engine.rules import Variant
from engine.simulate import SimulatedDealer, new_hand
from tests.engine.helpers import act, check_round, deal_street, deal_third, show_all, start


def test_stud_lowest_card_by_suit_brings_in() -> None:
    # RRoP stud 1: lowest up card by suit; clubs are lowest (3.7).
    hand = start([100] * 3)
    deal_third(hand, "AhKh3d", "QsJd3c", "8s7dAs")
    assert hand.to_act == 2
    assert hand.announcements[-1].text == "Trey of clubs brings it in"


def test_stud_ace_is_high_for_the_bring_in() -> None:
    # Stud high-low rule 4: an ace counts high for the bring-in.
    hand = start([100] * 2, variant=Variant.STUD8)
    deal_third(hand, "KhKd Ac".replace(" ", ""), "QsJd9c")
    assert hand.to_act == 2


def test_razz_highest_card_brings_in_ace_low() -> None:
    # Razz 3: the highest card by suit brings it in; aces are low.
    hand = start([100] * 3, variant=Variant.RAZZ)
    deal_third(hand, "2h3hKd", "4s5dKs", "6s7dAs")
    assert hand.to_act == 2
    assert "King of spades" in hand.announcements[-1].text


def test_high_board_acts_first_ties_by_position() -> None:
    hand = start([100] * 3)
    deal_third(hand, "2h3hKd", "4s5dKs", "6s7d2c")
    act(hand, "3 bring_in 2", "1 call", "2 call")
    deal_street(hand, {1: "Qd", 2: "Qs", 3: "9c"})
    # K-Q on seats 1 and 2: the tie goes to the player who received cards first.
    assert hand.to_act == 1
    assert hand.announcements[0].text == "Seat 1: King-queen is high" or any(
        a.text == "Seat 1: King-queen is high" for a in hand.announcements
    )


def test_razz_low_board_acts_first() -> None:
    hand = start([100] * 3, variant=Variant.RAZZ)
    deal_third(hand, "2h3hKd", "4s5d3s", "6s7dQc")
    act(hand, "1 bring_in 2", "2 call", "3 call")
    deal_street(hand, {1: "9d", 2: "4c", 3: "Js"})
    assert hand.to_act == 2  # 4-3 is the lowest board


def test_pairs_are_announced_and_razz_face_card_pairs_are_not() -> None:
    hand = start([100] * 3, variant=Variant.RAZZ)
    deal_third(hand, "2h3hKd", "4s5d3s", "6s7dQc")
    act(hand, "1 bring_in 2", "2 call", "3 call")
    deal_street(hand, {1: "Kc", 2: "3d", 3: "Qs"})
    texts = [a.text for a in hand.announcements]
    assert "Seat 2 pairs treys" in texts
    assert not any("Seat 1 pairs" in t or "Seat 3 pairs" in t for t in texts)


def test_raises_are_announced() -> None:
    hand = start([100] * 4)
    deal_third(hand, "AhKh2c", "QsQd9d", "JsJd9s", "TsTdKs")
    act(hand, "1 bring_in 2", "2 complete 5", "3 raise 10", "4 raise 15")
    texts = [a.text for a in hand.announcements]
    assert "Seat 2 completes to 5" in texts
    assert "Raise: seat 3 to 10" in texts
    assert "Three bets: seat 4 to 15" in texts


def test_refused_input_changes_nothing_and_names_the_rule() -> None:
    hand = start([100] * 3)
    deal_third(hand, "AhKh2c", "QsJd8c", "8s7d9c")
    before = hand.secret_state()
    with pytest.raises(IllegalAction) as err:
        act(hand, "2 call")  # seat 1 must bring it in first
    assert "out of turn" in str(err.value)
    with pytest.raises(IllegalAction) as err:
        act(hand, "1 fold")
    assert "forced bring-in" in err.value.rule
    with pytest.raises(IllegalAction, match="cannot bet"):
        act(hand, "1 bet 5")
    with pytest.raises(IllegalAction, match="the amount is 5"):
        act(hand, "1 complete 7")
    with pytest.raises(IllegalAction, match="not accepted while the hand is betting"):
        hand.apply(CardDealt(1, Card.parse("5h"), True))
    assert hand.secret_state() == before
    act(hand, "1 bring_in 2")
    assert hand.to_act == 2


def test_fold_without_a_wager_is_refused() -> None:
    # RRoP stud 7: folding with no wager is not an option the engine offers.
    hand = start([100] * 2)
    deal_third(hand, "AhKh2c", "QsJd8c")
    act(hand, "1 bring_in 2", "2 call")
    deal_street(hand, {1: "3d", 2: "4d"})
    with pytest.raises(IllegalAction) as err:
        act(hand, "2 fold")
    assert "RRoP stud 7" in err.value.rule


def test_dealing_checks_what_each_seat_is_due() -> None:
    hand = start([100] * 2)
    hand.apply(CardDealt(1, Card.parse("Ah"), False))
    hand.apply(CardDealt(1, Card.parse("Kh"), False))
    before = hand.secret_state()
    with pytest.raises(IllegalAction, match="dealt up, not down"):
        hand.apply(CardDealt(1, Card.parse("Qh"), False))
    with pytest.raises(IllegalAction, match="not in this hand"):
        hand.apply(CardDealt(5, Card.parse("2c"), False))
    assert hand.secret_state() == before
    hand.apply(CardDealt(1, Card.parse("Qh"), True))
    # RRoP 3.4: the twin of a card in plain sight is refused (a down card's twin is not: the
    # refusal would tell which cards are down; tests/engine/test_floor_oracle.py).
    before = hand.secret_state()
    with pytest.raises(IllegalAction, match="already dealt"):
        hand.apply(CardDealt(2, Card.parse("Qh"), False))
    assert hand.secret_state() == before
    with pytest.raises(IllegalAction, match="already has its cards"):
        hand.apply(CardDealt(1, Card.parse("Jh"), True))


def test_expected_deal_follows_dealing_order() -> None:
    hand = start([100] * 3)
    slots = hand.expected_deal()
    assert slots == [("card", 1, False), ("card", 2, False), ("card", 3, False)] * 2 + [
        ("card", 1, True),
        ("card", 2, True),
        ("card", 3, True),
    ]
    deal_third(hand, "AhKh2c", "QsJd8c", "8s7d9c")
    act(hand, "1 bring_in 2", "2 call", "3 call")
    assert hand.expected_deal()[0] == ("burn", None, False)
    hand.apply(CardBurned(Card.parse("5s")))
    assert hand.expected_deal() == [("card", 1, True), ("card", 2, True), ("card", 3, True)]
    with pytest.raises(IllegalAction, match="already burned"):
        hand.apply(CardBurned(Card.parse("5d")))


def test_unknown_down_cards_run_to_showdown() -> None:
    # A camera-only table: nobody knows the down cards until they are shown.
    hand = start([100] * 2)
    for _ in range(2):
        for seat in (1, 2):
            hand.apply(CardDealt(seat, UNKNOWN, False))
    hand.apply(CardDealt(1, Card.parse("2c"), True))
    hand.apply(CardDealt(2, Card.parse("Kd"), True))
    act(hand, "1 bring_in 2", "2 call")
    for c1, c2 in (("3c", "Kh"), ("4c", "9s"), ("5c", "9h")):
        deal_street(hand, {1: c1, 2: c2})
        check_round(hand)
    hand.apply(CardDealt(1, UNKNOWN, False))
    hand.apply(CardDealt(2, UNKNOWN, False))
    check_round(hand)
    assert hand.phase is Phase.SHOWDOWN
    first = hand.to_act
    assert first == 2  # all checked: the first to act shows first (RRoP 3.6)
    with pytest.raises(IllegalAction, match="identified"):
        hand.apply(CardsShown(2, (UNKNOWN, UNKNOWN, UNKNOWN)))
    hand.apply(CardsShown(2, parse_cards("KsKc2d")))  # four kings
    with pytest.raises(IllegalAction, match="already elsewhere"):
        hand.apply(CardsShown(1, parse_cards("Kc6c7c")))
    hand.apply(CardsShown(1, parse_cards("6c7cAh")))  # straight flush 3-7 of clubs
    assert hand.is_over
    assert hand.seat(1).stack == 100 + 3
    assert [a.hand for a in hand.awards] == ["seven-high straight flush"]


def test_a_card_shown_must_match_the_card_dealt() -> None:
    hand = start([100] * 2)
    deal_third(hand, "AhKh2c", "QsJd8c")
    act(hand, "1 bring_in 2", "2 call")
    for c1, c2 in (("3c", "Kd"), ("4c", "9s"), ("5c", "9h"), ("6d", "7s")):
        deal_street(hand, {1: c1, 2: c2})
        check_round(hand)
    seat = hand.to_act
    assert seat is not None
    with pytest.raises(IllegalAction, match="cards speak"):
        hand.apply(CardsShown(seat, parse_cards("2s3s4s")))


def test_muck_at_showdown_concedes() -> None:
    hand = start([100] * 2)
    deal_third(hand, "AhKh2c", "QsJd8c")
    act(hand, "1 bring_in 2", "2 complete 5", "1 call")
    for c1, c2 in (("3c", "Kd"), ("4c", "9s"), ("5c", "9h"), ("6d", "7s")):
        deal_street(hand, {1: c1, 2: c2})
        check_round(hand)
    first = hand.to_act
    assert first is not None
    hand.apply(CardsShown(first, tuple(hand.seat(first).down)))
    other = hand.to_act
    assert other is not None and other != first
    hand.apply(HandMucked(other))
    assert hand.is_over
    assert hand.seat(first).stack == 100 + 6


def test_everyone_folds_to_one_player() -> None:
    hand = start([100] * 3)
    deal_third(hand, "AhKh2c", "QsJd8c", "8s7d9c")
    act(hand, "1 bring_in 2", "2 complete 5", "3 fold", "1 fold")
    assert hand.is_over
    assert [s.stack for s in hand.seats] == [97, 104, 99]  # antes 3 + bring-in 2 + own 5 back
    with pytest.raises(IllegalAction, match="over"):
        act(hand, "2 check")


def test_eight_players_to_seventh_street_get_a_common_card() -> None:
    # RRoP stud 15: not enough cards for everyone: one common card plays in every hand.
    rng = random.Random(7)
    deck = [c for c in parse_cards("".join(f"{r}{s}" for r in "23456789TJQKA" for s in "cdhs"))]
    rng.shuffle(deck)
    hand = start([1000] * 8)
    while hand.phase is Phase.DEALING and hand.street < 4:
        kind, seat, up = hand.expected_deal()[0]
        if kind == "burn":
            hand.apply(CardBurned(deck.pop()))
            continue
        assert seat is not None
        hand.apply(CardDealt(seat, deck.pop(), up))
        while hand.phase is Phase.BETTING:
            opts = hand.options()
            assert opts is not None
            o = opts.find("bring_in") or opts.find("check") or opts.find("call")
            assert o is not None
            hand.apply(PlayerAction(opts.seat, o.action, o.amount))
    assert hand.street == 4 and len(deck) == 52 - 48 - 3
    with pytest.raises(IllegalAction, match="deal one common card"):
        hand.apply(CardDealt(1, deck[0], False))
    hand.apply(CommonCardDealt(deck.pop()))
    assert hand.phase is Phase.BETTING
    assert hand.common and any(a.kind == "common_card" for a in hand.announcements)


def test_events_round_trip_through_json_and_replay() -> None:
    rng = random.Random(11)
    for variant in ("F7S", "F7S/8", "FR"):
        hand = new_hand(variant, 6, rng)
        dealer = SimulatedDealer(hand, rng)
        while (event := dealer.next_event()) is not None:
            dealer.apply(event)
        wire = json.dumps([e.to_json() for e in hand.events])
        events = [event_from_json(d) for d in json.loads(wire)]
        assert events == hand.events
        rebuilt = Hand.replay(events)
        assert rebuilt == hand
        assert rebuilt.secret_state() == hand.secret_state()


def test_malformed_events_are_refused_with_the_field_named() -> None:
    from engine.events import EventError

    with pytest.raises(EventError, match="unknown event type"):
        event_from_json({"type": "teleport"})
    with pytest.raises(EventError, match="face_up"):
        event_from_json({"type": "card_dealt", "seat": 1, "card": "Ah", "face_up": "yes"})
    with pytest.raises(EventError, match="card"):
        event_from_json({"type": "card_dealt", "seat": 1, "card": "1x", "face_up": True})
    with pytest.raises(EventError, match="action"):
        event_from_json({"type": "player_action", "seat": 1, "action": "limp"})
    with pytest.raises(EventError, match="missing field 'seat'"):
        event_from_json({"type": "hand_mucked"})


def test_hand_needs_two_to_eight_players() -> None:
    from engine.events import SeatEntry
    from engine.rules import GameConfig

    cfg = GameConfig(Variant.STUD, 1, 2, 5, 10)
    with pytest.raises(IllegalAction, match="2 to 8"):
        Hand(HandStarted(1, cfg, (SeatEntry(1, "a", 100),)))
    with pytest.raises(IllegalAction, match="twice"):
        Hand(HandStarted(1, cfg, (SeatEntry(1, "a", 100), SeatEntry(1, "b", 100))))


def test_show_all_helper_used_by_other_tests_settles() -> None:
    hand = start([100] * 2)
    deal_third(hand, "AhKh2c", "QsJd8c")
    act(hand, "1 bring_in 2", "2 call")
    for c1, c2 in (("3c", "Kd"), ("4c", "9s"), ("5c", "9h"), ("6d", "7s")):
        deal_street(hand, {1: c1, 2: c2})
        check_round(hand)
    show_all(hand)
    assert hand.is_over and sum(s.stack for s in hand.seats) == 200
