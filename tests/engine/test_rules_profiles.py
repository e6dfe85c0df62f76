"""Where Robert's Rules (rrop) and the 2023 WSOP rules (wsop2023, PokerKit) differ,
each built from the seeds' own examples (001 stud rules 3, 4, 8; 000 stud 4; 002 3.5, 3.7)."""

from __future__ import annotations

import pytest

from engine.hand import IllegalAction, Phase
from engine.rules import Variant
from tests.engine.helpers import act, deal_street, deal_third, option_set, show_all, start

BOTH = ["rrop", "wsop2023"]


@pytest.mark.parametrize("rules", BOTH)
def test_15_30_completion_is_not_a_raise_then_three_raises(rules: str) -> None:
    # 001 stud 3: "In $15-$30 stud, the lowcard opens for $5. If the next player ... completes
    # the bet, up to three raises are then allowed."
    hand = start([1000] * 4, ante=3, bring_in=5, small=15, big=30, rules=rules)
    deal_third(hand, "AhKh2c", "QsQd9d", "JsJd9s", "TsTdKs")
    assert hand.to_act == 1
    assert option_set(hand) == {("bring_in", 5), ("complete", 15)}
    act(hand, "1 bring_in 5")
    assert option_set(hand) == {("fold", 0), ("call", 5), ("complete", 15)}
    act(hand, "2 complete 15", "3 raise 30", "4 raise 45", "1 raise 60")
    # The completion and three raises: capped with four players.
    assert option_set(hand) == {("fold", 0), ("call", 45)}
    with pytest.raises(IllegalAction, match="cannot raise"):
        act(hand, "2 raise 75")


@pytest.mark.parametrize(("rules", "uncapped"), [("rrop", True), ("wsop2023", False)])
def test_heads_up_raising(rules: str, uncapped: bool) -> None:
    # 002 3.5: unlimited raising heads-up (rrop); the cap holds heads-up under WSOP rules.
    hand = start([1000, 1000], ante=1, bring_in=2, small=5, big=10, rules=rules)
    deal_third(hand, "AhKh2c", "QsQd9d")
    act(hand, "1 bring_in 2", "2 complete 5", "1 raise 10", "2 raise 15", "1 raise 20")
    can_raise = ("raise", 25) in option_set(hand)
    assert can_raise is uncapped


def test_capped_round_stays_capped_when_heads_up() -> None:
    # 002 3.5: "Once the raising is capped ... it cannot be uncapped by a subsequent fold."
    hand = start([1000] * 3, rules="rrop")
    deal_third(hand, "AhKh2c", "QsQd9d", "JsJd9s")
    act(hand, "1 bring_in 2", "2 complete 5", "3 raise 10", "1 raise 15", "2 raise 20")
    act(hand, "3 fold")
    assert option_set(hand) == {("fold", 0), ("call", 5)}


def _fourth_street_with_open_pair(rules: str, variant: Variant = Variant.STUD):  # type: ignore[no-untyped-def]
    hand = start([1000] * 3, variant=variant, ante=1, bring_in=2, small=5, big=10, rules=rules)
    deal_third(hand, "AhKh9c", "QsJd2c", "3s4dTs")
    act(hand, "2 bring_in 2", "3 call 2", "1 call 2")
    deal_street(hand, {1: "9d", 2: "5h", 3: "6c"})  # seat 1 shows a pair of nines
    return hand


def test_open_pair_any_player_may_bet_small_or_big() -> None:
    # 001 stud 4: "In a $5-$10 game, if you have a pair showing ... you can bet either $5 or $10.
    # If you bet $5, any player then has the option to call $5, raise $5, or raise $10. If a $10
    # raise is made, then all other raises must be in increments of $10."
    hand = _fourth_street_with_open_pair("rrop")
    assert hand.to_act == 1
    assert option_set(hand) == {("check", 0), ("bet", 5), ("bet", 10)}
    act(hand, "1 bet 5")
    assert option_set(hand) == {("fold", 0), ("call", 5), ("raise", 10), ("raise", 15)}
    act(hand, "2 raise 15")
    assert option_set(hand) == {("fold", 0), ("call", 15), ("raise", 25)}


def test_open_pair_check_passes_the_same_options() -> None:
    # 001 stud 4: "If the player high with the open pair ... checks, then subsequent players have
    # the same options."
    hand = _fourth_street_with_open_pair("rrop")
    act(hand, "1 check")
    assert option_set(hand) == {("check", 0), ("bet", 5), ("bet", 10)}
    act(hand, "2 bet 10")
    assert option_set(hand) == {("fold", 0), ("call", 10), ("raise", 20)}


def test_open_pair_small_bet_then_small_raise_keeps_the_option() -> None:
    hand = _fourth_street_with_open_pair("rrop")
    act(hand, "1 bet 5", "2 raise 10")
    assert option_set(hand) == {("fold", 0), ("call", 10), ("raise", 15), ("raise", 20)}


@pytest.mark.parametrize(
    ("rules", "variant"),
    [("wsop2023", Variant.STUD), ("rrop", Variant.STUD8), ("rrop", Variant.RAZZ)],
)
def test_no_big_bet_on_open_pair(rules: str, variant: Variant) -> None:
    # WSOP 2023 has no big-bet option; in stud high-low 7 and razz 4 an open pair does not affect the limit.
    hand = start([1000] * 3, variant=variant, ante=1, bring_in=2, small=5, big=10, rules=rules)
    deal_third(hand, "AhKh9c", "QsJd2c", "3s4dTs")
    opener = hand.to_act
    assert opener is not None
    act(hand, f"{opener} bring_in 2")
    while hand.phase is Phase.BETTING:
        act(hand, f"{hand.to_act} call")
    deal_street(hand, {1: "9d", 2: "5h", 3: "6c"})
    opts = hand.options()
    assert opts is not None
    bets = {o.amount for o in opts.options if o.action == "bet"}
    assert bets == {5}


def _fifth_street(rules: str, stacks: list[int], bring_in_seat_door: str = "2c"):  # type: ignore[no-untyped-def]
    """Three players, no ante, 5 bring-in, 10-20: seat 1 low on third, seat 1 high on fifth."""
    hand = start(stacks, ante=0, bring_in=5, small=10, big=20, rules=rules)
    deal_third(hand, "AhKh" + bring_in_seat_door, "QsJd3c", "8s7d4c")
    act(hand, "1 bring_in 5", "2 call 5", "3 call 5")
    deal_street(hand, {1: "Ks", 2: "9h", 3: "6c"})
    while hand.phase is Phase.BETTING:
        act(hand, f"{hand.to_act} check")
    deal_street(hand, {1: "Ad", 2: "Th", 3: "2d"})
    assert hand.to_act == 1
    return hand


@pytest.mark.parametrize("rules", BOTH)
def test_15_all_in_on_a_20_round_is_raised_to_35(rules: str) -> None:
    # 002 3.5: "An example of a full raise is on a $20 betting round, raising a $15 all-in bet to $35."
    hand = _fifth_street(rules, [20, 500, 500])
    act(hand, "1 bet 15")
    assert option_set(hand) == {("fold", 0), ("call", 15), ("raise", 35)}


@pytest.mark.parametrize(("rules", "expected"), [("rrop", ("complete", 20)), ("wsop2023", ("raise", 25))])
def test_all_in_under_half_a_bet_may_be_completed(rules: str, expected: tuple[str, int]) -> None:
    # 002 3.5: "A player facing less than half a bet may fold, call, or complete the wager."
    hand = _fifth_street(rules, [10, 500, 500])
    act(hand, "1 bet 5")
    assert option_set(hand) == {("fold", 0), ("call", 5), expected}


@pytest.mark.parametrize(("rules", "reopened"), [("rrop", True), ("wsop2023", False)])
def test_half_bet_all_in_raise_reopens_under_rrop(rules: str, reopened: bool) -> None:
    # 002 3.5: "An all-in wager of a half a bet or more is treated as a full bet."
    hand = start([500, 40, 500], ante=0, bring_in=5, small=10, big=20, rules=rules)
    deal_third(hand, "AhKh9c", "QsJd8c", "8s7d2c")
    act(hand, "3 bring_in 5", "1 call 5", "2 call 5")
    deal_street(hand, {1: "Ks", 2: "9h", 3: "6c"})
    while hand.phase is Phase.BETTING:
        act(hand, f"{hand.to_act} check")
    deal_street(hand, {1: "Ad", 2: "Th", 3: "5d"})
    act(hand, "1 bet 20", "2 raise 35")  # seat 2 all in: a $15 raise on a $20 round
    assert ("raise", 55) in option_set(hand)
    act(hand, "3 call 35")
    assert (("raise", 55) in option_set(hand)) is reopened


@pytest.mark.parametrize("rules", BOTH)
def test_all_in_raise_under_half_does_not_reopen(rules: str) -> None:
    hand = start([500, 30, 500], ante=0, bring_in=5, small=10, big=20, rules=rules)
    deal_third(hand, "AhKh9c", "QsJd8c", "8s7d2c")
    act(hand, "3 bring_in 5", "1 call 5", "2 call 5")
    deal_street(hand, {1: "Ks", 2: "9h", 3: "6c"})
    while hand.phase is Phase.BETTING:
        act(hand, f"{hand.to_act} check")
    deal_street(hand, {1: "Ad", 2: "Th", 3: "5d"})
    act(hand, "1 bet 20", "2 raise 25")  # all in: $5 more
    act(hand, "3 call 25")
    assert option_set(hand) == {("fold", 0), ("call", 5)}


@pytest.mark.parametrize(("rules", "call"), [("rrop", 5), ("wsop2023", 3)])
def test_short_bring_in(rules: str, call: int) -> None:
    # 000 stud 4: "If the player with the lowcard has only enough chips for a portion of the forced
    # bet, the wager is made. All other players must enter for at least the normal amount."
    hand = start([4, 500, 500], ante=1, bring_in=5, small=10, big=20, rules=rules)
    deal_third(hand, "AhKh2c", "QsJd8c", "8s7d9c")
    act(hand, "1 bring_in 3")
    assert ("call", call) in option_set(hand)


@pytest.mark.parametrize(
    ("rules", "options"),
    [
        ("rrop", {("fold", 0), ("bring_in", 5), ("complete", 10)}),
        ("wsop2023", {("bring_in", 5), ("complete", 10)}),
    ],
)
def test_low_card_all_in_for_the_ante(rules: str, options: set[tuple[str, int]]) -> None:
    # 001 stud 8: "If you are all in for the ante and have the lowcard, the player to your left acts
    # first. That player can fold, open for the forced bet, or open for a full bet."
    hand = start([1, 500, 500], ante=1, bring_in=5, small=10, big=20, rules=rules)
    deal_third(hand, "AhKh2c", "QsJd8c", "8s7d9c")
    assert hand.to_act == 2
    assert option_set(hand) == options


def _tied_showdown(rules: str):  # type: ignore[no-untyped-def]
    hand = start([100] * 3, ante=1, bring_in=2, small=5, big=10, rules=rules)
    deal_third(hand, "AcKdQh", "AsKhQd", "7c8c2d")
    act(hand, "3 bring_in 2", "1 call 2", "2 call 2")
    for cards in ({1: "Jc", 2: "Js", 3: "6d"}, {1: "9d", 2: "9h", 3: "Ts"}, {1: "3c", 2: "3d", 3: "3h"}):
        deal_street(hand, cards)
        while hand.phase is Phase.BETTING:
            act(hand, f"{hand.to_act} check")
    deal_street(hand, {1: "4d", 2: "4c", 3: "5h"})
    while hand.phase is Phase.BETTING:
        act(hand, f"{hand.to_act} check")
    show_all(hand)
    return hand


@pytest.mark.parametrize(("rules", "odd_to"), [("rrop", 2), ("wsop2023", 1)])
def test_odd_chip(rules: str, odd_to: int) -> None:
    # 002 3.7(b): in stud the odd chip goes to the highest card by suit (the ace of spades here);
    # WSOP/PokerKit give it by position.
    hand = _tied_showdown(rules)
    assert hand.pot_total == 0
    won = {a.seat: a.amount for a in hand.awards}
    assert sum(won.values()) == 9
    assert won[odd_to] == 5
    assert won[3 - odd_to] == 4


@pytest.mark.parametrize(("rules", "won"), [("rrop", 9), ("wsop2023", 13)])
def test_all_in_for_part_of_the_ante(rules: str, won: int) -> None:
    # rrop: a player all in for 3 of a 5 ante wins 3 from each player; PokerKit treats antes as dead money.
    hand = start([3, 100, 100], ante=5, bring_in=2, small=5, big=10, rules=rules)
    deal_third(hand, "AhAsAd", "QsJd2c", "8s7d9c")
    act(hand, "2 bring_in 2", "3 fold")
    for cards in ({1: "Kd", 2: "5h"}, {1: "Kh", 2: "6h"}, {1: "Ks", 2: "7h"}, {1: "2d", 2: "3d"}):
        deal_street(hand, cards)
    show_all(hand)
    assert hand.is_over
    assert hand.seat(1).stack == won
    assert sum(s.stack for s in hand.seats) == 203
