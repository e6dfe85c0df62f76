"""The result holds (issue 21, 5): after the award the table stays on the result until the dealer
taps Next hand (the default), or with ``auto_start`` for ``hold_s`` seconds; a real engine service
on mosquitto, the hand played over the bus."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest

from engine.service import EngineConfig, EngineService
from engine.tableconfig import TableConfig
from engine.wire import Channel
from tests.engine.edge.test_service import TABLE, client, draw, wait_state
from tests.support.mqtt import TestClient


def _config(broker: Any, store: Path, engine: dict[str, Any] | None) -> EngineConfig:
    user, password = broker.login("engine")
    data: dict[str, Any] = {
        "table": TABLE,
        "game": {"variant": "F7S", "ante": 1, "bring_in": 2, "small_bet": 5, "big_bet": 10},
        "seats": [{"seat": 1, "name": "Ann", "stack": 200}, {"seat": 2, "name": "Bob", "stack": 200},
                  {"seat": 3, "name": "Cy", "stack": 200}],
        "store": {"url": str(store)},
        "broker": {"host": broker.host, "port": broker.port, "username": user, "password": password},
    }
    if engine is not None:
        data["engine"] = engine
    return EngineConfig.from_dict(data)


def _play_to_the_award(broker: Any) -> tuple[TestClient, float]:
    """Third street from the shoe, the bring-in, two folds: the pot is awarded.  Returns the monitor
    and when the award was seen."""
    monitor = TestClient(broker, "monitor")
    assert monitor.connected()
    monitor.subscribe([f"studtable/v1/{TABLE}/public/state"])
    console = client(broker, "console", "console-1")
    bridge = client(broker, "bridge", "shoe-1")
    cards = ["2c", "3c", "4c", "5c", "6c", "7c", "8d", "9d", "Td"]
    for k, card in enumerate(cards, 1):
        draw(bridge, k, card)
    for _ in range(3):
        state = wait_state(monitor, lambda s: s["phase"] in ("betting", "complete"))
        if state["phase"] == "complete":
            break
        opt = next(o for o in state["options"] if o["action"] in ("bring_in", "fold"))
        before = len(monitor.received)
        console.publish(Channel.COMMAND, "action", seat=state["to_act"], action=opt["action"], amount=opt["amount"])
        monitor.wait(lambda b=before: len(monitor.received) > b)
    state = wait_state(monitor, lambda s: s["phase"] == "complete" and s["hand_id"] == 1)
    assert state["awards"], state
    return monitor, time.monotonic()


def test_by_default_the_result_holds_until_the_dealer_taps_next_hand(mosquitto_broker: Any, tmp_path: Path) -> None:
    config = _config(mosquitto_broker, tmp_path / "engine.db", None)
    assert config.auto_start is False
    # The first hand waits for the dealer too (the config seats the table, nothing more).
    ops = [i["op"] for i in EngineService(config).core.setup_inputs()]
    assert "start_hand" not in ops and ops.count("seat") == 3, ops
    service = EngineService(config).start()
    try:
        console = client(mosquitto_broker, "console", "console-9")
        console.publish(Channel.COMMAND, "table", op="start_hand", seat=None)
        monitor, _ = _play_to_the_award(mosquitto_broker)
        time.sleep(2.0)
        state = wait_state(monitor, lambda s: True)
        assert state["phase"] == "complete" and state["hand_id"] == 1 and state["awards"]
        console.publish(Channel.COMMAND, "table", op="start_hand", seat=None)
        wait_state(monitor, lambda s: s["hand_id"] == 2 and s["phase"] == "dealing")
    finally:
        service.stop()


def test_auto_start_holds_the_result_hold_s_seconds(mosquitto_broker: Any, tmp_path: Path) -> None:
    hold_s = 1.5
    service = EngineService(_config(mosquitto_broker, tmp_path / "engine.db",
                                    {"auto_start": True, "hold_s": hold_s})).start()
    try:
        monitor, awarded = _play_to_the_award(mosquitto_broker)
        state = wait_state(monitor, lambda s: s["hand_id"] == 2, timeout=hold_s + 5)
        held = time.monotonic() - awarded
        assert state["hand_id"] == 2
        assert held >= hold_s - 0.3, f"the next hand started {held:.2f} s after the award"
    finally:
        service.stop()


def test_the_table_file_holds_the_result_by_default(tmp_path: Path) -> None:
    assert TableConfig.__dataclass_fields__["auto_start"].default is False
    with pytest.raises(Exception, match="hold_s"):
        EngineConfig.from_dict({"table": "t1", "game": {"variant": "F7S", "ante": 1, "bring_in": 2, "small_bet": 5,
                                                         "big_bet": 10}, "engine": {"hold_s": -1}})
