"""No refusal, prompt, note or public state carries a live down card (issue 19 item 1).

A console may send any command in any phase with any payload (DESIGN: trust boundaries).  Here
every input kind is tried, at several points of a live hand, with the real down cards of every
seat (and the burns) in every card field, and every text that can reach a non-engine role is
searched for those cards, by code and by name."""

from __future__ import annotations

import copy
import json
import re
from collections.abc import Iterator
from typing import Any

import pytest

from engine.cards import Card, parse_cards
from engine.floor import Floor, FloorError
from engine.hand import Phase, Street
from engine.public import public_state
from engine.scenario import build_floor

DECK = [str(c) for c in parse_cards("As Kd 2c Qh 9s 3d Jc 8h 5s 7d Tc 4h 6c Ks Ad 2h Qs 9d 3c Jh 8s 5d 7c Th 4s 6d Kc Ah")]


def _floor() -> Floor:
    floor, _ = build_floor(
        {
            "variant": "F7S", "ante": 1, "bring_in": 2, "small_bet": 5, "big_bet": 10,
            "seats": [{"seat": 1, "stack": 500}, {"seat": 2, "stack": 500}, {"seat": 3, "stack": 500}],
        }
    )
    return floor


def _play_until(floor: Floor, done: Any) -> None:
    deck = iter(DECK)
    hand = floor.table.hand
    assert hand is not None
    while not done(hand):
        if hand.phase is Phase.BETTING:
            opts = hand.options()
            assert opts is not None
            o = opts.find("call") or opts.find("check") or opts.find("bring_in")
            assert o is not None
            floor.handle({"kind": "action", "seat": opts.seat, "action": o.action, "amount": o.amount})
        else:
            floor.handle({"kind": "shoe_card", "card": next(deck)})


POINTS = {
    "third-street betting": lambda h: h.phase is Phase.BETTING,
    "fifth-street dealing": lambda h: h.street == Street.FIFTH and h.phase is Phase.DEALING and h.burned_this_street,
    "sixth-street betting": lambda h: h.street == Street.SIXTH and h.phase is Phase.BETTING,
    "seventh-street dealing": lambda h: h.street == Street.SEVENTH and sum(len(s.cards) for s in h.seats) == 19,
    "seventh-street betting": lambda h: h.street == Street.SEVENTH and h.phase is Phase.BETTING,
    "showdown": lambda h: h.phase is Phase.SHOWDOWN,
}


def _secret(floor: Floor) -> set[Card]:
    """The identities nobody at the table can see: unshown down cards, burns, cards set aside."""
    hand = floor.table.hand
    assert hand is not None
    cards = {c for s in hand.seats if not s.shown for c, up in s.cards if not up and c.known}
    cards |= {c for c in hand.burns + hand.removed if c.known}
    return {c for c in cards if not hand.is_public(c)}


def _probes(floor: Floor, secret: set[Card]) -> Iterator[dict[str, Any]]:
    hand = floor.table.hand
    assert hand is not None
    seats = [s.seat for s in hand.seats]
    codes = sorted(str(c) for c in secret)
    for seat in seats:
        own = [str(c) for c in hand.seat(seat).down]
        yield {"kind": "show", "seat": seat, "cards": own}
        yield {"kind": "show", "seat": seat, "cards": own[::-1]}
        yield {"kind": "show", "seat": seat, "cards": [str(c) for c, _ in hand.seat(seat).cards][::-1]}
        yield {"kind": "muck", "seat": seat}
        for code in codes:
            yield {"kind": "show", "seat": seat, "cards": [code] * len(own)}
            yield {"kind": "show", "seat": seat, "cards": [code, *own[1:]]}
            for up in (True, False):
                yield {"kind": "manual_card", "seat": seat, "card": code, "face_up": up}
            for report in ("wrong-bring-in", "boxed-card", "joker", "final-downcard-kept", "flashed-card"):
                yield {"kind": "report", "report": report, "seat": seat, "card": code}
            yield {"kind": "camera", "seats": {str(seat): {"up": [code], "down": 2}}}
        for action in ("fold", "check", "call", "bring_in", "complete", "bet", "raise"):
            yield {"kind": "action", "seat": seat, "action": action, "amount": 7}
    for code in codes:
        for status in ("ok", "duplicate", "foreign_deck"):
            yield {"kind": "shoe_card", "card": code, "status": status}
        yield {"kind": "camera", "seats": {}, "irregular": [{"kind": "off_felt", "seat": None, "card": code}]}
        yield {"kind": "report", "report": "burn-error", "burns": 0, "card": code}
    for prompt in floor.prompts.values():
        for option in [o.id for o in prompt.options] + ["nonsense"]:
            yield {"kind": "ruling", "prompt": prompt.id, "option": option}
    yield {"kind": "table", "op": "start_hand"}


def _texts(floor: Floor, refusal: str, out: Any) -> list[str]:
    texts = [refusal]
    if out is not None:
        texts += out.notes
        texts += [json.dumps(p.to_json()) + json.dumps(p.to_wire()) for p in out.opened]
    texts += [json.dumps(p.to_wire()) for p in floor.prompts.values()]
    extra = {"prompts": floor.open_prompts(), "last_error": {"reason": refusal}}
    texts.append(json.dumps(public_state(floor.table, None, "t", extra)))
    return texts


def _leaks(texts: list[str], secret: set[Card]) -> list[str]:
    found = []
    for c in secret:
        code = re.compile(rf"\b{re.escape(str(c))}\b")
        name = re.compile(re.escape(c.name), re.IGNORECASE)
        found += [f"{c}: {t[:200]}" for t in texts if code.search(t) or name.search(t)]
    return found


@pytest.mark.parametrize("point", list(POINTS))
def test_no_text_that_reaches_a_console_or_monitor_names_a_live_down_card(point: str) -> None:
    base = _floor()
    _play_until(base, POINTS[point])
    # A prompt open as well, so that rulings are tried too (a duplicate draw, then a premature one).
    secret_before = _secret(base)
    assert secret_before
    tried = refused = 0
    for probe in _probes(base, secret_before):
        floor = copy.deepcopy(base)
        out = None
        refusal = ""
        try:
            out = floor.handle(probe)
        except FloorError as exc:
            refusal = str(exc)
            refused += 1
        tried += 1
        hand = floor.table.hand
        assert hand is not None
        still_secret = secret_before & _secret(floor) if not hand.is_over else set()
        leaks = _leaks(_texts(floor, refusal, out), still_secret)
        assert not leaks, (probe, leaks)
    assert tried > 100 and refused > 20


def test_a_show_outside_the_showdown_is_refused_without_looking_at_the_cards() -> None:
    floor = _floor()
    _play_until(floor, POINTS["sixth-street betting"])
    hand = floor.table.hand
    assert hand is not None
    real = [str(c) for c in hand.seat(1).down]
    answers = set()
    for cards in (real, real[::-1], ["2s", "3s"], [real[0], "2s"]):
        with pytest.raises(FloorError) as refused:
            floor.handle({"kind": "show", "seat": 1, "cards": cards})
        answers.add((str(refused.value), refused.value.rule))
    assert answers == {("cards are shown at the showdown; the hand is betting", "RRoP 3.6")}


def test_the_duplicate_card_prompt_names_a_card_only_if_its_twin_is_face_up() -> None:
    floor = _floor()
    _play_until(floor, POINTS["third-street betting"])
    hand = floor.table.hand
    assert hand is not None
    down, up = hand.seat(1).down[0], hand.seat(1).up[0]
    hidden = copy.deepcopy(floor).handle({"kind": "shoe_card", "card": str(down), "status": "duplicate"})
    shown = copy.deepcopy(floor).handle({"kind": "shoe_card", "card": str(up), "status": "duplicate"})
    assert [p.rule.id for p in hidden.opened] == ["deck.duplicate-card"] == [p.rule.id for p in shown.opened]
    assert down.name not in hidden.opened[0].text and "same card" in hidden.opened[0].text
    assert up.name in shown.opened[0].text


def test_whether_an_off_felt_card_opens_a_prompt_never_depends_on_the_hole_cards() -> None:
    """A forged camera probes with off-felt cards of the last hand: if a prompt opened only when
    the card is a live down card of this hand, the prompt's existence would tell which cards are
    in the hole.  The answer must be the same for a hole card as for a card nobody was dealt."""
    floor = _floor()
    first = iter(DECK[:9])
    hand = floor.table.hand
    assert hand is not None
    while hand.phase is Phase.DEALING:
        floor.handle({"kind": "shoe_card", "card": next(first)})
    while not hand.is_over:
        opts = hand.options()
        assert opts is not None
        o = opts.find("fold") or opts.find("bring_in")
        assert o is not None
        floor.handle({"kind": "action", "seat": opts.seat, "action": o.action, "amount": o.amount})
    last_cards = DECK[:9]
    # Hand 2 deals three of the last hand's cards as hole cards; the rest of them are not dealt.
    floor.handle({"kind": "table", "op": "start_hand"})
    hand = floor.table.hand
    assert hand is not None and hand.hand_id == 2
    second = [last_cards[0], last_cards[1], DECK[20], last_cards[3], last_cards[4], DECK[21],
              DECK[22], DECK[23], DECK[24]]
    for code in second:
        floor.handle({"kind": "shoe_card", "card": code})
    holes = {str(c) for s in hand.seats for c, up in s.cards if not up}
    in_hole = [c for c in last_cards if c in holes]
    not_dealt = [c for c in last_cards if c not in second]
    assert in_hole and not_dealt

    def opens(code: str) -> list[str]:
        probe = copy.deepcopy(floor)
        out = probe.handle({"kind": "camera", "seats": {},
                            "irregular": [{"kind": "off_felt", "seat": None, "card": code}]})
        return sorted(p.rule.id for p in out.opened)

    answers = {c: opens(c) for c in in_hole + not_dealt}
    assert len({tuple(a) for a in answers.values()}) == 1, answers
    # The control: a card of neither hand off the felt is a prompt (the check above is not blind).
    assert opens(DECK[27]) == ["stud.card-off-table"]
