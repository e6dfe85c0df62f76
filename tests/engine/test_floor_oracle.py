"""No answer to a console input depends on a live down card (DESIGN: nothing that reaches a
non-engine role may depend on a secret card; issue 19).

Two deals differ only in down cards (the up cards, the burns and every public card are the
same).  The same console inputs -- manual cards, reports (a wrong bring-in among them) naming
the very cards dealt face down in either deal -- are sent to both, and every text that can reach
a console or monitor (refusal, notes, prompts, public state) must be the same in both: a refusal
in one and an acceptance in the other would be a yes/no oracle on the down cards."""

from __future__ import annotations

import copy
import json
from collections.abc import Iterator
from typing import Any

import pytest

from engine.cards import Card
from engine.floor import Floor, FloorError
from engine.public import public_state
from tests.engine.test_floor_secrecy import DECK, POINTS, _floor, _secret

# Positions 0 and 4 of DECK are seat 1's and seat 2's first down cards; 26 and 27 are never dealt
# in a three-handed hand (25 cards at most), so deck B differs from deck A only in those down cards.
DECK_B = DECK[:]
DECK_B[0], DECK_B[27] = DECK[27], DECK[0]
DECK_B[4], DECK_B[26] = DECK[26], DECK[4]


def _play(deck: list[str], done: Any) -> Floor:
    floor = _floor()
    cards = iter(deck)
    hand = floor.table.hand
    assert hand is not None
    while not done(hand):
        if hand.phase.value == "betting":
            opts = hand.options()
            assert opts is not None
            o = opts.find("call") or opts.find("check") or opts.find("bring_in")
            assert o is not None
            floor.handle({"kind": "action", "seat": opts.seat, "action": o.action, "amount": o.amount})
        else:
            floor.handle({"kind": "shoe_card", "card": next(cards)})
    return floor


def _public(floor: Floor, inp: dict[str, Any]) -> list[str]:
    """Everything a console or monitor learns from ``inp``: the refusal, or the notes and prompts."""
    floor = copy.deepcopy(floor)
    refusal, texts = "", []
    try:
        out = floor.handle(inp)
        texts += out.notes + [json.dumps(p.to_wire()) for p in out.opened]
    except FloorError as exc:
        refusal = str(exc)
    extra = {"prompts": floor.open_prompts(), "last_error": {"reason": refusal} if refusal else None}
    return [refusal, *texts, json.dumps(public_state(floor.table, None, "t", extra), sort_keys=True)]


def _probes(floor: Floor, codes: list[str]) -> Iterator[dict[str, Any]]:
    hand = floor.table.hand
    assert hand is not None
    for seat in [s.seat for s in hand.seats]:
        for code in codes:
            for up in (True, False):
                yield {"kind": "manual_card", "seat": seat, "card": code, "face_up": up}
            for report in ("wrong-bring-in", "boxed-card", "joker", "final-downcard-kept", "flashed-card"):
                yield {"kind": "report", "report": report, "seat": seat, "card": code}
    for code in codes:
        yield {"kind": "report", "report": "burn-error", "burns": 0, "card": code}


@pytest.mark.parametrize("point", list(POINTS))
def test_the_same_console_inputs_get_the_same_public_answers_whatever_the_down_cards(point: str) -> None:
    a, b = _play(DECK, POINTS[point]), _play(DECK_B, POINTS[point])
    secret_a, secret_b = _secret(a), _secret(b)
    assert secret_a != secret_b
    assert _public(a, {"kind": "table", "op": "nothing"}) == _public(b, {"kind": "table", "op": "nothing"})
    codes = [*sorted(str(c) for c in secret_a | secret_b), "2s", "4d"]
    differ = [(p, x, y) for p in _probes(a, codes) if (x := _public(a, p)) != (y := _public(b, p))]
    assert not differ, differ[:3]


def test_a_wrong_bring_in_report_does_not_tell_whether_the_card_is_a_down_card() -> None:
    # Issue repro: third-street betting after the bring-in; seat 1's first down card is the As in
    # deck A, and in deck B the As is never dealt.
    a, b = _play(DECK, POINTS["third-street betting"]), _play(DECK_B, POINTS["third-street betting"])
    for floor in (a, b):
        floor.handle({"kind": "action", "seat": 3, "action": "bring_in", "amount": 2})
    hand = a.table.hand
    assert hand is not None and Card.parse("As") in hand.seat(1).down
    report = {"kind": "report", "report": "wrong-bring-in", "seat": 1, "card": "As"}
    assert _public(a, report) == _public(b, report)
    assert "still low" in _public(a, report)[0]


def _unknown_first(deck: list[str]) -> Floor:
    """Seat 1's first down card is dealt as unknown (the shoe read a tag it does not know)."""
    floor = _floor()
    out = floor.handle({"kind": "shoe_card", "status": "unknown_tag"})
    (prompt,) = out.opened
    floor.handle({"kind": "ruling", "prompt": prompt.id, "option": "unknown"})
    rest = iter(deck[1:])
    hand = floor.table.hand
    assert hand is not None
    while not POINTS["showdown"](hand):
        if hand.phase.value == "betting":
            opts = hand.options()
            assert opts is not None
            o = opts.find("call") or opts.find("check") or opts.find("bring_in")
            assert o is not None
            floor.handle({"kind": "action", "seat": opts.seat, "action": o.action, "amount": o.amount})
        else:
            floor.handle({"kind": "shoe_card", "card": next(rest)})
    return floor


def test_a_shown_card_that_is_another_seats_down_card_is_not_named_or_ruled_on() -> None:
    # Deck A: the 2c is seat 3's first down card; deck C: it is never dealt (swapped with the 6d).
    deck_c = DECK[:]
    deck_c[2], deck_c[25] = DECK[25], DECK[2]
    a, c = _unknown_first(DECK), _unknown_first(deck_c)
    hand = a.table.hand
    assert hand is not None and Card.parse("2c") in hand.seat(3).down
    own = [str(x) for x in hand.seat(1).down if x.known]
    show = {"kind": "show", "seat": 1, "cards": ["2c", *own]}
    assert _public(a, show) == _public(c, show)
    assert not any("deuce of clubs" in t for t in _public(a, show))
    # The real duplicate is caught when the twin is shown: then both are in plain sight (RRoP 3.4).
    a.handle(show)
    out = a.handle({"kind": "show", "seat": 3})
    assert [p.rule.id for p in out.opened] == ["deck.duplicate-card"]
    assert "deuce of clubs" in out.opened[0].text


def test_a_camera_view_does_not_tell_whether_a_card_is_the_burn() -> None:
    # Decks A and D differ only in fifth street's burn (position 13 of DECK, dealt once every seat
    # has its fourth-street card; 26 is never dealt three-handed).  A camera that shows seat 1
    # with any card on fifth street must get the same public answer from both: a burn-error
    # prompt that opened only when the card named is the burn would tell a forged camera the burn.
    deck_d = DECK[:]
    deck_d[13], deck_d[26] = DECK[26], DECK[13]
    point = POINTS["fifth-street dealing"]
    a, d = _play(DECK, point), _play(deck_d, point)
    hand = a.table.hand
    assert hand is not None and hand.burns[-1] == Card.parse(DECK[13])
    assert d.table.hand is not None and d.table.hand.burns[-1] == Card.parse(DECK[26])
    held = {s.seat: ([str(c) for c in s.up], len(s.down)) for s in hand.live_seats}
    for code in sorted({DECK[13], DECK[26], *(str(c) for c in _secret(a) | _secret(d))}):
        seats = {str(n): {"up": up + ([code] if n == 1 else []), "down": down} for n, (up, down) in held.items()}
        view = {"kind": "camera", "seats": seats, "irregular": []}
        assert _public(a, view) == _public(d, view), code
