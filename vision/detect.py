"""Card detection and recognition on one frame: the pure core of the camera.

Theory of operation
-------------------
1. **Foreground.**  On a half-size copy of the frame, in HSV, a pixel is
   background when its hue is the felt's (or the rail's) and it is at least
   half as saturated, and not much brighter than it (a red pip is the hue of
   a burgundy felt, but twice as bright); the felt and rail colours are
   re-measured every frame at fixed sample points, so slow light changes and
   shadows (which darken but keep hue and most saturation) do not move the
   threshold.  Card faces are
   unsaturated and card backs are another hue, so both come out as
   foreground.  Printed markers are masked out.
2. **Blobs on the table.**  Each outer contour is mapped through the
   calibration homography into table millimetres, where every card has the
   same known size whatever the camera tilt, and fitted with a minimum-area
   rectangle.  One side of a card blob is a card height (cards in a stud row
   and down cards lie side by side along their short side); the other side,
   the blob's length, says whether it is one card, a row, or a card lifted on
   its edge (narrower than a card: half turned).  Anything else (chips, hands,
   arms) is not a card.
3. **Cutting rows into cards.**  The blob is resampled from the full-size
   frame into a canonical strip at the template scale.  The index corner of
   every card in the row is visible at the card's left edge (or, for a row
   laid the other way, at its right edge upside down: the same picture turned
   round, so we scan the strip and the strip turned round).  Sliding every
   learned corner template along the top band gives a score profile; a short
   dynamic programme picks the card edges (the first card at the row's start,
   the top card ending at the row's end, gaps between a quarter and two
   thirds of a card) that maximise the matched score.  This uses the index
   corners themselves, which every deck has, instead of the thin edge between
   two white cards, which many decks do not draw.  Which way round: the end
   that holds the top card's corner, and never an end that reads as the back
   (the top card lies face up).  A blob whose ends are like the back, and more
   like it than like any face, is face-down cards.
4. **Reading each card.**  The best candidates from the coarse scan are
   re-matched at full template resolution with a few pixels of slack (the
   inner loops compiled: :mod:`vision.window_match`); a card fully in view is also read from its other corner.  The best label wins; the
   back template (if enrolled) makes a card face down.  A weak corner is
   matched again over the band's whole height (a card lower than its row's
   edge), and two weak covered cards side by side are looked for as one.
5. **A second look** where the corner leaves two readings within 0.01: the
   few best are compared again over all the card shows (a covered card's
   visible strip with its big pips, the top card's whole face;
   :mod:`vision.strip_match`).
6. **The deck's corner discriminant** (learned at enrollment from simulated
   camera views, :mod:`vision.discriminant`) has the last word where the best
   readings lie close, and says whether a weakly matching covered corner is an
   index corner at all.  A supposed covered card that the card below explains
   (its face read through the supposed card matches) is dropped: a pip in a
   wide visible strip is not a card.
7. **One deck**: no card is read twice in a frame; readings are given out
   surest first, and a card whose label is taken gets its next reading if it
   is close, or is left unread.

All of it is arrays in, :class:`Detection` list out: no camera, clock or file.
"""

from __future__ import annotations

import collections
import itertools
import math
from dataclasses import dataclass, field, replace

import cv2
import numpy as np

from vision.calibration import Calibration
from vision.deck import (
    BACK,
    CARD_W,
    QUERY_BLUR,
    STRIP_H,
    STRIP_W,
    STRIP_X0,
    STRIP_Y0,
    THUMB,
    DeckModel,
    RawWindows,
    WindowSource,
    centred,
    channels,
    embed,
    embed_raw,
    embedding_terms,
    normalize,
    raw_windows_at,
)
from vision.strip_match import strip_scores
from vision.window_match import gather_windows, window_scores

MIN_GAP, MAX_GAP = 0.22, 0.68  # stud row offsets, as fractions of a card width
SCAN = 2  # coarse scan subsampling (pixels of the template scale)
DOWN_GAP_MM = 8.0
COVERED_MIN = 0.86  # a covered card is only believed when its corner matches this well
COVERED_LOW, STRIP_RESCUE = 0.8, 0.88  # ... or this well, and the rest of its visible strip this well
BACK_MIN = 0.5  # whole-card likeness to the enrolled back that makes a blob face-down cards
PLAN_TAU = 0.5  # coarse score a guessed card edge must beat to be worth a card
CANDIDATES = 16  # best coarse templates whose cards are re-matched at full resolution
SHORTLIST = 4  # candidates given the full match (all views and camera-like variants)
PLAIN_MIN = 0.6  # plain correlation below this costs score one for one (blank paper is not a card)
PAD_X, PAD_Y = 2, 3  # slack of the fine match, template pixels
HALF_TURNED_FILL = 0.8  # a card on its edge fills its rectangle 0.85-0.96; two touching chips 0.70-0.74
FELT_BRIGHT = 1.6  # felt-coloured but this much brighter than the felt's median is ink (hot spots: 1.3; red pips on burgundy: 2-2.5)
HULL_FILL, HULL_SOLIDITY = 0.9, 0.6  # a bitten row blob: its hull fills its rectangle, the bites are under 40 %
SPLIT_RADII = (2, 4)  # half-size px: a gentle cut at narrow necks first, then a harder one
DY = 1  # rows of slack either side of the measured top edge
WIDE_BELOW = 0.9  # a corner matching less well than this is matched again over the whole band's height
WIDE_DY = range(-PAD_Y, PAD_Y + 1)  # ... (every window the band holds, whatever the measured top edge)
WIDE_DX = range(-1, 2)  # ... about where the first match put the corner along the band
WIDE_GAIN = 0.03  # ... and that reading is believed only if it matches this much better
MARGIN = 6  # crop rows above and below the card, template pixels
UNIQUE = True  # one deck on the table: no card is read twice in a frame
UNIQUE_SLACK = 0.05  # how far below a card's best reading its next may be and still be given to it
STRIP_LAMBDA = 1.0  # weight of the whole visible strip against the index corner
STRIP_BANDS = 3  # the visible strip is matched as this many bands across, each aligned on its own
STRIP_POOL = 2  # the strip is matched at 1/STRIP_POOL of the template scale (pips are big)
STRIP_DX, STRIP_DY = 1, 1  # slack of each band's alignment, pooled px
STRIP_BLUR = 0.5  # on the pooled query
STRIP_VARIANTS = (0, 2)  # which resamplings of each card are strip templates
STRIP_LABELS = 4  # the best index readings given the strip look
STRIP_MARGIN = 0.01  # index readings this far ahead of the next skip the strip look
LDA_WEIGHT, LDA_NATS = 0.02, 200.0  # the corner discriminant's say (see Detector._discriminant_stage)
INDEX_LOW, INDEX_M2 = 0.75, 2.5  # a covered card matching only this well is believed if its corner is this near (see _index_distance)
LDA_SLACK = 2  # template px either way around the read corner where the discriminant aligns each candidate
# A planned covered card is a ghost when the card below it, read through it, matches its own face this well
# and the planned card's corner matched less well than EXPLAIN_SCORE (real cards there match 0.9 and up).
EXPLAIN_MIN, EXPLAIN_SCORE = 0.85, 0.9
STRIP_TRIM = 3  # template px of a covered card's visible strip left out next to the card on top (its shadow)


@dataclass
class Detection:
    card: str | None
    face_up: bool
    corners: np.ndarray  # (4, 2) image px
    table_corners: np.ndarray  # (4, 2) table mm
    score: float
    covered: bool = False  # another card lies on part of it
    half_turned: bool = False
    blob: int = -1
    order: int = 0  # position in its blob (a stud row) from the row's first card

    @property
    def center(self) -> np.ndarray:
        return self.corners.mean(axis=0)

    @property
    def table_center(self) -> tuple[float, float]:
        (x0, y0), (x1, y1), (x2, y2), (x3, y3) = self.table_corners.tolist()  # plain floats: once per card per frame
        return ((x0 + x1 + x2 + x3) / 4, (y0 + y1 + y2 + y3) / 4)

    def to_json(self) -> dict[str, object]:
        return {
            "card": self.card,
            "face_up": self.face_up,
            "center": [round(float(v), 1) for v in self.center],
            "corners": [[round(float(x), 1), round(float(y), 1)] for x, y in self.corners],
        }


class FeltSegmenter:
    """Step 1 on its own: what on the table is not felt or rail (used by live enrollment too)."""

    def __init__(self, calib: Calibration) -> None:
        self.calib = calib
        self.t2i = calib.table_to_image
        w, h = calib.image_size
        self.small_size = (w // 2, h // 2)
        self._build_masks()

    # -- precomputation --------------------------------------------------------------------
    def _build_masks(self) -> None:
        lay = self.calib.layout
        sw, sh = self.small_size
        half = np.diag([0.5, 0.5, 1.0]) @ self.t2i

        def poly_mask(pts: np.ndarray) -> np.ndarray:
            m = np.zeros((sh, sw), np.uint8)
            p = cv2.perspectiveTransform(np.asarray(pts, np.float64).reshape(-1, 1, 2), half).reshape(-1, 2)
            cv2.fillPoly(m, [np.round(p).astype(np.int32)], 255)
            return m

        felt = poly_mask(lay.felt_polygon(144))
        table = poly_mask(lay.table_polygon(144))
        rail = cv2.subtract(table, felt)
        markers = np.zeros((sh, sw), np.uint8)
        for q in lay.markers.values():
            q = np.array(q)
            c = q.mean(axis=0)
            markers |= poly_mask(c + (q - c) * 1.7)
        self.felt_mask = cv2.subtract(felt, markers)
        self.rail_mask = cv2.subtract(rail, markers)
        self.marker_mask = markers
        rng = np.random.default_rng(0)
        self.samples = {}
        for name, m in (("felt", self.felt_mask), ("rail", self.rail_mask)):
            idx = np.flatnonzero(m)
            self.samples[name] = rng.choice(idx, size=min(3000, len(idx)), replace=False) if len(idx) else idx

    # -- step 1: foreground ----------------------------------------------------------------
    def foreground(self, frame: np.ndarray) -> np.ndarray:
        """Half-size mask of everything on the table that is not felt or rail."""
        if (frame.shape[1], frame.shape[0]) != self.calib.image_size:
            raise ValueError(
                f"frame is {frame.shape[1]}x{frame.shape[0]} but the calibration is for "
                f"{self.calib.image_size[0]}x{self.calib.image_size[1]}; calibrate this camera mode"
            )
        small = cv2.resize(frame, self.small_size, interpolation=cv2.INTER_AREA)
        hsv = cv2.cvtColor(small, cv2.COLOR_BGR2HSV)
        hue, sat, val = cv2.split(hsv)
        self._sat = sat
        self._val = val
        bg = np.zeros_like(hue)
        for name, region, tol in (("felt", self.felt_mask, 14), ("rail", self.rail_mask, 8)):
            idx = self.samples[name]
            if len(idx) == 0:
                continue
            hs = hue.ravel()[idx].astype(np.int32)
            hist = np.bincount(hs, minlength=180).astype(np.float32)
            hist = hist + np.roll(hist, 1) + np.roll(hist, -1)
            hm = int(np.argmax(hist))
            near = np.minimum(np.abs(hs - hm), 180 - np.abs(hs - hm)) <= tol
            sm = float(np.median(sat.ravel()[idx][near])) if near.any() else 0.0
            vm = float(np.median(val.ravel()[idx][near])) if near.any() else 255.0
            d = np.abs(np.arange(256) - hm)
            lut = np.where(np.minimum(d, 180 - d) <= tol, 255, 0).astype(np.uint8)
            same = cv2.bitwise_and(cv2.LUT(hue, lut), cv2.threshold(sat, 0.45 * sm, 255, cv2.THRESH_BINARY)[1])
            same = cv2.bitwise_and(same, cv2.threshold(val, FELT_BRIGHT * vm, 255, cv2.THRESH_BINARY_INV)[1])
            bg |= cv2.bitwise_and(same, region)
        fg = cv2.bitwise_and(cv2.bitwise_not(bg), cv2.bitwise_or(self.felt_mask, self.rail_mask))
        return cv2.medianBlur(fg, 3)

    def blobs(self, frame: np.ndarray) -> list[np.ndarray]:
        """Outer contours of the foreground, as table-mm point arrays (N, 2) float32."""
        return [self.to_table(c) for c in self.contours(frame)]

    def contours(self, frame: np.ndarray) -> list[np.ndarray]:
        """Outer contours of the foreground in half-size pixels."""
        contours, _ = cv2.findContours(self.foreground(frame), cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_SIMPLE)
        return [c for c in contours if cv2.contourArea(c) >= 60]

    def to_table(self, cnt: np.ndarray) -> np.ndarray:
        pts = cnt.reshape(-1, 2).astype(np.float64) * 2 + 0.5
        return self.calib.to_table(pts).astype(np.float32)

    def split_by_colour(self, cnt: np.ndarray) -> list[np.ndarray]:
        """Cut coloured card backs out of a blob of white faces (an up row lying against the hole cards).

        Uses the saturation of the last frame given to :meth:`foreground`.  Returns [] when
        the blob has no coloured part or is all coloured.
        """
        x, y, w, h = cv2.boundingRect(cnt)
        mask = np.zeros((h, w), np.uint8)
        cv2.drawContours(mask, [cnt - np.array([x, y], np.int32)], -1, 255, cv2.FILLED)
        sat = self._sat[y : y + h, x : x + w]
        coloured = cv2.bitwise_and(cv2.threshold(sat, 70, 255, cv2.THRESH_BINARY)[1], mask)
        k5 = cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (5, 5))
        coloured = cv2.morphologyEx(cv2.morphologyEx(coloured, cv2.MORPH_CLOSE, k5), cv2.MORPH_OPEN, k5)
        total = cv2.countNonZero(mask)
        share = cv2.countNonZero(coloured) / max(total, 1)
        if not 0.15 < share < 0.85:
            return []
        rest = cv2.bitwise_and(mask, cv2.bitwise_not(cv2.dilate(coloured, k5, iterations=2)))
        rest = cv2.morphologyEx(rest, cv2.MORPH_OPEN, np.ones((3, 3), np.uint8))
        out = []
        for part in (coloured, rest):
            cs, _ = cv2.findContours(part, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_SIMPLE)
            out.extend(c + np.array([x, y], np.int32) for c in cs if cv2.contourArea(c) >= 60)
        return out if len(out) >= 2 else []

    @staticmethod
    def _eroded(cnt: np.ndarray, radius: int) -> tuple[list[np.ndarray], np.ndarray, np.ndarray, np.ndarray]:
        """The blob's pieces after an erosion by ``radius``: (pieces, blob mask, kernel, mask offset)."""
        x, y, w, h = cv2.boundingRect(cnt)
        pad = radius + 2
        offset = np.array([x - pad, y - pad], np.int32)
        mask = np.zeros((h + 2 * pad, w + 2 * pad), np.uint8)
        cv2.drawContours(mask, [cnt - offset], -1, 255, cv2.FILLED)
        kernel = cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (2 * radius + 1, 2 * radius + 1))
        pieces, _ = cv2.findContours(cv2.erode(mask, kernel), cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_SIMPLE)
        return list(pieces), mask, kernel, offset

    @staticmethod
    def _grown(piece: np.ndarray, mask: np.ndarray, kernel: np.ndarray, offset: np.ndarray) -> list[np.ndarray]:
        """A piece grown back inside its blob, as contours in the frame's (half-size) pixels."""
        one = np.zeros_like(mask)
        cv2.drawContours(one, [piece], -1, 255, cv2.FILLED)
        cs, _ = cv2.findContours(cv2.bitwise_and(cv2.dilate(one, kernel), mask), cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_SIMPLE)
        return [c + offset for c in cs]

    @staticmethod
    def trim(cnt: np.ndarray, radius: int) -> np.ndarray | None:
        """The blob without what hangs on it thinner than ``2 * radius``: its biggest piece after an
        erosion, grown back inside the blob (an opening confined to this blob).  None if nothing is left."""
        pieces, mask, kernel, offset = FeltSegmenter._eroded(cnt, radius)
        if not pieces:
            return None
        cs = FeltSegmenter._grown(max(pieces, key=cv2.contourArea), mask, kernel, offset)
        return max(cs, key=cv2.contourArea) if cs else None

    @staticmethod
    def split(cnt: np.ndarray, radius: int) -> list[np.ndarray]:
        """Cut a blob at its narrow necks (cards that touch, a chip against a row).

        Erode by ``radius``, take the pieces, grow each back inside the blob.
        Returns [] when the blob does not come apart.
        """
        pieces, mask, kernel, offset = FeltSegmenter._eroded(cnt, radius)
        pieces = [p for p in pieces if cv2.contourArea(p) >= 30]
        if len(pieces) < 2:
            return []
        return [c for p in pieces for c in FeltSegmenter._grown(p, mask, kernel, offset) if cv2.contourArea(c) >= 60]


class Detector:
    """Detector for one deck seen through one calibrated camera.

    Construction precomputes everything that depends only on the calibration
    (region masks, sample points); :meth:`detect` is then one frame in,
    detections out.
    """

    def __init__(self, deck: DeckModel, calib: Calibration, face_floor: float = 0.6, reuse: bool = False) -> None:
        #: ``reuse``: a blob that has not moved or changed since the last frame keeps its cards
        #: without being read again (the service's steady state: most of the felt is still).
        self.reuse = reuse
        self._memory: list[tuple[np.ndarray, np.ndarray, list[Detection]]] = []
        self.deck = deck
        self.calib = calib
        self.face_floor = face_floor
        self.w_mm = calib.layout.card_width_mm
        self.h_mm = self.w_mm * deck.aspect
        self.scale = CARD_W / self.w_mm  # template px per mm
        self.card_h = deck.card_h
        self.t2i = calib.table_to_image
        self.segmenter = FeltSegmenter(calib)
        # Coarse templates (half resolution) for the scan.
        cs = (STRIP_W // SCAN, STRIP_H // SCAN)
        prim = deck.variants == 0
        small = np.stack([cv2.resize(im, cs, interpolation=cv2.INTER_AREA) for im in deck.images[prim]])
        self.coarse_labels = deck.labels[prim]
        self.coarse_ids = self.coarse_labels[::2].copy()  # the two plain views of each label are neighbours
        if not np.array_equal(self.coarse_labels, np.repeat(self.coarse_ids, 2)):
            raise ValueError("deck templates are not in the enrolled order")
        order = np.argsort(deck.labels, kind="stable")
        self.by_label = {int(lab): order[deck.labels[order] == lab] for lab in np.unique(deck.labels)}
        self.primary = np.zeros((int(deck.labels.max()) + 1, 2), np.int64)
        for lab, ids in self.by_label.items():
            self.primary[lab] = ids[:2]  # the two plain views come first
        # every label's templates (views and variants), padded by repeating its last
        g = max(len(ids) for ids in self.by_label.values())
        self.label_tids = np.zeros((int(deck.labels.max()) + 1, g), np.int64)
        for lab, ids in self.by_label.items():
            self.label_tids[lab] = np.concatenate([ids, np.repeat(ids[-1:], g - len(ids))])
        self.c_mean = cv2.resize(deck.mean, cs, interpolation=cv2.INTER_AREA)
        self.c_weight = cv2.resize(deck.weight, cs, interpolation=cv2.INTER_AREA)[:, :, None]
        self.coarse = embed(small, self.c_mean, self.c_weight).T.copy()  # (D, N)
        self.labels = deck.labels
        # the fine match's templates with the weight map folded in (see vision.window_match)
        self._wt, self._basis = embedding_terms(deck.mean, deck.weight)
        self._weighted = np.ascontiguousarray(deck.templates * self._wt[None, :], dtype=np.float32)
        self._shift = np.ascontiguousarray(deck.templates @ self._basis.T, dtype=np.float32)
        # ... and the plain views for the discriminant's alignment: a window's channel means times
        # each channel's template sum is what centring it takes off (the colour sums count twice)
        self._plain = np.ascontiguousarray(deck.plain, dtype=np.float32)
        npx, quarter = STRIP_H * STRIP_W, (STRIP_H // 2) * (STRIP_W // 2)
        self._plain_shift = np.ascontiguousarray(np.stack([
            self._plain[:, :npx].sum(axis=1), 2 * self._plain[:, npx : npx + quarter].sum(axis=1),
            2 * self._plain[:, npx + quarter :].sum(axis=1), np.zeros(len(self._plain), np.float32)], axis=1), dtype=np.float32)
        self.is_face = deck.labels != BACK
        # every face, both ways round, at the back-thumbnail size (a row end that is a whole face)
        plain_faces = deck.cards[(deck.variants == 0) & self.is_face] if len(deck.cards) else deck.cards
        self.face_thumbs = np.stack(
            [normalize(cv2.resize(c.astype(np.float32), THUMB, interpolation=cv2.INTER_AREA)).ravel() for c in plain_faces]
        ) if len(plain_faces) else np.zeros((0, 0), np.float32)
        if len(deck.cards):
            self._strip_setup()
        #: Table-space outlines of the last frame's big blobs that are not cards (hands, arms):
        #: the tracker holds a seat still while something covers it.
        self.occluders: list[np.ndarray] = []

    def foreground(self, frame: np.ndarray) -> np.ndarray:
        return self.segmenter.foreground(frame)

    # -- steps 2-4 -------------------------------------------------------------------------
    def detect(self, frame: np.ndarray) -> list[Detection]:
        """All cards in one frame (see the module docstring for how)."""
        out: list[Detection] = []
        rows: list[_Row] = []
        card_area = self.w_mm * self.h_mm
        self.occluders: list[np.ndarray] = []
        queue = [(c, 0) for c in self.segmenter.contours(frame)]
        blob_id = -1
        memory: list[tuple[np.ndarray, np.ndarray, list[Detection]]] = []
        fresh: dict[int, tuple[np.ndarray, np.ndarray]] = {}
        while queue:
            cnt, depth = queue.pop()
            blob_id += 1
            tab = self.segmenter.to_table(cnt)
            area = cv2.contourArea(tab)
            if area < 0.2 * card_area:
                continue
            (cx, cy), (rw, rh), ang = cv2.minAreaRect(tab)
            if self.reuse:
                geo = np.array([cx, cy, min(rw, rh), max(rw, rh)])
                look = self._look(cnt)
                old = next((d for g, lk, d in self._memory if np.abs(g - geo).max() < 1.5 and float(lk @ look) > 0.97), None)
                if old is not None:
                    memory.append((geo, look, old))
                    out.extend(replace(d, blob=blob_id) for d in old)
                    continue
                fresh[blob_id] = (geo, look)
            e1 = np.array([math.cos(math.radians(ang)), math.sin(math.radians(ang))])
            e2 = np.array([-e1[1], e1[0]])
            center = np.array([cx, cy])
            options = [
                (along, ua, uc)
                for along, across, ua, uc in ((rw, rh, e1, e2), (rh, rw, e2, e1))
                if abs(across - self.h_mm) <= 0.16 * self.h_mm and 0.2 * self.w_mm <= along <= 4.9 * self.w_mm
            ]
            fill = area / max(rw * rh, 1e-6)
            if fill < 0.7 and options:
                # Card art of the felt's colour (a green court card on green felt) bites into the blob;
                # its outline still is the row's: the convex hull fills the rectangle, the bites are inside.
                hull_area = cv2.contourArea(cv2.convexHull(tab))
                if hull_area / max(rw * rh, 1e-6) >= HULL_FILL and area / max(hull_area, 1e-6) >= HULL_SOLIDITY:
                    fill = 1.0
            short, long_ = min(rw, rh), max(rw, rh)
            if (depth == 0 and options and fill >= 0.7 and short < 1.1 * self.w_mm
                    and 1.04 * self.h_mm < long_ <= 1.16 * self.h_mm):
                # One card, a little long: a thin tail (a rail's edge, a chip's rim) may hang on it.
                # Cut it off at its neck if it comes away; the card alone is what is measured.
                core = self._trimmed(cnt)
                if core is not None:
                    queue.append((core, depth + 1))
                    continue
            if fill < 0.7 or not options:
                # Not one row of parallel cards.  Touching rows (or a chip against a row) come apart
                # at their narrow neck; what does not is a hand, an arm, a heap: an occluder.
                # (A card with a thin line hanging on it fills its rectangle badly: cut that too.)
                if depth < 2 and area > 0.6 * card_area:
                    # (One card's worth with a line hanging on it is trimmed before its colours are
                    # split: a patterned back would otherwise fall apart into its colours.)
                    parts: list[np.ndarray] = []
                    for radius in SPLIT_RADII:
                        parts = self.segmenter.split(cnt, radius)
                        if parts:
                            break
                    if not parts and area <= 1.2 * card_area:
                        core = self._trimmed(cnt)
                        parts = [core] if core is not None else []
                    if not parts:
                        parts = self.segmenter.split_by_colour(cnt)
                    if parts:
                        queue.extend((p, depth + 1) for p in parts)
                        continue
                if area > 0.5 * card_area:
                    self.occluders.append(tab.reshape(-1, 2))
                continue
            for along, ua, uc in options:
                if along < 0.72 * self.w_mm:  # narrower than a card lying flat: lifted on its edge
                    # (a card's edge is straight and fills its rectangle; two chips side by side do not)
                    if len(options) == 1 and fill >= HALF_TURNED_FILL:
                        out.append(self._half_turned(center, along, ua, uc, blob_id))
                    continue
                rows.append(self._prepare(frame, center, along, ua, uc, blob_id, len(options) > 1))
        self._backness(rows)
        for r in rows:
            if not r.down:
                self._bands(r)
        out.extend(self._read_rows(rows))
        if self.reuse:
            for b, (geo, look) in fresh.items():
                memory.append((geo, look, [d for d in out if d.blob == b]))
            self._memory = memory
        return out

    def _trimmed(self, cnt: np.ndarray) -> np.ndarray | None:
        """The blob with a thin line hanging on it cut off, or None if nothing thin hangs on it.

        Something came off if the blob lost area, or if its rectangle shrank (a line a pixel
        or two wide is nothing in area but pulls the rectangle, and with it the card, askew).
        """
        core = self.segmenter.trim(cnt, SPLIT_RADII[0])
        if core is None or cv2.contourArea(core) < 0.8 * cv2.contourArea(cnt):
            return None
        if cv2.contourArea(core) < 0.995 * cv2.contourArea(cnt):
            return core
        before = max(cv2.minAreaRect(cnt)[1])
        return core if max(cv2.minAreaRect(core)[1]) < 0.98 * before else None

    def _look(self, cnt: np.ndarray) -> np.ndarray:
        """A blob's appearance in a few numbers (brightness over its box), unit norm."""
        x, y, w, h = cv2.boundingRect(cnt)
        v = cv2.resize(self.segmenter._val[y : y + h, x : x + w], (12, 12), interpolation=cv2.INTER_AREA).astype(np.float32).ravel()
        v -= v.mean()
        return v / (np.linalg.norm(v) + 1e-6)

    # -- per-blob preparation ----------------------------------------------------------------
    def _half_turned(self, center: np.ndarray, along: float, ua: np.ndarray, uc: np.ndarray, blob_id: int) -> Detection:
        corners = np.array(
            [center + sa * ua * along / 2 + sc * uc * self.h_mm / 2 for sa, sc in ((-1, -1), (1, -1), (1, 1), (-1, 1))]
        )
        return Detection(None, False, self.calib.to_image(corners), corners, 0.0, half_turned=True, blob=blob_id)

    def _crop(self, frame: np.ndarray, origin: np.ndarray, ua: np.ndarray, uc: np.ndarray, size: tuple[int, int]) -> np.ndarray:
        """Resample a table rectangle (origin corner, axes ua/uc) into a crop at the template scale.

        Where the camera sees the table at more than the template scale, sample at
        a whole multiple and area-average down, so close-ups do not alias.
        """
        center = origin + ua * size[0] / (2 * self.scale) + uc * size[1] / (2 * self.scale)
        k = max(1, round(self.calib.px_per_mm((float(center[0]), float(center[1]))) / self.scale))
        s = self.scale * k
        m = np.array([[ua[0] / s, uc[0] / s, origin[0]], [ua[1] / s, uc[1] / s, origin[1]], [0, 0, 1]])
        big = cv2.warpPerspective(
            frame, self.t2i @ m, (size[0] * k, size[1] * k),
            flags=cv2.INTER_LINEAR | cv2.WARP_INVERSE_MAP, borderMode=cv2.BORDER_REPLICATE,
        )
        return big if k == 1 else cv2.resize(big, size, interpolation=cv2.INTER_AREA)

    def _prepare(
        self, frame: np.ndarray, center: np.ndarray, along: float, ua: np.ndarray, uc: np.ndarray, blob_id: int, ambiguous: bool
    ) -> _Row:
        if ua[0] * uc[1] - ua[1] * uc[0] < 0:  # keep the crop unmirrored
            uc = -uc
        length_px = max(CARD_W, round(along * self.scale))
        # Card height, not the blob's: a shadow widens the blob, the card's top edge is its edge.
        origin = center - ua * along / 2 - uc * self.h_mm / 2
        m = MARGIN
        crop = self._crop(frame, origin - uc * m / self.scale, ua, uc, (length_px, self.card_h + 2 * m))
        last = length_px - CARD_W
        none = np.zeros((0, 0, 3), np.float32)
        r = _Row(blob_id, origin, ua, uc, along, length_px, last, (none, none), 0.0, ambiguous, crop=crop)
        if len(self.deck.back_thumbs):
            card = crop[m : m + self.card_h]
            ends = [card[:, :CARD_W]] if last == 0 else [card[:, :CARD_W], card[:, last : last + CARD_W]]
            r.thumbs = [cv2.resize(e, THUMB, interpolation=cv2.INTER_AREA) for e in ends]
        return r

    def _backness(self, rows: list[_Row]) -> None:
        """Likeness of each row's two ends to the enrolled back, for all rows at once, and whether the
        row is face-down cards: like the back, and more like it than any face is like either end (a
        top card lies whole at one end of its row; a court card's red and black can pass for a
        red patterned back at this size, plastic's jack of spades 0.51)."""
        if not len(self.deck.back_thumbs):
            return
        small = [t for r in rows for t in r.thumbs]
        if not small:
            return
        h, w = small[0].shape[:2]
        x = normalize(channels(np.stack(small).reshape(-1, w, 3)).reshape(len(small), h, w, 3)).reshape(len(small), -1)
        like = (x @ self.deck.back_thumbs.T).max(axis=1)
        face = (x @ self.face_thumbs.T).max(axis=1) if len(self.face_thumbs) else np.zeros(len(x), np.float32)
        k = 0
        for r in rows:
            n = len(r.thumbs)
            r.backness = float(like[k : k + n].max())
            r.down = r.backness >= BACK_MIN and r.backness > float(face[k : k + n].max())
            k += n

    def _bands(self, r: _Row) -> None:
        """The top bands of a face row, both ways round, and where each card's top edge lies."""
        m = MARGIN
        crop = r.crop
        y0, y1 = m + STRIP_Y0 - PAD_Y, m + STRIP_Y0 + STRIP_H + PAD_Y
        turned = cv2.rotate(crop, cv2.ROTATE_180)
        r.bands = tuple(
            np.ascontiguousarray(cv2.GaussianBlur(channels(b[y0 - 3 : y1 + 3]), (0, 0), QUERY_BLUR)[3:-3]) for b in (crop, turned)
        )
        # Where is each card's top edge?  Cards in a row sit a little higher or lower than the
        # blob's fitted edge; the paper-over-felt edge says by how much, column by column.
        tops = []
        for b in (crop, turned):
            g = cv2.cvtColor(b[: 2 * m + 1], cv2.COLOR_BGR2GRAY).astype(np.int16)
            step = g[1:] - g[:-1]  # bright paper below darker felt: positive
            tops.append(np.argmax(step, axis=0).astype(np.int32) + 1 - m)
        r.tops = (tops[0], tops[1])
        # the median top edge under each corner window (card positions p: columns p+2 .. p+STRIP_W)
        meds = []
        for t in tops:
            if len(t) >= STRIP_W:
                meds.append(_sliding_median(t[2:], STRIP_W - 2, -PAD_Y + 1, PAD_Y - 1))
            else:
                meds.append(np.zeros(0, np.int32))
        r.top_median = (meds[0], meds[1])

    # -- recognition, batched over the whole frame ---------------------------------------------
    def _read_rows(self, rows: list[_Row]) -> list[Detection]:
        self._strips: dict[tuple[int, int, int], tuple[np.ndarray, np.ndarray]] = {}  # ... and its strip score
        face_rows = [r for r in rows if not r.down]
        # Every face row's two bands side by side in one image, whose corner windows the fine match
        # gathers by index (the colour sums and integral images made once a frame).
        bands = [band for r in face_rows for band in r.bands]
        if bands:
            lefts = np.cumsum([0] + [b.shape[1] for b in bands[:-1]]).tolist()
            for k, r in enumerate(face_rows):
                r.atlas_cols = (lefts[2 * k], lefts[2 * k + 1])
            self._atlas = WindowSource(np.concatenate(bands, axis=1), STRIP_H, STRIP_W)
        # Coarse scan of both bands of every face row in one matrix product.
        smalls = [self._scan_band(band[PAD_Y : PAD_Y + STRIP_H]) for r in face_rows for band in r.bands]
        if smalls:
            # every band side by side in one image; a window at every position that lies in one band
            n_pos = [s.shape[1] - STRIP_W // SCAN + 1 for s in smalls]
            lefts = np.cumsum([0] + [s.shape[1] for s in smalls[:-1]])
            cols = np.concatenate([s0 + np.arange(n) for s0, n in zip(lefts, n_pos, strict=True)])
            raw = raw_windows_at(np.concatenate(smalls, axis=1), np.zeros_like(cols), cols, STRIP_H // SCAN, STRIP_W // SCAN)
            scores = embed_raw(raw, self.c_mean, self.c_weight) @ self.coarse
            bounds = np.cumsum([0, *n_pos])
            lab = np.maximum(scores[:, 0::2], scores[:, 1::2])  # per label: either plain view
            near = lab.copy()  # ... the best of each position and its neighbours within its band
            near[1:] = np.maximum(near[1:], lab[:-1])
            near[:-1] = np.maximum(near[:-1], lab[1:])
            starts, ends_ = bounds[:-1], bounds[1:] - 1
            near[starts] = np.maximum(lab[starts], lab[np.minimum(starts + 1, ends_)])
            near[ends_] = np.maximum(lab[ends_], lab[np.maximum(ends_ - 1, starts)])
            for k, r in enumerate(face_rows):
                r.scans = [scores[bounds[2 * k] : bounds[2 * k + 1]], scores[bounds[2 * k + 1] : bounds[2 * k + 2]]]
                r.lscans = [near[bounds[2 * k] : bounds[2 * k + 1]], near[bounds[2 * k + 1] : bounds[2 * k + 2]]]
        # Which way round is each row?  Under the right plan the row's far end holds the top
        # card's corner; under the wrong one it is covered.  Single cards read fine either way.
        ends = []
        for r in face_rows:
            if r.last >= MIN_GAP * CARD_W:
                for way in (0, 1):
                    ends.append((r, way, -1, [(way, r.last)], self._top_candidates(r, way, r.last)))
        end_reads = self._refine_batch(ends, plain_views=True)
        # Neither end matched well: a card sits higher or lower than the row's edge says (its top
        # edge hidden behind a neighbour's corner peeking out above it).  Read both ends again with
        # the whole band's vertical slack.
        weak_rows = {id(r) for r, way, _i, _v, _c in ends if max(end_reads[(id(r), 0, -1)][1], end_reads[(id(r), 1, -1)][1]) < WIDE_BELOW}
        wide_ends = [(r, way, i, self._wide_views(way, end_reads[(id(r), way, i)]), c) for r, way, i, _v, c in ends if id(r) in weak_rows]
        for key, read in self._refine_batch(wide_ends, plain_views=True, xs=WIDE_DX, dys=WIDE_DY).items():
            if read[0] != BACK and read[1] >= end_reads[key][1] + WIDE_GAIN:
                end_reads[key] = read
        jobs = []
        for r in face_rows:
            if r.last < MIN_GAP * CARD_W:
                r.way, positions = 0, [0]
            else:
                r.way = self._which_way(end_reads[(id(r), 0, -1)], end_reads[(id(r), 1, -1)])
                positions = self._plan(r.scans[r.way], r.last)
            r.positions = positions
            for i, p in enumerate(positions):
                views = [(r.way, p)]
                if i == len(positions) - 1:  # the top card: read both of its corners
                    views.append((1 - r.way, r.last - p))
                cand = self._top_candidates(r, r.way, p) if len(views) > 1 else self._candidates(r.lscans[r.way], p)
                jobs.append((r, r.way, i, views, cand))
        reads = self._refine_batch(jobs)
        # A covered card whose corner did not match where the coarse plan put it: look along the
        # whole gap its neighbours leave before giving it up (the coarse scan steps 2 px and blurs,
        # and a card turned a little off its row can score less at its corner than a pip beside it).
        retry = []
        gap = math.ceil(MIN_GAP * CARD_W)  # the least offset between two cards of a row
        for r, way, i, views, _cand in jobs:
            if 0 < i < len(r.positions) - 1 and reads[(id(r), way, i)][1] < COVERED_MIN:
                p = views[0][1]
                lo, hi = r.positions[i - 1] + gap, r.positions[i + 1] - gap
                for k, q in enumerate(self._retry_positions(p, lo, hi)):
                    if q != p:
                        retry.append((r, way, 1000 * (k + 1) + i, [(views[0][0], q)], self._candidates(r.lscans[way], q)))
        if retry:
            again = self._refine_batch(retry)
            # Surest first, and two cards never take one corner (a guessed gap beside a weak card may
            # find that card's corner too); further along the gap only a clear corner counts (a pip
            # beside it may match a little better than a corner turned off its row).
            retry.sort(key=lambda job: -again[(id(job[0]), job[1], job[2])][1])
            for r, way, key, views, _cand in retry:
                i = key % 1000
                near = key // 1000 <= 2  # the first two places, 5 px to either side (see _retry_positions)
                need = reads[(id(r), way, i)][1] if near else max(reads[(id(r), way, i)][1], COVERED_MIN)
                q = views[0][1]
                apart = r.positions[i - 1] + gap <= q <= r.positions[i + 1] - gap
                if again[(id(r), way, key)][1] > need and apart:
                    reads[(id(r), way, i)] = again[(id(r), way, key)]
                    r.positions[i] = q
        # Still weak: the card may sit higher or lower than the row's edge says (its top edge hidden
        # behind a neighbour's corner peeking out above it).  Match it again over the band's whole
        # height; believe the new reading only if it matches clearly better (more slack flatters
        # every label a little) and is a face (the band's edge rows hold felt, which flatters the back).
        weak = [(r, way, i, self._wide_views(way, reads[(id(r), way, i)]), cand)
                for r, way, i, _views, cand in jobs if reads[(id(r), way, i)][1] < WIDE_BELOW]
        for key, read in self._refine_batch(weak, xs=WIDE_DX, dys=WIDE_DY).items():
            if read[0] != BACK and read[1] >= reads[key][1] + WIDE_GAIN:
                reads[key] = read
        self._merge_split_cards(face_rows, reads)
        opts: dict[tuple[int, int, int], tuple[np.ndarray, np.ndarray]] = {}
        self._strip_stage(face_rows, reads, opts)
        self._discriminant_stage(face_rows, reads, opts)
        self._explain_away(face_rows, reads)
        out: list[Detection] = []
        for r in rows:
            if r.down:
                out.extend(self._down_cards(r))
            else:
                r.total = float(np.mean([reads[(id(r), r.way, i)][1] for i in range(len(r.positions))]))
        # Blobs that fit a card row both ways along (nearly square): keep the better reading.
        chosen: dict[int, _Row] = {}
        for r in rows:
            if r.down:
                continue
            if r.blob not in chosen or r.total > chosen[r.blob].total:
                chosen[r.blob] = r
        no_back = not self.deck.has_back
        faces: list[tuple[int, tuple[int, int, int]]] = []
        # Covered cards whose corner matched too weakly to believe: is there an index corner at all?
        doubtful = [(r, (id(r), r.way, i)) for r in chosen.values() for i in range(1, len(r.positions) - 1)
                    if INDEX_LOW <= reads[(id(r), r.way, i)][1] < COVERED_MIN and reads[(id(r), r.way, i)][0] != BACK]
        like_index = dict(zip([k for _r, k in doubtful], self._index_distance(doubtful, reads) <= INDEX_M2, strict=True))
        for r in chosen.values():
            positions = r.positions
            backs = sum(1 for i in range(len(positions)) if reads[(id(r), r.way, i)][0] == BACK)
            if backs * 2 > len(positions):  # face-down cards side by side that looked less like the back
                out.extend(self._down_cards(r))
                continue
            for i, p in enumerate(positions):
                label, score = reads[(id(r), r.way, i)][:2]
                strip = reads[(id(r), r.way, i)][5] if len(reads[(id(r), r.way, i)]) > 5 else 0.0
                covered = i < len(positions) - 1
                # A covered card whose corner matched poorly is a gap the plan guessed, with no corner in
                # it, unless the rest of its visible strip matches the same card well.
                # (A rescued card must not read as its neighbour: a guessed gap inside a card shows that card.)
                near = {reads[(id(r), r.way, k)][0] for k in (i - 1, i + 1) if 0 <= k < len(positions)}
                rescued = score >= COVERED_LOW and strip >= STRIP_RESCUE and label not in near
                rescued = rescued or like_index.get((id(r), r.way, i), False)
                # (Whether a corner is there at all is the best corner match of any candidate: the strip
                # look or the discriminant may have picked a label that matched the corner a little less.)
                present = max(score, float(np.max(reads[(id(r), r.way, i)][3], initial=-np.inf)))
                gated = (covered and i > 0 and present < COVERED_MIN and not rescued) or i in r.ghosts
                if gated:
                    continue
                tc = self._card_corners(r, p / self.scale, r.way)
                if label == BACK or (no_back and score < self.face_floor):
                    out.append(Detection(None, False, self.calib.to_image(tc), tc, score, covered, blob=r.blob, order=i))
                else:
                    card = self.deck.code(label) if score >= self.face_floor else None
                    out.append(Detection(card, True, self.calib.to_image(tc), tc, score, covered, blob=r.blob, order=i))
                    if card is not None:
                        faces.append((len(out) - 1, (id(r), r.way, i)))
        if UNIQUE:
            self._unique(out, faces, reads, opts)
        return out

    @staticmethod
    def _retry_positions(p: int, lo: int, hi: int) -> list[int]:
        """Where to look again for a covered card whose corner matched weakly at ``p``: 5 px to
        either side first, then every 5 px of the gap ``lo``..``hi`` not yet covered (the fine match
        has 2 px of slack either way).  Positions from the third on must match clearly to count."""
        near = [int(np.clip(p + dp, lo, hi)) for dp in (-5, 5)]
        step = 2 * PAD_X + 1
        far = [q for q in range(lo, hi + 1, step) if min(abs(q - p), *(abs(q - n) for n in near)) > PAD_X]
        return [*near, *far]

    @staticmethod
    def _which_way(end0: tuple, end1: tuple) -> int:  # type: ignore[type-arg]
        """Which way a row lies, from the readings of its far end under each way: the better one, but
        an end that reads as the back is not the top card's corner (the top card lies face up; a covered
        card's picture can pass for a patterned back), whatever it scored."""
        back0, back1 = end0[0] == BACK, end1[0] == BACK
        if back0 != back1:
            return 1 if back0 else 0
        return 0 if end0[1] >= end1[1] else 1

    @staticmethod
    def _wide_views(way: int, read: tuple) -> list[tuple[int, int]]:  # type: ignore[type-arg]
        """The views of a reading, each at the position along its band where the fine match put the
        corner (the second look over the band's height then needs only a pixel of slack along)."""
        return [(bw, int(corner[0])) for bw, corner in zip((way, 1 - way)[: len(read[4])], read[4], strict=True)]

    def _merge_split_cards(self, face_rows: list[_Row], reads: dict) -> None:  # type: ignore[type-arg]
        """Two covered cards side by side that both read poorly may be one card the plan cut in two
        (two weak coarse matches outscored one good one): look for one card between their
        neighbours, and if one reads as a covered card must, it replaces both."""
        jobs, pairs = [], []
        for r in face_rows:
            n = len(r.positions)
            weak = [0 < i < n - 1 and reads[(id(r), r.way, i)][1] < COVERED_MIN for i in range(n)]
            for i in range(1, n - 2):
                if not (weak[i] and weak[i + 1]) or (pairs and pairs[-1][0] is r and pairs[-1][1] == i - 1):
                    continue
                lo = r.positions[i - 1] + math.ceil(MIN_GAP * CARD_W)
                hi = r.positions[i + 2] - math.ceil(MIN_GAP * CARD_W)
                if hi < lo:
                    continue
                pairs.append((r, i))
                for q in range(lo, hi + 1, 2 * PAD_X + 1):  # the fine match's slack covers the steps between
                    jobs.append((r, r.way, 10000 * len(pairs) + q, [(r.way, q)], self._candidates(r.lscans[r.way], q)))
        if not jobs:
            return
        found = self._refine_batch(jobs)
        best: dict[int, tuple[float, int, tuple]] = {}  # type: ignore[type-arg]
        for r, way, key, _views, _c in jobs:
            read = found[(id(r), way, key)]
            k = key // 10000
            if read[0] != BACK and (k not in best or read[1] > best[k][0]):
                best[k] = (read[1], int(read[4][0][0]), read)  # where the match put the card's corner
        for k in sorted(best, reverse=True):  # from the row's far end, so the earlier indices stay put
            score, q, read = best[k]
            r, i = pairs[k - 1]
            if score < COVERED_MIN:
                continue
            rows = [reads[(id(r), r.way, j)] for j in range(len(r.positions))]
            rows[i : i + 2] = [read]
            for j in range(len(r.positions)):
                reads.pop((id(r), r.way, j), None)
            r.positions[i : i + 2] = [q]
            for j, rd in enumerate(rows):
                reads[(id(r), r.way, j)] = rd

    def _unique(self, out: list[Detection], faces: list[tuple[int, tuple[int, int, int]]], reads: dict,  # type: ignore[type-arg]
                opts: dict[tuple[int, int, int], tuple[np.ndarray, np.ndarray]]) -> None:
        """One deck: no card lies twice.  Cards are given their labels surest first (by the lead of
        their best reading over the next); a card whose best label is taken gets its next best."""
        ranked = []
        for j, key in faces:
            labels, scores = opts.get(key, (reads[key][2], reads[key][3]))
            order = np.argsort(-scores)
            labels, scores = labels[order], scores[order]
            if labels[0] != reads[key][0]:
                continue
            lead = float(scores[0] - scores[1]) if len(scores) > 1 else 1.0
            ranked.append((lead, j, labels, scores))
        ranked.sort(key=lambda x: -x[0])
        taken: set[int] = set()
        for _lead, j, labels, scores in ranked:
            given = None
            for lab, sc in zip(labels, scores, strict=True):
                if lab == BACK or scores[0] - sc > UNIQUE_SLACK:
                    break
                if int(lab) not in taken:
                    given = int(lab)
                    break
            if given is None:  # its best reading is a surer card's and nothing close is free: not read
                out[j] = replace(out[j], card=None)
                continue
            taken.add(given)
            if given != labels[0]:
                out[j] = replace(out[j], card=self.deck.code(given))

    def _strip_setup(self) -> None:
        """Whole-card templates for :meth:`_strip_stage`, pooled, and their column sums (any visible width in O(1)).

        They depend on the deck alone, so every detector of one deck shares one copy.
        """
        key = (id(self.deck), STRIP_POOL, STRIP_BANDS, STRIP_VARIANTS)
        if key not in _STRIP_CACHE:
            _STRIP_CACHE[key] = _strip_templates(self.deck)
        (self.strip_t, self.strip_csum, self.strip_csq, self.strip_cuts, self.strip_by_label, self.strip_hw, _deck) = _STRIP_CACHE[key]

    def _strip_stage(self, face_rows: list[_Row], reads: dict,  # type: ignore[type-arg]
                     opts: dict[tuple[int, int, int], tuple[np.ndarray, np.ndarray]]) -> None:
        """Second look at each face card: the whole strip a covered card shows (its big pips), the top card's whole face.

        The index corner's suit sign is 6-7 template pixels; the pips in the rest of the
        visible strip carry the suit (and the rank's pip layout) at twice that size.  The
        index-corner shortlist is re-ranked by index score + STRIP_LAMBDA * strip score
        (normalised correlation over the visible part only, in bands across the card, each
        band aligned on its own since a card lies up to 1.5 degrees off its row).  Batched
        over every card of the frame.
        """
        if not len(self.deck.cards):
            return
        looks, keys, cands = [], [], []
        for r in face_rows:
            n = len(r.positions)
            for i, p in enumerate(r.positions):
                key = (id(r), r.way, i)
                label, _score, cand, total, corner = reads[key][:5]
                if label == BACK or len(cand) < 2:
                    continue
                order = np.argsort(-total)[:STRIP_LABELS]
                gated = 0 < i < n - 1 and total[order[0]] < COVERED_MIN
                if total[order[0]] - total[order[1]] > STRIP_MARGIN and not gated:
                    continue
                v = CARD_W if i == n - 1 else r.positions[i + 1] - p
                looks.append((r, corner[0], v, cand[order]))
                keys.append(key)
                cands.append(cand[order])
        if not keys:
            return
        strip = self._strip_scores(looks)
        for key, cand, sc in zip(keys, cands, strip, strict=True):
            _label, _score, all_cand, total, corner = reads[key][:5]
            idx = np.searchsorted(all_cand, cand, sorter=np.argsort(all_cand))
            idx = np.argsort(all_cand)[idx]
            comb = total[idx] + STRIP_LAMBDA * sc[: len(cand)]
            j = int(np.argmax(comb))
            opts[key] = (cand, comb / (1 + STRIP_LAMBDA))
            self._strips[key] = (cand, sc[: len(cand)])
            reads[key] = (int(cand[j]), float(total[idx[j]]), all_cand, total, corner, float(sc[j]))

    def _strip_scores(self, looks: list[tuple[_Row, tuple[int, int], int, np.ndarray]]) -> np.ndarray:
        """Strip scores of candidate labels: (len(looks), STRIP_LABELS), best first as given.

        A look is (row, the card's corner in the row's crop (template px, as the fine match
        found it), visible width (template px), up to STRIP_LABELS labels).
        """
        k = STRIP_POOL
        hp, wp = self.strip_hw
        dx, dy = STRIP_DX, STRIP_DY
        regions, vis, tid_rows = [], [], []
        per_label = max(len(g) for g in self.strip_by_label.values())
        for r, corner, v, cand in looks:
            if r.full is None and r.crop is not None:  # the row as the chosen way reads it, pooled, as channels
                c = r.crop if r.way == 0 else cv2.rotate(r.crop, cv2.ROTATE_180)
                if k > 1:
                    c = cv2.resize(c, (c.shape[1] // k, c.shape[0] // k), interpolation=cv2.INTER_AREA)
                f = cv2.GaussianBlur(channels(c), (0, 0), STRIP_BLUR)
                pad = wp + dx + 1
                r.full = cv2.copyMakeBorder(f, dy + 1, dy + 1, pad, pad, cv2.BORDER_REPLICATE)
            full = r.full
            assert full is not None
            ox, oy = wp + dx + 1, dy + 1  # the padding
            vis.append(min(wp, max(STRIP_W // k, (v - STRIP_TRIM) // k)))
            cx = ox + round(corner[0] / k) - dx
            cy = oy + round((MARGIN + corner[1]) / k) - dy
            regions.append(full[cy : cy + hp + 2 * dy, cx : cx + wp + 2 * dx])
            ids = np.concatenate([self.strip_by_label[int(lab)] for lab in cand])
            rows_ = np.full(STRIP_LABELS * per_label, ids[-1])
            rows_[: len(ids)] = ids
            tid_rows.append(rows_)
        reg = np.stack(regions)  # (C, hp + 2dy, wp + 2dx, 3)
        tids = np.stack(tid_rows)  # (C, T)
        strip = np.empty(tids.shape, np.float32)
        strip_scores(reg, np.array(vis, np.int64), tids, self.strip_cuts, dy, dx, self.strip_t, self.strip_csum, self.strip_csq, strip)
        return strip.reshape(len(looks), STRIP_LABELS, per_label).max(axis=2)

    def _explain_away(self, face_rows: list[_Row], reads: dict) -> None:  # type: ignore[type-arg]
        """A covered card the card below it explains is not a card.

        A wide visible strip shows the covered card's own big pips, and a pip near the top
        can pass for an index corner: the plan then puts a card there that is not.  If the
        card to its left, read over the width up to the next card, matches its own face
        there (its pips continue through the supposed card), the supposed card is dropped.
        """
        if not len(self.deck.cards):
            return
        looks, who = [], []
        for r in face_rows:
            n = len(r.positions)
            for k in range(1, n - 1):
                if reads[(id(r), r.way, k)][1] >= EXPLAIN_SCORE:
                    continue
                below = reads[(id(r), r.way, k - 1)]
                if below[0] == BACK:
                    continue
                width = r.positions[k + 1] - r.positions[k - 1]
                looks.append((r, below[4][0], width, np.array([below[0]])))
                who.append((r, k))
        if not looks:
            return
        ext = self._strip_scores(looks)[:, 0]
        for (r, k), e in zip(who, ext, strict=True):
            if e >= EXPLAIN_MIN and reads[(id(r), r.way, k)][1] < EXPLAIN_SCORE:
                r.ghosts.add(k)

    def _corner_at(self, r: _Row, band_way: int, corner: tuple[int, int]) -> tuple[int, int] | None:
        """Where the windows +-LDA_SLACK px around a read corner (where the fine match put it) start in
        the band atlas (row, column of the first), or None off the band."""
        sl = LDA_SLACK
        cx, cy = corner
        band = r.bands[band_way]
        y0 = min(max(cy + PAD_Y - sl, 0), band.shape[0] - STRIP_H - 2 * sl)
        x0 = min(max(cx + STRIP_X0 - sl, 0), band.shape[1] - STRIP_W - 2 * sl)
        if y0 < 0 or x0 < 0:
            return None
        return y0, r.atlas_cols[band_way] + x0

    def _discriminant(self, starts: list[tuple[int, int]], labs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Discriminant scores of face labels ``labs`` (R, S) in the corner regions whose first windows
        start at ``starts`` in the band atlas: (scores (R, S, 2), windows (R, S, 2, D)).

        Each label's each view (printed corner, opposite corner turned round) is scored on
        the window of the region its own plain view correlates with best, as enrollment
        aligned its simulated views.
        """
        n, s_max = labs.shape
        nwin = (2 * LDA_SLACK + 1) ** 2
        gy, gx = np.divmod(np.arange(nwin), 2 * LDA_SLACK + 1)
        at = np.array(starts)
        raw = self._atlas.windows((at[:, :1] + gy).ravel(), (at[:, 1:] + gx).ravel())
        # the plain correlation of every window with each label's plain views (compiled: centring a
        # window is a shift by its channel means and a division by its spread, as in the fine match)
        corr = np.empty((n, nwin, 2 * s_max), np.float32)
        window_scores(raw.x.reshape(n, nwin, -1), (1.0 / raw.spread).astype(np.float32).reshape(n, nwin),
                      raw.mean.astype(np.float32), raw.spread.astype(np.float32), self.primary[labs].reshape(n, -1),
                      self._plain, self._plain_shift, corr)  # (R, W, 2S)
        k = (np.arange(n)[:, None] * nwin + corr.argmax(axis=1)).ravel()  # each view's best window
        x = centred(raw.rows(k)).reshape(n, 2 * s_max, -1)  # (R, 2S, D)
        cls = (2 * labs[..., None] + np.arange(2)).reshape(n, -1)  # (R, 2S)
        score = np.einsum("rkd,rkd->rk", x, self.deck.lda_w.T[cls]) + self.deck.lda_b[cls]
        return score.reshape(n, s_max, 2), x.reshape(n, s_max, 2, -1)

    def _discriminant_stage(self, face_rows: list[_Row], reads: dict,  # type: ignore[type-arg]
                            opts: dict[tuple[int, int, int], tuple[np.ndarray, np.ndarray]]) -> None:
        """Last word among each card's shortlist: the deck's corner discriminant (:mod:`vision.discriminant`).

        A candidate the discriminant puts LDA_NATS or more behind the best loses
        LDA_WEIGHT of score (less, in proportion, when it is closer).  Only where it can
        change the reading: the best leads the next by less than LDA_WEIGHT.  A top card
        is scored on both its corners.
        """
        if not self.deck.lda_w.size:
            return
        keys, starts, labels, owners = [], [], [], []
        for r in face_rows:
            for i in range(len(r.positions)):
                key = (id(r), r.way, i)
                label, _score, all_cand, total, corner = reads[key][:5]
                if label == BACK or len(all_cand) < 2:
                    continue
                base = opts[key][1] if key in opts else total
                top2 = np.partition(base, len(base) - 2)[-2:]
                if top2[1] - top2[0] >= LDA_WEIGHT:
                    continue
                for bw, c in zip([r.way, 1 - r.way][: len(corner)], corner, strict=True):
                    start = self._corner_at(r, bw, c)
                    if start is not None:
                        starts.append(start)
                        labels.append(all_cand)
                        owners.append(len(keys))
                keys.append(key)
        if not starts:
            return
        s_max = max(len(c) for c in labels)
        lab = np.full((len(labels), s_max), -1, np.int64)
        for k, c in enumerate(labels):
            lab[k, : len(c)] = c
        face = (lab >= 0) & (lab < self.deck.lda_b.shape[0] // 2)
        sv = self._discriminant(starts, np.where(face, lab, 0))[0].max(axis=2)  # (R, S): the better way round
        own = np.array(owners)
        for k, key in enumerate(keys):
            sel = np.flatnonzero(own == k)
            if not len(sel):
                continue
            label, _score, all_cand, total, corner = reads[key][:5]
            lda = np.where(face[sel[0], : len(all_cand)], sv[sel, : len(all_cand)].mean(axis=0), np.nan)
            cand, base = opts.get(key, (all_cand, total))
            pos = {int(c): n for n, c in enumerate(all_cand)}
            idx = np.array([pos[int(c)] for c in cand])
            d = lda[idx]
            if np.isnan(d).all():
                continue
            d = np.where(np.isnan(d), np.nanmax(d), d)
            new = base + LDA_WEIGHT * np.maximum((d - d.max()) / LDA_NATS, -1.0)
            j = int(np.argmax(new))
            opts[key] = (cand, new)
            strip = 0.0
            if key in self._strips:
                sc_cand, sc = self._strips[key]
                strip = float(sc[int(np.flatnonzero(sc_cand == cand[j])[0])]) if (sc_cand == cand[j]).any() else 0.0
            reads[key] = (int(cand[j]), float(total[idx[j]]), all_cand, total, corner, strip)

    def _index_distance(self, items: list[tuple[_Row, tuple[int, int, int]]], reads: dict) -> np.ndarray:  # type: ignore[type-arg]
        """How far each read corner lies from its reading's corners, as the discriminant measures.

        Squared Mahalanobis distance (best view, each aligned on its own window), in units
        of the deck's own 99th percentile: about 1 or less for an index corner, 3 and more
        for a window of pips or paper the plan took for one.  inf where it cannot be measured.
        """
        out = np.full(len(items), np.inf)
        if not items or not self.deck.lda_w.size or not self.deck.lda_p.size or self.deck.lda_m2 <= 0:
            return out
        starts, where, labs = [], [], []
        for n, (r, key) in enumerate(items):
            label, corner = reads[key][0], reads[key][4]
            start = self._corner_at(r, r.way, corner[0])
            if start is not None and label < self.deck.lda_b.shape[0] // 2:
                starts.append(start)
                where.append(n)
                labs.append(label)
        if not starts:
            return out
        score, x = self._discriminant(starts, np.array(labs)[:, None])
        score, x = score[:, 0], x[:, 0]  # (R, 2), (R, 2, D)
        quad = ((x @ self.deck.lda_p) * x).sum(axis=2)  # x'Px; one matrix product (a three-operand einsum loops naively)
        out[np.array(where)] = (quad - 2 * score).min(axis=1) / self.deck.lda_m2
        return out

    def _down_cards(self, r: _Row) -> list[Detection]:
        """Face-down cards side by side (a blob when their gaps close up in the picture)."""
        k = max(1, round((r.along + DOWN_GAP_MM) / (self.w_mm + DOWN_GAP_MM)))
        step = (r.along - self.w_mm) / (k - 1) if k > 1 else 0.0
        dets = []
        for i in range(k):
            tc = self._card_corners(r, i * step, 0)
            dets.append(Detection(None, False, self.calib.to_image(tc), tc, r.backness, blob=r.blob, order=i))
        return dets

    def _card_corners(self, r: _Row, p_mm: float, way: int) -> np.ndarray:
        if way == 1:  # positions were measured on the crop turned round
            p_mm = r.along - self.w_mm - p_mm
        x0 = r.origin + r.ua * max(p_mm, 0.0)
        ua, uc = r.ua, r.uc
        return np.array([x0, x0 + ua * self.w_mm, x0 + ua * self.w_mm + uc * self.h_mm, x0 + uc * self.h_mm])

    def _candidates(self, scores: np.ndarray, p: int, k: int = CANDIDATES) -> np.ndarray:
        """Labels of the ``k`` best coarse matches near position ``p`` (``scores``: per label, already
        the best of each position and its neighbours), in no particular order."""
        j = min(p // SCAN, len(scores) - 1)
        return self.coarse_ids[np.argpartition(-scores[j], k)[:k]] if len(self.coarse_ids) > k else self.coarse_ids

    def _top_candidates(self, r: _Row, way: int, p: int) -> np.ndarray:
        """Candidates for a top card at ``p`` of a row lying ``way`` round: the best coarse matches at
        both of its corners (the coarse scan sees the band at the row's edge; a top card lying 2 px
        off it may be missing from one corner's list, rarely from both).  Half as many from the other
        corner (8 from each lost top cards whose rank's neighbours crowd the list: 8s read as 6s)."""
        both = np.concatenate([self._candidates(r.lscans[way], p), self._candidates(r.lscans[1 - way], r.last - p, CANDIDATES // 2)])
        return np.array(list(dict.fromkeys(both.tolist())), dtype=both.dtype)

    def _scan_band(self, band: np.ndarray) -> np.ndarray:
        """A band at the coarse scan's scale (half the template's): (STRIP_H / SCAN, >= STRIP_W / SCAN, 3)."""
        return cv2.resize(band, (max(band.shape[1] // SCAN, STRIP_W // SCAN), STRIP_H // SCAN), interpolation=cv2.INTER_AREA)

    def _plan(self, scores: np.ndarray, last: int) -> list[int]:
        """Card left edges (template px) maximising the matched score: first at 0, last at ``last``."""
        best_face = scores.max(axis=1)
        n = len(best_face)
        last_c = min(n - 1, max(0, round(last / SCAN)))
        lo, hi = MIN_GAP * CARD_W / SCAN, MAX_GAP * CARD_W / SCAN
        gain = (best_face - PLAN_TAU).tolist()
        inf = -math.inf
        val = [inf] * n
        prev = [-1] * n
        val[0] = 0.0
        # Dynamic programme over positions; the best predecessor in the sliding range [j - hi, j - lo]
        # comes from a monotonic queue (plain Python: the arrays are a few dozen long).
        window: collections.deque[int] = collections.deque()
        added = 0  # positions pushed into the queue so far
        for j in range(1, last_c + 1):
            i0, i1 = max(0, math.ceil(j - hi)), math.floor(j - lo)
            while added <= i1:
                while window and val[window[-1]] <= val[added]:  # ties: the earlier position stays first
                    if val[window[-1]] == val[added]:
                        break
                    window.pop()
                window.append(added)
                added += 1
            while window and window[0] < i0:
                window.popleft()
            if i1 < i0 or not window or val[window[0]] == inf:
                continue
            k = window[0]
            val[j] = val[k] + (gain[j] if j != last_c else 0.0)
            prev[j] = k
        if val[last_c] == inf:  # no legal spacing (a very short row): first and last only
            return [0, last]
        path = [last_c]
        while prev[path[-1]] >= 0:
            path.append(int(prev[path[-1]]))
        path.reverse()
        pos = [j * SCAN for j in path]
        pos[-1] = last
        return pos

    def _window_origin(self, r: _Row, band_way: int, p: int, xs: range, dys: range) -> tuple[int, int, tuple[int, int]]:
        """Where the corner windows of card position ``p`` at offsets ``xs`` x ``dys`` (template px)
        start in the band (row, column of window 0), and the card's corner in the crop for window 0
        (x, y - MARGIN)."""
        med = r.top_median[band_way]
        if 0 <= p < len(med):
            base_dy = int(med[p])
        else:
            top = r.tops[band_way][max(0, p + 2) : p + STRIP_W]
            base_dy = min(max(int(np.median(top)), -PAD_Y + 1), PAD_Y - 1) if len(top) else 0
        band = r.bands[band_way]
        y0 = PAD_Y + base_dy + dys.start
        y0 = min(max(y0, 0), band.shape[0] - STRIP_H - (len(dys) - 1))
        x0 = p + STRIP_X0 + xs.start
        x0 = min(max(x0, 0), band.shape[1] - STRIP_W - (len(xs) - 1))
        return y0, x0, (x0 - STRIP_X0, y0 - PAD_Y)

    def _refine_batch(
        self, jobs: list[tuple[_Row, int, int, list[tuple[int, int]], np.ndarray]], plain_views: bool = False,
        xs: range = range(-PAD_X, PAD_X + 1), dys: range = range(-DY, DY + 1),
    ) -> dict[tuple[int, int, int], tuple[int, float, np.ndarray, np.ndarray, list[tuple[int, int]]]]:
        """Re-match candidates at full resolution, ``xs`` along and ``dys`` across, summed over the views."""
        if not jobs:
            return {}
        specs = [[(bw, p, xs, dys) for bw, p in v] for _r, _w, _i, v, _c in jobs]
        res = self._score_jobs(jobs, specs, plain_views)
        return {(id(r), way, i): (lab, sc, cand, total, corner)
                for (r, way, i, _v, _c), (lab, sc, _b, cand, total, corner) in zip(jobs, res, strict=True)}

    def _score_jobs(
        self, jobs: list[tuple[_Row, int, int, list[tuple[int, int]], np.ndarray]],
        specs: list[list[tuple[int, int, range, range]]], plain_views: bool = False,
    ) -> list[tuple[int, float, list[int], np.ndarray, np.ndarray, list[tuple[int, int]]]]:
        """Fine match of every job at once (batched over jobs; a job has one or two views).

        ``plain_views``: only the two plain views of each candidate, not the camera-like
        resamplings (enough to tell which end of a row holds a corner).
        """
        index = []  # per job, per view: (window 0 in the band atlas (row, column), xs, the card's corner for window 0)
        for (r, _way, _i, _views, _cand), spec in zip(jobs, specs, strict=True):
            idx = []
            for band_way, p, xs, dys in spec:
                y0, x0, origin = self._window_origin(r, band_way, p, xs, dys)
                idx.append(((y0, r.atlas_cols[band_way] + x0), xs, origin))
            index.append(idx)
        _b, _p, xs0, dys0 = specs[0][0]  # one slack for every view of a batch
        ny, nx = len(dys0), len(xs0)
        nwin = ny * nx
        nj = len(jobs)
        # One row per view (a top card has two): its windows and its job's candidates.
        vj = np.array([j for j, idx in enumerate(index) for _ in idx])
        nv = np.array([len(idx) for idx in index])
        views = [v for idx in index for v in idx]
        at = np.array([start for start, _x, _o in views])  # (V, 2)
        gy, gx = np.divmod(np.arange(nwin), nx)
        win_rows, win_cols = at[:, :1] + gy[None, :], at[:, 1:] + gx[None, :]  # (V, W)
        atlas = self._atlas
        mu64, spread64 = atlas.stats(win_rows.ravel(), win_cols.ravel())
        mu, spread = mu64.astype(np.float32), spread64.astype(np.float32)

        x = np.empty((len(at), nwin, self._weighted.shape[1]), np.float32)
        inv = np.empty((len(at), nwin), np.float32)
        gather_windows(atlas.bright, atlas.colour1, atlas.colour2, STRIP_H, STRIP_W, at, ny, nx, mu, spread,
                       self._wt, self._basis, x, inv)

        def scores(tids: np.ndarray) -> np.ndarray:  # (V, W, T): every window of each view against its templates
            out = np.empty((len(at), nwin, tids.shape[1]), np.float32)
            window_scores(x, inv, mu, spread, np.ascontiguousarray(tids), self._weighted, self._shift, out)
            return out

        ncand = np.array([len(c) for *_x, c in jobs])
        lmax = int(ncand.max())
        cand = np.zeros((nj, lmax), np.int64)
        for j, (*_x, c) in enumerate(jobs):
            cand[j, : len(c)] = c
        valid = np.arange(lmax)[None, :] < ncand[:, None]
        if lmax > SHORTLIST:
            # Shortlist on the two plain views of each candidate, then the full match on the few left.
            pre = scores(self.primary[cand[vj]].reshape(len(vj), -1)).max(axis=1).reshape(len(vj), lmax, 2).max(axis=2)  # (V, L)
            pre = np.add.reduceat(pre, np.cumsum(np.r_[0, nv[:-1]]), axis=0)
            pre = np.where(valid, pre, -np.inf)
            keep = np.argsort(-pre, axis=1, kind="stable")[:, :SHORTLIST]
            cand = np.take_along_axis(cand, keep, axis=1)
            valid = np.take_along_axis(valid, keep, axis=1)
        ns = cand.shape[1]
        table = self.primary if plain_views else self.label_tids
        g = table.shape[1]
        tids = table[cand[vj]].reshape(len(vj), -1)  # (V, S*G)
        sc = scores(tids)  # (V, W, SG)
        sc = sc.reshape(len(vj), nwin * ns, g)
        gbest = sc.argmax(axis=2)  # best view/variant of each label at each window
        best = np.take_along_axis(sc, gbest[..., None], axis=2)[..., 0].reshape(len(vj), nwin, ns)  # (V, W, S)
        # The blank-paper gate, only where it can matter: each label's best window.
        wb = best.argmax(axis=1)  # (V, S)
        vi = np.arange(len(vj))[:, None]
        tb = tids.reshape(len(vj), ns, g)[vi, np.arange(ns)[None, :], gbest.reshape(len(vj), nwin, ns)[vi, wb, np.arange(ns)[None, :]]]
        k_best = (vi * nwin + wb).ravel()  # each label's best window, as numbered in mu and spread
        at_best = RawWindows(x[vi, wb].reshape(len(k_best), -1), mu64[k_best], spread64[k_best])  # (V * S, ...)
        plain_best = np.einsum("vsd,vsd->vs", centred(at_best).reshape(*wb.shape, -1), self.deck.plain[tb])
        best[vi, wb, np.arange(ns)[None, :]] += np.minimum(0.0, plain_best - PLAIN_MIN)
        per_view = best.max(axis=1)  # (V, S)
        starts = np.cumsum(np.r_[0, nv[:-1]])
        total = np.add.reduceat(per_view, starts, axis=0) / nv[:, None]
        total = np.where(valid, total, -np.inf).astype(np.float32)
        ks = total.argmax(axis=1)
        wk = best[np.arange(len(vj)), :, ks[vj]].argmax(axis=1)  # (V,): best window of the winner, per view
        first = np.cumsum(np.r_[0, nv[:-1]])
        out = []
        for j, idx in enumerate(index):
            k = int(ks[j])
            best_x, corner = [], []
            for v, (_start, xs, (ox, oy)) in enumerate(idx):
                w = int(wk[first[j] + v])
                best_x.append(xs.start + w % len(xs))
                corner.append((ox + w % len(xs), oy + w // len(xs)))
            c = cand[j][valid[j]]
            out.append((int(cand[j, k]), float(total[j, k]), best_x, c, total[j][valid[j]], corner))
        return out


_STRIP_CACHE: dict[tuple[object, ...], tuple[object, ...]] = {}


def _strip_templates(deck: DeckModel) -> tuple[object, ...]:
    k = STRIP_POOL
    cards = deck.cards
    ids = np.flatnonzero(np.isin(deck.variants, STRIP_VARIANTS))
    h, w = cards.shape[1:3]
    hp, wp = h // k, w // k
    pooled = cards[ids, : hp * k, : wp * k].astype(np.float32)
    pooled = np.ascontiguousarray(pooled.reshape(len(pooled), hp, k, wp, k, 3).mean(axis=(2, 4)))
    cuts = np.linspace(0, hp, STRIP_BANDS + 1).round().astype(np.int64)
    csums, csqs = [], []
    for b0, b1 in itertools.pairwise(cuts):
        t = pooled[:, b0:b1]  # (N, bh, wp, 3)
        zero = np.zeros((len(t), 1, 3), np.float32)
        csums.append(np.concatenate([zero, np.cumsum(t.sum(axis=1), axis=1)], axis=1))  # (N, wp+1, 3)
        csqs.append(np.concatenate([zero[:, :, 0], np.cumsum((t * t).sum(axis=(1, 3)), axis=1)], axis=1))
    lab = deck.labels[ids]
    by_label = {int(x): np.flatnonzero(lab == x) for x in np.unique(lab)}
    return pooled, np.stack(csums), np.stack(csqs), cuts, by_label, (hp, wp), deck  # the deck kept alive so its id stays its own


def _sliding_median(t: np.ndarray, n: int, lo: int, hi: int) -> np.ndarray:
    """Median (truncated to an integer) of every ``n`` consecutive small integers of ``t``, clipped to lo..hi."""
    t = np.ascontiguousarray(t)
    windows = np.lib.stride_tricks.as_strided(t, (len(t) - n + 1, n), (t.strides[0], t.strides[0]), writeable=False)
    ordered = np.sort(windows, axis=1)
    a, b = ordered[:, (n - 1) // 2], ordered[:, n // 2]
    return np.clip(np.trunc((a + b) / 2), lo, hi).astype(np.int32)


@dataclass(eq=False)
class _Row:
    """One blob read as a row of cards along ``ua`` (working state of :meth:`Detector.detect`)."""

    blob: int
    origin: np.ndarray
    ua: np.ndarray
    uc: np.ndarray
    along: float
    length_px: int
    last: int
    bands: tuple[np.ndarray, np.ndarray]
    backness: float
    ambiguous: bool
    down: bool = False  # face-down cards: like the back, and more like it than like any face
    tops: tuple[np.ndarray, np.ndarray] = field(default=(np.zeros(0), np.zeros(0)))
    scans: list[np.ndarray] = field(default_factory=list)
    lscans: list[np.ndarray] = field(default_factory=list)
    positions: list[int] = field(default_factory=list)
    total: float = -np.inf
    way: int = 0
    top_median: tuple[np.ndarray, np.ndarray] = field(default=(np.zeros(0, np.int32), np.zeros(0, np.int32)))
    thumbs: list[np.ndarray] = field(default_factory=list)  # its ends at the back-thumbnail size
    crop: np.ndarray | None = None  # the row at the template scale (BGR), card height plus MARGIN above and below
    full: np.ndarray | None = None  # the crop as the chosen way reads it, pooled, as blurred channels
    ghosts: set[int] = field(default_factory=set)  # planned cards the card below explains (not cards)
    atlas_cols: tuple[int, int] = (0, 0)  # where its two bands start in the frame's band atlas
