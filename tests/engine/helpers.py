"""Small builders for engine tests: a hand from a script of cards and actions."""

from __future__ import annotations

from engine.cards import parse_cards
from engine.events import CardDealt, CardsShown, Event, HandStarted, PlayerAction, SeatEntry
from engine.hand import Hand, Phase
from engine.rules import GameConfig, Variant


def start(
    stacks: list[int],
    variant: Variant = Variant.STUD,
    ante: int = 1,
    bring_in: int = 2,
    small: int = 5,
    big: int = 10,
    rules: str = "rrop",
) -> Hand:
    cfg = GameConfig(variant, ante, bring_in, small, big, rules=rules)
    return Hand(HandStarted(1, cfg, tuple(SeatEntry(i + 1, f"P{i + 1}", s) for i, s in enumerate(stacks))))


def deal_third(hand: Hand, *hands: str) -> None:
    """Deal third street: each string is 'down down up' for seats 1.. in order, dealt round by round."""
    cards = [parse_cards(h) for h in hands]
    for rnd in range(3):
        for i, c in enumerate(cards):
            hand.apply(CardDealt(i + 1, c[rnd], rnd == 2))


def deal_street(hand: Hand, cards: dict[int, str]) -> None:
    """Deal one card to each listed seat (up on 4th-6th, down on 7th)."""
    up = hand.street < 4
    for seat, code in cards.items():
        hand.apply(CardDealt(seat, parse_cards(code)[0], up))


def act(hand: Hand, *actions: str) -> None:
    """'1 call', '2 raise 20', '3 fold' ..."""
    for text in actions:
        parts = text.split()
        amount = int(parts[2]) if len(parts) > 2 else None
        hand.apply(PlayerAction(int(parts[0]), parts[1], amount))


def option_set(hand: Hand) -> set[tuple[str, int]]:
    opts = hand.options()
    assert opts is not None
    return {(o.action, o.amount) for o in opts.options}


def show_all(hand: Hand) -> None:
    while hand.phase is Phase.SHOWDOWN:
        seat = hand.to_act
        assert seat is not None
        hand.apply(CardsShown(seat, tuple(hand.seat(seat).down)))


def events_of(hand: Hand) -> list[Event]:
    return list(hand.events)


__all__ = ["HandStarted", "act", "deal_street", "deal_third", "option_set", "show_all", "start"]


def check_round(hand: Hand) -> None:
    """Everyone checks (or calls the bring-in) until the round closes."""
    while hand.phase is Phase.BETTING:
        opts = hand.options()
        assert opts is not None
        o = opts.find("check") or opts.find("call") or opts.find("bring_in")
        assert o is not None
        hand.apply(PlayerAction(opts.seat, o.action, o.amount))
