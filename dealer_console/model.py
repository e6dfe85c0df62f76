"""The Qt models the console and the monitor draw: table state, prompts, device health.

The model/view split (Qt's own): widgets never read MQTT and never compute
poker; they observe these models and redraw when told.  ``TableModel`` holds
the latest ``TableSnapshot`` (read by ``snapshot.read_state`` from the
engine's ``public/state``), the open prompts (from the state's ``prompts`` or
the ``dealer/prompt`` channel, whichever came last) and the ``DeviceHealth``.
``apply_message`` is the one entry point for bus traffic, so the network edge
stays a few lines: decode, then hand the ``engine.wire.Message`` here (on the
GUI thread; the edge crosses threads with a queued signal).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from typing import Any

from PySide6.QtCore import QObject, Signal

from dealer_console import qtguard  # noqa: F401 - see qtguard: keeps PySide6 from freeing None
from dealer_console.health import DeviceHealth
from dealer_console.snapshot import PromptView, TableSnapshot, read_prompts, read_state
from engine.wire import AVAILABILITY_ONLINE, Channel, Message


class TableModel(QObject):
    """The latest public state, prompts and device health, with change signals."""

    stateChanged = Signal()
    promptsChanged = Signal()
    healthChanged = Signal()

    def __init__(self, *, engine_device: str = "engine", self_device: str = "",
                 clock: Callable[[], float] = time.monotonic, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.snapshot = TableSnapshot()
        self.raw_state: dict[str, Any] = {}
        self.prompts: tuple[PromptView, ...] = ()
        self.health = DeviceHealth(clock, engine_device, self_device)
        self.states_seen = 0
        self._prompts_in_state = False

    # -- inputs -------------------------------------------------------------
    def set_state(self, state: Mapping[str, Any]) -> None:
        self.raw_state = dict(state)
        self.snapshot = read_state(state)
        self.states_seen += 1
        if self.snapshot.devices:
            self.health.engine_summary(self.snapshot.devices)
            self.healthChanged.emit()
        self.stateChanged.emit()
        prompts = self.snapshot.prompts
        if prompts is not None:
            self._prompts_in_state = True
        elif self._prompts_in_state:
            # The engine puts open prompts in its state; a state without them has none open.
            prompts = ()
        if prompts is not None and prompts != self.prompts:
            self.prompts = prompts
            self.promptsChanged.emit()

    def set_prompts(self, prompts: Any) -> None:
        """Prompts from ``dealer/prompt`` (the ``open`` list) or in the state's shape."""
        new = read_prompts(prompts)
        if new != self.prompts:
            self.prompts = new
            self.promptsChanged.emit()

    def set_broker(self, connected: bool) -> None:
        self.health.broker(connected)
        self.healthChanged.emit()

    def apply_message(self, msg: Message) -> None:
        """One decoded bus message: state, prompts, availability or birth."""
        if msg.channel is Channel.AVAIL:
            self.health.availability(msg.source, msg.kind == AVAILABILITY_ONLINE)
            self.healthChanged.emit()
            return
        self.health.heard(msg.source)
        if msg.channel is Channel.BIRTH:
            role = msg.body.get("role")
            if isinstance(role, str):
                self.health.birth(msg.source, role)
        elif msg.channel is Channel.STATE:
            state = msg.body.get("state")
            if isinstance(state, Mapping):
                self.set_state(state)
        elif msg.channel is Channel.PROMPT:
            self.set_prompts(msg.body.get("open"))
        self.healthChanged.emit()

    # -- queries ------------------------------------------------------------
    @property
    def controls_enabled(self) -> bool:
        return self.health.engine_reachable
