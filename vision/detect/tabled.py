"""Cards tabled at showdown: a blob that is no row, read corner first.

At showdown a player tables up to seven cards fanned round a pivot, heaped at any angle or
spread apart: one blob whose cards lie at different angles and show only part of their
outline, so the rows of step 3 (cards along one axis, their corners along one edge) do not
apply.  What every tabled card whose index shows does show is one corner of its own on the
blob's outline, with the two straight edges that meet there (in a fan each card's top-left
corner sticks out past the card below it; a heaped card's index corner is where the index is
read from, and a card lying over it would hide the index).  So:

1. the blob's outline (table mm) is cut into straight sides (``approxPolyDP``), each long
   side's line fitted to the outline points along it;
2. two long sides meeting at about a right angle, turning the outline's way, make a card
   corner; of its two edges, the one that comes first turning the card's way round is its
   short side if the corner is an index corner (top left, or bottom right turned round), so
   each corner is one hypothesis: the card lies in the quadrant of the two edges, the index
   strip at the corner;
3. every hypothesis's corner strip is cut out of the frame at the template scale, turned by
   -2, 0 and 2 degrees, and matched with the enrolled corner templates (both views: a card
   lying the other way shows its other index there; a deck printed at one corner, its index view's
   alone) over +-3 px, as the rows' fine match does,
   the blank-paper gate included; the best four labels are matched again with every
   camera-like variant;
4. a corner that matches ``tabled_min`` or better is a card (its whole outline follows from
   the corner and the card's size); one card of a label per blob, the surest kept; a corner whose
   next label comes within ``tabled_lead`` is a close call: left unread (face up, no code), or
   dropped where one of its close labels is a card read surely in the blob (that card again).

The reading is taken for the blob only when the cards it found cover ``tabled_cover`` of it;
otherwise the blob goes on as before (cut at necks, opened, split by colour, or an occluder: a
hand over a row, a chip on a row's corner).  A tabled card whose index is covered is not
reported: it has no corner that reads.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import cv2
import numpy as np

from vision.deck import (
    BACK,
    CARD_W,
    QUERY_BLUR,
    STRIP_H,
    STRIP_W,
    STRIP_X0,
    STRIP_Y0,
    RawWindows,
    WindowSource,
    centred,
    channels,
    embed_raw,
    raw_windows_at,
)
from vision.detect.lda import DiscriminantStage
from vision.detect.model import Detection, Row
from vision.detect.rows import RowStage
from vision.detect.strip import Look, StripStage
from vision.window_match import gather_windows, window_scores

_PAD = 3  # template px of slack either way round the corner
_TURNS = (-2.0, 0.0, 2.0)  # degrees: an outline fitted at half size is a degree or two off
_UNREAD_INSIDE = 0.9  # a card left unread lies this much inside its blob
_STRIP_SURE = 0.8  # a tabled card's strip look has its word where its best match is this good (a face, not a covering card)


class _Read(NamedTuple):
    """One hypothesised corner's candidates, as the fine match and the discriminant left them."""

    hyp: int  # which corner hypothesis
    labels: np.ndarray  # (L,) candidate labels
    scores: np.ndarray  # their fine match (the blank-paper gate included)
    bonus: np.ndarray  # the discriminant's word on each (0 for the best, down to -lda_weight)
    dist: np.ndarray  # each one's window's distance from the label's corners (units of tabled_m2)
    cards: list[np.ndarray]  # each one's card outline (table corners TL, TR, BR, BL as read)


class TabledStage(StripStage, DiscriminantStage, RowStage):
    """Reading a blob of tabled cards (see the module's docstring)."""

    def _tabled_setup(self) -> None:
        """The line finder for the edges inside a blob."""
        self._lsd = cv2.createLineSegmentDetector()

    def _tabled(self, frame: np.ndarray, tab: np.ndarray, blob_id: int, least: float | None = None) -> list[Detection] | None:
        """The tabled cards of a blob that is no row (``tab``: its outline in table mm), or None when
        the corners that read do not explain the blob (then it is not a showdown hand): when they cover
        less than ``least`` of it (``tabled_cover`` unless said).

        A deck printed at one corner is read with its index view's templates alone (the view without
        an index matched pips: 17 false cards on two tables of ``anglo+onecorner+mirror``, session 11).
        One whose upright view carries no index (printed at the top right only, read turned round:
        ``anglo+onecorner+mirror``) stays off: read so it failed tests/vision/test_index_layout.py in
        session 12.  Session 26 opened the reading to the others (tuning showdowns 369 -> 386 of 435, no more wrong
        or false cards; docs/vision.md)."""
        if not self.index_views[0]:
            return None
        trace = getattr(self, "tabled_trace", None)
        rec: dict[str, object] = {"tab": tab.reshape(-1, 2).copy(), "reads": []}
        if trace is not None:
            trace.append(rec)
        corners = self._card_corners_of(frame, tab)
        rec["corners"] = corners
        if not corners:
            return None
        found = self._settled(frame, self._read_corners(frame, corners, rec))
        rec["found"] = found
        if not found:
            return None
        # One card of a label per blob: the surest (a card may show both its index corners); at a
        # table calibrated by its markers, only one whose card lies on the frame's cards.
        inside = self.p.tabled_inside if self.calib.markers_seen else 0.0
        best: dict[int, tuple[float, np.ndarray]] = {}
        for label, score, tc, close in found:
            if not close and (label not in best or score > best[label][0]) and \
                    (not inside or self._on_cards(tc) >= inside):
                best[label] = (score, tc)
        cards: list[tuple[str | None, float, np.ndarray]] = [(self.deck.code(lab), sc, tc) for lab, (sc, tc) in best.items()]
        # A close call is a card left unread, unless one of its close labels is a card read surely in
        # the blob (then it is most likely that card again, read at a pip or from a covered corner, as
        # a reading of a label read surer elsewhere is), a card read or left unread has its outline, or
        # its outline leaves the blob (with no label to say it is a card, its outline must: a corner
        # hypothesised at a pip puts a card where there is none).
        for label, score, tc, close in sorted(found, key=lambda f: -f[1]):
            if close and not ({label, *close} & best.keys()) and \
                    not any(self._one_card(tc, o) for _c, _s, o in cards) and \
                    _share_inside(tc, tab) >= _UNREAD_INSIDE:
                cards.append((None, score, tc))
        cover = rec["cover"] = self._cover(tab, [tc for _c, _s, tc in cards])
        if cover < (self.p.tabled_cover if least is None else least):
            return None
        out = []
        for k, (code, score, tc) in enumerate(sorted(cards, key=lambda c: (c[0] is None, -c[1]))):
            out.append(Detection(code, True, self.calib.to_image(tc), tc, score, covered=True, blob=blob_id, order=k))
            self._tabled_ids.add(id(out[-1]))
        rec["result"] = out
        return out

    def _on_cards(self, card: np.ndarray) -> float:
        """How much of a card read (its outline, table mm) lies on the frame's foreground.

        Why: a corner hypothesised at a pip or at a covered card's corner strip puts its card over
        the felt; a card read right lies on cards, if not always in its own blob (a neighbour's piece,
        a blob cut short).  Session 25, eight tuning designs x 8 showdowns at seeds 92004-92011: false
        cards 25 -> 5, no card read right lost; its own blob alone lost right readings at any bar."""
        if self._fg_table is None:
            self._fg_table = [self.segmenter.to_table(c).reshape(-1, 2) for c in self._fg_contours]
        return _overlap(card, self._fg_table, others_convex=False)

    def _tabled_unique(self, dets: list[Detection]) -> list[Detection]:
        """One reading of each card and one card of each label in the frame, where tabled cards
        are among them: a card read twice under two labels (:meth:`_one_card`) keeps the surer; a label read
        twice (a card in two of the pieces a blob was cut into, or a tabled card and a row's)
        keeps its surest reading.  Frames without tabled cards are left as they are."""
        if not any(id(d) in self._tabled_ids for d in dets):
            return dets
        order = sorted(range(len(dets)), key=lambda k: (dets[k].card is None, -dets[k].score))
        kept: list[Detection] = []
        labels: set[str] = set()
        for k in order:
            d = dets[k]
            tabled = id(d) in self._tabled_ids
            if d.card is not None and d.card in labels:
                continue
            if tabled and any(id(o) in self._tabled_ids and self._one_card(d.table_corners, o.table_corners) for o in kept):
                continue
            kept.append(d)
            if d.card is not None:
                labels.add(d.card)
        keep = {id(d) for d in kept}
        return [d for d in dets if id(d) in keep]

    def _tabled_rows(self, frame: np.ndarray, dets: list[Detection]) -> list[Detection]:
        """The row readings, where a blob that passed for a row reads badly replaced by its tabled
        cards if those read more cards surely: a tight fan or a small heap fills a card-high
        rectangle as a row does, and read as a row its cards come out unread.

        Only a blob with a face-up card unread or under ``tabled_min``, one read as two or more
        face-down cards alone (a spread's cards lying across each other pass for backs), or one whose
        cards read cover less than ``tabled_row_cover`` of it (a card of the spread not found at all)
        is read again, and its
        tabled reading is taken only if a card of it lies askew to the row (more than
        ``tabled_askew_deg``: a row's cards are parallel, a fan's are not) AND it has at least as many cards
        of ``tabled_min`` as the row's.  Taken for more sure cards alone, it let a dealt row of a hard-to-read deck (thin
        index, patterned face) be read again as tabled cards, pips and all: 35 false cards in 30
        scenes of two held-out designs, counts only, session 11 (docs/vision.md)."""
        if not self.p.tabled or not self.index_views[0]:
            return dets
        by_blob: dict[int, list[Detection]] = {}
        for d in dets:
            by_blob.setdefault(d.blob, []).append(d)
        out: list[Detection] = []
        for blob, group in by_blob.items():
            # (a blob read as face-down cards side by side may be tabled faces the row's plan misplaced:
            # two cards of a spread lying across each other read as backs)
            weak = any(d.face_up and (d.card is None or d.score < self.p.tabled_min) for d in group) or \
                not any(d.face_up for d in group)
            tab = self._row_outlines.get(blob)
            if not weak and tab is not None:
                # (a spread whose cards lie side by side passes for a row, and the row's plan finds
                # the cards at its ends and loses the one between: what it read leaves the blob bare)
                weak = self._cover(tab, [d.table_corners for d in group]) < self.p.tabled_row_cover
            if weak and tab is not None and len(group) >= 2 and cv2.contourArea(tab) > 1.2 * self.w_mm * self.h_mm:
                tabled = self._tabled(frame, tab, blob)
                sure = sum(1 for d in group if d.card is not None and d.score >= self.p.tabled_min)
                take = tabled is not None and len(tabled) >= sure and not _parallel(tabled, group[0], self.p.tabled_askew_deg)
                trace = getattr(self, "tabled_trace", None)
                if trace and tabled is not None:
                    trace[-1]["row"] = take
                if tabled is not None and take:
                    out.extend(tabled)
                    continue
            out.extend(group)
        return out

    def _settled(self, frame: np.ndarray, reads: list[_Read]) -> list[tuple[int, float, np.ndarray, list[int]]]:
        """Each corner's reading settled: (label, its corner score, the card's table corners, the other
        labels within ``tabled_lead`` of it) where the chosen label matches ``tabled_min`` and its
        window is an index corner (``tabled_m2``).  A reading with close labels is a card to be left
        unread.

        A close call is not read because, unlike a row's, a tabled card's wrong readings are mostly
        close calls: on the tuning decks' showdowns (seeds 92000-92003) a lead under 0.01 held 74
        of 127 wrong corner readings and 16 of 1223 right ones; as built, wrong cards 58 -> 40 for
        one right card (docs/vision.md, session 24).

        Where the deck has whole-card templates, the second look of the rows (step 5,
        :meth:`StripStage._strip_scores`) has its word first, over the part of the card the other
        cards read in the blob leave visible: its big pips tell a 6 from an 8 or a 5 and a club from
        a spade where the small index leaves them close.  Each corner's ``strip_labels`` best
        readings are re-ranked by corner score + ``strip_lambda`` x strip score, as a row's."""
        def gated(r: _Read, i: int) -> bool:
            return bool(r.scores[i] >= self.p.tabled_min and r.dist[i] <= self.p.tabled_m2)

        def settled(r: _Read, i: int, ranked: np.ndarray, labels: np.ndarray) -> tuple[int, float, np.ndarray, list[int]]:
            close = labels[ranked > ranked.max() - self.p.tabled_lead]
            return int(r.labels[i]), float(r.scores[i]), r.cards[i], [int(c) for c in close if c != r.labels[i]]

        first = [int(np.argmax(r.scores + r.bonus)) for r in reads]
        if not len(self.deck.cards) or not reads:
            return [settled(r, i, r.scores + r.bonus, r.labels) for r, i in zip(reads, first, strict=True) if gated(r, i)]
        # the cards as first read (the surest of each label) say what covers what
        sure: dict[int, tuple[float, np.ndarray]] = {}
        for r, i in zip(reads, first, strict=True):
            lab = int(r.labels[i])
            if gated(r, i) and (lab not in sure or r.scores[i] > sure[lab][0]):
                sure[lab] = (float(r.scores[i]), r.cards[i])
        others = [tc for _s, tc in sure.values()]
        looks: list[Look] = []
        short: list[np.ndarray] = []
        for r, i in zip(reads, first, strict=True):
            order = np.argsort(-(r.scores + r.bonus))[: self.p.strip_labels]
            short.append(order)
            tc = r.cards[i]
            ux, uy = (tc[1] - tc[0]) / self.w_mm, (tc[3] - tc[0]) / self.h_mm
            m = self.p.margin
            crop = self._crop(frame, tc[0] - uy * m / self.scale, ux, uy, (CARD_W, self.card_h + 2 * m))
            row = Row(-1, tc[0], ux, uy, self.w_mm, CARD_W, 0, (crop, crop), 0.0, False, crop=crop)
            looks.append(Look(row, (0, 0), self._visible(tc, others), r.labels[order]))
        strip = self._strip_scores(looks)
        out = []
        lam = self.p.strip_lambda
        for r, order, sc in zip(reads, short, strip, strict=True):
            i = int(order[0])
            # its word only where the corner leaves the best two close (as a row's, strip_margin) and the
            # strip is this card's face (a strip the read cards do not say is covered may be: a heap)
            ranked = (r.scores + r.bonus)[order]
            final = ranked
            if len(order) > 1 and ranked[0] - ranked[1] <= self.p.strip_margin and sc[: len(order)].max() >= _STRIP_SURE:
                comb = (r.scores[order] + lam * sc[: len(order)]) / (1 + lam) + r.bonus[order]
                i = int(order[int(np.argmax(comb))])
                final = comb
            if gated(r, i):
                out.append(settled(r, i, final, r.labels[order]))
        return out

    def _visible(self, tc: np.ndarray, others: list[np.ndarray]) -> int:
        """How wide a strip of the card ``tc`` (table corners TL, TR, BR, BL as read: its index at TL),
        from its index's edge, no other card read in the blob covers (template px, at least a
        corner's width): another card covers it unless it is the same card read again or lies
        under it (the card's index strip, which was read, lies on it)."""
        ux, uy = tc[1] - tc[0], tc[3] - tc[0]
        cols = np.linspace(0.0, 1.0, 17)[1:]
        grid = tc[0] + cols[:, None, None] * ux + np.linspace(0.03, 0.97, 12)[None, :, None] * uy  # (columns, rows, 2)
        index = tc[0] + (ux / self.w_mm * (STRIP_X0 + STRIP_W / 2) + uy / self.h_mm * (STRIP_Y0 + STRIP_H / 2)) / self.scale
        free = np.ones(len(cols), bool)
        for o in others:
            if _inside(o, index[None, :])[0]:
                continue  # it lies under this card (or is this card read again)
            free &= ~_inside(o, grid.reshape(-1, 2)).reshape(grid.shape[:2]).any(axis=1)
        n = int(np.argmin(free)) if not free.all() else len(cols)
        return max(STRIP_W + STRIP_X0, round(n / len(cols) * CARD_W))

    def _card_corners_of(self, frame: np.ndarray, tab: np.ndarray) -> list[tuple[np.ndarray, np.ndarray, np.ndarray]]:
        """Where a card's index corner may lie: both ends of every straight card edge in the blob.

        A tabled card whose index shows shows the corner it is printed at, and at least one of the
        two edges meeting there; in a fan that edge mostly lies over the card below (the outline
        only holds the fan's ends), where the camera sees it as the card's printed border and its
        shadow.  So the edges are the outline's straight sides and the straight lines the frame
        shows inside the blob (``cv2.LineSegmentDetector`` on the blob's pixels); a card's other
        edge through the corner is square to it, on the blob's side (either side of an edge inside
        the blob).  Of the two ways a card can lie at a corner (which edge is its width) only one puts
        an index there (x cross y > 0, as a card's top left; < 0 for a deck whose indices are at the
        top right and bottom left): one hypothesis for each end and side,
        (corner, the index strip's x and y directions), table mm.
        """
        contour = tab.reshape(-1, 1, 2).astype(np.float32)
        edges: list[tuple[np.ndarray, np.ndarray, float, bool]] = []  # (start, unit direction, length, on the outline)
        poly = cv2.approxPolyDP(contour, self.p.tabled_eps_mm, True).reshape(-1, 2).astype(np.float64)
        pts = tab.reshape(-1, 2).astype(np.float64)
        for i in range(len(poly) if len(poly) >= 3 else 0):
            a, b = poly[i], poly[(i + 1) % len(poly)]
            length = float(np.linalg.norm(b - a))
            if length >= self.p.tabled_side_mm:
                p0, u = self._fit_side(pts, a, b)
                ta, tb = float((a - p0) @ u), float((b - p0) @ u)
                edges.append((p0 + u * ta, u, tb - ta, True))
        edges.extend(self._inner_edges(frame, tab))
        out: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []
        seen: set[tuple[int, int, int]] = set()
        # a deck printing its indices at the top right and bottom left is enrolled turned top to
        # bottom (vision.index_layout): its index corners are the other way round, x cross y < 0
        flip = self.deck.layout.flip
        for start, u, length, outline in edges:
            normal = np.array([-u[1], u[0]])
            mid = start + u * length / 2
            sides = [s for s in (normal, -normal)
                     if cv2.pointPolygonTest(contour, (float(mid[0] + 3 * s[0]), float(mid[1] + 3 * s[1])), False) >= 0]
            if outline:
                sides = sides[:1]
            for side in sides:
                for corner0, along in ((start, u), (start + u * length, -u)):
                    # the straight part ends short of a rounded corner: the sharp corner lies beyond it
                    corner = corner0 - along * self.p.tabled_round_mm
                    ex, ey = (along, side) if (along[0] * side[1] - along[1] * side[0] > 0) != flip else (side, along)
                    if ex is along and length > self.w_mm + 5.0:  # a side longer than a card's width is no short side
                        continue
                    # (an edge found twice, as a printed border's two sides or the outline and a line beside it)
                    cell = (round(corner[0] / 2.0), round(corner[1] / 2.0), round(math.degrees(math.atan2(ex[1], ex[0])) / 3.0))
                    if cell in seen:
                        continue
                    seen.add(cell)
                    out.append((corner, ex, ey))
        return out

    def _inner_edges(self, frame: np.ndarray, tab: np.ndarray) -> list[tuple[np.ndarray, np.ndarray, float, bool]]:
        """Straight lines inside the blob at least a card edge long (``tabled_side_mm``), table mm."""
        img = self.calib.to_image(tab.reshape(-1, 2))
        x0, y0 = np.maximum(np.floor(img.min(axis=0)).astype(int) - 3, 0)
        x1, y1 = np.minimum(np.ceil(img.max(axis=0)).astype(int) + 3, [frame.shape[1], frame.shape[0]])
        if x1 - x0 < 8 or y1 - y0 < 8:
            return []
        grey = cv2.cvtColor(frame[y0:y1, x0:x1], cv2.COLOR_BGR2GRAY)
        lines = self._lsd.detect(grey)[0]
        if lines is None:
            return []
        seg = lines.reshape(-1, 2, 2).astype(np.float64) + np.array([x0, y0], np.float64)
        tabs = self.calib.to_table(seg.reshape(-1, 2)).reshape(-1, 2, 2)
        d = tabs[:, 1] - tabs[:, 0]
        length = np.linalg.norm(d, axis=1)
        out = []
        for k in np.flatnonzero(length >= self.p.tabled_side_mm):
            out.append((tabs[k, 0], d[k] / length[k], float(length[k]), False))
        return out

    @staticmethod
    def _fit_side(pts: np.ndarray, a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The line through the outline points along the side a -> b (its middle: a rounded card
        corner bends the ends), as (point, unit direction a -> b)."""
        d = b - a
        length = float(np.linalg.norm(d))
        u = d / max(length, 1e-9)
        rel = pts - a
        t = rel @ u
        off = np.abs(rel[:, 0] * u[1] - rel[:, 1] * u[0])
        trim = min(4.0, 0.2 * length)
        sel = pts[(t > trim) & (t < length - trim) & (off < 2.0)]
        if len(sel) < 2:
            return a, u
        vx, vy, x0, y0 = cv2.fitLine(sel.astype(np.float32), cv2.DIST_HUBER, 0, 0.01, 0.01).ravel()
        v = np.array([vx, vy], np.float64)
        if v @ u < 0:
            v = -v
        return np.array([x0, y0], np.float64), v

    def _regions(self, frame: np.ndarray, poses: list[tuple[np.ndarray, np.ndarray, np.ndarray]]) -> list[np.ndarray]:
        """Each pose's corner strip with ``_PAD`` px round it, at the template scale, as blurred channels."""
        size = (STRIP_X0 + STRIP_W + 2 * _PAD, STRIP_Y0 + STRIP_H + 2 * _PAD)
        out = []
        for corner, ux, uy in poses:
            crop = self._crop(frame, corner - (ux + uy) * _PAD / self.scale, ux, uy, size)
            out.append(cv2.GaussianBlur(channels(crop), (0, 0), QUERY_BLUR))
        return out

    def _read_corners(self, frame: np.ndarray, corners: list[tuple[np.ndarray, np.ndarray, np.ndarray]],
                      rec: dict[str, object] | None = None) -> list[_Read]:
        """Each hypothesised corner's candidate readings (:class:`_Read`) where its best matches
        ``tabled_min`` or better.

        First every corner as fitted, at half the template scale, against the plain views (the rows'
        coarse scan, +-3 px); the corners that pass ``tabled_coarse`` are matched at full scale,
        +-2 px round where the coarse match put them, turned -2, 0 and 2 degrees, against every view
        and variant of their best coarse labels (compiled, as the rows' fine match), and the
        discriminant has its word (:meth:`_tabled_lda`)."""
        size_x, hr = STRIP_X0 + STRIP_W + 2 * _PAD, STRIP_Y0 + STRIP_H + 2 * _PAD
        regions = self._regions(frame, corners)
        cs = (STRIP_W // self.p.scan, STRIP_H // self.p.scan)
        small = [cv2.resize(r, (size_x // self.p.scan, hr // self.p.scan), interpolation=cv2.INTER_AREA) for r in regions]
        sh, sw = small[0].shape[:2]
        ncx = sw - cs[0] + 1
        nwc = (sh - cs[1] + 1) * ncx
        coarse = (embed_raw(raw_windows_sized(small, cs), self.c_mean, self.c_weight) @ self.coarse).reshape(len(corners), nwc, -1)
        lab = coarse.max(axis=1)
        # per label: either plain view (as the rows' scan); a deck printed at one corner, the view that carries it
        lab = lab[:, 0::2] if self.partial_index else np.maximum(lab[:, 0::2], lab[:, 1::2])
        keep = np.flatnonzero(lab.max(axis=1) >= self.p.tabled_coarse)
        if rec is not None:
            rec["coarse"] = lab.max(axis=1)
        if not len(keep):
            return []
        span = 5  # fine windows each way round the coarse match's place (+-2 px)
        poses, cands, starts = [], [], []
        for h in keep:
            corner, ex, ey = corners[h]
            cy, cx = divmod(int(coarse[h].max(axis=1).argmax()), ncx)
            x0 = min(max(self.p.scan * cx - 2, 0), size_x - STRIP_W + 1 - span)
            y0 = min(max(self.p.scan * cy - 2, 0), hr - STRIP_H + 1 - span)
            top = self.coarse_ids[np.argsort(-lab[h])[: self.p.tabled_labels]]
            cands.append(top[top != BACK] if (top != BACK).any() else top)
            for turn in _TURNS:
                poses.append((corner, _turned(ex, turn), _turned(ey, turn)))
                starts.append((x0, y0))
        fine = self._regions(frame, poses)
        nwin = span * span
        # the fine match as the rows' (vision.window_match): the regions stacked into one atlas
        atlas = WindowSource(np.concatenate(fine, axis=0), STRIP_H, STRIP_W)
        at = np.array([(k * hr + y0, x0) for k, (x0, y0) in enumerate(starts)], np.int64)
        gy, gx = np.divmod(np.arange(nwin), span)
        mu64, spread64 = atlas.stats((at[:, :1] + gy[None, :]).ravel(), (at[:, 1:] + gx[None, :]).ravel())
        mu, spread = mu64.astype(np.float32), spread64.astype(np.float32)
        x = np.empty((len(fine), nwin, self._weighted.shape[1]), np.float32)
        inv = np.empty((len(fine), nwin), np.float32)
        gather_windows(atlas.bright, atlas.colour1, atlas.colour2, STRIP_H, STRIP_W, at, span, span, mu, spread,
                       self._wt, self._basis, x, inv)
        table = self._covered_tids  # (every view and variant; a deck printed at one corner, those of its index view)
        n_lab, g, nt = self.p.tabled_labels, table.shape[1], len(_TURNS)
        top_all = np.array([np.resize(t, n_lab) for t in cands])  # (C, L): a short list repeats
        tids = np.repeat(table[top_all].reshape(len(cands), -1), nt, axis=0)  # (poses, L * G)
        sc = np.empty((len(fine), nwin, tids.shape[1]), np.float32)
        window_scores(x, inv, mu, spread, np.ascontiguousarray(tids), self._weighted, self._shift, sc)
        sc4 = sc.reshape(len(cands), nt * nwin, n_lab, g)  # per kept corner: (turns * windows, L, G)
        best_g = sc4.argmax(axis=3)
        best_v = np.take_along_axis(sc4, best_g[..., None], axis=3)[..., 0]  # (C, TW, L)
        where = best_v.argmax(axis=1)  # (C, L): each label's best (turn, window)
        ci, li = np.arange(len(cands))[:, None], np.arange(n_lab)[None, :]
        value = best_v[ci, where, li]
        tmpl = table[top_all, best_g[ci, where, li]]  # (C, L): the template that won there
        pose_k = (ci * nt + where // nwin).ravel()  # (C * L,) its pose, and its window in the pose
        win_k = (where % nwin).ravel()
        k_all = pose_k * nwin + win_k
        # the blank-paper gate: a plain correlation under plain_min costs one for one
        raw_best = RawWindows(x[pose_k, win_k], mu64[k_all], spread64[k_all])
        plain_best = np.einsum("kd,kd->k", centred(raw_best), self.deck.plain[tmpl.ravel()]).reshape(len(cands), n_lab)
        value = value + np.minimum(0.0, plain_best - self.p.plain_min)
        # each label's window, as (row in the atlas, column)
        wy, wx = np.divmod(win_k, span)
        st = np.array(starts)[pose_k]
        place = np.stack([pose_k * hr + st[:, 1] + wy, st[:, 0] + wx], axis=1).reshape(len(cands), n_lab, 2)
        kept = [j for j in range(len(cands)) if value[j, : len(cands[j])].max() >= self.p.tabled_min]
        if rec is not None:
            rec["fine"] = {int(keep[j]): (int(cands[j][int(value[j, : len(cands[j])].argmax())]), float(value[j, : len(cands[j])].max()),
                                          cands[j].tolist()) for j in range(len(cands))}
        if not kept:
            return []
        lda, dist = self._tabled_lda(atlas, [(top_all[j, : len(cands[j])], value[j, : len(cands[j])], place[j]) for j in kept], hr)
        out: list[_Read] = []
        for n, j in enumerate(kept):
            scores = value[j, : len(cands[j])].astype(np.float64)
            # the discriminant's word, as for a row's card (DiscriminantStage._discriminant_stage), and
            # whether the winner's window is an index corner at all (a pip, a court card's frame is not)
            d = lda[n]
            bonus = np.zeros(len(scores)) if np.isnan(d).all() else \
                np.nan_to_num(self.p.lda_weight * np.maximum((d - np.nanmax(d)) / self.p.lda_nats, -1.0), nan=-self.p.lda_weight)
            tcs = []
            for i in range(len(scores)):
                k = int(pose_k[j * n_lab + i])
                corner, ux, uy = poses[k]
                row, col = place[j, i]
                wx_, wy_ = int(col), int(row - k * hr)
                # the window at (STRIP_X0 + _PAD, STRIP_Y0 + _PAD) is the corner as fitted
                p0 = corner + ((wx_ - STRIP_X0 - _PAD) * ux + (wy_ - STRIP_Y0 - _PAD) * uy) / self.scale
                tcs.append(np.array([p0, p0 + ux * self.w_mm, p0 + ux * self.w_mm + uy * self.h_mm, p0 + uy * self.h_mm]))
            out.append(_Read(int(keep[j]), np.asarray(cands[j], np.int64), scores, bonus, np.asarray(dist[n], np.float64), tcs))
            if rec is not None:
                reads = rec["reads"]
                assert isinstance(reads, list)
                best = int(np.argmax(scores + bonus))
                reads.append({"hyp": int(keep[j]), "cands": cands[j].tolist(), "scores": scores.tolist(),
                              "dist": dist[n].tolist(), "best": int(cands[j][best])})
        return out

    def _tabled_lda(self, atlas: WindowSource, reads: list[tuple[np.ndarray, np.ndarray, np.ndarray]], hr: int
                    ) -> tuple[list[np.ndarray], list[np.ndarray]]:
        """Per corner read: the discriminant's score of each of its labels (the better view; nan
        where not asked) and the distance of the window from that label's corners (units of the
        deck's 99th percentile; 0 where it cannot be measured), on the windows +-``lda_slack`` round
        where each label matched.  Only labels within ``lda_weight`` of the best are asked, as
        the rows ask only where the best leads by less (and the best for its distance)."""
        n_face = self.deck.lda_b.shape[0] // 2
        if not self.deck.lda_w.size or not self.deck.lda_p.size or self.deck.lda_m2 <= 0:
            return [np.full(len(t), np.nan) for t, _s, _p in reads], [np.zeros(len(t)) for t, _s, _p in reads]
        sl = self.p.lda_slack
        starts: list[tuple[int, int]] = []
        labs: list[int] = []
        owner: list[tuple[int, int]] = []
        for n, (top, scores, place) in enumerate(reads):
            close = np.flatnonzero(scores >= scores.max() - self.p.lda_weight).tolist()
            for i in close:
                row, col = int(place[i, 0]), int(place[i, 1])
                region = row // hr
                y0 = min(max(row - region * hr - sl, 0), hr - STRIP_H - 2 * sl) + region * hr
                x0 = min(max(col - sl, 0), atlas.shape[1] - STRIP_W - 2 * sl)
                starts.append((y0, x0))
                labs.append(int(top[i]) if int(top[i]) < n_face else 0)
                owner.append((n, i))
        saved = getattr(self, "_atlas", None)
        self._atlas = atlas
        try:
            score, xw = self._discriminant(starts, np.array(labs)[:, None])
        finally:
            if saved is not None:
                self._atlas = saved
        score, xw = score[:, 0], xw[:, 0]  # (R, 2), (R, 2, D)
        quad = ((xw @ self.deck.lda_p) * xw).sum(axis=2)
        m2 = quad - 2 * score
        if self.partial_index:  # (a view that carries no index is no corner to be near, as a row's)
            m2 = np.where(np.array(self.index_views)[None, :], m2, np.inf)
        dist_all = m2.min(axis=1) / self.deck.lda_m2
        best = score.max(axis=1)
        lda = [np.full(len(t), np.nan) for t, _s, _p in reads]
        dist = [np.full(len(t), np.inf) for t, _s, _p in reads]
        for m, (n, i) in enumerate(owner):  # (n: the read, i: its label)
            lda[n][i] = best[m]
            dist[n][i] = dist_all[m]
        return lda, dist

    def _one_card(self, a: np.ndarray, b: np.ndarray) -> bool:
        """Whether two tabled readings (table corners as read, index at TL) are one card read twice:
        the same outline (:func:`_same_outline`), or each one's index strip mostly
        (``tabled_hidden``) inside the other's outline.

        Why: of two cards whose indices both show, the lower one's index lies outside the upper one;
        so if neither's does, one index is read twice (at another label, or from a corner a pip
        suggested, a few mm and degrees off: past ``tabled_same_mm``, which a tight fan's
        neighbours need).  Session 26, tuning showdowns 92000-92003: pairs of readings both right
        lay at most 0.24 inside each other, one card read twice at a median 0.93."""
        if _same_outline(a, b, self.p.tabled_same_mm):
            return True
        t = self.p.tabled_hidden
        return bool(_inside(b, _strip_points(a)).mean() >= t and _inside(a, _strip_points(b)).mean() >= t)

    def _cover(self, tab: np.ndarray, cards: list[np.ndarray]) -> float:
        """How much of the blob (table mm) the cards' outlines cover, at 1 px a mm."""
        return _overlap(tab.reshape(-1, 2), cards)


def _strip_points(tc: np.ndarray) -> np.ndarray:
    """A grid of points (7 x 13, table mm) over the index strip of a card read at ``tc`` (TL, TR, BR, BL, index at TL)."""
    ex = (tc[1] - tc[0]) / CARD_W  # one template px along the card's width and height
    ey = (tc[3] - tc[0]) / float(np.linalg.norm(tc[3] - tc[0])) * float(np.linalg.norm(tc[1] - tc[0])) / CARD_W
    gx, gy = np.meshgrid(np.linspace(STRIP_X0, STRIP_X0 + STRIP_W, 7), np.linspace(STRIP_Y0, STRIP_Y0 + STRIP_H, 13))
    out: np.ndarray = tc[0] + gx.ravel()[:, None] * ex + gy.ravel()[:, None] * ey
    return out


def _same_outline(a: np.ndarray, b: np.ndarray, mm: float) -> bool:
    """Whether two card outlines (table corners as read) are one card's: centre within ``mm``, edges
    within 2.5 degrees (either way round: a card read from its other index corner)."""
    (ax, ay), (bx, by) = a.mean(axis=0).tolist(), b.mean(axis=0).tolist()
    if math.hypot(ax - bx, ay - by) > mm:
        return False
    ea, eb = a[1] - a[0], b[1] - b[0]
    turn = math.degrees(math.atan2(float(ea[1]), float(ea[0])) - math.atan2(float(eb[1]), float(eb[0])))
    return abs((turn + 90.0) % 180.0 - 90.0) <= 2.5


def _parallel(cards: list[Detection], row_card: Detection, tolerance: float) -> bool:
    """Whether every card lies along the row of ``row_card`` (either way round), within ``tolerance`` degrees."""
    def angle(d: Detection) -> float:
        e = d.table_corners[1] - d.table_corners[0]
        return math.degrees(math.atan2(float(e[1]), float(e[0])))
    ref = angle(row_card)
    return all(abs((angle(d) - ref + 90.0) % 180.0 - 90.0) <= tolerance for d in cards)


def _inside(quad: np.ndarray, pts: np.ndarray) -> np.ndarray:
    """Which points (N, 2) lie inside a convex quadrilateral (4, 2), either way round."""
    e = np.roll(quad, -1, axis=0) - quad  # (4, 2) its sides
    rel = pts[:, None, :] - quad[None, :, :]  # (N, 4, 2)
    cross = e[None, :, 0] * rel[:, :, 1] - e[None, :, 1] * rel[:, :, 0]
    out: np.ndarray = (cross >= 0).all(axis=1) | (cross <= 0).all(axis=1)
    return out


def _share_inside(card: np.ndarray, tab: np.ndarray) -> float:
    """How much of a card's outline (table mm) lies inside the blob's outline."""
    return _overlap(card, [tab.reshape(-1, 2)], others_convex=False)


def _overlap(shape: np.ndarray, others: list[np.ndarray], others_convex: bool = True) -> float:
    """How much of the polygon ``shape`` (table mm) the union of ``others`` covers, at 1 px a mm."""
    lo = shape.min(axis=0) - 2
    hi = shape.max(axis=0) + 2
    size = (int(hi[1] - lo[1]) + 1, int(hi[0] - lo[0]) + 1)
    mask = np.zeros(size, np.uint8)
    cv2.fillPoly(mask, [np.round(shape - lo).astype(np.int32)], 1)
    union = np.zeros(size, np.uint8)
    for o in others:
        pts = np.round(o - lo).astype(np.int32)
        if others_convex:
            cv2.fillConvexPoly(union, pts, 1)
        else:
            cv2.fillPoly(union, [pts], 1)
    total = int(mask.sum())
    return float((mask & union).sum()) / total if total else 0.0


def _signed_area(poly: np.ndarray) -> float:
    x, y = poly[:, 0], poly[:, 1]
    return float(0.5 * (x @ np.roll(y, -1) - y @ np.roll(x, -1)))


def _intersect(p: np.ndarray, u: np.ndarray, q: np.ndarray, v: np.ndarray) -> np.ndarray | None:
    det = u[0] * v[1] - u[1] * v[0]
    if abs(det) < 1e-6:
        return None
    t = ((q[0] - p[0]) * v[1] - (q[1] - p[1]) * v[0]) / det
    out: np.ndarray = p + t * u
    return out


def _turned(v: np.ndarray, deg: float) -> np.ndarray:
    c, s = math.cos(math.radians(deg)), math.sin(math.radians(deg))
    return np.array([c * v[0] - s * v[1], s * v[0] + c * v[1]])


def raw_windows_sized(regions: list[np.ndarray], size: tuple[int, int]) -> RawWindows:
    """Every ``size`` (w, h) window of equal-shaped channel images, as :func:`vision.deck.raw_windows`
    gives them for the corner's own size."""
    stack = np.stack(regions).astype(np.float32, copy=False)
    n, hr, wr, _ = stack.shape
    w, h = size
    oy, ox = np.divmod(np.arange((hr - h + 1) * (wr - w + 1)), wr - w + 1)
    rows = (np.arange(n)[:, None] * hr + oy[None, :]).ravel()
    return raw_windows_at(stack.reshape(n * hr, wr, 3), rows, np.tile(ox, n), h, w)
