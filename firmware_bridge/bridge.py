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
"""

from __future__ import annotations

import errno
import json
import logging
import queue
import threading
import time
import tomllib
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
    session: int = 1  # the publisher's restart counter (the CLI keeps it in state_file)
    state_file: Path | None = None

    @classmethod
    def load(cls, path: Path) -> BridgeConfig:
        try:
            text = path.read_text()
        except FileNotFoundError:
            raise ValueError(f"config file {path} does not exist") from None
        try:
            data: dict[str, Any] = tomllib.loads(text) if path.suffix == ".toml" else json.loads(text)
        except (tomllib.TOMLDecodeError, json.JSONDecodeError) as exc:
            raise ValueError(f"config file {path} does not parse: {exc}") from None
        data = data.get("shoe", data)  # a whole-table config may nest the bridge's part under [shoe]
        known = set(cls.__dataclass_fields__)
        unknown = sorted(set(data) - known)
        if unknown:
            raise ValueError(f"config file {path}: unknown setting(s) {', '.join(unknown)}; known: {', '.join(sorted(known))}")
        cfg = cls(**data)
        cfg.decks_dir = Path(cfg.decks_dir).expanduser()
        if cfg.state_file is not None:
            cfg.state_file = Path(cfg.state_file).expanduser()
        return cfg


# ----------------------------------------------------------------- the pure core


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
            self._received(event.message)

    def _received(self, msg: m.CardDrawn | m.SeatTag | m.ShoeState | m.DeviceError) -> None:
        if isinstance(msg, m.CardDrawn):
            if self.resolver is None:
                card, deck, status = None, None, "unknown_tag"
            else:
                r = self.resolver.resolve(msg.uid)
                card, deck, status = (str(r.card) if r.card else None), r.deck, str(r.status)
            self._send("card_drawn", counter=msg.counter, uid=msg.uid.hex(), card=card, deck=deck,
                       quality=msg.quality, status=status)
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
        for ev in self.session.events():
            self.core.handle(ev)

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


def make_resolver(cfg: BridgeConfig) -> Resolver | None:
    """The resolver for the configured deck, or None (every card then reports ``unknown_tag``)."""
    if not cfg.deck:
        return None
    registry = DeckRegistry(cfg.decks_dir)
    return Resolver(registry.load_all(), cfg.deck)
