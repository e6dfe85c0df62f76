"""Step 2: blobs on the table.

Each outer contour of the foreground is mapped through the calibration homography into
table millimetres, where every card has the same known size whatever the camera tilt,
and fitted with a minimum-area rectangle.  One side of a card blob is a card height;
the other, the blob's length, says whether it is one card, a row, or a card lifted on
its edge (narrower than a card: half turned).  Blobs that are not one row of parallel
cards are cut at their narrow necks (touching rows, a chip against a row), opened with a
chip-sized disc (a chip on a card's corner, a chip bridging two cards) or cut by colour
(backs against faces); what does not come apart is an occluder (a hand, an arm, a heap).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import replace

import cv2
import numpy as np

from vision.detect.model import Detection, Row
from vision.detect.tabled import TabledStage

#: blobs kept from the last frame: (geometry, look, the detections of it and of the parts it was cut
#: into, the outlines among them that were occluders)
Memory = list[tuple[np.ndarray, np.ndarray, list[Detection], list[np.ndarray]]]


class BlobStage(TabledStage):
    """Step 2 (and the reuse of unchanged blobs)."""

    _memory: Memory
    deck_colours: np.ndarray  # the chromas the deck is printed in (vision.detect.foreground.deck_colour_table)

    def _find_rows(
        self, frame: np.ndarray,
    ) -> tuple[list[Detection], list[Row], dict[int, tuple[np.ndarray, np.ndarray]], Memory, dict[int, int],
               dict[int, list[np.ndarray]]]:
        """Step 2: the frame's blobs sorted into rows of cards (cut out of the frame, step 3 begun),
        half-turned cards (detections already) and occluders (``self.occluders``).

        With ``reuse``, a blob that has not changed since the last frame keeps its cards, those of the
        parts it was cut into, and its occluders: they come back among the detections and
        ``self.occluders``; the blobs read afresh are in ``fresh`` (blob -> its geometry and look),
        ``root`` says which of them each blob cut from it came from, ``occluded`` which occluders each
        one gave, and ``memory`` holds the reused ones for the next frame.
        """
        out: list[Detection] = []
        rows: list[Row] = []
        card_area = self.w_mm * self.h_mm
        self.occluders = []
        self._row_outlines = {}
        self._tabled_ids = set()
        self._fg_contours, self._fg_table = list(self.segmenter.contours(frame)), None
        # (contour, how many cuts deep, the blob it was cut from, whether it was opened: see _opened)
        queue: list[tuple[np.ndarray, int, int, bool]] = [(c, 0, -1, False) for c in self._fg_contours]
        blob_id = -1
        memory: Memory = []
        fresh: dict[int, tuple[np.ndarray, np.ndarray]] = {}
        root: dict[int, int] = {}  # blob -> the blob of the frame's foreground it was cut from
        occluded: dict[int, list[np.ndarray]] = {}
        handed: set[int] = set()  # the blobs of the frame's foreground a hand was cut out of (once is enough)
        hand_of: dict[int, list[np.ndarray]] = {}  # queue place -> the hand (half-size px) a piece lay beside
        while queue:
            beside = hand_of.pop(len(queue) - 1, None)  # the hand this piece was cut from, if it was
            cnt, depth, parent, was_opened = queue.pop()
            blob_id += 1
            root[blob_id] = blob_id if parent < 0 else root[parent]
            tab = self.segmenter.to_table(cnt)
            area = cv2.contourArea(tab)
            if area < 0.2 * card_area:
                continue
            (cx, cy), (rw, rh), ang = cv2.minAreaRect(tab)
            if parent >= 0 or min(abs(rw - self.h_mm), abs(rh - self.h_mm)) > self.p.tall_mm:
                (cx, cy), (rw, rh), ang = self._rectangle(cnt, tab)
            if self.reuse and parent < 0:
                geo = np.array([cx, cy, min(rw, rh), max(rw, rh)])
                look = self._look(cnt)
                old = next(((d, oc) for g, lk, d, oc in self._memory
                            if np.abs(g - geo).max() < 1.5 and float(lk @ look) > 0.97), None)
                if old is not None:
                    memory.append((geo, look, *old))
                    part_ids: dict[int, int] = {}  # each part of the blob keeps a blob of its own
                    for d in old[0]:
                        if d.blob not in part_ids:
                            if part_ids:
                                blob_id += 1
                            part_ids[d.blob] = blob_id
                        out.append(replace(d, blob=part_ids[d.blob]))
                    self.occluders.extend(old[1])
                    continue
                fresh[blob_id] = (geo, look)
            if not was_opened and area > 1.3 * card_area:
                # A chip (or anything round and chip-sized) bridging two cards can make a blob that
                # passes for a row: its parts come apart where a disc bigger than the chip fits no more.
                radius = self._open_radius(np.array([cx, cy]))
                if radius > max(self.p.split_radii) and self.segmenter.comes_apart(cnt, radius):
                    # (... but a spread of tabled cards touching at their corners comes apart so too, and a
                    # piece the disc bit into reads as a back: a blob that is no row is read corner
                    # first before it is opened, and taken if its cards cover it all but the corners'
                    # gaps, as a spread's do and a row with a chip and a hole card does not: 0.98 or
                    # more against 0.46-0.64; session 27, docs/vision.md)
                    if self.p.tabled_first_cover <= 1.0 and self.p.tabled and parent < 0 and \
                            not self._row_like(((cx, cy), (rw, rh), ang), area):
                        tabled = self._tabled(frame, tab, blob_id, self.p.tabled_first_cover)
                        if tabled is not None:
                            out.extend(tabled)
                            continue
                    pieces, lost = self.segmenter.opened(cnt, radius)
                    if len(pieces) >= 2 and lost * area <= self.p.open_max * card_area:
                        queue.extend((p, depth, blob_id, True) for p in pieces)
                        continue
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
                if hull_area / max(rw * rh, 1e-6) >= self.p.hull_fill and area / max(hull_area, 1e-6) >= self.p.hull_solidity:
                    fill = 1.0
            short, long_ = min(rw, rh), max(rw, rh)
            if (depth == 0 and options and fill >= 0.7 and short < 1.1 * self.w_mm
                    and 1.04 * self.h_mm < long_ <= 1.16 * self.h_mm):
                # One card, a little long: a thin tail (a rail's edge, a chip's rim) may hang on it.
                # Cut it off at its neck if it comes away; the card alone is what is measured.
                core = self._trimmed(cnt)
                if core is not None:
                    queue.append((core, depth + 1, blob_id, was_opened))
                    continue
            if fill < 0.7 or not options:
                # Not one row of parallel cards.  A hand or an arm over cards is taken out of it first
                # (an occluder: the tracker holds the seats it lies over), and what it lay on or beside
                # is cut again as the blob would have been: the cards it does not touch are read.
                if self.p.hand_min > 0 and root[blob_id] not in handed and area > self.p.hand_min * card_area:
                    hands, rest = self._hand_cut(cnt, center)
                    if hands:
                        handed.add(root[blob_id])
                        for h in hands:
                            self.occluders.append(self.segmenter.to_table(h).reshape(-1, 2))
                            occluded.setdefault(root[blob_id], []).append(self.occluders[-1])
                        hand_of.update({len(queue) + k: hands for k in range(len(rest))})
                        queue.extend((p, depth, blob_id, was_opened) for p in rest)
                        continue
                # Cards tabled at showdown (fanned, heaped) are read
                # corner first, if their corners explain the blob (vision.detect.tabled).
                if self.p.tabled and depth == 0 and area > 1.2 * card_area:
                    tabled = self._tabled(frame, tab, blob_id)
                    if tabled is not None:
                        out.extend(tabled)
                        continue
                # Touching rows (or a chip against a row) come apart
                # at their narrow neck; what does not is a hand, an arm, a heap: an occluder.
                # (A card with a thin line hanging on it fills its rectangle badly: cut that too.)
                if depth < 2 and area > 0.6 * card_area:
                    # (One card's worth with a line hanging on it is trimmed before its colours are
                    # split: a patterned back would otherwise fall apart into its colours.)
                    parts: list[np.ndarray] = []
                    for radius in self.p.split_radii:
                        parts = self.segmenter.split(cnt, radius)
                        if parts:
                            break
                    if not parts and not was_opened:
                        # (what it leaves is cut again as the blob would have been: it costs no depth)
                        opened = self._opened(cnt, center, area)
                        if opened:
                            queue.extend((p, depth, blob_id, True) for p in opened)
                            continue
                    if not parts and area <= 1.2 * card_area:
                        core = self._trimmed(cnt)
                        parts = [core] if core is not None else []
                    if not parts:
                        parts = self.segmenter.split_by_colour(cnt)
                    if parts:
                        queue.extend((p, depth + 1, blob_id, was_opened) for p in parts)
                        continue
                if area > 0.5 * card_area:
                    self.occluders.append(tab.reshape(-1, 2))
                    occluded.setdefault(root[blob_id], []).append(self.occluders[-1])
                continue
            for along, ua, uc in options:
                if along < 0.72 * self.w_mm:  # narrower than a card lying flat: lifted on its edge
                    # (a card's edge is straight and fills its rectangle; two chips side by side do not)
                    if len(options) == 1 and fill >= self.p.half_turned_fill:
                        out.append(self._half_turned(center, along, ua, uc, blob_id))
                    continue
                rows.append(self._prepare(frame, center, along, ua, uc, blob_id, len(options) > 1))
                if beside is not None:
                    rows[-1].open_end = self._open_end(rows[-1], beside)
                if parent < 0:  # (a blob of the frame's own that reads badly may be tabled cards; not a piece cut off a hand)
                    self._row_outlines[blob_id] = tab
        return out, rows, fresh, memory, root, occluded

    def _row_like(self, rect: tuple[Sequence[float], Sequence[float], float], area: float) -> bool:
        """Whether a rectangle (and the blob's area in it) passes for a row of cards as step 2 tests it."""
        rw, rh = rect[1]
        fits = any(abs(across - self.h_mm) <= 0.16 * self.h_mm and 0.2 * self.w_mm <= along <= 4.9 * self.w_mm
                   for along, across in ((rw, rh), (rh, rw)))
        return fits and area / max(rw * rh, 1e-6) >= 0.7

    def _open_radius(self, center: np.ndarray) -> int:
        """The opening's disc (``open_mm``) in half-size pixels where the blob lies."""
        return round(self.p.open_mm * self.calib.px_per_mm((float(center[0]), float(center[1]))) / 2)

    def _open_end(self, row: Row, hands: list[np.ndarray]) -> int:
        """Which end of a row cut from beside a hand lies against the hand (see ``Row.open_end``): the
        one within ``hand_margin_mm`` and half a card's width of it, the nearer if both; -1 if neither."""
        outlines = [self.segmenter.to_table(h).reshape(-1, 1, 2) for h in hands]
        ends = [row.origin + row.uc * self.h_mm / 2, row.origin + row.uc * self.h_mm / 2 + row.ua * row.along]
        gaps = [min(-cv2.pointPolygonTest(o, (float(e[0]), float(e[1])), True) for o in outlines) for e in ends]
        near = int(np.argmin(gaps))
        return near if gaps[near] <= self.p.hand_margin_mm + 0.5 * self.w_mm else -1

    def _hand_cut(self, cnt: np.ndarray, center: np.ndarray) -> tuple[list[np.ndarray], list[np.ndarray]]:
        """:meth:`FeltSegmenter.hand_cut` with the params' millimetres in half-size pixels where the blob lies."""
        half_px = self.calib.px_per_mm((float(center[0]), float(center[1]))) / 2
        return self.segmenter.hand_cut(
            cnt, self.deck_colours, max(1, round(self.p.hand_open_mm * half_px)),
            self.p.hand_min * self.w_mm * self.h_mm * half_px**2, max(1, round(self.p.hand_margin_mm * half_px)))

    def _opened(self, cnt: np.ndarray, center: np.ndarray, area: float) -> list[np.ndarray]:
        """The blob's card-sized pieces once what is thinner than a chip is taken off it, or [] when
        that changes nothing or takes off more than a chip or two could be (``open_max``: a hand's
        fingers; opened, a forearm 90 mm wide passed for a row of cards).  A chip on a card's corner
        sticks out of the row's rectangle (and may reach the next card or the hole cards), so the row
        was no row and all its cards were lost; a disc bigger than the chip fits everywhere in a card
        but nowhere in the chip's part off it.  ``area``: the blob's, in mm²."""
        radius = self._open_radius(center)
        if radius <= max(self.p.split_radii):
            return []
        pieces, lost = self.segmenter.opened(cnt, radius)
        if lost * area > self.p.open_max * self.w_mm * self.h_mm:
            return []
        return pieces if pieces and (len(pieces) > 1 or lost >= self.p.open_lost) else []

    def _rectangle(self, cnt: np.ndarray, tab: np.ndarray) -> tuple[tuple[float, float], tuple[float, float], float]:
        """The rectangle of a blob cut from a bigger one (or one taller than a card by ``tall_mm``),
        measured without what is left of the cut or what touches it.

        A cut leaves crumbs of what it took off on the piece (a chip's rim, its white spots, a
        sliver of its shadow) and a crumb on the row's top edge moved the rectangle, and with it
        the band read for the index corners, by half its height: a whole row misread.  A green chip
        on green felt touching a row's top edge shows only its white spots, which do not make the
        row fail as a row: they just make it 8 mm taller, with the same effect.  Opened with
        a disc bigger than any crumb, the row keeps its straight sides; a piece the opening takes
        apart or mostly away (a card on its edge is narrower than the disc) keeps its own outline.
        This only measures a piece that is a row already: it never makes one of what is not (a
        forearm 90 mm wide, opened, is as rectangular as a row of cards).
        """
        (cx, cy), _, _ = rect = cv2.minAreaRect(tab)
        if self._row_like(rect, cv2.contourArea(tab)):
            pieces, lost = self.segmenter.opened(cnt, self._open_radius(np.array([cx, cy])))
            if len(pieces) == 1 and lost <= 0.15:
                opened = cv2.minAreaRect(self.segmenter.to_table(pieces[0]))
                rect = opened if self._row_like(opened, cv2.contourArea(tab)) else rect
        (cx, cy), (rw, rh), ang = rect
        return (float(cx), float(cy)), (float(rw), float(rh)), float(ang)

    def _trimmed(self, cnt: np.ndarray) -> np.ndarray | None:
        """The blob with a thin line hanging on it cut off, or None if nothing thin hangs on it.

        Something came off if the blob lost area, or if its rectangle shrank (a line a pixel
        or two wide is nothing in area but pulls the rectangle, and with it the card, askew).
        """
        core = self.segmenter.trim(cnt, self.p.split_radii[0])
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

    def _half_turned(self, center: np.ndarray, along: float, ua: np.ndarray, uc: np.ndarray, blob_id: int) -> Detection:
        corners = np.array(
            [center + sa * ua * along / 2 + sc * uc * self.h_mm / 2 for sa, sc in ((-1, -1), (1, -1), (1, 1), (-1, 1))]
        )
        return Detection(None, False, self.calib.to_image(corners), corners, 0.0, half_turned=True, blob=blob_id)
