"""The firmware_bridge subcommands of ``studtable``."""

from __future__ import annotations

from typing import Any


def register(sub: Any) -> None:
    """Add this package's subcommands to the ``studtable`` parser."""
