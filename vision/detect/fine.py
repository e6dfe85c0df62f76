"""Step 4: reading each card with the fine match.

The best candidates from the coarse scan are re-matched at full template resolution with
a few pixels of slack (the inner loops compiled: :mod:`vision.window_match`); a card fully
in view is also read from its other corner.  The best label wins; the back template (if
enrolled) makes a card face down.  A weak covered card is looked for along the whole gap
its neighbours leave; a weak corner is matched again over the band's whole height (a card
lower than its row's edge); two weak covered cards side by side are looked for as one.
"""

from __future__ import annotations

import math

import numpy as np

from vision.deck import BACK, CARD_W, STRIP_H, STRIP_W, STRIP_X0, RawWindows, centred
from vision.detect import optics
from vision.detect.model import Job, Key, Reading, Reads, Row, Tables
from vision.detect.state import DetectorState
from vision.window_match import gather_windows, window_scores


class FineMatch(DetectorState):
    """Step 4: candidates, the batched fine match, and the second tries for weak corners."""

    def _index_views_setup(self) -> None:
        """Which of a card's two views (the corner at the top of a covered card's visible strip,
        upright and turned round) carry an index in this deck (:mod:`vision.index_layout`), and the
        template tables a covered card is matched with: only views that carry one, so a pip or
        blank paper where a one-corner deck prints nothing is never read as an index."""
        views = self.deck.layout.views
        self.index_views = views
        self.partial_index = views != (True, True) and any(views)
        keep = 0 if views[0] else 1  # templates alternate view 0, view 1 (deck.enroll)

        def index_only(table: np.ndarray) -> np.ndarray:
            if not self.partial_index:
                return table
            out = table.copy()
            for lab in range(len(table)):
                if lab == BACK or not len(self.by_label.get(lab, [])):
                    continue
                good = table[lab][table[lab] % 2 == keep]
                if len(good):
                    out[lab] = np.resize(good, table.shape[1])
            return out

        def tables(primary: np.ndarray, full: np.ndarray) -> Tables:
            return Tables(primary, index_only(primary), full, index_only(full))

        self._sharp = tables(self.primary, self.label_tids)
        self._covered_primary, self._covered_tids = self._sharp.covered_primary, self._sharp.covered_full
        pairs = [self._optic_ids[:, 2 * k : 2 * k + 2] for k in range(self._optic_ids.shape[1] // 2)]
        # the probe's table: "label" l * (K + 1) + k is label l's two plain views, sharp (k = 0) or through
        # kernel k - 1, so that one batch scores a card's own label every way (each "label" on its own)
        probe = np.stack([self.primary, *pairs], axis=1).reshape(-1, 2) if pairs else self.primary[:0]
        covered = np.stack([index_only(t) for t in (self.primary, *pairs)], axis=1).reshape(-1, 2) if pairs else probe
        self._optic_probe = Tables(probe, covered, probe, covered)
        self._optic_full = [tables(np.concatenate([self.primary, ids], axis=1), np.concatenate([self.label_tids, ids], axis=1))
                            for ids in pairs]
        g = self._glare_ids
        self._glare_full = tables(np.concatenate([self.primary, g], axis=1), np.concatenate([self.label_tids, g], axis=1)) \
            if g.size else None

    def _mask_no_index(self, scores: np.ndarray) -> np.ndarray:
        """Coarse scores (positions, coarse templates: two views per label) with the views that carry
        no index scored -1 (nothing scores lower): the plan is laid on index corners only."""
        if not self.partial_index or not self.index_views[0]:  # (a hidden index: the plan locates cards by any view)
            return scores
        out = scores.copy()
        faces = 2 * int(np.count_nonzero(self.coarse_ids != BACK))
        out[:, 0 if not self.index_views[0] else 1 : faces : 2] = -1.0
        return out

    def _candidates(self, scores: np.ndarray, p: int, k: int | None = None) -> np.ndarray:
        """Labels of the ``k`` best coarse matches near position ``p`` (``scores``: per label, already
        the best of each position and its neighbours), in no particular order."""
        k = self.p.candidates if k is None else k
        j = min(p // self.p.scan, len(scores) - 1)
        return self.coarse_ids[np.argpartition(-scores[j], k)[:k]] if len(self.coarse_ids) > k else self.coarse_ids

    def _top_candidates(self, r: Row, way: int, p: int) -> np.ndarray:
        """Candidates for a top card at ``p`` of a row lying ``way`` round: the best coarse matches at
        both of its corners (the coarse scan sees the band at the row's edge; a top card lying 2 px
        off it may be missing from one corner's list, rarely from both).  Half as many from the other
        corner (8 from each lost top cards whose rank's neighbours crowd the list: 8s read as 6s)."""
        both = np.concatenate([self._candidates(r.lscans[way], p), self._candidates(r.lscans[1 - way], r.last - p, self.p.candidates // 2)])
        return np.array(list(dict.fromkeys(both.tolist())), dtype=both.dtype)

    def _window_origin(self, r: Row, band_way: int, p: int, xs: range, dys: range) -> tuple[int, int, tuple[int, int]]:
        """Where the corner windows of card position ``p`` at offsets ``xs`` x ``dys`` (template px)
        start in the band (row, column of window 0), and the card's corner in the crop for window 0
        (x, y - MARGIN)."""
        med = r.top_median[band_way]
        if 0 <= p < len(med):
            base_dy = int(med[p])
        else:
            top = r.tops[band_way][max(0, p + 2) : p + STRIP_W]
            base_dy = min(max(int(np.median(top)), -self.p.pad_y + 1), self.p.pad_y - 1) if len(top) else 0
        band = r.bands[band_way]
        y0 = self.p.pad_y + base_dy + dys.start
        y0 = min(max(y0, 0), band.shape[0] - STRIP_H - (len(dys) - 1))
        x0 = p + STRIP_X0 + xs.start
        x0 = min(max(x0, 0), band.shape[1] - STRIP_W - (len(xs) - 1))
        return y0, x0, (x0 - STRIP_X0, y0 - self.p.pad_y)

    def _refine_batch(self, jobs: list[Job], plain_views: bool = False, xs: range | None = None,
                      dys: range | None = None, shortlist: int | None = None, tables: Tables | None = None) -> Reads:
        """Re-match candidates at full resolution, ``xs`` along and ``dys`` across (default: the
        fine match's slack), summed over the views; a job with more than ``shortlist`` candidates
        (default ``DetectParams.shortlist``) is first cut to that many on the plain views."""
        if not jobs:
            return {}
        xs = range(-self.p.pad_x, self.p.pad_x + 1) if xs is None else xs
        dys = range(-self.p.dy, self.p.dy + 1) if dys is None else dys
        specs = [[(bw, p, xs, dys) for bw, p in job.views] for job in jobs]
        res = self._score_jobs(jobs, specs, plain_views, self.p.shortlist if shortlist is None else shortlist, tables)
        return {job.key: read for job, read in zip(jobs, res, strict=True)}

    def _score_jobs(self, jobs: list[Job], specs: list[list[tuple[int, int, range, range]]],
                    plain_views: bool = False, shortlist: int = 4, tables: Tables | None = None) -> list[Reading]:
        """Fine match of every job at once (batched over jobs; a job has one or two views).

        ``plain_views``: only the two plain views of each candidate, not the camera-like
        resamplings (enough to tell which end of a row holds a corner).  ``tables``: which
        templates score a label (default: the deck's own, :attr:`_sharp`).
        """
        primary, covered_primary, full, covered_full = self._sharp if tables is None else tables
        # per job, per view: (window 0 in the band atlas (row, column), xs, the card's corner for window 0)
        index: list[list[tuple[tuple[int, int], range, tuple[int, int]]]] = []
        for job, spec in zip(jobs, specs, strict=True):
            r = job.row
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

        ncand = np.array([len(job.cand) for job in jobs])
        lmax = int(ncand.max())
        cand = np.zeros((nj, lmax), np.int64)
        for j, job in enumerate(jobs):
            cand[j, : len(job.cand)] = job.cand
        valid = np.arange(lmax)[None, :] < ncand[:, None]
        # A deck printed at one corner: every corner is matched only with the views that carry an index;
        # but where no covered card shows one upright (printed at the top right only), a covered card's
        # corner is still matched with every view, to say where the card lies (its pips' corner, its
        # blank paper, on its own card), not which card it is (that is left to its strip, see
        # StripStage._hidden_index_looks).
        hidden = self.partial_index and not self.index_views[0]
        locate = np.array([job.card >= 0 and len(job.views) == 1 for job in jobs])[vj][:, None] if hidden else None

        def table_of(full: np.ndarray, index_only: np.ndarray) -> np.ndarray:  # (V, L * width)
            t: np.ndarray = (index_only if self.partial_index else full)[cand[vj]].reshape(len(vj), -1)
            if locate is not None:
                t = np.where(locate, full[cand[vj]].reshape(len(vj), -1), t)
            return t

        if lmax > shortlist:
            # Shortlist on the two plain views of each candidate, then the full match on the few left.
            pre = scores(table_of(primary, covered_primary)).max(axis=1).reshape(len(vj), lmax, -1).max(axis=2)  # (V, L)
            pre = (np.maximum if self.partial_index else np.add).reduceat(pre, np.cumsum(np.r_[0, nv[:-1]]), axis=0)
            pre = np.where(valid, pre, -np.inf)
            keep = np.argsort(-pre, axis=1, kind="stable")[:, :shortlist]
            cand = np.take_along_axis(cand, keep, axis=1)
            valid = np.take_along_axis(valid, keep, axis=1)
        ns = cand.shape[1]
        table = primary if plain_views else full
        g = table.shape[1]
        tids = table_of(table, covered_primary if plain_views else covered_full)  # (V, S*G)
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
        plain_best = np.einsum("vsd,vsd->vs", centred(at_best).reshape(*wb.shape, -1), self._plain[tb])
        best[vi, wb, np.arange(ns)[None, :]] += np.minimum(0.0, plain_best - self.p.plain_min)
        per_view = best.max(axis=1)  # (V, S)
        starts = np.cumsum(np.r_[0, nv[:-1]])
        if self.partial_index:  # of a card's two corners one shows the index: the better one says
            total = np.maximum.reduceat(per_view, starts, axis=0)
        else:
            total = np.add.reduceat(per_view, starts, axis=0) / nv[:, None]
        total = np.where(valid, total, -np.inf).astype(np.float32)
        ks = total.argmax(axis=1)
        wk = best[np.arange(len(vj)), :, ks[vj]].argmax(axis=1)  # (V,): best window of the winner, per view
        first = np.cumsum(np.r_[0, nv[:-1]])
        out = []
        for j, idx in enumerate(index):
            k = int(ks[j])
            corner = []
            for v, (_start, xs, (ox, oy)) in enumerate(idx):
                w = int(wk[first[j] + v])
                corner.append((ox + w % len(xs), oy + w // len(xs)))
            out.append(Reading(int(cand[j, k]), float(total[j, k]), cand[j][valid[j]], total[j][valid[j]], corner))
        return out

    def _retry_positions(self, p: int, lo: int, hi: int) -> list[int]:
        """Where to look again for a covered card whose corner matched weakly at ``p``: 5 px to
        either side first, then every 5 px of the gap ``lo``..``hi`` not yet covered (the fine match
        has 2 px of slack either way).  Positions from the third on must match clearly to count."""
        near = [int(np.clip(p + dp, lo, hi)) for dp in (-5, 5)]
        step = 2 * self.p.pad_x + 1
        far = [q for q in range(lo, hi + 1, step) if min(abs(q - p), *(abs(q - n) for n in near)) > self.p.pad_x]
        return [*near, *far]

    @staticmethod
    def _wide_views(way: int, read: Reading) -> list[tuple[int, int]]:
        """The views of a reading, each at the position along its band where the fine match put the
        corner (the second look over the band's height then needs only a pixel of slack along)."""
        return [(bw, int(corner[0])) for bw, corner in zip((way, 1 - way)[: len(read.corner)], read.corner, strict=True)]

    def _merge_split_cards(self, face_rows: list[Row], reads: Reads) -> None:
        """Two covered cards side by side that both read poorly may be one card the plan cut in two
        (two weak coarse matches outscored one good one): look for one card between their
        neighbours, and if one reads as a covered card must, it replaces both."""
        jobs: list[Job] = []
        pair_of: list[int] = []  # per job: which pair (its place in ``pairs``)
        pairs: list[tuple[Row, int]] = []  # (row, the first of the two weak cards)
        gap = math.ceil(self.p.min_gap * CARD_W)
        for r in face_rows:
            n = len(r.positions)
            weak = [0 < i < n - 1 and reads[Key(id(r), r.way, i)].score < self.p.covered_min for i in range(n)]
            for i in range(1, n - 2):
                if not (weak[i] and weak[i + 1]) or (pairs and pairs[-1][0] is r and pairs[-1][1] == i - 1):
                    continue
                lo, hi = r.positions[i - 1] + gap, r.positions[i + 2] - gap
                if hi < lo:
                    continue
                pairs.append((r, i))
                for q in range(lo, hi + 1, 2 * self.p.pad_x + 1):  # the fine match's slack covers the steps between
                    jobs.append(Job(r, r.way, i, [(r.way, q)], self._candidates(r.lscans[r.way], q), trial=q + 1))
                    pair_of.append(len(pairs) - 1)
        if not jobs:
            return
        found = self._refine_batch(jobs)
        best: dict[int, tuple[float, int, Reading]] = {}  # per pair: its best reading, and where its corner lies
        for job, k in zip(jobs, pair_of, strict=True):
            read = found[job.key]
            if read.label != BACK and (k not in best or read.score > best[k][0]):
                best[k] = (read.score, int(read.corner[0][0]), read)  # where the match put the card's corner
        for k in sorted(best, reverse=True):  # from the row's far end, so the earlier indices stay put
            score, q, read = best[k]
            r, i = pairs[k]
            if score < self.p.covered_min:
                continue
            row = [reads[Key(id(r), r.way, j)] for j in range(len(r.positions))]
            row[i : i + 2] = [read]
            for j in range(len(r.positions)):
                reads.pop(Key(id(r), r.way, j), None)
            r.positions[i : i + 2] = [q]
            for j, rd in enumerate(row):
                reads[Key(id(r), r.way, j)] = rd

    def _retry_along_gap(self, jobs: list[Job], reads: Reads) -> None:
        """A covered card whose corner did not match where the coarse plan put it: look along the
        whole gap its neighbours leave before giving it up (the coarse scan steps 2 px and blurs,
        and a card turned a little off its row can score less at its corner than a pip beside it)."""
        retry: list[Job] = []
        gap = math.ceil(self.p.min_gap * CARD_W)  # the least offset between two cards of a row
        for job in jobs:
            r, way, i = job.row, job.way, job.card
            if 0 < i < len(r.positions) - 1 and reads[job.key].score < self.p.covered_min:
                p = job.views[0][1]
                lo, hi = r.positions[i - 1] + gap, r.positions[i + 1] - gap
                for k, q in enumerate(self._retry_positions(p, lo, hi)):
                    if q != p:
                        retry.append(Job(r, way, i, [(job.views[0][0], q)], self._candidates(r.lscans[way], q), trial=k + 1))
        if not retry:
            return
        again = self._refine_batch(retry)
        # Surest first, and two cards never take one corner (a guessed gap beside a weak card may
        # find that card's corner too); further along the gap only a clear corner counts (a pip
        # beside it may match a little better than a corner turned off its row).
        retry.sort(key=lambda job: -again[job.key].score)
        for job in retry:
            r, home = job.row, Key(id(job.row), job.way, job.card)
            i = job.card
            near = job.trial <= 2  # the first two places, 5 px to either side (see _retry_positions)
            need = reads[home].score if near else max(reads[home].score, self.p.covered_min)
            q = job.views[0][1]
            apart = r.positions[i - 1] + gap <= q <= r.positions[i + 1] - gap
            if again[job.key].score > need and apart:
                reads[home] = again[job.key]
                r.positions[i] = q

    def _wide_again(self, jobs: list[Job], reads: Reads) -> None:
        """Still weak: the card may sit higher or lower than the row's edge says (its top edge hidden
        behind a neighbour's corner peeking out above it).  Match it again over the band's whole
        height; believe the new reading only if it matches clearly better (more slack flatters
        every label a little) and is a face (the band's edge rows hold felt, which flatters the back)."""
        weak = [job._replace(views=self._wide_views(job.way, reads[job.key]))
                for job in jobs if reads[job.key].score < self.p.wide_below]
        for key, read in self._refine_batch(weak, xs=self.p.wide_dx, dys=self.p.wide_dy).items():
            if read.label != BACK and read.score >= reads[key].score + self.p.wide_gain:
                reads[key] = read

    def _through_optics(self, jobs: list[Job], reads: Reads) -> None:
        """A blurred row (motion, focus, a low-resolution camera): its corners match every sharp
        template less, and not evenly, so a wrong card can win.  In a frame that is blurred
        (:meth:`_frame_blurred`), each row's read cards are scored once more through each kernel of
        the optics bank alone (:mod:`vision.detect.optics`); where
        one kernel fits the row's corners clearly better than the sharp templates do (by
        ``optics_gain`` on the row's mean), the row is blurred that way, and its cards are matched
        again with that kernel's templates beside the sharp ones (the shortlist taken again with
        them); a card takes the new reading where it is a face and matches at least as well (its
        sharp reading kept in ``_sharp_reads`` for the ghost test, which was measured on it).
        A sharp row gains nothing from a blurred template (measured: -0.06 to +0.02 on rows that
        read 0.9 and better), a blurred one 0.05-0.1 from the right kernel."""
        self._sharp_reads = {}
        self.shaken = False
        if not self._optic_full:
            return
        probe = [job._replace(views=self._wide_views(job.way, reads[job.key]))
                 for job in jobs if reads[job.key].label != BACK]
        if not probe:
            return  # (nothing read afresh: the blobs kept are sharp frames' (a shaken one is not kept))
        # (fewer fresh corners than the sample, the rest of the table's blobs kept from earlier frames:
        # too few to say what the camera does, and a blob read afresh alone (a hand just gone) must be
        # read as the camera was judged last, not as its three corners happen to say)
        if len(probe) >= self.p.optics_sample or not self.reuse or self._blurred_last is None:
            self._blurred_last, self.shaken = self._frame_blurred(probe, reads)
        else:
            # (a few blobs read afresh beside the kept ones: the camera's blur is as last judged, but
            # whether it shook is what these few say: a card just dealt after a shake is not held.  At
            # a row's gain, optics_gain: measured one card at a time on the frame probes' best cards,
            # six tuning decks, 108 cards each: sharp and JPEG 40 frames 0 taken for shaken, 9 px of
            # motion blur 0.954; at optics_frame_gain 0.009 and 0.991)
            self.shaken = self._camera_shook(probe, reads)
        if not self._blurred_last:
            return
        rows: dict[int, list[int]] = {}
        for i, job in enumerate(probe):
            rows.setdefault(id(job.row), []).append(i)
        sc = self._optics_probe(probe, reads)
        home = {job.key: job for job in jobs}
        again: list[Job] = []
        kernel: dict[Key, int] = {}
        for members in rows.values():
            means = sc[members].mean(axis=0)
            base, gains = float(means[0]), means[1:] - means[0]
            k = int(np.argmax(gains))
            if base < self.p.optics_row_min or gains[k] < self.p.optics_gain:
                continue
            for i in members:
                again.append(home[probe[i].key]._replace(views=probe[i].views))
                kernel[probe[i].key] = k
        covered = {job.key for job in again if 0 < job.card < len(job.row.positions) - 1}
        for k, t in enumerate(self._optic_full):
            mine = [job for job in again if kernel[job.key] == k]
            for key, read in self._refine_batch(mine, xs=self.p.wide_dx, tables=t).items():
                old = reads[key].score
                # (a covered card the sharp templates did not find, a gap the plan guessed, must be clear
                # through the optics: a smeared template flatters a pip or a neighbour's edge there too)
                need = self.p.optics_present if key in covered and old < self.p.covered_min else old
                if read.label != BACK and read.score >= need:
                    self._sharp_reads[key] = reads[key]
                    reads[key] = read

    def _through_glare(self, jobs: list[Job], reads: Reads) -> None:
        """A corner under a lamp's glare (:mod:`vision.detect.glare`): its ink washed out more at one
        end than the other, it matches every sharp template less, the right one not best.  Each
        corner that matched under ``glare_below`` is matched again with the washed templates beside
        the sharp ones (the shortlist taken again with them).  The new reading is taken where it is
        a face, matches at least as well as the old one, and matches ``glare_gain`` better washed
        than its own sharp templates match the same window: that is the glare's mark.  (Measured on
        the tuning decks: the cards glare hid gained 0.075-0.47 from the ramps, one 0.035; a plain
        rank-only corner, a 2d taken for a Qc, 0.048.)  A covered card the sharp match did not find
        must reach ``optics_present``, as through the optics bank.  Its sharp reading is kept for the
        ghost test (``_sharp_reads``), as the optics bank keeps it."""
        if self._glare_full is None:
            return
        weak = [job._replace(views=self._wide_views(job.way, reads[job.key])) for job in jobs
                if reads[job.key].score < self.p.glare_below]
        covered = {job.key for job in weak if 0 < job.card < len(job.row.positions) - 1}
        washed = self._refine_batch(weak, xs=self.p.wide_dx, tables=self._glare_full)
        better = []
        for job in weak:
            read, old = washed[job.key], reads[job.key].score
            need = max(old, self.p.optics_present) if job.key in covered and old < self.p.covered_min else old
            if read.label != BACK and read.score >= need:
                better.append(job._replace(cand=np.array([read.label])))
        for key, sharp in self._refine_batch(better, xs=self.p.wide_dx, shortlist=1).items():
            if washed[key].score >= sharp.score + self.p.glare_gain:
                self._sharp_reads.setdefault(key, reads[key])
                reads[key] = washed[key]

    def _optics_probe(self, probe: list[Job], reads: Reads) -> np.ndarray:
        """Each probed card's read label matched on its plain views, sharp and through each kernel of
        the optics bank: (cards, 1 + kernels), sharp first."""
        ways = 1 + len(self._optic_full)
        jobs = [job._replace(cand=reads[job.key].label * ways + np.arange(ways)) for job in probe]
        got = self._refine_batch(jobs, xs=self.p.wide_dx, shortlist=ways, tables=self._optic_probe)
        return np.array([got[job.key].total for job in jobs])

    def _frame_blurred(self, probe: list[Job], reads: Reads) -> tuple[bool, bool]:
        """Whether the frame is worth the rows' optics probe: blur is the camera's (its focus, its
        resolution, its shake), so the frame's best-read corners say it.  The ``optics_sample``
        best are probed; a kernel must fit them better than the sharp templates by
        ``optics_frame_gain`` at the median.  Measured on six tuning decks (18 frames each):
        sharp and JPEG 40 frames -0.08 to +0.008, motion blur 9 px +0.05 to +0.12, Gaussian
        sigma 2 +0.035 to +0.095, 720p -0.06 to +0.034; so a sharp frame costs one small match
        instead of the whole probe.  Second: whether the camera shook (a motion kernel, not the
        defocus, fits them best at the median): the tracker holds the table through a shake."""
        gains = self._kernel_gains(probe, reads)
        blurred = float(np.median(gains.max(axis=1))) >= self.p.optics_frame_gain
        return blurred, blurred and _motion_fits_best(gains)

    def _camera_shook(self, probe: list[Job], reads: Reads) -> bool:
        """Whether a few corners read afresh say the camera shook: a motion kernel fits them best, and
        ``optics_gain`` better than the sharp templates at the median (see :meth:`_through_optics`)."""
        gains = self._kernel_gains(probe, reads)
        return float(np.median(gains.max(axis=1))) >= self.p.optics_gain and _motion_fits_best(gains)

    def _kernel_gains(self, probe: list[Job], reads: Reads) -> np.ndarray:
        """How much better each of the ``optics_sample`` best-read corners of ``probe`` matches its card
        through each kernel of the optics bank than sharp: (cards, kernels)."""
        sample = sorted(probe, key=lambda job: -reads[job.key].score)[: self.p.optics_sample]
        sc = self._optics_probe(sample, reads)
        out: np.ndarray = sc[:, 1:] - sc[:, :1]
        return out


def _motion_fits_best(gains: np.ndarray) -> bool:
    """Whether the kernel that fits the corners best at the median is a motion smear (not the defocus)."""
    return optics.KERNELS[int(np.argmax(np.median(gains, axis=0)))][0].startswith("motion")
