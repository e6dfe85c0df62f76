"""A simulated overhead camera over a table whose cards are placed by the caller.

Why: the demo and the end-to-end tests need the camera's whole path (frames ->
detection -> tracking -> observations on the bus -> the engine's floor) to see
the table *as dealt*, card by card, including the dealer's mistakes (a hole
card turned up, a card pitched off the felt) and the camera's own faults (it
stops delivering frames).  ``vision.scene.render_scene`` draws a random table
from a seed; this draws a given one and keeps drawing it as it changes.

It behaves like a fixed camera: one pose for the whole session (tilted a few
degrees, as a ceiling mount is), a static light falloff, and fresh sensor noise
in every frame (so nothing downstream can be fooled by identical pixels).  The
card art is a real Aisleriot deck (Debian's gnome-cards-data) and the layout is
the printed one the project ships, with its ArUco markers, so the vision
service calibrates from a frame exactly as at a real table.

Cards are laid as a dealer lays them: down cards side by side nearer the
player, the up cards in a stud row towards the centre, each new one on top and
shifted right so every covered index stays visible.  A card dealt face up where
a down card belongs stays where it fell (face up among the down cards) until
the dealer moves it.  Rendering is incremental (a new card is pasted on top of
the last picture); only taking cards away repaints the table.
"""

from __future__ import annotations

import math
import threading
from dataclasses import dataclass, field

import cv2
import numpy as np

from vision.layout import TableLayout, default_layout
from vision.scene import (
    FELTS,
    FaceSet,
    _card_corners,
    _paste,
    _project,
    _shadow,
    camera_homography,
    felt_for,
    paint_table,
)

ROW_STEP = 0.45  # how far each new up card is shifted along the stud row, in card widths
DOWN_GAP_MM = 10.0


@dataclass
class PlacedCard:
    code: str
    face_up: bool
    spot: str  # "down" (the player's down-card place), "up" (the stud row), "off_felt" or "common"
    index: int  # position within its spot


@dataclass
class _SeatCards:
    down: list[PlacedCard] = field(default_factory=list)
    up: list[PlacedCard] = field(default_factory=list)


class TableCamera:
    """The felt as a camera sees it; ``deal``/``muck``/``clear`` change it, ``frame`` photographs it.

    Thread-safe: the dealer changes the table on one thread while the camera
    thread takes frames.
    """

    def __init__(self, faces: FaceSet, seats: int, *, seed: int = 1, size: tuple[int, int] = (1920, 1080),
                 tilt_deg: float = 8.0, noise_sigma: float = 2.5) -> None:
        self.faces = faces
        self.layout: TableLayout = default_layout(seats)
        self.size = size
        rng = np.random.default_rng(seed)
        target = self.layout.table_polygon(48)  # the whole table: a card on the rail is in view too
        self.table_to_image = camera_homography(rng, target, size, tilt_deg, float(rng.uniform(-3, 3)))
        self.card_w = self.layout.card_width_mm
        self.card_h = self.card_w * faces.aspect
        self._base = self._paint_background(rng)  # unlit; cards are pasted unlit, then lit region by region
        self._gain = self._light(rng)
        self._canvas = self._base.copy()
        # Sensor noise: a small bank of fields, drawn in a different order each frame.
        w, h = size
        self._noise = [rng.normal(0, noise_sigma, (h, w, 1)).astype(np.float32) for _ in range(3)]
        self._noise_pos = [np.clip(n, 0, 255).astype(np.uint8) for n in self._noise]
        self._noise_neg = [np.clip(-n, 0, 255).astype(np.uint8) for n in self._noise]
        self._frames = 0
        self._lock = threading.Lock()
        self._seats: dict[int, _SeatCards] = {n: _SeatCards() for n in self.layout.seats}
        self._off_felt: list[tuple[int, PlacedCard]] = []
        self._common: list[PlacedCard] = []
        self._picture = self._lit(self._canvas, self._gain)
        self.version = 0  # grows with every change of the table

    # -- what is on the felt -----------------------------------------------------------
    def clear(self) -> None:
        """The dealer pushes every card in (a new hand)."""
        with self._lock:
            self._seats = {n: _SeatCards() for n in self.layout.seats}
            self._off_felt = []
            self._common = []
            self._repaint()

    def deal(self, seat: int, code: str, face_up: bool, *, spot: str | None = None) -> None:
        """A card lands at ``seat``: by default up cards in the stud row, down cards in the down place.

        ``spot="down"`` with ``face_up=True`` is a hole card dealt face up by mistake.
        """
        spot = spot or ("up" if face_up else "down")
        if spot not in ("up", "down"):
            raise ValueError(f"spot must be 'up' or 'down', not {spot!r}")
        with self._lock:
            cards = self._seat(seat)
            row = cards.up if spot == "up" else cards.down
            card = PlacedCard(code, face_up, spot, len(row))
            row.append(card)
            if spot == "down" and len(row) > 1:
                self._repaint()  # the down cards are re-spaced round the seat's centre
            else:
                self._place(seat, card)
            self.version += 1

    def pitch_off_felt(self, seat: int, code: str, face_up: bool) -> None:
        """A card meant for ``seat`` flies past it and lands on the rail behind the player."""
        with self._lock:
            self._seat(seat)
            card = PlacedCard(code, face_up, "off_felt", len(self._off_felt))
            self._off_felt.append((seat, card))
            self._place(seat, card)
            self.version += 1

    def deal_common(self, code: str) -> None:
        """RRoP stud 15: the dealer turns the common card face up in the middle of the table."""
        with self._lock:
            card = PlacedCard(code, True, "common", len(self._common))
            self._common.append(card)
            self._place(0, card)
            self.version += 1

    def common(self) -> list[str]:
        with self._lock:
            return [c.code for c in self._common]

    def move(self, code: str, seat: int, *, face_up: bool, spot: str) -> None:
        """The dealer picks ``code`` up from wherever it lies and puts it at ``seat`` (``spot`` up or down)."""
        with self._lock:
            self._remove(code)
            cards = self._seat(seat)
            row = cards.up if spot == "up" else cards.down
            row.append(PlacedCard(code, face_up, spot, len(row)))
            self._repaint()

    def turn_up(self, seat: int) -> None:
        """At the showdown the player turns the down cards face up where they lie (RRoP 3.6: a hand
        is shown face up on the table)."""
        with self._lock:
            for c in self._seat(seat).down:
                c.face_up = True
            self._repaint()

    def muck(self, seat: int) -> None:
        """A folded hand: the dealer takes the seat's cards in."""
        with self._lock:
            self._seats[seat] = _SeatCards()
            self._off_felt = [(s, c) for s, c in self._off_felt if s != seat]
            self._repaint()

    def truth(self) -> dict[int, dict[str, object]]:
        """What lies at each seat: up cards in row order (face-up cards among the down cards last), down count."""
        with self._lock:
            out: dict[int, dict[str, object]] = {}
            for n, cards in self._seats.items():
                up = [c.code for c in cards.up] + [c.code for c in cards.down if c.face_up]
                down = sum(1 for c in cards.down if not c.face_up)
                if up or down:
                    out[n] = {"up": up, "down": down}
            return out

    def off_felt(self) -> list[tuple[int, str]]:
        with self._lock:
            return [(s, c.code) for s, c in self._off_felt]

    # -- photographs -----------------------------------------------------------------------
    def frame(self) -> np.ndarray:
        """One camera frame: the table under its light, with fresh sensor noise."""
        with self._lock:
            picture = self._picture
        self._frames += 1
        k = self._frames % len(self._noise)
        # Roll the noise field by a frame-dependent offset so consecutive frames never repeat it.
        shift = (self._frames * 7919) % picture.shape[0]
        pos = np.roll(self._noise_pos[k], shift, axis=0)
        neg = np.roll(self._noise_neg[k], shift, axis=0)
        return cv2.subtract(cv2.add(picture, np.broadcast_to(pos, picture.shape)),
                            np.broadcast_to(neg, picture.shape))

    # -- drawing -----------------------------------------------------------------------------
    def _seat(self, seat: int) -> _SeatCards:
        if seat not in self._seats:
            raise ValueError(f"the layout has seats 1-{len(self._seats)}; no seat {seat}")
        return self._seats[seat]

    def _remove(self, code: str) -> None:
        for cards in self._seats.values():
            for row in (cards.up, cards.down):
                for c in list(row):
                    if c.code == code:
                        row.remove(c)
                for i, c in enumerate(row):
                    c.index = i
        self._off_felt = [(s, c) for s, c in self._off_felt if c.code != code]

    def _corners(self, seat: int, card: PlacedCard) -> np.ndarray:
        """Table corners (mm) of ``card`` at ``seat``: the same place every time it is drawn."""
        if card.spot == "common":  # the middle of the felt, read from the dealer's side
            return _card_corners(np.array([card.index * 1.2 * self.card_w, 0.0]), np.array([0.0, -1.0]),
                                 self.card_w, self.card_h)
        s = self.layout.seats[seat]
        fwd, right, center = np.array(s.forward), np.array(s.right), np.array(s.center)
        cw, ch = self.card_w, self.card_h
        gap_rows = 18.0
        if card.spot == "down":
            n = len(self._seats[seat].down)
            total = n * cw + (n - 1) * DOWN_GAP_MM
            x = -total / 2 + cw / 2 + card.index * (cw + DOWN_GAP_MM)
            c = center - fwd * (ch / 2 + gap_rows / 2) + right * x
            return _card_corners(c, fwd, cw, ch)
        if card.spot == "up":
            x = -(cw + 3 * ROW_STEP * cw) / 2 + cw / 2 + card.index * ROW_STEP * cw
            c = center + fwd * (ch / 2 + gap_rows / 2) + right * x
            return _card_corners(c, fwd, cw, ch)
        # Off the felt: on the rail behind the seat, turned a little.
        t = math.atan2(center[1] / self.layout.felt_b ** 2, center[0] / self.layout.felt_a ** 2)
        edge = np.array([self.layout.felt_a * math.cos(t), self.layout.felt_b * math.sin(t)])
        normal = np.array([math.cos(t) / self.layout.felt_a, math.sin(t) / self.layout.felt_b])
        normal /= np.linalg.norm(normal)
        c = edge + normal * 35.0 + right * (70.0 * card.index)
        ang = math.radians(80.0)  # lying along the rail, a little skewed
        up = np.array([fwd[0] * math.cos(ang) - fwd[1] * math.sin(ang), fwd[0] * math.sin(ang) + fwd[1] * math.cos(ang)])
        return _card_corners(c, up, cw, ch)

    def _place(self, seat: int, card: PlacedCard) -> None:
        """Paste one card (with its drop shadow) on top of the unlit canvas, then light that region."""
        ic = _project(self.table_to_image, self._corners(seat, card))
        _shadow(self._canvas, ic, np.array([1.5, 2.0]), 0.35, max(1.0, 0.02 * float(np.linalg.norm(ic[1] - ic[0]))))
        _paste(self._canvas, self.faces.faces[card.code] if card.face_up else self.faces.back, ic)
        h, w = self._canvas.shape[:2]
        x0, y0 = np.maximum(np.floor(ic.min(axis=0)).astype(int) - 16, 0)
        x1, y1 = np.minimum(np.ceil(ic.max(axis=0)).astype(int) + 16, [w, h])
        picture = self._picture.copy()  # the camera thread may be reading the old picture
        picture[y0:y1, x0:x1] = self._lit(self._canvas[y0:y1, x0:x1], self._gain[y0:y1, x0:x1])
        self._picture = picture

    def _repaint(self) -> None:
        self._canvas = self._base.copy()
        for n, cards in self._seats.items():
            for c in cards.down + cards.up:
                self._place(n, c)
        for n, c in self._off_felt:
            self._place(n, c)
        for c in self._common:
            self._place(0, c)
        self._picture = self._lit(self._canvas, self._gain)
        self.version += 1

    @staticmethod
    def _lit(region: np.ndarray, gain: np.ndarray) -> np.ndarray:
        lit: np.ndarray = np.clip(region.astype(np.float32) * gain[:, :, None], 0, 255).astype(np.uint8)
        return lit

    def _paint_background(self, rng: np.random.Generator) -> np.ndarray:
        felt = np.array(FELTS[felt_for(self.faces.back)[0]], np.float32)
        return paint_table(self.layout, self.table_to_image, self.size, felt, rng)

    def _light(self, rng: np.random.Generator) -> np.ndarray:
        """A static light falloff: brighter under the lamp, darker towards the rail."""
        w, h = self.size
        yy, xx = np.mgrid[0:h, 0:w].astype(np.float32)
        cx, cy = w * rng.uniform(0.4, 0.6), h * rng.uniform(0.4, 0.6)
        r2 = ((xx - cx) / w) ** 2 + ((yy - cy) / h) ** 2
        light: np.ndarray = (1.05 - 0.35 * r2).astype(np.float32)
        return light
