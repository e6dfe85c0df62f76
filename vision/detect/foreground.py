"""Step 1: foreground.

On a half-size copy of the frame, in HSV, a pixel is background when its hue is the
felt's (or the rail's) and it is at least half as saturated, and not much brighter than
it (a red pip is the hue of a burgundy felt, but twice as bright); the felt and rail
colours are re-measured every frame at fixed sample points, so slow light changes and
shadows (which darken but keep hue and most saturation) do not move the threshold.  Card
faces are unsaturated and card backs are another hue, so both come out as foreground.
Printed markers are masked out.  The cuts that step 2 makes in a blob (at its necks, by
colour, a thin line trimmed off) are here too: they work on the same half-size mask.
"""

from __future__ import annotations

import math

import cv2
import numba
import numpy as np

from vision.calibration import Calibration
from vision.detect.params import PARAMS, DetectParams


class FeltSegmenter:
    """Step 1 on its own: what on the table is not felt or rail (used by live enrollment too)."""

    def __init__(self, calib: Calibration, params: DetectParams = PARAMS) -> None:
        self.p = params
        self.calib = calib
        #: a picture without the printed layout (:mod:`vision.scale`): felt and whatever lies beside it
        self.picture = bool(calib.layout.extras.get("picture", False))
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

        if self.picture:
            # all of a picture is felt (or whatever the cards lie on); its layout's ellipse, drawn
            # through a camera turned off straight down, would reach past the horizon (session 29:
            # at 30 degrees it came back inside out and no card was ever seen)
            felt = np.full((sh, sw), 255, np.uint8)
            table = felt.copy()
        else:
            felt = poly_mask(lay.felt_polygon(144))
            table = poly_mask(lay.table_polygon(144))
        rail = cv2.subtract(table, felt)
        markers = np.zeros((sh, sw), np.uint8)
        for corners in lay.markers.values():
            q = np.array(corners)
            c = q.mean(axis=0)
            markers |= poly_mask(c + (q - c) * 1.7)
        self.felt_mask = cv2.subtract(felt, markers)
        self.rail_mask = cv2.subtract(rail, markers)
        self.marker_mask = markers
        #: per pixel: 0 off the table (or a marker), 1 felt, 2 rail (the two masks do not overlap)
        self.region = np.where(self.felt_mask > 0, 1, np.where(self.rail_mask > 0, 2, 0)).astype(np.uint8)
        rng = np.random.default_rng(0)
        self.samples = {}
        for name, m in (("felt", self.felt_mask), ("rail", self.rail_mask)):
            idx = np.flatnonzero(m)
            self.samples[name] = rng.choice(idx, size=min(3000, len(idx)), replace=False) if len(idx) else idx

    # -- step 1: foreground ----------------------------------------------------------------
    def foreground(self, frame: np.ndarray) -> np.ndarray:
        """Half-size mask of everything on the table that is not felt or rail.

        A pixel is background when it lies on the felt (or the rail), its hue is within ``tol`` of
        the region's (the peak of the hue histogram at the region's sample points), it is more than
        0.45 times as saturated as the region's median there and no brighter than ``felt_bright``
        times its median brightness.  The colour measurements are made at the sample points alone,
        the test for every pixel in one compiled pass over the HSV picture (:func:`_classify`),
        which also keeps its saturation and brightness (``_sat``, ``_val``: the cuts of step 2 use
        them)."""
        if (frame.shape[1], frame.shape[0]) != self.calib.image_size:
            raise ValueError(
                f"frame is {frame.shape[1]}x{frame.shape[0]} but the calibration is for "
                f"{self.calib.image_size[0]}x{self.calib.image_size[1]}; calibrate this camera mode"
            )
        small = cv2.resize(frame, self.small_size, interpolation=cv2.INTER_AREA)
        hsv = cv2.cvtColor(small, cv2.COLOR_BGR2HSV)
        flat = hsv.reshape(-1, 3)
        tests: list[tuple[int, int, int, int, int]] = []  # (region, hue, tol, sat_min, val_max): see _classify
        grey: tuple[int, int] | None = None
        for code, name, tol in ((1, "felt", 14), (2, "rail", 8)):
            idx = self.samples[name]
            if len(idx) == 0:
                continue
            at = np.empty((len(idx), 3), np.uint8)
            hist = np.empty(256, np.float32)
            n_hues = _hue_histogram(flat, idx, at, hist)  # (of the sample points' hues, each with its neighbours)
            hist = hist[:n_hues]
            hm = int(np.argmax(hist))
            peaks = [hm]
            if name == "felt" and self.picture:
                # A picture without a layout: the cards may lie on cloth with wood beside it; a second
                # hue that covers a quarter as much as the first is background too.
                d = np.abs(np.arange(180) - hm)
                rest = np.where(np.minimum(d, 180 - d) <= 2 * tol, 0.0, hist)
                if rest.max() >= 0.25 * hist[hm]:
                    peaks.append(int(np.argmax(rest)))
            for hm in peaks:
                sm, vm = _medians(at, hm, tol)
                tests.append((code, hm, tol, _threshold8(0.45 * sm), _threshold8(self.p.felt_bright * vm)))
            if name == "felt" and self.picture:
                grey = _grey_surface(at, self.p.felt_bright)
        if len(tests) > _TESTS:
            raise ValueError(f"at most {_TESTS} background colours")
        table = np.array(tests + [_NO_TEST] * (_TESTS - len(tests)), np.int16)
        self._small = small  # (the hand cut of step 2 looks at its colours: :meth:`hand_cut`)
        hue, self._sat, self._val = cv2.split(hsv)
        fg = np.empty_like(hue)
        _classify(hue, self._sat, self._val, self.region, table, fg)
        if grey is not None:
            fg[(self._sat <= grey[0]) & (self._val <= grey[1])] = 0
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
        out: list[np.ndarray] = []
        for part in (coloured, rest):
            cs, _ = cv2.findContours(part, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_SIMPLE)
            out.extend(c + np.array([x, y], np.int32) for c in cs if cv2.contourArea(c) >= 60)
        return out if len(out) >= 2 else []

    def hand_cut(self, cnt: np.ndarray, deck_colours: np.ndarray, open_px: int, min_px: float,
                 margin_px: int) -> tuple[list[np.ndarray], list[np.ndarray]]:
        """Cut a hand or an arm out of a blob: (its outlines, the pieces of the blob beside it), both
        as contours in the frame's half-size pixels; ([], []) when there is none.

        A hand over a row joins it, and the felt around them, into one blob that is no row: all of it
        was an occluder, and the row's cards the hand does not touch were lost with it.  Skin, of any
        tone, lies in a narrow band of chroma (YCrCb's Cr and Cb, whatever its brightness) that card
        paper (unsaturated), red ink and red backs (too red), yellows and the felt do not reach.  A
        colour the deck itself is printed in over a large area (``deck_colours``, see
        :func:`deck_colour_table`: a sepia paper, a tan back) is never taken for skin.  What is left
        after an opening by ``open_px`` (a court's painted face, a tan chip's spots go) and is at
        least ``min_px`` (half-size px²) big is a hand; it is grown by ``margin_px`` (its soft edge,
        its shadow's rim on the cards) and the rest of the blob is what it lay on or beside.
        """
        x, y, w, h = cv2.boundingRect(cnt)
        mask = np.zeros((h, w), np.uint8)
        cv2.drawContours(mask, [cnt - np.array([x, y], np.int32)], -1, 255, cv2.FILLED)
        bgr = self._small[y : y + h, x : x + w]
        ycc = cv2.cvtColor(bgr, cv2.COLOR_BGR2YCrCb)
        cr, cb = ycc[:, :, 1], ycc[:, :, 2]
        skin = (cr >= SKIN_CR[0]) & (cr <= SKIN_CR[1]) & (cb >= SKIN_CB[0]) & (cb <= SKIN_CB[1])
        skin &= self._sat[y : y + h, x : x + w] >= SKIN_SAT_MIN
        skin &= ~deck_colours[cr // 4, cb // 4]
        disc = cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (2 * open_px + 1, 2 * open_px + 1))
        skin_mask = cv2.morphologyEx(cv2.bitwise_and(skin.astype(np.uint8) * 255, mask), cv2.MORPH_OPEN, disc)
        found, _ = cv2.findContours(skin_mask, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_SIMPLE)
        hands = [c for c in found if cv2.contourArea(c) >= min_px]
        if not hands:
            return [], []
        hand = np.zeros_like(mask)
        cv2.drawContours(hand, hands, -1, 255, cv2.FILLED)
        grow = cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (2 * margin_px + 1, 2 * margin_px + 1))
        rest = cv2.bitwise_and(mask, cv2.bitwise_not(cv2.dilate(hand, grow)))
        rest = cv2.morphologyEx(rest, cv2.MORPH_OPEN, np.ones((3, 3), np.uint8))
        pieces, _ = cv2.findContours(rest, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_SIMPLE)
        at = np.array([x, y], np.int32)
        return [c + at for c in hands], [c + at for c in pieces if cv2.contourArea(c) >= 60]

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
    def comes_apart(cnt: np.ndarray, radius: int) -> bool:
        """Whether :meth:`opened` would cut the blob into two or more pieces (cheap: a distance
        transform at half this size, no erosion)."""
        x, y, w, h = cv2.boundingRect(cnt)
        mask = np.zeros((h // 2 + 3, w // 2 + 3), np.uint8)
        cv2.drawContours(mask, [(cnt - np.array([x, y], np.int32)) // 2 + 1], -1, 255, cv2.FILLED)
        core = (cv2.distanceTransform(mask, cv2.DIST_L2, 3) > radius / 2).astype(np.uint8)
        pieces, _ = cv2.findContours(core, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_SIMPLE)
        return sum(1 for p in pieces if cv2.contourArea(p) >= 8) >= 2

    @staticmethod
    def opened(cnt: np.ndarray, radius: int) -> tuple[list[np.ndarray], float]:
        """The blob without anything a disc of ``radius`` does not fit in (a chip's rim and the part
        of it off the cards, a bridge a chip makes between two cards): every piece left after an
        erosion, each grown back inside the blob on its own, and the share of the blob's area that
        is in none of them.  Unlike :meth:`split` it also gives a single piece."""
        pieces, mask, kernel, offset = FeltSegmenter._eroded(cnt, radius)
        grown = [c for p in pieces if cv2.contourArea(p) >= 30 for c in FeltSegmenter._grown(p, mask, kernel, offset)
                 if cv2.contourArea(c) >= 60]
        kept = np.zeros_like(mask)
        cv2.drawContours(kept, [c - offset for c in grown], -1, 255, cv2.FILLED)
        lost = 1.0 - cv2.countNonZero(cv2.bitwise_and(kept, mask)) / max(cv2.countNonZero(mask), 1)
        return grown, lost

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


#: skin's chroma (YCrCb, 8-bit) from the palest to the darkest tones, and the saturation (HSV, 8-bit)
#: under which a pixel is paper whatever its chroma (a pale hand is about 48, a light one 110)
SKIN_CR = (135, 180)
SKIN_CB = (77, 135)
SKIN_SAT_MIN = 40


def deck_colour_table(cards_bgr: np.ndarray, share: float) -> np.ndarray:
    """(64, 64) bool over (Cr // 4, Cb // 4): the chromas that cover at least ``share`` of some one card
    of the deck (``cards_bgr``: its faces and back, (cards, ..., 3)), each with its neighbours, so that
    a hand of the deck's own colour (a sepia paper, a tan back) is never cut out of it.

    Why one card and not the deck's whole printed area (session 31): a court's brown robe is a few
    hundredths of that card, but summed over the deck's courts it passed half a percent, the rule
    until then, on anglo, paris, berlin and slavic_costumes: a dark brown hand was never cut out of
    the row it lay on, on any of them.  What is cut must be a third of a card (``hand_min``) after an
    opening, which a court's few hundredths cannot give; a paper or a back is most of its card."""
    cards = np.asarray(cards_bgr)
    if not cards.size:  # (a deck file without whole-card templates: nothing known of its colours)
        return np.zeros((64, 64), bool)
    cards = cards.reshape(cards.shape[0], -1, 3)
    most = np.zeros((64, 64), np.float64)
    for card in cards:
        px = np.ascontiguousarray(np.clip(card, 0, 255).astype(np.uint8).reshape(-1, 1, 3))
        ycc = cv2.cvtColor(px, cv2.COLOR_BGR2YCrCb).reshape(-1, 3).astype(np.int64) // 4
        counts = np.bincount(ycc[:, 1] * 64 + ycc[:, 2], minlength=64 * 64).reshape(64, 64)
        np.maximum(most, counts / len(ycc), out=most)
    common = (most >= share).astype(np.uint8)
    table: np.ndarray = cv2.dilate(common, np.ones((3, 3), np.uint8)) > 0
    return table


def _threshold8(threshold: float) -> int:
    """The integer an 8-bit pixel must lie above, as ``cv2.threshold`` (as step 1 was once made) takes a
    threshold: rounded down, then within -1..255 (every pixel lies above it, or none).  A threshold
    beyond any pixel is beyond every pixel: OpenCV 4 wrapped one past int32 to the most negative
    int (every pixel above it), OpenCV 5 saturates it, as this does."""
    if not math.isfinite(threshold):
        return -1 if threshold < 0 else 255
    return min(max(math.floor(threshold), -1), 255)


@numba.njit(cache=True, nogil=True)
def _hue_histogram(flat: np.ndarray, idx: np.ndarray, at: np.ndarray, hist: np.ndarray) -> int:
    """The sample points' pixels (``flat`` (N, 3) HSV at ``idx``) into ``at``, and into ``hist`` how
    many of them have each hue, plus its two neighbours' counts round the circle (of 180 hues, or
    of one more than the largest hue seen); returns the circle's length."""
    counts = np.zeros(256, np.int64)
    n = 180
    for k in range(idx.shape[0]):
        for c in range(3):
            at[k, c] = flat[idx[k], c]
        counts[at[k, 0]] += 1
        n = max(n, int(at[k, 0]) + 1)
    for h in range(n):
        hist[h] = np.float32(counts[h]) + np.float32(counts[(h - 1) % n]) + np.float32(counts[(h + 1) % n])
    return n


def _medians(at: np.ndarray, hm: int, tol: int) -> tuple[float, float]:
    """Median saturation and brightness of the samples ``at`` (K, 3) HSV whose hue is within ``tol``
    of ``hm`` (0 and 255 when none is): what ``np.median`` gives, from counts."""
    sat_counts = np.zeros(256, np.int64)
    val_counts = np.zeros(256, np.int64)
    n = _near_counts(at, hm, tol, sat_counts, val_counts)
    if n == 0:
        return 0.0, 255.0
    return _count_median(sat_counts, n), _count_median(val_counts, n)


def _count_median(counts: np.ndarray, n: int) -> float:
    """The median of ``n`` small integers given by their counts (the mean of the middle two for even n)."""
    cum = np.cumsum(counts)
    lo = int(np.searchsorted(cum, (n - 1) // 2, side="right"))
    hi = int(np.searchsorted(cum, n // 2, side="right"))
    return (lo + hi) / 2


@numba.njit(cache=True, nogil=True)
def _near_counts(at: np.ndarray, hm: int, tol: int, sat_counts: np.ndarray, val_counts: np.ndarray) -> int:
    """Counts of the saturation and brightness values of the samples whose hue is within ``tol`` of
    ``hm`` (round the circle of 180), and how many there are."""
    n = 0
    for k in range(at.shape[0]):
        d = abs(np.int64(at[k, 0]) - hm)
        if min(d, 180 - d) <= tol:
            sat_counts[at[k, 1]] += 1
            val_counts[at[k, 2]] += 1
            n += 1
    return n


#: the most background colours a frame has (the felt's, a second one beside it in a picture, the rail's)
_TESTS = 3
_NO_TEST = (255, 0, 0, 255, 0)  # a test no pixel passes (no region 255)
#: a surface whose median saturation is under this (of 255) is grey: its hue is noise (cloth, session 23)
GREY_SAT = 40


def _grey_surface(at: np.ndarray, felt_bright: float) -> tuple[int, int] | None:
    """A picture's surface that is grey or black cloth has no hue to speak of: a grey cloth's
    pixels fail the hue test at random and the whole cloth came out as foreground, every card one
    blob with it.  Such a surface is told by saturation and brightness alone: (saturation at most,
    brightness at most) of its pixels, from the sample points ``at`` (HSV); None for a coloured one.
    Cards stay foreground by their paper (brighter by ``felt_bright``, or nearer white than the cloth)
    or their backs (saturated)."""
    sat, val = float(np.median(at[:, 1])), float(np.median(at[:, 2]))
    if sat >= GREY_SAT:
        return None
    # (a light grey cloth is nearly as bright as paper: the cut is also kept under the middle of the
    # way from the cloth to white)
    return _threshold8(max(2 * sat, sat + 20)), _threshold8(min(felt_bright * val, val + 0.4 * (255 - val)))


@numba.njit(cache=True, nogil=True, fastmath=True)
def _classify(hue: np.ndarray, sat: np.ndarray, val: np.ndarray, region: np.ndarray, tests: np.ndarray,
              fg: np.ndarray) -> None:
    """Foreground (255) or background (0) per pixel of the HSV planes into ``fg``.

    A pixel is background if it lies off the table (``region`` 0) or if for one of the three
    ``tests`` (region, hue, tol, sat_min, val_max) it lies in that region, its hue is within tol of
    that hue round the circle of 180, its saturation is above sat_min and its brightness at most
    val_max.  (Written out for three tests, in 16-bit integers: the loop compiles to vector code.)"""
    r0, h0, t0, s0, v0 = tests[0, 0], tests[0, 1], tests[0, 2], tests[0, 3], tests[0, 4]
    r1, h1, t1, s1, v1 = tests[1, 0], tests[1, 1], tests[1, 2], tests[1, 3], tests[1, 4]
    r2, h2, t2, s2, v2 = tests[2, 0], tests[2, 1], tests[2, 2], tests[2, 3], tests[2, 4]
    for y in range(hue.shape[0]):
        hr, sr, vr, reg, out = hue[y], sat[y], val[y], region[y], fg[y]
        for x in range(hue.shape[1]):
            r = np.int16(reg[x])
            h, s, v = np.int16(hr[x]), np.int16(sr[x]), np.int16(vr[x])
            d0, d1, d2 = abs(h - h0), abs(h - h1), abs(h - h2)
            c0 = (r == r0) & (min(d0, 180 - d0) <= t0) & (s > s0) & (v <= v0)
            c1 = (r == r1) & (min(d1, 180 - d1) <= t1) & (s > s1) & (v <= v1)
            c2 = (r == r2) & (min(d2, 180 - d2) <= t2) & (s > s2) & (v <= v2)
            out[x] = np.uint8(0) if (c0 | c1 | c2) | (r == 0) else np.uint8(255)
