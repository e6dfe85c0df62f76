"""The ``studtable`` command.

Subcommands come from the ``studtable.commands`` entry points: each package
registers its own, so this module (in the engine, the innermost package) never
imports the console, the vision or the shoe bridge.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence
from importlib.metadata import entry_points
from typing import Any

Register = Callable[[Any], None]


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="studtable", description="Dealer assist for live stud tables.")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True
    for ep in sorted(entry_points(group="studtable.commands"), key=lambda e: e.name):
        register: Register = ep.load()
        register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run one subcommand.  A configuration it cannot run with (``ConfigFileError``) is one line on
    stderr, ``studtable COMMAND: FILE: KEY: what is wrong; what to do``, and exit status 2."""
    from engine.configfile import EXIT_CONFIG, ConfigFileError

    parser = build_parser()
    args = parser.parse_args(argv)
    handler: Callable[[argparse.Namespace], int] = args.handler
    try:
        return int(handler(args) or 0)
    except ConfigFileError as exc:
        print(f"studtable {args.command}: {exc.line()}", file=sys.stderr, flush=True)
        return EXIT_CONFIG
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
