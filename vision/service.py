"""The vision service: camera frames in, observations on the bus out.

Two layers, as everywhere in studtable:

* :class:`VisionCore` is pure: it is handed frames with their timestamps and
  hands finished wire messages (``engine.wire.Message``) to a ``publish``
  callback: availability, and an observation whenever a seat
  changed, the irregular set changed, or ``heartbeat_frames`` frames passed
  (so a late subscriber and the engine's health view always have a recent
  picture).  It numbers every message it sends (``seq``) within its ``session``
  (the restart counter), as the wire contract requires.  The counter outlives the
  process: :func:`next_session` keeps it in a small state file (``vision run`` puts it
  beside the calibration), so a restarted service starts a session the engine has not
  seen; with a counter that started at 1 again every message of the new run would be a
  duplicate of the last run's and dropped.
* :func:`run_capture` is the edge: it owns ``cv2.VideoCapture`` (a camera index,
  a video file, or a stream URL), reads it on a thread of its own (``FrameReader``)
  so that a camera that stops delivering frames is reported ``offline`` rather
  than going silent, reopens a camera or stream that drops out (``offline``
  while it is gone) and reads the clock.

The table's phase: cards tabled at the showdown (fanned, heaped; :mod:`vision.detect.tabled`)
lie on the felt only at the showdown and between hands, and reading a stud row as tabled cards
costs the streets dearly on some decks, so the detector reads them only when the engine's
public state says they may lie there (:class:`PhaseGate`, fed by :meth:`VisionCore.on_state`
from ``public/state``, which the vision login may read: :func:`state_listener`; docs/vision.md,
session 12).

The MQTT client is not here: ``publish`` is whatever the caller passes (``studtable vision
run`` passes the bus client's, ``engine/bus.py``, or prints each message as a JSON line), and
the public state comes in through :func:`state_listener`.  The Last Will (``offline`` on the
availability topic) belongs to that client's connection.
"""

from __future__ import annotations

import contextlib
import logging
import os
import queue
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import cv2
import numpy as np

from engine import wire
from vision.detect import Detector
from vision.tracking import Observation, Tracker

log = logging.getLogger(__name__)

Publish = Callable[[wire.Message], None]
NICENESS = 10  # how far `vision run` lowers its priority (a systemd unit says Nice=10)
BUSY = 1.0  # share of one core the frame loop may use by default (see run_capture)
VERSION = "1"
CAPABILITIES = ("up_cards", "down_count", "off_felt", "half_turned")


def next_session(state_file: Path, clock: Callable[[], float] = time.time) -> int:
    """This start's session counter: one more than the last one kept in ``state_file``, kept there.

    A missing or unreadable file starts at 1.  The file is replaced atomically (written beside it,
    then renamed), so a crash mid-write leaves the old counter, never a half-written one.  If the
    file cannot be written (a read-only directory), the counter is the wall clock in milliseconds,
    which also grows from one start to the next, and a warning says so.
    """
    try:
        last = int(state_file.read_text().strip() or 0)
    except (OSError, ValueError):
        last = 0
    session = last + 1
    try:
        state_file.parent.mkdir(parents=True, exist_ok=True)
        tmp = state_file.with_name(f".{state_file.name}.{os.getpid()}.tmp")
        tmp.write_text(f"{session}\n")
        os.replace(tmp, state_file)
    except OSError as exc:
        session = max(session, int(clock() * 1000))
        log.warning("cannot keep the session counter in %s (%s); using the clock: session %d", state_file, exc, session)
    return session


def session_file_for(calibration: Path) -> Path:
    """Where ``vision run`` keeps its session counter by default: beside the calibration file."""
    return calibration.with_name(calibration.stem + ".session")


# --------------------------------------------------------------------------- the table's phase

#: The engine's phases (``public/state`` ``phase``, engine/hand/state.py) on a street: only rows and
#: down cards lie on the felt.  RRoP 3.6: a hand is shown "face-up on the table" at the showdown;
#: cards shown "during ... a deal" are the exception, and the state names them (a seat's ``shown``).
STREET_PHASES = frozenset({"dealing", "betting"})
#: ... and where tabled cards may lie: the showdown; the hand over ("complete": the winner's hand
#: lies tabled until the pot is pushed, a called hand may be asked to be seen again, cards may be
#: shown "after a deal", RRoP 3.6, and the engine takes a show then); no hand ("idle": no street's
#: rows to misread).
TABLED_PHASES = frozenset({"showdown", "complete", "idle"})
#: A state older than this (seconds of the frame clock) is stale: the engine publishes the state on
#: every input and at least once a second while the camera reports (engine/service.py
#: HEARD_REFRESH_S; the camera reports at least every ``heartbeat_frames`` frames), so a state this old
#: means the engine or the bus is gone.
PHASE_STALE_S = 30.0


def tabled_allowed(phase: str, shown: bool = False) -> bool | None:
    """Whether cards may lie tabled in ``phase`` (``shown``: a seat has shown cards during the hand);
    None for a phase this service does not know (as if nothing were heard)."""
    if phase in STREET_PHASES:
        return shown
    if phase in TABLED_PHASES:
        return True
    return None


@dataclass
class PhaseGate:
    """What the table's phase says about tabled cards, from the engine's public state (pure).

    * Nothing heard yet (no bus, an old broker ACL that does not let the vision login read
      ``public/state``, the first frames after a start): None, and the detector reads tabled cards as
      its parameters say (as it did before the gate).
    * A state heard within ``stale_s``: its phase decides (:func:`tabled_allowed`).  A restart of the
      vision service mid-showdown hears the retained state at once.
    * A state older than ``stale_s``: False, rows only.  The engine is gone (it republishes the state
      when it is back), nothing takes what the camera sees meanwhile but the broker's queue, and a
      showdown heard last must not keep the tabled reading on the next hands' streets for ever (on
      some decks it misreads rows: docs/vision.md, session 12).  Rows and down cards are read whatever
      the gate says.

    Thread-safe as it is used: the bus thread calls :meth:`observe`, the frame loop :meth:`at_showdown`;
    what is heard is one tuple, replaced whole.
    """

    stale_s: float = PHASE_STALE_S
    heard: tuple[bool | None, float] | None = None  # (what the last state said, when it came)

    def observe(self, state: Mapping[str, object], now: float) -> None:
        """A ``public/state`` snapshot (the ``state`` field) came at ``now``."""
        phase = state.get("phase")
        seats = state.get("seats")
        shown = isinstance(seats, list) and any(isinstance(s, Mapping) and s.get("shown") for s in seats)
        self.heard = (tabled_allowed(phase, shown) if isinstance(phase, str) else None, now)

    def at_showdown(self, now: float) -> bool | None:
        """What :attr:`vision.detect.Detector.at_showdown` should be for a frame taken at ``now``."""
        heard = self.heard
        if heard is None:
            return None
        said, when = heard
        return False if now - when > self.stale_s else said


@dataclass
class VisionCore:
    detector: Detector
    tracker: Tracker
    publish: Publish
    table: str
    device: str
    session: int
    heartbeat_frames: int = 30
    seq: int = 0
    frames: int = 0
    last: Observation | None = field(default=None, repr=False)
    gate: PhaseGate = field(default_factory=PhaseGate)
    #: whether a bus feeds :meth:`on_state` (then a service that hears no state says so, once)
    expect_state: bool = False
    _first_t: float | None = field(default=None, repr=False)
    _told: str = field(default="", repr=False)

    def _next_seq(self) -> int:
        self.seq += 1
        return self.seq

    def birth_fields(self) -> dict[str, object]:
        """What this device says in its birth message.

        The birth itself is sent by the bus client at every (re)connect, with the
        highest ``seq`` so far, so it is not published from here.
        """
        return {"role": "vision", "version": VERSION, "capabilities": list(CAPABILITIES), "last_seq": self.seq}

    def start(self) -> None:
        """Announce the device online (retained availability; the Last Will says offline)."""
        self.publish(wire.availability(self.table, self.device, True))

    def set_online(self, online: bool) -> None:
        self.publish(wire.availability(self.table, self.device, online))

    def on_state(self, state: Mapping[str, object], timestamp: float) -> None:
        """The engine's public state (the ``state`` of a ``public/state`` message) came at ``timestamp``
        (the frames' clock): what its phase says about tabled cards holds from the next frame on."""
        self.gate.observe(state, timestamp)

    def on_frame(self, image: np.ndarray, timestamp: float) -> Observation:
        """Detect (tabled cards as the table's phase allows), track, and publish if there is news
        (or a heartbeat is due)."""
        self.frames += 1
        self.detector.at_showdown = self.gate.at_showdown(timestamp)
        if self.expect_state:
            self._tell_phase(timestamp)
        detections = self.detector.detect(image)
        obs = self.tracker.update(self.frames, detections, timestamp, self.detector.occluders, self.detector.shaken)
        self.last = obs
        if obs.changed or obs.irregular_changed or self.frames % self.heartbeat_frames == 1 or self.heartbeat_frames == 1:
            self.publish(
                wire.make(
                    self.table, wire.Channel.VISION, "observation",
                    source=self.device, session=self.session, seq=self._next_seq(), **obs.to_body(),
                )
            )
        return obs

    def stop(self) -> None:
        self.publish(wire.availability(self.table, self.device, False))

    def _tell_phase(self, timestamp: float) -> None:
        """Log (once each) a public state never heard, or gone stale."""
        if self._first_t is None:
            self._first_t = timestamp
        heard, stale = self.gate.heard, self.gate.stale_s
        if heard is None and timestamp - self._first_t > stale and self._told != "unheard":
            self._told = "unheard"
            log.warning("vision %s: no public state from the engine in %.0f s: cards tabled at the showdown are "
                        "read whatever the phase (is the engine running? a broker config generated before "
                        "session 12 does not let the vision login read public/state: run `studtable broker "
                        "config` again)", self.device, stale)
        elif heard is not None and timestamp - heard[1] > stale and self._told != "stale":
            self._told = "stale"
            log.warning("vision %s: the engine's public state is %.0f s old: reading rows only (no tabled cards) "
                        "until it comes again", self.device, timestamp - heard[1])
        elif heard is not None and timestamp - heard[1] <= stale:
            self._told = ""


def state_listener(gate: PhaseGate, clock: Callable[[], float] = time.monotonic) -> Callable[[wire.Message], None]:
    """The bus client's ``on_message`` for a vision service subscribed to ``public/state``: each state
    goes to ``gate`` (the core's), stamped with ``clock`` (the frame loop's: :func:`run_capture`'s)."""

    def on_message(msg: wire.Message) -> None:
        state = msg.body.get("state")
        if msg.channel is wire.Channel.STATE and isinstance(state, Mapping):
            gate.observe(state, clock())

    return on_message


def open_capture(source: str) -> cv2.VideoCapture:
    """A capture for a camera index (``0``), a video file or a stream URL; clear error if it will not open."""
    cap = cv2.VideoCapture(int(source)) if source.isdigit() else cv2.VideoCapture(source)
    if not cap.isOpened():
        hint = (
            "check that the camera is connected and not in use by another program (ls /dev/video*)"
            if source.isdigit()
            else "check the file path or the stream URL (rtsp://, http://) and that the stream is running"
        )
        raise OSError(f"cannot open video source {source!r}: {hint}")
    return cap


class FrameReader:
    """Reads a capture on a thread of its own, so that a camera that stops delivering is noticed.

    Why: ``cv2.VideoCapture.read`` has no timeout; a frozen USB camera or a stream whose sender
    hangs blocks it for ever, and the service would then go silent instead of saying it is
    offline.  A live source keeps only the newest frame (the table as it is now); a file keeps
    every frame (``live=False``).
    """

    def __init__(self, cap: Any, live: bool) -> None:
        self.cap = cap
        self._frames: queue.Queue[tuple[bool, np.ndarray | None]] = queue.Queue(maxsize=1 if live else 8)
        self._live = live
        self.dropped = 0  # live frames replaced by a newer one before they were read (skipped when behind)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="frame-reader", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._stop.is_set():
            ok, frame = self.cap.read()
            item = (bool(ok), frame if ok else None)
            if self._live:
                with contextlib.suppress(queue.Empty):
                    self._frames.get_nowait()  # drop the older frame: only now matters
                    self.dropped += 1
                self._frames.put(item)
            else:
                while not self._stop.is_set():
                    try:
                        self._frames.put(item, timeout=0.2)
                        break
                    except queue.Full:
                        continue
            if not ok:
                return

    def read(self, timeout: float) -> tuple[bool, np.ndarray | None] | None:
        """(ok, frame) as ``cap.read`` gives it, or None if nothing came within ``timeout`` seconds."""
        try:
            return self._frames.get(timeout=timeout)
        except queue.Empty:
            return None

    def close(self) -> None:
        self._stop.set()
        self.cap.release()  # also wakes a read() blocked in most backends
        self._thread.join(0.5)


def lower_priority(niceness: int = NICENESS, *, own_group: bool = False, group_niceness: int | None = None) -> int:
    """Make this process yield the CPU to the table's other services; returns the new niceness.

    The camera is a second opinion next to the shoe; the shoe -> bridge -> engine -> console path is
    what the dealer waits on, and on a small machine they share its cores.

    A nice value alone is not enough where the kernel groups processes by session (autogroup,
    ``/proc/sys/kernel/sched_autogroup_enabled``, on by default in most distributions): the CPU is
    shared fairly between sessions first, and nice only orders the processes inside one.  A
    vision process in the same session as the table's other parts (the demo's camera process)
    was charged to their share: measured with the bench (docs/vision.md, session 11), the shoe
    card's median doubled whatever its nice value was.  And a systemd service is a session of its
    own, where nice changes nothing against the engine's.  So the session's group is lowered too
    (``/proc/self/autogroup``) when the process leads its session, and ``own_group`` first makes
    it one (a child that is no process group leader: not ``vision run`` in a terminal, whose
    Ctrl-C must still reach it).  ``group_niceness`` (default: ``niceness``) is the group's.
    """
    try:
        got = os.nice(max(0, niceness - os.nice(0)))
    except OSError as exc:  # not allowed to (a container's limits): say so, carry on
        log.warning("could not lower the vision service's priority: %s", exc)
        got = os.nice(0)
    if own_group and os.getsid(0) != os.getpid():
        try:
            os.setsid()
        except OSError as exc:  # a process group leader cannot: it stays in its session
            log.info("vision: no session of its own (%s): the niceness orders it within its session only", exc)
    if os.getsid(0) == os.getpid():
        try:
            with open("/proc/self/autogroup", "w", encoding="ascii") as fh:
                fh.write(str(niceness if group_niceness is None else group_niceness))
        except OSError:  # no autogroup (a kernel without it, or off): nice is what counts
            pass
    return got


def run_capture(
    source: str, core: VisionCore, *, max_frames: int | None = None, reconnect_s: float = 2.0,
    stall_s: float = 2.0, clock: Callable[[], float] = time.monotonic,
    opener: Callable[[str], Any] = open_capture, stop: threading.Event | None = None,
    busy: float = BUSY,
) -> int:
    """Read frames until the file ends, ``max_frames`` are done, or Ctrl-C; returns frames processed.

    A live source that delivers no frame for ``stall_s`` seconds is reported ``offline`` (the
    engine prompts the dealer) until frames come again; one whose read fails is reopened.
    ``stop``, when set, ends the loop (a service shutting down).

    ``busy`` bounds the vision work: after a frame that took ``t`` seconds the loop rests
    ``t * (1 / busy - 1)``, so that it uses at most that share of one core whatever the frame
    costs (1.0: no rest).  A live camera's frames that come meanwhile are skipped (the reader
    keeps only the newest): when the loop is behind it reads the table as it is now, never a
    backlog.  A file's frames are all read, later.
    """
    if not 0 < busy <= 1:
        raise ValueError(f"busy must be a share of one core in (0, 1], not {busy}")
    rest = 1 / busy - 1
    stop = stop or threading.Event()
    is_file = not source.isdigit() and "://" not in source
    reader = FrameReader(opener(source), live=not is_file)
    core.start()
    online = True
    done = 0
    try:
        while (max_frames is None or done < max_frames) and not stop.is_set():
            got = reader.read(stall_s)
            if got is None:
                if online and not is_file:
                    log.warning("video source %s delivered no frame for %.1f s; offline", source, stall_s)
                    core.set_online(False)
                    online = False
                continue
            ok, frame = got
            if not ok or frame is None:
                if is_file:
                    break
                log.warning("video source %s stopped; reopening in %.0f s", source, reconnect_s)
                if online:
                    core.set_online(False)
                    online = False
                reader.close()
                while not stop.wait(reconnect_s):
                    try:
                        reader = FrameReader(opener(source), live=True)
                        break
                    except OSError as exc:
                        log.warning("%s", exc)
                else:
                    break
                continue
            if not online:
                log.warning("video source %s delivers frames again; online", source)
                core.set_online(True)
                online = True
            t0 = time.perf_counter()
            core.on_frame(frame, clock())
            done += 1
            if rest > 0 and stop.wait(rest * (time.perf_counter() - t0)):
                break
    except KeyboardInterrupt:
        pass
    finally:
        reader.close()
        core.stop()
    return done
