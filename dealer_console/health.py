"""Device health: who is online and how long since each was last heard.

Why a pure class: the dealer must see at once when the engine, the shoe or a
camera has gone quiet, and the controls must lock while the engine cannot be
reached.  Those decisions are easy to get subtly wrong (a retained ``online``
from a dead process, a broker that dropped us), so they live here, fed with
availability, births and "heard from" events and a clock passed in, and are
tested without Qt or a broker.

Sources of truth, in order: our own broker connection (no broker, nothing is
reachable); retained availability messages with their Last Will
(``offline`` when a process dies); births (they carry the role); any message
from a device (its "last seen"); and the engine's own ``devices`` summary in
``public/state``, which covers devices whose topics this role cannot read.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

#: how the strip groups and names devices by role
ROLE_ORDER = {"engine": 1, "bridge": 2, "vision": 3, "recorder": 4}
ROLE_LABEL = {"engine": "Engine", "bridge": "Shoe", "vision": "Camera", "recorder": "Recorder"}


@dataclass(frozen=True, slots=True)
class DeviceRow:
    name: str  # what the strip shows ("Shoe", "Camera cam-1")
    device: str  # the device id ("" for the broker)
    role: str
    online: bool
    age_s: float | None  # seconds since last heard; None if never


def guess_role(device: str) -> str:
    """A role for a device we have no birth for, from the usual device ids."""
    d = device.lower()
    if d.startswith("engine"):
        return "engine"
    if d.startswith(("shoe", "bridge")):
        return "bridge"
    if d.startswith(("cam", "vision")):
        return "vision"
    if d.startswith(("console", "monitor")):
        return d.split("-")[0].rstrip("0123456789")
    if d.startswith("recorder"):
        return "recorder"
    return "other"


class DeviceHealth:
    """What the health strip shows and whether the controls are enabled."""

    def __init__(self, clock: Callable[[], float], engine_device: str = "engine", self_device: str = "") -> None:
        self.clock = clock
        self.engine_device = engine_device
        self.self_device = self_device
        self.broker_online = False
        self.broker_since: float | None = None
        self._online: dict[str, bool] = {}
        self._role: dict[str, str] = {}
        self._seen: dict[str, float] = {}
        self._last_any: float | None = None

    # -- inputs -------------------------------------------------------------
    def broker(self, connected: bool) -> None:
        self.broker_online = connected
        self.broker_since = self.clock()

    def availability(self, device: str, online: bool) -> None:
        """A retained availability (it may be hours old): online or not, never "heard just now"."""
        self._online[device] = online

    def birth(self, device: str, role: str) -> None:
        self._role[device] = role
        self._seen[device] = self.clock()

    def heard(self, device: str) -> None:
        """Any valid message from ``device``; a device that talks is alive."""
        self._seen[device] = self._last_any = self.clock()
        self._online.setdefault(device, True)

    def engine_summary(self, devices: Mapping[str, Mapping[str, Any]]) -> None:
        """The engine's ``devices`` view from ``public/state``: fills in what we cannot subscribe to."""
        now = self.clock()
        for device, info in devices.items():
            if device == self.engine_device or device == self.self_device:
                continue
            role = info.get("role")
            if isinstance(role, str):
                self._role.setdefault(device, role)
            online = info.get("online")
            if isinstance(online, bool):
                self._online[device] = online
            age = info.get("last_seen_s")
            if isinstance(age, int | float) and not isinstance(age, bool):
                # The engine's age of its last message from the device, as of this state.
                self._seen[device] = max(now - float(age), self._seen.get(device, float("-inf")))

    # -- outputs ------------------------------------------------------------
    def role_of(self, device: str) -> str:
        return self._role.get(device) or guess_role(device)

    def online(self, device: str) -> bool:
        return self.broker_online and self._online.get(device, False)

    @property
    def engine_reachable(self) -> bool:
        """The controls are live only when our broker link is up and the engine says it is online."""
        return self.online(self.engine_device)

    def rows(self) -> list[DeviceRow]:
        now = self.clock()
        last = self._last_any if self._last_any is not None else self.broker_since
        rows = [DeviceRow("Broker", "", "broker", self.broker_online, None if last is None else now - last)]
        devices = set(self._online) | set(self._seen) | {self.engine_device}
        devices.discard(self.self_device)
        shown = [d for d in devices if self.role_of(d) in ROLE_ORDER]
        for d in sorted(shown, key=lambda d: (ROLE_ORDER[self.role_of(d)], d)):
            role = self.role_of(d)
            label = ROLE_LABEL[role]
            name = label if role == "engine" or d.lower() == label.lower() else d
            seen = self._seen.get(d)
            rows.append(DeviceRow(name, d, role, self.online(d), None if seen is None else max(0.0, now - seen)))
        return rows


def age_text(age: float | None) -> str:
    """Seconds since last heard, as a dealer reads it."""
    if age is None:
        return "never"
    if age < 10:
        return f"{age:.1f} s"
    if age < 120:
        return f"{age:.0f} s"
    if age < 7200:
        return f"{age / 60:.0f} min"
    return f"{age / 3600:.0f} h"
