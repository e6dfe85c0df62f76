"""The bus edge every studtable process uses: one paho-mqtt 2.x client with the table's conventions.

Theory of operation
-------------------
Two parts, kept apart on purpose:

``SourceTracker`` (pure, no I/O) is what a receiver needs to turn MQTT's
at-least-once delivery into "every input exactly once, and say so when one is
missing".  Each message carries ``(source, session, seq)``; the tracker keeps,
per source, the current session, the highest seq seen and the ranges still
missing below it, and classifies every arrival:

=============  =====================================================================
``NEW``        the next message, or a later one with nothing missing in between
``GAP``        seq jumped: ``missing`` is the range that has not arrived (a card may
               have been drawn and not seen: the engine prompts the dealer)
``LATE``       fills a range reported missing earlier (out-of-order delivery)
``DUPLICATE``  seen before (QoS 1 redelivery, a re-sent message after reconnect)
``NEW_SESSION`` the device restarted (its session counter grew); seqs start again
``STALE``      from a session older than the current one: a straggler, ignore it
=============  =====================================================================

It can be seeded from the event store (``EventStore.heads()``) so that after an
engine restart redeliveries are still recognised.  Births (seq 0) go through
``observe_birth``: a larger session there is a restart seen before any data, and
``last_seq`` tells what the device has sent so far, so ``outstanding`` can name
messages that never came even when nothing follows them.

``BusClient`` (the edge) owns the paho client: credentials, a retained
``offline`` Last Will on ``avail/<device>``, ``online`` and the birth
(session counter supplied by the caller, who persists it) at every connect,
re-subscription after every reconnect (paho reconnects by itself from its
network thread), a per-message seq on everything it sends, QoS and retain
taken from the wire contract, and decoding of everything it receives:
a message that breaks the contract is logged and handed to ``on_invalid``,
never raised into the network thread.

Delivery guarantee: paho sends the PUBACK for a QoS 1 message only after
``on_message`` returns, so a handler that makes its effect durable inside the
callback gets at-least-once end to end, and the tracker or the store's unique
key makes it exactly once.  A handler that may *fail* to make a message durable
(the engine, on a full disk) passes ``on_message_ack`` instead: it is called with
the message and an ``ack`` function, and the PUBACK goes out only when the
handler calls ``ack()`` (paho's manual acknowledgement).  Until then the broker
holds the message for this persistent session and delivers it again after a
reconnect; a handler that raises leaves it unacknowledged too.
"""

from __future__ import annotations

import contextlib
import logging
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from engine import wire
from engine.wire import Channel, Message, Role, WireError

log = logging.getLogger(__name__)

# --------------------------------------------------------------------------- pure core

_MAX_RANGES = 64  # per source; a device that loses more than this many separate runs is broken anyway


class Verdict(StrEnum):
    NEW = "new"
    GAP = "gap"
    LATE = "late"
    DUPLICATE = "duplicate"
    NEW_SESSION = "new_session"
    STALE = "stale"

    @property
    def accept(self) -> bool:
        """Whether the message is an input to act on (as opposed to one to drop)."""
        return self in (Verdict.NEW, Verdict.GAP, Verdict.LATE, Verdict.NEW_SESSION)


@dataclass(frozen=True, slots=True)
class Tracked:
    verdict: Verdict
    source: str
    session: int
    seq: int
    #: the inclusive seq range found missing by this message (GAP, or NEW_SESSION not starting at 1)
    missing: tuple[int, int] | None = None


@dataclass(slots=True)
class _SourceState:
    session: int
    high: int
    missing: list[tuple[int, int]]
    announced: int = 0


class SourceTracker:
    """Classify ``(source, session, seq)`` arrivals: new, duplicate, gap, late, new session, stale."""

    def __init__(self, heads: Mapping[str, tuple[int, int]] | None = None) -> None:
        self._sources: dict[str, _SourceState] = {
            source: _SourceState(session, seq, []) for source, (session, seq) in (heads or {}).items()
        }

    def observe(self, source: str, session: int, seq: int) -> Tracked:
        """Classify one data message (seq >= 1) and remember it."""
        if seq < 1:
            raise ValueError(
                f"data messages have seq >= 1 (births use observe_birth); got {seq} from {source!r}"
            )
        state = self._sources.get(source)
        if state is None or session > state.session:
            missing = (1, seq - 1) if seq > 1 else None
            self._sources[source] = _SourceState(session, seq, [missing] if missing else [])
            return Tracked(Verdict.NEW_SESSION, source, session, seq, missing)
        if session < state.session:
            return Tracked(Verdict.STALE, source, session, seq)
        if seq == state.high + 1:
            state.high = seq
            return Tracked(Verdict.NEW, source, session, seq)
        if seq > state.high:
            gap = (state.high + 1, seq - 1)
            state.missing.append(gap)
            del state.missing[:-_MAX_RANGES]
            state.high = seq
            return Tracked(Verdict.GAP, source, session, seq, gap)
        for i, (lo, hi) in enumerate(state.missing):
            if lo <= seq <= hi:
                parts = [(lo, seq - 1), (seq + 1, hi)]
                state.missing[i : i + 1] = [(a, b) for a, b in parts if a <= b]
                return Tracked(Verdict.LATE, source, session, seq)
        return Tracked(Verdict.DUPLICATE, source, session, seq)

    def observe_birth(self, source: str, session: int, last_seq: int) -> Verdict:
        """Note a birth; NEW_SESSION if it announces a restart, STALE if old, else DUPLICATE (a reconnect)."""
        state = self._sources.get(source)
        if state is None or session > state.session:
            self._sources[source] = _SourceState(session, 0, [], last_seq)
            return Verdict.NEW_SESSION
        if session < state.session:
            return Verdict.STALE
        state.announced = max(state.announced, last_seq)
        return Verdict.DUPLICATE

    def outstanding(self, source: str) -> list[tuple[int, int]]:
        """Ranges of seqs the source sent (or announced) in its current session that have not arrived."""
        state = self._sources.get(source)
        if state is None:
            return []
        ranges = list(state.missing)
        if state.announced > state.high:
            ranges.append((state.high + 1, state.announced))
        return ranges

    def snapshot(self, source: str) -> tuple[int, int, list[tuple[int, int]], int] | None:
        """What the tracker knows of one source, to ``restore`` if the input it is about to
        accept cannot be made durable (the broker then delivers it again: it must not look seen)."""
        state = self._sources.get(source)
        return None if state is None else (state.session, state.high, list(state.missing), state.announced)

    def restore(self, source: str, snap: tuple[int, int, list[tuple[int, int]], int] | None) -> None:
        if snap is None:
            self._sources.pop(source, None)
        else:
            self._sources[source] = _SourceState(snap[0], snap[1], list(snap[2]), snap[3])

    def session(self, source: str) -> int | None:
        state = self._sources.get(source)
        return state.session if state else None

    def sources(self) -> list[str]:
        return sorted(self._sources)


# --------------------------------------------------------------------------- edge

MessageHandler = Callable[[Message], None]
AckingHandler = Callable[[Message, Callable[[], None]], None]
InvalidHandler = Callable[[str, bytes, WireError], None]
ConnectionHandler = Callable[[bool], None]


def _no_delay(client: Any, userdata: Any, sock: Any) -> None:
    """Turn Nagle off on the client side too (paho leaves it on): with it, a small QoS 1
    publish waits for the broker's delayed ACK and every round trip costs ~40 ms."""
    import socket

    with contextlib.suppress(AttributeError, OSError):
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)


def _write_now(client: Any) -> None:
    """Write what paho has queued, now, from its network thread (i.e. inside a callback).

    paho only queues a packet published from a callback and writes it once the callback has
    returned and its loop comes round again.  The engine publishes a state from its message
    handler and then goes on with work that need not hold the state up (the hand log, the
    next hand, store upkeep), so the state is written here at once.  Only this thread ever
    writes to the socket, so this cannot interleave with paho's own writes.  It stops, leaving
    the rest to paho's loop, at anything whose write would call back into paho (a QoS 0
    publish, a DISCONNECT: their handling takes a lock the callback already holds) and at any
    error (the loop sees it too, and reconnects).  Packets are written whole, in order.
    """
    out = getattr(client, "_out_packet", None)
    send = getattr(client, "_sock_send", None)
    if out is None or send is None:  # not the paho 2.x this was written against: let the loop write
        return
    from paho.mqtt.client import DISCONNECT, PUBLISH

    wrote = False
    while out:
        packet = out[0]
        command = packet["command"] & 0xF0
        if command == DISCONNECT or (command == PUBLISH and packet["qos"] == 0):
            break
        try:
            sent = send(packet["packet"][packet["pos"]:])
        except (OSError, ValueError, AttributeError):  # would block, or the connection is gone
            break
        wrote = True
        packet["pos"] += sent
        packet["to_process"] -= sent
        if packet["to_process"] > 0:
            break
        out.popleft()
    if wrote:
        with client._msgtime_mutex:  # what paho's keepalive reads
            client._last_msg_out = time.monotonic()


class BusError(RuntimeError):
    """The bus could not do what was asked; the message says what to check."""


class BusClient:
    """One process's connection to the table's broker.

    ``device`` is this process's id: its MQTT client id, the ``source`` of what it
    sends and the ``<device>`` of its availability and birth topics.  ``session``
    is its restart counter, which the caller persists and increments at each start
    (the bus has no file of its own).  ``persistent=True`` asks the broker to keep
    the subscriptions and queue QoS 1 messages while this client is away (the
    engine and the recorder want that; a console does not).
    """

    def __init__(
        self,
        *,
        host: str,
        port: int,
        username: str,
        password: str,
        table: str,
        device: str,
        role: Role | str,
        session: int,
        version: str = "0",
        capabilities: Iterable[str] = (),
        persistent: bool = False,
        keepalive: int = 10,
        ignore_own: bool = True,
        on_message: MessageHandler | None = None,
        on_invalid: InvalidHandler | None = None,
        on_connection: ConnectionHandler | None = None,
        announce_online: bool = True,
        on_message_ack: AckingHandler | None = None,
    ) -> None:
        import paho.mqtt.client as mqtt
        from paho.mqtt.enums import CallbackAPIVersion

        wire.topic(table, Channel.AVAIL, device)  # checks both ids, with a clear error
        self.host, self.port = host, port
        self.table, self.device, self.role = table, device, Role(role)
        self.session = session
        self.version = version
        self.capabilities = list(capabilities)
        self.ignore_own = ignore_own
        self.on_message = on_message
        self.on_invalid = on_invalid
        self.on_connection = on_connection
        self.on_message_ack = on_message_ack
        # What ``avail/<device>`` says while connected; a bridge says online only while its shoe answers.
        self._available = announce_online
        # Lock discipline (paho calls on_publish while holding its own message mutex, and
        # its publish() takes that mutex): _send_lock orders seq assignment with sending
        # and is held across paho.publish; _ack_lock guards the ack bookkeeping and is
        # never held while calling paho; _lock guards plain fields only.
        self._lock = threading.Lock()
        self._send_lock = threading.Lock()
        self._ack_lock = threading.Condition(threading.Lock())
        self._connected = threading.Event()
        self._seq = 0
        # Numbered messages leave in seq order across reconnects.  paho marks itself connected
        # before on_connect and resends what it held only after it returns, so a message sent by
        # another thread meanwhile would overtake them and the engine would see a gap.  Until the
        # broker has acknowledged this connection's birth (written before paho's resends, so
        # acknowledged after them), numbered messages wait here, in order (guarded by _send_lock).
        self._flowing = False
        self._held: list[tuple[Message, Callable[[], None] | None]] = []
        self._birth_mid: int | None = None
        self._filters: dict[str, int] = {}
        self._pending: set[int] = set()
        self._early_acks: set[int] = set()
        self._callbacks: dict[int, Callable[[], None]] = {}
        self.invalid_count = 0
        self.connect_count = 0

        client = mqtt.Client(
            CallbackAPIVersion.VERSION2,
            client_id=device,
            protocol=mqtt.MQTTv311,
            clean_session=not persistent,
        )
        from engine.broker.acl import own_login_required

        if own_login_required(username, self.role, device):
            raise BusError(f"{device} has a broker login of its own (its own password): log in as {device}, "
                           f"not as {username} (BrokerFiles.login(role, device), or the service's login file)")
        client.username_pw_set(username, password)
        if on_message_ack is not None:
            client.manual_ack_set(True)
        avail = wire.availability(table, device, online=False)
        client.will_set(avail.topic, wire.encode(avail), qos=1, retain=True)
        client.reconnect_delay_set(min_delay=1, max_delay=8)
        client.on_connect = self._on_connect
        client.on_disconnect = self._on_disconnect
        client.on_message = self._on_message
        client.on_publish = self._on_publish
        client.on_socket_open = _no_delay
        self._keepalive = keepalive
        self._client = client

    # -- lifecycle ----------------------------------------------------------------
    def start(self, wait: float | None = 10.0) -> BusClient:
        """Connect in the background (paho retries until the broker answers); optionally wait for it."""
        self._client.connect_async(self.host, self.port, keepalive=self._keepalive)
        self._client.loop_start()
        if wait is not None and not self._connected.wait(wait):
            raise BusError(
                f"{self.device}: no connection to the broker at {self.host}:{self.port} within {wait} s; "
                "is the broker running, and are this role's username and password right?"
            )
        return self

    def stop(self, timeout: float = 5.0) -> None:
        """Say ``offline`` (retained), wait for pending messages, disconnect cleanly (no Will)."""
        if self._connected.is_set():
            self._send(self._client, wire.availability(self.table, self.device, online=False))
            self.flush(timeout)
        self._client.disconnect()
        self._client.loop_stop()

    @property
    def connected(self) -> bool:
        return self._connected.is_set()

    def wait_connected(self, timeout: float) -> bool:
        return self._connected.wait(timeout)

    # -- subscribing --------------------------------------------------------------
    def subscribe(self, channel: Channel, table: str | None = None) -> str:
        """Subscribe to a channel of this table (kept across reconnects); returns the filter."""
        filt = wire.topic_filter(table or self.table, channel)
        with self._lock:
            self._filters[filt] = wire.CHANNELS[channel].qos
        if self._connected.is_set():
            self._client.subscribe(filt, qos=wire.CHANNELS[channel].qos)
        return filt

    # -- publishing ---------------------------------------------------------------
    @property
    def last_seq(self) -> int:
        return self._seq

    def publish(self, channel: Channel, kind: str, **body: Any) -> Message:
        """Build, check and send one message with the next seq; QoS and retain come from the contract.

        Works while disconnected too: paho queues QoS 1 messages and sends them,
        in order, after it reconnects.
        """
        return self._publish_numbered(channel, kind, body, None)

    def publish_acked(self, channel: Channel, kind: str, body: Mapping[str, Any],
                      on_acked: Callable[[], None]) -> Message:
        """``publish``, and call ``on_acked`` (from paho's thread) once the broker has acknowledged it."""
        return self._publish_numbered(channel, kind, body, on_acked)

    def _publish_numbered(self, channel: Channel, kind: str, body: Mapping[str, Any],
                          on_acked: Callable[[], None] | None) -> Message:
        with self._send_lock:
            msg = wire.make(self.table, channel, kind, source=self.device, session=self.session,
                            seq=self._seq + 1, **body)
            self._seq += 1
            if self._flowing and self._connected.is_set():
                self._send(self._client, msg, on_acked)
            else:
                self._held.append((msg, on_acked))
        return msg

    def _release_held(self, connection: int) -> None:
        """The birth is acknowledged, so paho has resent what it held: send what waited here."""
        with self._send_lock:
            if not self._connected.is_set() or self.connect_count != connection:
                return  # gone again: the next birth's acknowledgement releases them
            held, self._held = self._held, []
            for msg, on_acked in held:
                self._send(self._client, msg, on_acked)
            # Only if this connection is still the one (a disconnect meanwhile: the next birth's turn).
            self._flowing = self._connected.is_set() and self.connect_count == connection
        with self._ack_lock:
            self._ack_lock.notify_all()

    def _send(self, client: Any, msg: Message, on_acked: Callable[[], None] | None = None) -> int:
        """Send ``msg``, built here by ``wire.make`` or ``wire.availability`` (checked then)."""
        spec = msg.spec
        info = client.publish(msg.topic, wire.encode(msg, checked=True), qos=spec.qos, retain=spec.retained)
        if threading.current_thread() is getattr(client, "_thread", None):
            _write_now(client)
        acked_now = False
        if spec.qos > 0:
            with self._ack_lock:
                if info.mid in self._early_acks:  # the PUBACK beat us here
                    self._early_acks.discard(info.mid)
                    acked_now = True
                else:
                    self._pending.add(info.mid)
                    if on_acked is not None:
                        self._callbacks[info.mid] = on_acked
        if acked_now and on_acked is not None:
            on_acked()
        return int(info.mid)

    def set_available(self, online: bool) -> None:
        """Say ``online`` or ``offline`` on this device's retained availability (now, and at reconnects)."""
        self._available = online
        if self._connected.is_set():
            # No seq on availability, so no need for the send lock (callable from paho's thread).
            self._send(self._client, wire.availability(self.table, self.device, online=online))

    def flush(self, timeout: float = 5.0) -> bool:
        """Wait until every QoS 1 message sent so far has been acknowledged by the broker."""
        with self._ack_lock:
            return self._ack_lock.wait_for(lambda: not self._pending and not self._held, timeout)

    # -- paho callbacks (network thread) ------------------------------------------
    def _on_connect(self, client: Any, userdata: Any, flags: Any, reason: Any, props: Any) -> None:
        if reason.is_failure:
            log.error(
                "%s: broker refused the connection: %s (check this role's username and password)",
                self.device,
                reason,
            )
            return
        # A release still running from the last connection must not let numbered messages overtake
        # what paho resends now: held again until this connection's birth is acknowledged.
        self._flowing = False
        self._send(client, wire.availability(self.table, self.device, online=self._available))
        birth = wire.make(self.table, Channel.BIRTH, "birth", source=self.device, session=self.session,
                          seq=0, role=str(self.role), version=self.version,
                          capabilities=self.capabilities, last_seq=self._seq)
        # Its PUBACK cannot be handled before this callback returns (this is paho's thread).
        self._birth_mid = self._send(client, birth)
        with self._lock:
            filters = list(self._filters.items())
            self.connect_count += 1
        if filters:
            client.subscribe(filters)
        self._connected.set()
        self._notify_connection(True)

    def _on_disconnect(self, client: Any, userdata: Any, flags: Any, reason: Any, props: Any) -> None:
        was = self._connected.is_set()
        self._connected.clear()
        self._flowing = False  # a plain store: read under _send_lock by the publishers
        self._birth_mid = None
        if was:
            log.warning("%s: lost the broker (%s); reconnecting", self.device, reason)
            self._notify_connection(False)

    def _notify_connection(self, up: bool) -> None:
        if self.on_connection is not None:
            try:
                self.on_connection(up)
            except Exception:
                log.exception("%s: connection handler failed", self.device)

    def _on_publish(self, client: Any, userdata: Any, mid: int, reason: Any, props: Any) -> None:
        if mid == self._birth_mid:
            self._birth_mid = None
            # Not from here: paho holds its message lock in this callback, and a publisher
            # holding _send_lock may be waiting for it.
            threading.Thread(target=self._release_held, args=(self.connect_count,), name=f"{self.device}-release",
                             daemon=True).start()
        with self._ack_lock:
            callback = self._callbacks.pop(mid, None)
            if mid in self._pending:
                self._pending.discard(mid)
                self._ack_lock.notify_all()
            else:
                self._early_acks.add(mid)
        if callback is not None:
            try:
                callback()
            except Exception:
                log.exception("%s: acknowledgement handler failed", self.device)

    def _on_message(self, client: Any, userdata: Any, raw: Any) -> None:
        if self.on_message_ack is None:
            self._dispatch(client, raw)
            return
        acked = False

        def ack() -> None:
            nonlocal acked
            if not acked:
                acked = True
                client.ack(raw.mid, raw.qos)

        msg = self._dispatch(client, raw)
        if msg is None:  # nothing for the handler (broken, our own): acknowledged at once
            ack()
            return
        try:
            self.on_message_ack(msg, ack)
        except Exception:
            # Not acknowledged: the broker delivers it again after a reconnect.
            log.exception("%s: handler failed on %s/%s from %s; not acknowledged", self.device, msg.channel,
                          msg.kind, msg.source)

    def _dispatch(self, client: Any, raw: Any) -> Message | None:
        """Decode a message; with ``on_message`` call it, else return the message for ``on_message_ack``."""
        topic_name, payload = raw.topic, bytes(raw.payload)
        try:
            msg = wire.decode(topic_name, payload)
        except WireError as exc:
            self.invalid_count += 1
            log.warning("%s: dropped a message on %s: %s", self.device, topic_name, exc)
            if self.on_invalid is not None:
                try:
                    self.on_invalid(topic_name, payload, exc)
                except Exception:
                    log.exception("%s: invalid-message handler failed", self.device)
            return None
        if self.ignore_own and msg.source == self.device:
            return None
        if self.on_message_ack is not None:
            return msg
        if self.on_message is not None:
            try:
                self.on_message(msg)
            except Exception:
                # Never let a handler bug kill the network thread; the message is acked,
                # so the handler must have made it durable before failing or it is lost.
                log.exception(
                    "%s: handler failed on %s/%s from %s", self.device, msg.channel, msg.kind, msg.source
                )
        return None
