"""Step 6: the deck's corner discriminant (learned at enrollment from simulated camera views,
:mod:`vision.discriminant`).

It has the last word where the best readings lie close, and says whether a weakly
matching covered corner is an index corner at all (its distance to the reading's corners).
"""

from __future__ import annotations

import numpy as np

from vision.deck import BACK, STRIP_H, STRIP_W, STRIP_X0, centred
from vision.detect.fine import FineMatch
from vision.detect.model import Job, Key, Opts, Reads, Row
from vision.detect.state import DetectorState
from vision.window_match import window_scores


class DiscriminantStage(FineMatch, DetectorState):
    """Step 6."""

    def _classifier_proposals(self, face_rows: list[Row], reads: Reads) -> None:
        """Cards the fine match read weakly (under ``clf_propose_below``) whose corner the classifier puts
        with some confidence (log-probability over log 0.2) in a card the fine match did not
        shortlist: that card joins the shortlist (which keeps all it had) and the card is matched
        again.  Under glare the fine match's shortlist of four missed the right card in half the
        misreads (docs/vision.md, the comparison of methods)."""
        if self.p.recog not in ("clf", "both") or self.deck.clf.empty or self.p.clf_propose <= 0:
            return
        items: list[tuple[Key, Row, tuple[int, int]]] = []
        for r in face_rows:
            for i in range(len(r.positions)):
                key = Key(id(r), r.way, i)
                read = reads[key]
                if read.label == BACK or read.score >= self.p.clf_propose_below:
                    continue
                start = self._corner_at(r, r.way, read.corner[0])
                if start is not None:
                    items.append((key, r, start))
        if not items:
            return
        sl = self.p.lda_slack
        g = np.arange(-1, 2)
        gy, gx = (a.ravel() for a in np.meshgrid(g, g, indexing="ij"))
        at = np.array([s for _k, _r, s in items])
        raw = self._atlas.windows((at[:, :1] + sl + gy).ravel(), (at[:, 1:] + sl + gx).ravel())
        lp = self.deck.clf.log_probs(centred(raw)).reshape(len(items), len(gy), -1).max(axis=1)  # (K, C)
        per_label = lp.reshape(len(items), -1, 2).max(axis=2)  # (K, faces): the better way round
        jobs: list[Job] = []
        for (key, r, _s), pl in zip(items, per_label, strict=True):
            read = reads[key]
            have = {int(c) for c in read.cand}
            prop = [int(c) for c in np.argsort(-pl)[: self.p.clf_propose] if pl[c] > np.log(0.2) and int(c) not in have]
            if not prop:
                continue
            # the proposals join the shortlist, none of it leaves: a weak corner's fine match is what is
            # in doubt, and its weakest candidate was the right card as often as not (seed 30014, berlin's
            # 3d and 2d lost their place to the classifier's 2d and 7d and were read 2d and 2h)
            jobs.append(Job(r, key.way, key.card, self._wide_views(key.way, read), np.array([*read.cand, *prop], np.int64)))
        for key, again in self._refine_batch(jobs, xs=self.p.wide_dx, dys=self.p.wide_dy,
                                             shortlist=self.p.shortlist + self.p.clf_propose).items():
            if again.label != BACK:
                reads[key] = again

    def _corner_at(self, r: Row, band_way: int, corner: tuple[int, int]) -> tuple[int, int] | None:
        """Where the windows +-LDA_SLACK px around a read corner (where the fine match put it) start in
        the band atlas (row, column of the first), or None off the band."""
        sl = self.p.lda_slack
        cx, cy = corner
        band = r.bands[band_way]
        y0 = min(max(cy + self.p.pad_y - sl, 0), band.shape[0] - STRIP_H - 2 * sl)
        x0 = min(max(cx + STRIP_X0 - sl, 0), band.shape[1] - STRIP_W - 2 * sl)
        if y0 < 0 or x0 < 0:
            return None
        return y0, r.atlas_cols[band_way] + x0

    def _discriminant(self, starts: list[tuple[int, int]], labs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """:meth:`_discriminant_windows` without which window each is."""
        score, x, _which = self._discriminant_windows(starts, labs)
        return score, x

    def _discriminant_windows(self, starts: list[tuple[int, int]],
                              labs: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Discriminant scores of face labels ``labs`` (R, S) in the corner regions whose first windows
        start at ``starts`` in the band atlas: (scores (R, S, 2), windows (R, S, 2, D), and which
        window of the atlas each is (R, S, 2): candidates often align on the same one).

        Each label's each view (printed corner, opposite corner turned round) is scored on
        the window of the region its own plain view correlates with best, as enrollment
        aligned its simulated views.
        """
        n, s_max = labs.shape
        nwin = (2 * self.p.lda_slack + 1) ** 2
        gy, gx = np.divmod(np.arange(nwin), 2 * self.p.lda_slack + 1)
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
        if self.deck.lda_w.size:
            score = np.einsum("rkd,rkd->rk", x, self.deck.lda_w.T[cls]) + self.deck.lda_b[cls]
        else:  # a deck without a discriminant: the windows alone (the classifier's judge aligns on them too)
            score = np.zeros(cls.shape, np.float32)
        return score.reshape(n, s_max, 2), x.reshape(n, s_max, 2, -1), k.reshape(n, s_max, 2)

    def _discriminant_stage(self, face_rows: list[Row], reads: Reads, opts: Opts) -> None:
        """Last word among each card's shortlist: the deck's corner discriminant (:mod:`vision.discriminant`).

        A candidate the discriminant puts ``lda_nats`` or more behind the best loses
        ``lda_weight`` of score (less, in proportion, when it is closer).  Only where it can
        change the reading: the best leads the next by less than ``lda_weight``.  A top card
        is scored on both its corners.
        """
        use_lda = self.p.recog in ("lda", "both") or self.deck.clf.empty
        use_clf = self.p.recog in ("clf", "both") and not self.deck.clf.empty
        if not self.deck.lda_w.size:
            return

        def clf_weight(score: float) -> float:  # the classifier's say: more where the corner matched poorly
            return 0.0 if not use_clf else self.p.clf_weight if score >= self.p.clf_below else self.p.clf_weak

        keys: list[Key] = []
        starts: list[tuple[int, int]] = []
        labels: list[np.ndarray] = []
        owners: list[int] = []
        for r in face_rows:
            for i in range(len(r.positions)):
                key = Key(id(r), r.way, i)
                read = reads[key]
                label, all_cand, total, corner = read.label, read.cand, read.total, read.corner
                if label == BACK or len(all_cand) < 2:
                    continue
                base = opts[key][1] if key in opts else total
                top2 = np.partition(base, len(base) - 2)[-2:]
                if top2[1] - top2[0] >= max(self.p.lda_weight if use_lda else 0.0, clf_weight(read.score)):
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
        for k, row_labels in enumerate(labels):
            lab[k, : len(row_labels)] = row_labels
        face = (lab >= 0) & (lab < self.deck.lda_b.shape[0] // 2)
        score, x, which = self._discriminant_windows(starts, np.where(face, lab, 0))
        sv = score.max(axis=2)  # (R, S): the better way round
        if use_clf:  # the classifier's log-probability of each candidate's class, on the same windows
            n, s_n = lab.shape
            cls = 2 * np.where(face, lab, 0)[..., None] + np.arange(2)  # (R, S, 2)
            _uniq, first, back = np.unique(which.ravel(), return_index=True, return_inverse=True)
            lp = self.deck.clf.log_probs(x.reshape(n * s_n * 2, -1)[first])  # each window once
            cv = lp[back.ravel(), cls.ravel()].reshape(n, s_n, 2).max(axis=2)
        own = np.array(owners)
        for k, key in enumerate(keys):
            sel = np.flatnonzero(own == k)
            if not len(sel):
                continue
            read = reads[key]
            all_cand, total = read.cand, read.total
            cand, base = opts.get(key, (all_cand, total))
            pos = {int(c): n for n, c in enumerate(all_cand)}
            idx = np.array([pos[int(c)] for c in cand])
            new = base.copy()
            for on, vals, weight, nats in ((use_lda, sv, self.p.lda_weight, self.p.lda_nats),
                                           (use_clf, cv if use_clf else sv, clf_weight(read.score), self.p.clf_nats)):
                if not on:
                    continue
                d = np.where(face[sel[0], : len(all_cand)], vals[sel, : len(all_cand)].mean(axis=0), np.nan)[idx]
                if np.isnan(d).all():
                    continue
                d = np.where(np.isnan(d), np.nanmax(d), d)
                new = new + weight * np.maximum((d - d.max()) / nats, -1.0)
            j = int(np.argmax(new))
            opts[key] = (cand, new)
            strip = 0.0
            if key in self._strips:
                sc_cand, sc = self._strips[key]
                strip = float(sc[int(np.flatnonzero(sc_cand == cand[j])[0])]) if (sc_cand == cand[j]).any() else 0.0
            reads[key] = read._replace(label=int(cand[j]), score=float(total[idx[j]]), strip=strip)

    @property
    def _doubt_floor(self) -> float:
        """A covered card whose corner matched under covered_min but this well or better is looked at
        again (:meth:`_like_index`); under it, it is a gap the plan guessed."""
        return min(self.p.index_low, self.p.clf_index_low) if self._clf_judges else self.p.index_low

    @property
    def _clf_judges(self) -> bool:
        return self.p.clf_index > 0 and self.p.recog in ("clf", "both") and not self.deck.clf.empty

    def _like_index(self, items: list[tuple[Row, Key]], reads: Reads) -> np.ndarray:
        """Whether each weakly matched covered corner (over :attr:`_doubt_floor`) is an index corner: the
        discriminant's distance puts it near its reading's corners (``index_m2``; from ``index_low``) or
        the classifier, trained on corners under glare, blur and 720p, gives its reading ``clf_index``
        or more on the window that reading aligns on (from ``clf_index_low``)."""
        out = np.zeros(len(items), bool)
        if not items:
            return out
        score = np.array([reads[key].score for _r, key in items])
        out |= (score >= self.p.index_low) & (self._index_distance(items, reads) <= self.p.index_m2)
        if self._clf_judges:
            out |= (score >= self.p.clf_index_low) & (self._clf_own(items, reads) >= np.log(self.p.clf_index))
        return out

    def _read_corner_starts(self, items: list[tuple[Row, Key]], reads: Reads
                            ) -> tuple[list[tuple[int, int]], list[int], list[int]]:
        """Where each read corner's window starts, which of ``items`` have one, and their labels
        (the discriminant's and the classifier's alignment: one place)."""
        starts: list[tuple[int, int]] = []
        where: list[int] = []
        labs: list[int] = []
        for n, (r, key) in enumerate(items):
            label, corner = reads[key].label, reads[key].corner
            start = self._corner_at(r, r.way, corner[0])
            if start is not None and label < self.deck.lda_b.shape[0] // 2:
                starts.append(start)
                where.append(n)
                labs.append(label)
        return starts, where, labs

    def _clf_own(self, items: list[tuple[Row, Key]], reads: Reads) -> np.ndarray:
        """The classifier's log-probability of each read corner's own card (either way round), on the
        window its reading aligns on (as the discriminant's); -inf where it cannot be measured."""
        out = np.full(len(items), -np.inf)
        starts, where, labs = self._read_corner_starts(items, reads)
        if not starts:
            return out
        _score, x = self._discriminant(starts, np.array(labs)[:, None])
        x = x[:, 0]  # (R, 2, D): each view's own window
        lp = self.deck.clf.log_probs(x.reshape(2 * len(starts), -1)).reshape(len(starts), 2, -1)
        cls = 2 * np.array(labs)[:, None] + np.arange(2)[None, :]
        own = np.take_along_axis(lp, cls[:, :, None], axis=2)[:, :, 0]  # (R, 2)
        out[np.array(where)] = own.max(axis=1)
        return out

    def _index_distance(self, items: list[tuple[Row, Key]], reads: Reads) -> np.ndarray:
        """How far each read corner lies from its reading's corners, as the discriminant measures.

        Squared Mahalanobis distance (best view, each aligned on its own window), in units
        of the deck's own 99th percentile: about 1 or less for an index corner, 3 and more
        for a window of pips or paper the plan took for one.  inf where it cannot be measured.
        """
        out = np.full(len(items), np.inf)
        if not items or not self.deck.lda_w.size or not self.deck.lda_p.size or self.deck.lda_m2 <= 0:
            return out
        starts, where, labs = self._read_corner_starts(items, reads)
        if not starts:
            return out
        score, x = self._discriminant(starts, np.array(labs)[:, None])
        score, x = score[:, 0], x[:, 0]  # (R, 2), (R, 2, D)
        quad = ((x @ self.deck.lda_p) * x).sum(axis=2)  # x'Px; one matrix product (a three-operand einsum loops naively)
        m2 = quad - 2 * score
        if self.partial_index:  # a view that carries no index is no corner to be near (blank paper is near blank paper)
            m2 = np.where(np.array(self.index_views)[None, :], m2, np.inf)
        out[np.array(where)] = m2.min(axis=1) / self.deck.lda_m2
        return out
