"""The engine's subcommands of ``studtable``."""

from __future__ import annotations

import argparse
from typing import Any


def register(sub: Any) -> None:
    version = sub.add_parser("version", help="print the studtable version")
    version.set_defaults(handler=_version)


def _version(args: argparse.Namespace) -> int:
    from importlib.metadata import version

    print(version("studtable"))
    return 0
