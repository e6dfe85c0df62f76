"""Showdown tables: cards tabled face up, fanned, heaped or spread, with the truth of which index shows.

Why: at showdown a player tables up to seven cards as they come out of the hand, not as a
dealer lays a stud row: fanned round a common pivot (5-25 degrees between cards), heaped
loosely at any angle, or spread apart, partly off the seat's zone.  The detector's rows do not
cover that, and its target (#22) is about the cards whose index can be seen: a card whose
index corner is under another card is not expected to be read, but must not be invented.

A standard card prints its index at two opposite corners (top left, and bottom right turned
round); a card is *index visible* when the whole corner strip the recognizer reads
(:mod:`vision.corner`: x 1-17, y 1-37 of a card 64 wide) at either of them is uncovered by the
cards tabled after it and inside the picture.  The truth says it for all four corners
(:meth:`TabledCard.index_shown`): a deck printed elsewhere is counted at its own corners.

Same camera, felt, light and noise as :func:`vision.scene.render_scene` (whose output this
module does not change: it only calls its drawing helpers); seats not at showdown hold a
seventh-street stud layout.  The test edge: the detector never imports it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import cv2
import numpy as np

from engine.cards import DECK
from vision.corner import CARD_W, STRIP_H, STRIP_W, STRIP_X0, STRIP_Y0
from vision.layout import TableLayout, default_layout
from vision.scene import (
    FELTS,
    FaceSet,
    Scene,
    TruthCard,
    _apply_conditions,
    _card_corners,
    _median_card_px,
    _paste,
    _project,
    _rot,
    _shadow,
    camera_homography,
    felt_for,
    paint_table,
)

ARRANGEMENTS = ("fan", "loose", "spread")


@dataclass
class TabledCard(TruthCard):
    """A card tabled at showdown (role ``"tabled"``): which of its index corners show."""

    index_tl: bool = False  # the top-left corner's strip is wholly uncovered and in the picture
    index_br: bool = False  # ... the bottom-right corner's (read turned round)
    covered_share: float = 0.0  # how much of the card later cards cover (0..1)
    arrangement: str = ""
    index_tr: bool = False  # ... the top-right corner's (mirrored: a deck printed at the top right)
    index_bl: bool = False  # ... the bottom-left corner's

    @property
    def strips_shown(self) -> tuple[bool, bool, bool, bool]:
        """Whether each corner's strip shows (:data:`vision.index_layout.CORNERS` order)."""
        return (self.index_tl, self.index_tr, self.index_br, self.index_bl)

    @property
    def index_visible(self) -> bool:
        """An index shows, for a deck printed at the top left and bottom right."""
        return self.index_shown(STANDARD_CORNERS)

    def index_shown(self, printed: tuple[bool, bool, bool, bool]) -> bool:
        """An index shows, for a deck that prints one at the corners ``printed`` (top left, top right,
        bottom right, bottom left: :data:`vision.index_layout.CORNERS`).  Why: a deck printed at one
        corner, or at the top right and bottom left, shows its index where a standard one shows
        blank paper or pips; counted by the standard corners its hidden indices were counted as
        shown and its shown ones as hidden (the showdown bench until session 36)."""
        return any(p and s for p, s in zip(printed, self.strips_shown, strict=True))

    def corners_shown(self, printed: tuple[bool, bool, bool, bool] = (True, True, True, True)) -> str:
        """The printed corners whose strip shows, by name (``"TL"``, ``"TLBR"``...), for messages."""
        return "".join(n for n, p, s in zip(("TL", "TR", "BR", "BL"), printed, self.strips_shown, strict=True) if p and s)


#: a standard deck's printed corners (top left, bottom right), in :data:`vision.index_layout.CORNERS` order
STANDARD_CORNERS = (True, False, True, False)


def _strip_points(tc: np.ndarray, corner: int) -> np.ndarray:
    """Sample points (mm) over the index strip at a card's ``corner`` (0-3: top left, top right, bottom
    right, bottom left; the strip mirrored into each); ``tc`` its table corners TL, TR, BR, BL."""
    tl, tr, _br, bl = tc
    ex, ey = (tr - tl) / CARD_W, (bl - tl) / np.linalg.norm(bl - tl) * np.linalg.norm(tr - tl) / CARD_W
    xs = np.linspace(STRIP_X0, STRIP_X0 + STRIP_W, 7)
    ys = np.linspace(STRIP_Y0, STRIP_Y0 + STRIP_H, 13)
    gx, gy = np.meshgrid(xs, ys)
    origin, sx, sy = [(tl, ex, ey), (tr, -ex, ey), (tc[2], -ex, -ey), (bl, ex, -ey)][corner]
    pts: np.ndarray = origin + gx.ravel()[:, None] * sx + gy.ravel()[:, None] * sy
    return pts


def _covered(pts: np.ndarray, above: list[np.ndarray]) -> np.ndarray:
    """Which points lie under any of the card outlines ``above`` (mm)."""
    hit = np.zeros(len(pts), bool)
    for poly in above:
        p32 = poly.astype(np.float32)
        hit |= np.array([cv2.pointPolygonTest(p32, (float(x), float(y)), False) >= 0 for x, y in pts])
    return hit


def tabled_card(code: str, seat: int, order: int, tc: np.ndarray, above: list[np.ndarray], hmat: np.ndarray,
                size: tuple[int, int], arrangement: str) -> TabledCard:
    """The truth of a card tabled face up at table corners ``tc`` (mm), under the outlines ``above``,
    seen through ``hmat`` in a picture of ``size``: which index corners show, how much is covered."""
    w, h = size
    ic = _project(hmat, tc)
    vis = []
    for corner in range(4):
        pts = _strip_points(tc, corner)
        ipts = _project(hmat, pts)
        in_pic = bool(np.all((ipts >= 0) & (ipts < [w, h])))
        vis.append(in_pic and not _covered(pts, above).any())
    grid = tc[0] + np.linspace(0.05, 0.95, 8)[:, None, None] * (tc[1] - tc[0]) + np.linspace(0.05, 0.95, 10)[None, :, None] * (tc[3] - tc[0])
    share = float(_covered(grid.reshape(-1, 2), above).mean()) if above else 0.0
    inside = bool(np.all((ic >= 0) & (ic < [w, h])))
    return TabledCard(code, True, "tabled", seat, order, ic, tc, inside, vis[0], vis[2], share, arrangement, vis[1], vis[3])


def _fan(rng: np.random.Generator, n: int, cw: float, ch: float) -> list[np.ndarray]:
    """Card outlines of a fan about a common pivot (hand-local mm; the first card's top along +y).

    Each card is the last turned by 5-25 degrees about the pivot, top towards its right (``_rot``
    by a positive angle turns a card's top towards its right), and lies on it: the one below
    shows its left edge and top-left index.  A few fans go the other way round (then the covered
    cards show only their index-less corners).
    """
    delta = rng.uniform(5, 25)
    sense = 1.0 if rng.random() < 0.85 else -1.0
    below = rng.uniform(0, 45)  # the pivot's distance below the cards' bottom edge
    across = rng.uniform(-cw / 4, cw / 2)  # the card's middle right of the pivot (held near the bottom left)
    out = []
    for k in range(n):
        up = _rot(np.array([0.0, 1.0]), sense * k * delta + rng.uniform(-1.5, 1.5))
        right = _rot(up, 90.0)
        flip = rng.random() < 0.5  # either way up: a card turned round shows its other index there
        tc = _card_corners(up * (below + ch / 2) + right * across, up, cw, ch)
        out.append(np.roll(tc, 2, axis=0) if flip else tc)
    return out


def _loose(rng: np.random.Generator, n: int, cw: float, ch: float) -> list[np.ndarray]:
    """A loose heap: each card at any angle, dropped 18-50 mm from the last, overlapping."""
    out = []
    c = np.zeros(2)
    for _ in range(n):
        for _try in range(20):
            step = _rot(np.array([0.0, 1.0]), rng.uniform(0, 360)) * rng.uniform(18, 50)
            if np.linalg.norm(c + step) < 75:
                break
        c = c + step
        out.append(_card_corners(c, _rot(np.array([0.0, 1.0]), rng.uniform(0, 360)), cw, ch))
    return out


def _spread(rng: np.random.Generator, n: int, cw: float, ch: float) -> list[np.ndarray]:
    """Spread apart in two loose rows (gaps -8..12 mm: some touch or overlap a little)."""
    out = []
    first = min(n, 4)
    for row, count in ((0, first), (1, n - first)):
        xs = np.cumsum(np.r_[0.0, cw + rng.uniform(-8, 12, size=max(count - 1, 0))])
        xs -= xs.mean()
        y = (0.5 - row) * (ch + rng.uniform(-10, 15))
        for x in xs:
            up = _rot(np.array([0.0, 1.0]), rng.uniform(-12, 12) + (180 if rng.random() < 0.5 else 0))
            out.append(_card_corners(np.array([x, y]) + rng.uniform(-4, 4, size=2), up, cw, ch))
    return out


def _to_seat(layout: TableLayout, seat: int, local: list[np.ndarray], turn: float, shift: np.ndarray) -> list[np.ndarray]:
    """Hand-local outlines, turned by ``turn`` degrees about the hand's middle and moved by
    ``shift``, onto the seat (local +y along the seat's forward; a rotation, never a mirror)."""
    fwd = np.array(layout.seats[seat].forward, np.float64)
    to_table = np.array([[fwd[1], fwd[0]], [-fwd[0], fwd[1]]])  # columns: where local x and y go
    mid = np.mean(np.concatenate(local), axis=0)
    c, si = math.cos(math.radians(turn)), math.sin(math.radians(turn))
    turned = np.array([[c, -si], [si, c]])
    centre = np.array(layout.seats[seat].center, np.float64)
    return [centre + ((tc - mid) @ turned.T + shift) @ to_table.T for tc in local]


def render_showdown(
    faces: FaceSet,
    seed: int,
    *,
    seats: int | None = None,
    size: tuple[int, int] = (1920, 1080),
    tilt_max: float = 25.0,
    close_up: bool | None = None,
    arrangement: str | None = None,
    conditions: bool = True,
    markers: bool = True,
) -> Scene:
    """A table at showdown; every random choice comes from ``seed``.

    Each active seat tables 5-7 cards face up (``arrangement``: one of :data:`ARRANGEMENTS`
    for every tabled seat, or drawn per seat) with probability 0.75 (at least one seat
    does); the others hold 3 down cards and a stud row of 4.  The tabled cards are
    :class:`TabledCard` (role ``"tabled"``) with their index visibility.
    """
    rng = np.random.default_rng(seed)
    n_seats = seats if seats is not None else int(rng.integers(2, 9))
    layout = default_layout(n_seats)
    cw = layout.card_width_mm
    ch = cw * faces.aspect
    if close_up is None:
        close_up = n_seats <= 4 and rng.random() < 0.5
    active = [n for n in layout.seats if rng.random() < 0.85]
    if len(active) < 2:
        active = sorted(layout.seats)[:2]
    tabled = [n for n in active if rng.random() < 0.75] or [int(rng.choice(active))]
    deck = [str(c) for c in DECK]
    rng.shuffle(deck)

    tilt = float(rng.uniform(0, tilt_max))
    if close_up:
        chosen = rng.choice(tabled, size=min(len(tabled), int(rng.integers(1, 3))), replace=False)
        pts = np.concatenate([np.array(layout.seats[int(n)].zone) for n in chosen])
        c = pts.mean(axis=0)
        near = sorted(layout.markers.values(), key=lambda q: float(np.linalg.norm(np.mean(q, axis=0) - c)))[:2]
        target = np.concatenate([pts, c + (pts - c) * 1.35, *(np.array(q) for q in near)])
        roll = float(rng.uniform(0, 360))
    else:
        roll = float(rng.choice([0.0, 180.0]) + rng.uniform(-8, 8))
        target = layout.felt_polygon(48) * 0.96
    hmat = camera_homography(rng, target, size, tilt, roll)
    w, h = size
    felt_name = str(rng.choice(felt_for(faces.back)))
    felt_bgr = np.array(FELTS[felt_name], np.float32) * rng.uniform(0.8, 1.2)
    img = paint_table(layout, hmat, size, felt_bgr, rng, markers)

    # Lay out every seat's cards first (table mm), clear of the markers, the rail and the other seats.
    plans: dict[int, tuple[str, list[np.ndarray]]] = {}
    placed: list[np.ndarray] = []
    marker_c = [np.mean(q, axis=0) for q in layout.markers.values()]

    def clear(outlines: list[np.ndarray]) -> bool:
        for tc in outlines:
            if not all(layout.on_felt((float(x), float(y))) for x, y in tc):
                return False
            if any(np.linalg.norm(tc - m, axis=1).min() < 55 or cv2.pointPolygonTest(tc.astype(np.float32), (float(m[0]), float(m[1])), True) > -45
                   for m in marker_c):
                return False
            for other in placed:
                o32 = other.astype(np.float32)
                if any(cv2.pointPolygonTest(o32, (float(x), float(y)), True) > -12 for x, y in tc):
                    return False
                t32 = tc.astype(np.float32)
                if any(cv2.pointPolygonTest(t32, (float(x), float(y)), True) > -12 for x, y in other):
                    return False
        return True

    for n in active:
        s = layout.seats[n]
        fwd, right = np.array(s.forward), np.array(s.right)
        if n in tabled:
            for attempt in range(40):
                kind = arrangement or str(rng.choice(ARRANGEMENTS))
                count = int(rng.integers(5, 8))
                local = {"fan": _fan, "loose": _loose, "spread": _spread}[kind](rng, count, cw, ch)
                shrink = 1.0 - attempt / 50
                shift = rng.uniform(-60, 60, size=2) * shrink
                outlines = _to_seat(layout, n, local, rng.uniform(-180, 180) if kind != "spread" else rng.uniform(-20, 20), shift)
                if clear(outlines):
                    plans[n] = (kind, outlines)
                    placed.extend(outlines)
                    break
        else:
            # seventh street, as render_scene deals it: 3 down cards side by side and a row of 4 up cards
            gap_rows = rng.uniform(14, 24)
            outlines = []
            gaps = rng.uniform(7, 16, size=2)
            x = -(3 * cw + gaps.sum()) / 2 + cw / 2
            base = np.array(s.center) - fwd * (ch / 2 + gap_rows / 2)
            for i in range(3):
                outlines.append(_card_corners(base + right * x, _rot(fwd, rng.uniform(-4, 4) + (180 if rng.random() < 0.5 else 0)), cw, ch))
                if i < 2:
                    x += cw + gaps[i]
            rfwd = _rot(fwd, rng.uniform(-7, 7))
            rright = np.array([-rfwd[1], rfwd[0]])
            offsets = rng.uniform(0.32, 0.55, size=3) * cw
            x = -(cw + offsets.sum()) / 2 + cw / 2
            base = np.array(s.center) + fwd * (ch / 2 + gap_rows / 2)
            for i in range(4):
                outlines.append(_card_corners(base + rright * x, _rot(rfwd, rng.uniform(-1.5, 1.5)), cw, ch))
                if i < 3:
                    x += offsets[i]
            if clear(outlines):
                plans[n] = ("stud", outlines)
                placed.extend(outlines)

    cards: list[TruthCard] = []
    for n, (kind, outlines) in plans.items():
        for i, tc in enumerate(outlines):
            code = deck.pop()
            if kind == "stud":
                face_up = i >= 3
                role, order = ("up", i - 3) if face_up else ("down", i)
            else:
                face_up, role, order = True, "tabled", i
            ic = _project(hmat, tc)
            _shadow(img, ic, np.array([1.5, 2.0]), 0.35, max(1.0, 0.02 * float(np.linalg.norm(ic[1] - ic[0]))))
            _paste(img, faces.faces[code] if face_up else faces.back, ic)
            inside = bool(np.all((ic >= 0) & (ic < [w, h])))
            if kind == "stud":
                cards.append(TruthCard(code, face_up, role, n, order, ic, tc, inside))
                continue
            cards.append(tabled_card(code, n, order, tc, outlines[i + 1 :], hmat, size, kind))

    for n in active:  # chips in front of the players, clear of every card
        s = layout.seats[n]
        for _ in range(int(rng.integers(0, 2))):
            r = 19.0
            c = np.array(s.center) + np.array(s.forward) * (ch + 60) + np.array(s.right) * rng.uniform(-100, 100)
            if not layout.on_felt((float(c[0]), float(c[1]))) or any(
                    cv2.pointPolygonTest(t.table_corners.astype(np.float32), (float(c[0]), float(c[1])), True) > -(r + 12) for t in cards):
                continue
            around = np.linspace(0, 2 * math.pi, 24, endpoint=False)
            disc = c + np.stack([r * np.cos(around), r * np.sin(around)], axis=1)
            col = tuple(int(v) for v in rng.choice([(30, 30, 200), (200, 60, 30), (20, 20, 20), (40, 160, 40)]))
            _shadow(img, _project(hmat, disc), np.array([2.0, 2.0]), 0.4, 3)
            cv2.fillPoly(img, [np.round(_project(hmat, disc) * 16).astype(np.int32)], col, cv2.LINE_AA, shift=4)

    if conditions:
        img = _apply_conditions(rng, img)
    for c in cards:
        c.in_view = bool(np.all((c.corners >= 0) & (c.corners < [w, h])))
    info = {"tilt": tilt, "roll": roll, "close_up": close_up, "felt": felt_name, "seats": n_seats, "active": active,
            "tabled": {n: kind for n, (kind, _o) in plans.items() if kind != "stud"}, "card_px": _median_card_px(cards)}
    return Scene(img, cards, hmat, layout, seed, info)
