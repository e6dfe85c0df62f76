"""The engine as a real `studtable engine` process on mosquitto, killed with SIGKILL mid-hand:
restarted, it replays its store, takes the command sent while it was dead, and the hand ends
exactly as the simulated shoe and players made it."""

from __future__ import annotations

from typing import Any

from dealer_console.demo import DemoOptions, run_demo
from tests.e2e.test_demo import assert_table_ok


def test_engine_sigkill_mid_hand_then_restart_completes_the_hand(mosquitto_broker: Any) -> None:
    result = run_demo(DemoOptions(hands=2, seed=8, drill="engine-kill"), broker=mosquitto_broker)
    assert_table_ok(result, 2)
    assert result["engine"] == "process" and result["broker"] == "mosquitto"
    drill = result["drill"]
    assert drill["name"] == "engine-kill" and drill["hand"] == 1 and drill["killed_pid"] > 0
    # The action entered while the engine was dead was applied once, after the restart (the
    # per-hand check compares the engine's actions with the ones entered, one for one).
    assert drill["applied_after_restart"] is True
