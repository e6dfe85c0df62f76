"""The bridge service: the shoe's serial port in, wire-contract messages out.

Two layers, as in Klipper's host (``msgproto`` beside ``serialhdl``):

* ``BridgeCore`` (pure): takes the host session's events, resolves card UIDs
  against the deck registry, and turns each into an ``engine.wire`` message
  (``card_drawn``, ``tag_seen``, ``shoe_loaded``, ``shoe_empty``,
  ``device_error``, ``reset``) or an availability change, handed to a
  ``sink`` callable.  The sink is the seam to MQTT: a bus client's publish
  goes there; tests pass a list's ``append``.
* ``SerialBridge`` (the edge): owns the port through
  ``serial.serial_for_url`` (device paths and ``socket://`` alike), runs the
  session's timers, reopens the port by itself when the cable is pulled or the
  shoe resets, and says what is wrong in words a technician can act on.
* ``BusPublisher`` (the other edge): the sink that puts the core's messages on
  MQTT through ``engine.bus.BusClient`` (role ``bridge``, client id = the
  shoe's device id, a retained ``offline`` Last Will, a birth at every
  connect).  The bus client numbers what it sends (session, seq); the core's
  own numbering is only for a sink that is not the bus.

Availability: ``studtable/v1/<table>/avail/<device>`` says ``online`` only
while both hold: the bridge is connected to the broker *and* the shoe answers
on its serial link.  The Last Will covers a dead bridge process; a pulled
cable or a silent shoe turns it ``offline`` too (the engine then stops
expecting shoe cards and the console shows the shoe offline).  The bus client
announces ``online`` at every (re)connect; if the shoe link is down at that
moment the publisher follows it at once with ``offline`` on the same
connection, so the retained value is right.  De-duplication of events the
shoe replays after a reconnect stays in the host session (by the shoe's event
counter), so a card reaches the bus once.
"""

from __future__ import annotations

import contextlib
import errno
import json
import logging
import os
import queue
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from engine import wire
from firmware_bridge import messages as m
from firmware_bridge.deck import DeckRegistry, Resolver, default_decks_dir
from firmware_bridge.session import (
    DeviceReset,
    EventsMissing,
    HostEvent,
    HostSession,
    HostState,
    Incompatible,
    LinkConfig,
    LinkDown,
    LinkUp,
    Malformed,
    Received,
)

log = logging.getLogger("studtable.shoe")

Sink = Callable[[wire.Message], None]


# ------------------------------------------------------------------ configuration


@dataclass
class BridgeConfig:
    """What ``studtable bridge --config FILE`` reads (TOML or JSON)."""

    table: str = "t1"
    port: str = "/dev/ttyUSB0"
    baud: int = 115200
    deck: str = ""
    decks_dir: Path = field(default_factory=default_decks_dir)
    device: str = "shoe"  # the source id on the bus
    # The publisher's restart counter: kept in state_file if set; 0 = the wall clock in
    # milliseconds (grows at every start without a file).
    session: int = 0
    state_file: Path | None = None
    # MQTT: HOST:PORT of the table's broker (empty: print the messages instead of publishing),
    # and the login of the bridge role: user/password, or broker_dir (the directory
    # `studtable broker config --out DIR` wrote, with its credentials.json).
    broker: str = ""
    broker_dir: str = ""
    user: str = ""
    password: str = ""
    config_file: Path | None = field(default=None, repr=False)  # where it was read from, for errors
    from_table: bool = field(default=False, repr=False)  # read from the table file (keys named as there)

    @classmethod
    def load(cls, path: Path) -> BridgeConfig:
        from engine.configfile import read_config

        data = read_config(path, "bridge config")
        from engine.tableconfig import check_baud, check_table_id, part

        table_part = part(path, data, "bridge")  # the table file (engine/tableconfig.py): its [shoe] part
        data = table_part if table_part is not None else data.get("shoe", data)
        known = set(cls.__dataclass_fields__)
        unknown = sorted(set(data) - known | ({"config_file", "from_table"} & set(data)))
        if unknown:
            from engine.configfile import ConfigFileError

            raise ConfigFileError(path, unknown[0], f"unknown setting(s) {', '.join(unknown)}",
                                  f"remove or respell; known: {', '.join(sorted(known - {'config_file', 'from_table'}))}")
        cfg = cls(**data)
        cfg.config_file = path
        cfg.from_table = table_part is not None
        cfg.baud = check_baud(cfg.baud, path, "shoe.baud" if table_part is not None else "baud")
        check_table_id(cfg.table, path, "table")
        cfg.decks_dir = Path(cfg.decks_dir).expanduser()
        if cfg.state_file is not None:
            cfg.state_file = Path(cfg.state_file).expanduser()
        if cfg.broker_dir and not Path(cfg.broker_dir).is_absolute():
            cfg.broker_dir = str((path.parent / cfg.broker_dir).resolve())
        return cfg

    def host_port(self) -> tuple[str, int]:
        from engine.configfile import parse_host_port

        return parse_host_port(self.broker, self.config_file, "broker.port" if self.from_table else "broker")

    def login(self) -> tuple[str, str]:
        """The bridge role's broker username and password."""
        from engine.configfile import broker_login

        return broker_login("bridge", broker_dir=self.broker_dir, user=self.user, password=self.password,
                            file=self.config_file, key="broker.credentials" if self.from_table else "broker_dir",
                            device=self.device)

    def outbox_file(self) -> Path | None:
        """Where the bridge keeps shoe messages the broker has not acknowledged: beside the
        session counter's file (no ``state_file``: no outbox, and a card the broker never got
        is lost with the bridge process)."""
        if self.state_file is None:
            return None
        return self.state_file.with_name(self.state_file.name + ".outbox")

    def next_session(self) -> int:
        """This start's session counter: one more than the last (state_file), else the clock in ms."""
        if self.state_file is not None:
            try:
                session = int(self.state_file.read_text().strip() or 0) + 1
            except (FileNotFoundError, ValueError):
                session = 1
            self.state_file.parent.mkdir(parents=True, exist_ok=True)
            write_atomically(self.state_file, f"{session}\n")
            return session
        if self.session > 0:
            return self.session
        return time.time_ns() // 1_000_000


def write_atomically(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` so that a power cut leaves the old file or the new one, never a
    torn or empty one (a lost session file restarts the bridge at session 1): a temporary file
    beside it, fsync, rename over, fsync of the folder."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        os.write(fd, text.encode())
        os.fsync(fd)
    finally:
        os.close(fd)
    os.replace(tmp, path)
    dfd = os.open(path.parent, os.O_RDONLY)
    try:
        os.fsync(dfd)
    finally:
        os.close(dfd)


# ----------------------------------------------------------------- the pure core


class OutboxError(RuntimeError):
    """The outbox could not keep a shoe message (a full or failing disk).  The message was not
    handed on, so the shoe must not be told it is safe: the bridge drops the link's session (and
    with it the frame's ACK) and the shoe sends it again after the next handshake."""


class BridgeCore:
    """Host-session events -> wire messages.  Pure apart from calling ``sink``."""

    def __init__(self, table: str, source: str, session: int, resolver: Resolver | None, sink: Sink) -> None:
        self.table = table
        self.source = source
        self.session = session
        self.resolver = resolver
        self.sink = sink
        self.seq = 0
        self.online: bool | None = None

    def _send(self, kind: str, **body: Any) -> None:
        self.seq += 1
        self.sink(wire.make(self.table, wire.Channel.SHOE, kind, source=self.source, session=self.session,
                            seq=self.seq, **body))

    def availability(self, online: bool) -> None:
        if online != self.online:
            self.online = online
            self.sink(wire.availability(self.table, self.source, online))

    def new_hand(self) -> None:
        """A new hand or a shuffle: the same card may be drawn again."""
        if self.resolver is not None:
            self.resolver.new_hand()

    def handle(self, event: HostEvent) -> None:
        if isinstance(event, LinkUp):
            log.info("shoe %s online (firmware %s, boot %d)", event.ident.device_hex, event.ident.firmware_version,
                     event.ident.boot_count)
            self.availability(True)
        elif isinstance(event, LinkDown):
            log.warning("shoe offline: %s", event.reason)
            self.availability(False)
        elif isinstance(event, DeviceReset):
            log.warning("%s", event.reason)
            self._send("reset", reason=event.reason)
        elif isinstance(event, EventsMissing):
            self._send("device_error", code="events_missing",
                       text=f"the shoe lost {event.count} event(s) from counter {event.first_missing} "
                            f"(boot {event.boot_count}); check the cards dealt against the shoe")
        elif isinstance(event, Incompatible):
            log.error("%s", event.reason)
            self._send("device_error", code="incompatible_firmware", text=event.reason)
        elif isinstance(event, Malformed):
            self._send("device_error", code="malformed_frame",
                       text=f"the shoe sent a frame of kind 0x{event.kind:02x} that does not parse: {event.reason}")
        elif isinstance(event, Received):
            self._received(event.message, event.boot_count)

    def _received(self, msg: m.CardDrawn | m.SeatTag | m.ShoeState | m.DeviceError, boot: int = 0) -> None:
        if isinstance(msg, m.CardDrawn):
            if self.resolver is None:
                card, deck, status = None, None, "unknown_tag"
            else:
                r = self.resolver.resolve(msg.uid)
                card, deck, status = (str(r.card) if r.card else None), r.deck, str(r.status)
            try:
                self._send("card_drawn", counter=msg.counter, uid=msg.uid.hex(), card=card, deck=deck,
                           quality=msg.quality, status=status, boot=boot)
            except OutboxError:
                if self.resolver is not None:
                    self.resolver.undo(r)  # sent again by the shoe, it must resolve the same way
                raise
        elif isinstance(msg, m.SeatTag):
            card = deck = None
            if self.resolver is not None:
                hit = self.resolver.lookup(msg.uid)  # a seat tag is not a draw
                if hit:
                    deck, card = hit[0], str(hit[1])
            self._send("tag_seen", counter=msg.counter, antenna=msg.antenna, uid=msg.uid.hex(), card=card,
                       deck=deck, quality=msg.quality)
        elif isinstance(msg, m.ShoeState):
            if msg.loaded:
                self.new_hand()
                self._send("shoe_loaded", deck=self.resolver.active if self.resolver else None)
            else:
                self._send("shoe_empty")
        else:
            try:
                code = m.ErrorCode(msg.code).name.lower()
            except ValueError:
                code = f"code_{msg.code}"
            self._send("device_error", code=code, text=msg.detail or code.replace("_", " "))


# -------------------------------------------------------------- technician errors


def explain_open_error(port: str, exc: BaseException) -> str:
    """What to tell the person at the table when the port will not open."""
    err = getattr(exc, "errno", None)
    text = str(exc)
    if port.startswith("socket://"):
        where = port[len("socket://"):]
        if "refused" in text.lower() or err == errno.ECONNREFUSED:
            return (f"nothing is listening at {where}; start the shoe (or `studtable shoe-sim --tcp PORT`) "
                    "and check the host and port")
        return f"could not connect to the shoe at {where}: {text}"
    if err == errno.ENOENT or "No such file" in text:
        return (f"the serial path {port} does not exist; check that the shoe is plugged in and powered; "
                "list /dev/serial/by-id/ to find its name")
    if err == errno.EACCES or "Permission denied" in text:
        return (f"permission denied opening {port}; add this user to the 'dialout' group "
                "(sudo usermod -aG dialout $USER) and log in again")
    if err == errno.EBUSY or "busy" in text.lower():
        return f"{port} is in use by another program (another bridge, a serial monitor?); close it"
    if "readiness to read but returned no data" in text or err == errno.EIO:
        return f"the shoe at {port} went away (cable pulled or shoe powered off); waiting for it to come back"
    return f"could not use {port}: {text}"


# ------------------------------------------------------------------------ the edge


class SerialBridge:
    """Runs a ``HostSession`` on a real port, reconnecting for ever until ``stop()``."""

    def __init__(self, port: str, core: BridgeCore, *, baud: int = 115200, config: LinkConfig | None = None,
                 reconnect_interval: float = 0.5, clock: Callable[[], float] = time.monotonic,
                 nonce_seed: int | None = None) -> None:
        import os

        self.port = port
        self.core = core
        self.baud = baud
        self.reconnect_interval = reconnect_interval
        self.clock = clock
        self.session = HostSession(config, nonce_seed if nonce_seed is not None else int.from_bytes(os.urandom(4), "big"))
        self.problems: list[str] = []  # technician messages, newest last (the console can show them)
        self._stop = threading.Event()
        self._commands: queue.Queue[Callable[[], None]] = queue.Queue()
        self._thread: threading.Thread | None = None
        self.connects = 0

    # -- thread-safe controls -----------------------------------------------

    def start(self) -> SerialBridge:
        self._thread = threading.Thread(target=self.run, name="shoe-bridge", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(5)

    def new_hand(self) -> None:
        self._commands.put(self.core.new_hand)

    def reset_shoe(self) -> None:
        self._commands.put(lambda: self.session.send(m.ResetCommand(), self.clock()))

    # -- the loop --------------------------------------------------------------

    def _problem(self, text: str) -> None:
        if not self.problems or self.problems[-1] != text:
            self.problems.append(text)
            log.error("%s", text)

    def _flush_events(self) -> None:
        events = self.session.events()
        for i, ev in enumerate(events):
            try:
                self.core.handle(ev)
            except OutboxError:
                # Not kept, so not delivered: this one and every later message of the batch come
                # again from the shoe (their ACKs go with the session the caller now closes).
                for later in events[i:]:
                    if isinstance(later, Received):
                        self.session.undeliver(later)
                raise

    def run(self) -> None:
        import serial

        self.core.availability(False)
        while not self._stop.is_set():
            try:
                ser = serial.serial_for_url(self.port, baudrate=self.baud, timeout=0.01, write_timeout=1)
            except (serial.SerialException, OSError, ValueError) as exc:
                self._problem(explain_open_error(self.port, exc))
                self._stop.wait(self.reconnect_interval)
                continue
            self.connects += 1
            log.info("opened %s", self.port)
            try:
                self._serve(ser)
            except OutboxError as exc:
                self._problem(f"{exc}; the shoe keeps the card (not acknowledged) and sends it again once "
                              "the bridge can write")
                self.session.close(self.clock(), "the bridge cannot keep the shoe's cards on disk")
                self._flush_events()
                self.core.availability(False)
            except (serial.SerialException, OSError) as exc:
                self._problem(explain_open_error(self.port, exc))
                self.session.close(self.clock(), "the serial link was lost (cable pulled or shoe powered off)")
                self._flush_events()
                self.core.availability(False)
            finally:
                try:
                    ser.close()
                except Exception:  # the port is already gone; nothing more to do
                    log.debug("closing %s failed", self.port, exc_info=True)
            if not self._stop.is_set():
                self._stop.wait(self.reconnect_interval)
        if self.session.state is not HostState.IDLE:
            self.session.close(self.clock(), "the bridge is stopping")
            self._flush_events()
        self.core.availability(False)

    def _serve(self, ser: Any) -> None:
        s = self.session
        s.open(self.clock())
        opened_at = self.clock()
        warned_quiet = False
        while not self._stop.is_set():
            while True:
                try:
                    cmd = self._commands.get_nowait()
                except queue.Empty:
                    break
                try:
                    cmd()
                except Exception as exc:  # e.g. reset while the link is down: say so, carry on
                    self._problem(f"command not carried out: {exc}")
            out = s.bytes_to_send()
            if out:
                ser.write(out)
            data = ser.read(1)
            while ser.in_waiting:
                data += ser.read(ser.in_waiting)
            now = self.clock()
            if data:
                s.receive_bytes(data, now)
            s.poll(now)
            self._flush_events()
            if s.state is HostState.READY:
                warned_quiet = False
                opened_at = now
            elif not warned_quiet and now - opened_at > 5.0:
                warned_quiet = True
                if s.decoder.stats.frames == 0 and s.decoder.stats.bytes_discarded:
                    self._problem(f"bytes arrive on {self.port} but none forms a valid frame; check that the "
                                  f"baud rate is {self.baud} and that the shoe runs studtable firmware")
                elif s.decoder.stats.frames == 0:
                    self._problem(f"{self.port} is open but the shoe sends nothing; check that it is powered "
                                  "and its firmware is flashed (hardware/README.md)")
                else:
                    self._problem(f"the shoe on {self.port} does not answer the handshake; see the log above")


# ------------------------------------------------------------------- the bus edge


class Outbox:
    """Shoe messages the broker has not acknowledged yet, kept on disk until it has.

    The bridge acknowledges a frame to the shoe only after the message it makes has been
    handed to the sink (``SerialBridge`` writes the ACK on its next turn), and the sink writes
    it here first (one JSON line, fsynced).  So a card the shoe was told is safe is either at
    the broker or in this file; a bridge that restarts publishes what the file still holds
    (``BusPublisher.start``).  A message published twice that way (its PUBACK was lost with
    the old process) is recognised by the engine by the shoe's boot and event counter.
    The file is rewritten with the pending messages only at each start.
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        self._lock = threading.Lock()
        self._next = 1
        self._pending: dict[int, tuple[str, dict[str, Any]]] = {}
        self._load()
        path.parent.mkdir(parents=True, exist_ok=True)
        self._rewrite()
        self._fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)

    def _load(self) -> None:
        try:
            lines = self.path.read_text("utf-8").splitlines()
        except FileNotFoundError:
            return
        for line in lines:
            try:
                rec = json.loads(line)
                ident = int(rec["id"])
            except (ValueError, KeyError, TypeError):
                continue  # a line cut short by a crash: its message was never acknowledged to the shoe
            if rec.get("op") == "put":
                self._pending[ident] = (str(rec["kind"]), dict(rec["body"]))
            elif rec.get("op") == "done":
                self._pending.pop(ident, None)
            self._next = max(self._next, ident + 1)

    def _rewrite(self) -> None:
        tmp = self.path.with_name(self.path.name + ".tmp")
        with open(tmp, "w", encoding="utf-8") as fh:
            for ident, (kind, body) in sorted(self._pending.items()):
                fh.write(json.dumps({"op": "put", "id": ident, "kind": kind, "body": body}) + "\n")
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp, 0o600)
        os.replace(tmp, self.path)
        # The rename is durable only once the folder is: else a power cut could bring back the old
        # file (messages already published) or none at all (messages the shoe was told are safe).
        folder = os.open(self.path.parent, os.O_RDONLY | os.O_DIRECTORY)
        try:
            os.fsync(folder)
        finally:
            os.close(folder)

    def _append(self, line: str) -> None:
        """One whole line or nothing: a write cut short by a full disk is cut off again, else the next
        line would be glued to it and lost at the next start."""
        end = os.fstat(self._fd).st_size
        data = line.encode()
        try:
            if os.write(self._fd, data) != len(data):  # a short write: the disk filled up under it
                raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        except OSError:
            with contextlib.suppress(OSError):
                os.ftruncate(self._fd, end)
            raise

    def pending(self) -> list[tuple[int, str, dict[str, Any]]]:
        with self._lock:
            return [(i, k, b) for i, (k, b) in sorted(self._pending.items())]

    def put(self, kind: str, body: dict[str, Any]) -> int:
        """Keep a message; durable (fsynced) when this returns."""
        with self._lock:
            ident = self._next
            try:
                self._append(json.dumps({"op": "put", "id": ident, "kind": kind, "body": body}) + "\n")
                os.fsync(self._fd)
            except OSError as exc:
                raise OutboxError(f"cannot write the bridge's outbox {self.path}: {exc.strerror or exc}") from exc
            self._next += 1
            self._pending[ident] = (kind, body)
        return ident

    def done(self, ident: int) -> None:
        """The broker has it (no fsync: a lost mark only means one more publish, recognised downstream)."""
        with self._lock:
            if self._pending.pop(ident, None) is not None:
                try:
                    if self._pending:
                        self._append(json.dumps({"op": "done", "id": ident}) + "\n")
                    else:
                        # Nothing left to publish: the file is emptied, so a drawn card (a hole card)
                        # lies on this disk only until the broker has it, not for the whole session.
                        os.ftruncate(self._fd, 0)
                except OSError as exc:  # the message is published again at the next start; no harm
                    log.warning("could not mark shoe message %d published in %s: %s", ident, self.path, exc)

    def close(self) -> None:
        with self._lock:
            os.close(self._fd)


class BusPublisher:
    """The bridge's sink onto MQTT: a ``BusClient`` with role ``bridge`` (see the module docstring).

    Call it with each message ``BridgeCore`` produces.  Card events and the other shoe
    messages are published on ``sensor/shoe`` (QoS 1, numbered by the bus client);
    availability messages from the core say whether the shoe's serial link is up and
    are folded into the device's availability.

    The bus client says ``online`` the moment it connects.  So that a bridge starting
    with the shoe unplugged does not say ``online`` then ``offline`` (which the engine
    would take for a shoe that went away), ``start`` connects when the shoe link first
    comes up, or after ``grace`` seconds if it does not.
    """

    def __init__(self, *, host: str, port: int, username: str, password: str, table: str, device: str,
                 session: int, version: str = "1", grace: float = 3.0, outbox: Path | None = None) -> None:
        from engine.bus import BusClient

        self.outbox = Outbox(outbox) if outbox is not None else None
        self._lock = threading.Lock()
        self.link_up = False
        self.published = 0
        self.grace = grace
        self._started = False
        self._timer: threading.Timer | None = None
        self.bus = BusClient(host=host, port=port, username=username, password=password, table=table,
                             device=device, role=wire.Role.BRIDGE, session=session, version=version,
                             capabilities=["shoe"], on_connection=self._on_connection)

    def start(self) -> BusPublisher:
        """Connect once the shoe answers (or after ``grace`` seconds); returns at once.  What the
        outbox still holds from a previous run is published first (queued until connected)."""
        if self.outbox is not None:
            left = self.outbox.pending()
            if left:
                log.warning("publishing %d shoe message(s) the broker had not acknowledged before the "
                            "bridge stopped", len(left))
            for ident, kind, body in left:
                self._publish(kind, body, ident)
        self._timer = threading.Timer(self.grace, self._connect)
        self._timer.daemon = True
        self._timer.start()
        return self

    def _connect(self) -> None:
        with self._lock:
            if self._started:
                return
            self._started = True
        self.bus.start(wait=None)  # paho connects (and reconnects) in the background

    def wait_connected(self, timeout: float) -> bool:
        return self.bus.wait_connected(timeout)

    def stop(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
        with self._lock:
            started = self._started
            self._started = True  # no late connect
        if started:
            self.bus.stop()
        if self.outbox is not None:
            self.outbox.close()

    def _publish(self, kind: str, body: dict[str, Any], ident: int | None) -> None:
        outbox = self.outbox
        if outbox is None or ident is None:
            self.bus.publish(wire.Channel.SHOE, kind, **body)
        else:
            self.bus.publish_acked(wire.Channel.SHOE, kind, body, lambda: outbox.done(ident))
        self.published += 1

    def __call__(self, msg: wire.Message) -> None:
        if msg.channel is wire.Channel.AVAIL:
            up = msg.kind == wire.AVAILABILITY_ONLINE
            with self._lock:
                changed = self.link_up != up
                self.link_up = up
                if changed and self.bus.connected:
                    self._announce(up)
            if up:
                self._connect()
            return
        body = dict(msg.body)
        # On disk before the shoe is told it may forget the card (see ``Outbox``).
        ident = self.outbox.put(msg.kind, body) if self.outbox is not None else None
        self._publish(msg.kind, body, ident)

    def _announce(self, online: bool) -> None:
        # Availability carries no seq (engine.wire): it must not go through BusClient.publish,
        # which would number it and make the engine see a gap in the shoe's messages.
        self.bus.set_available(online)

    def _on_connection(self, up: bool) -> None:
        # The bus client has just said "online"; if the shoe is not answering, say so at once.
        if up:
            with self._lock:
                if not self.link_up:
                    self._announce(False)


def make_resolver(cfg: BridgeConfig) -> Resolver | None:
    """The resolver for the configured deck, or None (every card then reports ``unknown_tag``)."""
    if not cfg.deck:
        return None
    registry = DeckRegistry(cfg.decks_dir)
    return Resolver(registry.load_all(), cfg.deck)
