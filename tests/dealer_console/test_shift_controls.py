"""The shift's new controls on real widgets, driven by accessible name; commands captured by
``MemorySink`` exactly as the bus edge builds them (issue 21, items 1, 2, 5, 11)."""

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
from dealer_console.monitor import MonitorWindow
from dealer_console.scripted import scripted_hand


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


def _showdown() -> dict[str, Any]:
    return copy.deepcopy(next(s.state for s in scripted_hand() if s.state["phase"] == "showdown"))


def test_kill_at_the_showdown_is_a_report_and_its_refusal_shows_beside_it(screen: Any) -> None:
    _window, model, sink, d = screen
    state = _showdown()
    model.set_state(state)
    d.tap("showdown.kill")
    assert _sent(sink) == [("report", {"report": "showdown_kill", "seat": 3})]
    state["last_error"] = {"source": "console", "input": "report", "reason": "seat 3's hand is already out"}
    model.set_state(state)
    assert d.text("refusal.showdown") == "Not taken: seat 3's hand is already out"
    assert d.find("refusal.report") is None


def test_a_seat_change_is_two_taps_and_a_table_move(screen: Any, qtbot: Any) -> None:
    _window, model, sink, d = screen
    state = copy.deepcopy(next(s.state for s in scripted_hand() if s.state["phase"] == "complete"))
    model.set_state(state)
    taken = {s["seat"] for s in state["seats"] if s["name"]}
    source, target = min(taken), min(set(range(1, 9)) - taken)
    d.tap("page.seats")
    d.tap(f"seat.{source}.move")
    assert d.find(f"seat.{target}.sit-down") is None and d.usable(f"seat.{target}.move-here")
    d.tap(f"seat.{target}.move-here")
    assert _sent(sink) == [("table", {"op": "move", "seat": source, "to": target})]
    assert d.find(f"seat.{target}.sit-down") is not None  # back to the ordinary open seat
    # Cancel drops a move before a target is tapped.
    qtbot.wait(450)
    d.tap(f"seat.{source}.move")
    d.tap("seating.cancel")
    assert d.find(f"seat.{target}.move-here") is None and len(sink.sent) == 1


def test_a_shown_losing_hand_is_labelled_shown_on_both_screens(screen: Any, images: CardImages, qtbot: Any) -> None:
    _window, model, _sink, d = screen
    state = copy.deepcopy(next(s.state for s in scripted_hand() if s.state["phase"] == "complete"))
    shown_losers = [s for s in state["seats"] if s["status"] == "mucked" and s["shown"]]
    assert shown_losers, "the scripted hand's showdown has a losing hand shown"
    monitor = MonitorWindow(model, images=images)
    qtbot.addWidget(monitor)
    monitor.resize(1920, 1080)
    monitor.show()
    model.set_state(state)
    for s in shown_losers:
        assert d.find(f"seat.{s['seat']}.status").toolTip() == "SHOWN"  # type: ignore[union-attr]
        assert monitor.table.seats[s["seat"]].status.text() == "SHOWN"
    # A hand mucked unseen stays MUCKED.
    state["seats"][0].update(status="mucked", shown=[])
    model.set_state(state)
    assert monitor.table.seats[state["seats"][0]["seat"]].status.text() in ("MUCKED", "MUCK")


def _offline_prompt(state: dict[str, Any]) -> dict[str, Any]:
    from engine.citations import cite
    from engine.irregularities import BY_ID

    rule = BY_ID["source.offline"]
    state["prompts"] = [{"id": "p9", "rule": rule.id, "title": rule.title, "seats": [],
                         "text": rule.ruling.format(device="shoe-1"), "clause": cite(rule.clause),
                         "options": [{"id": "confirm", "label": "Confirm"}]}]
    return state


def test_a_prompt_to_key_cards_by_hand_leaves_the_manual_panel_usable(screen: Any, qtbot: Any) -> None:
    _window, model, sink, d = screen
    state = _offline_prompt(copy.deepcopy(next(s.state for s in scripted_hand() if s.state["phase"] == "dealing")))
    model.set_state(state)
    qtbot.waitUntil(lambda: d.find("prompt.text") is not None, timeout=2000)  # a new card is shown on the next loop
    assert "key in cards by hand" in d.text("prompt.text")
    assert d.text("prompt.clause") == "Rule: studtable: sensor offline"
    assert d.find("report.misdeal") is None  # the reports wait for the ruling
    assert d.usable("manual.pick")
    d.tap("manual.pick")
    assert d.usable("card-picker.Ah")
    due = next(x for x in state["next_deal"] if x["kind"] == "card")
    d.tap("card-picker.Ah")
    assert _sent(sink) == [("manual_card", {"seat": due["seat"], "card": "Ah", "face_up": due["face_up"]})]


def test_rulings_and_refusals_cite_robert_s_rules_in_words(screen: Any, qtbot: Any) -> None:
    _window, model, _sink, d = screen
    state = _showdown()
    state["prompts"] = [{"id": "p2", "rule": "stud.exposed-holecard", "title": "t", "seats": [3], "text": "x",
                         "clause": "001 stud 5; 002 8.1; 000 stud 1", "options": []}]  # an older engine's clause
    state["last_error"] = {"source": "console", "input": "show", "reason": "seat 3 cannot show [RRoP 3.6 cards speak]"}
    model.set_state(state)
    qtbot.waitUntil(lambda: d.find("prompt.clause") is not None, timeout=2000)
    assert d.text("prompt.clause") == "Rule: Robert's Rules, seven-card stud, rule 5"
    d.tap("showdown.show")  # refused again, the same words: the refusal shows again
    state = copy.deepcopy(state)
    state["input"] = {"source": "console", "session": 1, "seq": 2}
    model.set_state(state)
    assert d.text("refusal.showdown") == ("Not taken: seat 3 cannot show "
                                          "[Robert's Rules, the showdown, section 3.6 (cards speak)]")
