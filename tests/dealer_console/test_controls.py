"""The dealer's touch controls on real widgets, driven by accessible name (``ConsoleDriver``):
showdown, the card picker, the manual card's wrong-seat question, refusals beside their
control, and the double-tap guard.  Commands are captured by ``MemorySink`` exactly as the
bus edge would build them."""

from __future__ import annotations

import copy
from collections.abc import Iterator
from typing import Any

import pytest

from dealer_console.cards import CardImages
from dealer_console.console import ConsoleWindow
from dealer_console.driver import ConsoleDriver
from dealer_console.edge import Commands, MemorySink
from dealer_console.model import TableModel
from dealer_console.scripted import scripted_hand
from engine import wire
from engine.wire import Channel


def _msg(state: dict[str, Any], n: int = 1) -> wire.Message:
    return wire.make("t1", Channel.STATE, "state", source="engine", session=1, seq=n, state=state)


@pytest.fixture
def screen(qtbot: Any, images: CardImages) -> Iterator[tuple[ConsoleWindow, TableModel, MemorySink, ConsoleDriver]]:
    model = TableModel(self_device="console")
    sink = MemorySink()
    window = ConsoleWindow(model, Commands(sink), images=images)
    qtbot.addWidget(window)
    window.resize(1280, 800)
    window.show()
    model.set_broker(True)
    model.health.availability("engine", True)
    model.healthChanged.emit()
    yield window, model, sink, ConsoleDriver(window)


def _sent(sink: MemorySink) -> list[tuple[str, dict[str, Any]]]:
    return [(m.kind, dict(m.body)) for m in sink.sent]


def test_showdown_show_as_dealt_key_on_the_picker_or_muck(screen: Any, qtbot: Any) -> None:
    _window, model, sink, d = screen
    state = next(s.state for s in scripted_hand() if s.state["phase"] == "showdown")
    model.set_state(state)
    assert d.text("showdown.seat") == "Seat 3 Chen to show"
    assert d.find("action.call") is None  # no betting buttons at a showdown
    d.tap("showdown.show")
    qtbot.wait(450)
    d.tap("showdown.pick")
    assert "3 down cards" in d.text("card-picker.title")
    for code in ("Qs", "Jd", "Tc"):
        d.tap(f"card-picker.{code}")
    assert not d.usable("card-picker.Qs")  # a card picked once cannot be picked twice
    d.tap("card-picker.done")
    assert d.find("card-picker.done") is None  # back to the table
    qtbot.wait(450)
    d.tap("showdown.muck")
    assert _sent(sink) == [("show", {"seat": 3, "cards": []}), ("show", {"seat": 3, "cards": ["Qs", "Jd", "Tc"]}),
                           ("muck", {"seat": 3})]


def test_a_refusal_is_shown_beside_the_control_that_caused_it(screen: Any) -> None:
    _window, model, _sink, d = screen
    state = copy.deepcopy(next(s.state for s in scripted_hand() if s.state["phase"] == "showdown"))
    model.set_state(state)
    d.tap("showdown.show")
    reason = "seat 3's down cards were not all identified when dealt: key the shown cards"
    state["last_error"] = {"source": "console", "input": "show", "reason": reason}
    model.set_state(state)
    assert d.text("refusal.showdown") == f"Not taken: {reason}"
    assert d.find("refusal.action") is None and d.find("refusal.seating") is None
    # Another console's refusal is not this dealer's.
    state["last_error"] = {"source": "console-2", "input": "action", "reason": "seat 9 is not in this hand"}
    model.set_state(state)
    assert d.find("refusal.action") is None


def test_manual_card_preset_to_the_seat_due_and_a_wrong_seat_questioned(screen: Any) -> None:
    window, model, sink, d = screen
    dealing = next(s.state for s in scripted_hand() if s.label == "deal seat 3" and s.state["street_index"] == 1)
    due = dealing["next_deal"][0]
    model.set_state(dealing)
    assert d.text("manual.seat") == f"Seat {due['seat']}"
    assert window.manual.up.isChecked() is bool(due["face_up"])
    d.tap("manual.pick")
    d.tap("card-picker.Ah")
    assert _sent(sink)[-1] == ("manual_card", {"seat": due["seat"], "card": "Ah", "face_up": bool(due["face_up"])})
    # The next seat is not due the card: the console asks before it sends anything.
    d.tap("manual.seat.next")
    d.tap("manual.pick")
    d.tap("card-picker.Kd")
    assert len(sink.sent) == 1 and "is due to seat" in d.text("manual.question")
    d.tap("manual.confirm-seat")
    assert sink.sent[-1].body["card"] == "Kd" and sink.sent[-1].body["seat"] != due["seat"]
    assert d.find("manual.question") is None


def test_a_double_tap_is_one_action_and_the_next_players_buttons_wait_for_the_finger(screen: Any) -> None:
    window, model, sink, d = screen
    steps = scripted_hand()
    i = next(k for k, s in enumerate(steps) if s.label == "seat 3 complete")
    model.set_state(steps[i].state)  # seat 5 to act: Fold, Call 5, Raise 10
    d.double_tap("action.call")
    assert [m.body["seat"] for m in sink.sent] == [5] and window.tap_guard.swallowed >= 1
    # The next state arrives while the finger is still down: the old buttons stay until it lifts.
    from PySide6.QtCore import QPoint, Qt
    from PySide6.QtTest import QTest

    button = d.find("action.fold")
    assert button is not None
    QTest.mousePress(button, Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier, QPoint(5, 5))
    model.set_state(steps[i + 1].state)
    held = [b.option.label for b in window.action_bar.buttons]
    QTest.mouseRelease(button, Qt.MouseButton.LeftButton, Qt.KeyboardModifier.NoModifier, QPoint(200, -400))
    assert held == [o["label"] for o in steps[i].state["options"]]
    from PySide6.QtWidgets import QApplication

    deadline = 50
    while [b.option.label for b in window.action_bar.buttons] == held and deadline:
        QApplication.processEvents()
        QTest.qWait(20)
        deadline -= 1
    assert [b.option.label for b in window.action_bar.buttons] == [o["label"] for o in steps[i + 1].state["options"]]


def test_every_control_named_in_the_docs_exists(screen: Any) -> None:
    """The names docs/console.md promises are the names on the screen."""
    window, _model, _sink, _d = screen
    from pathlib import Path

    from PySide6.QtWidgets import QWidget

    names = {w.accessibleName() for w in window.findChildren(QWidget)}
    for name in ("page.table", "page.seats", "showdown.show", "showdown.muck", "showdown.pick", "card-picker.Ah",
                 "card-picker.2c", "card-picker.unknown", "manual.pick", "manual.confirm-seat", "seat.3.sit-down",
                 "seat.3.leave", "keyboard.A", "numpad.7", "seating.confirm", "hand.next", "refusal.action",
                 "report.misdeal", "report.seat", "banner", "announcements", "game-line"):
        assert name in names, name
        assert f"`{name.split('.')[0]}" in Path("docs/console.md").read_text("utf-8")


def test_the_common_card_is_keyed_when_it_is_the_card_due(screen: Any) -> None:
    """RRoP stud 15 on a manual table: the engine's next card due is the common card; the panel
    says so, seat stepping and "down" are off, and the card picked goes to the centre."""
    window, model, sink, d = screen
    dealing = copy.deepcopy(next(s.state for s in scripted_hand() if s.label == "deal seat 3"
                                 and s.state["street_index"] == 1))
    dealing["next_deal"] = [{"kind": "common", "seat": None, "face_up": True}]
    model.set_state(dealing)
    assert d.text("manual.seat") == "Common card"
    assert not d.usable("manual.seat.next") and not d.usable("manual.down")
    d.tap("manual.pick")
    assert "common card" in d.text("card-picker.title")
    d.tap("card-picker.As")
    assert _sent(sink) == [("manual_card", {"seat": None, "card": "As", "face_up": True, "common": True})]
    # Once it is dealt the panel is a seat's again, and the table shows the common card.
    assert "Common card" not in window.table.center.text()
    dealing["next_deal"] = [{"kind": "card", "seat": 2, "face_up": True}]
    dealing["common"] = ["As"]
    model.set_state(dealing)
    assert d.text("manual.seat") == "Seat 2" and d.usable("manual.seat.next")
    assert "Common card: As" in window.table.center.text()
