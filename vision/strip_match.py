"""The strip look's inner loop, compiled: a card's visible strip against a few whole-card templates.

Normalised correlation over the visible part only (the columns left of the next card),
in bands across the card, each band aligned on its own within a pixel or two.  In numpy
every window of every band was copied out, masked templates gathered and multiplied,
and window sums taken from integral images built per call: a tenth of a frame for a
few dozen cards.  Here each window's sums and its dot products with the templates are
made in one sweep over the visible pixels, which stay in the first-level cache.

Pure: arrays in, arrays out (numba compiles on first use and caches beside this file).
"""

from __future__ import annotations

import numba
import numpy as np


@numba.njit(cache=True, fastmath=True, nogil=True)
def strip_scores(
    regions: np.ndarray, visible: np.ndarray, tids: np.ndarray, cuts: np.ndarray, dy: int, dx: int,
    templates: np.ndarray, col_sums: np.ndarray, col_squares: np.ndarray, out: np.ndarray,
) -> None:
    """Mean over the bands of the best correlation over each band's alignments, into ``out`` (C, T).

    ``regions`` (C, hp + 2 dy, wp + 2 dx, 3): each look's strip with its slack; ``visible`` (C,):
    how many columns of it show; ``tids`` (C, T): its templates; ``cuts`` (B + 1,): the bands'
    rows; ``templates`` (N, hp, wp, 3); ``col_sums`` (B, N, wp + 1, 3) and ``col_squares``
    (B, N, wp + 1): each band's cumulative column sums of the templates and of their squares.
    """
    n_c, n_t = tids.shape
    flat = regions.reshape(regions.shape[0], regions.shape[1], -1)  # each row's pixels, channels interleaved
    flat_t = templates.reshape(templates.shape[0], templates.shape[1], -1)
    n_b = cuts.shape[0] - 1
    for c in range(n_c):
        v = visible[c]
        for t in range(n_t):
            out[c, t] = 0.0
        for b in range(n_b):
            b0, b1 = cuts[b], cuts[b + 1]
            bh = b1 - b0
            cnt = np.float32(bh * v)
            best = np.full(n_t, -np.inf, np.float32)
            for wy in range(2 * dy + 1):
                for wx in range(2 * dx + 1):
                    s0 = s1 = s2 = qq = np.float32(0.0)
                    for i in range(bh):
                        row = regions[c, b0 + wy + i]
                        for j in range(wx, wx + v):
                            p0, p1, p2 = row[j, 0], row[j, 1], row[j, 2]
                            s0 += p0
                            s1 += p1
                            s2 += p2
                            qq += p0 * p0 + p1 * p1 + p2 * p2
                    varq = max(qq - (s0 * s0 + s1 * s1 + s2 * s2) / cnt, np.float32(1e-6))
                    for t in range(0, n_t, 4):  # four templates per sweep over the window
                        i0, i1 = tids[c, t], tids[c, min(t + 1, n_t - 1)]
                        i2, i3 = tids[c, min(t + 2, n_t - 1)], tids[c, min(t + 3, n_t - 1)]
                        n0 = n1 = n2 = n3 = np.float32(0.0)
                        for i in range(bh):
                            row = flat[c, b0 + wy + i, 3 * wx : 3 * (wx + v)]
                            r0, r1 = flat_t[i0, b0 + i], flat_t[i1, b0 + i]
                            r2, r3 = flat_t[i2, b0 + i], flat_t[i3, b0 + i]
                            for j in range(3 * v):
                                q = row[j]
                                n0 += q * r0[j]
                                n1 += q * r1[j]
                                n2 += q * r2[j]
                                n3 += q * r3[j]
                        for u, num in ((0, n0), (1, n1), (2, n2), (3, n3)):
                            if t + u >= n_t:
                                break
                            tt = tids[c, t + u]
                            t0, t1, t2 = col_sums[b, tt, v, 0], col_sums[b, tt, v, 1], col_sums[b, tt, v, 2]
                            num -= (s0 * t0 + s1 * t1 + s2 * t2) / cnt
                            vart = max(col_squares[b, tt, v] - (t0 * t0 + t1 * t1 + t2 * t2) / cnt, np.float32(1e-6))
                            score = num / np.sqrt(varq * vart)
                            if score > best[t + u]:
                                best[t + u] = score
            for t in range(n_t):
                out[c, t] += best[t]
        for t in range(n_t):
            out[c, t] /= n_b
