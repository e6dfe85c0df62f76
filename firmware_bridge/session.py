"""The shoe link's session layer: handshake, acknowledgements, retransmission.

Theory of operation
===================

Two endpoints talk over a byte stream that loses, corrupts and repeats bytes:
the *host* (the bridge) and the *device* (the shoe).  Neither endpoint here
does any I/O.  The caller feeds received bytes with ``receive_bytes(data, now)``,
calls ``poll(now)`` when ``next_deadline()`` has passed, and after each call
takes ``bytes_to_send()`` for the port and ``events()`` for the application.
``now`` is a number of seconds from any monotonic clock; the core never reads
one, so tests drive it with a virtual clock and run ten thousand draws in
seconds.

Frames come in two sorts.  *Unsequenced* frames (HELLO, IDENT, HEARTBEAT, ACK,
NAK) are never acknowledged; the handshake repeats them on a timer instead.
*Sequenced* frames (card drawn, seat tag, shoe state, device error, reset) go
through ``Arq``: a go-back-N sender with a window of 8 and an 8-bit sequence
number, and an in-order receiver.  The receiver ACKs every in-order frame
(cumulatively), re-ACKs a duplicate without delivering it again, and NAKs the
sequence number it is waiting for when a frame arrives ahead of it or a
corrupt frame is seen (rate-limited).  The sender retransmits everything
unacknowledged when its timer expires (doubling the timeout up to a cap) and
at once on a NAK (fast retransmit, at most once per NAK hold-off).

Sessions.  The host opens a session with HELLO carrying a fresh nonce; the
device answers IDENT echoing it and both sides restart their sequence numbers
at 0.  Events the device had not got acknowledged are sent again in the new
session, so after a reconnect the host may see an event twice: it drops every
event whose (boot count, event counter) it has already delivered.  A device
that boots announces itself with an IDENT whose nonce is 0 (the *boot
notice*), repeated until a HELLO arrives; the host treats it, or an IDENT with
a boot count it has not seen for this device, as a device reset.  Heartbeats
flow both ways every second; three seconds without a valid frame from the
device means the link is down and the host starts a new handshake.

The host's connection states and what moves them are the table
``HOST_TRANSITIONS``; the device's are ``DEVICE_TRANSITIONS``.  An event that
a table does not list for the current state is a ``ProtocolError`` naming both
(misuse by the caller, e.g. feeding bytes to a closed session).  Frames from
the wire never raise: whatever arrives, in whatever state, is either handled,
or counted and ignored, because a cable can deliver anything.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass
from enum import Enum
from typing import Final

from firmware_bridge import messages as m
from firmware_bridge.framing import Frame, FrameDecoder, encode_frame
from firmware_bridge.messages import Kind


class ProtocolError(RuntimeError):
    """An event the session cannot take in its current state."""

    def __init__(self, event: str, state: Enum, why: str = "") -> None:
        self.event = event
        self.state = state
        text = f"cannot handle event {event!r} in state {state.name}"
        super().__init__(f"{text}: {why}" if why else text)


@dataclass(frozen=True, slots=True)
class LinkConfig:
    """Timers and limits, in seconds.  Defaults suit 115200 baud over USB."""

    window: int = 8
    rto_initial: float = 0.10
    rto_max: float = 1.0
    nak_holdoff: float = 0.03
    hello_interval: float = 0.5
    boot_notice_interval: float = 1.0
    heartbeat_interval: float = 1.0
    silence_timeout: float = 3.0
    # A candidate frame that has waited this long for its remaining bytes is
    # given up (its LEN was probably corrupt) so the frames behind it flow.
    partial_frame_timeout: float = 0.05


# --------------------------------------------------------------------------- ARQ


@dataclass(slots=True)
class ArqStats:
    sent: int = 0
    retransmitted: int = 0
    fast_retransmits: int = 0
    timeouts: int = 0
    delivered: int = 0
    duplicates: int = 0
    out_of_order: int = 0
    naks_sent: int = 0


class Arq:
    """Go-back-N with cumulative ACK and NAK-triggered fast retransmit."""

    def __init__(self, config: LinkConfig) -> None:
        self.config = config
        self.stats = ArqStats()
        self.reset()

    def reset(self) -> list[tuple[int, bytes]]:
        """Start a new session at sequence 0; return what was not yet acknowledged, in order."""
        left: list[tuple[int, bytes]] = []
        if hasattr(self, "unacked"):
            left = [(k, p) for _, k, p in self.unacked] + list(self.backlog)
        self.tx_seq = 0
        self.unacked: deque[tuple[int, int, bytes]] = deque()
        self.backlog: deque[tuple[int, bytes]] = deque()
        self.rto = self.config.rto_initial
        self.retx_deadline: float | None = None
        self.rx_next = 0
        self._last_nak: tuple[int, float] | None = None
        self._last_fast: tuple[int, float] | None = None
        self._held: dict[int, Frame] = {}
        return left

    @property
    def outstanding(self) -> int:
        return len(self.unacked) + len(self.backlog)

    def submit(self, kind: int, payload: bytes, now: float) -> list[bytes]:
        self.backlog.append((kind, payload))
        return self._fill(now)

    def _fill(self, now: float) -> list[bytes]:
        out = []
        while self.backlog and len(self.unacked) < self.config.window:
            kind, payload = self.backlog.popleft()
            seq = self.tx_seq
            self.tx_seq = (seq + 1) & 0xFF
            self.unacked.append((seq, kind, payload))
            out.append(encode_frame(seq, kind, payload))
            self.stats.sent += 1
            if self.retx_deadline is None:
                self.retx_deadline = now + self.rto
        return out

    def on_ack(self, acked: int, now: float) -> list[bytes]:
        if not self.unacked:
            return []
        n = ((acked - self.unacked[0][0]) & 0xFF) + 1
        if n > len(self.unacked):
            return []  # stale: acknowledges something already released
        for _ in range(n):
            self.unacked.popleft()
        self.rto = self.config.rto_initial
        self.retx_deadline = now + self.rto if self.unacked else None
        return self._fill(now)

    def on_nak(self, wanted: int, now: float) -> list[bytes]:
        # NAK(n) also says "I have everything before n".
        out = self.on_ack((wanted - 1) & 0xFF, now)
        if not self.unacked or self.unacked[0][0] != wanted:
            return out
        if self._last_fast and self._last_fast[0] == wanted and now - self._last_fast[1] < self.config.nak_holdoff:
            return out
        self._last_fast = (wanted, now)
        self.stats.fast_retransmits += 1
        self.stats.retransmitted += 1
        # Selective: only the frame asked for; the receiver holds the ones after it.
        seq, kind, payload = self.unacked[0]
        self.retx_deadline = now + self.rto
        return [*out, encode_frame(seq, kind, payload)]

    def _resend(self, now: float) -> list[bytes]:
        self.stats.retransmitted += len(self.unacked)
        self.retx_deadline = now + self.rto
        return [encode_frame(seq, kind, payload) for seq, kind, payload in self.unacked]

    def poll(self, now: float) -> list[bytes]:
        if self.retx_deadline is not None and now >= self.retx_deadline:
            self.stats.timeouts += 1
            self.rto = min(self.rto * 2, self.config.rto_max)
            return self._resend(now)
        return []

    def on_data(self, frame: Frame, now: float) -> tuple[list[Frame], list[bytes]]:
        """A sequenced frame arrived: (frames now deliverable in order, frames to send back).

        Frames that arrive ahead of a gap are held (up to the window) and
        delivered when the gap is filled, so one lost frame costs one
        retransmission, not a window's worth.
        """
        seq = frame.seq
        ahead = (seq - self.rx_next) & 0xFF
        if ahead == 0:
            ready = [frame]
            self.rx_next = (seq + 1) & 0xFF
            while self.rx_next in self._held:
                ready.append(self._held.pop(self.rx_next))
                self.rx_next = (self.rx_next + 1) & 0xFF
            self.stats.delivered += len(ready)
            if self._held:  # another gap behind this one: ask for it at once
                return ready, self.nak(now, force=True)
            return ready, [encode_frame((self.rx_next - 1) & 0xFF, Kind.ACK)]
        if ahead >= 128:
            self.stats.duplicates += 1
            return [], [encode_frame((self.rx_next - 1) & 0xFF, Kind.ACK)]
        self.stats.out_of_order += 1
        if ahead < self.config.window and seq not in self._held:
            self._held[seq] = frame
        return [], self.nak(now)

    def nak(self, now: float, force: bool = False) -> list[bytes]:
        """Ask for ``rx_next`` again, unless we just did."""
        last = self._last_nak
        if not force and last and last[0] == self.rx_next and now - last[1] < self.config.nak_holdoff:
            return []
        self._last_nak = (self.rx_next, now)
        self.stats.naks_sent += 1
        return [encode_frame(self.rx_next, Kind.NAK)]


# ------------------------------------------------------------------ host events


@dataclass(frozen=True, slots=True)
class LinkUp:
    """Handshake complete: the shoe is online."""

    ident: m.Ident


@dataclass(frozen=True, slots=True)
class LinkDown:
    """The shoe went offline (silence, port closed, or a reset)."""

    reason: str


@dataclass(frozen=True, slots=True)
class DeviceReset:
    """The shoe rebooted; events it had not delivered before the reset are gone."""

    ident: m.Ident
    reason: str


@dataclass(frozen=True, slots=True)
class Received:
    """A game event from the shoe, delivered exactly once per (device, boot, counter)."""

    device_id: bytes
    boot_count: int
    message: m.CardDrawn | m.SeatTag | m.ShoeState | m.DeviceError


@dataclass(frozen=True, slots=True)
class EventsMissing:
    """The device's counter jumped: events between were lost on the device."""

    boot_count: int
    first_missing: int
    count: int


@dataclass(frozen=True, slots=True)
class Incompatible:
    """The device speaks a protocol version this host does not."""

    ident: m.Ident
    reason: str


@dataclass(frozen=True, slots=True)
class Malformed:
    """A frame whose CRC checked but whose payload did not parse (a firmware bug)."""

    kind: int
    reason: str


HostEvent = LinkUp | LinkDown | DeviceReset | Received | EventsMissing | Incompatible | Malformed


class HostState(Enum):
    IDLE = "idle"  # no port
    CONNECTING = "connecting"  # HELLO sent, waiting for the IDENT that echoes it
    READY = "ready"  # session open; game events flow


H = HostState
# (state, event) -> next state.  Events named here:
#   open, close          the edge opened or lost the port
#   ident                IDENT echoing our nonce (handshake reply)
#   boot_notice          IDENT with nonce 0: the device has just booted
#   silence              nothing valid from the device for silence_timeout
#   data                 a sequenced frame, ACK, NAK or heartbeat
#   poll                 a timer may have expired
#   bytes                bytes arrived from the port
#   send                 the application sends a command to the device
HOST_TRANSITIONS: Final[dict[tuple[HostState, str], HostState]] = {
    (H.IDLE, "open"): H.CONNECTING,
    (H.IDLE, "close"): H.IDLE,
    (H.IDLE, "poll"): H.IDLE,
    (H.CONNECTING, "bytes"): H.CONNECTING,
    (H.CONNECTING, "ident"): H.READY,
    (H.CONNECTING, "boot_notice"): H.CONNECTING,
    (H.CONNECTING, "data"): H.CONNECTING,  # leftovers of an old session: ignored
    (H.CONNECTING, "silence"): H.CONNECTING,
    (H.CONNECTING, "poll"): H.CONNECTING,
    (H.CONNECTING, "close"): H.IDLE,
    (H.READY, "bytes"): H.READY,
    (H.READY, "ident"): H.READY,  # a repeated reply to our HELLO: ignored
    (H.READY, "boot_notice"): H.CONNECTING,
    (H.READY, "data"): H.READY,
    (H.READY, "silence"): H.CONNECTING,
    (H.READY, "poll"): H.READY,
    (H.READY, "send"): H.READY,
    (H.READY, "close"): H.IDLE,
}


@dataclass(slots=True)
class HostStats:
    duplicates_suppressed: int = 0
    handshakes: int = 0
    resets_seen: int = 0
    unknown_kinds: int = 0


class HostSession:
    """The bridge's end of the link (sans-I/O)."""

    def __init__(self, config: LinkConfig | None = None, nonce_seed: int = 1) -> None:
        self.config = config or LinkConfig()
        self.state = HostState.IDLE
        self.arq = Arq(self.config)
        self.decoder = FrameDecoder()
        self.stats = HostStats()
        self.ident: m.Ident | None = None  # the device of the current/last session
        self._nonce_counter = nonce_seed & 0xFFFFFFFF
        self._nonce = 0
        self._out = bytearray()
        self._events: list[HostEvent] = []
        self._hello_deadline: float | None = None
        self._heartbeat_deadline: float | None = None
        self._last_rx = 0.0
        self._last_byte = 0.0
        self._rejected_seen = 0
        self._boots: dict[bytes, int] = {}  # device id -> last boot count seen
        self._delivered: dict[tuple[bytes, int], int] = {}  # (device, boot) -> last counter

    # -- the caller's interface --------------------------------------------

    def open(self, now: float) -> None:
        """The edge has opened the port: start the handshake."""
        self._move("open")
        self.decoder = FrameDecoder()
        self._last_rx = self._last_byte = now
        self._start_handshake(now)

    def close(self, now: float, reason: str = "the serial port was closed") -> None:
        """The edge lost or closed the port."""
        was_ready = self.state is HostState.READY
        self._move("close")
        self._hello_deadline = self._heartbeat_deadline = None
        self._out.clear()
        if was_ready:
            self._events.append(LinkDown(reason))

    def receive_bytes(self, data: bytes, now: float) -> None:
        """Bytes from the port, in the order they arrived."""
        self._move("bytes")
        if data:
            self._last_byte = now
        for frame in self.decoder.feed(data):
            self._on_frame(frame, now)
        self._check_garbage(now)

    def poll(self, now: float) -> None:
        """Run the timers; call whenever ``next_deadline()`` has passed (calling more often is harmless)."""
        self._move("poll")
        if self.state is HostState.IDLE:
            return
        if self.decoder.pending and now - self._last_byte >= self.config.partial_frame_timeout:
            for frame in self.decoder.abandon_partial():
                self._on_frame(frame, now)
            self._last_byte = now
        if now - self._last_rx >= self.config.silence_timeout:
            was_ready = self.state is HostState.READY
            self._move("silence")
            secs = self.config.silence_timeout
            self._last_rx = now
            if was_ready:
                self._events.append(LinkDown(f"no valid frame from the shoe for {secs:g} s"))
            self._start_handshake(now)
            return
        if self.state is HostState.CONNECTING:
            if self._hello_deadline is not None and now >= self._hello_deadline:
                self._send_hello(now)
            return
        self._out += b"".join(self.arq.poll(now))
        if self._heartbeat_deadline is not None and now >= self._heartbeat_deadline:
            self._out += encode_frame(0, Kind.HEARTBEAT, m.Heartbeat(int(now * 1000)).encode())
            self._heartbeat_deadline = now + self.config.heartbeat_interval

    def send(self, message: m.ResetCommand, now: float) -> None:
        """Send a command to the device (reliably; only while the link is up)."""
        self._move("send", "commands can be sent only once the shoe has answered the handshake")
        self._out += b"".join(self.arq.submit(m.kind_of(message), message.encode(), now))

    def next_deadline(self) -> float | None:
        """The earliest time ``poll`` has work to do, or None when idle."""
        if self.state is HostState.IDLE:
            return None
        times = [self._last_rx + self.config.silence_timeout]
        if self.decoder.pending:
            times.append(self._last_byte + self.config.partial_frame_timeout)
        if self.state is HostState.CONNECTING and self._hello_deadline is not None:
            times.append(self._hello_deadline)
        if self.state is HostState.READY:
            if self._heartbeat_deadline is not None:
                times.append(self._heartbeat_deadline)
            if self.arq.retx_deadline is not None:
                times.append(self.arq.retx_deadline)
        return min(times)

    def bytes_to_send(self) -> bytes:
        out = bytes(self._out)
        self._out.clear()
        return out

    def undeliver(self, event: Received) -> None:
        """The application could not keep ``event`` (nor, so, anything after it): take it and the rest
        as never delivered, so that the device's resend after the next handshake is delivered again
        instead of being suppressed as a duplicate.  Call it before ``close``: the frame's ACK, still
        queued, goes with the session."""
        if not isinstance(event.message, m.CardDrawn | m.SeatTag | m.ShoeState | m.DeviceError):
            return
        key = (event.device_id, event.boot_count)
        last = self._delivered.get(key)
        if last is not None and last >= event.message.counter:
            self._delivered[key] = event.message.counter - 1

    def events(self) -> list[HostEvent]:
        out = self._events
        self._events = []
        return out

    # -- internals ---------------------------------------------------------

    def _move(self, event: str, why: str = "") -> None:
        try:
            self.state = HOST_TRANSITIONS[(self.state, event)]
        except KeyError:
            raise ProtocolError(event, self.state, why) from None

    def _start_handshake(self, now: float) -> None:
        self._nonce_counter = (self._nonce_counter * 1103515245 + 12345) & 0xFFFFFFFF
        self._nonce = self._nonce_counter or 1  # 0 is reserved for the boot notice
        self._send_hello(now)

    def _send_hello(self, now: float) -> None:
        self._out += encode_frame(0, Kind.HELLO, m.Hello(m.PROTOCOL_VERSION, self._nonce).encode())
        self._hello_deadline = now + self.config.hello_interval

    def _check_garbage(self, now: float) -> None:
        rejected = self.decoder.stats.rejected
        if rejected != self._rejected_seen:
            self._rejected_seen = rejected
            if self.state is HostState.READY:
                self._out += b"".join(self.arq.nak(now))

    def _on_frame(self, frame: Frame, now: float) -> None:
        self._last_rx = now
        kind = frame.kind
        if kind == Kind.IDENT:
            try:
                ident = m.decode_message(kind, frame.payload)
            except m.MessageError as exc:
                self._events.append(Malformed(kind, str(exc)))
                return
            assert isinstance(ident, m.Ident)
            self._on_ident(ident, now)
            return
        if kind in (Kind.HEARTBEAT, Kind.HELLO):
            self._move("data")
            return
        if kind not in (Kind.ACK, Kind.NAK) and kind not in m.SEQUENCED:
            self.stats.unknown_kinds += 1
            self._move("data")
            return
        self._move("data")
        if self.state is not HostState.READY:
            return
        if kind == Kind.ACK:
            self._out += b"".join(self.arq.on_ack(frame.seq, now))
        elif kind == Kind.NAK:
            self._out += b"".join(self.arq.on_nak(frame.seq, now))
        else:
            ready, reply = self.arq.on_data(frame, now)
            self._out += b"".join(reply)
            for f in ready:
                self._deliver(f)

    def _on_ident(self, ident: m.Ident, now: float) -> None:
        if ident.nonce == 0:
            was_ready = self.state is HostState.READY
            self._move("boot_notice")
            self._note_boot(ident, definitely_rebooted=was_ready)
            if was_ready:
                self._events.append(LinkDown(f"the shoe restarted ({_reason(ident.reset_reason)})"))
            self._start_handshake(now)
            return
        if ident.nonce != self._nonce or self.state is not HostState.CONNECTING:
            self._move("data")  # stale or repeated reply: ignore
            return
        if ident.protocol_version != m.PROTOCOL_VERSION:
            self._move("data")
            self._events.append(
                Incompatible(
                    ident,
                    f"the shoe speaks protocol version {ident.protocol_version} (firmware "
                    f"{ident.firmware_version}); this bridge speaks version {m.PROTOCOL_VERSION}; "
                    "update the shoe firmware or the bridge so they match",
                )
            )
            return
        self._move("ident")
        self.stats.handshakes += 1
        self._note_boot(ident, definitely_rebooted=False)
        self.ident = ident
        self.arq.reset()
        self._hello_deadline = None
        self._heartbeat_deadline = now + self.config.heartbeat_interval
        self._events.append(LinkUp(ident))

    def _note_boot(self, ident: m.Ident, definitely_rebooted: bool) -> None:
        """Report a reset when one certainly happened: a boot notice while a
        session was open, or a boot count that changed."""
        prev = self._boots.get(ident.device_id)
        if definitely_rebooted or (prev is not None and prev != ident.boot_count):
            self.stats.resets_seen += 1
            for key in [k for k in self._delivered if k[0] == ident.device_id]:
                del self._delivered[key]
            self._events.append(DeviceReset(ident, f"the shoe restarted ({_reason(ident.reset_reason)})"))
        self._boots[ident.device_id] = ident.boot_count

    def _deliver(self, frame: Frame) -> None:
        try:
            msg = m.decode_message(frame.kind, frame.payload)
        except m.MessageError as exc:
            self._events.append(Malformed(frame.kind, str(exc)))
            return
        assert isinstance(msg, m.CardDrawn | m.SeatTag | m.ShoeState | m.DeviceError), msg
        assert self.ident is not None
        key = (self.ident.device_id, self.ident.boot_count)
        last = self._delivered.get(key)
        if last is not None:
            if msg.counter <= last:
                self.stats.duplicates_suppressed += 1
                return
            if msg.counter > last + 1:
                self._events.append(EventsMissing(self.ident.boot_count, last + 1, msg.counter - last - 1))
        self._delivered[key] = msg.counter
        self._events.append(Received(self.ident.device_id, self.ident.boot_count, msg))


def _reason(code: int) -> str:
    try:
        return m.ResetReason(code).name.lower().replace("_", " ")
    except ValueError:
        return f"reset reason {code}"


# ----------------------------------------------------------------- device side


class DeviceState(Enum):
    ANNOUNCING = "announcing"  # booted; repeating the boot notice until a HELLO arrives
    READY = "ready"


D = DeviceState
DEVICE_TRANSITIONS: Final[dict[tuple[DeviceState, str], DeviceState]] = {
    (D.ANNOUNCING, "bytes"): D.ANNOUNCING,
    (D.ANNOUNCING, "hello"): D.READY,
    (D.ANNOUNCING, "data"): D.ANNOUNCING,
    (D.ANNOUNCING, "poll"): D.ANNOUNCING,
    (D.ANNOUNCING, "emit"): D.ANNOUNCING,
    (D.READY, "bytes"): D.READY,
    (D.READY, "hello"): D.READY,
    (D.READY, "data"): D.READY,
    (D.READY, "poll"): D.READY,
    (D.READY, "emit"): D.READY,
}

GameMessage = m.CardDrawn | m.SeatTag | m.ShoeState | m.DeviceError


class DeviceSession:
    """The shoe's end of the link (sans-I/O); the simulator runs it, the firmware mirrors it in C.

    The event counter restarts at 1 on every boot (``boot_count`` tells boots
    apart); events not yet acknowledged when the device resets are lost, as
    they would be from the RAM of a real shoe, and the host is told by the
    boot notice.
    """

    def __init__(self, ident: m.Ident, now: float, config: LinkConfig | None = None) -> None:
        self.config = config or LinkConfig()
        self.ident = ident
        self.state = DeviceState.ANNOUNCING
        self.arq = Arq(self.config)
        self.decoder = FrameDecoder()
        self.counter = 0
        self.session_nonce = 0
        self.commands: list[m.ResetCommand] = []  # host commands delivered, for the application
        #: a fault for tests: the host's ACKs and NAKs never reach the device, which keeps every
        #: event to send again (as when the bridge dies before its ACK is on the wire)
        self.acks_lost = False
        self._pending: deque[tuple[int, bytes]] = deque()  # events held while announcing
        self._out = bytearray()
        self._last_byte = now
        self._rejected_seen = 0
        self._announce_deadline = now
        self._heartbeat_deadline = now + self.config.heartbeat_interval
        self.poll(now)

    def next_counter(self) -> int:
        self.counter += 1
        return self.counter

    def emit(self, message: GameMessage, now: float) -> None:
        """Queue a game event for reliable delivery (its counter already set by the caller)."""
        self._move("emit")
        payload = message.encode()
        kind = m.kind_of(message)
        if self.state is DeviceState.READY:
            self._out += b"".join(self.arq.submit(kind, payload, now))
        else:
            self._pending.append((kind, payload))

    def receive_bytes(self, data: bytes, now: float) -> None:
        self._move("bytes")
        if data:
            self._last_byte = now
        for frame in self.decoder.feed(data):
            self._on_frame(frame, now)
        rejected = self.decoder.stats.rejected
        if rejected != self._rejected_seen:
            self._rejected_seen = rejected
            if self.state is DeviceState.READY:
                self._out += b"".join(self.arq.nak(now))

    def poll(self, now: float) -> None:
        self._move("poll")
        if self.decoder.pending and now - self._last_byte >= self.config.partial_frame_timeout:
            for frame in self.decoder.abandon_partial():
                self._on_frame(frame, now)
            self._last_byte = now
        if self.state is DeviceState.ANNOUNCING:
            if now >= self._announce_deadline:
                self._out += encode_frame(0, Kind.IDENT, self._ident(0).encode())
                self._announce_deadline = now + self.config.boot_notice_interval
            return
        self._out += b"".join(self.arq.poll(now))
        if now >= self._heartbeat_deadline:
            self._out += encode_frame(0, Kind.HEARTBEAT, m.Heartbeat(int(now * 1000)).encode())
            self._heartbeat_deadline = now + self.config.heartbeat_interval

    def next_deadline(self) -> float:
        times = [self._heartbeat_deadline]
        if self.state is DeviceState.ANNOUNCING:
            times = [self._announce_deadline]
        elif self.arq.retx_deadline is not None:
            times.append(self.arq.retx_deadline)
        if self.decoder.pending:
            times.append(self._last_byte + self.config.partial_frame_timeout)
        return min(times)

    def bytes_to_send(self) -> bytes:
        out = bytes(self._out)
        self._out.clear()
        return out

    def _move(self, event: str) -> None:
        try:
            self.state = DEVICE_TRANSITIONS[(self.state, event)]
        except KeyError:
            raise ProtocolError(event, self.state) from None

    def _ident(self, nonce: int) -> m.Ident:
        i = self.ident
        return m.Ident(
            i.protocol_version, i.firmware, i.device_id, i.capabilities, i.seat_antennas,
            i.boot_count, i.reset_reason, nonce,
        )

    def _on_frame(self, frame: Frame, now: float) -> None:
        if frame.kind == Kind.HELLO:
            try:
                hello = m.decode_message(frame.kind, frame.payload)
            except m.MessageError:
                return
            assert isinstance(hello, m.Hello)
            self._move("hello")
            if hello.nonce != self.session_nonce:
                # A new session: restart sequence numbers and send again
                # whatever the old session left unacknowledged.
                self.session_nonce = hello.nonce
                left = list(self._pending) + self.arq.reset()
                self._pending.clear()
                self._out += encode_frame(0, Kind.IDENT, self._ident(hello.nonce).encode())
                for kind, payload in left:
                    self._out += b"".join(self.arq.submit(kind, payload, now))
            else:
                self._out += encode_frame(0, Kind.IDENT, self._ident(hello.nonce).encode())
            return
        self._move("data")
        if self.state is not DeviceState.READY:
            return
        if frame.kind in (Kind.ACK, Kind.NAK) and self.acks_lost:
            return
        if frame.kind == Kind.ACK:
            self._out += b"".join(self.arq.on_ack(frame.seq, now))
        elif frame.kind == Kind.NAK:
            self._out += b"".join(self.arq.on_nak(frame.seq, now))
        elif frame.kind in m.SEQUENCED:
            ready, reply = self.arq.on_data(frame, now)
            self._out += b"".join(reply)
            for f in ready:
                try:
                    msg = m.decode_message(f.kind, f.payload)
                except m.MessageError:
                    continue
                if isinstance(msg, m.ResetCommand):
                    self.commands.append(msg)
