"""A software card shoe that behaves like the real one on a pty or a TCP socket.

``ShoeModel`` is the shoe itself (a shuffled enrolled deck, the device
session, resets with the boot count kept "in flash"); it does no I/O.
``ShoeSimulator`` is its edge: a thread that serves the model on a
pseudo-terminal (the bridge opens a stable symlink to it, like
``/dev/serial/by-id/...``) or on a TCP port (pyserial ``socket://``), paces
its output at the configured baud rate, and injects faults:

* ``drop_rate`` / ``corrupt_rate`` per byte and ``duplicate_rate`` per write
  (``firmware_bridge.lossy``), in both directions;
* ``unplug()`` / ``plug()``: the data cable pulled and put back while the shoe
  stays powered (pty: the device node disappears; TCP: the connection drops);
  events drawn meanwhile wait in the shoe and are delivered on reconnect;
* ``reset()``: a power cycle; RAM (event counter, unsent events) is lost, the
  boot count goes up (the documented v1 semantics, hardware/PROTOCOL.md);
* ``stall(seconds)``: the shoe stops reading and writing (a hung firmware loop);
* ``garbled_read()``: a second reader's garbled UID: a CRC-valid frame with a
  UID that is in no deck, which the host must flag, never map to a card.

All model calls go through a queue into the simulator thread, so the API is
safe to call from tests and from the stdin command loop.
"""

from __future__ import annotations

import contextlib
import os
import queue
import random
import select
import socket
import threading
import time
import tty
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from firmware_bridge import messages as m
from firmware_bridge.deck import Deck
from firmware_bridge.lossy import LossyChannel
from firmware_bridge.session import DeviceSession, LinkConfig


@dataclass
class Faults:
    drop_rate: float = 0.0
    corrupt_rate: float = 0.0
    duplicate_rate: float = 0.0
    inbound: bool = True  # also damage host -> shoe bytes
    seed: int = 0


class ShoeModel:
    """The shoe without its cable: deck, reader and device session."""

    def __init__(self, deck: Deck | None, now: float, *, seed: int = 0, device_id: bytes = bytes.fromhex("5130e5000000beef"),
                 boot_count: int = 1, firmware: tuple[int, int, int] = (1, 0, 0),
                 config: LinkConfig | None = None) -> None:
        self.deck = deck
        self.rng = random.Random(seed)
        self.device_id = device_id
        self.boot_count = boot_count  # "nonvolatile": survives reset()
        self.firmware = firmware
        self.config = config or LinkConfig()
        self.order: list[bytes] = []
        self.drawn: list[bytes] = []  # every UID drawn, in order, across resets
        self.acks_lost = False  # a fault (ShoeSimulator.lose_acks)
        self._boot(now, m.ResetReason.POWER_ON)

    def _boot(self, now: float, reason: int) -> None:
        ident = m.Ident(m.PROTOCOL_VERSION, self.firmware, self.device_id, m.Capability.SHOE_SENSOR, 0,
                        self.boot_count, reason, 0)
        self.session = DeviceSession(ident, now, self.config)
        self.session.acks_lost = getattr(self, "acks_lost", False)

    def reset(self, now: float, reason: int = m.ResetReason.BROWNOUT) -> None:
        self.boot_count = (self.boot_count + 1) & 0xFFFF
        self._boot(now, reason)

    def load(self, now: float) -> None:
        """The dealer loads a freshly shuffled deck."""
        if self.deck is None:
            raise RuntimeError("the simulated shoe has no deck to load")
        self.order = list(self.deck.tags)
        self.rng.shuffle(self.order)
        s = self.session
        s.emit(m.ShoeState(s.next_counter(), True), now)

    def draw(self, now: float, uid: bytes | None = None, quality: int | None = None) -> bytes:
        """The dealer draws the next card (or a given tag)."""
        if uid is None:
            if not self.order:
                raise RuntimeError("the shoe is empty; load a deck first")
            uid = self.order.pop(0)
        s = self.session
        q = quality if quality is not None else self.rng.randrange(170, 256)
        s.emit(m.CardDrawn(s.next_counter(), uid, q), now)
        self.drawn.append(uid)
        if self.deck is not None and not self.order and uid in self.deck.tags:
            s.emit(m.ShoeState(s.next_counter(), False), now)
        return uid

    def garbled_read(self, now: float) -> bytes:
        """A neighbouring reader's tag, read badly: a UID that no deck holds."""
        uid = bytes([0x04]) + self.rng.randbytes(6)
        s = self.session
        s.emit(m.CardDrawn(s.next_counter(), uid, self.rng.randrange(0, 60)), now)
        return uid

    def error(self, now: float, code: int, detail: str) -> None:
        s = self.session
        s.emit(m.DeviceError(s.next_counter(), code, detail), now)


class _Transport:
    """What the simulator thread needs from a pty or a socket."""

    def fileno(self) -> int | None:
        raise NotImplementedError

    def read(self) -> bytes:
        raise NotImplementedError

    def write(self, data: bytes) -> None:
        raise NotImplementedError

    def unplug(self) -> None:
        raise NotImplementedError

    def plug(self) -> None:
        raise NotImplementedError

    def close(self) -> None:
        raise NotImplementedError


class _Pty(_Transport):
    def __init__(self, link: Path) -> None:
        self.link = link
        self.master: int | None = None
        self.slave: int | None = None
        self.plug()

    def plug(self) -> None:
        master, slave = os.openpty()
        tty.setraw(slave)  # no echo, no line discipline: a byte is a byte
        os.set_blocking(master, False)
        self.master, self.slave = master, slave
        tmp = self.link.with_name(self.link.name + ".new")
        with contextlib.suppress(FileNotFoundError):
            tmp.unlink()
        tmp.symlink_to(os.ttyname(slave))
        os.replace(tmp, self.link)

    def unplug(self) -> None:
        with contextlib.suppress(FileNotFoundError):
            self.link.unlink()
        for fd in (self.master, self.slave):
            if fd is not None:
                with contextlib.suppress(OSError):
                    os.close(fd)
        self.master = self.slave = None

    close = unplug

    def fileno(self) -> int | None:
        return self.master

    def read(self) -> bytes:
        if self.master is None:
            return b""
        try:
            return os.read(self.master, 4096)
        except (BlockingIOError, OSError):
            return b""

    def write(self, data: bytes) -> None:
        if self.master is None:
            return
        # Nobody reading and the pty buffer full: the bytes fall on the floor, as on a UART.
        with contextlib.suppress(BlockingIOError, OSError):
            os.write(self.master, data)


class _Tcp(_Transport):
    def __init__(self, host: str, port: int) -> None:
        self.server = socket.create_server((host, port))
        self.server.setblocking(False)
        self.port = self.server.getsockname()[1]
        self.conn: socket.socket | None = None
        self.plugged = True

    def _accept(self) -> None:
        try:
            conn, _ = self.server.accept()
        except BlockingIOError:
            return
        if not self.plugged:
            conn.close()
            return
        if self.conn is not None:
            self.conn.close()  # a new client replaces the old one, as a reopened port would
        conn.setblocking(False)
        conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.conn = conn

    def fileno(self) -> int | None:
        return self.conn.fileno() if self.conn else None

    def server_fileno(self) -> int:
        return self.server.fileno()

    def read(self) -> bytes:
        self._accept()
        if self.conn is None:
            return b""
        try:
            data = self.conn.recv(4096)
        except BlockingIOError:
            return b""
        except OSError:
            data = b""
        if not data:
            self.conn.close()
            self.conn = None
        return data

    def write(self, data: bytes) -> None:
        if self.conn is None:
            return
        try:
            self.conn.sendall(data)
        except OSError:
            self.conn.close()
            self.conn = None

    def unplug(self) -> None:
        self.plugged = False
        if self.conn is not None:
            self.conn.close()
            self.conn = None

    def plug(self) -> None:
        self.plugged = True

    def close(self) -> None:
        self.unplug()
        self.server.close()


@dataclass
class SimStats:
    bytes_out: int = 0
    bytes_in: int = 0
    draws: int = 0


class ShoeSimulator:
    """The simulated shoe on a pty (``pty_link``) or TCP (``tcp_port``, 0 = any free port)."""

    def __init__(self, deck: Deck | None, *, pty_link: Path | None = None, tcp_port: int | None = None,
                 tcp_host: str = "127.0.0.1", baud: int = 115200, faults: Faults | None = None,
                 seed: int = 0, boot_count: int = 1, config: LinkConfig | None = None,
                 clock: Callable[[], float] = time.monotonic) -> None:
        if (pty_link is None) == (tcp_port is None):
            raise ValueError("give exactly one of pty_link or tcp_port")
        self.clock = clock
        self.baud = baud
        self.faults = faults or Faults()
        f = self.faults
        self.out_channel = LossyChannel(f.drop_rate, f.corrupt_rate, f.duplicate_rate, seed=f.seed * 2 + 1)
        self.in_channel = (LossyChannel(f.drop_rate, f.corrupt_rate, f.duplicate_rate, seed=f.seed * 2 + 2)
                           if f.inbound else LossyChannel())
        self.model = ShoeModel(deck, clock(), seed=seed, boot_count=boot_count, config=config)
        self.transport: _Transport = _Pty(pty_link) if pty_link is not None else _Tcp(tcp_host, tcp_port or 0)
        self.stats = SimStats()
        self.on_draw: Callable[[bytes, float], None] | None = None  # bench hook: (uid, time drawn)
        self._calls: queue.Queue[tuple[Callable[[float], object], queue.Queue[object]]] = queue.Queue()
        self._wake_r, self._wake_w = os.pipe()
        os.set_blocking(self._wake_w, False)
        self._stop = threading.Event()
        self._stall_until = 0.0
        self._tx_end = 0.0  # when the UART finishes the last byte queued
        self._tx: list[tuple[float, bytes]] = []  # (time its last bit leaves the UART, bytes)
        self._thread = threading.Thread(target=self._run, name="shoe-sim", daemon=True)

    # -- where the bridge connects ---------------------------------------------

    @property
    def url(self) -> str:
        """What to pass to ``serial.serial_for_url`` (or ``studtable bridge --port``)."""
        t = self.transport
        if isinstance(t, _Pty):
            return str(t.link)
        assert isinstance(t, _Tcp)
        return f"socket://127.0.0.1:{t.port}"

    # -- life cycle ---------------------------------------------------------------

    def start(self) -> ShoeSimulator:
        self._thread.start()
        return self

    def close(self) -> None:
        self._stop.set()
        self._wake()
        self._thread.join(5)
        self.transport.close()
        os.close(self._wake_r)
        os.close(self._wake_w)

    def __enter__(self) -> ShoeSimulator:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- the API (thread-safe; each call runs in the simulator thread) ----------

    def call(self, fn: Callable[[float], object]) -> object:
        reply: queue.Queue[object] = queue.Queue(1)
        self._calls.put((fn, reply))
        self._wake()
        result = reply.get(timeout=10)
        if isinstance(result, BaseException):
            raise result
        return result

    def load(self) -> None:
        self.call(self.model.load)

    def draw(self, uid: bytes | None = None) -> bytes:
        def do(now: float) -> bytes:
            got = self.model.draw(now, uid)
            self.stats.draws += 1
            if self.on_draw:
                self.on_draw(got, now)
            return got

        out = self.call(do)
        assert isinstance(out, bytes)
        return out

    def garbled_read(self) -> bytes:
        out = self.call(self.model.garbled_read)
        assert isinstance(out, bytes)
        return out

    def error(self, code: int, detail: str) -> None:
        self.call(lambda now: self.model.error(now, code, detail))

    def reset(self) -> None:
        self.call(lambda now: self.model.reset(now))

    def unplug(self) -> None:
        self.call(lambda now: self.transport.unplug())

    def plug(self) -> None:
        self.call(lambda now: self.transport.plug())

    def lose_acks(self, lost: bool = True) -> None:
        """Fault: the bridge's ACKs never reach the shoe (until called with False); the shoe keeps
        its events and sends them again to the next session."""
        def do(now: float) -> None:
            self.model.acks_lost = lost
            self.model.session.acks_lost = lost

        self.call(do)

    def stall(self, seconds: float) -> None:
        self.call(lambda now: setattr(self, "_stall_until", now + seconds))

    def set_faults(self, drop_rate: float = 0.0, corrupt_rate: float = 0.0, duplicate_rate: float = 0.0) -> None:
        def do(now: float) -> None:
            for ch in (self.out_channel, self.in_channel):
                ch.drop_rate, ch.corrupt_rate, ch.duplicate_rate = drop_rate, corrupt_rate, duplicate_rate

        self.call(do)

    def pending_events(self) -> int:
        out = self.call(lambda now: self.model.session.arq.outstanding + len(self.model.session._pending))
        assert isinstance(out, int)
        return out

    # -- the thread -----------------------------------------------------------------

    def _wake(self) -> None:
        with contextlib.suppress(BlockingIOError, OSError):
            os.write(self._wake_w, b"x")

    def _run(self) -> None:
        while not self._stop.is_set():
            now = self.clock()
            session = self.model.session
            timeout = max(0.0, min(session.next_deadline(), now + 0.05) - now)
            if self._tx:
                timeout = min(timeout, max(0.0, self._tx[0][0] - now))
            fds = [self._wake_r]
            fd = self.transport.fileno()
            stalled = now < self._stall_until
            if fd is not None and not stalled:
                fds.append(fd)
            if isinstance(self.transport, _Tcp):
                fds.append(self.transport.server_fileno())
            readable, _, _ = select.select(fds, [], [], timeout)
            now = self.clock()
            if self._wake_r in readable:
                with contextlib.suppress(BlockingIOError):
                    os.read(self._wake_r, 4096)
            while True:
                try:
                    fn, reply = self._calls.get_nowait()
                except queue.Empty:
                    break
                try:
                    reply.put(fn(now))
                except Exception as exc:  # handed back to the caller
                    reply.put(exc)
            session = self.model.session
            if now < self._stall_until:
                continue
            if (fd is not None and fd in readable) or isinstance(self.transport, _Tcp):
                data = self.transport.read()
                if data:
                    self.stats.bytes_in += len(data)
                    session.receive_bytes(self.in_channel.apply(data), now)
            session.poll(now)
            out = session.bytes_to_send()
            if out:
                damaged = self.out_channel.apply(out)
                # A UART sends 10 bits per byte (start, 8 data, stop): the bytes
                # reach the host when their last bit has left, not before.
                self._tx_end = max(now, self._tx_end) + len(damaged) * 10 / self.baud
                self._tx.append((self._tx_end, damaged))
            self._pump(now)

    def _pump(self, now: float) -> None:
        due = b""
        while self._tx and self._tx[0][0] <= now:
            due += self._tx.pop(0)[1]
        if due:
            self.transport.write(due)
            self.stats.bytes_out += len(due)
