"""The detector's fast window path gives what cutting every window out and normalising it gives,
and its compiled fine match scores what embedding and matrix products score."""

from __future__ import annotations

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

from vision.deck import (
    STRIP_H,
    STRIP_W,
    WindowSource,
    centred,
    embed_plain,
    embed_raw,
    embedding_terms,
    plain_channel_major,
    plain_windows,
    raw_windows,
    raw_windows_at,
)
from vision.window_match import gather_windows, window_scores


def _regions(n: int, seed: int = 3) -> list[np.ndarray]:
    """Band regions like the detector's (3 rows and 5 columns of slack) in channel units, with a
    blank one (paper and sensor noise only: its spread is tiny) and a strongly coloured one."""
    rng = np.random.default_rng(seed)
    out = [(rng.random((STRIP_H + 2, STRIP_W + 4, 3)) * 180 + 20).astype(np.float32) for _ in range(n)]
    out[1] = (200 + rng.normal(0, 0.3, out[1].shape)).astype(np.float32)
    out[2][:, :, 1] += 120.0
    return out


def _cut_out(regions: list[np.ndarray], h: int = STRIP_H, w: int = STRIP_W) -> np.ndarray:
    """Every window cut out and laid out channel-major (the slow way, the reference)."""
    win = sliding_window_view(np.stack(regions), (h, w), axis=(1, 2))  # (N, dy, dx, 3, h, w)
    return np.ascontiguousarray(win.reshape(-1, 3, h, w), dtype=np.float32)


def test_gathered_windows_equal_windows_cut_out_and_normalised() -> None:
    regions = _regions(12)
    want = plain_channel_major(_cut_out(regions))
    got = plain_windows(regions)
    assert got.shape == want.shape == (12 * 3 * 5, STRIP_H * STRIP_W * 3 // 2)
    np.testing.assert_allclose(got, want, atol=1e-5)  # float32 rounding (elements are about 0.03; scores agree to 1e-6)
    # window k of region n sits at n * dy * dx + k, row-major over (dy, dx): region 2's colour shows there only
    colour = np.abs(got[:, STRIP_H * STRIP_W :]).sum(axis=1)
    assert np.argmax(colour) // 15 == 2


def test_embedding_raw_windows_equals_embedding_their_normalised_form() -> None:
    rng = np.random.default_rng(5)
    mean = rng.normal(0, 0.05, (STRIP_H, STRIP_W, 3)).astype(np.float32)
    weight = (0.15 + rng.random((STRIP_H, STRIP_W, 1))).astype(np.float32)
    regions = _regions(8)
    want = embed_plain(plain_channel_major(_cut_out(regions)), mean, weight)
    got = embed_raw(raw_windows(regions), mean, weight)
    np.testing.assert_allclose(got, want, atol=1e-5)
    np.testing.assert_allclose(np.linalg.norm(got, axis=1), 1.0, atol=1e-5)
    # centring the raw windows in place is the plain form
    np.testing.assert_allclose(centred(raw_windows(regions)), plain_windows(regions), atol=1e-7)


def test_windows_at_any_origin_of_a_wide_image() -> None:
    """The coarse scan: bands side by side in one image, windows only where they lie in one band."""
    rng = np.random.default_rng(9)
    h, w = STRIP_H // 2, STRIP_W // 2
    bands = [(rng.random((h, width, 3)) * 200).astype(np.float32) for width in (w, 30, 17)]
    image = np.concatenate(bands, axis=1)
    cols = np.concatenate([left + np.arange(b.shape[1] - w + 1) for left, b in zip((0, w, w + 30), bands, strict=True)])
    want = np.concatenate([plain_channel_major(_cut_out([b], h, w)) for b in bands])
    got = centred(raw_windows_at(image, np.zeros_like(cols), cols, h, w))
    assert got.shape == want.shape == (1 + 23 + 10, h * w * 3 // 2)
    np.testing.assert_allclose(got, want, atol=2e-6)


def test_compiled_fine_match_scores_what_embedding_and_matrix_products_score() -> None:
    """vision.window_match against the numpy formulation it replaced: every window of each view
    embedded (embed_raw) and multiplied by that view's own templates; a blank window (tiny
    spread) and views at the atlas's edges included."""
    rng = np.random.default_rng(11)
    mean = rng.normal(0, 0.05, (STRIP_H, STRIP_W, 3)).astype(np.float32)
    weight = (0.15 + rng.random((STRIP_H, STRIP_W, 1))).astype(np.float32)
    atlas_image = np.concatenate(_regions(6), axis=1)  # (STRIP_H + 2, 6 * (STRIP_W + 4), 3)
    atlas = WindowSource(atlas_image, STRIP_H, STRIP_W)
    ny, nx = 3, 5
    starts = np.array([[0, k * (STRIP_W + 4)] for k in range(6)] + [[0, atlas_image.shape[1] - STRIP_W - nx + 1]])
    gy, gx = np.divmod(np.arange(ny * nx), nx)
    rows, cols = (starts[:, :1] + gy).ravel(), (starts[:, 1:] + gx).ravel()
    templates = embed_raw(atlas.windows(rows[::7], cols[::7]), mean, weight)  # real windows as templates, unit norm
    tids = rng.integers(0, len(templates), (len(starts), 7))  # 7: not a multiple of the four done at once
    want = np.matmul(embed_raw(atlas.windows(rows, cols), mean, weight).reshape(len(starts), ny * nx, -1),
                     templates[tids].transpose(0, 2, 1))
    wt, basis = embedding_terms(mean, weight)
    mu, spread = (a.astype(np.float32) for a in atlas.stats(rows, cols))
    x = np.empty((len(starts), ny * nx, templates.shape[1]), np.float32)
    inv = np.empty((len(starts), ny * nx), np.float32)
    gather_windows(atlas.bright, atlas.colour1, atlas.colour2, STRIP_H, STRIP_W, starts, ny, nx, mu, spread, wt, basis, x, inv)
    got = np.empty_like(want)
    window_scores(x, inv, mu, spread, tids, np.ascontiguousarray(templates * wt), templates @ basis.T, got)
    textured = np.arange(len(starts)) != 1
    np.testing.assert_allclose(got[textured], want[textured], atol=2e-6)
    # the blank region (paper at 200, noise 0.3): float32 cancellation in both, 1e-5 at most (it is gated anyway)
    np.testing.assert_allclose(got[1], want[1], atol=2e-5)
    # a window scores 1 against itself as a template
    assert np.isclose(want[0, 0, np.flatnonzero(tids[0] == 0)], 1.0, atol=1e-5).all()


def test_band_atlas_gathers_what_the_window_source_gathers() -> None:
    """The detector's band atlas (its windows copied out by compiled code) gives the window source's
    windows bit for bit, the fine match's size and the coarse scan's, inside the image and (through
    numpy's indexing, negative indices wrapping round) outside it."""
    from vision.detect.rows import BandAtlas

    rng = np.random.default_rng(11)
    for h, w in ((STRIP_H, STRIP_W), (STRIP_H // 2, STRIP_W // 2)):
        image = (rng.random((h + 6, 300, 3)) * 250 - 20).astype(np.float32)
        ref, atlas = WindowSource(image, h, w), BandAtlas(image, h, w)
        inside = (rng.integers(0, 7, 50), rng.integers(0, 300 - w + 1, 50))
        outside = (np.array([0, -1, 2]), np.array([-3, 5, 0]))
        for rows, cols in (inside, outside, (np.zeros(0, np.int64), np.zeros(0, np.int64))):
            want, got = ref.windows(rows, cols), atlas.windows(rows, cols)
            for a, b in zip(want, got, strict=True):
                assert a.dtype == b.dtype and np.array_equal(a, b)
        assert not np.array_equal(atlas.windows(*inside).x[1], atlas.windows(*inside).x[0])


def test_compiled_gather_copies_each_window_as_the_numpy_gather_does() -> None:
    """gather_windows' copy of each window (row by row) is the window source's, and its norms are
    those of the embedded windows."""
    from vision.deck import embed_raw as embed

    rng = np.random.default_rng(12)
    image = (rng.random((STRIP_H + 6, 120, 3)) * 200 + 10).astype(np.float32)
    src = WindowSource(image, STRIP_H, STRIP_W)
    mean = rng.normal(0, 0.05, (STRIP_H, STRIP_W, 3)).astype(np.float32)
    weight = (0.15 + rng.random((STRIP_H, STRIP_W, 1))).astype(np.float32)
    wt, basis = embedding_terms(mean, weight)
    starts = np.array([[0, 0], [3, 40], [4, 97]])
    ny, nx = 3, 5
    rows = (starts[:, :1] + np.arange(ny * nx)[None, :] // nx).ravel()
    cols = (starts[:, 1:] + np.arange(ny * nx)[None, :] % nx).ravel()
    raw = src.windows(rows, cols)
    x = np.empty((3, ny * nx, raw.x.shape[1]), np.float32)
    inv = np.empty((3, ny * nx), np.float32)
    gather_windows(src.bright, src.colour1, src.colour2, STRIP_H, STRIP_W, starts, ny, nx,
                   raw.mean.astype(np.float32), raw.spread.astype(np.float32), wt, basis, x, inv)
    assert np.array_equal(x.reshape(-1, raw.x.shape[1]), raw.x)
    y = raw.x * wt - np.hstack([raw.mean, raw.spread[:, None]]).astype(np.float32) @ basis
    np.testing.assert_allclose(inv.ravel(), 1 / np.linalg.norm(y, axis=1), rtol=1e-5)
    np.testing.assert_allclose(embed(raw, mean, weight), y * inv.reshape(-1, 1), atol=1e-5)
