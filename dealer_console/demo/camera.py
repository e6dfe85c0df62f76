"""The demo table's camera: a simulated overhead camera and the real vision pipeline reading it.

Two parts, kept apart as at a real table:

* ``SimulatedCapture`` is the camera, read as ``cv2.VideoCapture`` is: it photographs a
  ``vision.camera_sim.TableCamera`` (the felt as the simulated dealer lays it) at the
  camera's frame rate.  It can *stall*: a frozen USB camera or a dead stream delivers no
  frames at all, and ``read`` then hangs.
* ``CameraService`` is the vision service as ``studtable vision run`` runs it: the deck
  enrolled from its flat faces, the calibration found from the printed markers in a frame,
  ``Detector`` + ``Tracker`` in a ``VisionCore``, the same ``run_capture`` loop (whose frame
  watchdog turns a camera that stopped delivering into availability ``offline``, and back),
  and a bus client with the vision role.

Only the capture is a fake; everything from the frame on is the production code.
"""

from __future__ import annotations

import logging
import signal
import threading
import time
from collections import deque
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from engine import wire
from engine.bus import BusClient
from engine.wire import Role
from vision.service import PhaseGate, VisionCore, lower_priority, run_capture, state_listener

log = logging.getLogger("studtable.demo.camera")

CAMERA_DEVICE = "cam-1"
# The frame watchdog's limit in the demo.  The simulated capture makes its frames in the (niced)
# camera process itself, so on a machine with both cores busy a starved process looks like a
# camera that stopped; a real camera delivers frames whatever the CPU does.  Three seconds keeps
# a starved simulator from passing for a dead camera; the camera-stall drill still trips it.
STALL_TIMEOUT_S = 3.0
DECK_ART = "anglo"
# What the camera process sends, in place of ready or not, while it is at work on something long (a first
# enrollment): the demo then waits longer for it instead of giving the camera up.
_WORKING = "working"


class CameraUnavailable(RuntimeError):
    """The camera cannot run here (no card art installed); the message says what to install."""


class SimulatedCapture:
    """The simulated camera as ``cv2.VideoCapture`` is read: ``read()`` returns the next frame at
    the camera's rate; ``stall()`` makes it hang as a frozen camera's does, ``resume()`` thaws it."""

    def __init__(self, camera: Any, fps: float = 12.0) -> None:
        self.camera = camera
        self.interval = 1.0 / fps
        self._running = threading.Event()
        self._running.set()
        self._released = False
        self._next = time.monotonic()

    def read(self) -> tuple[bool, np.ndarray | None]:
        while not self._running.wait(0.05):
            if self._released:
                return False, None
        if self._released:
            return False, None
        delay = self._next - time.monotonic()
        if delay > 0:
            time.sleep(delay)
        self._next = max(self._next + self.interval, time.monotonic())
        return True, self.camera.frame()

    def release(self) -> None:
        self._released = True

    def stall(self) -> None:
        self._running.clear()

    def resume(self) -> None:
        self._running.set()

    @property
    def stalled(self) -> bool:
        return not self._running.is_set()


def check_card_art(art_dir: Path) -> None:
    """The camera simulator draws real card art: Debian's gnome-cards-data, rendered by rsvg-convert."""
    import shutil

    missing = [what for what, ok in ((f"{art_dir} (gnome-cards-data)", art_dir.is_dir()),
                                     ("rsvg-convert (librsvg2-bin)", shutil.which("rsvg-convert") is not None))
               if not ok]
    if missing:
        raise CameraUnavailable(
            f"the camera simulator draws real card art and {' and '.join(missing)} "
            f"{'is' if len(missing) == 1 else 'are'} missing: sudo apt install gnome-cards-data librsvg2-bin "
            "(or run with --no-camera)")


def _deck_model(cache: Path, progress: Callable[[str], None] | None = None) -> tuple[Any, Any]:
    """The demo deck's faces (Aisleriot art) and its enrollment, cached next to the face images.

    A first enrollment takes a minute or more on a small machine (the classifier's simulated views):
    ``progress`` hears that it has begun, so the demo waits for it instead of giving the camera up."""
    from vision.deck import EnrollmentError, enroll, load, read_face_dir, save
    from vision.plain_deck import card_faces
    from vision.scene import FaceSet

    # Aisleriot's art when it is installed, else the project's own plain cards (vision/plain_deck.py).
    d, deck_name, _why = card_faces(DECK_ART)
    faces = FaceSet.load(d)
    path = cache / f"{deck_name}.deck.npz"
    try:
        return faces, load(path)
    except (OSError, EnrollmentError, ValueError):
        pass
    if progress is not None:
        progress(f"enrolling the demo deck ({deck_name}, 52 faces; the first run only, a minute or more on a "
                 f"small machine; cached in {path})")
    face_images, back = read_face_dir(d)
    model = enroll(face_images, back, deck_name)
    try:
        cache.mkdir(parents=True, exist_ok=True)
        save(model, path)
    except OSError as exc:  # only a cache
        log.warning("could not cache the enrolled deck at %s: %s", path, exc)
    return faces, model


def _warm_up(faces: Any, model: Any) -> None:
    """Read one rendered table before saying ready: on a fresh install numba compiles the matchers on
    their first call (tens of seconds on a small machine), and a camera that spends the first hands
    compiling reads none of their cards.  Compiled code is cached, so later starts take a second."""
    from vision.calibration import calibrate
    from vision.detect import Detector
    from vision.scene import render_scene

    t0 = time.monotonic()
    scene = render_scene(faces, 1)
    Detector(model, calibrate(scene.image, scene.layout)).detect(scene.image)
    log.info("vision warmed up in %.1f s", time.monotonic() - t0)


class _CountingCore(VisionCore):
    """The production core, counting what the demo's summary reports."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.frame_cpu_s: deque[float] = deque(maxlen=5000)  # the latest (a windowed demo runs for hours)
        self.offline_events = 0

    def on_frame(self, image: np.ndarray, timestamp: float) -> Any:
        t0 = time.process_time()
        obs = super().on_frame(image, timestamp)
        self.frame_cpu_s.append(time.process_time() - t0)
        return obs

    def set_online(self, online: bool) -> None:
        self.offline_events += not online
        super().set_online(online)


class CameraService:
    """The simulated camera plus the production vision pipeline, publishing on the table's bus."""

    def __init__(self, broker: Any, table: str, seats: int, *, seed: int, cache: Path,
                 fps: float = 12.0, stable_frames: int = 3, stall_timeout: float = STALL_TIMEOUT_S,
                 progress: Callable[[str], None] | None = None) -> None:
        import cv2

        from vision.calibration import calibrate
        from vision.camera_sim import TableCamera
        from vision.detect import Detector
        from vision.tracking import Tracker

        cv2.setNumThreads(1)  # one core, as the vision service is specified
        faces, model = _deck_model(cache, progress)
        self.table_camera = TableCamera(faces, seats, seed=seed)
        self.capture = SimulatedCapture(self.table_camera, fps)
        self.calibration = calibrate(self.table_camera.frame(), self.table_camera.layout)
        self.stall_timeout = stall_timeout
        user, password = broker.login(Role.VISION, CAMERA_DEVICE)
        gate = PhaseGate()  # the table's phase from the engine's public state, as `vision run` hears it
        self.bus = BusClient(host=broker.host, port=broker.port, username=user, password=password, table=table,
                             device=CAMERA_DEVICE, role=Role.VISION, session=time.time_ns() // 1_000_000,
                             version="1", capabilities=["up_cards", "down_count", "off_felt", "half_turned"],
                             on_message=state_listener(gate))
        self.bus.subscribe(wire.Channel.STATE)
        _warm_up(faces, model)
        self.core = _CountingCore(Detector(model, self.calibration, reuse=True),
                                  Tracker(self.calibration.layout, stable_frames), self._publish, table,
                                  CAMERA_DEVICE, 1, gate=gate, expect_state=True)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="vision-service", daemon=True)

    def _publish(self, msg: wire.Message) -> None:
        if msg.channel is wire.Channel.AVAIL:
            self.bus.set_available(msg.kind == wire.AVAILABILITY_ONLINE)
        else:
            self.bus.publish(msg.channel, msg.kind, **msg.body)

    def start(self) -> CameraService:
        self.bus.start(wait=10.0)
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        self.capture.release()
        self._thread.join(5)
        self.bus.stop(1.0)

    def _run(self) -> None:
        # The same loop as `studtable vision run`: its frame watchdog says offline when the camera stalls.
        run_capture("sim://cam-1", self.core, stall_s=self.stall_timeout, reconnect_s=0.5,
                    opener=lambda _source: self.capture, stop=self._stop)

    @property
    def frames(self) -> int:
        return self.core.frames

    @property
    def offline_events(self) -> int:
        return self.core.offline_events

    @property
    def detect_s(self) -> deque[float]:
        return self.core.frame_cpu_s

    def view(self) -> dict[int, dict[str, object]]:
        """The tracker's stable view: seat -> up cards in order and down count (seats with cards only)."""
        last = self.core.last
        if last is None:
            return {}
        return {n: {"up": list(up), "down": down} for n, (up, down) in last.seats.items() if up or down}

    @property
    def fps(self) -> float:
        last = self.core.last
        return last.fps if last else 0.0


# ----------------------------------------------------------------------------- as its own process


class _Remote:
    """Calls into the camera process, one at a time, answered in order."""

    def __init__(self, conn: Any) -> None:
        self._conn = conn
        self._lock = threading.Lock()

    def call(self, name: str, *args: Any, **kwargs: Any) -> Any:
        with self._lock:
            self._conn.send((name, args, kwargs))
            if not self._conn.poll(30):
                raise RuntimeError(f"the camera process did not answer {name!r} within 30 s")
            ok, value = self._conn.recv()
        if not ok:
            raise RuntimeError(f"camera process: {name}: {value}")
        return value


class _Proxy:
    def __init__(self, remote: _Remote, prefix: str, names: tuple[str, ...]) -> None:
        for name in names:
            setattr(self, name, lambda *a, _n=name, **k: remote.call(prefix + _n, *a, **k))


class CameraProcess:
    """``CameraService`` in a child process, as a table runs the vision service apart from the engine.

    The dealer's side keeps the same interface: ``table_camera`` (deal, pitch_off_felt, move,
    muck, clear, truth, turn_up) changes the felt the child photographs, ``capture`` (stall, resume)
    is the camera's fault switch, and ``view``/``frames``/``fps`` read the service's state.
    """

    def __init__(self, broker: Any, table: str, seats: int, *, seed: int, cache: Path, fps: float = 12.0,
                 stable_frames: int = 3, stall_timeout: float = STALL_TIMEOUT_S, group_nice: int = 0) -> None:
        import multiprocessing

        ctx = multiprocessing.get_context("spawn")  # no fork of a process with threads
        parent, child = ctx.Pipe()
        user, password = broker.login(Role.VISION, CAMERA_DEVICE)
        login = {"host": broker.host, "port": broker.port, "user": user, "password": password}
        self._proc = ctx.Process(target=_camera_main, name="studtable-camera", daemon=True,
                                 args=(child, login, table, seats, seed, str(cache), fps, stable_frames,
                                       stall_timeout, logging.getLogger().getEffectiveLevel(), group_nice))
        self._remote = _Remote(parent)
        self.table_camera = _Proxy(self._remote, "felt.", ("deal", "pitch_off_felt", "move", "muck", "clear",
                                                           "truth", "deal_common", "common", "turn_up"))
        self.capture = _Proxy(self._remote, "capture.", ("stall", "resume"))

    def start(self, timeout: float = 60.0, working_timeout: float = 900.0) -> CameraProcess:
        """Start the child and wait until it says ready: ``timeout`` for a silent child, and, once it has
        said it is at work on something long (a first enrollment), ``working_timeout`` from then."""
        import sys

        from vision.plain_deck import aisleriot_missing

        why = aisleriot_missing(DECK_ART)
        if why:  # one line; the camera runs all the same
            print(f"demo: {why}", file=sys.stderr, flush=True)
        # Ctrl-C at the terminal signals the whole group; the demo stops the camera in order.  So the child
        # is born ignoring SIGINT (an ignored signal stays ignored through exec, and Python then installs
        # no KeyboardInterrupt handler), also while it is still importing.
        try:
            previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
        except ValueError:  # not the main thread: nothing to change
            previous = None
        try:
            self._proc.start()
        finally:
            if previous is not None:
                signal.signal(signal.SIGINT, previous)
        conn = self._remote._conn
        wait, started = timeout, time.monotonic()
        while True:
            if not conn.poll(wait):
                self._proc.terminate()
                raise CameraUnavailable(f"the camera process did not start within {time.monotonic() - started:.0f} s")
            try:
                ok, value = conn.recv()
            except EOFError:
                ok, value = False, f"the camera process exited (status {self._proc.exitcode}) before it was ready"
            if ok != _WORKING:
                break
            print(f"demo: camera: {value}", file=sys.stderr, flush=True)  # a person waits: say why
            wait = working_timeout
        if not ok:
            self._proc.join(5)
            raise CameraUnavailable(str(value))
        self.pid = self._proc.pid
        return self

    def stop(self) -> None:
        if self._proc.is_alive():
            try:
                self._remote.call("stop")
            except (RuntimeError, OSError, EOFError) as exc:
                log.warning("stopping the camera process: %s", exc)
            self._proc.join(10)
        if self._proc.is_alive():
            self._proc.terminate()
            self._proc.join(5)

    def view(self) -> dict[int, dict[str, object]]:
        return dict(self._remote.call("view"))

    def stats(self) -> dict[str, Any]:
        return dict(self._remote.call("stats"))

    @property
    def stalled(self) -> bool:
        return bool(self._remote.call("stalled"))


def _camera_main(conn: Any, login: dict[str, Any], table: str, seats: int, seed: int, cache: str, fps: float,
                 stable_frames: int, stall_timeout: float, log_level: int, group_nice: int = 0) -> None:
    """The camera process: build the service, say ready (or why not), then serve the dealer's calls."""

    from types import SimpleNamespace

    from engine.procs import die_with_parent

    die_with_parent()  # the demo killed or aborted: this process goes too
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C reaches the whole group: the demo stops us
    logging.basicConfig(level=log_level, format="%(asctime)s %(name)s %(levelname)s %(message)s")
    # The camera is a second opinion next to the shoe; the shoe -> engine -> console path is what the
    # dealer waits on.  On a shared machine the vision service yields the CPU to it (a real table runs
    # it with Nice=10 in its systemd unit, or on its own core; docs/deploy.md), in a session of its own:
    # in the demo's session its CPU was charged to the table's share (the kernel's autogroups), and
    # the shoe card's median doubled whatever its nice value (docs/vision.md, session 11).  Its group
    # keeps nice 0 in the demo: at 10, beside other people's work on a two-core box, it read 1-2
    # frames a second and the card was no faster.  The table bench gives it the service's own 10
    # (``group_nice``) when it runs the table as a real one runs (``--processes``).
    lower_priority(10, own_group=True, group_niceness=group_nice)

    broker = SimpleNamespace(host=login["host"], port=login["port"],
                             login=lambda role, device=None: (login["user"], login["password"]))
    try:
        service = CameraService(broker, table, seats, seed=seed, cache=Path(cache), fps=fps,
                                stable_frames=stable_frames, stall_timeout=stall_timeout,
                                progress=lambda what: conn.send((_WORKING, what))).start()
    except Exception as exc:  # tell the parent why, in words
        conn.send((False, f"{type(exc).__name__}: {exc}"))
        return
    conn.send((True, None))
    felt, capture = service.table_camera, service.capture
    handlers: dict[str, Any] = {
        "felt.deal": felt.deal, "felt.pitch_off_felt": felt.pitch_off_felt, "felt.move": felt.move,
        "felt.muck": felt.muck, "felt.clear": felt.clear, "felt.truth": felt.truth,
        "felt.deal_common": felt.deal_common, "felt.common": felt.common, "felt.turn_up": felt.turn_up,
        "capture.stall": capture.stall, "capture.resume": capture.resume,
        "stalled": lambda: capture.stalled, "view": service.view,
        "stats": lambda: {"frames": service.frames, "fps": service.fps, "offline_events": service.offline_events,
                          "detect_s": list(service.detect_s)},
    }
    try:
        while True:
            try:
                name, args, kwargs = conn.recv()
            except EOFError:
                break  # the parent is gone
            if name == "stop":
                conn.send((True, None))
                break
            try:
                conn.send((True, handlers[name](*args, **kwargs)))
            except Exception as exc:
                conn.send((False, f"{type(exc).__name__}: {exc}"))
    finally:
        service.stop()
