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

import cv2
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
        bg: np.ndarray = np.zeros_like(hue)
        for name, region, tol in (("felt", self.felt_mask, 14), ("rail", self.rail_mask, 8)):
            idx = self.samples[name]
            if len(idx) == 0:
                continue
            hs = hue.ravel()[idx].astype(np.int32)
            hist = np.bincount(hs, minlength=180).astype(np.float32)
            hist = hist + np.roll(hist, 1) + np.roll(hist, -1)
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
                near = np.minimum(np.abs(hs - hm), 180 - np.abs(hs - hm)) <= tol
                sm = float(np.median(sat.ravel()[idx][near])) if near.any() else 0.0
                vm = float(np.median(val.ravel()[idx][near])) if near.any() else 255.0
                d = np.abs(np.arange(256) - hm)
                lut = np.where(np.minimum(d, 180 - d) <= tol, 255, 0).astype(np.uint8)
                same = cv2.bitwise_and(cv2.LUT(hue, lut), cv2.threshold(sat, 0.45 * sm, 255, cv2.THRESH_BINARY)[1])
                same = cv2.bitwise_and(same, cv2.threshold(val, self.p.felt_bright * vm, 255, cv2.THRESH_BINARY_INV)[1])
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
        out: list[np.ndarray] = []
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
