"""Live enrollment: the dealer shows each card to the camera once, in the order asked.

Why: a cardroom changes decks (designs) more often than it re-mounts cameras;
photographing 52 faces flat is a chore, laying each card on the felt under the
calibrated camera is not.  The camera already knows the table plane, so a card
lying flat can be cut out and flattened exactly, and the flattened faces go
through the same :func:`vision.deck.enroll` as a directory of scans.

:class:`LiveEnroller` is the pure core (frames in, progress out): it asks for
the cards in the engine's deck order and then the back; it takes a card when
exactly one card-sized blob has lain still for ``still_frames`` frames, then
waits for the felt to be clear before asking for the next (so one card is never
taken twice).  Which way up the card lies does not matter: the deck model
learns both of a card's corners.  :func:`enroll_from_camera` is the edge that
runs it on a camera and prints the progress; the dealer console can drive the
same core and draw its own progress bar.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import cv2
import numpy as np

from vision.calibration import Calibration
from vision.deck import CODES
from vision.detect import FeltSegmenter

FACE_W = 240  # px of a flattened face


@dataclass
class Progress:
    taken: int  # cards taken so far (the back counts as the 53rd)
    total: int
    asking: str | None  # card code (or "back") wanted next; None when done
    message: str


@dataclass
class LiveEnroller:
    calib: Calibration
    still_frames: int = 5
    with_back: bool = True
    faces: dict[str, np.ndarray] = field(default_factory=dict)
    back: np.ndarray | None = None
    _wanted: list[str] = field(default_factory=list)
    _last_center: np.ndarray | None = None
    _still: int = 0
    _need_clear: bool = False

    def __post_init__(self) -> None:
        self._seg = FeltSegmenter(self.calib)
        self._wanted = [*CODES, *(["back"] if self.with_back else [])]
        self._w = self.calib.layout.card_width_mm

    @property
    def done(self) -> bool:
        return not self._wanted

    def progress(self, message: str = "") -> Progress:
        total = len(CODES) + int(self.with_back)
        asking = self._wanted[0] if self._wanted else None
        if not message:
            message = f"show the {asking}" if asking else "all cards taken"
        return Progress(total - len(self._wanted), total, asking, message)

    def feed(self, frame: np.ndarray) -> Progress:
        """One camera frame; returns what to tell the dealer."""
        if self.done:
            return self.progress()
        cards = []
        for tab in self._seg.blobs(frame):
            area = cv2.contourArea(tab)
            (cx, cy), (rw, rh), ang = cv2.minAreaRect(tab)
            short, long_ = min(rw, rh), max(rw, rh)
            if abs(short - self._w) < 0.15 * self._w and 1.2 < long_ / short < 1.9 and area > 0.85 * rw * rh:
                cards.append(((cx, cy), (rw, rh), ang))
        if self._need_clear:
            if not cards:
                self._need_clear = False
                return self.progress()
            return self.progress(f"take the {self._taken_last} away")
        if len(cards) != 1:
            self._still, self._last_center = 0, None
            return self.progress("" if not cards else "one card at a time, please")
        rect = cards[0]
        c = np.array(rect[0])
        if self._last_center is not None and np.linalg.norm(c - self._last_center) < 2.0:
            self._still += 1
        else:
            self._still = 1
        self._last_center = c
        if self._still < self.still_frames:
            return self.progress(f"hold the {self._wanted[0]} still")
        face = self._flatten(frame, rect)
        code = self._wanted.pop(0)
        if code == "back":
            self.back = face
        else:
            self.faces[code] = face
        self._taken_last = code
        self._need_clear, self._still, self._last_center = True, 0, None
        return self.progress(f"took the {code}; take it away")

    _taken_last: str = ""

    def _flatten(self, frame: np.ndarray, rect: tuple[tuple[float, float], tuple[float, float], float]) -> np.ndarray:
        """Cut the card out of the frame through the table homography, upright (portrait)."""
        box = cv2.boxPoints(rect).astype(np.float64)  # table mm
        # Order the corners so that the long side is vertical: TL, TR, BR, BL.
        d01 = np.linalg.norm(box[1] - box[0])
        d12 = np.linalg.norm(box[2] - box[1])
        if d01 > d12:
            box = np.roll(box, 1, axis=0)
        w = np.linalg.norm(box[1] - box[0])
        h = np.linalg.norm(box[2] - box[1])
        out_w, out_h = FACE_W, round(FACE_W * h / w)
        img_pts = self.calib.to_image(box).astype(np.float32)
        dst = np.array([[0, 0], [out_w, 0], [out_w, out_h], [0, out_h]], np.float32)
        m = cv2.getPerspectiveTransform(img_pts, dst)
        return cv2.warpPerspective(frame, m, (out_w, out_h), flags=cv2.INTER_AREA)


def enroll_from_camera(source: str, calibration: Path) -> tuple[dict[str, np.ndarray], np.ndarray | None]:
    """Edge: run :class:`LiveEnroller` on a camera, printing progress; returns faces and back."""
    import json

    from vision.service import open_capture

    calib = Calibration.from_dict(json.loads(calibration.read_text()))
    cap = open_capture(source)
    enr = LiveEnroller(calib)
    last = ""
    try:
        while not enr.done:
            ok, frame = cap.read()
            if not ok:
                raise OSError(f"video source {source!r} stopped after {enr.progress().taken} cards")
            p = enr.feed(frame)
            line = f"[{p.taken:2d}/{p.total}] {'#' * p.taken}{'.' * (p.total - p.taken)} {p.message}"
            if line != last:
                print(line, flush=True)
                last = line
    finally:
        cap.release()
    return enr.faces, enr.back
