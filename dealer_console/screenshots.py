"""``studtable console screenshots``: both applications, offscreen, in the states that matter.

Rendered from the scripted hand's recorded states (``scripted``), through the
same models and windows as at a real table, so the pictures in the docs are
what a dealer and the players actually see: a third-street bring-in, an open
irregularity prompt, a showdown; the history browser, the engine-down banner
and the enrollment wizard too.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from engine.wire import AVAILABILITY_OFFLINE, Channel, Message


def _states(path: Path | None) -> list[tuple[str, set[str], dict[str, Any]]]:
    if path is None:
        from dealer_console.scripted import scripted_hand

        return [(s.label, s.tags, s.state) for s in scripted_hand()]
    out = []
    for line in path.read_text("utf-8").splitlines():
        if line.strip():
            rec = json.loads(line)
            out.append((rec["label"], set(rec.get("tags", [])), rec["state"]))
    return out


def render(out_dir: Path, states_file: Path | None = None) -> list[Path]:
    """Write the PNGs; returns their paths."""
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    from PySide6.QtWidgets import QApplication

    from dealer_console.cards import CardImages
    from dealer_console.console import PAGES, ConsoleWindow
    from dealer_console.edge import Commands, MemorySink
    from dealer_console.enroll import EnrollWizard
    from dealer_console.history import MemoryHistory
    from dealer_console.model import TableModel
    from dealer_console.monitor import MonitorWindow
    from dealer_console.scripted import exposed_card_prompt, hand_events, refusal_text, scripted_hand

    app = QApplication.instance() or QApplication([])
    out_dir.mkdir(parents=True, exist_ok=True)
    states = _states(states_file)
    bring_in = next(s for _, tags, s in states if "bring_in" in tags)
    prompt_state = exposed_card_prompt(next(s for label, _, s in states if label == "seat 3 complete"))
    fourth = next(s for label, _, s in states if label == "seat 5 call" and s["street"] == "fourth street")
    showdown = next(s for _, tags, s in states if "complete" in tags)
    images = CardImages()
    written: list[Path] = []

    def console(state: dict[str, Any], name: str, engine_up: bool = True, page: int = 0,
                size: tuple[int, int] = (1280, 800), act: Any = None) -> None:
        model = TableModel(self_device="console")
        model.set_broker(True)
        model.health.availability("engine", True)
        model.health.heard("engine")  # the states came from it
        model.set_state(state)
        if not engine_up:
            model.apply_message(Message("t1", Channel.AVAIL, AVAILABILITY_OFFLINE, "engine", None, None, {}))
        w = ConsoleWindow(model, Commands(MemorySink()), images=images,
                          history=MemoryHistory({"1": marked(hand_events())}))
        w.resize(*size)
        w.show_page(page)
        if page == PAGES.index("History"):
            w.history.step_list.setCurrentRow(38)
        w.show()
        app.processEvents()
        if act is not None:
            act(w)
            app.processEvents()
        w.resize(*size)  # a window shown before its state settled may have grown; the screen is this big
        app.processEvents()
        if act is not None and hasattr(act, "settled"):
            act.settled(w)  # what the scene does once the window has its size (a scroll)
            app.processEvents()
        path = out_dir / f"{name}.png"
        w.grab().save(str(path))
        written.append(path)
        w.close()
        w.deleteLater()

    def monitor(state: dict[str, Any], name: str) -> None:
        model = TableModel()
        model.set_broker(True)
        model.health.availability("engine", True)
        model.health.heard("engine")  # the states came from it
        model.set_state(state)
        w = MonitorWindow(model, images=images)
        w.resize(1920, 1080)
        w.show()
        app.processEvents()
        path = out_dir / f"{name}.png"
        w.grab().save(str(path))
        written.append(path)
        w.close()
        w.deleteLater()

    # Issue 21's scenes at the three console sizes and on the monitor: a showdown in progress, a
    # result with a side pot, seating a player (the on-screen keyboard), a refused input, a betting
    # round with each seat's last action.
    side = scripted_hand(side_pot=True)
    to_show = next(s.state for s in side if s.state["phase"] == "showdown")
    side_result = side[-1].state
    # fourth street after a bet, a call and a raise: each seat says what it did this round (issue 21, 5)
    betting_round = next(s.state for s in side if s.label == "seat 6 raise")
    refused = dict(bring_in)
    refused["last_error"] = {"source": "console", "input": "action", "reason": refusal_text()}

    def seating(w: Any) -> None:
        from dealer_console.driver import ConsoleDriver

        d = ConsoleDriver(w)
        d.tap("page.seats")
        d.tap("seat.4.sit-down")
        for ch in "ZED":
            d.tap(f"keyboard.{ch}")
        for ch in "100":
            d.tap(f"numpad.{ch}")

    # An undo confirmation (issue 21, 4): the dealer taps Undo; the panel says what it will change.
    # The entries are as the engine lists them in public/state's dealer_inputs (engine/floor/undo.py).
    undo_state = dict(betting_round)
    undo_state["dealer_inputs"] = [
        {"hand": 1, "input": 31, "text": "seat 3 Chen bet 5 (fourth street)", "last": False, "undone": False,
         "dropped": False, "after": "2 actions"},
        {"hand": 1, "input": 32, "text": "seat 5 Dora call 5 (fourth street)", "last": False, "undone": False,
         "dropped": False, "after": "1 action"},
        {"hand": 1, "input": 33, "text": "seat 6 Eli raise to 10 (fourth street)", "last": True, "undone": False,
         "dropped": False, "after": ""},
    ]

    def undo(w: Any) -> None:
        from dealer_console.driver import ConsoleDriver

        ConsoleDriver(w).tap("correction.undo")

    def scroll_to_undo(w: Any) -> None:
        from PySide6.QtWidgets import QScrollArea

        area = w.correction.parentWidget()
        while area is not None and not isinstance(area, QScrollArea):
            area = area.parentWidget()
        if area is not None:  # the side column scrolled down to the panel, as the dealer's finger does
            area.ensureWidgetVisible(w.correction.confirm, 0, 8)

    undo.settled = scroll_to_undo  # type: ignore[attr-defined]

    for size in ((1024, 600), (1280, 800), (1920, 1080)):
        tag = f"{size[0]}x{size[1]}"
        console(to_show, f"console-{tag}-showdown", size=size)
        console(side_result, f"console-{tag}-side-pot", size=size)
        console(side_result, f"console-{tag}-seating", size=size, act=seating)
        console(refused, f"console-{tag}-refused", size=size)
        console(betting_round, f"console-{tag}-round", size=size)
        console(undo_state, f"console-{tag}-undo", size=size, act=undo)
    monitor(to_show, "monitor-1920x1080-showdown")
    monitor(betting_round, "monitor-1920x1080-round")
    monitor(side_result, "monitor-1920x1080-side-pot")
    console(bring_in, "console-bring-in")
    console(prompt_state, "console-prompt")
    console(showdown, "console-showdown")
    console(fourth, "console-engine-down", engine_up=False)
    console(showdown, "console-history", page=PAGES.index("History"))
    monitor(bring_in, "monitor-bring-in")
    monitor(fourth, "monitor-fourth-street")
    monitor(showdown, "monitor-showdown")

    wizard = EnrollWizard(images)
    wizard.setStyleSheet("background: #101416; color: #e8ece9;")
    wizard.resize(1000, 560)
    wizard.name.setText("red-1")
    wizard.registry.directory = out_dir / ".no-decks"
    wizard.start()
    for i in range(17):
        wizard.on_tag(bytes([4, 0xA2, 0x10, i]))
    wizard.on_tag(bytes([4, 0xA2, 0x10, 3]))  # a tag read twice: the wizard says so
    wizard.show()
    app.processEvents()
    path = out_dir / "console-deck-enrollment.png"
    wizard.grab().save(str(path))
    written.append(path)
    wizard.close()
    app.processEvents()
    return written


def marked(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The scripted hand as the hand log keeps it: each event with a source and a time (UTC)."""
    out = []
    for i, e in enumerate(events):
        source = {"card_dealt": "shoe-1", "card_burned": "shoe-1", "player_action": "console-1",
                  "cards_shown": "console-1", "hand_mucked": "console-1"}.get(str(e.get("type")), "engine")
        out.append({**e, "_source": source, "_at": f"2026-12-01T20:{14 + (i * 7) // 60:02d}:{(i * 7) % 60:02d}Z"})
    return out
