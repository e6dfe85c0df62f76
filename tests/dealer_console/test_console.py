"""The dealer console on real widgets: following a recorded hand, commands out, prompts, health."""

from __future__ import annotations

import copy
import html
from collections.abc import Iterator
from typing import Any

import pytest
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLabel

from dealer_console.cards import CardImages
from dealer_console.console import ConsoleWindow, parse_manual_card
from dealer_console.driver import ConsoleDriver
from dealer_console.edge import Commands, MemorySink
from dealer_console.model import TableModel
from dealer_console.scripted import ACTIONS, exposed_card_prompt
from engine import wire
from engine.wire import Channel


class Seq:
    n = 0


def state_msg(state: dict[str, Any]) -> wire.Message:
    Seq.n += 1
    return wire.make("t1", Channel.STATE, "state", source="engine", session=1, seq=Seq.n, state=state)


def avail(device: str, online: bool) -> wire.Message:
    return wire.decode(wire.topic("t1", Channel.AVAIL, device), b"online" if online else b"offline")


@pytest.fixture
def console(qtbot: Any, images: CardImages) -> Iterator[tuple[ConsoleWindow, TableModel, MemorySink]]:
    model = TableModel(self_device="console")
    sink = MemorySink()
    window = ConsoleWindow(model, Commands(sink), images=images)
    qtbot.addWidget(window)
    window.resize(1280, 800)
    window.show()
    model.set_broker(True)
    model.apply_message(avail("engine", True))
    yield window, model, sink


def _bodies(sink: MemorySink) -> list[tuple[str, dict[str, Any]]]:
    return [(m.kind, dict(m.body)) for m in sink.sent]


def test_follows_the_scripted_hand_and_sends_each_action(console: Any, recorded: list[dict[str, Any]]) -> None:
    """Every decision of the recorded hand is made by pressing the button with the engine's label."""
    window, model, sink = console
    expected: list[dict[str, Any]] = []
    for i, rec in enumerate(recorded):
        model.apply_message(state_msg(rec["state"]))
        snap = model.snapshot
        buttons = window.action_bar.buttons
        assert [b.text() for b in buttons] == [o["label"] for o in rec["state"]["options"]]
        seat_widget = window.table.seats.get(snap.to_act) if snap.to_act else None
        if rec["state"]["phase"] == "betting":
            assert seat_widget is not None and seat_widget.acting
            assert all(not w.acting for n, w in window.table.seats.items() if n != snap.to_act)
        nxt = recorded[i + 1]["event"] if i + 1 < len(recorded) else None
        if nxt and nxt["type"] == "player_action":
            amount = nxt["amount"]
            match = [b for b in buttons if b.option.action == nxt["action"]
                     and (amount is None or b.option.amount == amount)]
            assert len(match) == 1, (rec["label"], nxt)
            match[0].click()
            expected.append({"seat": nxt["seat"], "action": nxt["action"], "amount": amount})
        shown = html.unescape(window.announce.text())
        assert all(part in shown for part in snap.announcement.split("  ") if part), (shown, snap.announcement)
    assert [b for k, b in _bodies(sink)] == expected
    assert all(k == "action" for k, _ in _bodies(sink)) and len(expected) == sum(map(len, ACTIONS))


def test_keyboard_shortcuts_press_the_option(console: Any, recorded: list[dict[str, Any]], qtbot: Any) -> None:
    window, model, sink = console
    window.activateWindow()
    qtbot.waitActive(window)
    model.apply_message(state_msg(next(r["state"] for r in recorded if "bring_in" in r["tags"])))
    qtbot.keyClick(window, Qt.Key.Key_B)
    model.apply_message(state_msg(next(r["state"] for r in recorded if r["label"] == "seat 2 bring_in")))
    qtbot.keyClick(window, Qt.Key.Key_F)
    qtbot.keyClick(window, Qt.Key.Key_3)  # third button: Complete to 5
    assert [b for _, b in _bodies(sink)] == [
        {"seat": 2, "action": "bring_in", "amount": 2},
        {"seat": 3, "action": "fold", "amount": None},
        {"seat": 3, "action": "complete", "amount": 5},
    ]


def test_prompt_appears_resolves_and_sends_the_ruling(console: Any, recorded: list[dict[str, Any]]) -> None:
    window, model, sink = console
    base = next(r["state"] for r in recorded if r["label"] == "seat 3 complete")
    model.apply_message(state_msg(exposed_card_prompt(base)))
    assert len(window.prompts.cards) == 1
    card = window.prompts.cards[0]
    texts = [lbl.text() for lbl in card.findChildren(QLabel)]
    assert any("Seat 5's hole card was dealt face up" in t for t in texts)
    # The rule in words, never the project's seed numbers (issue 21, 8).
    assert any("Robert's Rules, seven-card stud, rule 5" in t for t in texts)
    assert not any("001 stud 5" in t for t in texts)
    assert window.table.seats[5].flagged  # the seat involved is marked on the table
    assert window.table.isVisible() and window.prompts.isVisible()  # beside the table, not over it
    card.buttons[0].click()
    assert _bodies(sink)[-1] == ("ruling", {"prompt": "p17", "option": "confirm"})
    assert not any(b.isEnabled() for b in card.buttons)  # one ruling per prompt
    model.apply_message(state_msg(base))  # the engine closed it
    assert window.prompts.cards == [] and window.prompts.none.isVisibleTo(window.prompts)
    assert not window.table.seats[5].flagged


def test_prompt_from_the_dealer_prompt_channel(console: Any) -> None:
    window, model, sink = console
    msg = wire.make("t1", Channel.PROMPT, "prompts", source="engine", session=1, seq=99,
                    open=[{"prompt": "p-2", "text": "Two cards of the same rank and suit.", "options": ["void"],
                           "labels": ["Void all action"], "rule": "RRoP 3.3"}])
    model.apply_message(msg)
    assert [b.text() for b in window.prompts.cards[0].buttons] == ["Void all action"]
    window.prompts.cards[0].buttons[0].click()
    assert _bodies(sink) == [("ruling", {"prompt": "p-2", "option": "void"})]


def test_engine_offline_shows_banner_and_locks_controls(console: Any, recorded: list[dict[str, Any]]) -> None:
    window, model, sink = console
    model.apply_message(state_msg(next(r["state"] for r in recorded if "bring_in" in r["tags"])))
    assert not window.banner.isVisibleTo(window)
    model.apply_message(avail("engine", False))
    assert window.banner.isVisibleTo(window)
    assert not window.action_bar.isEnabled() and not window.reports.isEnabled() and not window.manual.isEnabled()
    window.action_bar.buttons[0].click()
    window.reports.buttons["misdeal"].click()
    assert sink.sent == []
    assert "OFFLINE" in window.health_strip.pills["Engine"].text()
    model.apply_message(avail("engine", True))
    assert not window.banner.isVisibleTo(window) and window.action_bar.isEnabled()
    window.action_bar.buttons[0].click()
    assert len(sink.sent) == 1
    model.set_broker(False)  # our own broker link gone: the engine is unreachable too
    assert window.banner.isVisibleTo(window) and not window.action_bar.isEnabled()


def test_health_strip_reacts_to_availability(console: Any) -> None:
    window, model, _ = console
    model.apply_message(avail("cam-2", True))
    assert "cam-2" in window.health_strip.pills and window.health_strip.pills["cam-2"].property("online")
    model.apply_message(avail("cam-2", False))
    pill = window.health_strip.pills["cam-2"]
    assert "OFFLINE" in pill.text() and not pill.property("online")


def test_reports_and_manual_card_send_commands(console: Any, recorded: list[dict[str, Any]]) -> None:
    window, model, sink = console
    model.apply_message(state_msg(next(r["state"] for r in recorded if "bring_in" in r["tags"])))
    assert window.reports.current_seat() == 2  # defaults to the seat to act
    window.reports.seat.setCurrentIndex(window.reports.seat.findData(5))
    window.reports.buttons["player_absent"].click()
    window.reports.buttons["misdeal"].click()
    # The manual card on the touch picker: seat 3 (stepped to), down, the king of clubs.
    d = ConsoleDriver(window)
    while d.text("manual.seat") != "Seat 3":
        d.tap("manual.seat.next")
    d.tap("manual.down")
    d.tap("manual.pick")
    assert d.find("card-picker.Kc") is not None and d.find("card-picker.unknown") is not None
    d.tap("card-picker.Kc")
    assert d.find("card-picker.Kc") is None  # the picker closed; the table is back
    assert _bodies(sink) == [
        ("report", {"report": "player_absent", "seat": 5}),
        ("report", {"report": "misdeal", "seat": None}),
        ("manual_card", {"seat": 3, "card": "Kc", "face_up": False}),
    ]


def test_parse_manual_card() -> None:
    assert parse_manual_card(" 10h ") == "Th" and parse_manual_card("??") == "??" and parse_manual_card("aS") == "As"
    with pytest.raises(ValueError, match="not a card"):
        parse_manual_card("1x")


def test_console_never_sends_for_a_seat_not_to_act(console: Any, recorded: list[dict[str, Any]]) -> None:
    window, model, sink = console
    state = copy.deepcopy(next(r["state"] for r in recorded if r["label"] == "deal seat 1"))
    model.apply_message(state_msg(state))  # dealing: nobody acts
    assert window.action_bar.buttons == [] and "Dealing" in window.action_bar.idle.text()
    assert sink.sent == []
