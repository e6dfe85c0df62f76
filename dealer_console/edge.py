"""The console's network edge: MQTT in -> model, button presses -> command messages out.

Kept thin on purpose (DESIGN: pure core, thin edges).  ``Commands`` turns a
dealer's touch into the wire message the engine expects (``action``,
``report``, ``ruling``, ``manual_card`` on ``console/command``) and hands it
to a ``CommandSink``; it decides nothing about poker (the amount comes from
the option the engine offered).  ``MqttEdge`` is one paho-mqtt 2.x client:
it logs in with the console or monitor role, sets a retained ``offline``
Last Will on its availability topic, announces ``online`` and a birth at
every connect, subscribes to what its role may read, decodes every message
with ``engine.wire.decode`` (a message that breaks the contract is logged and
dropped), and re-emits it as a Qt signal.  paho calls back on its network
thread; a Qt signal emitted there is delivered to the GUI thread as a queued
call, which is the only thread crossing in the console.

``engine.bus.BusClient`` does the same for the services; it was not yet
committed when this was written, so the console has its own few lines here.
``MemorySink`` captures what would be published (tests, screenshots).
"""

from __future__ import annotations

import logging
import threading
import time
from typing import Any, Protocol

from PySide6.QtCore import QObject, Signal

from dealer_console.snapshot import OptionView
from engine import wire
from engine.wire import Channel, Message, Role, WireError

log = logging.getLogger(__name__)

#: what each role subscribes to (the broker's ACL would refuse more)
SUBSCRIPTIONS: dict[Role, tuple[Channel, ...]] = {
    Role.CONSOLE: (Channel.STATE, Channel.PROMPT, Channel.AVAIL, Channel.BIRTH),
    Role.MONITOR: (Channel.STATE, Channel.AVAIL),
}

#: the dealer reports the console offers, in the engine's report vocabulary
REPORTS: tuple[tuple[str, str, bool], ...] = (
    # (report id, button label, needs a seat)
    ("card_off_table", "Card off table", True),
    ("player_absent", "Player absent", True),
    ("picked_up_upcards", "Picked up upcards", True),
    ("out_of_turn", "Acted out of turn", True),
    ("misdeal", "Misdeal called", False),
)


class CommandSink(Protocol):
    """Anything that can publish a console command (the MQTT edge, or a recorder in tests)."""

    def send(self, kind: str, **body: Any) -> Message: ...


class MemorySink:
    """Builds and validates each command exactly as the edge would, and keeps it instead of sending."""

    def __init__(self, table: str = "t1", device: str = "console", session: int = 1) -> None:
        self.table, self.device, self.session = table, device, session
        self.sent: list[Message] = []

    def send(self, kind: str, **body: Any) -> Message:
        msg = wire.make(self.table, Channel.COMMAND, kind, source=self.device, session=self.session,
                        seq=len(self.sent) + 1, **body)
        wire.encode(msg)  # what would go on the wire must encode
        self.sent.append(msg)
        return msg


class Commands:
    """The dealer's inputs as command messages; no poker decided here."""

    def __init__(self, sink: CommandSink) -> None:
        self.sink = sink

    def action(self, seat: int, option: OptionView) -> Message:
        return self.sink.send("action", seat=seat, action=option.action, amount=option.command_amount())

    def ruling(self, prompt: str, option: str) -> Message:
        return self.sink.send("ruling", prompt=prompt, option=option)

    def report(self, report: str, seat: int | None, **details: Any) -> Message:
        return self.sink.send("report", report=report, seat=seat, **details)

    def manual_card(self, seat: int, card: str, face_up: bool) -> Message:
        return self.sink.send("manual_card", seat=seat, card=card, face_up=face_up)


class MqttEdge(QObject):
    """One paho-mqtt client for the console or the monitor; messages come out as Qt signals."""

    received = Signal(object)  # engine.wire.Message
    connectionChanged = Signal(bool)

    def __init__(self, *, host: str, port: int, username: str, password: str, table: str,
                 role: Role = Role.CONSOLE, device: str | None = None, session: int | None = None,
                 parent: QObject | None = None) -> None:
        super().__init__(parent)
        import paho.mqtt.client as mqtt
        from paho.mqtt.enums import CallbackAPIVersion

        self.table = table
        self.role = Role(role)
        self.device = device or str(self.role)
        wire.topic(table, Channel.AVAIL, self.device)  # checks the ids with a clear message
        # The session counter must grow at each start; the wall clock in seconds does, without a state file.
        self.session = session if session is not None else int(time.time())
        self.host, self.port = host, port
        self._seq = 0
        self._lock = threading.Lock()
        self.connected = False
        self.invalid = 0
        client = mqtt.Client(CallbackAPIVersion.VERSION2, client_id=self.device, protocol=mqtt.MQTTv311,
                             clean_session=True)
        client.username_pw_set(username, password)
        will = wire.availability(table, self.device, online=False)
        client.will_set(will.topic, wire.encode(will), qos=1, retain=True)
        client.reconnect_delay_set(min_delay=1, max_delay=5)
        client.on_connect = self._on_connect
        client.on_disconnect = self._on_disconnect
        client.on_message = self._on_message
        self._client = client

    def start(self) -> MqttEdge:
        """Connect in the background; paho keeps reconnecting until ``stop``."""
        self._client.connect_async(self.host, self.port, keepalive=10)
        self._client.loop_start()
        return self

    def stop(self) -> None:
        if self.connected:
            off = wire.availability(self.table, self.device, online=False)
            self._client.publish(off.topic, wire.encode(off), qos=1, retain=True).wait_for_publish(2)
        self._client.disconnect()
        self._client.loop_stop()

    def send(self, kind: str, **body: Any) -> Message:
        """Publish one console command (QoS and retain from the wire contract)."""
        if self.role is not Role.CONSOLE:
            raise WireError(f"the {self.role} role sends no commands")
        with self._lock:
            self._seq += 1
            msg = wire.make(self.table, Channel.COMMAND, kind, source=self.device, session=self.session,
                            seq=self._seq, **body)
            spec = msg.spec
            self._client.publish(msg.topic, wire.encode(msg), qos=spec.qos, retain=spec.retained)
        return msg

    # -- paho callbacks: network thread -----------------------------------------
    def _on_connect(self, client: Any, userdata: Any, flags: Any, reason: Any, props: Any) -> None:
        if reason.is_failure:
            log.error("%s: the broker refused the login (%s); check the %s role's username and password",
                      self.device, reason, self.role)
            return
        online = wire.availability(self.table, self.device, online=True)
        client.publish(online.topic, wire.encode(online), qos=1, retain=True)
        body: dict[str, Any] = {"role": str(self.role), "version": "1", "capabilities": []}
        if "last_seq" in {f.name for f in wire.schemas()[(Channel.BIRTH, "birth")].fields}:
            body["last_seq"] = self._seq  # the contract grew this field; send it when it is there
        birth = wire.make(self.table, Channel.BIRTH, "birth", source=self.device, session=self.session, seq=0,
                          **body)
        client.publish(birth.topic, wire.encode(birth), qos=1, retain=True)
        filters = [(wire.topic_filter(self.table, c), wire.CHANNELS[c].qos) for c in SUBSCRIPTIONS[self.role]]
        client.subscribe(filters)
        self.connected = True
        self.connectionChanged.emit(True)

    def _on_disconnect(self, client: Any, userdata: Any, flags: Any, reason: Any, props: Any) -> None:
        if self.connected:
            log.warning("%s: lost the broker (%s); reconnecting", self.device, reason)
        self.connected = False
        self.connectionChanged.emit(False)

    def _on_message(self, client: Any, userdata: Any, raw: Any) -> None:
        try:
            msg = wire.decode(raw.topic, bytes(raw.payload))
        except WireError as exc:
            self.invalid += 1
            log.warning("%s: dropped a message on %s: %s", self.device, raw.topic, exc)
            return
        if msg.source == self.device:
            return
        self.received.emit(msg)
