"""The vision service's edge with a camera that freezes: ``cv2.VideoCapture.read`` simply blocks,
so the service must notice by itself that no frame came, say ``offline`` (the engine prompts the
dealer), and say ``online`` again when frames return.  The camera here is a stand-in that behaves
as a frozen USB camera does (its read() hangs); the frames are the demo camera's pictures and the
detector, tracker and core are the production ones."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

from engine import wire
from tests.vision.decks import enrolled
from vision.calibration import calibrate
from vision.camera_sim import TableCamera
from vision.detect import Detector
from vision.scene import FaceSet
from vision.service import VisionCore, run_capture
from vision.tracking import Tracker


class FreezingCamera:
    """read() delivers ~30 frames/s; with ``freeze_after`` N, the read after the N-th frame hangs for
    ``freeze_s`` (``froze``: when it began and ended), as a frozen USB camera's does."""

    def __init__(self, camera: TableCamera, freeze_after: int | None = None, freeze_s: float = 2.5) -> None:
        self.camera = camera
        self.running = threading.Event()
        self.running.set()
        self.released = False
        self.reads = 0
        self.delivered: list[float] = []  # when each frame was handed over (time.monotonic)
        self.freeze_after, self.freeze_s = freeze_after, freeze_s
        self.froze: list[float] = []

    def _thaw(self) -> None:
        self.froze.append(time.monotonic())
        self.running.set()

    def read(self) -> tuple[bool, np.ndarray | None]:
        if self.reads == self.freeze_after and not self.froze:
            self.froze.append(time.monotonic())
            self.running.clear()
            threading.Timer(self.freeze_s, self._thaw).start()
        while not self.running.wait(0.05):
            if self.released:
                return False, None
        time.sleep(1 / 30)
        self.reads += 1
        frame = self.camera.frame()
        self.delivered.append(time.monotonic())
        return True, frame

    def release(self) -> None:
        self.released = True


@pytest.fixture(scope="module")
def table(faces_dir: Callable[[str], Path]) -> tuple[TableCamera, Detector]:
    d = faces_dir("anglo")
    camera = TableCamera(FaceSet.load(d), 2, seed=5)
    camera.deal(1, "Ah", True)
    camera.deal(2, "Kd", False)
    return camera, Detector(enrolled(d), calibrate(camera.frame(), camera.layout), reuse=True)


def test_a_frozen_camera_goes_offline_and_comes_back(table: tuple[TableCamera, Detector]) -> None:
    camera, detector = table
    sent: list[tuple[float, wire.Message]] = []
    core = VisionCore(detector, Tracker(camera.layout, 2),
                      lambda m: sent.append((time.monotonic(), m)), "t1", "cam-1", session=1)
    # Frozen after the first frames (not after a fixed time: a loaded machine reads them slowly),
    # well past the watchdog's limit, 1 s, which is well above a frame's time at load 10 (0.4 s
    # once took an ordinary slow frame for a freeze).
    cam = FreezingCamera(camera, freeze_after=5, freeze_s=5.0)
    done = run_capture("0", core, max_frames=40, stall_s=1.0, opener=lambda source: cam)
    assert done == 40
    avail = [(t, m.kind) for t, m in sent if m.channel is wire.Channel.AVAIL]
    assert [k for _, k in avail] == ["online", "offline", "online", "offline"], avail
    # Offline no sooner than the watchdog's 1 s after the last frame before the freeze (the loop
    # waits that long from its ask, which comes after that frame), and before it thawed; online
    # once it thawed.
    _, thawed_at = cam.froze
    last_frame = max(t for t in cam.delivered if t < thawed_at)
    assert last_frame + 0.95 <= avail[1][0] < thawed_at, (avail, last_frame, cam.froze)
    assert avail[2][0] >= thawed_at
    assert cam.released  # the capture was let go at the end
    obs = [m for _, m in sent if m.channel is wire.Channel.VISION]
    assert obs and obs[-1].body["seats"] == {"1": {"up": ["Ah"], "down": 0}, "2": {"up": [], "down": 1}}


def test_a_video_file_is_read_to_its_end_without_dropping_frames(table: tuple[TableCamera, Detector],
                                                                 tmp_path: Path) -> None:
    camera, detector = table
    cam = FreezingCamera(camera)
    frames_left = [12]

    def read() -> tuple[bool, np.ndarray | None]:
        if frames_left[0] == 0:
            return False, None
        frames_left[0] -= 1
        return True, camera.frame()

    cam.read = read  # type: ignore[method-assign]
    core = VisionCore(detector, Tracker(camera.layout, 2), lambda m: None, "t1", "cam-1", session=1)
    assert run_capture(str(tmp_path / "table.avi"), core, opener=lambda source: cam) == 12
