"""The console's network edge: MQTT in -> model, button presses -> command messages out.

Kept thin on purpose (DESIGN: pure core, thin edges).  ``Commands`` turns a
dealer's touch into the wire message the engine expects (``action``,
``report``, ``ruling``, ``manual_card`` on ``console/command``) and hands it
to a ``CommandSink``; it decides nothing about poker (the amount comes from
the option the engine offered).  ``BusEdge`` is the project's one bus client,
``engine.bus.BusClient``, with a small Qt-signal adapter: it logs in with the
console or monitor role, subscribes to what its role may read and re-emits
every decoded message as a Qt signal.  paho calls back on its network thread;
a Qt signal emitted there is delivered to the GUI thread as a queued call,
which is the only thread crossing in the console.
``MemorySink`` captures what would be published (tests, screenshots).
"""

from __future__ import annotations

import itertools
import logging
import time
from collections.abc import Callable, Mapping
from typing import Any, Protocol

from PySide6.QtCore import QObject, Signal

from dealer_console.snapshot import OptionView
from engine import wire
from engine.bus import BusClient
from engine.wire import Channel, Message, Role, WireError

log = logging.getLogger(__name__)

#: what each role subscribes to (the broker's ACL would refuse more)
SUBSCRIPTIONS: dict[Role, tuple[Channel, ...]] = {
    Role.CONSOLE: (Channel.STATE, Channel.PROMPT, Channel.AVAIL, Channel.BIRTH, Channel.HISTORY_REPLY),
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

    def common_card(self, card: str) -> Message:
        """RRoP stud 15: the common card turned face up in the centre, keyed on the picker."""
        return self.sink.send("manual_card", seat=None, card=card, face_up=True, common=True)

    def show(self, seat: int, cards: list[str]) -> Message:
        """The seat's hand shown: ``cards`` keyed on the picker, or none for the cards the shoe and camera
        identified as dealt (the engine knows them; the console never does)."""
        return self.sink.send("show", seat=seat, cards=list(cards))

    def muck(self, seat: int) -> Message:
        return self.sink.send("muck", seat=seat)

    def correction(self, hand: int, entry: int, pin: str = "") -> Message:
        """Undo one of the hand's entries (``dealer_inputs``); the floor PIN for an older one."""
        return self.sink.send("correction", op="undo", hand=hand, input=entry, **({"pin": pin} if pin else {}))

    def game(self, game: dict[str, Any]) -> Message:
        """The game and stakes from the next hand (the engine checks them)."""
        return self.sink.send("table", op="game", seat=None, game=dict(game))

    def table(self, op: str, seat: int | None, **fields: Any) -> Message:
        """Seating and chips between hands, and the next hand (``start_hand``)."""
        return self.sink.send("table", op=op, seat=seat, **fields)


class BusEdge(QObject):
    """The console's or the monitor's bus connection: ``engine.bus.BusClient`` with Qt signals.

    The one MQTT client of the project (credentials, Last Will, online and birth at every
    connect, re-subscription, decoding) does the work; this adapter only subscribes to what the
    role may read and re-emits each message and each connection change as a Qt signal, which
    Qt delivers on the GUI thread (a queued call: paho calls back on its network thread).
    """

    received = Signal(object)  # engine.wire.Message
    connectionChanged = Signal(bool)

    def __init__(self, *, host: str, port: int, username: str, password: str, table: str,
                 role: Role = Role.CONSOLE, device: str | None = None, session: int | None = None,
                 parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.table = table
        self.role = Role(role)
        self.device = device or str(self.role)
        # The session counter must grow at each start; the wall clock in ms does, without a state file.
        self.session = session if session is not None else time.time_ns() // 1_000_000
        self.client = BusClient(host=host, port=port, username=username, password=password, table=table,
                                device=self.device, role=self.role, session=self.session,
                                on_message=self._message, on_connection=self.connectionChanged.emit)
        for channel in SUBSCRIPTIONS[self.role]:
            self.client.subscribe(channel)

    @property
    def connected(self) -> bool:
        return self.client.connected

    @property
    def invalid(self) -> int:
        return self.client.invalid_count

    def start(self) -> BusEdge:
        self.client.start(wait=None)  # paho keeps trying until the broker answers; the strip shows it
        return self

    def stop(self) -> None:
        self.client.stop(2.0)

    def send(self, kind: str, **body: Any) -> Message:
        """Publish one console command (QoS and retain from the wire contract)."""
        if self.role is not Role.CONSOLE:
            raise WireError(f"the {self.role} role sends no commands")
        return self.client.publish(Channel.COMMAND, kind, **body)

    def _message(self, msg: Message) -> None:
        self.received.emit(msg)


class BusHistory(QObject):
    """The history page's source: a ``history`` query on ``console/command``, answered by the engine
    on ``console/history`` (which only the console role may read).  The console never opens the
    engine's store (docs/security.md): the engine answers from its hand log with the access rules
    of this role.  ``reply`` is called on the GUI thread with the answer's body; a query the wire
    contract refuses is answered at once with the reason, and nothing is sent."""

    def __init__(self, edge: BusEdge, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.edge = edge
        self._pending: dict[str, Callable[[Mapping[str, Any]], None]] = {}
        self._ids = itertools.count(1)
        edge.received.connect(self._received)

    def ask(self, query: Mapping[str, Any], reply: Callable[[Mapping[str, Any]], None]) -> None:
        request = f"{self.edge.device}.{self.edge.session % 100000}.{next(self._ids)}"
        try:
            self.edge.send("history", request=request, **dict(query))
        except WireError as exc:
            reply({"request": request, "hands": [], "hand": None, "error": f"history query refused: {exc}"})
            return
        self._pending[request] = reply
        while len(self._pending) > 32:  # questions the engine never answered (it was down): forget the oldest
            self._pending.pop(next(iter(self._pending)))

    def _received(self, msg: Message) -> None:
        if msg.channel is not Channel.HISTORY_REPLY:
            return
        reply = self._pending.pop(str(msg.body.get("request")), None)
        if reply is not None:
            reply(msg.body)


#: the name the console's network edge had before it was built on BusClient
MqttEdge = BusEdge
