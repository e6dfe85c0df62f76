"""Step 5: a second look where the corner leaves two readings close, over all a card shows.

A covered card's visible strip with its big pips, the top card's whole face
(:mod:`vision.strip_match`).  The same look also tells a supposed covered card that the
card below explains (its face, read through the supposed card, matches): a pip in a wide
visible strip is not a card (part of step 6 in :mod:`vision.detect`).
"""

from __future__ import annotations

import itertools
from typing import NamedTuple

import cv2
import numpy as np

from vision.deck import BACK, CARD_W, STRIP_W, DeckModel, channels
from vision.detect.model import Key, Opts, Reading, Reads, Row
from vision.detect.params import DetectParams
from vision.detect.state import DetectorState
from vision.strip_match import strip_scores


class Look(NamedTuple):
    """One card for the strip look: its row, its corner in the row's crop (template px, as the fine
    match found it), its visible width (template px), and up to ``strip_labels`` candidate labels."""

    row: Row
    corner: tuple[int, int]
    visible: int
    labels: np.ndarray


class StripStage(DetectorState):
    """Step 5 and the explaining away of ghost cards."""

    def _strip_setup(self) -> None:
        """Whole-card templates for :meth:`_strip_stage`, pooled, and their column sums (any visible width in O(1)).

        They depend on the deck alone, so every detector of one deck shares one copy.
        """
        key = (id(self.deck), self.p.strip_pool, self.p.strip_bands, self.p.strip_variants)
        if key not in _STRIP_CACHE:
            _STRIP_CACHE[key] = _strip_templates(self.deck, self.p)
        t = _STRIP_CACHE[key]
        self.strip_t, self.strip_csum, self.strip_csq, self.strip_cuts = t.pooled, t.csum, t.csq, t.cuts
        self.strip_by_label, self.strip_hw, self.strip_coarse = t.by_label, t.hw, t.coarse
        twin_key = (id(self.deck), self.p.strip_twin_min)
        if twin_key not in _TWIN_CACHE:
            _TWIN_CACHE[twin_key] = (corner_twins(self.deck, self.p.strip_twin_min), self.deck)
        self.strip_twins = _TWIN_CACHE[twin_key][0]

    def _with_twins(self, read: Reading, covered: bool) -> Reading:
        """``read`` with the corner twins of its best candidates among its candidates, each at the score of
        the candidate it is a twin of less how far their templates differ (the corner cannot tell them
        apart: the strip look must).  A covered card's corner that matched under ``covered_min`` is not sure
        to be an index: its twins would only crowd the look (a top card shows its whole face)."""
        if not self.strip_twins or not len(read.cand) or (covered and float(read.total.max()) < self.p.covered_min):
            return read
        have = {int(c) for c in read.cand}
        top = float(read.total.max())
        extra: dict[int, float] = {}
        for c, t in zip(read.cand, read.total, strict=True):
            if t < top - self.p.strip_tie:
                continue
            for twin, sim in self.strip_twins.get(int(c), ()):
                if twin not in have:
                    extra[twin] = max(extra.get(twin, -np.inf), float(t) - (1.0 - sim))
        if not extra:
            return read
        return read._replace(cand=np.concatenate([read.cand, np.array(list(extra), read.cand.dtype)]),
                             total=np.concatenate([read.total, np.array(list(extra.values()), read.total.dtype)]))

    def _strip_stage(self, face_rows: list[Row], reads: Reads, opts: Opts) -> None:
        """Second look at each face card: the whole strip a covered card shows (its big pips), the top card's whole face.

        The index corner's suit sign is 6-7 template pixels; the pips in the rest of the
        visible strip carry the suit (and the rank's pip layout) at twice that size.  The
        index-corner shortlist is re-ranked by index score + strip_lambda * strip score
        (normalised correlation over the visible part only, in bands across the card, each
        band aligned on its own since a card lies up to 1.5 degrees off its row).  Batched
        over every card of the frame.
        """
        if not len(self.deck.cards):
            return
        looks: list[Look] = []
        keys: list[Key] = []
        cands: list[np.ndarray] = []
        for r in face_rows:
            n = len(r.positions)
            for i, p in enumerate(r.positions):
                key = Key(id(r), r.way, i)
                if reads[key].label == BACK:
                    continue
                own = np.argsort(-reads[key].total, kind="stable")[: self.p.strip_labels]  # the corner's best readings ...
                read = reads[key] = self._with_twins(reads[key], covered=i < n - 1)
                cand, total, corner = read.cand, read.total, read.corner
                if len(cand) < 2:
                    continue
                order = own
                if self.strip_twins:  # ... and every twin tied with the best
                    tied = np.flatnonzero(total >= total.max() - self.p.strip_tie)
                    tied = tied[np.argsort(-total[tied], kind="stable")]
                    order = np.concatenate([own, tied[~np.isin(tied, own)]])
                gated = 0 < i < n - 1 and total[order[0]] < self.p.covered_min
                if total[order[0]] - total[order[1:]].max() > self.p.strip_margin and not gated:
                    continue
                v = CARD_W if i == n - 1 else r.positions[i + 1] - p
                m = self.p.strip_labels
                for g in range(0, len(order), m):  # (a look takes strip_labels labels: more go in several)
                    group = cand[order[g : g + m]]
                    looks.append(Look(r, corner[0], v, np.concatenate([group, np.repeat(group[-1:], m - len(group))])))
                keys.append(key)
                cands.append(cand[order])
        if not keys:
            return
        scored = self._strip_scores(looks)
        strip, at = [], 0
        for cand in cands:
            k = -(-len(cand) // self.p.strip_labels)
            strip.append(scored[at : at + k].ravel())
            at += k
        for key, cand, sc in zip(keys, cands, strip, strict=True):
            read = reads[key]
            all_cand, total = read.cand, read.total
            idx = np.searchsorted(all_cand, cand, sorter=np.argsort(all_cand))
            idx = np.argsort(all_cand)[idx]
            comb = total[idx] + self.p.strip_lambda * sc[: len(cand)]
            j = int(np.argmax(comb))
            opts[key] = (cand, comb / (1 + self.p.strip_lambda))
            self._strips[key] = (cand, sc[: len(cand)])
            reads[key] = read._replace(label=int(cand[j]), score=float(total[idx[j]]), strip=float(sc[j]))

    def _strip_scores(self, looks: list[Look]) -> np.ndarray:
        """Strip scores of candidate labels: (len(looks), strip_labels), best first as given."""
        k = self.p.strip_pool
        hp, wp = self.strip_hw
        dx, dy = self.p.strip_dx, self.p.strip_dy
        regions: list[np.ndarray] = []
        vis: list[int] = []
        tid_rows: list[np.ndarray] = []
        per_label = max(len(g) for g in self.strip_by_label.values())
        for r, corner, v, cand in looks:
            full = self._pooled_row(r)
            ox, oy = wp + dx + 1, dy + 1  # the padding
            vis.append(min(wp, max(STRIP_W // k, (v - self.p.strip_trim) // k)))
            cx = ox + round(corner[0] / k) - dx
            cy = oy + round((self.p.margin + corner[1]) / k) - dy
            regions.append(full[cy : cy + hp + 2 * dy, cx : cx + wp + 2 * dx])
            ids = np.concatenate([self.strip_by_label[int(lab)] for lab in cand])
            rows_ = np.full(self.p.strip_labels * per_label, ids[-1])
            rows_[: len(ids)] = ids
            tid_rows.append(rows_)
        reg = np.stack(regions)  # (C, hp + 2dy, wp + 2dx, 3)
        tids = np.stack(tid_rows)  # (C, T)
        strip = np.empty(tids.shape, np.float32)
        strip_scores(reg, np.array(vis, np.int64), tids, self.strip_cuts, dy, dx, self.strip_t, self.strip_csum, self.strip_csq, strip)
        best: np.ndarray = strip.reshape(len(looks), self.p.strip_labels, per_label).max(axis=2)
        return best

    def _pooled_row(self, r: Row) -> np.ndarray:
        """The row as the chosen way reads it, pooled, as blurred channels, padded by the look's slack (made once)."""
        if r.full is None:
            assert r.crop is not None  # (a face row: _prepare cut it)
            k, (_hp, wp), dx, dy = self.p.strip_pool, self.strip_hw, self.p.strip_dx, self.p.strip_dy
            c = r.crop if r.way == 0 else cv2.rotate(r.crop, cv2.ROTATE_180)
            if k > 1:
                c = cv2.resize(c, (c.shape[1] // k, c.shape[0] // k), interpolation=cv2.INTER_AREA)
            f = cv2.GaussianBlur(channels(c), (0, 0), self.p.strip_blur)
            pad = wp + dx + 1
            r.full = cv2.copyMakeBorder(f, dy + 1, dy + 1, pad, pad, cv2.BORDER_REPLICATE)
        return r.full

    def _likely_faces(self, spots: list[tuple[Row, tuple[int, int], int]], keep: int) -> np.ndarray:
        """For each card (a row, its corner, its visible width), the ``keep`` labels what it shows matches best
        at half the look's scale, with no slack (a first stage: the careful look weighs only these)."""
        k, (hp, wp), dx, dy = self.p.strip_pool, self.strip_hw, self.p.strip_dx, self.p.strip_dy
        per_label = np.full((len(spots), max(self.strip_by_label) + 1), -np.inf, np.float32)
        groups: dict[int, list[tuple[int, np.ndarray]]] = {}
        for j, (r, corner, v) in enumerate(spots):
            full = self._pooled_row(r)
            cx = min(max(wp + dx + 1 + round(corner[0] / k), 0), full.shape[1] - wp)  # (inside the padded row)
            cy = min(max(dy + 1 + round((self.p.margin + corner[1]) / k), 0), full.shape[0] - hp)
            cols = self._coarse_cols(v)
            groups.setdefault(cols, []).append((j, _coarse_vector(full[cy : cy + hp, cx : cx + wp], cols)))
        for cols, qs in groups.items():
            sim = np.stack([q for _j, q in qs]) @ self.strip_coarse[cols].T  # (cards, templates)
            at = np.array([j for j, _q in qs])
            for lab, rows in self.strip_by_label.items():
                if lab != BACK:
                    per_label[at, lab] = sim[:, rows].max(axis=1)
        out: np.ndarray = np.argsort(-per_label, axis=1, kind="stable")[:, :keep]
        return out

    def _coarse_cols(self, visible: int) -> int:
        """The first stage's columns for a card showing ``visible`` template px (as the careful look
        counts them: the whole card, or a covered card's strip less ``strip_trim``)."""
        k, (_hp, wp) = self.p.strip_pool, self.strip_hw
        if visible >= CARD_W:
            return len(self.strip_coarse) - 1
        vis = min(wp, max(STRIP_W // k, (visible - self.p.strip_trim) // k))
        return max(1, min(len(self.strip_coarse) - 1, vis // 2))

    def _every_label(self, spots: list[tuple[Row, tuple[int, int], int]]) -> np.ndarray | None:
        """The strip score of every face label (column = label) at each spot (a row, a card's corner in it,
        its visible width), in groups of ``strip_labels``; None where the deck's faces are not the 52."""
        labels = np.array(sorted(lab for lab in self.strip_by_label if lab != BACK))
        m = self.p.strip_labels
        if len(labels) % m or not np.array_equal(labels, np.arange(len(labels))):
            return None
        groups = labels.reshape(-1, m)
        looks = [Look(r, corner, visible, g) for r, corner, visible in spots for g in groups]
        return self._strip_scores(looks).reshape(len(spots), -1) if looks else np.zeros((0, len(labels)), np.float32)

    def _hidden_index_looks(self, face_rows: list[Row], reads: Reads) -> dict[Key, tuple[int, float, float]]:
        """Covered cards of a deck whose index no covered card shows upright (printed at the top right
        only), read from their visible strip alone: every label's whole card over the columns the
        card shows (its pips, a court's art).  Per card: (best label, its strip score, its lead over
        the next label)."""
        if self.index_views[0] or not len(self.deck.cards):
            return {}
        keys: list[Key] = []
        spots: list[tuple[Row, tuple[int, int], int]] = []
        for r in face_rows:
            for i in range(len(r.positions) - 1):
                key = Key(id(r), r.way, i)
                if reads[key].score >= self.p.hidden_index_min:
                    continue
                p = r.positions[i]
                spots.append((r, (p, 0), r.positions[i + 1] - p))
                keys.append(key)
        sc = self._every_label(spots)
        out: dict[Key, tuple[int, float, float]] = {}
        for key, row in zip(keys, sc if sc is not None else [], strict=sc is not None):
            order = np.argsort(-row)
            out[key] = (int(order[0]), float(row[order[0]]), float(row[order[0]] - row[order[1]]))
        return out

    def _unread_looks_of(self, face_rows: list[Row], reads: Reads) -> dict[Key, np.ndarray]:
        """Cards at a row's ends read from all they show (the top card's whole face, the first card's visible
        strip), as :meth:`_hidden_index_looks` reads a covered card: a top card whose corner matched under
        ``face_floor`` (a court printed with no rank, a corner washed out by glare), and in a one-corner deck
        a row's first card whose index corner is not in view (matched under ``covered_min``), over every
        label; every other top card (its corner may have matched well and wrongly: a thin rank-only index,
        ``top_face_lead``) over its reading and the labels its whole face matches best at half the scale
        (:meth:`_likely_faces`; every label would cost a quarter of a frame), and so every covered card whose
        corner matched under ``covered_face_below`` over its visible strip (``covered_face_lead``).  Per card:
        the strip score of each label looked at (index = label; -inf: not looked at)."""
        if not len(self.deck.cards) or not self.p.unread_look:
            return {}
        keys: list[Key] = []
        spots: list[tuple[Row, tuple[int, int], int]] = []
        judged_keys: list[Key] = []  # cards read whose reading what they show judges (a top card, a covered card)
        judged: list[tuple[Row, tuple[int, int], int]] = []
        # (on a street only: at the showdown a spread read as a row has no whole top card to judge by; a
        # simplistic showdown lost a 4s so)
        judge = np.isfinite(self.p.top_face_lead) and not self.p.tabled
        # (not in a deck whose covered cards lying upright show no index: their strip is all the look has,
        # and momoko's 4s read 5s so)
        covered_judge = np.isfinite(self.p.covered_face_lead) and not self.p.tabled and self.index_views[0]
        for r in face_rows:
            n = len(r.positions)
            for i in sorted({0, n - 1}):
                key = Key(id(r), r.way, i)
                read = reads[key]
                top = i == n - 1
                if read.label == BACK:
                    continue
                corner = read.corner[0] if read.corner else (r.positions[i], 0)
                if top and read.score >= self.face_floor:
                    if judge and r.open_end < 0:  # (a hand's end holds no top card)
                        judged.append((r, corner, CARD_W))
                        judged_keys.append(key)
                    continue
                if not top and (not self.partial_index or read.score >= self.p.covered_min):
                    continue
                spots.append((r, corner, CARD_W if top else r.positions[1] - r.positions[0]))
                keys.append(key)
            if covered_judge and r.open_end < 0:
                # every covered card read whose corner matched under ``covered_face_below``, over its
                # visible strip (its pips, a court's portrait): ``covered_face_lead``
                listed = {k for k in keys if k.row == id(r)}
                for i in range(n - 1):
                    key = Key(id(r), r.way, i)
                    read = reads[key]
                    if key in listed or read.label == BACK or not self.face_floor <= read.score < self.p.covered_face_below:
                        continue
                    corner = read.corner[0] if read.corner else (r.positions[i], 0)
                    judged.append((r, corner, r.positions[i + 1] - r.positions[i]))
                    judged_keys.append(key)
        sc = self._every_label(spots)
        out = {} if sc is None else dict(zip(keys, sc, strict=True))
        if judged and sc is not None:
            m = self.p.strip_labels
            likely = self._likely_faces(judged, m)
            looks = []
            for (r, corner, v), key, cand in zip(judged, judged_keys, likely, strict=True):
                own = reads[key].label
                labels = cand if own in cand else np.concatenate([[own], cand[: m - 1]])
                looks.append(Look(r, corner, v, labels.astype(np.int64)))
            scored = self._strip_scores(looks)
            n_lab = sc.shape[1]
            for look, key, row in zip(looks, judged_keys, scored, strict=True):
                every = np.full(n_lab, -np.inf, np.float32)
                every[look.labels] = row
                out[key] = every
        return out

    def _explain_away(self, face_rows: list[Row], reads: Reads) -> None:
        """A covered card the card below it explains is not a card.

        A wide visible strip shows the covered card's own big pips, and a pip near the top
        can pass for an index corner: the plan then puts a card there that is not.  If the
        card to its left, read over the width up to the next card, matches its own face
        there (its pips continue through the supposed card), the supposed card is dropped.
        """
        if not len(self.deck.cards):
            return
        looks: list[Look] = []
        who: list[tuple[Row, int]] = []

        def sharp(key: Key) -> Reading:  # (a card read through the optics bank: its sharp match's score and corner, as the test was measured on)
            return self._sharp_reads.get(key, reads[key])

        for r in face_rows:
            n = len(r.positions)
            for k in range(1, n - 1):
                if sharp(Key(id(r), r.way, k)).score >= self.p.explain_score:
                    continue
                below = reads[Key(id(r), r.way, k - 1)]._replace(corner=sharp(Key(id(r), r.way, k - 1)).corner)
                if below.label == BACK:
                    continue
                width = r.positions[k + 1] - r.positions[k - 1]
                looks.append(Look(r, below.corner[0], width, np.array([below.label])))
                who.append((r, k))
        if not looks:
            return
        ext = self._strip_scores(looks)[:, 0]
        for (r, k), e in zip(who, ext, strict=True):
            if e >= self.p.explain_min and sharp(Key(id(r), r.way, k)).score < self.p.explain_score:
                r.ghosts.add(k)


class StripTemplates(NamedTuple):
    pooled: np.ndarray  # (N, hp, wp, 3) whole cards, pooled
    csum: np.ndarray  # per band across the card: column sums of each channel, cumulated (N, wp + 1, 3)
    csq: np.ndarray  # ... and of the squares (N, wp + 1)
    cuts: np.ndarray  # the bands' rows
    by_label: dict[int, np.ndarray]  # each label's rows of ``pooled``
    hw: tuple[int, int]  # (hp, wp)
    coarse: list[np.ndarray]  # [c]: (N, D_c) each of ``pooled`` halved again, its first c columns, flattened, zero mean, unit length
    deck: DeckModel  # kept alive so that its id (the cache key) stays its own


_STRIP_CACHE: dict[tuple[object, ...], StripTemplates] = {}
_TWIN_CACHE: dict[tuple[object, ...], tuple[dict[int, list[tuple[int, float]]], DeckModel]] = {}


def corner_twins(deck: DeckModel, min_sim: float) -> dict[int, list[tuple[int, float]]]:
    """Per face label, the other labels whose plain index-corner templates match it at ``min_sim`` or
    better (the best of their views), with that similarity: cards the corner alone cannot tell apart.

    An ordinary deck has none (its closest corners, a 2 of clubs and of spades, match at 0.995-0.997);
    a deck that prints the rank away from the corner (the pip alone there) has whole groups.
    """
    if min_sim >= 1.0:
        return {}
    sel = np.flatnonzero((deck.variants == 0) & (deck.labels != BACK))
    t, lab = deck.templates[sel], deck.labels[sel]
    sim = t @ t.T
    best: dict[int, dict[int, float]] = {}
    for a, b in zip(*np.nonzero(sim >= min_sim), strict=True):
        la, lb = int(lab[a]), int(lab[b])
        if la != lb:
            twins = best.setdefault(la, {})
            twins[lb] = max(twins.get(lb, -1.0), float(sim[a, b]))
    return {la: sorted(twins.items()) for la, twins in best.items()}


def _strip_templates(deck: DeckModel, p: DetectParams) -> StripTemplates:
    k = p.strip_pool
    cards = deck.cards
    ids = np.flatnonzero(np.isin(deck.variants, p.strip_variants))
    h, w = cards.shape[1:3]
    hp, wp = h // k, w // k
    pooled = cards[ids, : hp * k, : wp * k].astype(np.float32)
    pooled = np.ascontiguousarray(pooled.reshape(len(pooled), hp, k, wp, k, 3).mean(axis=(2, 4)))
    cuts = np.linspace(0, hp, p.strip_bands + 1).round().astype(np.int64)
    csums, csqs = [], []
    for b0, b1 in itertools.pairwise(cuts):
        t = pooled[:, b0:b1]  # (N, bh, wp, 3)
        zero = np.zeros((len(t), 1, 3), np.float32)
        csums.append(np.concatenate([zero, np.cumsum(t.sum(axis=1), axis=1)], axis=1))  # (N, wp+1, 3)
        csqs.append(np.concatenate([zero[:, :, 0], np.cumsum((t * t).sum(axis=(1, 3)), axis=1)], axis=1))
    lab = deck.labels[ids]
    by_label = {int(x): np.flatnonzero(lab == x) for x in np.unique(lab)}
    # [c]: the first c columns of each card halved (index 0 unused; the last is the whole card)
    coarse = [np.zeros((len(pooled), 1), np.float32)]
    coarse += [np.stack([_coarse_vector(t, c) for t in pooled]) if len(pooled) else np.zeros((0, 1), np.float32)
               for c in range(1, wp // 2 + 1)]
    return StripTemplates(pooled, np.stack(csums), np.stack(csqs), cuts, by_label, (hp, wp), coarse, deck)


def _coarse_vector(card: np.ndarray, cols: int | None = None) -> np.ndarray:
    """A pooled card (channels) halved again, its first ``cols`` columns (all: None), flattened, zero mean,
    unit length: the first stage of a card's look over all it shows (which labels its careful look weighs)."""
    small = cv2.resize(card, (card.shape[1] // 2, card.shape[0] // 2), interpolation=cv2.INTER_AREA)
    small = (small if cols is None else small[:, :cols]).ravel()
    small = small - small.mean()
    out: np.ndarray = (small / (np.linalg.norm(small) + 1e-6)).astype(np.float32)
    return out
