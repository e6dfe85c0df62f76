"""The table layout in table coordinates (millimetres), and calibration.

Theory of operation
-------------------
Everything the camera decides is decided on the table, not in the image:
cards have one known size on the felt (``card_width_mm``) whatever the camera
height or tilt, seat zones are fixed rectangles of the printed layout, and
"off the felt" is a fact about a point on the table.  The bridge from image to
table is one homography per camera, found from ArUco markers printed at known
places on the layout (:mod:`vision.calibration`).  Cards lie flat, so a plane
homography is exact for them (lens distortion aside).

Coordinates: origin at the centre of the felt, x to the dealer's right as seen
from above with the dealer at the bottom, y towards the dealer (down in a
top-view picture).  Seat 1 is on the dealer's left; seats go round the table.

This module is pure: geometry and JSON-able dicts, no files.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

CARD_WIDTH_MM = 63.0  # poker size, 2.5 in
MARKER_MM = 50.0
ARUCO_DICT = "DICT_4X4_50"

Point = tuple[float, float]
Quad = list[Point]


@dataclass(frozen=True)
class Seat:
    """One seat: its zone on the felt, and the directions a card lies in it.

    ``forward`` points from the player towards the table centre (the top of a
    card the player reads the right way up); ``right`` is the player's right,
    the direction a dealer spreads a stud row.
    """

    number: int
    zone: Quad
    forward: Point
    right: Point

    @property
    def center(self) -> Point:
        xs, ys = zip(*self.zone, strict=True)
        return (sum(xs) / 4, sum(ys) / 4)


@dataclass(frozen=True)
class TableLayout:
    """Felt ellipse, rail, seat zones, dealer area and markers, all in mm."""

    felt_a: float  # semi-axis along x
    felt_b: float  # semi-axis along y
    rail_mm: float
    seats: dict[int, Seat]
    dealer: Quad
    markers: dict[int, Quad]  # marker id -> its four corners (ArUco order: TL, TR, BR, BL)
    card_width_mm: float = CARD_WIDTH_MM
    extras: dict[str, Any] = field(default_factory=dict)

    # -- geometry ---------------------------------------------------------
    def on_felt(self, p: Point) -> bool:
        return (p[0] / self.felt_a) ** 2 + (p[1] / self.felt_b) ** 2 <= 1.0

    def on_table(self, p: Point) -> bool:
        """On the felt or the rail."""
        a, b = self.felt_a + self.rail_mm, self.felt_b + self.rail_mm
        return (p[0] / a) ** 2 + (p[1] / b) ** 2 <= 1.0

    def in_common_spot(self, p: Point) -> bool:
        """Whether ``p`` is the middle of the felt, where a stud dealer turns the common card (RRoP
        stud 15: "one card face up in the center of the table"): within a card and a half of it."""
        return math.hypot(p[0], p[1]) <= 1.5 * self.card_width_mm

    def seat_at(self, p: Point) -> int | None:
        """The seat whose zone holds ``p``, or the nearest zone within a card length, else None."""
        for n, seat in self.seats.items():  # (inside first: distances only for a card between zones)
            if _inside(p, seat.zone):
                return n
        best, best_d = None, 1.6 * self.card_width_mm
        for n, seat in self.seats.items():
            d = _distance_to_quad(p, seat.zone)
            if d < best_d:
                best, best_d = n, d
        return best

    def in_dealer_area(self, p: Point) -> bool:
        return _inside(p, self.dealer)

    def felt_polygon(self, n: int = 72) -> np.ndarray:
        t = np.linspace(0, 2 * math.pi, n, endpoint=False)
        return np.stack([self.felt_a * np.cos(t), self.felt_b * np.sin(t)], axis=1)

    def table_polygon(self, n: int = 72) -> np.ndarray:
        t = np.linspace(0, 2 * math.pi, n, endpoint=False)
        a, b = self.felt_a + self.rail_mm, self.felt_b + self.rail_mm
        return np.stack([a * np.cos(t), b * np.sin(t)], axis=1)

    # -- JSON -------------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        return {
            "felt": {"ellipse_semi_axes_mm": [self.felt_a, self.felt_b]},
            "rail_mm": self.rail_mm,
            "card_width_mm": self.card_width_mm,
            "seats": {
                str(n): {"zone": [list(p) for p in s.zone], "forward": list(s.forward), "right": list(s.right)}
                for n, s in sorted(self.seats.items())
            },
            "dealer": [list(p) for p in self.dealer],
            "markers": {"dictionary": ARUCO_DICT, **{str(i): [list(p) for p in q] for i, q in self.markers.items()}},
        }

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> TableLayout:
        try:
            a, b = d["felt"]["ellipse_semi_axes_mm"]
            seats = {
                int(n): Seat(int(n), _quad(s["zone"]), _pt(s["forward"]), _pt(s["right"]))
                for n, s in d["seats"].items()
            }
            markers = {int(k): _quad(v) for k, v in d["markers"].items() if k != "dictionary"}
            return cls(
                felt_a=float(a), felt_b=float(b), rail_mm=float(d["rail_mm"]), seats=seats,
                dealer=_quad(d["dealer"]), markers=markers,
                card_width_mm=float(d.get("card_width_mm", CARD_WIDTH_MM)),
            )
        except (KeyError, TypeError, ValueError) as e:
            raise ValueError(f"table layout is malformed ({e!r}); expected the format written by 'vision calibrate'") from e


FELT_W_MM, FELT_D_MM = 1540.0, 880.0  # the layout this project ships
ZONE_W_MM, ZONE_D_MM = 255.0, 235.0  # a seat zone: a stud row of four up cards in front of three down cards
DEALER_GAP_MM = 500.0  # the dealer's place, free of seats


class LayoutError(ValueError):
    """A table these dimensions cannot hold the layout asked for; the message says what would."""


def default_layout(seats: int = 8) -> TableLayout:
    """The printed stud layout this project ships, for 2 to 8 seats: :func:`table_layout` of a felt
    1.54 m by 0.88 m."""
    return table_layout(FELT_W_MM, FELT_D_MM, seats)


def table_layout(width_mm: float, depth_mm: float, seats: int = 8) -> TableLayout:
    """The stud layout for an elliptical felt ``width_mm`` by ``depth_mm``, for 2 to 8 seats.

    Seats sit round the felt on the arc that leaves the dealer's place at the bottom free; each
    zone is big enough for a stud row of four overlapping up cards in front of three down cards
    side by side (the zones have one size whatever the table: cards do).  Seat 1 is on the
    dealer's left and the numbers go round the table, as the engine numbers seats; with fewer
    than eight seats they are spread over the eight places.  Eight markers sit near the rail, one
    between each two seat places and one in front of the dealer, so that a camera seeing any part
    of the table sees at least two of them.
    """
    if not 2 <= seats <= 8:
        raise ValueError(f"a stud table has 2 to 8 seats; got {seats}")
    a, b = width_mm / 2, depth_mm / 2
    zone_w, zone_d = ZONE_W_MM, ZONE_D_MM
    if b < zone_d + 125.0 or a < b:
        raise LayoutError(
            f"a felt {width_mm:.0f} x {depth_mm:.0f} mm cannot hold the layout: it must be at least "
            f"{2 * (zone_d + 125.0):.0f} mm deep (seat zones on both sides) and at least as wide as deep")
    slots = 8
    # Slots evenly spaced by arc length along the ellipse through the zone centres (not by angle:
    # the ends of an ellipse are tightly curved), leaving a gap at the bottom for the dealer.
    inset = zone_d / 2 + 25.0
    ts = np.linspace(0, 2 * math.pi, 4001)
    pts = np.stack([(a - inset) * np.cos(ts), (b - inset) * np.sin(ts)], axis=1)
    arc = np.concatenate([[0.0], np.cumsum(np.linalg.norm(np.diff(pts, axis=0), axis=1))])
    start = np.interp(math.pi / 2, ts, arc)  # the dealer's place
    perim = arc[-1]
    gap = DEALER_GAP_MM
    step = (perim - gap) / (slots - 1)
    angles = [float(np.interp((start + gap / 2 + k * step) % perim, arc, ts)) for k in range(slots)]
    # Use spread-out slots for fewer seats so the players sit round the table.
    chosen = [round(i * (slots - 1) / (seats - 1)) for i in range(seats)]
    apart = step * min(j - i for i, j in itertools.pairwise(chosen))
    if apart < zone_w + 20.0:
        raise LayoutError(
            f"{seats} seat zones {zone_w:.0f} mm wide do not fit round a felt {width_mm:.0f} x {depth_mm:.0f} mm "
            f"(their centres would be {apart:.0f} mm apart); make the table bigger or seat fewer")
    seat_map: dict[int, Seat] = {}
    for n, k in enumerate(chosen, start=1):
        t = angles[k]
        c = np.array([(a - inset) * math.cos(t), (b - inset) * math.sin(t)])
        normal = np.array([math.cos(t) / (a - inset), math.sin(t) / (b - inset)])
        normal /= np.linalg.norm(normal)
        forward = -normal  # towards the centre
        right = np.array([-forward[1], forward[0]])
        zone = [
            tuple(c - right * zone_w / 2 + forward * zone_d / 2),
            tuple(c + right * zone_w / 2 + forward * zone_d / 2),
            tuple(c + right * zone_w / 2 - forward * zone_d / 2),
            tuple(c - right * zone_w / 2 - forward * zone_d / 2),
        ]
        seat_map[n] = Seat(n, [(float(x), float(y)) for x, y in zone], _pt(forward), _pt(right))
    dealer = [(-100.0, b - 250.0), (100.0, b - 250.0), (100.0, b - 95.0), (-100.0, b - 95.0)]
    markers: dict[int, Quad] = {}
    # Between the seat slots (and either side of the dealer).
    marker_arcs = [start + gap / 2 + (k - 0.5) * step for k in range(1, slots)]
    marker_arcs += [start]  # in front of the dealer, below the dealer area
    marker_angles = [float(np.interp(m % perim, arc, ts)) for m in marker_arcs]
    for i, t in enumerate(marker_angles):
        # On the felt, 45 mm in from the rail, square to the table axes.
        edge = np.array([a * math.cos(t), b * math.sin(t)])
        normal = np.array([math.cos(t) / a, math.sin(t) / b])
        normal /= np.linalg.norm(normal)
        c = edge - normal * 45.0
        h = MARKER_MM / 2
        markers[i] = [(c[0] - h, c[1] - h), (c[0] + h, c[1] - h), (c[0] + h, c[1] + h), (c[0] - h, c[1] + h)]
    markers = {i: [(float(x), float(y)) for x, y in q] for i, q in markers.items()}
    return TableLayout(felt_a=a, felt_b=b, rail_mm=70.0, seats=seat_map, dealer=dealer, markers=markers)


def _pt(v: Any) -> Point:
    return (float(v[0]), float(v[1]))


def _quad(v: Any) -> Quad:
    q = [_pt(p) for p in v]
    if len(q) != 4:
        raise ValueError(f"a zone has 4 corners, got {len(q)}")
    return q


def _inside(p: Point, quad: Quad) -> bool:
    sign = 0.0
    for i in range(4):
        (x0, y0), (x1, y1) = quad[i], quad[(i + 1) % 4]
        cross = (x1 - x0) * (p[1] - y0) - (y1 - y0) * (p[0] - x0)
        if cross != 0:
            if sign == 0:
                sign = cross
            elif (cross > 0) != (sign > 0):
                return False
    return True


def _distance_to_quad(p: Point, quad: Quad) -> float:
    best = math.inf
    px, py = p
    for i in range(4):
        (x0, y0), (x1, y1) = quad[i], quad[(i + 1) % 4]
        dx, dy = x1 - x0, y1 - y0
        t = max(0.0, min(1.0, ((px - x0) * dx + (py - y0) * dy) / (dx * dx + dy * dy)))
        best = min(best, math.hypot(px - x0 - t * dx, py - y0 - t * dy))
    return best
