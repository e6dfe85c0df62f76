"""The demo table's camera: a simulated overhead camera and the real vision pipeline reading it.

Two parts, kept apart as at a real table:

* ``SimulatedCapture`` is the camera.  It photographs a ``vision.camera_sim.TableCamera``
  (the felt as the simulated dealer lays it) at a steady frame rate and hands out
  the latest frame, as ``cv2.VideoCapture.read`` does.  It can *stall*: a frozen USB
  camera or a dead stream delivers no frames at all, and ``read`` then waits in vain.
* ``CameraService`` is the vision service as ``studtable vision run`` runs it: the
  deck enrolled from its flat faces, the calibration found from the printed
  markers in a frame, ``Detector`` + ``Tracker`` in a ``VisionCore``, and a bus
  client with the vision role.  Its frame watchdog turns a camera that stopped
  delivering frames into availability ``offline`` (the engine opens a
  ``source.offline`` prompt) and back to ``online`` when frames return.

Only the capture is a fake; everything from the frame on is the production code.
"""

from __future__ import annotations

import contextlib
import logging
import os
import threading
import time
from collections import deque
from pathlib import Path
from typing import Any

import numpy as np

from engine import wire
from engine.bus import BusClient
from engine.wire import Role

log = logging.getLogger("studtable.demo.camera")

CAMERA_DEVICE = "cam-1"
DECK_ART = "anglo"


class CameraUnavailable(RuntimeError):
    """The camera cannot run here (no card art installed); the message says what to install."""


class SimulatedCapture:
    """Frames of the simulated table at ``fps``; ``stall()`` stops them, ``resume()`` restarts them."""

    def __init__(self, camera: Any, fps: float = 12.0) -> None:
        self.camera = camera
        self.interval = 1.0 / fps
        self._cond = threading.Condition()
        self._frame: np.ndarray | None = None
        self._taken_at = 0.0
        self._count = 0
        self._stalled = threading.Event()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="camera-sim", daemon=True)

    def start(self) -> SimulatedCapture:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        with self._cond:
            self._cond.notify_all()
        self._thread.join(2)

    def stall(self) -> None:
        self._stalled.set()

    def resume(self) -> None:
        self._stalled.clear()

    @property
    def stalled(self) -> bool:
        return self._stalled.is_set()

    def _run(self) -> None:
        while not self._stop.is_set():
            t0 = time.monotonic()
            if not self._stalled.is_set():
                frame = self.camera.frame()
                with self._cond:
                    self._frame, self._taken_at = frame, time.monotonic()
                    self._count += 1
                    self._cond.notify_all()
            self._stop.wait(max(0.0, self.interval - (time.monotonic() - t0)))

    def read(self, timeout: float) -> tuple[np.ndarray, float] | None:
        """The next frame not read before, with when it was taken; None if none came within ``timeout``."""
        deadline = time.monotonic() + timeout
        with self._cond:
            seen = self._count
            while self._count == seen or self._frame is None:
                left = deadline - time.monotonic()
                if left <= 0 or self._stop.is_set():
                    return None
                self._cond.wait(left)
            assert self._frame is not None
            return self._frame, self._taken_at


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


def _deck_model(cache: Path) -> tuple[Any, Any]:
    """The demo deck's faces (Aisleriot art) and its enrollment, cached next to the face images."""
    from vision.deck import EnrollmentError, enroll, load, read_face_dir, save
    from vision.deckart import AISLERIOT_DIR, DeckArtError, face_dir
    from vision.scene import FaceSet

    check_card_art(AISLERIOT_DIR)
    try:
        d = face_dir(DECK_ART)
    except DeckArtError as exc:
        raise CameraUnavailable(f"{exc} (or run with --no-camera)") from exc
    faces = FaceSet.load(d)
    path = cache / f"{DECK_ART}.deck.npz"
    try:
        return faces, load(path)
    except (OSError, EnrollmentError, ValueError):
        pass
    face_images, back = read_face_dir(d)
    model = enroll(face_images, back, DECK_ART)
    try:
        cache.mkdir(parents=True, exist_ok=True)
        save(model, path)
    except OSError as exc:  # only a cache
        log.warning("could not cache the enrolled deck at %s: %s", path, exc)
    return faces, model


class CameraService:
    """The simulated camera plus the production vision pipeline, publishing on the table's bus."""

    def __init__(self, broker: Any, table: str, seats: int, *, seed: int, cache: Path,
                 fps: float = 12.0, stable_frames: int = 3, stall_timeout: float = 1.0) -> None:
        import cv2

        from vision.calibration import calibrate
        from vision.camera_sim import TableCamera
        from vision.detect import Detector
        from vision.service import VisionCore
        from vision.tracking import Tracker

        cv2.setNumThreads(1)  # one core, as the vision service is specified
        faces, model = _deck_model(cache)
        self.table_camera = TableCamera(faces, seats, seed=seed)
        self.capture = SimulatedCapture(self.table_camera, fps)
        self.calibration = calibrate(self.table_camera.frame(), self.table_camera.layout)
        self.stall_timeout = stall_timeout
        user, password = broker.login(Role.VISION)
        self.bus = BusClient(host=broker.host, port=broker.port, username=user, password=password, table=table,
                             device=CAMERA_DEVICE, role=Role.VISION, session=time.time_ns() // 1_000_000,
                             version="1", capabilities=["up_cards", "down_count", "off_felt", "half_turned"])
        self.core = VisionCore(Detector(model, self.calibration, reuse=True),
                               Tracker(self.calibration.layout, stable_frames), self._publish, table,
                               CAMERA_DEVICE, 1)
        self.online = False
        self.frames = 0
        self.offline_events = 0
        self.detect_s: deque[float] = deque(maxlen=5000)  # CPU seconds per frame, the latest (a GUI runs for hours)
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="vision-service", daemon=True)

    def _publish(self, msg: wire.Message) -> None:
        if msg.channel is wire.Channel.AVAIL:
            self.bus.set_available(msg.kind == wire.AVAILABILITY_ONLINE)
        else:
            self.bus.publish(msg.channel, msg.kind, **msg.body)

    def start(self) -> CameraService:
        self.bus.start(wait=10.0)
        self.capture.start()
        self.online = True
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        self.capture.stop()
        self._thread.join(5)
        try:
            self.core.stop()
        finally:
            self.bus.stop(1.0)

    def _run(self) -> None:
        while not self._stop.is_set():
            got = self.capture.read(self.stall_timeout)
            if got is None:
                if self._stop.is_set():
                    break
                if self.online:
                    # The frame watchdog: a camera that delivers nothing is offline, not a quiet table.
                    log.warning("camera %s: no frame for %.1f s; offline", CAMERA_DEVICE, self.stall_timeout)
                    self.online = False
                    self.offline_events += 1
                    self.core.set_online(False)
                continue
            if not self.online:
                self.online = True
                self.core.set_online(True)
            frame, taken = got
            t0 = time.process_time()
            with self._lock:
                self.core.on_frame(frame, taken)
                self.frames += 1
            self.detect_s.append(time.process_time() - t0)

    def view(self) -> dict[int, dict[str, object]]:
        """The tracker's stable view: seat -> up cards in order and down count (seats with cards only)."""
        with self._lock:
            last = self.core.last
        if last is None:
            return {}
        return {n: {"up": list(up), "down": down} for n, (up, down) in last.seats.items() if up or down}

    @property
    def fps(self) -> float:
        with self._lock:
            return self.core.last.fps if self.core.last else 0.0


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
    muck, clear, truth) changes the felt the child photographs, ``capture`` (stall, resume)
    is the camera's fault switch, and ``view``/``frames``/``fps`` read the service's state.
    """

    def __init__(self, broker: Any, table: str, seats: int, *, seed: int, cache: Path, fps: float = 12.0,
                 stable_frames: int = 3, stall_timeout: float = 1.0) -> None:
        import multiprocessing

        ctx = multiprocessing.get_context("spawn")  # no fork of a process with threads
        parent, child = ctx.Pipe()
        user, password = broker.login(Role.VISION)
        login = {"host": broker.host, "port": broker.port, "user": user, "password": password}
        self._proc = ctx.Process(target=_camera_main, name="studtable-camera", daemon=True,
                                 args=(child, login, table, seats, seed, str(cache), fps, stable_frames,
                                       stall_timeout, logging.getLogger().getEffectiveLevel()))
        self._remote = _Remote(parent)
        self.table_camera = _Proxy(self._remote, "felt.", ("deal", "pitch_off_felt", "move", "muck", "clear",
                                                           "truth"))
        self.capture = _Proxy(self._remote, "capture.", ("stall", "resume"))

    def start(self, timeout: float = 60.0) -> CameraProcess:
        from vision.deckart import AISLERIOT_DIR

        check_card_art(AISLERIOT_DIR)  # say so here, before a process is started for nothing
        self._proc.start()
        conn = self._remote._conn
        if not conn.poll(timeout):
            self._proc.terminate()
            raise CameraUnavailable(f"the camera process did not start within {timeout:.0f} s")
        try:
            ok, value = conn.recv()
        except EOFError:
            ok, value = False, f"the camera process exited (status {self._proc.exitcode}) before it was ready"
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
                 stable_frames: int, stall_timeout: float, log_level: int) -> None:
    """The camera process: build the service, say ready (or why not), then serve the dealer's calls."""

    from types import SimpleNamespace

    logging.basicConfig(level=log_level, format="%(asctime)s %(name)s %(levelname)s %(message)s")
    # The camera is a second opinion next to the shoe; the shoe -> engine -> console path is what the
    # dealer waits on.  On a shared machine the vision service yields the CPU to it (a real table runs
    # it with Nice=10 in its systemd unit, or on its own core; docs/deploy.md).
    with contextlib.suppress(OSError):
        os.nice(10)

    broker = SimpleNamespace(host=login["host"], port=login["port"],
                             login=lambda role: (login["user"], login["password"]))
    try:
        service = CameraService(broker, table, seats, seed=seed, cache=Path(cache), fps=fps,
                                stable_frames=stable_frames, stall_timeout=stall_timeout).start()
    except Exception as exc:  # tell the parent why, in words
        conn.send((False, f"{type(exc).__name__}: {exc}"))
        return
    conn.send((True, None))
    felt, capture = service.table_camera, service.capture
    handlers: dict[str, Any] = {
        "felt.deal": felt.deal, "felt.pitch_off_felt": felt.pitch_off_felt, "felt.move": felt.move,
        "felt.muck": felt.muck, "felt.clear": felt.clear, "felt.truth": felt.truth,
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
