"""The table as a cardroom runs it, every part its own process: mosquitto (the generated
config), `studtable engine`, `studtable bridge` reading the shoe simulator's pty, and the vision
service reading the simulated camera; the hands are checked against the simulated truth."""

from __future__ import annotations

from typing import Any

import pytest

from dealer_console.demo import DemoOptions, run_demo
from tests.e2e.test_demo import assert_table_ok
from vision.deckart import AISLERIOT_DIR

pytestmark = pytest.mark.slow


@pytest.mark.skipif(not AISLERIOT_DIR.is_dir(), reason="Debian's gnome-cards-data (the camera's card art) is missing")
def test_every_part_a_process_on_mosquitto(mosquitto_broker: Any) -> None:
    result = run_demo(DemoOptions(hands=3, seed=21, players=4, processes=True), broker=mosquitto_broker)
    assert_table_ok(result, 3, players=4)
    assert (result["engine"], result["bridge"], result["broker"]) == ("process", "process", "mosquitto")
    cam = result["camera"]
    assert "own process" in cam["device"] and cam["hands_checked"] == 3
    got, total = (int(x) for x in cam["up_cards_read"].split("/"))
    assert total > 0 and got / total >= 0.95, cam


def test_shoe_cable_pulled_with_the_bridge_as_a_process(mosquitto_broker: Any) -> None:
    result = run_demo(DemoOptions(hands=2, seed=4, processes=True, camera=False, drill="shoe-cable"),
                      broker=mosquitto_broker)
    assert_table_ok(result, 2)
    assert result["bridge"] == "process" and result["camera"] is None
    drill = result["drill"]
    assert drill["events_kept_in_shoe"] >= 1 and drill["card_delivered_after_reconnect"] is True
