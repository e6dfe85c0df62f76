"""A dealer's whole shift on the real console (issue 21, proof): 100 hands played offscreen through
the console's widgets by accessible name (``dealer_console/demo``, ``DemoOptions(shift=True)``)
against the demo's real stack (embedded amqtt broker, the engine service and its SQLite store, the
shoe simulator on a pty read by the bridge), every hand's record checked against the simulated truth
(cards, actions, shown hands, the game it was played under, who was dealt in with what).

Between hands the simulated dealer, on the seating and game pages, seats a newcomer with a short
buy-in (``seat.N.sit-down``, ``keyboard.*``, ``numpad.*``, ``seating.confirm``), has players leave
(``seat.N.leave``), is refused a buy-in under the table's minimum (``refusal.seating``, nothing
changed), changes the game to razz (``page.game``, ``game.variant.razz``, ``game.apply``); during
the hands it undoes one mistaken action (``correction.undo``, ``correction.confirm``) and completes
every showdown (``showdown.show``).  The camera is left out (it is what makes a demo slow; a shift
refuses it: the simulated felt has the starting players' seats only).  A camera-only hand is
covered by ``test_camera_only_table_the_camera_deals_and_the_hole_cards_are_keyed_when_shown`` in
tests/e2e/test_demo.py, which this module relies on and does not repeat; a manual table plays a
short shift here (every card keyed, every show picked: ``showdown.pick``), beside test_demo's
plain two manual hands.  Measured here: 3 min 46 s to 4 min 22 s for the 100 hands (load average 4.6 to
5.8; hence ``slow``), 17 s for the manual shift.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from dealer_console.demo import DemoOptions, run_demo
from engine.events import HandStarted, event_from_json
from engine.store import open_store

pytestmark = pytest.mark.slow

HANDS = 100
PLAYERS = 2


def _starts(store_path: Path, hands: int) -> dict[int, HandStarted]:
    """Each hand's hand_started from the engine's own hand log (its SQLite store)."""
    store = open_store(str(store_path), "demo")
    try:
        starts: dict[int, HandStarted] = {}
        for k in range(1, hands + 1):
            record = store.get_hand(f"demo-{k}")
            assert record is not None, f"hand demo-{k} is not in the hand log"
            first = event_from_json(dict(record.events[0]))
            assert isinstance(first, HandStarted)
            assert record.variant == first.config.variant.value
            starts[k] = first
        return starts
    finally:
        store.close()


def check_shift(result: dict[str, Any], store: Path, hands: int, players: int) -> None:
    """What every shift must show: each hand verified, the seat changes, the refusal and the game
    change in the engine's hand log, the chips conserved across the seatings."""
    print("shift:", {k: result[k] for k in ("hands_verified", "elapsed_s", "inputs", "console", "chips")})
    assert result["failures"] == [], result["failures"]
    assert result["ok"] is True
    assert result["hands_verified"] == result["hands_played"] == result["hands_in_store"] == hands
    inputs, steps = result["inputs"], result["shift"]["steps"]
    # Played through the console's widgets: the taps, none swallowed by the double-tap guard.
    assert result["console"]["taps"] > inputs["actions"] + inputs["shows"] and result["console"]["taps_swallowed_by_guard"] == 0
    assert inputs["undone"] == 1 and inputs["shows"] >= hands // 4 >= 1

    starts = _starts(store, hands)

    def seated(k: int) -> dict[str, tuple[int, int]]:
        return {e.name: (e.seat, e.stack) for e in starts[k].seats}

    # Seats taken and left between hands, as the hand log's next hand has them.
    sits = [s for s in steps if s["op"] == "sit"]
    leaves = [s for s in steps if s["op"] == "leave"]
    assert len(sits) == 3 and len(leaves) == 2, steps
    for s in sits:
        k = s["after_hand"]
        assert s["name"] not in seated(k) and seated(k + 1)[s["name"]] == (s["seat"], s["amount"]), s
    for s in leaves:
        k = s["after_hand"]
        assert seated(k)[s["name"]][0] == s["seat"] and s["name"] not in seated(k + 1), s
    newcomer = sits[0]["name"]
    assert sits[0]["amount"] < 100  # the one short buy-in (RRoP 3.1), taken

    # The buy-in under the table's minimum: refused in words beside the seating controls, nothing
    # changed (the newcomer then sits with a full buy-in, which the next hand deals in).
    refused = [s for s in steps if s["op"] == "refused"]
    assert len(refused) == 1 and inputs["buy_ins_refused"] == 1
    r = refused[0]
    assert r["name"] == newcomer and r["amount"] < 100
    assert r["refusal"].startswith("Not taken: ") and "buy-in" in r["refusal"], r
    back = next(s for s in sits if s["after_hand"] == r["after_hand"] and s["name"] == newcomer)
    assert back["amount"] >= 100 and seated(r["after_hand"] + 1)[newcomer] == (back["seat"], back["amount"])

    # The game change, taken from the next hand on (each hand's own hand_started config).
    (change,) = [s for s in steps if s["op"] == "game"]
    g = change["after_hand"]
    assert change == {"after_hand": g, "op": "game", "from": "F7S", "to": "FR"}
    assert 1 < g < hands
    assert [starts[k].config.variant.value for k in range(1, hands + 1)] == ["F7S"] * g + ["FR"] * (hands - g)
    assert result["shift"]["games"] == {"F7S": g, "FR": hands - g}

    # Chips conserved across the seatings: start + buy-ins - cash-outs == end (the last hand's
    # record) == what the engine's table shows once the shift is over.
    chips = result["chips"]
    buy_ins = sum(s["amount"] for s in steps if s["op"] in ("sit", "add_chips"))
    cash_outs = sum(s["amount"] for s in leaves)
    assert chips["buy_ins"] == buy_ins and chips["cash_outs"] == cash_outs
    assert chips["start"] == players * 500 == sum(e.stack for e in starts[1].seats)
    assert chips["start"] + buy_ins - cash_outs == chips["end"] == chips["table_end"]


def test_a_shift_of_100_hands_from_the_console(qapp: Any, tmp_path: Path) -> None:
    result = run_demo(DemoOptions(hands=HANDS, seed=21, players=PLAYERS, camera=False, shift=True,
                                  workdir=tmp_path))
    check_shift(result, tmp_path / "table.sqlite", HANDS, PLAYERS)
    assert result["inputs"]["cards_drawn"] >= HANDS * 2 * 3  # every card from the shoe, through the bridge


def test_a_short_shift_on_a_manual_table(qapp: Any, tmp_path: Path) -> None:
    """The same shift with no sensors: every card keyed on the picker, the newcomers' too (the
    picker's seat preset follows the seats taken and left); every show picked (``showdown.pick``)."""
    result = run_demo(DemoOptions(hands=6, seed=4, players=2, manual=True, shift=True, workdir=tmp_path))
    check_shift(result, tmp_path / "table.sqlite", 6, 2)
    assert result["inputs"]["cards_drawn"] == 0 and result["inputs"]["cards_keyed"] >= 6 * 2 * 3
