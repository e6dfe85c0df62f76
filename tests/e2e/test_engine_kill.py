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


# --------------------------------------------------------------------------- issue 19 item 8

import json  # noqa: E402
import os  # noqa: E402
import sqlite3  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
from pathlib import Path  # noqa: E402

from engine import wire  # noqa: E402
from engine.bus import BusClient  # noqa: E402
from engine.store import open_store  # noqa: E402
from engine.wire import Channel  # noqa: E402
from tests.support.mqtt import TestClient  # noqa: E402

T = "t1"


def _engine_process(broker: Any, tmp_path: Path) -> subprocess.Popen[bytes]:
    user, password = broker.login("engine")
    cfg = tmp_path / "engine.toml"
    if not cfg.exists():
        cfg.write_text(
            f'table = "{T}"\n[game]\nvariant = "F7S"\nante = 1\nbring_in = 2\nsmall_bet = 5\nbig_bet = 10\n'
            '[[seats]]\nseat = 1\nname = "Ann"\nstack = 200\n[[seats]]\nseat = 2\nname = "Bob"\nstack = 200\n'
            f'[store]\nurl = "{tmp_path / "engine.db"}"\n'
            '[engine]\nauto_start = true\n'  # no dealer here to tap Next hand
            f'[broker]\nhost = "{broker.host}"\nport = {broker.port}\nusername = "{user}"\npassword = "{password}"\n')
    return subprocess.Popen([sys.executable, "-m", "engine.cli", "engine", "--config", str(cfg)],
                            stderr=(tmp_path / "engine.log").open("a"), env={**os.environ, "PYTHONUNBUFFERED": "1"})


def _state(c: TestClient) -> dict[str, Any] | None:
    for r in reversed(list(c.received)):
        if r.topic.endswith("/public/state"):
            state: dict[str, Any] = json.loads(r.payload)["state"]
            return state
    return None


def test_a_hand_whose_end_was_stored_but_not_kept_is_kept_at_replay_and_the_next_hand_starts(
        mosquitto_broker: Any, tmp_path: Path) -> None:
    """The engine dies after the hand's last input is in the store and before the hand reaches
    the hand log (and before the next hand is started).  The store is left exactly so: a real
    engine process plays a hand to its end, is killed, and the hand log row and what followed
    the last input are taken out of the store, as a kill between the two writes leaves it."""
    monitor = TestClient(mosquitto_broker, "monitor")
    assert monitor.connected()
    monitor.subscribe([wire.topic(T, Channel.STATE)])
    engine = _engine_process(mosquitto_broker, tmp_path)
    user, password = mosquitto_broker.login("bridge", "shoe-1")
    shoe = BusClient(host=mosquitto_broker.host, port=mosquitto_broker.port, username=user, password=password,
                     table=T, device="shoe-1", role="bridge", session=1).start()
    user, password = mosquitto_broker.login("console", "console-1")
    console = BusClient(host=mosquitto_broker.host, port=mosquitto_broker.port, username=user, password=password,
                        table=T, device="console-1", role="console", session=1).start()
    try:
        assert monitor.wait(lambda: (_state(monitor) or {}).get("phase") == "dealing", 20), \
            (tmp_path / "engine.log").read_text()
        for counter, card in enumerate(["As", "Kd", "Qh", "Js", "7c", "9d"], 1):
            shoe.publish(Channel.SHOE, "card_drawn", counter=counter, uid=f"04{counter:012x}", card=card,
                         deck="d1", quality=200, status="ok", boot=1)
        state = monitor.wait(lambda: (_state(monitor) or {}).get("phase") == "betting", 10)
        state = _state(monitor)
        assert state is not None and state["to_act"] == 1  # the 7c brings it in
        console.publish(Channel.COMMAND, "action", seat=1, action="bring_in", amount=None)
        assert monitor.wait(lambda: (_state(monitor) or {}).get("to_act") == 2, 10)
        console.publish(Channel.COMMAND, "action", seat=2, action="fold", amount=None)
        assert monitor.wait(lambda: (_state(monitor) or {}).get("hand_id") == 2, 10)
        engine.kill()
        engine.wait(10)
        db = tmp_path / "engine.db"
        with open_store(db, T) as store:
            events = list(store.events())
            kept = store.list_hands()
        assert [h.hand_id for h in kept] == [f"{T}-1"]
        fold = max(e.offset for e in events if e.kind == "action")
        with sqlite3.connect(db) as conn:  # the kill came right after the fold was stored
            conn.execute("DELETE FROM hands")
            conn.execute("DELETE FROM events WHERE event_offset > ?", (fold,))
        monitor.received.clear()
        engine = _engine_process(mosquitto_broker, tmp_path)
        assert monitor.wait(lambda: (_state(monitor) or {}).get("hand_id") == 2
                            and (_state(monitor) or {}).get("phase") == "dealing", 20), \
            (tmp_path / "engine.log").read_text()
        state = _state(monitor)
        assert state is not None
        stacks = {s["seat"]: s["stack"] for s in state["seats"]}
        assert stacks == {1: 201 - 1, 2: 199 - 1}  # Ann won Bob's ante; both anted again for hand 2
    finally:
        engine.kill()
        engine.wait(10)
        shoe.stop()
        console.stop()
        monitor.close()
    with open_store(tmp_path / "engine.db", T) as store:
        assert [h.hand_id for h in store.list_hands()] == [f"{T}-1"]
        assert store.get_hand(f"{T}-1") is not None
