"""The detector's fast window path gives what cutting every window out and normalising it gives."""

from __future__ import annotations

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

from vision.deck import (
    STRIP_H,
    STRIP_W,
    centred,
    embed_plain,
    embed_raw,
    plain_channel_major,
    plain_windows,
    raw_windows,
    raw_windows_at,
)


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
