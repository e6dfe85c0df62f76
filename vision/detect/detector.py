"""The detector: one deck seen through one calibrated camera; the steps put together."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

import cv2
import numpy as np

from vision.calibration import Calibration
from vision.corner import bgr_of
from vision.deck import (
    BACK,
    CARD_W,
    CODES,
    STRIP_H,
    STRIP_W,
    THUMB,
    DeckModel,
    embed,
    embed2,
    embedding_terms,
    normalize,
)
from vision.detect import glare, optics
from vision.detect.blobs import BlobStage, Memory
from vision.detect.foreground import FeltSegmenter, deck_colour_table
from vision.detect.lda import DiscriminantStage
from vision.detect.model import Detection, Key, Opts, Reads, Row
from vision.detect.params import PARAMS, DetectParams
from vision.detect.strip import StripStage
from vision.detect.unique import UniqueStage


class Detector(BlobStage, StripStage, DiscriminantStage, UniqueStage):
    """Detector for one deck seen through one calibrated camera.

    Construction precomputes everything that depends only on the calibration
    (region masks, sample points) and the deck's templates as the stages use them;
    :meth:`detect` is then one frame in, detections out.  ``params`` are the tuning
    constants (:data:`vision.detect.params.PARAMS` unless an experiment says otherwise).

    :attr:`at_showdown` is what the table's phase says about tabled cards (cards shown at the
    showdown, fanned or heaped, read by :mod:`vision.detect.tabled`): True where they may lie (the
    showdown, and between hands), False on a street (only rows and down cards: no blob is read
    as tabled cards, no row read again as them), None when nobody said (a photo on the command
    line, a service that has not heard the engine yet): read as ``params.tabled`` says.
    ``params.tabled`` stays the master switch: False, and tabled cards are never read.
    """

    #: the table's phase, as far as tabled cards go (see the class docstring); set per frame or per state
    at_showdown: bool | None = None

    def __init__(self, deck: DeckModel, calib: Calibration, face_floor: float = 0.6, reuse: bool = False,
                 params: DetectParams = PARAMS) -> None:
        self.p = params
        self._params = params  # with tabled cards read (as the params say) ...
        self._street_params = replace(params, tabled=False)  # ... and on a street: never
        self._read_tabled = params.tabled  # what the last frame did (the reused blobs' memory holds its readings)
        #: ``reuse``: a blob that has not moved or changed since the last frame keeps its cards
        #: without being read again (the service's steady state: most of the felt is still).
        self.reuse = reuse
        self._memory: Memory = []
        self.deck = deck
        self.calib = calib
        self.face_floor = face_floor
        self.w_mm = calib.layout.card_width_mm
        self.h_mm = self.w_mm * deck.aspect
        self.scale = CARD_W / self.w_mm  # template px per mm
        self.card_h = deck.card_h
        self.t2i = calib.table_to_image
        self.segmenter = FeltSegmenter(calib, params)
        # Coarse templates (half resolution) for the scan.
        cs = (STRIP_W // self.p.scan, STRIP_H // self.p.scan)
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
        # Each face's plain views through the optics bank (vision.detect.optics): templates of their own,
        # numbered after the deck's (two views each, so a template's number still says its view),
        # matched only in a row that they show is blurred (FineMatch._through_optics).
        # The same for the glare bank (vision.detect.glare), matched only for a weak corner
        # (FineMatch._through_glare).
        templates, plain = deck.templates, deck.plain
        self._optic_ids = self._glare_ids = np.zeros((0, 0), np.int64)
        if len(deck.cards) and params.optics_gain > 0:
            blurred, self._optic_ids = self._bank_setup(len(templates), optics.blurred_strips, len(optics.KERNELS))
            o_plain, o_flat = embed2(blurred, deck.mean, deck.weight)
            templates, plain = np.concatenate([templates, o_flat]), np.concatenate([plain, o_plain])
        if len(deck.cards) and params.glare_gain > 0:
            washed, self._glare_ids = self._bank_setup(len(templates), glare.washed_strips, len(glare.RAMPS))
            g_plain, g_flat = embed2(washed, deck.mean, deck.weight)
            templates, plain = np.concatenate([templates, g_flat]), np.concatenate([plain, g_plain])
        self._weighted = np.ascontiguousarray(templates * self._wt[None, :], dtype=np.float32)
        self._shift = np.ascontiguousarray(templates @ self._basis.T, dtype=np.float32)
        # ... and the plain views for the discriminant's alignment: a window's channel means times
        # each channel's template sum is what centring it takes off (the colour sums count twice)
        self._plain = np.ascontiguousarray(plain, dtype=np.float32)
        npx, quarter = STRIP_H * STRIP_W, (STRIP_H // 2) * (STRIP_W // 2)
        self._plain_shift = np.ascontiguousarray(np.stack([
            self._plain[:, :npx].sum(axis=1), 2 * self._plain[:, npx : npx + quarter].sum(axis=1),
            2 * self._plain[:, npx + quarter :].sum(axis=1), np.zeros(len(self._plain), np.float32)], axis=1), dtype=np.float32)
        self.is_face = deck.labels != BACK
        self._index_views_setup()  # which views carry an index (vision.index_layout; a one-corner deck)
        # every face, both ways round, at the back-thumbnail size (a row end that is a whole face)
        plain_faces = deck.cards[(deck.variants == 0) & self.is_face] if len(deck.cards) else deck.cards
        self.face_thumbs = np.stack(
            [normalize(cv2.resize(c.astype(np.float32), THUMB, interpolation=cv2.INTER_AREA)).ravel() for c in plain_faces]
        ) if len(plain_faces) else np.zeros((0, 0), np.float32)
        if len(deck.cards):
            self._strip_setup()
        self._tabled_setup()
        # the chromas the deck is printed in: never taken for a hand's skin (FeltSegmenter.hand_cut)
        plain_cards = deck.cards[deck.variants == 0][::2] if len(deck.cards) else np.zeros((0, 1, 1, 3), np.float32)
        self.deck_colours = deck_colour_table(bgr_of(plain_cards.reshape(-1, 1, 3)).reshape(plain_cards.shape),
                                               self.p.hand_deck_share)
        #: Table-space outlines of the last frame's big blobs that are not cards (hands, arms):
        #: the tracker holds a seat still while something covers it.
        self.occluders: list[np.ndarray] = []
        self._kept_labels = set()
        self._blurred_last = None
        self.shaken = False
        self.last_candidates: dict[int, np.ndarray] = {}

    def _bank_setup(self, first: int, make: Callable[[np.ndarray], np.ndarray], k: int) -> tuple[np.ndarray, np.ndarray]:
        """A bank's templates of every face (``make`` of its two plain views' whole cards: ``k`` strip
        images a card; numbered from ``first``: face by face, bank entry by entry, the two views side by
        side), and each label's numbers (labels, 2 * k): a label without faces (the back) keeps its own
        two plain views in every entry's place."""
        faces = [lab for lab in sorted(self.by_label) if lab != BACK]
        views = self.primary[faces]  # (F, 2): each face's two plain views
        strips = make(self.deck.cards[views.ravel()])  # (F * 2 * k, ...): card by card, entry by entry
        strips = strips.reshape(len(faces), 2, k, *strips.shape[1:]).transpose(0, 2, 1, 3, 4, 5).reshape(strips.shape)
        ids = np.tile(self.primary, (1, k))
        ids[faces] = first + np.arange(len(faces) * 2 * k).reshape(len(faces), 2 * k)
        return strips, ids

    def foreground(self, frame: np.ndarray) -> np.ndarray:
        return self.segmenter.foreground(frame)

    def detect(self, frame: np.ndarray) -> list[Detection]:
        """All cards in one frame (see :mod:`vision.detect` for how); tabled cards as
        :attr:`at_showdown` allows."""
        tabled = self._params.tabled and self.at_showdown is not False
        if tabled != self._read_tabled:
            # The phase changed what a blob may be: blobs kept from the last frame are read again
            # (a heap read as tabled cards at the showdown is no card on the next hand's street).
            self._memory = []
            self._read_tabled = tabled
        self.p = self._params if tabled else self._street_params
        out, rows, fresh, memory, root, occluded = self._find_rows(frame)
        self._kept_labels = {CODES.index(d.card) for _g, _l, kept, _o in memory for d in kept if d.card is not None}
        self._backness(rows)
        for r in rows:
            if not r.down:
                self._bands(r)
        out.extend(self._tabled_rows(frame, self._read_rows(rows)))
        out = self._tabled_unique(out)
        if self.reuse:
            # (a frame the camera's shake smeared is not remembered: its readings are the blur's, and the
            # sharp frames after it must be read afresh, not matched to it and kept)
            for b, (geo, look) in fresh.items() if not self.shaken else ():
                memory.append((geo, look, [d for d in out if root.get(d.blob) == b], occluded.get(b, [])))
            self._memory = memory
        return out

    def _read_rows(self, rows: list[Row]) -> list[Detection]:
        """Steps 3-7 for every row of the frame at once."""
        self._strips = {}
        face_rows = [r for r in rows if not r.down]
        self._coarse_scan(face_rows)
        jobs = self._orient_and_plan(face_rows)
        reads = self._refine_batch(jobs)
        self._retry_along_gap(jobs, reads)
        self._wide_again(jobs, reads)
        self._through_optics(jobs, reads)
        self._through_glare(jobs, reads)
        self._merge_split_cards(face_rows, reads)
        self._classifier_proposals(face_rows, reads)
        opts: Opts = {}
        self._strip_stage(face_rows, reads, opts)
        self._discriminant_stage(face_rows, reads, opts)
        self._explain_away(face_rows, reads)
        self._hidden = self._hidden_index_looks(face_rows, reads)  # a deck printed at the top right only
        self._unread_looks = self._unread_looks_of(face_rows, reads)  # a card its corner did not read
        out, faces = self._emit(rows, reads)
        if self.p.unique:
            self._unique(out, faces, reads, opts)
        #: each read face's candidate labels, by the ``id`` of its detection (for the benches' errors by
        #: cause: was the right card among those the last stages chose from?)
        self.last_candidates = {id(out[j]): opts.get(key, (reads[key].cand, reads[key].total))[0] for j, key in faces}
        return out

    def _emit(self, rows: list[Row], reads: Reads) -> tuple[list[Detection], list[tuple[int, Key]]]:
        """The detections of every row (its better reading where a blob fits a row both ways; covered
        cards whose corner is too weak to believe left out; face-down rows as down cards), and where
        among them the read faces are."""
        out: list[Detection] = []
        faces: list[tuple[int, Key]] = []
        for r in rows:
            if r.down:
                out.extend(self._down_cards(r))
            else:
                r.total = float(np.mean([reads[Key(id(r), r.way, i)].score for i in range(len(r.positions))]))
        # Blobs that fit a card row both ways along (nearly square): keep the better reading.
        chosen: dict[int, Row] = {}
        for r in rows:
            if r.down:
                continue
            if r.blob not in chosen or r.total > chosen[r.blob].total:
                chosen[r.blob] = r
        no_back = not self.deck.has_back
        # Covered cards whose corner matched too weakly to believe: is there an index corner at all?
        doubtful = [(r, Key(id(r), r.way, i)) for r in chosen.values() for i in range(1, len(r.positions) - 1)
                    if self._doubt_floor <= reads[Key(id(r), r.way, i)].score < self.p.covered_min
                    and reads[Key(id(r), r.way, i)].label != BACK]
        like_index = dict(zip([k for _r, k in doubtful], self._like_index(doubtful, reads), strict=True))
        for r in chosen.values():
            positions = r.positions
            backs = sum(1 for i in range(len(positions)) if reads[Key(id(r), r.way, i)].label == BACK)
            if backs * 2 > len(positions):  # face-down cards side by side that looked less like the back
                out.extend(self._down_cards(r))
                continue
            for i, p in enumerate(positions):
                read = reads[Key(id(r), r.way, i)]
                label, score, strip = read.label, read.score, read.strip
                covered = i < len(positions) - 1 or r.open_end >= 0  # (the end under a hand holds no top card)
                # A covered card whose corner matched poorly is a gap the plan guessed, with no corner in
                # it, unless the rest of its visible strip matches the same card well.
                # (A rescued card must not read as its neighbour: a guessed gap inside a card shows that card.)
                near = {reads[Key(id(r), r.way, k)].label for k in (i - 1, i + 1) if 0 <= k < len(positions)}
                rescued = score >= self.p.covered_low and strip >= self.p.strip_rescue and label not in near
                rescued = rescued or like_index.get(Key(id(r), r.way, i), False)
                # (Whether a corner is there at all is the best corner match of any candidate: the strip
                # look or the discriminant may have picked a label that matched the corner a little less.)
                present = max(score, float(np.max(read.total, initial=-np.inf)))
                gated = (covered and i > 0 and present < self.p.covered_min and not rescued) or i in r.ghosts
                hidden = not self.index_views[0] and present < self.p.hidden_index_min  # no index in its visible strip
                if covered and hidden and i == 0:
                    gated = False  # (the row's first card: its corner is where the row starts)
                if covered and hidden and not gated:
                    # Its corner says where it lies, not which card it is: read from its visible strip
                    # alone if that is clear (the row's first card, else, face up and unread; another, else, left out).
                    look = self._hidden.get(Key(id(r), r.way, i))
                    clear = look is not None and look[1] >= self.p.hidden_strip_min and look[2] >= self.p.hidden_strip_lead
                    if look is not None and look[0] not in near and clear:
                        label, score = look[0], 1.0
                    elif i > 0:
                        gated = True  # (a pip's corner can pass for a card's: only a read strip says a card lies there)
                    else:
                        score = -1.0
                if gated:
                    continue
                if covered and i == 0 and self.partial_index and not hidden and present < self.p.covered_min and not rescued:
                    score = -1.0  # a one-corner deck's first card, its index not in view: a card face up, unread
                face = self._unread_looks.get(Key(id(r), r.way, i)) if label != BACK else None
                if face is not None and score < self.face_floor:
                    # read from all it shows of its face, if one card clearly matches that best
                    order = np.argsort(-face)
                    best, lead = int(order[0]), float(face[order[0]] - face[order[1]])
                    if best not in near and face[best] >= self.p.unread_min and lead >= self.p.unread_lead:
                        label, score = best, float(face[best])
                elif face is not None:
                    # A card read is judged by all it shows of its face: a top card by its whole face (a 3
                    # whose tiny numeral read as a 2 shows its middle pip; a court with no rank, its
                    # portrait), a covered card by its visible strip (its pips, a court's portrait), by a
                    # wider lead (a narrow strip is mostly the index the corner read: neoclassical's 3d
                    # read Ad at 0.05).  A top card not between two suits of one colour and rank (a club
                    # and a spade pooled to 5 px are one blot: tango's 8s read 8c so; the index's sign at
                    # full scale says it better); a covered card's strip shows the suit's pips at their size.
                    best = int(np.argmax(face))
                    lead = self.p.covered_face_lead if covered else self.p.top_face_lead
                    twins = not covered and _suit_twins(self.deck.code(best), self.deck.code(label))
                    if best != label and best not in near and face[best] - face[label] >= lead and not twins:
                        label, score = best, float(face[best])

                tc = self._card_corners(r, p / self.scale, r.way)
                if label == BACK or (no_back and score < self.face_floor):
                    out.append(Detection(None, False, self.calib.to_image(tc), tc, score, covered, blob=r.blob, order=i))
                else:
                    card = self.deck.code(label) if score >= self.face_floor else None
                    out.append(Detection(card, True, self.calib.to_image(tc), tc, score, covered, blob=r.blob, order=i))
                    if card is not None:
                        faces.append((len(out) - 1, Key(id(r), r.way, i)))
        return out, faces

    def _down_cards(self, r: Row) -> list[Detection]:
        """Face-down cards side by side (a blob when their gaps close up in the picture)."""
        k = max(1, round((r.along + self.p.down_gap_mm) / (self.w_mm + self.p.down_gap_mm)))
        step = (r.along - self.w_mm) / (k - 1) if k > 1 else 0.0
        dets = []
        for i in range(k):
            tc = self._card_corners(r, i * step, 0)
            dets.append(Detection(None, False, self.calib.to_image(tc), tc, r.backness, blob=r.blob, order=i))
        return dets

    def _card_corners(self, r: Row, p_mm: float, way: int) -> np.ndarray:
        if way == 1:  # positions were measured on the crop turned round
            p_mm = r.along - self.w_mm - p_mm
        x0 = r.origin + r.ua * max(p_mm, 0.0)
        ua, uc = r.ua, r.uc
        return np.array([x0, x0 + ua * self.w_mm, x0 + ua * self.w_mm + uc * self.h_mm, x0 + uc * self.h_mm])


def _suit_twins(a: str | None, b: str | None) -> bool:
    """Two cards of one rank whose suits share a colour (clubs and spades, hearts and diamonds)."""
    return a is not None and b is not None and a[0] == b[0] and (a[1] in "hd") == (b[1] in "hd")
