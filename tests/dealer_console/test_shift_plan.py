"""The demo's shift (dealer_console/demo/shift.py): when its between-hands work falls, and the
tables it refuses (the whole shift is played in tests/e2e/test_shift.py)."""

from __future__ import annotations

import pytest

from dealer_console.demo.options import DemoError, DemoOptions
from dealer_console.demo.shift import Shift


def _plan(hands: int, players: int = 2) -> dict[int, list[str]]:
    shift = Shift()
    shift.opts = DemoOptions(hands=hands, players=players, camera=False, shift=True)
    shift.opts.check()
    shift.chips = {}
    shift._shift_init()
    assert shift.chips == {"buy_ins": 0, "cash_outs": 0}
    assert shift.newcomer == ("Cy" if players == 2 else "Eve")
    return shift.shift_plan


def test_the_breaks_fall_at_sixths_of_the_shift_and_a_short_shift_does_them_all_in_order() -> None:
    assert _plan(100) == {16: ["sit"], 33: ["leave"], 50: ["game"], 66: ["return"], 83: ["swap"]}
    assert _plan(2, players=4) == {1: ["sit", "leave", "game", "return", "swap"]}


@pytest.mark.parametrize(("opts", "words"), [
    (DemoOptions(shift=True), "without the camera"),
    (DemoOptions(shift=True, no_shoe=True), "without the camera"),
    (DemoOptions(shift=True, camera=False, players=7), "2 to 6 players"),
    (DemoOptions(shift=True, camera=False, hands=1), "at least 2 hands"),
    (DemoOptions(shift=True, camera=False, drill="shoe-cable"), "no drill"),
])
def test_a_shift_refuses_what_it_cannot_play_in_words(opts: DemoOptions, words: str) -> None:
    with pytest.raises(DemoError, match=words):
        opts.check()
