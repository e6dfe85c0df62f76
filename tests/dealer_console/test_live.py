"""The real console offscreen, driven by its controls' accessible names, against a real engine
and broker (the demo table's stack: amqtt, the engine service, the shoe on a pty through the
bridge): seats taken and left between hands, a buy-in refused beside the seating
controls, sitting out and in, Next hand, and a double tap taken once."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from dealer_console.demo.options import DemoOptions
from dealer_console.demo.run import ConsoleScreen
from dealer_console.demo.stack import TableStack
from dealer_console.driver import ConsoleDriver


@pytest.fixture
def live(qtbot: Any) -> Iterator[tuple[TableStack, ConsoleScreen, ConsoleDriver]]:
    opts = DemoOptions(players=2, camera=False, seed=11)
    opts.check()
    stack = TableStack(opts).start()
    screen = ConsoleScreen(stack, opts)
    try:
        qtbot.waitUntil(lambda: screen.model.controls_enabled and bool(screen.model.snapshot.seats), timeout=15000)
        yield stack, screen, ConsoleDriver(screen.window)
    finally:
        screen.stop()
        stack.stop()


def _seat(screen: ConsoleScreen, n: int) -> Any:
    return screen.model.snapshot.seat(n)


def _type(d: ConsoleDriver, prefix: str, text: str) -> None:
    for ch in text:
        d.tap(f"{prefix}.{ch}")


def test_seating_and_chips_from_the_touch_screen(live: Any, qtbot: Any) -> None:
    _stack, screen, d = live
    d.tap("page.seats")
    # An empty seat: name on the on-screen keyboard, a short buy-in (20 < 100) on the number pad.
    d.tap("seat.3.sit-down")
    _type(d, "keyboard", "ZED")
    _type(d, "numpad", "20")
    assert d.text("seating.name") == "ZED" and d.text("seating.amount") == "20"
    d.tap("seating.confirm")
    qtbot.waitUntil(lambda: _seat(screen, 3) is not None and _seat(screen, 3).name == "Zed", timeout=10000)
    assert _seat(screen, 3).stack == 20
    # Add chips, then leave.
    qtbot.waitUntil(lambda: d.find("seat.3.add-chips") is not None, timeout=5000)
    d.tap("seat.3.add-chips")
    _type(d, "numpad", "80")
    d.tap("seating.confirm")
    qtbot.waitUntil(lambda: _seat(screen, 3).stack == 100, timeout=10000)
    qtbot.wait(450)  # the tap guard: a finger's next tap on the same spot
    d.tap("seat.3.leave")
    qtbot.waitUntil(lambda: _seat(screen, 3) is None or not _seat(screen, 3).name, timeout=10000)
    # Coming back short is refused (RRoP 2.2: back with what he left with; 3.1: one short buy-in),
    # in the engine's words, beside the form.
    qtbot.wait(450)
    d.tap("seat.3.sit-down")
    _type(d, "keyboard", "ZED")
    _type(d, "numpad", "20")
    d.tap("seating.confirm")
    qtbot.waitUntil(lambda: d.find("refusal.seating") is not None, timeout=10000)
    assert d.text("refusal.seating").startswith("Not taken: ") and "buy-in" in d.text("refusal.seating")
    assert _seat(screen, 3) is None or not _seat(screen, 3).name  # nothing changed
    # Sitting out and back in.
    d.tap("seat.1.sit-out")
    qtbot.waitUntil(lambda: _seat(screen, 1).status == "sitting_out", timeout=10000)
    qtbot.wait(450)
    d.tap("seat.1.sit-in")
    qtbot.waitUntil(lambda: _seat(screen, 1).status != "sitting_out", timeout=10000)
    # Next hand, from the table page: a double tap deals one hand, not two.
    d.tap("page.table")
    hands = screen.model.raw_state.get("hands_played", 0)
    d.double_tap("hand.next")
    qtbot.waitUntil(lambda: screen.model.snapshot.phase == "dealing", timeout=10000)
    qtbot.wait(300)
    assert screen.model.raw_state.get("hands_played") == hands + 1
    assert screen.window.tap_guard.swallowed >= 1
    # While dealing, the seating controls are locked: seats change between hands only.
    d.tap("page.seats")
    assert not d.usable("seat.1.leave")
