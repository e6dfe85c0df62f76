"""The console's history page over the bus, driven by accessible name offscreen (pytest-qt), against
a real engine service on each real broker: the dealer plays a hand to the showdown from the
console's buttons (the shoe's cards come in on the bridge's channel), then finds it on the
history page by hand number, seat and player, steps through it (time and source on every step,
burns as cards, the result with the shown losing hands, nothing cut), exports it, and sees the
next, live hand without any down card.  The console never opens the engine's store."""

from __future__ import annotations

import json
import random
import tomllib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import QRect, Qt
from PySide6.QtGui import QFontMetrics
from PySide6.QtWidgets import QListWidget

from dealer_console.cards import CardImages
from dealer_console.console import ConsoleWindow
from dealer_console.driver import ConsoleDriver
from dealer_console.edge import BusEdge, BusHistory, Commands
from dealer_console.model import TableModel
from engine.cards import DECK
from engine.service import EngineService
from engine.wire import Role
from tests.engine.edge.test_service import TABLE, client, draw, engine_config


class Screen:
    def __init__(self, broker: Any, export_dir: Path) -> None:
        user, password = broker.login(Role.CONSOLE, "console-1")
        self.edge = BusEdge(host=broker.host, port=broker.port, username=user, password=password, table=TABLE,
                            role=Role.CONSOLE, device="console-1")
        self.model = TableModel(engine_device="engine", self_device="console-1")
        self.edge.received.connect(self.model.apply_message)
        self.edge.connectionChanged.connect(self.model.set_broker)
        self.window = ConsoleWindow(self.model, Commands(self.edge), images=CardImages("anglo"),
                                    history=BusHistory(self.edge), export_dir=str(export_dir), tap_guard_s=0.0)
        self.window.resize(1280, 800)
        self.edge.start()
        self.window.show()


@pytest.fixture(params=["mosquitto", "amqtt"])
def table(request: pytest.FixtureRequest, qtbot: Any, tmp_path: Path) -> Iterator[Any]:
    broker = request.getfixturevalue(f"{request.param}_broker")
    service = EngineService(engine_config(broker, tmp_path / "engine.db")).start()
    bridge = client(broker, "bridge", "shoe-1")
    screen = Screen(broker, tmp_path / "exports")
    try:
        qtbot.waitUntil(lambda: screen.model.controls_enabled and bool(screen.model.snapshot.seats), timeout=15000)
        yield service, bridge, screen, ConsoleDriver(screen.window), tmp_path / "exports"
    finally:
        screen.edge.stop()
        screen.window.close()
        bridge.stop()
        service.stop()


BETS = ("action.check", "action.call", "action.bring_in")


def _after(qtbot: Any, screen: Screen, act: Any) -> None:
    before = screen.model.raw_state
    act()
    qtbot.waitUntil(lambda: screen.model.raw_state is not before, timeout=10000)


def play_hand(qtbot: Any, service: EngineService, bridge: Any, screen: Screen, d: ConsoleDriver,
              deck: list[str], counter: int) -> int:
    """Hand 1 from the console's buttons: bring-in, calls and checks to the showdown, every hand shown."""
    for _ in range(9):
        counter += 1
        _after(qtbot, screen, lambda c=counter: draw(bridge, c, deck.pop()))
    while True:
        state = screen.model.raw_state
        if state.get("hand_id") != 1 or state.get("phase") == "complete":
            return counter
        if state["phase"] == "betting":
            qtbot.waitUntil(lambda: any(d.usable(n) for n in BETS), timeout=5000)
            name = next(n for n in BETS if d.usable(n))
            _after(qtbot, screen, lambda n=name: d.tap(n))
        elif state["phase"] == "dealing":
            counter += 1
            _after(qtbot, screen, lambda c=counter: draw(bridge, c, deck.pop()))
        elif state["phase"] == "showdown":
            qtbot.waitUntil(lambda: d.usable("showdown.show"), timeout=5000)
            _after(qtbot, screen, lambda: d.tap("showdown.show"))
        else:
            qtbot.wait(50)


def _type(d: ConsoleDriver, pad: str, text: str) -> None:
    for ch in text:
        d.tap(f"{pad}.{ch}")


def _clear(d: ConsoleDriver, n: int = 6) -> None:
    if d.find("numpad.clear") is None:
        d.tap("history.keys")  # the keys come back (a search shows its results in their place)
    for _ in range(n):
        d.tap("numpad.clear")


def test_the_history_page_finds_steps_through_and_exports_a_hand_over_the_bus(table: Any, qtbot: Any) -> None:
    service, bridge, screen, d, exports = table
    deck = [str(c) for c in DECK]
    random.Random(21).shuffle(deck)
    counter = play_hand(qtbot, service, bridge, screen, d, deck, 0)
    qtbot.waitUntil(lambda: bool(service.store.list_hands()), timeout=10000)
    played = service.store.get_hand(f"{TABLE}-1")
    assert played is not None
    events = list(played.events)
    burns = [e["card"] for e in events if e["type"] == "card_burned"]
    assert burns, "the shoe's table burns before fourth street"

    # Find hand 1 by its number, on the page's number pad.
    d.tap("page.history")
    browser = screen.window.history
    d.tap("history.keys")
    _type(d, "numpad", "1")
    assert d.text("history.search") == "1"
    d.tap("history.find.hand")
    qtbot.waitUntil(lambda: len(browser.steps) == len(events) + 1, timeout=10000)
    steps_view = d.find("history.steps")
    assert isinstance(steps_view, QListWidget)
    lines = [steps_view.item(i).text() for i in range(steps_view.count())]
    # Every step with its time and its source (which console or sensor).
    for line, e in zip(lines, events, strict=False):
        want = {"card_dealt": "shoe-1", "card_burned": "shoe-1", "player_action": "console-1"}.get(e["type"])
        if want:
            assert f" · {want} · " in line, line
        assert line.split(" · ")[0].split(". ")[1].count(":") == 2, line  # HH:MM:SS
    # Burns are shown as cards.
    row = next(i for i, s in enumerate(browser.steps) if s.kind == "card_burned")
    steps_view.setCurrentRow(row)
    assert d.find(f"history.step-card.{burns[0]}") is not None and burns[0] in d.text("history.step")
    # The result, with the losing hands that were shown labelled as shown.
    steps_view.setCurrentRow(steps_view.count() - 1)
    result = d.text("history.step")
    assert "Result:" in result and "wins" in result and "shown, loses" in result, result
    # Nothing clipped: every row is as tall as its wrapped text; nothing is elided.
    assert steps_view.textElideMode() == Qt.TextElideMode.ElideNone and steps_view.wordWrap()
    fm = QFontMetrics(steps_view.font())
    for i in range(steps_view.count()):
        rect = steps_view.visualItemRect(steps_view.item(i))
        need = fm.boundingRect(QRect(0, 0, rect.width(), 10000), int(Qt.TextFlag.TextWordWrap), lines[i]).height()
        assert rect.height() >= need, (lines[i], rect.height(), need)

    # Export: PHH and the JSON log, to the default folder given to this screen.
    d.tap("history.export")
    assert d.text("history.export-status").startswith("Exported: ")
    phh = tomllib.loads((exports / f"{TABLE}-1.phh").read_text())
    assert phh["variant"] == "F7S" and phh["players"] == ["Ann", "Bob", "Cy"]
    log = json.loads((exports / f"{TABLE}-1.json").read_text())
    assert [e["type"] for e in log["events"]] == [e["type"] for e in events]
    assert {e["_source"] for e in log["events"]} >= {"shoe-1", "console-1"}

    # Search by seat and by player; a name nobody has finds nothing.
    _clear(d)
    _type(d, "numpad", "2")
    d.tap("history.find.seat")
    qtbot.waitUntil(lambda: browser.hands.count() >= 1, timeout=10000)
    assert any(x.number == 1 for x in browser.listings)
    _clear(d)
    _type(d, "keyboard", "BOB")
    d.tap("history.find.player")
    qtbot.waitUntil(lambda: [x.number for x in browser.listings] == [1], timeout=10000)
    _clear(d)
    _type(d, "keyboard", "ZED")
    d.tap("history.find.player")
    qtbot.waitUntil(lambda: d.text("history.message") == "No hands found.", timeout=10000)

    # The next hand, live: listed first, its steps without a single down card, no export.
    qtbot.waitUntil(lambda: screen.model.raw_state.get("hand_id") == 2, timeout=15000)
    for _ in range(9):
        counter += 1
        _after(qtbot, screen, lambda c=counter: draw(bridge, c, deck.pop()))
    live = service.core.floor.hand
    assert live is not None and live.hand_id == 2
    down = {str(c) for s in live.seats for c in s.down}
    assert len(down) == 6
    d.tap("history.find.all")
    qtbot.waitUntil(lambda: bool(browser.listings) and browser.listings[0].live, timeout=10000)
    qtbot.waitUntil(lambda: browser.detail is not None and browser.detail["live"], timeout=10000)
    shown = [steps_view.item(i).text() for i in range(steps_view.count())]
    assert any(line.endswith("dealt a card down  — pot 3") or "dealt a card down" in line for line in shown)
    assert not {c for c in down for line in shown if c in line.split()}, "a live down card on the history page"
    assert not any(c in s.cards for s in browser.steps for c in down)
    assert not d.usable("history.export")


def test_a_console_config_that_still_names_history_db_is_told_what_to_do(tmp_path: Path) -> None:
    from dealer_console.app import AppConfig, retired_settings

    path = tmp_path / "console.toml"
    path.write_text('table = "t1"\nhistory_db = "/var/lib/studtable/t1.sqlite"\n')
    cfg = AppConfig.load(path, "console")
    (line,) = retired_settings(cfg)
    assert line.startswith(f"{path}: history_db: is not used any more") and line.endswith("delete the history_db line")
    path.write_text('table = "t1"\n')
    assert retired_settings(AppConfig.load(path, "console")) == []


def test_the_history_page_fits_a_1024x600_screen_with_its_keys_shown(qtbot: Any) -> None:
    from dealer_console.edge import MemorySink
    from dealer_console.history import MemoryHistory
    from dealer_console.screenshots import marked
    from dealer_console.scripted import hand_events

    model = TableModel(self_device="console")
    model.set_broker(True)
    model.health.availability("engine", True)
    model.health.heard("engine")
    window = ConsoleWindow(model, Commands(MemorySink()), images=CardImages("anglo"),
                           history=MemoryHistory({"1": marked(hand_events())}))
    qtbot.addWidget(window)
    window.show()
    qtbot.wait(50)
    window.resize(1024, 600)
    qtbot.wait(50)
    assert (window.width(), window.height()) == (1024, 600)  # the table page fits (the baseline)
    d = ConsoleDriver(window)
    d.tap("page.history")
    qtbot.waitUntil(lambda: window.history.step_list.count() == len(hand_events()) + 1, timeout=5000)
    for keys_on in (True, False):
        d.tap("history.keys")
        qtbot.wait(50)
        assert (window.width(), window.height()) == (1024, 600), keys_on
        assert (d.find("keyboard.Q") is not None) is keys_on and (d.find("history.steps") is None) is keys_on
    hint = window.minimumSizeHint()
    assert hint.width() <= 1024 and hint.height() <= 600, hint


def test_with_the_engine_down_the_page_says_so_and_a_next_search_is_answered_once_it_is_up(
        amqtt_broker: Any, qtbot: Any, tmp_path: Path) -> None:
    screen = Screen(amqtt_broker, tmp_path / "exports")
    try:
        qtbot.waitUntil(lambda: screen.edge.connected, timeout=10000)
        browser = screen.window.history
        browser.answer_timeout_ms = 500
        d = ConsoleDriver(screen.window)
        d.tap("page.history")  # asks; nobody answers
        qtbot.waitUntil(lambda: d.text("history.message") == "The engine did not answer; is it running?",
                        timeout=5000)
        assert browser.hands.count() == 0
        # The engine comes up: the next search is answered.
        service = EngineService(engine_config(amqtt_broker, tmp_path / "engine.db")).start()
        try:
            # "once it is up": once the console shows the engine's table, as the dealer sees it come up (a search
            # sent before the engine has subscribed is not answered; under CI's load it once was)
            qtbot.waitUntil(lambda: screen.model.controls_enabled and bool(screen.model.snapshot.seats), timeout=15000)
            d.tap("history.find.all")
            # the live hand 1 (the engine deals its first hand by itself), and no timeout said
            qtbot.waitUntil(lambda: bool(browser.listings) and browser.listings[0].live, timeout=10000)
            qtbot.wait(700)
            assert "did not answer" not in d.text("history.message")
        finally:
            service.stop()
    finally:
        screen.edge.stop()
        screen.window.close()
