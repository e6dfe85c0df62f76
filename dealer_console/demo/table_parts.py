"""What the drills and the truth check use of the simulated table, declared once.

``SimulatedTable`` (dealer_console/demo/people.py) mixes ``Drills`` and ``TruthCheck`` in; both
reach its fields and a few of its methods, which the type checker learns of here.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from dealer_console.demo.options import DemoOptions
    from dealer_console.demo.people import HandTruth, Narrator
    from dealer_console.demo.stack import TableStack, TableWatch
    from dealer_console.driver import ThreadedDriver


class TableParts:
    """The fields and methods of ``SimulatedTable`` its mixins use (declared for the type checker only)."""

    stack: TableStack
    opts: DemoOptions
    watch: TableWatch
    say: Narrator
    truths: dict[int, HandTruth]
    names: dict[int, str]
    inputs: dict[str, int]
    expected_rules: set[str]
    drill_report: dict[str, Any]
    drill_done: bool
    failures: list[str]
    verified: list[str]
    hand_events: int
    chips: dict[str, int]
    camera_checks: list[dict[str, Any]]
    camera_stalled_until: int | None
    console: ThreadedDriver | None
    ledger: dict[int, tuple[str, int]]  # a shift: who sits where with what, between hands
    game: str  # the game the next hand is played under
    hand_games: dict[str, str]  # each verified hand's game, from its own record
    if TYPE_CHECKING:
        def _draw(self, state: Mapping[str, Any], slot: Mapping[str, Any] | None, wait: bool = True,
                  kind: str | None = None, lay: Callable[[Any, int, str], None] | None = None) -> str: ...

        def _rule(self, state: Mapping[str, Any], expected: bool = False) -> None: ...

        def _await_change(self, sig: str, error: Any, what: str, timeout: float | None = None) -> dict[str, Any]: ...

        def _press(self, name: str, sig: str | None = None, *, sends: bool = True) -> None: ...

        def _press_action(self, seat: int, option: Mapping[str, Any], *, wait: bool = True) -> None: ...
