"""The compiled strip look scores what a plain normalised correlation over the visible columns scores."""

from __future__ import annotations

import itertools

import numpy as np

from vision.strip_match import strip_scores


def _reference(regions: np.ndarray, visible: np.ndarray, tids: np.ndarray, cuts: np.ndarray, dy: int, dx: int,
               templates: np.ndarray) -> np.ndarray:
    """Band by band, alignment by alignment: zero-mean correlation of the visible part, in float64."""
    out = np.zeros(tids.shape)
    for c, t in itertools.product(range(tids.shape[0]), range(tids.shape[1])):
        v = visible[c]
        for b0, b1 in itertools.pairwise(cuts):
            tmpl = templates[tids[c, t], b0:b1, :v].astype(np.float64)
            tmpl = tmpl - tmpl.mean(axis=(0, 1))
            best = -np.inf
            for wy, wx in itertools.product(range(2 * dy + 1), range(2 * dx + 1)):
                q = regions[c, b0 + wy : b1 + wy, wx : wx + v].astype(np.float64)
                q = q - q.mean(axis=(0, 1))
                best = max(best, float((q * tmpl).sum() / np.sqrt((q * q).sum() * (tmpl * tmpl).sum())))
            out[c, t] += best / (len(cuts) - 1)
    return out


def test_strip_scores_equal_a_plain_correlation_over_the_visible_part() -> None:
    rng = np.random.default_rng(4)
    hp, wp, dy, dx = 44, 32, 1, 1
    templates = (rng.random((9, hp, wp, 3)) * 200).astype(np.float32)
    cuts = np.linspace(0, hp, 4).round().astype(np.int64)
    # look 0 is template 3 itself, shifted by (1, 2) inside its slack and covered beyond column 11
    regions = (rng.random((3, hp + 2 * dy, wp + 2 * dx, 3)) * 200).astype(np.float32)
    regions[0, 2:, 2:] = templates[3, : hp + 2 * dy - 2, : wp + 2 * dx - 2]
    regions[0, :, 2 + 11 :] = 30.0  # the next card's shadow: not looked at
    visible = np.array([11, 32, 8])
    tids = np.array([[3, 0, 1, 2, 4], [5, 6, 7, 8, 0], [1, 1, 2, 3, 4]])  # five: not a multiple of four
    col = templates.astype(np.float64)
    col_sums = np.stack([np.concatenate([np.zeros((9, 1, 3)), np.cumsum(col[:, b0:b1].sum(axis=1), axis=1)], axis=1)
                         for b0, b1 in itertools.pairwise(cuts)]).astype(np.float32)
    col_squares = np.stack([np.concatenate([np.zeros((9, 1)), np.cumsum((col[:, b0:b1] ** 2).sum(axis=(1, 3)), axis=1)], axis=1)
                            for b0, b1 in itertools.pairwise(cuts)]).astype(np.float32)
    got = np.empty(tids.shape, np.float32)
    strip_scores(regions, visible, tids, cuts, dy, dx, templates, col_sums, col_squares, got)
    want = _reference(regions, visible, tids, cuts, dy, dx, templates)
    np.testing.assert_allclose(got, want, atol=2e-4)  # float32 sums of squares of values up to 200
    assert got[0, 0] > 0.999  # the template itself, found at its shift however much of it shows
    assert got[0, 1:].max() < 0.5
