"""Step 3: cutting rows into cards.

The blob is resampled from the full-size frame into a canonical strip at the template
scale.  The index corner of every card in the row is visible at the card's left edge (or,
for a row laid the other way, at its right edge upside down: the same picture turned
round, so the strip and the strip turned round are both scanned).  Sliding every learned
corner template along the top band gives a score profile; a short dynamic programme picks
the card edges (the first card at the row's start, the top card ending at the row's end,
gaps between ``min_gap`` and ``max_gap`` of a card) that maximise the matched score.
Which way round: the end that holds the top card's corner, and never an end that reads as
the back; where the two ends read alike, the way whose covered cards show index corners.
A blob whose ends are like the back, and more like it than like any face, is face-down cards.
"""

from __future__ import annotations

import math

import cv2
import numba
import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

from vision.deck import (
    BACK,
    CARD_W,
    QUERY_BLUR,
    STRIP_H,
    STRIP_W,
    STRIP_Y0,
    THUMB,
    RawWindows,
    WindowSource,
    _pairs,
    channels,
    embed_raw,
    normalize,
)
from vision.detect.fine import FineMatch
from vision.detect.model import Job, Key, Reading, Row
from vision.window_match import gather_raw


class BandAtlas(WindowSource):
    """The frame's bands side by side (or the coarse scan's): a :class:`vision.deck.WindowSource`
    whose windows are copied out by the compiled gather (:func:`vision.window_match.gather_raw`,
    the same values as numpy's fancy indexing of sliding-window views, in a quarter of the time).
    The views are made only for indices the gather does not take (outside the image: numpy's
    indexing wraps negative ones round, and that is kept as it was)."""

    def __init__(self, image: np.ndarray, h: int, w: int) -> None:  # (WindowSource's, less the views)
        self.shape = image.shape
        self.h, self.w = h, w
        pairs = _pairs(image)
        self.bright = np.ascontiguousarray(image[:, :, 0])
        self.colour1 = np.ascontiguousarray(pairs[:, :, 1])
        self.colour2 = np.ascontiguousarray(pairs[:, :, 2])
        total, squares = cv2.integral2(image, sdepth=cv2.CV_64F, sqdepth=cv2.CV_64F)
        self._total, self._squares = total.reshape(*total.shape[:2], 3), squares.reshape(*squares.shape[:2], 3)

    def windows(self, rows: np.ndarray, cols: np.ndarray) -> RawWindows:
        h, w = self.h, self.w
        if len(rows) and min(int(rows.min()), int(cols.min())) >= 0 and int(rows.max()) <= self.shape[0] - h \
                and int(cols.max()) <= self.shape[1] - w:
            x = np.empty((len(rows), h * w + 2 * (h // 2) * (w // 2)), np.float32)
            gather_raw(self.bright, self.colour1, self.colour2, h, w, rows, cols, x)
            return RawWindows(x, *self.stats(rows, cols))
        if not hasattr(self, "_views"):
            hc, wc = 2 * (h // 2) - 1, 2 * (w // 2) - 1
            self._views = (
                sliding_window_view(self.bright, (h, w)),
                sliding_window_view(self.colour1, (hc, wc))[:, :, ::2, ::2],
                sliding_window_view(self.colour2, (hc, wc))[:, :, ::2, ::2],
            )
        return super().windows(rows, cols)


class RowStage(FineMatch):
    """Step 3: a blob cut out of the frame as a row, its ends' likeness to the back, its bands,
    the coarse scan, which way round it lies and where its cards' edges are."""

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
    ) -> Row:
        if ua[0] * uc[1] - ua[1] * uc[0] < 0:  # keep the crop unmirrored
            uc = -uc
        length_px = max(CARD_W, round(along * self.scale))
        # Card height, not the blob's: a shadow widens the blob, the card's top edge is its edge.
        origin = center - ua * along / 2 - uc * self.h_mm / 2
        m = self.p.margin
        crop = self._crop(frame, origin - uc * m / self.scale, ua, uc, (length_px, self.card_h + 2 * m))
        if self.deck.layout.flip:  # the deck's indices at the bottom left and top right: read the row turned top to bottom
            crop = np.ascontiguousarray(crop[::-1])  # (the margin is the same above and below: the cards stay where they were)
        last = length_px - CARD_W
        none = np.zeros((0, 0, 3), np.float32)
        r = Row(blob_id, origin, ua, uc, along, length_px, last, (none, none), 0.0, ambiguous, crop=crop)
        if len(self.deck.back_thumbs):
            card = crop[m : m + self.card_h]
            ends = [card[:, :CARD_W]] if last == 0 else [card[:, :CARD_W], card[:, last : last + CARD_W]]
            r.thumbs = [cv2.resize(e, THUMB, interpolation=cv2.INTER_AREA) for e in ends]
        return r

    def _backness(self, rows: list[Row]) -> None:
        """Likeness of each row's two ends to the enrolled back, for all rows at once, and whether the
        row is face-down cards: each end like the back, and more like it than like any face (a court
        card's red and black can pass for a red patterned back at this size, plastic's jack of spades
        0.51; a lamp's band washed a pale top card until it was 0.63 like a blank paper back,
        joan-darc's ace, and one end was all the old rule asked: ``back_every_end``)."""
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
            if self.p.back_every_end:
                ends = like[k : k + n]
                r.down = bool(np.all((ends >= self.p.back_min) & (ends > face[k : k + n])))
            else:
                r.down = r.backness >= self.p.back_min and r.backness > float(face[k : k + n].max())
            k += n

    def _bands(self, r: Row) -> None:
        """The top bands of a face row, both ways round, and where each card's top edge lies."""
        m = self.p.margin
        crop = r.crop
        assert crop is not None  # _prepare cut it
        y0, y1 = m + STRIP_Y0 - self.p.pad_y, m + STRIP_Y0 + STRIP_H + self.p.pad_y
        h = crop.shape[0]

        def turned(a: int, b: int) -> np.ndarray:  # rows a..b of the crop turned round (only those are turned)
            out: np.ndarray = cv2.rotate(crop[h - b : h - a], cv2.ROTATE_180)
            return out

        band, band_turned = (
            np.ascontiguousarray(cv2.GaussianBlur(channels(b), (0, 0), QUERY_BLUR)[3:-3])
            for b in (crop[y0 - 3 : y1 + 3], turned(y0 - 3, y1 + 3))
        )
        r.bands = (band, band_turned)
        # Where is each card's top edge?  Cards in a row sit a little higher or lower than the
        # blob's fitted edge; the paper-over-felt edge says by how much, column by column.
        tops = []
        for b in (crop[: 2 * m + 1], turned(0, 2 * m + 1)):
            g = cv2.cvtColor(b, cv2.COLOR_BGR2GRAY).astype(np.int16)
            step = g[1:] - g[:-1]  # bright paper below darker felt: positive
            tops.append(np.argmax(step, axis=0).astype(np.int32) + 1 - m)
        r.tops = (tops[0], tops[1])
        # the median top edge under each corner window (card positions p: columns p+2 .. p+STRIP_W)
        meds = []
        for t in tops:
            if len(t) >= STRIP_W:
                meds.append(_sliding_median(t[2:], STRIP_W - 2, -self.p.pad_y + 1, self.p.pad_y - 1))
            else:
                meds.append(np.zeros(0, np.int32))
        r.top_median = (meds[0], meds[1])

    def _scan_band(self, band: np.ndarray) -> np.ndarray:
        """A band at the coarse scan's scale (half the template's): (STRIP_H / SCAN, >= STRIP_W / SCAN, 3)."""
        return cv2.resize(band, (max(band.shape[1] // self.p.scan, STRIP_W // self.p.scan), STRIP_H // self.p.scan), interpolation=cv2.INTER_AREA)

    def _plan(self, scores: np.ndarray, last: int) -> list[int]:
        """Card left edges (template px) maximising the matched score: first at 0, last at ``last``."""
        best_face = scores.max(axis=1)
        n = len(best_face)
        last_c = min(n - 1, max(0, round(last / self.p.scan)))
        lo, hi = self.p.min_gap * CARD_W / self.p.scan, self.p.max_gap * CARD_W / self.p.scan
        gain = (best_face - self.p.plan_tau).astype(np.float64)  # (the float32 differences, exactly)
        path = np.empty(n, np.int64)
        count = _plan_path(gain, last_c, lo, hi, path)
        if count == 0:  # no legal spacing (a very short row): first and last only
            return [0, last]
        pos = [j * self.p.scan for j in path[:count].tolist()]
        pos[-1] = last
        return pos

    def _way_by_plan(self, r: Row, way: int, positions: list[int]) -> tuple[int, list[int]]:
        """A row whose far ends read alike both ways round (a top card whose two corners look alike: a
        court printed with no rank, a chip or the lamp's band on one of them): under the right way the
        band shows every covered card's index corner; under the wrong one it runs along the cards' other
        long edge, where a deck printed at two corners shows none between the row's first position (the
        top card's second corner) and its end.  The way whose plan's inner positions match the coarse
        scan clearly better (``way_plan_margin``) is taken, with its plan; a deck printed at all four
        corners shows both ways alike and keeps the ends' way."""
        other = self._plan(r.scans[1 - way], r.last)
        if len(positions) < 3 or len(other) < 3:
            return way, positions
        mine, theirs = (float(np.mean(r.scans[w].max(axis=1)[[p // self.p.scan for p in plan[1:-1]]]))
                        for w, plan in ((way, positions), (1 - way, other)))
        if theirs >= mine + self.p.way_plan_margin:
            return 1 - way, other
        return way, positions

    @staticmethod
    def _which_way(end0: Reading, end1: Reading) -> int:
        """Which way a row lies, from the readings of its far end under each way: the better one, but
        an end that reads as the back is not the top card's corner (the top card lies face up; a covered
        card's picture can pass for a patterned back), whatever it scored."""
        back0, back1 = end0.label == BACK, end1.label == BACK
        if back0 != back1:
            return 1 if back0 else 0
        return 0 if end0.score >= end1.score else 1


    # -- the frame's face rows scanned at once -------------------------------------------------
    def _coarse_scan(self, face_rows: list[Row]) -> None:
        """Lay every face row's bands into the frame's band atlas and scan them coarsely (all at once)."""
        # Every face row's two bands side by side in one image, whose corner windows the fine match
        # gathers by index (the colour sums and integral images made once a frame).
        bands = [band for r in face_rows for band in r.bands]
        if bands:
            lefts = np.cumsum([0] + [b.shape[1] for b in bands[:-1]]).tolist()
            for k, r in enumerate(face_rows):
                r.atlas_cols = (lefts[2 * k], lefts[2 * k + 1])
            self._atlas = BandAtlas(np.concatenate(bands, axis=1), STRIP_H, STRIP_W)
        # Coarse scan of both bands of every face row in one matrix product.
        smalls = [self._scan_band(band[self.p.pad_y : self.p.pad_y + STRIP_H]) for r in face_rows for band in r.bands]
        if smalls:
            # every band side by side in one image; a window at every position that lies in one band
            n_pos = [s.shape[1] - STRIP_W // self.p.scan + 1 for s in smalls]
            lefts = np.cumsum([0] + [s.shape[1] for s in smalls[:-1]])
            cols = np.concatenate([s0 + np.arange(n) for s0, n in zip(lefts, n_pos, strict=True)])
            h, w = STRIP_H // self.p.scan, STRIP_W // self.p.scan
            raw = BandAtlas(np.concatenate(smalls, axis=1), h, w).windows(np.zeros_like(cols), cols)
            scores = embed_raw(raw, self.c_mean, self.c_weight) @ self.coarse
            bounds = np.cumsum([0, *n_pos])
            lab = np.maximum(scores[:, 0::2], scores[:, 1::2])  # per label: either plain view
            near = lab.copy()  # ... the best of each position and its neighbours within its band
            near[1:] = np.maximum(near[1:], lab[:-1])
            near[:-1] = np.maximum(near[:-1], lab[1:])
            starts, ends_ = bounds[:-1], bounds[1:] - 1
            near[starts] = np.maximum(lab[starts], lab[np.minimum(starts + 1, ends_)])
            near[ends_] = np.maximum(lab[ends_], lab[np.maximum(ends_ - 1, starts)])
            if self.partial_index:  # a one-corner deck: the plan and the candidates from index corners only
                scores = self._mask_no_index(scores)
                lab = np.maximum(scores[:, 0::2], scores[:, 1::2])
                near = lab.copy()
                near[1:] = np.maximum(near[1:], lab[:-1])
                near[:-1] = np.maximum(near[:-1], lab[1:])
                near[starts] = np.maximum(lab[starts], lab[np.minimum(starts + 1, ends_)])
                near[ends_] = np.maximum(lab[ends_], lab[np.maximum(ends_ - 1, starts)])
            for k, r in enumerate(face_rows):
                r.scans = [scores[bounds[2 * k] : bounds[2 * k + 1]], scores[bounds[2 * k + 1] : bounds[2 * k + 2]]]
                r.lscans = [near[bounds[2 * k] : bounds[2 * k + 1]], near[bounds[2 * k + 1] : bounds[2 * k + 2]]]

    def _orient_and_plan(self, face_rows: list[Row]) -> list[Job]:
        """Which way round each row lies and where its cards' edges are: the fine-match jobs, one a card."""
        # Which way round is each row?  Under the right plan the row's far end holds the top
        # card's corner; under the wrong one it is covered.  Single cards read fine either way.
        ends: list[Job] = []
        for r in face_rows:
            if r.last >= self.p.min_gap * CARD_W:
                for way in (0, 1):
                    # (a deck whose upright view carries no index, printed at the top right only: the top
                    # card's index is at its other corner, and the row's start shows none either way)
                    views = [(way, r.last), (1 - way, 0)] if not self.index_views[0] else [(way, r.last)]
                    ends.append(Job(r, way, -1, views, self._top_candidates(r, way, r.last)))
        end_reads = self._refine_batch(ends, plain_views=True)
        # Neither end matched well: a card sits higher or lower than the row's edge says (its top
        # edge hidden behind a neighbour's corner peeking out above it).  Read both ends again with
        # the whole band's vertical slack.
        weak_rows = {id(e.row) for e in ends
                     if max(end_reads[Key(id(e.row), 0, -1)].score, end_reads[Key(id(e.row), 1, -1)].score) < self.p.wide_below}
        wide_ends = [e._replace(views=self._wide_views(e.way, end_reads[e.key])) for e in ends if id(e.row) in weak_rows]
        for key, read in self._refine_batch(wide_ends, plain_views=True, xs=self.p.wide_dx, dys=self.p.wide_dy).items():
            if read.label != BACK and read.score >= end_reads[key].score + self.p.wide_gain:
                end_reads[key] = read
        jobs: list[Job] = []
        for r in face_rows:
            if r.open_end >= 0 and r.last >= self.p.min_gap * CARD_W:
                # A hand lies against one end.  If the other end holds a whole top card (its corner read
                # as a face, well), the row is read that way as any row (the hand took its first cards);
                # else the hand covers the top card, and the row is read from its first card on, every
                # card a covered one (read by its corner), none pinned whole at the hand's end.
                closed, away = end_reads[Key(id(r), r.open_end, -1)], end_reads[Key(id(r), 1 - r.open_end, -1)]
                if closed.label != BACK and closed.score >= max(self.p.covered_min, away.score):
                    r.open_end = -1
            if r.open_end >= 0:
                r.way = 1 - r.open_end
                positions = [0] if r.last < self.p.min_gap * CARD_W else self._plan(r.scans[r.way], r.last)
            elif r.last < self.p.min_gap * CARD_W:
                r.way, positions = 0, [0]
            else:
                end0, end1 = end_reads[Key(id(r), 0, -1)], end_reads[Key(id(r), 1, -1)]
                r.way = self._which_way(end0, end1)
                positions = self._plan(r.scans[r.way], r.last)
                if (end0.label == BACK) == (end1.label == BACK) and abs(end0.score - end1.score) < self.p.way_tie:
                    r.way, positions = self._way_by_plan(r, r.way, positions)
            r.positions = positions
            for i, p in enumerate(positions):
                views = [(r.way, p)]
                if i == len(positions) - 1 and r.open_end < 0:  # the top card: read both of its corners
                    views.append((1 - r.way, r.last - p))
                cand = self._top_candidates(r, r.way, p) if len(views) > 1 else self._candidates(r.lscans[r.way], p)
                jobs.append(Job(r, r.way, i, views, cand))
        return jobs


def _sliding_median(t: np.ndarray, n: int, lo: int, hi: int) -> np.ndarray:
    """Median (truncated to an integer) of every ``n`` consecutive small integers of ``t``, clipped to lo..hi."""
    med = np.empty(max(len(t) - n + 1, 0), np.int32)
    _sliding_median_into(np.ascontiguousarray(t, dtype=np.int64), n, lo, hi, med)
    return med


@numba.njit(cache=True, nogil=True)
def _sliding_median_into(t: np.ndarray, n: int, lo: int, hi: int, med: np.ndarray) -> None:
    """:func:`_sliding_median` into ``med``: each window sorted by insertion (a dozen values)."""
    w = np.empty(n, np.int64)
    for k in range(med.shape[0]):
        for i in range(n):
            v = t[k + i]
            j = i
            while j > 0 and w[j - 1] > v:
                w[j] = w[j - 1]
                j -= 1
            w[j] = v
        m = np.trunc((w[(n - 1) // 2] + w[n // 2]) / 2)
        med[k] = np.int32(min(max(m, lo), hi))


@numba.njit(cache=True, nogil=True)
def _plan_path(gain: np.ndarray, last_c: int, lo: float, hi: float, path: np.ndarray) -> int:
    """The dynamic programme of :meth:`RowStage._plan` over the coarse positions 0..``last_c``:
    the chosen positions into ``path`` (first to last); returns how many, 0 when no spacing is legal.

    ``val[j]``: the best total gain of a plan from 0 to j; j's predecessor is the best of the
    positions j - hi .. j - lo (ties: the earliest), kept in a monotonic queue."""
    n = gain.shape[0]
    val = np.full(n, -np.inf)
    prev = np.full(n, -1, np.int64)
    val[0] = 0.0
    queue = np.empty(n, np.int64)
    head = tail = 0  # the queue is queue[head:tail]
    added = 0  # positions pushed into the queue so far
    for j in range(1, last_c + 1):
        i0, i1 = max(0, math.ceil(j - hi)), math.floor(j - lo)
        while added <= i1:
            while tail > head and val[queue[tail - 1]] < val[added]:  # ties: the earlier position stays first
                tail -= 1
            queue[tail] = added
            tail += 1
            added += 1
        while tail > head and queue[head] < i0:
            head += 1
        if i1 < i0 or tail == head or val[queue[head]] == -np.inf:
            continue
        k = queue[head]
        val[j] = val[k] + (gain[j] if j != last_c else 0.0)
        prev[j] = k
    if val[last_c] == -np.inf:
        return 0
    count = 0
    j = last_c
    while j >= 0:
        path[count] = j
        count += 1
        j = prev[j]
    path[:count] = path[:count][::-1].copy()
    return count
