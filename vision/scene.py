"""Scene renderer: overhead pictures of a stud table from real card art, with exact ground truth.

Why: the detector must be measured on decks it was never tuned on, under the
conditions of a real cardroom camera, with the truth known to the pixel.  A
renderer gives that for any deck we have art for, deterministically from a
seed, so a failing test can be replayed.

What a scene holds (all drawn in table millimetres, then projected with one
camera homography, so the ground truth is exact):

* felt (green, blue or burgundy, textured) in an oval rail of wood, floor around;
* eight ArUco markers printed on the felt (the calibration targets);
* per active seat a stud row of 1-4 up cards, each dealt on top of the last and
  shifted to the player's right so the index corner of every covered card stays
  visible, in front of 2-3 down cards side by side; small dealer jitter in
  angle and position;
* chips as distractors; optionally a card off the felt (on the rail) and a
  half-turned card (lifted on one long edge, seen foreshortened);
* a camera with any roll, tilted up to ~25 degrees, framing the whole table
  (cards ~70-95 px wide) or a close-up of a few seats (up to ~140 px);
* uneven light, soft shadows, blur, sensor noise and JPEG compression.

Rendering is the test edge, not the core: the detector never imports it.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import cv2
import numpy as np

from engine.cards import DECK
from vision.calibration import aruco_dictionary
from vision.layout import TableLayout, default_layout

FELTS = {"green": (40, 110, 30), "blue": (120, 70, 20), "burgundy": (40, 30, 110)}  # BGR
WOOD = (30, 60, 105)
FLOOR = (45, 50, 55)


@dataclass
class FaceSet:
    """A deck's flat faces in memory: code -> BGRA image, plus the back."""

    name: str
    faces: dict[str, np.ndarray]
    back: np.ndarray

    @property
    def aspect(self) -> float:
        h, w = self.back.shape[:2]
        return float(h / w)

    @classmethod
    def load(cls, directory: Path, name: str | None = None) -> FaceSet:
        faces = {}
        for c in DECK:
            img = cv2.imread(str(directory / f"{c}.png"), cv2.IMREAD_UNCHANGED)
            if img is None:
                raise FileNotFoundError(f"missing face {directory / f'{c}.png'}")
            faces[str(c)] = _bgra(img)
        back = cv2.imread(str(directory / "back.png"), cv2.IMREAD_UNCHANGED)
        if back is None:
            raise FileNotFoundError(f"missing {directory / 'back.png'}")
        return cls(name or directory.name, faces, _bgra(back))


def _bgra(img: np.ndarray) -> np.ndarray:
    if img.ndim == 2:
        img = cv2.cvtColor(img, cv2.COLOR_GRAY2BGR)
    if img.shape[2] == 3:
        img = np.dstack([img, np.full(img.shape[:2], 255, np.uint8)])
    return img


@dataclass
class TruthCard:
    """One card as placed: identity, which way up, where (image px and table mm), and its role."""

    code: str
    face_up: bool
    role: str  # "up", "down", "off_felt", "half_turned"
    seat: int | None
    order: int  # position in the seat's stud row (0 = first dealt), or among the down cards
    corners: np.ndarray  # (4,2) image px: TL, TR, BR, BL of the card face
    table_corners: np.ndarray  # (4,2) mm
    in_view: bool = True

    @property
    def center(self) -> np.ndarray:
        c: np.ndarray = self.corners.mean(axis=0)
        return c


@dataclass
class Scene:
    image: np.ndarray
    cards: list[TruthCard]
    table_to_image: np.ndarray
    layout: TableLayout
    seed: int
    info: dict[str, object] = field(default_factory=dict)

    def seats(self) -> dict[int, dict[str, object]]:
        """Ground truth per seat: up cards in row order, number of down cards (in-view cards only)."""
        ups: dict[int, list[tuple[int, str]]] = {}
        downs: dict[int, int] = {}
        for c in self.cards:
            if c.seat is None or c.role not in ("up", "down") or not c.in_view:
                continue
            ups.setdefault(c.seat, [])
            downs.setdefault(c.seat, 0)
            if c.role == "up":
                ups[c.seat].append((c.order, c.code))
            else:
                downs[c.seat] += 1
        return {seat: {"up": [code for _, code in sorted(up)], "down": downs[seat]} for seat, up in ups.items()}

    def scaled_up(self, k: float) -> Scene:
        """The scene photographed ``k`` times finer (a phone's 12 MP: 2.5 times 1600 x 1200): the picture
        scaled up (cubic), every card's corners with it."""
        image = cv2.resize(self.image, None, fx=k, fy=k, interpolation=cv2.INTER_CUBIC)
        cards = [dataclasses.replace(c, corners=c.corners * k) for c in self.cards]
        return dataclasses.replace(self, image=image, cards=cards, table_to_image=np.diag([k, k, 1.0]) @ self.table_to_image)


# -- camera -------------------------------------------------------------------------------


def camera_homography(
    rng: np.random.Generator,
    target: np.ndarray,
    size: tuple[int, int],
    tilt_deg: float,
    roll_deg: float,
    margin: float = 0.01,
) -> np.ndarray:
    """Table mm -> image px for a camera tilted by ``tilt_deg`` that frames ``target`` (N,2 mm)."""
    w, h = size
    c, s = math.cos(math.radians(roll_deg)), math.sin(math.radians(roll_deg))
    sim = np.array([[c, -s, 0], [s, c, 0], [0, 0, 1]], np.float64)
    f = 1.1 * w
    k = np.array([[f, 0, w / 2], [0, f, h / 2], [0, 0, 1]])
    axis_angle = rng.uniform(0, 2 * math.pi)
    rvec = np.array([math.cos(axis_angle), math.sin(axis_angle), 0.0]) * math.radians(tilt_deg)
    r, _ = cv2.Rodrigues(rvec)
    # Scale the table to ~image size first so the tilt acts like a real camera's.
    pts = cv2.perspectiveTransform(target.reshape(-1, 1, 2).astype(np.float64), sim).reshape(-1, 2)
    span = max(np.ptp(pts[:, 0]) / w, np.ptp(pts[:, 1]) / h)
    pre = np.array([[1 / span, 0, w / 2 - pts[:, 0].mean() / span], [0, 1 / span, h / 2 - pts[:, 1].mean() / span], [0, 0, 1]])
    tilt = k @ r @ np.linalg.inv(k)
    hmat = tilt @ pre @ sim
    pts = cv2.perspectiveTransform(target.reshape(-1, 1, 2).astype(np.float64), hmat).reshape(-1, 2)
    x0, y0 = pts.min(axis=0)
    x1, y1 = pts.max(axis=0)
    sc = min(w * (1 - 2 * margin) / (x1 - x0), h * (1 - 2 * margin) / (y1 - y0))
    fit = np.array([[sc, 0, w / 2 - sc * (x0 + x1) / 2], [0, sc, h / 2 - sc * (y0 + y1) / 2], [0, 0, 1]])
    fitted: np.ndarray = fit @ hmat
    return fitted


def _project(hmat: np.ndarray, pts: np.ndarray) -> np.ndarray:
    return cv2.perspectiveTransform(np.asarray(pts, np.float64).reshape(-1, 1, 2), hmat).reshape(-1, 2)


# -- drawing primitives ---------------------------------------------------------------------


def _noise_field(rng: np.random.Generator, size: tuple[int, int], cells: int) -> np.ndarray:
    w, h = size
    small = rng.standard_normal((max(2, cells * h // w), cells)).astype(np.float32)
    return cv2.resize(small, (w, h), interpolation=cv2.INTER_CUBIC)


def _fill_poly(img: np.ndarray, poly: np.ndarray, color: tuple[int, int, int]) -> None:
    cv2.fillPoly(img, [np.round(poly * 16).astype(np.int32)], color, cv2.LINE_AA, shift=4)


def _paste(canvas: np.ndarray, art: np.ndarray, dst: np.ndarray, shade: float = 1.0) -> None:
    """Warp BGRA ``art`` onto ``canvas`` so its corners land on ``dst`` (TL, TR, BR, BL)."""
    hh, ww = canvas.shape[:2]
    x0, y0 = np.floor(dst.min(axis=0)).astype(int) - 2
    x1, y1 = np.ceil(dst.max(axis=0)).astype(int) + 2
    x0, y0, x1, y1 = max(x0, 0), max(y0, 0), min(x1, ww), min(y1, hh)
    if x1 <= x0 or y1 <= y0:
        return
    # Pre-shrink with area averaging: a plain perspective warp from 300 px to 80 px aliases.
    target_w = max(float(np.linalg.norm(dst[1] - dst[0])), float(np.linalg.norm(dst[2] - dst[3])), 8)
    scale = min(1.0, 1.5 * target_w / art.shape[1])
    if scale < 1.0:
        art = cv2.resize(art, None, fx=scale, fy=scale, interpolation=cv2.INTER_AREA)
    ah, aw = art.shape[:2]
    src = np.array([[0, 0], [aw, 0], [aw, ah], [0, ah]], np.float32)
    m = cv2.getPerspectiveTransform(src, (dst - [x0, y0]).astype(np.float32))
    warped = cv2.warpPerspective(art, m, (x1 - x0, y1 - y0), flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_CONSTANT, borderValue=(0, 0, 0, 0))
    alpha = warped[:, :, 3:4].astype(np.float32) / 255.0
    roi = canvas[y0:y1, x0:x1].astype(np.float32)
    roi = roi * (1 - alpha) + warped[:, :, :3].astype(np.float32) * shade * alpha
    canvas[y0:y1, x0:x1] = np.clip(roi, 0, 255).astype(np.uint8)


def _shadow(canvas: np.ndarray, dst: np.ndarray, offset: np.ndarray, strength: float, blur: float) -> None:
    hh, ww = canvas.shape[:2]
    pad = int(3 * blur + 6)
    x0, y0 = np.floor((dst + offset).min(axis=0)).astype(int) - pad
    x1, y1 = np.ceil((dst + offset).max(axis=0)).astype(int) + pad
    x0, y0, x1, y1 = max(x0, 0), max(y0, 0), min(x1, ww), min(y1, hh)
    if x1 <= x0 or y1 <= y0:
        return
    mask = np.zeros((y1 - y0, x1 - x0), np.float32)
    _fill_poly(mask, dst + offset - [x0, y0], (1.0,))  # type: ignore[arg-type]
    mask = cv2.GaussianBlur(mask, (0, 0), blur)
    roi = canvas[y0:y1, x0:x1].astype(np.float32)
    canvas[y0:y1, x0:x1] = (roi * (1 - strength * mask[:, :, None])).astype(np.uint8)


def _card_corners(center: np.ndarray, up: np.ndarray, w: float, h: float) -> np.ndarray:
    """Table corners TL, TR, BR, BL of a card whose top points along ``up``."""
    up = up / np.linalg.norm(up)
    right = np.array([-up[1], up[0]])
    return np.array([
        center - right * w / 2 + up * h / 2,
        center + right * w / 2 + up * h / 2,
        center + right * w / 2 - up * h / 2,
        center - right * w / 2 - up * h / 2,
    ])


def _rot(v: np.ndarray, deg: float) -> np.ndarray:
    c, s = math.cos(math.radians(deg)), math.sin(math.radians(deg))
    return np.array([c * v[0] - s * v[1], s * v[0] + c * v[1]])


def paint_table(layout: TableLayout, hmat: np.ndarray, size: tuple[int, int], felt_bgr: np.ndarray,
                rng: np.random.Generator, markers: bool = True) -> np.ndarray:
    """The empty table as the camera sees it: floor, wooden rail, textured felt, the printed markers
    (unless ``markers`` is false: plain felt, as a table without the printed layout)."""
    w, h = size
    img = np.empty((h, w, 3), np.uint8)
    img[:] = FLOOR
    _fill_poly(img, _project(hmat, layout.table_polygon(144)), WOOD)
    wood_tex = _noise_field(rng, size, 60)
    img = np.clip(img.astype(np.float32) * (1 + 0.06 * wood_tex[:, :, None]), 0, 255).astype(np.uint8)
    felt_mask = np.zeros((h, w), np.uint8)
    _fill_poly(felt_mask, _project(hmat, layout.felt_polygon(144)), (255,))  # type: ignore[arg-type]
    tex = 1 + 0.05 * _noise_field(rng, size, 12) + 0.04 * _noise_field(rng, size, 400)
    felt = np.clip(felt_bgr[None, None, :] * tex[:, :, None], 0, 255).astype(np.uint8)
    img[felt_mask > 0] = felt[felt_mask > 0]
    # Markers: black-on-white, with a white quiet zone of 1/4 of the marker.
    dic = aruco_dictionary()
    for mid, quad in layout.markers.items() if markers else ():
        q = np.array(quad)
        c = q.mean(axis=0)
        quiet = c + (q - c) * 1.5
        mk = cv2.aruco.generateImageMarker(dic, mid, 120)
        sticker = np.full((180, 180), 245, np.uint8)
        sticker[30:150, 30:150] = mk
        _paste(img, _bgra(sticker), _project(hmat, quiet))
    return img


def felt_for(back: np.ndarray) -> list[str]:
    """Felts a deck's backs stand out on, as a cardroom picks (tigullio's backs are green)."""
    return [k for k, v in FELTS.items() if _hue_distance(back, v) > 25] or list(FELTS)


# -- the scene --------------------------------------------------------------------------------


def render_scene(
    faces: FaceSet,
    seed: int,
    *,
    seats: int | None = None,
    street: int | None = None,
    size: tuple[int, int] = (1920, 1080),
    tilt_max: float = 25.0,
    close_up: bool | None = None,
    off_felt: bool | None = None,
    half_turned: bool | None = None,
    conditions: bool = True,
    all_active: bool = False,
    markers: bool = True,
    optics: Callable[[Scene], np.ndarray] | None = None,
    jpeg_quality: int | None = None,
) -> Scene:
    """Render one table picture; every random choice comes from ``seed``.

    ``None`` arguments are drawn at random.  ``conditions=False`` gives a clean
    picture (no light gradient, blur, noise or JPEG) for debugging; ``markers=False`` leaves the
    layout's ArUco markers off the felt (the same scene otherwise).  ``optics`` is given the table as
    it lies, before the camera's light, blur, noise and JPEG, and returns the picture to go through
    them (glare, motion blur: :mod:`vision.conditions`; it must not draw from the scene's generator);
    ``jpeg_quality`` replaces the quality drawn (the same scene otherwise).
    """
    rng = np.random.default_rng(seed)
    n_seats = seats if seats is not None else int(rng.integers(2, 9))
    layout = default_layout(n_seats)
    cw = layout.card_width_mm
    ch = cw * faces.aspect
    if close_up is None:
        close_up = n_seats <= 4 and rng.random() < 0.5
    if street is None:
        street = int(rng.integers(3, 8))
    if off_felt is None:
        off_felt = rng.random() < 0.25
    if half_turned is None:
        half_turned = rng.random() < 0.25

    active = [n for n in layout.seats if all_active or rng.random() < 0.85]
    if len(active) < 2:
        active = sorted(layout.seats)[:2]
    extra = int(off_felt) + int(half_turned)
    while len(active) * street + extra > 52:
        street -= 1
    deck = [str(c) for c in DECK]
    rng.shuffle(deck)

    # Camera.
    tilt = float(rng.uniform(0, tilt_max))
    if close_up:
        chosen = rng.choice(active, size=min(len(active), int(rng.integers(1, 3))), replace=False)
        pts = np.concatenate([np.array(layout.seats[int(n)].zone) for n in chosen])
        c = pts.mean(axis=0)
        # Keep the two nearest calibration markers in view: a camera is mounted so that it sees some.
        near = sorted(layout.markers.values(), key=lambda q: float(np.linalg.norm(np.mean(q, axis=0) - c)))[:2]
        pts = np.concatenate([pts, c + (pts - c) * 1.15, *(np.array(q) for q in near)])
        roll = float(rng.uniform(0, 360))
        target = pts
    else:
        roll = float(rng.choice([0.0, 180.0]) + rng.uniform(-8, 8))
        target = layout.felt_polygon(48) * 0.96
    hmat = camera_homography(rng, target, size, tilt, roll)
    w, h = size

    # Background: floor, rail, felt.
    # A cardroom picks a felt its card backs stand out on; so do we (tigullio's backs are green).
    felt_name = str(rng.choice(felt_for(faces.back)))
    felt_bgr = np.array(FELTS[felt_name], np.float32) * rng.uniform(0.8, 1.2)
    img = paint_table(layout, hmat, size, felt_bgr, rng, markers)

    cards: list[TruthCard] = []
    scale_px = math.sqrt(abs(np.linalg.det(hmat[:2, :2]))) / max(hmat[2, 2], 1e-9)

    def place(code: str, face_up: bool, role: str, seat: int | None, order: int, tc: np.ndarray,
              art: np.ndarray | None = None, lift: float = 1.0) -> None:
        ic = _project(hmat, tc)
        sh_blur = max(1.0, 0.02 * float(np.linalg.norm(ic[1] - ic[0])) * lift)
        _shadow(img, ic, np.array([1.5, 2.0]) * lift, 0.35, sh_blur)
        if art is None:
            art = faces.faces[code] if face_up else faces.back
        _paste(img, art, ic)
        inside = bool(np.all((ic >= 0) & (ic < [w, h])))
        cards.append(TruthCard(code, face_up, role, seat, order, ic, tc, inside))

    # Deal: per seat down cards (near the player) and the stud row (towards the centre).
    down_n = 2 + (street >= 7)
    up_n = min(street - 2, 4)
    for n in active:
        seat = layout.seats[n]
        fwd, right = np.array(seat.forward), np.array(seat.right)
        center = np.array(seat.center)
        gap_rows = rng.uniform(14, 24)
        # Down cards side by side.
        gaps = rng.uniform(7, 16, size=down_n - 1)
        total = down_n * cw + gaps.sum()
        x = -total / 2 + cw / 2 + rng.uniform(-10, 10)
        base = center - fwd * (ch / 2 + gap_rows / 2)
        for i in range(down_n):
            ang = rng.uniform(-4, 4) + (180 if rng.random() < 0.5 else 0)
            c = base + right * x + fwd * rng.uniform(-3, 3)
            place(deck.pop(), False, "down", n, i, _card_corners(c, _rot(fwd, ang), cw, ch))
            if i < down_n - 1:
                x += cw + gaps[i]
        # Up cards: a stud row, each new card on top, shifted to the player's right.
        row_ang = rng.uniform(-7, 7)
        rfwd = _rot(fwd, row_ang)
        rright = np.array([-rfwd[1], rfwd[0]])
        offsets = rng.uniform(0.32, 0.55, size=up_n - 1) * cw
        length = cw + offsets.sum()
        base = center + fwd * (ch / 2 + gap_rows / 2) + rng.uniform(-6, 6, size=2)
        x = -length / 2 + cw / 2
        for i in range(up_n):
            ang = rng.uniform(-1.5, 1.5)
            c = base + rright * x + rfwd * rng.uniform(-1.5, 1.5)
            place(deck.pop(), True, "up", n, i, _card_corners(c, _rot(rfwd, ang), cw, ch))
            if i < up_n - 1:
                x += offsets[i]

    if off_felt:
        # Over the edge of the felt, on the rail (its centre off the felt), somewhere the camera sees it.
        for _ in range(100):
            t = rng.uniform(0, 2 * math.pi)
            edge = np.array([layout.felt_a * math.cos(t), layout.felt_b * math.sin(t)])
            normal = np.array([math.cos(t) / layout.felt_a, math.sin(t) / layout.felt_b])
            c = edge + normal / np.linalg.norm(normal) * rng.uniform(15, 30)
            tc = _card_corners(c, _rot(np.array([0.0, -1.0]), rng.uniform(0, 360)), cw, ch)
            ic = _project(hmat, tc)
            clear = all(cv2.pointPolygonTest(t_.table_corners.astype(np.float32), (float(c[0]), float(c[1])), True) < -90
                        for t_ in cards) and all(np.linalg.norm(np.mean(q, axis=0) - c) > 110 for q in layout.markers.values())
            if (clear and np.all((ic >= 8) & (ic < [w - 8, h - 8])) and not layout.on_felt((c[0], c[1]))
                    and all(layout.on_table((x, y)) for x, y in tc)):
                place(deck.pop(), bool(rng.random() < 0.6), "off_felt", layout.seat_at((c[0], c[1])), 0, tc)
                break

    if half_turned:
        # A down card lifted on its long edge (a player peeking, or a card turned over by accident).
        for _ in range(50):
            n = int(rng.choice(active))
            seat = layout.seats[n]
            c = np.array(seat.center) + np.array(seat.right) * rng.choice([-1, 1]) * (140 + cw / 2)
            if not layout.on_felt((c[0], c[1])) or any(
                np.linalg.norm(np.mean(q, axis=0) - c) < 110 for q in layout.markers.values()
            ):
                continue
            squeeze = rng.uniform(0.3, 0.6)
            tc = _card_corners(c, np.array(seat.forward), cw * squeeze, ch)
            face_up = bool(rng.random() < 0.5)
            code = deck.pop()
            art = faces.faces[code] if face_up else faces.back
            art = (art.astype(np.float32) * [0.8, 0.8, 0.8, 1]).astype(np.uint8)
            ic = _project(hmat, tc)
            if np.all((ic >= 8) & (ic < [w - 8, h - 8])):
                place(code, face_up, "half_turned", n, 0, tc, art=art, lift=4.0)
                break
            deck.append(code)

    # Chips: coloured discs in front of the players' cards, clear of every card by 12 mm or more
    # (a chip touching a card makes one blob of both: see docs/vision.md, limitations).
    for n in active:
        seat = layout.seats[n]
        for _ in range(int(rng.integers(0, 3))):
            r = 19.0
            c = np.array(seat.center) + np.array(seat.forward) * (ch + 45) + np.array(seat.right) * rng.uniform(-100, 100)
            if any(cv2.pointPolygonTest(t.table_corners.astype(np.float32), (float(c[0]), float(c[1])), True) > -(r + 12)
                   for t in cards):
                continue
            around = np.linspace(0, 2 * math.pi, 24, endpoint=False)
            disc = c + np.stack([r * np.cos(around), r * np.sin(around)], axis=1)
            b_, g_, r_ = (int(v) for v in rng.choice([(30, 30, 200), (200, 60, 30), (20, 20, 20), (40, 160, 40), (240, 240, 240)]))
            col = (b_, g_, r_)
            _shadow(img, _project(hmat, disc), np.array([2.0, 2.0]), 0.4, 3)
            _fill_poly(img, _project(hmat, disc), col)
            cv2.polylines(img, [np.round(_project(hmat, c + (disc - c) * 0.7)).astype(np.int32)], True, (235, 235, 235), max(1, int(scale_px * 3)))

    if optics is not None:
        img = optics(Scene(img, cards, hmat, layout, seed))
    if conditions:
        img = _apply_conditions(rng, img, jpeg_quality)

    for c in cards:
        c.in_view = bool(np.all((c.corners >= 0) & (c.corners < [w, h])))
    info = {"tilt": tilt, "roll": roll, "close_up": close_up, "street": street, "felt": felt_name,
            "seats": n_seats, "active": active, "card_px": _median_card_px(cards)}
    return Scene(img, cards, hmat, layout, seed, info)


def _hue_distance(back: np.ndarray, felt_bgr: tuple[int, int, int]) -> float:
    """Hue distance (OpenCV units, 0..90) between a back's dominant colour and a felt."""
    hsv = cv2.cvtColor(back[:, :, :3], cv2.COLOR_BGR2HSV).reshape(-1, 3)
    sat = hsv[hsv[:, 1] > 60]
    if len(sat) < 0.05 * len(hsv):
        return 90.0  # a black/white/grey back stands out on any felt
    hist = np.bincount(sat[:, 0], minlength=180)
    hb = int(np.argmax(hist))
    hf = int(cv2.cvtColor(np.array([[felt_bgr]], np.uint8), cv2.COLOR_BGR2HSV)[0, 0, 0])
    d = abs(hb - hf)
    return float(min(d, 180 - d))


def _median_card_px(cards: list[TruthCard]) -> float:
    ws = [float(np.linalg.norm(c.corners[1] - c.corners[0])) for c in cards if c.role in ("up", "down")]
    return float(np.median(ws)) if ws else 0.0


def _apply_conditions(rng: np.random.Generator, img: np.ndarray, jpeg_quality: int | None = None) -> np.ndarray:
    """Uneven light, soft shadows, blur, sensor noise and JPEG compression."""
    h, w = img.shape[:2]
    yy, xx = np.mgrid[0:h:8, 0:w:8].astype(np.float32)
    ang = rng.uniform(0, 2 * math.pi)
    grad = (xx * math.cos(ang) + yy * math.sin(ang)) / max(w, h)
    gain = rng.uniform(0.75, 1.0) + rng.uniform(0.0, 0.35) * (grad - grad.mean())
    cx, cy = rng.uniform(0, w), rng.uniform(0, h)
    gain += rng.uniform(0.0, 0.25) * np.exp(-((xx - cx) ** 2 + (yy - cy) ** 2) / (2 * (0.3 * w) ** 2))
    for _ in range(int(rng.integers(0, 4))):  # soft shadows (a lamp arm, a player leaning in)
        sx, sy = rng.uniform(0, w), rng.uniform(0, h)
        rx, ry = rng.uniform(60, 300), rng.uniform(40, 200)
        d = ((xx - sx) / rx) ** 2 + ((yy - sy) / ry) ** 2
        gain *= 1 - rng.uniform(0.2, 0.45) * np.exp(-d * 2)
    gain = cv2.resize(gain.astype(np.float32), (w, h), interpolation=cv2.INTER_LINEAR)
    out = img.astype(np.float32) * gain[:, :, None]
    sigma = rng.uniform(0.0, 1.1)
    if sigma > 0.3:
        out = cv2.GaussianBlur(out, (0, 0), sigma)
    out += rng.normal(0, rng.uniform(1.5, 5.0), size=out.shape).astype(np.float32)
    out = np.clip(out, 0, 255).astype(np.uint8)
    q = int(rng.integers(60, 93))
    q = q if jpeg_quality is None else jpeg_quality
    ok, buf = cv2.imencode(".jpg", out, [cv2.IMWRITE_JPEG_QUALITY, q])
    assert ok
    decoded = cv2.imdecode(buf, cv2.IMREAD_COLOR)
    assert decoded is not None
    return decoded
