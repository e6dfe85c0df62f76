"""``python -m engine.broker ...``: the ``studtable broker`` command without the entry point."""

from __future__ import annotations

import argparse
import sys

from engine.broker.commands import register


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m engine.broker")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True
    register(sub)
    args = parser.parse_args(["broker", *(sys.argv[1:] if argv is None else argv)])
    return int(args.handler(args) or 0)


if __name__ == "__main__":
    sys.exit(main())
