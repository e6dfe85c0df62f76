"""Device health is honest (issue 21, 9): the age is the time since the device's last message, a
retained "online" from long ago does not make a device look fresh, and a broker outage is a broker
outage on the screen, not "engine unreachable"."""

from __future__ import annotations

from typing import Any

from dealer_console.health import DeviceHealth


class Clock:
    t = 1000.0

    def __call__(self) -> float:
        return self.t


def row(h: DeviceHealth, device: str) -> Any:
    return next(r for r in h.rows() if r.device == device)


def test_a_retained_online_is_not_a_message_heard_now() -> None:
    clock = Clock()
    h = DeviceHealth(clock, "engine", "console-1")
    h.broker(True)
    h.availability("shoe-1", True)  # retained, delivered at subscribe: says nothing of when
    assert row(h, "shoe-1").online and row(h, "shoe-1").age_s is None
    # The engine heard the shoe 4.2 s before it published this state.
    h.engine_summary({"shoe-1": {"online": True, "last_seen_s": 4.2}})
    clock.t += 3.0
    assert abs(row(h, "shoe-1").age_s - 7.2) < 1e-6
    h.availability("shoe-1", False)  # the Last Will: offline, shown as offline
    assert not row(h, "shoe-1").online


def test_a_broker_outage_is_shown_as_one(qtbot: Any) -> None:
    from dealer_console.console import ConsoleWindow
    from dealer_console.driver import ConsoleDriver
    from dealer_console.edge import Commands, MemorySink
    from dealer_console.model import TableModel

    model = TableModel(self_device="console")
    window = ConsoleWindow(model, Commands(MemorySink()))
    qtbot.addWidget(window)
    window.show()
    d = ConsoleDriver(window)
    model.set_broker(True)
    model.health.availability("engine", False)
    model.healthChanged.emit()
    assert d.text("banner").startswith("ENGINE UNREACHABLE")
    model.set_broker(False)
    assert d.text("banner").startswith("BROKER UNREACHABLE")


def test_the_engine_publishes_how_long_ago_it_heard_each_device() -> None:
    from engine.service import EngineConfig, EngineCore

    config = EngineConfig.from_dict({
        "table": "t1", "game": {"variant": "F7S", "ante": 1, "bring_in": 2, "small_bet": 5, "big_bet": 10},
        "seats": [], "store": {"url": ":memory:"}, "broker": {"host": "127.0.0.1", "port": 1883}})
    core = EngineCore(config)
    core.devices.update({"shoe-1": True, "cam-1": False})
    core.heard["shoe-1"] = 100.0
    devices = core.state(now=102.5)["devices"]
    assert devices["shoe-1"] == {"online": True, "last_seen_s": 2.5}
    assert devices["cam-1"] == {"online": False}  # never heard: no age made up
