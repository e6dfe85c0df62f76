"""Running the demo table: headless (a summary) or with the console and monitor windows."""


from __future__ import annotations

import contextlib
import logging
import os
import signal
import sys
import threading
import time
from typing import Any, TextIO

from dealer_console.demo.options import (
    DEALER_CONSOLE,
    ENGINE_DEVICE,
    DemoError,
    DemoOptions,
)
from dealer_console.demo.people import SimulatedTable, latency_summary
from dealer_console.demo.stack import Broker, ProcessEngine, TableStack
from engine.wire import Role

# ----------------------------------------------------------------------------- running it


def summary(table: SimulatedTable, stack: TableStack, opts: DemoOptions, elapsed: float,
            error: str | None) -> dict[str, Any]:
    raised = list(table.prompts_seen.values())
    unexpected = [p for p in raised if not p["expected"]]
    logged: int | str
    try:
        logged = stack.hands_in_store()
    except Exception as exc:  # the store is only a cross-check
        logged = f"unreadable: {exc}"
    failures = list(table.failures)
    if error:
        failures.append(error)
    if len(table.verified) != opts.hands:
        failures.append(f"{len(table.verified)} of {opts.hands} hands verified")
    by_rule: dict[str, int] = {}
    for p in raised:
        by_rule[p["rule"]] = by_rule.get(p["rule"], 0) + 1
    return {
        "ok": not failures,
        "hands_requested": opts.hands,
        "hands_played": len(table.truths),
        "hands_verified": len(table.verified),
        "hands_in_store": logged,
        "variant": opts.variant,
        "players": opts.players,
        "seed": opts.seed,
        "drill": table.drill_report or (None if opts.drill is None else {"name": opts.drill, "ran": False}),
        "events": table.hand_events,
        "inputs": table.inputs,
        "irregularities": {
            "raised": len(raised),
            "resolved": len([p for p in table.prompts_resolved if p in table.prompts_seen]),
            "by_rule": by_rule,
            "unexpected": [f"{p['rule']} (hand {p['hand']}): {p['text']}" for p in unexpected],
        },
        # RRoP stud 15: the hands whose seventh street ran out of cards, and what the dealer did.
        "out_of_cards": {"hands": len({p["hand"] for p in raised if p["rule"] == "stud.out-of-cards"}),
                         "common_card": table.inputs.get("out_of_cards_common", 0),
                         "reshuffled": table.inputs.get("out_of_cards_reshuffle", 0)},
        "chips": table.chips,
        "latency_ms": {"card_drawn_to_state": latency_summary(table.latencies)},
        "broker": "amqtt (embedded)" if getattr(stack.broker, "kind", "") == "amqtt" else getattr(stack.broker, "kind", "external"),
        "engine": "process" if opts.engine_process else "thread",
        "bridge": "none (a manual table: every card keyed on the console)" if opts.manual
        else "none (a camera-only table: no shoe)" if opts.no_shoe
        else "process" if opts.bridge_process else "thread",
        "camera": camera_summary(table, stack),
        "console": console_summary(table),
        **({"shift": shift_summary(table)} if opts.shift else {}),
        "elapsed_s": round(elapsed, 2),
        "failures": failures,
    }


def shift_summary(table: SimulatedTable) -> dict[str, Any]:
    """What the dealer did between hands (every step through the console) and the games played."""
    games: dict[str, int] = {}
    for variant in table.hand_games.values():
        games[variant] = games.get(variant, 0) + 1
    return {"steps": list(table.shift_log), "games": games, "hand_games": dict(table.hand_games),
            "seated_at_end": {str(n): list(v) for n, v in sorted(table.ledger.items())}}


def console_summary(table: SimulatedTable) -> dict[str, Any]:
    """How the people played: every input through the console's widgets (taps), and the double taps
    the console's guard swallowed (none expected from the simulated dealer, who waits it out)."""
    console = table.console
    guard = getattr(console.driver.window, "tap_guard", None) if console is not None else None
    return {"driven_by": "the console's widgets, by accessible name" if console is not None else None,
            "taps": table.inputs.get("taps", 0),
            "taps_swallowed_by_guard": guard.swallowed if guard is not None else None}


def camera_summary(table: SimulatedTable, stack: TableStack) -> dict[str, Any] | None:
    cam = stack.camera
    if cam is None:
        return {"skipped": stack.camera_skipped} if stack.camera_skipped else None
    checks = table.camera_checks
    try:
        stats = cam.stats()
    except (RuntimeError, OSError, EOFError) as exc:
        return {"error": f"the camera process did not report: {exc}"}
    ms = sorted(1000 * s for s in stats["detect_s"][5:])  # the first frames warm the detector up
    return {
        "device": "cam-1 (simulated capture; the production vision pipeline in its own process)",
        "frames": stats["frames"],
        "fps": round(stats["fps"], 1),
        "cpu_ms_per_frame": {"p50": round(ms[len(ms) // 2], 1) if ms else None,
                             "p99": round(ms[min(len(ms) - 1, int(0.99 * len(ms)))], 1) if ms else None},
        "offline_episodes": stats["offline_events"],
        "hands_checked": len(checks),
        "hands_agreeing": sum(1 for c in checks if c["agrees"]),
        "up_cards_read": f"{sum(c['up_read'] for c in checks)}/{sum(c['up_cards'] for c in checks)}",
        "down_cards_found": f"{sum(c['down_found'] for c in checks)}/{sum(c['down_cards'] for c in checks)}",
        "differences": [c for c in checks if not c["agrees"]],
    }


log = logging.getLogger("studtable.demo")


class ConsoleScreen:
    """The dealer's touch screen of the demo table: the real ``ConsoleWindow`` on its own bus
    connection (console role), drawn offscreen when there is no display."""

    def __init__(self, stack: TableStack, opts: DemoOptions, device: str = DEALER_CONSOLE) -> None:
        from dealer_console.cards import CardImages
        from dealer_console.console import ConsoleWindow
        from dealer_console.edge import BusEdge, BusHistory, Commands
        from dealer_console.model import TableModel

        user, password = stack.broker.login(Role.CONSOLE, device)
        self.edge = BusEdge(host=stack.broker.host, port=stack.broker.port, username=user, password=password,
                            table=opts.table, role=Role.CONSOLE, device=device)
        self.model = TableModel(engine_device=ENGINE_DEVICE, self_device=device)
        self.edge.received.connect(self.model.apply_message)
        self.edge.connectionChanged.connect(self.model.set_broker)
        self.window = ConsoleWindow(self.model, Commands(self.edge), images=CardImages("anglo"),
                                    history=BusHistory(self.edge))
        self.window.resize(1280, 800)
        self.edge.start()
        self.window.show()

    def stop(self) -> None:
        with contextlib.suppress(Exception):
            self.edge.stop()
        self.window.close()


def qt_app() -> Any:
    """The Qt application (offscreen when no display is there: the headless demo still uses widgets)."""
    if not display_available()[0]:
        os.environ["QT_QPA_PLATFORM"] = "offscreen"
    from PySide6.QtCore import QtMsgType, qInstallMessageHandler
    from PySide6.QtWidgets import QApplication

    def quiet(kind: QtMsgType, context: Any, message: str) -> None:
        if "propagateSizeHints" not in message:  # the offscreen platform's note about window hints
            sys.stderr.write(message + "\n")

    qInstallMessageHandler(quiet)
    app = QApplication.instance() or QApplication(sys.argv[:1])
    guard_bool_refcounts()
    return app


def play_on_console(stack: TableStack, opts: DemoOptions, table: SimulatedTable) -> str | None:
    """Play ``table`` on a started ``stack`` through a real console screen: the people on their
    thread, Qt's loop here.  Returns the first error (None: every hand was played)."""
    from PySide6.QtCore import QEventLoop, QTimer

    from dealer_console.driver import ThreadedDriver

    app = qt_app()
    done = threading.Event()
    errors: list[str] = []

    def play() -> None:
        try:
            table.play()
        except DemoError as exc:
            errors.append(str(exc))
        except Exception as exc:  # a bug in the demo itself: report it, do not hang the loop
            log.exception("demo: the simulated table failed")
            errors.append(f"{type(exc).__name__}: {exc}")
        finally:
            done.set()

    screen = ConsoleScreen(stack, opts)
    try:
        table.console = ThreadedDriver(screen.window, stack.watch.stopping)
        threading.Thread(target=play, name="demo-people", daemon=True).start()
        loop = QEventLoop()
        timer = QTimer()  # also lets Python see a Ctrl-C while Qt's loop runs

        def interrupted(*_: Any) -> None:
            errors.append("interrupted (Ctrl-C)")
            stack.watch.stopping.set()
            loop.quit()

        previous_sigint = signal.signal(signal.SIGINT, interrupted)
        timer.timeout.connect(lambda: loop.quit() if done.is_set() else None)
        timer.start(50)
        try:
            loop.exec()
        finally:
            timer.stop()
            signal.signal(signal.SIGINT, previous_sigint)
    finally:
        stack.watch.stopping.set()
        done.wait(5)
        screen.stop()
        app.processEvents()
    return errors[0] if errors else None


def run_demo(opts: DemoOptions, *, broker: Broker | None = None, narrate: TextIO | None = None) -> dict[str, Any]:
    """Start the table, play ``opts.hands`` hands through the console's widgets, check them, stop
    everything; return the summary."""
    opts.check()
    t0 = time.monotonic()
    qt_app()
    stack = TableStack(opts, broker=broker)
    table = SimulatedTable(stack, opts, narrate)
    error: str | None = None
    try:
        stack.start()
        error = play_on_console(stack, opts, table)
    except DemoError as exc:
        error = str(exc)
    finally:
        if error and isinstance(stack.engine, ProcessEngine) and stack.engine.log_tail():
            error += f"; engine log: {stack.engine.log_tail()[-600:]}"
        result = summary(table, stack, opts, time.monotonic() - t0, error)
        stack.watch.stopping.set()
        stack.stop()
    return result


def display_available() -> tuple[bool, str]:
    """Whether windows can be shown here, and if not, why (in words for the user)."""
    if sys.platform.startswith(("win", "darwin")):
        return True, ""
    if os.environ.get("QT_QPA_PLATFORM"):
        return True, ""  # the user chose a Qt platform (e.g. offscreen for tests)
    if os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY"):
        return True, ""
    return False, "no display here (DISPLAY and WAYLAND_DISPLAY are not set)"


def guard_bool_refcounts() -> bool:
    """Work around a PySide6 6.12 bug on Python 3.11: ``Signal.emit()`` returns ``True``
    without taking a reference to it, so every emit lowers ``True``'s reference count by
    one and after a few thousand messages (each MQTT message is an emit) the interpreter
    aborts with "Fatal Python error: bool_dealloc".  ``dealer_console.qtguard`` does the
    same for ``None``; like it, this probes for the bug and only then makes ``True`` and
    ``False`` effectively immortal (what Python 3.12 does by design).  It belongs in
    qtguard (the console's owner has been told); it is here so the demo's windows live.
    """
    import ctypes

    from PySide6.QtCore import QObject, Signal

    if sys.version_info >= (3, 12) or sys.implementation.name != "cpython":
        return False

    class _Probe(QObject):
        fired = Signal(int)

    probe = _Probe()
    probe.fired.connect(lambda _v: None)
    before = sys.getrefcount(True)
    for _ in range(100):
        probe.fired.emit(1)
    if sys.getrefcount(True) - before > -50:
        return False
    for value in (True, False):
        ctypes.c_ssize_t.from_address(id(value)).value += 1 << 40
    return True


def run_gui(opts: DemoOptions, *, hands_limit: int | None, stop_after: float | None = None) -> int:
    """The table with the dealer console and the table monitor windows; play until closed.

    With ``autoplay`` the simulated dealer and players press the console's buttons (you watch
    them do it); without it they wait for you to press them."""
    opts.check()
    from PySide6.QtCore import QTimer

    from dealer_console.cards import CardImages
    from dealer_console.driver import ThreadedDriver
    from dealer_console.edge import BusEdge
    from dealer_console.model import TableModel
    from dealer_console.monitor import MonitorWindow

    stack = TableStack(opts).start()
    app = qt_app()
    # Ctrl-C: Qt's loop runs no Python, so without this the windows would stay; quit, then stop all.
    previous_sigint = signal.signal(signal.SIGINT, lambda *_: app.quit())
    screen: ConsoleScreen | None = None
    monitor_edge: BusEdge | None = None
    monitor: Any = None
    try:
        screen = ConsoleScreen(stack, opts)
        user, password = stack.broker.login(Role.MONITOR, "monitor-1")
        monitor_edge = BusEdge(host=stack.broker.host, port=stack.broker.port, username=user, password=password,
                               table=opts.table, role=Role.MONITOR, device="monitor-1")
        model = TableModel(engine_device=ENGINE_DEVICE, self_device="monitor-1")
        monitor_edge.received.connect(model.apply_message)
        monitor_edge.connectionChanged.connect(model.set_broker)
        monitor = MonitorWindow(model, images=CardImages("anglo"))
        monitor.resize(1280, 720)
        monitor_edge.start()
        monitor.show()
        opts.hands = hands_limit if hands_limit is not None else 10_000
        table = SimulatedTable(stack, opts, narrate=sys.stdout)
        table.console = ThreadedDriver(screen.window, stack.watch.stopping)
        done = threading.Event()

        def play() -> None:
            try:
                table.play()
            except DemoError as exc:
                if not stack.watch.stopping.is_set():
                    print(f"demo: {exc}", file=sys.stderr)
                    table.failures.append(str(exc))
            finally:
                done.set()

        threading.Thread(target=play, name="demo-table", daemon=True).start()
        timer = QTimer()
        timer.timeout.connect(lambda: app.quit() if done.is_set() else None)
        timer.start(200)
        if stop_after is not None:
            QTimer.singleShot(int(stop_after * 1000), app.quit)
        app.exec()
        stack.watch.stopping.set()
        done.wait(5)
        return 0 if not table.failures else 1
    finally:
        if monitor_edge is not None:
            with contextlib.suppress(Exception):
                monitor_edge.stop()
        if monitor is not None:
            monitor.close()
        if screen is not None:
            screen.stop()
        stack.stop()
        signal.signal(signal.SIGINT, previous_sigint)
