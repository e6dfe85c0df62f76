"""Small screens (issue 21, 10): the real console offscreen at 1024x600 and 1280x800, every tappable
control measured as drawn (buttons, pickers, the card picker's 52 cards, list rows) on every page
and in every state a shift goes through: at least 48 px high, and the window's minimum never above
the screen, so nothing is pushed off it."""

from __future__ import annotations

import copy
from collections.abc import Iterator
from typing import Any

import pytest
from PySide6.QtWidgets import QAbstractButton, QApplication, QComboBox, QLineEdit, QListWidget, QWidget

from dealer_console.cards import CardImages
from dealer_console.console import PAGES, ConsoleWindow
from dealer_console.controls import ROW_PX
from dealer_console.edge import Commands, MemorySink
from dealer_console.model import TableModel
from dealer_console.scripted import exposed_card_prompt, scripted_hand

SIZES = [(1024, 600), (1280, 800)]


def tappable_heights(window: QWidget) -> list[tuple[str, int]]:
    """Every visible control a finger can tap, with its drawn height (list rows one by one)."""
    out: list[tuple[str, int]] = []
    for w in window.findChildren(QWidget):
        if not w.isVisible():
            continue
        name = w.accessibleName() or w.objectName() or type(w).__name__
        if isinstance(w, QAbstractButton | QComboBox | QLineEdit):
            out.append((name, w.height()))
        elif isinstance(w, QListWidget):
            out += [(f"{name}[{i}]", w.visualItemRect(w.item(i)).height()) for i in range(w.count())]
    return out


@pytest.fixture(params=SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
def sized(request: Any, qtbot: Any, images: CardImages) -> Iterator[tuple[ConsoleWindow, TableModel, tuple[int, int]]]:
    from dealer_console.history import MemoryHistory
    from dealer_console.scripted import hand_events

    model = TableModel(self_device="console")
    window = ConsoleWindow(model, Commands(MemorySink()), images=images, history=MemoryHistory({"1": hand_events()}))
    qtbot.addWidget(window)
    window.show()
    QApplication.processEvents()  # the first layout, then the screen's size (as full screen on it)
    size = request.param
    window.resize(*size)
    model.set_broker(True)
    model.health.availability("engine", True)
    model.healthChanged.emit()
    yield window, model, size


def _states() -> list[tuple[str, dict[str, Any]]]:
    hand = scripted_hand()
    states = [(s.label, s.state) for s in hand]
    states.append(("prompt", exposed_card_prompt(next(s.state for s in hand if s.label == "seat 3 complete"))))
    return states


def test_every_tappable_control_is_48_px_high_and_nothing_leaves_the_screen(sized: Any, qtbot: Any) -> None:
    window, model, size = sized
    w, h = size
    seen: dict[str, int] = {}
    short: dict[str, tuple[int, str]] = {}

    def measure(where: str) -> None:
        QApplication.processEvents()
        hint = window.minimumSizeHint()
        assert hint.width() <= w and hint.height() <= h, f"{where}: the window needs {hint.width()}x{hint.height()}"
        assert (window.width(), window.height()) == size, f"{where}: the window grew to {window.size()}"
        for name, height in tappable_heights(window):
            seen[name] = min(height, seen.get(name, height))
            if height < ROW_PX:
                short.setdefault(name, (height, where))

    for label, state in _states():
        model.set_state(state)
        for i, page in enumerate(PAGES):
            window.show_page(i)
            measure(f"{label}, page {page}")
        window.show_page(0)
    # The card picker at the showdown, the seating form with its keyboard and number pad.
    showdown = next(s for label, s in _states() if s["phase"] == "showdown")
    model.set_state(copy.deepcopy(showdown))
    window.showdown.pick_button.click()
    measure("card picker")
    assert sum(1 for n in seen if n.startswith("card-picker.") and len(n) == 14) == 52
    window.picker.cancel.click()
    model.set_state(next(s for label, s in _states() if s["phase"] == "complete"))
    window.show_page(PAGES.index("Seats"))
    window.seating._tap(next(n for n in range(1, 9) if model.snapshot.seat(n) is None), "sit-down")
    measure("seating form")
    assert any(n.startswith("keyboard.") for n in seen) and any(n.startswith("numpad.") for n in seen)
    # The lock banners take room too.
    window.show_page(0)
    model.set_broker(False)
    measure("broker down")
    model.set_broker(True)
    model.health.availability("engine", False)
    model.healthChanged.emit()
    measure("engine down")
    assert not short, f"controls under {ROW_PX} px at {w}x{h}: {short}"
    assert len(seen) > 100  # the measure saw the console's controls, not an empty window
    assert any("[" in n for n in seen), "the history page's list rows were measured"


def test_the_game_line_and_hand_number_stay_legible(sized: Any) -> None:
    window, model, size = sized
    state = next(s.state for s in scripted_hand() if s.state["phase"] == "betting")
    model.set_state(state)
    QApplication.processEvents()
    line = window.game
    assert f"hand {state['hand_id']}" in line.text()
    assert line.fontMetrics().horizontalAdvance(line.text()) <= line.width(), (size, line.text(), line.width())
    assert line.font().pixelSize() >= 15
