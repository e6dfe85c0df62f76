"""The fine match's inner loops, compiled: every corner window of a view against that view's templates.

Why compiled: in numpy each window had to be copied out of the frame's bands into a
matrix, normalised in three passes over it, and each view's templates gathered, before
one small matrix product per view (15 windows by 32 templates, too small for BLAS to
reach speed); that was a third of a frame.  Here each window is read from the band
planes once and its norm taken in the same pass (:func:`gather_windows`), and the dot
products are made two windows by four templates at a time (:func:`window_scores`;
eight sums in registers, 1.6 times the speed of one window at a time).  The embedding
is the one :func:`vision.deck.embed_raw` makes (the deck's average corner subtracted,
weighted, unit norm), rearranged so that the weight sits in the templates and only the
norm is computed per window:

    score = (x . (wt * t) - [mu, s] . (basis @ t)) / |x * wt - [mu, s] @ basis|

Pure: arrays in, arrays out (numba compiles each function on first use and caches the
machine code beside this file).
"""

from __future__ import annotations

import numba
import numpy as np


@numba.njit(cache=True, fastmath=True, nogil=True)
def gather_windows(
    bright: np.ndarray, colour1: np.ndarray, colour2: np.ndarray, h: int, w: int,
    starts: np.ndarray, ny: int, nx: int, mu: np.ndarray, spread: np.ndarray,
    wt: np.ndarray, basis: np.ndarray, x: np.ndarray, inv: np.ndarray,
) -> None:
    """Each view's ``ny`` x ``nx`` windows (top left corners at ``starts[v]`` plus (dy, dx),
    row-major) in the pooled layout into ``x`` (V, ny * nx, D), and one over each one's
    embedded norm into ``inv`` (V, ny * nx).

    ``bright``: brightness plane; ``colour1``, ``colour2``: the 2x2 sums of the colour planes
    (the pooled layout samples them at every other pixel); ``mu`` (V * ny * nx, 3) and
    ``spread`` (V * ny * nx,): each window's channel means and spread at full resolution.
    """
    h2, w2 = h // 2, w // 2
    d_all = h * w + 2 * h2 * w2
    for v in range(starts.shape[0]):
        for j in range(ny * nx):
            r0 = starts[v, 0] + j // nx
            c0 = starts[v, 1] + j % nx
            _copy_window(bright, colour1, colour2, h, w, r0, c0, x[v, j])
            xv = x[v, j]
            k = v * ny * nx + j
            m0, m1, m2, s = mu[k, 0], mu[k, 1], mu[k, 2], spread[k]
            norm2 = np.float32(0.0)
            for d in range(d_all):
                y = xv[d] * wt[d] - (m0 * basis[0, d] + m1 * basis[1, d] + m2 * basis[2, d] + s * basis[3, d])
                norm2 += y * y
            inv[v, j] = np.float32(1.0) / (np.sqrt(norm2) + np.float32(1e-6) * s)


@numba.njit(cache=True, nogil=True)
def gather_raw(
    bright: np.ndarray, colour1: np.ndarray, colour2: np.ndarray, h: int, w: int,
    rows: np.ndarray, cols: np.ndarray, x: np.ndarray,
) -> None:
    """The ``h`` x ``w`` windows whose top left corners are at ``rows``, ``cols`` (K,) in the pooled
    layout into ``x`` (K, D), copied as they are: what ``vision.deck.WindowSource.windows`` gathers
    through sliding-window views, without numpy's fancy indexing of a 4-d view (a quarter of the time)."""
    for k in range(rows.shape[0]):
        _copy_window(bright, colour1, colour2, h, w, rows[k], cols[k], x[k])


@numba.njit(cache=True, nogil=True, inline="always")
def _copy_window(bright: np.ndarray, colour1: np.ndarray, colour2: np.ndarray, h: int, w: int, r0: int, c0: int,
                 xv: np.ndarray) -> None:
    """One window (top left corner at ``r0``, ``c0``) in the pooled layout into ``xv`` (D,): its
    brightness, then every other pixel of the two colour planes' 2x2 sums, row by row (each row a
    run of neighbouring values: three times as fast as counting the values one by one)."""
    h2, w2 = h // 2, w // 2
    for i in range(h):
        src = bright[r0 + i]
        base = i * w
        for q in range(w):
            xv[base + q] = src[c0 + q]
    off = h * w
    for i in range(h2):
        src = colour1[r0 + 2 * i]
        base = off + i * w2
        for q in range(w2):
            xv[base + q] = src[c0 + 2 * q]
    off += h2 * w2
    for i in range(h2):
        src = colour2[r0 + 2 * i]
        base = off + i * w2
        for q in range(w2):
            xv[base + q] = src[c0 + 2 * q]


@numba.njit(cache=True, fastmath=True, nogil=True)
def window_scores(
    x: np.ndarray, inv: np.ndarray, mu: np.ndarray, spread: np.ndarray,
    tids: np.ndarray, weighted: np.ndarray, shift: np.ndarray, out: np.ndarray,
) -> None:
    """Scores (V, W, T) into ``out``: the windows ``x`` (V, W, D) of :func:`gather_windows` against
    templates ``tids[v]`` (T,) of each view.  ``weighted``: the templates times the weight map
    (N, D); ``shift``: the templates times the basis (N, 4)."""
    n_v, n_w, d_all = x.shape
    n_t = tids.shape[1]
    for v in range(n_v):
        for t in range(0, n_t, 4):
            a0 = weighted[tids[v, t]]
            a1 = weighted[tids[v, min(t + 1, n_t - 1)]]
            a2 = weighted[tids[v, min(t + 2, n_t - 1)]]
            a3 = weighted[tids[v, min(t + 3, n_t - 1)]]
            for j in range(0, n_w, 2):
                xa = x[v, j]
                xb = x[v, min(j + 1, n_w - 1)]
                s00 = s01 = s02 = s03 = s10 = s11 = s12 = s13 = np.float32(0.0)
                for d in range(d_all):
                    p0, p1, p2, p3 = a0[d], a1[d], a2[d], a3[d]
                    u = xa[d]
                    s00 += u * p0
                    s01 += u * p1
                    s02 += u * p2
                    s03 += u * p3
                    u = xb[d]
                    s10 += u * p0
                    s11 += u * p1
                    s12 += u * p2
                    s13 += u * p3
                for jj, sums in ((j, (s00, s01, s02, s03)), (j + 1, (s10, s11, s12, s13))):
                    if jj >= n_w:
                        break
                    k = v * n_w + jj
                    m0, m1, m2, s = mu[k, 0], mu[k, 1], mu[k, 2], spread[k]
                    for u_ in range(4):
                        if t + u_ >= n_t:
                            break
                        tt = tids[v, t + u_]
                        corr = m0 * shift[tt, 0] + m1 * shift[tt, 1] + m2 * shift[tt, 2] + s * shift[tt, 3]
                        out[v, jj, t + u_] = (sums[u_] - corr) * inv[v, jj]


@numba.njit(cache=True, nogil=True)
def window_stats(
    total: np.ndarray, squares: np.ndarray, rows: np.ndarray, cols: np.ndarray, h: int, w: int,
    mu: np.ndarray, spread: np.ndarray,
) -> None:
    """Per-channel mean into ``mu`` (K, 3) and spread into ``spread`` (K,) of the ``h`` x ``w``
    windows at ``rows``, ``cols``, from an image's integral images (R + 1, C + 1, 3), float64
    (sums of squares of a window of paper are ten thousand times its variance: no fast-math here)."""
    npx = h * w
    for k in range(rows.shape[0]):
        r, c = rows[k], cols[k]
        var = 0.0
        for ch in range(3):
            m = (total[r + h, c + w, ch] - total[r, c + w, ch] - total[r + h, c, ch] + total[r, c, ch]) / npx
            sq = squares[r + h, c + w, ch] - squares[r, c + w, ch] - squares[r + h, c, ch] + squares[r, c, ch]
            mu[k, ch] = m
            var += sq - npx * m * m
        spread[k] = np.sqrt(max(var, 0.0)) + 1e-6
