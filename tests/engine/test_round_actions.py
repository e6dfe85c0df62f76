"""Each seat's last action this betting round, in the public state (issue 21, 5): in words, from the
hand's events, cleared at each new street and at the showdown."""

from __future__ import annotations

from typing import Any

from engine.floor import Floor
from engine.public import public_tree
from engine.scenario import build_floor


def _floor() -> Floor:
    floor, _ = build_floor({"id": "t1", "variant": "F7S", "ante": 1, "bring_in": 2, "small_bet": 5, "big_bet": 10,
                            "seats": [{"seat": 1, "name": "Ann", "stack": 100}, {"seat": 2, "name": "Bob", "stack": 100},
                                      {"seat": 3, "name": "Cy", "stack": 100}]})
    # down, down, up to seats 1-3: seat 1 shows the 2c (low), seat 2 the Kd, seat 3 the 9h
    for code in ("As", "Ks", "Qs", "Ah", "Kh", "Qh", "2c", "Kd", "9h"):
        floor.handle({"kind": "shoe_card", "card": code})
    return floor


def _did(floor: Floor) -> dict[int, str]:
    return {s.seat: s.last_action for s in public_tree(floor.table, None).seats}


def _act(floor: Floor, action: str, amount: int | None = None) -> None:
    hand = floor.table.hand
    assert hand is not None
    inp: dict[str, Any] = {"kind": "action", "seat": hand.to_act, "action": action}
    if amount is not None:
        inp["amount"] = amount
    floor.handle(inp)


def test_each_seat_shows_what_it_did_this_round_and_a_new_street_clears_it() -> None:
    floor = _floor()
    assert _did(floor) == {1: "", 2: "", 3: ""}
    _act(floor, "bring_in", 2)
    _act(floor, "complete", 5)
    assert _did(floor) == {1: "brought in 2", 2: "completed to 5", 3: ""}
    _act(floor, "raise", 10)
    _act(floor, "call")  # seat 1: the level it matched, not the chips it added
    assert _did(floor) == {1: "called 10", 2: "completed to 5", 3: "raised to 10"}
    _act(floor, "fold")
    state = public_tree(floor.table, None)
    assert [s.last_action for s in state.seats] == ["", "", ""], "fourth street clears the round"
    assert {s.seat: s.status for s in state.seats}[2] == "folded"
    for code in ("2d", "3h", "4h"):  # burn, then one up card each to seats 1 and 3
        floor.handle({"kind": "shoe_card", "card": code})
    hand = floor.table.hand
    assert hand is not None
    first = hand.to_act
    _act(floor, "check")
    assert _did(floor) == {1: "", 2: "", 3: "", first: "checked"}
    # The JSON carries it, and reads back.
    seats = state.to_json()["seats"]
    assert all("last_action" in s for s in seats)
