"""The dealer_console subcommands of ``studtable``: console, console screenshots, monitor."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any


def _connection_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--config", type=Path, help="TOML or JSON config (see dealer_console/app.py)")
    p.add_argument("--broker", help="HOST:PORT of the table's broker")
    p.add_argument("--table", help="table id")
    p.add_argument("--user", help="broker username (default: from broker_dir in the config)")
    p.add_argument("--password", help="broker password")
    p.add_argument("--device", help="this screen's device id on the bus")
    p.add_argument("--fullscreen", action="store_true", default=None)


def register(sub: Any) -> None:
    """Add this package's subcommands to the ``studtable`` parser."""
    console = sub.add_parser("console", help="the dealer console (PySide6 touch screen)")
    _connection_args(console)
    console.set_defaults(handler=_console)
    csub = console.add_subparsers(dest="console_command", metavar="ACTION")
    shots = csub.add_parser("screenshots", help="render the console and the monitor offscreen to PNG files")
    shots.add_argument("--out", type=Path, default=Path("docs/screenshots"))
    shots.add_argument("--states", type=Path, default=None,
                       help="JSON lines of recorded states (default: the built-in scripted hand)")
    shots.set_defaults(handler=_screenshots)

    monitor = sub.add_parser("monitor", help="the table monitor (full screen, public information only)")
    _connection_args(monitor)
    monitor.set_defaults(handler=_monitor)

    demo = sub.add_parser("demo", help="the whole table in one command: broker, engine, shoe and bridge, "
                          "simulated dealer and players, console and monitor windows")
    demo.add_argument("--headless", action="store_true",
                      help="no windows: play --hands hands, check them, print one JSON summary")
    demo.add_argument("--hands", type=int, default=None,
                      help="hands to play (default: 5 headless, 3 without a display, until closed with windows)")
    demo.add_argument("--seed", type=int, default=1, help="shuffles and players' choices (default 1)")
    demo.add_argument("--variant", default="F7S", help="stud (F7S), stud8 (F7S/8) or razz (FR)")
    demo.add_argument("--players", type=int, default=6, help="2 to 8 (default 6)")
    demo.add_argument("--drill", choices=("shoe-cable", "broker-restart", "premature-card", "engine-kill",
                                          "exposed-holecard", "card-off-table", "camera-stall"),
                      help="make one thing go wrong mid-hand, on purpose")
    demo.add_argument("--processes", action="store_true",
                      help="run the engine and the shoe bridge as their own processes (the camera always is one)")
    demo.add_argument("--manual", action="store_true",
                      help="a table with no sensors: the simulated dealer keys every card on the console's card picker")
    demo.add_argument("--no-shoe", action="store_true",
                      help="a camera-only table: no card shoe; the camera reads the up cards, the down cards "
                           "stay unknown until shown (the simulated dealer keys them on the picker)")
    demo.add_argument("--shift", action="store_true",
                      help="a dealer's shift: between hands players sit down and leave, a short buy-in is refused, "
                           "the game changes once (all through the console's widgets)")
    demo.add_argument("--no-camera", action="store_true",
                      help="leave out the simulated overhead camera and the vision service (the shoe alone)")
    demo.add_argument("--autoplay", action="store_true",
                      help="with windows: the simulated players act by themselves, at --pace")
    demo.add_argument("--pace", type=float, default=None,
                      help="seconds between moves (default: 1.0 with windows and --autoplay, else 0)")
    demo.add_argument("--keep", type=Path, default=None, metavar="DIR",
                      help="keep the broker config, engine store and logs in DIR")
    demo.add_argument("-v", "--verbose", action="store_true", help="log the services' messages to stderr")
    demo.set_defaults(handler=_demo)


def _run(args: argparse.Namespace, role_name: str) -> int:
    from dealer_console.app import AppConfig, run
    from engine.configfile import ConfigFileError
    from engine.wire import Role

    role = Role(role_name)
    try:
        cfg = AppConfig.load(args.config, role_name).override(
            broker=args.broker, table=args.table, user=args.user, password=args.password, device=args.device,
            fullscreen=args.fullscreen)
        return run(role, cfg)
    except ConfigFileError:
        raise  # one line, printed by engine.cli
    except (ValueError, FileNotFoundError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2


def _console(args: argparse.Namespace) -> int:
    return _run(args, "console")


def _monitor(args: argparse.Namespace) -> int:
    return _run(args, "monitor")


def _screenshots(args: argparse.Namespace) -> int:
    from dealer_console.screenshots import render

    for path in render(args.out, args.states):
        print(path)
    return 0


def _card_art() -> None:
    """The camera's real card art (Debian's Aisleriot decks), installed when this process may; else
    the camera draws the project's plain cards and says so in one line (vision/plain_deck.py)."""
    import shutil

    from engine.syspkgs import may_install, provide
    from vision.deckart import AISLERIOT_DIR

    need = [p for p, ok in (("gnome-cards-data", AISLERIOT_DIR.is_dir()),
                            ("librsvg2-bin", shutil.which("rsvg-convert") is not None)) if not ok]
    if need and may_install():
        line = provide(need, "the camera's card art")
        if line:
            print(f"demo: {line}", file=sys.stderr)


def _demo(args: argparse.Namespace) -> int:
    import json
    import logging

    from dealer_console.demo import DemoError, DemoOptions, display_available, run_demo, run_gui

    logging.basicConfig(level=logging.INFO if args.verbose else logging.ERROR,
                        format="%(asctime)s %(name)s %(levelname)s %(message)s", stream=sys.stderr)
    if not args.no_camera:
        _card_art()
    opts = DemoOptions(seed=args.seed, variant=args.variant, players=args.players, drill=args.drill,
                       workdir=args.keep, camera=not args.no_camera,
                       processes=args.processes, manual=args.manual, no_shoe=args.no_shoe, shift=args.shift)
    narrate = None
    if not args.headless:
        ok, why = display_available()
        if ok:
            try:
                import PySide6.QtWidgets  # noqa: F401
            except ImportError as exc:
                ok, why = False, f"PySide6 is not installed ({exc}); pip install 'studtable[console]'"
        if ok:
            # Qt aborts the process (SIGABRT) when its window platform lacks a system library:
            # look first, install them when root, else one line naming them (and play headless).
            from engine.syspkgs import missing_qt_packages, provide

            line = provide(missing_qt_packages(), "the console and monitor windows")
            if line:
                print(f"demo: {line}; the table runs headless meanwhile", file=sys.stderr)
                ok, why = False, ""
        if ok:
            opts.autoplay = args.autoplay
            opts.pace = args.pace if args.pace is not None else (1.0 if args.autoplay else 0.3)
            if not args.autoplay:
                print("demo: press the players' actions on the dealer console (or run with --autoplay)",
                      file=sys.stderr)
            try:
                return run_gui(opts, hands_limit=args.hands)
            except DemoError as exc:
                print(f"demo: {exc}", file=sys.stderr)
                return 1
        if why:
            print(f"demo: {why}; the console and monitor windows need a desktop session, so the table runs "
                  "headless and prints each hand as it is played", file=sys.stderr)
        narrate = sys.stdout
        opts.hands = args.hands if args.hands is not None else 3
    else:
        opts.hands = args.hands if args.hands is not None else 5
    opts.pace = args.pace if args.pace is not None and args.headless else 0.0
    import signal

    # Ctrl-C ends the demo with 130 whatever it was doing when the signal came: the terminal
    # signals the whole group, so a child (the engine with --processes) may die of it first and
    # the table report that as a failure before the interrupt reaches this thread.
    interrupts: list[int] = []

    def on_sigint(signum: int, frame: Any) -> None:
        interrupts.append(signum)
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGINT, on_sigint)
    try:
        result = run_demo(opts, narrate=narrate)
    except DemoError as exc:
        if interrupts:
            raise KeyboardInterrupt from exc
        print(f"demo: {exc}", file=sys.stderr)
        return 2
    finally:
        signal.signal(signal.SIGINT, previous)
    if interrupts or any(str(f).startswith("interrupted (Ctrl-C)") for f in result["failures"]):
        # (the table's own Ctrl-C handler, dealer_console/demo/run.py, ends the hand loop cleanly)
        print(json.dumps(result), flush=True)
        print("demo: interrupted (Ctrl-C)", file=sys.stderr)
        return 130
    print(json.dumps(result), flush=True)
    if not result["ok"]:
        for failure in result["failures"]:
            print(f"demo: FAILED: {failure}", file=sys.stderr)
    return 0 if result["ok"] else 1
