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


def _run(args: argparse.Namespace, role_name: str) -> int:
    from dealer_console.app import AppConfig, run
    from engine.wire import Role

    role = Role(role_name)
    try:
        cfg = AppConfig.load(args.config, role_name).override(
            broker=args.broker, table=args.table, user=args.user, password=args.password, device=args.device,
            fullscreen=args.fullscreen)
        return run(role, cfg)
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
