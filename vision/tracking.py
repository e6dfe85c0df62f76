"""Tracking: frames of detections in, debounced observations out (pure).

Theory of operation
-------------------
The camera sees every frame afresh; the engine wants to hear about the felt
only when something really changed.  For each seat the tracker keeps a
*stable* view (up cards in dealing order, number of down cards) and a
*candidate*: the latest raw view that differs from the stable one, with a
count of consecutive frames in which it was seen.  A candidate seen for
``stable_frames`` frames in a row becomes the stable view and the seat is
reported as changed.  Anything shorter is flicker and is forgotten, so a hand
that passes over the cards (hiding some, merging others into one odd blob for
a few frames) changes nothing.  While a big non-card blob (a hand, an arm)
covers a seat zone the seat's candidate is frozen outright, so even a slow hand
does not count.  A frame the camera's shake smeared (the detector judges it, see
``Detector.shaken``) is held the same way for the whole table: a shaken corner misreads
a six as an eight, and a bump on the table lasts a fraction of a second; only a camera
that keeps shaking for ``shake_frames`` frames running is read through its blur.
A hand the detector cannot tell from the felt (a dark hand on a burgundy felt has the felt's
hue and is darker, as its shadow is; a brown hand joined to a row on green felt can leave the
row's visible part looking like backs) is no occluder, and the cards under it are not seen or
are seen wrong: so a seat whose view loses any of its stable cards (fewer cards, or an up card
no longer among its up cards) is believed only once it has shown such a view for ``vanish_s``
seconds running.  Nothing at a stud table is in a hurry to leave: cards come to a seat one at
a time, an up card stays up, and cards go only when the hand is folded or over (or a player
lifts his hole cards a moment to look); a late fold or a cleared felt costs the engine nothing
(the shoe and the console say who folded; the camera checks what lies there), and a misread
up card the camera corrects is corrected ``vanish_s`` later.
Irregular things (a card off the felt, a card half turned)
are debounced the same way, as one set for the table.

The tracker never reads a clock: the edge passes each frame's timestamp, from
which it reports the frame rate it sustains.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

import cv2
import numpy as np

from vision.detect import Detection
from vision.layout import TableLayout

SeatView = tuple[tuple[str, ...], int]  # (up cards in order, number of down cards)
Irregular = tuple[str, int | None, str | None]  # (kind, seat, card)


@dataclass
class Observation:
    """What the tracker says after a frame (the bus payload is :meth:`to_body`)."""

    frame: int
    seats: dict[int, SeatView]
    changed: list[int]
    irregular: list[Irregular]
    fps: float
    irregular_changed: bool = False

    def to_body(self) -> dict[str, Any]:
        return {
            "frame": self.frame,
            "seats": {str(n): {"up": list(up), "down": down} for n, (up, down) in sorted(self.seats.items())},
            "changed": list(self.changed),
            "irregular": [{"kind": k, "seat": s, "card": c} for k, s, c in self.irregular],
            "fps": round(self.fps, 2),
        }

    def to_payload(self) -> dict[str, Any]:
        """The observation as the issue writes it, with its ``kind``."""
        return {"kind": "observation", **self.to_body()}


def raw_view(layout: TableLayout, detections: Iterable[Detection]) -> tuple[dict[int, SeatView], list[Irregular]]:
    """One frame's view of the table: per seat up cards (dealing order) and down count; irregular things."""
    per_seat: dict[int, list[Detection]] = {}
    irregular: list[Irregular] = []
    for d in detections:
        p = d.table_center
        seat = layout.seat_at(p)
        if d.half_turned:
            irregular.append(("half_turned", seat, None))
            continue
        if not layout.on_felt(p):
            irregular.append(("off_felt", seat, d.card if d.face_up else None))
            continue
        if seat is None:  # on the felt but in no seat's zone (the dealer's area, the middle): not a hand's card
            if d.face_up and layout.in_common_spot(p):
                # The common card (RRoP stud 15) plays for every hand: the engine takes it, on a
                # table without a shoe, when its ruling calls for one (engine/floor/camera.py).
                irregular.append(("common", None, d.card))
            continue
        per_seat.setdefault(seat, []).append(d)
    seats: dict[int, SeatView] = {}
    for n, dets in per_seat.items():
        right = np.array(layout.seats[n].right)
        ups = [d for d in dets if d.face_up]
        # Rows are spread to the player's right: order blobs by where they lie, cards in a blob by dealing order.
        blob_pos: dict[int, float] = {}
        for d in ups:
            x = float(np.dot(np.array(d.table_center), right))
            blob_pos[d.blob] = min(blob_pos.get(d.blob, x), x)
        ups.sort(key=lambda d: (blob_pos[d.blob], d.order))
        seats[n] = (tuple(d.card or "??" for d in ups), sum(1 for d in dets if not d.face_up))
    return seats, sorted(irregular, key=lambda i: (i[0], i[1] or 0, i[2] or ""))


@dataclass
class _SeatState:
    stable: SeatView = ((), 0)
    candidate: SeatView | None = None
    count: int = 0
    fewer_since: float | None = None  # the first frame of the run of views that lost some of ``stable``'s cards


def _keeps(stable: SeatView, view: SeatView) -> bool:
    """Whether ``view`` still shows every card of ``stable``: as many cards or more, and each up card read
    in ``stable`` among its up cards.  A down card may turn up (the showdown), an up card never goes down."""
    ups = Counter(view[0])
    return len(view[0]) + view[1] >= len(stable[0]) + stable[1] and all(
        ups[c] >= k for c, k in Counter(stable[0]).items() if c != "??")


@dataclass
class Tracker:
    """Debounces raw per-frame views into stable observations.

    ``stable_frames``: how many consecutive frames a new view must hold before it
    is believed (at 30 fps, 5 frames is a sixth of a second).  ``shake_frames``: how many
    shaken frames running are held (at 12 fps, 24 frames are two seconds); past them a
    camera that keeps shaking is read as it is (its view then waits for nothing else).
    ``vanish_s``: how long (by the frames' timestamps) a seat must show a view that lost some of
    its stable cards before the loss is believed (a hand the detector took for felt lying over them).
    """

    layout: TableLayout
    stable_frames: int = 5
    shake_frames: int = 24
    vanish_s: float = 2.0
    _seats: dict[int, _SeatState] = field(default_factory=dict)
    _irr_stable: list[Irregular] = field(default_factory=list)
    _irr_candidate: list[Irregular] | None = None
    _irr_count: int = 0
    _last_t: float | None = None
    _fps: float = 0.0
    _shaken_run: int = 0

    def __post_init__(self) -> None:
        if self.stable_frames < 1:
            raise ValueError(f"stable_frames must be at least 1, got {self.stable_frames}")
        if self.shake_frames < 0:
            raise ValueError(f"shake_frames must be 0 or more, got {self.shake_frames}")
        if not self.vanish_s >= 0:
            raise ValueError(f"vanish_s must be 0 or more seconds, got {self.vanish_s}")
        self._seats = {n: _SeatState() for n in self.layout.seats}

    def occluded_seats(self, occluders: Iterable[np.ndarray]) -> set[int]:
        """Seats whose zone a big non-card blob overlaps."""
        out: set[int] = set()
        for poly in occluders:
            pts = np.asarray(poly, np.float32).reshape(-1, 1, 2)
            for n, seat in self.layout.seats.items():
                zone = np.asarray(seat.zone, np.float32).reshape(-1, 1, 2)
                if any(cv2.pointPolygonTest(zone, (float(x), float(y)), False) >= 0 for x, y in pts.reshape(-1, 2)[::4]) or any(
                    cv2.pointPolygonTest(pts, (float(x), float(y)), False) >= 0 for x, y in zone.reshape(-1, 2)
                ):
                    out.add(n)
        return out

    def update(
        self, frame: int, detections: Iterable[Detection], timestamp: float, occluders: Iterable[np.ndarray] = (),
        shaken: bool = False,
    ) -> Observation:
        """Feed one frame; get the stable view, with the seats that changed on this frame.
        ``shaken``: the detector judged the frame smeared by the camera's shake."""
        if self._last_t is not None and timestamp > self._last_t:
            inst = 1.0 / (timestamp - self._last_t)
            self._fps = inst if self._fps == 0 else 0.9 * self._fps + 0.1 * inst
        self._last_t = timestamp
        seats, irregular = raw_view(self.layout, detections)
        hidden = self.occluded_seats(occluders)
        self._shaken_run = self._shaken_run + 1 if shaken else 0
        if 0 < self._shaken_run <= self.shake_frames:
            hidden = set(self._seats)  # the camera shook: hold the whole table as it was
        changed: list[int] = []
        for n, st in self._seats.items():
            if n in hidden:
                continue  # a hand is over this seat: hold everything as it was
            view = seats.get(n, ((), 0))
            if view == st.stable:
                st.candidate, st.count, st.fewer_since = None, 0, None
                continue
            if view == st.candidate:
                st.count += 1
            else:
                st.candidate, st.count = view, 1
            if _keeps(st.stable, view):
                st.fewer_since = None
            elif st.fewer_since is None or timestamp < st.fewer_since:  # (a clock set back starts the run again)
                st.fewer_since = timestamp
            if st.fewer_since is not None and timestamp - st.fewer_since < self.vanish_s:
                continue  # cards gone from view, not long enough: a hand the felt's colour may lie over them
            if st.count >= self.stable_frames:
                st.stable, st.candidate, st.count, st.fewer_since = view, None, 0, None
                changed.append(n)
        irr_changed = False
        if not hidden:
            if irregular == self._irr_stable:
                self._irr_candidate, self._irr_count = None, 0
            else:
                if irregular == self._irr_candidate:
                    self._irr_count += 1
                else:
                    self._irr_candidate, self._irr_count = irregular, 1
                if self._irr_count >= self.stable_frames:
                    self._irr_stable, self._irr_candidate, self._irr_count = irregular, None, 0
                    irr_changed = True
        stable = {n: st.stable for n, st in self._seats.items() if st.stable != ((), 0)}
        return Observation(frame, stable, sorted(changed), list(self._irr_stable), self._fps, irr_changed)
