"""The real console offscreen, driven by accessible name, against a real engine, broker and shoe
(the demo table's stack): an undo of a wrong action, a refused undo with a wrong floor PIN (the
whole public state unchanged), an engine restart after an undo that reaches the same state, and a
game change between hands that leaves the earlier hand under its own game (issue 21, 3 and 4)."""

from __future__ import annotations

import copy
import json
import sqlite3
from collections.abc import Iterator
from typing import Any

import pytest

from dealer_console.demo.options import DemoOptions
from dealer_console.demo.run import ConsoleScreen
from dealer_console.demo.stack import TableStack
from dealer_console.driver import ConsoleDriver
from engine.rules import Variant

PIN = "2468"
REFUSAL_CHANGES = ("last_error", "input", "devices")  # what a refused input changes on the state, on purpose


@pytest.fixture
def live(qtbot: Any) -> Iterator[tuple[TableStack, ConsoleScreen, ConsoleDriver]]:
    opts = DemoOptions(players=3, camera=False, seed=5, floor_pin=PIN)
    opts.check()
    stack = TableStack(opts).start()
    screen = ConsoleScreen(stack, opts)
    try:
        qtbot.waitUntil(lambda: screen.model.controls_enabled and bool(screen.model.snapshot.seats), timeout=15000)
        yield stack, screen, ConsoleDriver(screen.window)
    finally:
        screen.stop()
        stack.stop()


def _state(screen: ConsoleScreen) -> dict[str, Any]:
    return screen.model.raw_state


def _without(state: dict[str, Any], keys: tuple[str, ...]) -> dict[str, Any]:
    return {k: v for k, v in copy.deepcopy(state).items() if k not in keys}


def _tap(qtbot: Any, d: ConsoleDriver, name: str) -> None:
    """Tap as a finger does: wait for the control, and out the double-tap guard."""
    qtbot.waitUntil(lambda: d.usable(name), timeout=10000)
    wait = d.guard_wait(name)
    if wait > 0:
        qtbot.wait(int(wait * 1000) + 20)
    d.tap(name)


def _deal_third_street(qtbot: Any, stack: TableStack, screen: ConsoleScreen, d: ConsoleDriver) -> None:
    _tap(qtbot, d, "hand.next")
    qtbot.waitUntil(lambda: _state(screen).get("phase") == "dealing", timeout=10000)
    stack.sim.load()
    while _state(screen).get("phase") == "dealing":
        seen = _state(screen).get("input")
        stack.sim.draw()
        qtbot.waitUntil(lambda s=seen: _state(screen).get("input") != s, timeout=10000)
    assert _state(screen).get("phase") == "betting"


def _act(qtbot: Any, screen: ConsoleScreen, d: ConsoleDriver, name: str) -> int:
    seat = int(_state(screen)["to_act"])
    label = next(o["label"] for o in _state(screen)["options"] if o["action"] == name.split(".")[1])
    # As a dealer looks before tapping: the button shows the option of the player to act.
    qtbot.waitUntil(lambda: label in d.text(name), timeout=10000)
    _tap(qtbot, d, name)
    try:
        qtbot.waitUntil(lambda: _state(screen).get("to_act") != seat or _state(screen).get("phase") != "betting",
                        timeout=10000)
    except Exception:
        raise AssertionError(f"{name} for seat {seat} did not move the table on: {_state(screen).get('last_error')} {_state(screen).get('dealer_inputs')} {_state(screen).get('input')} sent={screen.window.sent} swallowed={screen.window.tap_guard.swallowed}") from None
    return seat


def test_undo_from_the_console_a_wrong_pin_and_a_restart(live: Any, qtbot: Any) -> None:
    stack, screen, d = live
    _deal_third_street(qtbot, stack, screen, d)
    _act(qtbot, screen, d, "action.bring_in")
    wrong = _act(qtbot, screen, d, "action.complete")  # the player called; the dealer tapped Complete
    name = next(s["name"] for s in _state(screen)["seats"] if s["seat"] == wrong)
    # The undo says what it will change before it changes it.
    _tap(qtbot, d, "correction.undo")
    assert d.text("correction.text") == f"Undo: seat {wrong} {name} complete to 5 (third street)"
    assert d.find("pin.1") is None  # the last entry needs no PIN
    _tap(qtbot, d, "correction.confirm")
    qtbot.waitUntil(lambda: _state(screen).get("to_act") == wrong, timeout=10000)
    seat = next(s for s in _state(screen)["seats"] if s["seat"] == wrong)
    assert seat["bet"] == 0 and _state(screen)["dealer_inputs"][-1]["undone"]
    _act(qtbot, screen, d, "action.call")
    _act(qtbot, screen, d, "action.call")
    qtbot.waitUntil(lambda: _state(screen).get("phase") == "dealing", timeout=10000)
    before = _without(_state(screen), REFUSAL_CHANGES)
    # An older entry: the floor's PIN; a wrong one is refused beside the panel, nothing changed.
    _tap(qtbot, d, "correction.undo")
    _tap(qtbot, d, "correction.older")
    assert d.text("correction.text") == f"Undo: seat {wrong} {name} call 2 (third street). Taken again after it: " \
        "1 action. Not the last entry: the floor's PIN is needed"
    for digit in "1357":
        _tap(qtbot, d, f"pin.{digit}")
    assert d.text("correction.pin") == "Floor PIN: ••••"
    _tap(qtbot, d, "correction.confirm")
    qtbot.waitUntil(lambda: d.find("refusal.correction") is not None, timeout=10000)
    assert "the floor PIN is wrong" in d.text("refusal.correction")
    assert _without(_state(screen), REFUSAL_CHANGES) == before
    assert "1357" not in json.dumps(_state(screen)) and PIN not in json.dumps(_state(screen))
    # Restart the engine: the store (the undo in it) brings the table back exactly as it was.
    whole = copy.deepcopy(stack.engine.service.core.floor.state())
    stack.engine.stop()
    qtbot.waitUntil(lambda: not screen.model.controls_enabled, timeout=10000)
    stack.engine.start()
    qtbot.waitUntil(lambda: screen.model.controls_enabled, timeout=15000)
    assert stack.engine.service.core.floor.state() == whole
    qtbot.waitUntil(lambda: _without(_state(screen), REFUSAL_CHANGES) == before, timeout=10000)


def test_a_game_change_from_the_console_plays_from_the_next_hand(live: Any, qtbot: Any) -> None:
    from dealer_console.monitor import MonitorWindow

    stack, screen, d = live
    monitor = MonitorWindow(screen.model)  # the players' screen draws the same public state
    qtbot.addWidget(monitor)
    _deal_third_street(qtbot, stack, screen, d)
    _tap(qtbot, d, "page.game")
    for name in ("game.variant.razz", "game.small-bet", "game-pad.1", "game-pad.0", "game.big-bet", "game-pad.2",
                 "game-pad.0", "game.bring-in", "game-pad.3", "game.apply"):
        _tap(qtbot, d, name)
    qtbot.waitUntil(lambda: _state(screen).get("next_game") is not None, timeout=10000)
    assert _state(screen)["game"]["variant"] == "F7S"  # this hand keeps its game
    assert "Next hand: Razz 10/20, ante 1, bring-in 3" in d.text("game.current")
    assert "next hand: Razz 10/20" in d.text("game-line")
    assert monitor.game.text().startswith("Seven-card stud")  # the players see this hand's game
    # A game that cannot be played: refused beside the game controls, nothing changed.
    for name in ("game.bring-in", "game-pad.5", "game-pad.0", "game.apply"):
        _tap(qtbot, d, name)
    qtbot.waitUntil(lambda: d.find("refusal.game") is not None, timeout=10000)
    assert "bring_in" in d.text("refusal.game") and _state(screen)["next_game"]["bring_in"] == 3
    _tap(qtbot, d, "page.table")
    _act(qtbot, screen, d, "action.bring_in")
    _act(qtbot, screen, d, "action.fold")
    _tap(qtbot, d, "action.fold")
    qtbot.waitUntil(lambda: _state(screen).get("phase") == "complete", timeout=10000)
    assert _state(screen)["game"]["variant"] == "F7S"  # the result shows under the hand's game
    _tap(qtbot, d, "hand.next")
    qtbot.waitUntil(lambda: _state(screen).get("hand_id") == 2, timeout=10000)
    assert _state(screen)["game"]["variant"] == "FR" and _state(screen)["game"]["small_bet"] == 10
    assert "Razz" in d.text("game-line") and monitor.game.text().startswith("Razz")
    # The hand log keeps hand 1 as stud; a restart replays it as stud.
    with sqlite3.connect(stack.store) as conn:
        assert [r[0] for r in conn.execute("SELECT variant FROM hands ORDER BY started_at")] == ["F7S"]
    stack.engine.stop()
    stack.engine.start()
    floor = stack.engine.service.core.floor
    assert [h.config.variant for h in floor.hands] == [Variant.STUD]
    assert floor.table.hand is not None and floor.table.hand.config.variant is Variant.RAZZ
