"""The vision service: camera frames in, observations on the bus out.

Two layers, as everywhere in studtable:

* :class:`VisionCore` is pure: it is handed frames with their timestamps and
  hands finished wire messages (``engine.wire.Message``) to a ``publish``
  callback: availability, and an observation whenever a seat
  changed, the irregular set changed, or ``heartbeat_frames`` frames passed
  (so a late subscriber and the engine's health view always have a recent
  picture).  It numbers every message it sends (``seq``) within its ``session``
  (the restart counter), as the wire contract requires.
* :func:`run_capture` is the edge: it owns ``cv2.VideoCapture`` (a camera index,
  a video file, or a stream URL), reopens a camera or stream that drops out
  (publishing ``offline`` while it is gone) and reads the clock.

The MQTT client is not here: ``publish`` is whatever the caller passes.  The
``studtable vision run`` command prints each message as a JSON line until the
bus client (``engine/bus.py``) is committed; hooking it up is one callback.
The Last Will (``offline`` on the availability topic) belongs to that client's
connection.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field

import cv2
import numpy as np

from engine import wire
from vision.detect import Detector
from vision.tracking import Observation, Tracker

log = logging.getLogger(__name__)

Publish = Callable[[wire.Message], None]
VERSION = "1"
CAPABILITIES = ("up_cards", "down_count", "off_felt", "half_turned")


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

    def on_frame(self, image: np.ndarray, timestamp: float) -> Observation:
        """Detect, track, and publish if there is news (or a heartbeat is due)."""
        self.frames += 1
        detections = self.detector.detect(image)
        obs = self.tracker.update(self.frames, detections, timestamp, self.detector.occluders)
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


def run_capture(
    source: str, core: VisionCore, *, max_frames: int | None = None, reconnect_s: float = 2.0,
    clock: Callable[[], float] = time.monotonic,
) -> int:
    """Read frames until the file ends, ``max_frames`` are done, or Ctrl-C; returns frames processed."""
    is_file = not source.isdigit() and "://" not in source
    cap = open_capture(source)
    core.start()
    done = 0
    try:
        while max_frames is None or done < max_frames:
            ok, frame = cap.read()
            if not ok:
                if is_file:
                    break
                log.warning("video source %s stopped; reopening in %.0f s", source, reconnect_s)
                core.set_online(False)
                cap.release()
                while True:
                    time.sleep(reconnect_s)
                    try:
                        cap = open_capture(source)
                        break
                    except OSError as exc:
                        log.warning("%s", exc)
                core.set_online(True)
                continue
            core.on_frame(frame, clock())
            done += 1
    except KeyboardInterrupt:
        pass
    finally:
        cap.release()
        core.stop()
    return done
