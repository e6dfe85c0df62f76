"""The monitor shows no hole card; history replay steps; deck enrollment; screenshots; the None guard."""

from __future__ import annotations

import copy
import sys
from pathlib import Path
from typing import Any

from PySide6.QtWidgets import QLabel, QWidget

from dealer_console import qtguard
from dealer_console.cards import CardImages, card_name
from dealer_console.edge import SUBSCRIPTIONS
from dealer_console.enroll import EnrollWizard
from dealer_console.history import MemoryHistory
from dealer_console.history_view import HistoryBrowser
from dealer_console.model import TableModel
from dealer_console.monitor import MonitorWindow
from dealer_console.scripted import HOLE_AND_BOARD, hand_events
from engine.cards import DECK
from engine.wire import Channel, Role


def visible_strings(root: QWidget) -> list[str]:
    """Every text, tooltip and accessible name of every widget below ``root``."""
    out: list[str] = []
    for w in [root, *root.findChildren(QWidget)]:
        out += [w.toolTip(), w.accessibleName()]
        if isinstance(w, QLabel):
            out.append(w.text())
    return [s for s in out if s]


def hole_cards_not_shown(state: dict[str, Any]) -> list[str]:
    shown = {c for s in state["seats"] for c in s["shown"]}
    return [c for seat, cards in HOLE_AND_BOARD.items() for i, c in enumerate(cards)
            if i in (0, 1, 6) and c not in shown]


def test_monitor_never_shows_a_down_card(qtbot: Any, recorded: list[dict[str, Any]], images: CardImages) -> None:
    model = TableModel()
    window = MonitorWindow(model, images=images)
    qtbot.addWidget(window)
    window.resize(1920, 1080)
    window.show()
    assert Channel.PROMPT not in SUBSCRIPTIONS[Role.MONITOR] and Channel.SHOE not in SUBSCRIPTIONS[Role.MONITOR]
    checked = 0
    for rec in recorded:
        state = copy.deepcopy(rec["state"])
        # A state that (wrongly) names every down card: the monitor must still draw backs.
        for seat in state["seats"]:
            down = [c for i, c in enumerate(HOLE_AND_BOARD[seat["seat"]]) if i in (0, 1, 6)]
            for entry in seat["cards"]:
                if not entry["up"] and entry["card"] == "??" and down:
                    entry["card"] = down.pop(0)
        model.set_state(state)
        strings = " | ".join(visible_strings(window))
        for code in hole_cards_not_shown(rec["state"]):
            assert card_name(code) not in strings and f" {code}" not in strings, (rec["label"], code)
            checked += 1
        backs = sum(1 for s in window.table.seats.values() for lbl in s.cards[: s.shown_cards]
                    if lbl.toolTip() == "down card")
        expected = sum(s["down_count"] for s in rec["state"]["seats"] if not s["shown"])
        assert backs == expected, rec["label"]
    assert checked > 100
    # at showdown the shown cards are public and are drawn
    final = " | ".join(visible_strings(window))
    assert card_name("5h") in final and card_name("Qs") in final


def test_monitor_shows_up_cards_pot_and_who_acts(qtbot: Any, recorded: list[dict[str, Any]], images: CardImages) -> None:
    model = TableModel()
    window = MonitorWindow(model, images=images)
    qtbot.addWidget(window)
    window.resize(1920, 1080)
    window.show()
    model.set_state(next(r["state"] for r in recorded if r["label"] == "seat 6 raise"))
    strings = " | ".join(visible_strings(window))
    for code in ("Kh", "Kc", "9s", "9h", "Ad", "Ts"):
        assert card_name(code) in strings
    assert "48" in window.table.center.text() and "Seat 1 Ava to act" in window.table.center.text()
    # The newest announcement first and brightest, the one before it below (a short history).
    lines = window.announce.text().split("<br>")
    assert window.table.seats[1].acting and "Raise: seat 6 to 10" in lines[0] and "Seat 3 bets 5" in lines[1]
    assert window.table.bets[6].text() == "10" and window.table.bets[6].isVisibleTo(window.table)


def test_history_replay_steps_show_the_pot(qtbot: Any, images: CardImages) -> None:
    browser = HistoryBrowser(MemoryHistory({"1": hand_events()}), images)
    qtbot.addWidget(browser)
    browser.reload()
    assert browser.hands.count() == 1 and browser.step_list.count() == len(hand_events()) + 1  # + the result
    row = next(i for i, s in enumerate(browser.steps) if s.text == "Seat 6 (Eli) raises to 10")
    browser.step_list.setCurrentRow(row)
    assert browser.pot.text() == "Pot 48 · fourth street"
    browser.next.click()
    assert browser.pot.text() == "Pot 58 · fourth street" and "Seat 1 (Ava) calls 10" in browser.step_text.text()
    browser.prev.click()
    browser.prev.click()
    assert browser.pot.text() == "Pot 38 · fourth street"
    assert "48" in browser.table.center.text() or "38" in browser.table.center.text()


def test_history_without_a_log_says_so(qtbot: Any, images: CardImages) -> None:
    browser = HistoryBrowser(None, images)
    qtbot.addWidget(browser)
    browser.reload()
    assert "no connection to the engine" in browser.message.text() and browser.hands.count() == 0


class FakeShoe:
    def __init__(self) -> None:
        self.on_tag: Any = None
        self.stopped = False

    def start(self, on_tag: Any) -> None:
        self.on_tag = on_tag

    def stop(self) -> None:
        self.stopped = True


def test_enrollment_wizard_walks_the_deck(qtbot: Any, tmp_path: Path, images: CardImages) -> None:
    shoe = FakeShoe()
    wizard = EnrollWizard(images, lambda: shoe, tmp_path)
    qtbot.addWidget(wizard)
    wizard.name.setText("red-1")
    wizard.start_button.click()
    assert "Ace of clubs" in wizard.prompt.text() or str(DECK[0]) in wizard.prompt.text()
    first = wizard.expected()
    wizard.skip_card()  # that card is not at hand
    assert wizard.expected() != first
    for i in range(51):
        shoe.on_tag(bytes([4, 1, 2, i]))
    qtbot.waitUntil(lambda: wizard.progress.value() == 51, timeout=2000)
    assert wizard.expected() == first  # the skipped card is asked for last
    shoe.on_tag(bytes([4, 1, 2, 7]))  # a tag read twice
    qtbot.waitUntil(lambda: wizard.log.count() > 52, timeout=2000)
    assert "already enrolled" in wizard.log.item(0).text() and wizard.progress.value() == 51
    wizard.save.click()
    assert "1 missing" in wizard.prompt.text() and str(first) in wizard.prompt.text()
    shoe.on_tag(bytes([4, 1, 2, 99]))
    qtbot.waitUntil(lambda: wizard.progress.value() == 52, timeout=2000)
    wizard.save.click()
    assert (tmp_path / "red-1.json").exists() and shoe.stopped


def test_screenshots_command_writes_pngs(tmp_path: Path) -> None:
    from PySide6.QtGui import QImage

    from dealer_console.screenshots import render

    paths = render(tmp_path)
    names = {p.stem for p in paths}
    assert {"console-bring-in", "console-prompt", "console-showdown", "monitor-bring-in", "monitor-showdown"} <= names
    for p in paths:
        img = QImage(str(p))
        assert not img.isNull() and img.width() >= 1000


def test_none_guard_keeps_long_sessions_alive(qtbot: Any) -> None:
    label = QLabel()
    qtbot.addWidget(label)
    for _ in range(30000):  # without the guard, a leaking PySide6 aborts the interpreter here
        label.setText("x")
    assert sys.getrefcount(None) > 30000
    assert qtguard.apply() is qtguard._applied  # idempotent
