"""The corner discriminant learned at enrollment (vision/discriminant.py)."""

from __future__ import annotations

import cv2
import numpy as np
import pytest

from tests.vision.decks import enrolled
from vision import discriminant
from vision.deck import CODES, STRIP_H, STRIP_W, embed2, enroll, opaque, read_face_dir


def test_fit_separates_classes_that_differ_in_few_dimensions() -> None:
    """Two classes whose means differ in one quiet dimension, next to a loud one that only varies within class:
    the discriminant must weigh the quiet one (a plain nearest-mean correlation would not)."""
    rng = np.random.default_rng(3)
    n, d = 400, 20
    x = rng.normal(0, 0.05, (2 * n, d))
    x[:, 0] += rng.normal(0, 3.0, 2 * n)  # loud, uninformative
    y = np.repeat([0, 1], n)
    x[y == 1, 1] += 0.3  # quiet, informative
    w, b, _p, _m2 = discriminant.fit(x, y, 2, shrink=0.1)
    test = rng.normal(0, 0.05, (2 * n, d))
    test[:, 0] += rng.normal(0, 3.0, 2 * n)
    test[y == 1, 1] += 0.3
    pred = (test @ w + b).argmax(axis=1)
    assert (pred == y).mean() > 0.99
    means = np.stack([x[y == k].mean(axis=0) for k in (0, 1)])
    nearest = ((test[:, None, :] - means[None]) ** 2).sum(axis=2).argmin(axis=1)
    assert (nearest == y).mean() < 0.8  # what the discriminant is for


def test_camera_corner_is_the_template_window_the_detector_sees(faces_dir) -> None:
    """A simulated camera view of a corner, at the nominal place, correlates with the card's own
    enrolled corner better than with any other card's (the simulation is the same geometry)."""
    directory = faces_dir("anglo")
    faces, _back = read_face_dir(directory)
    model = enrolled(directory)
    prim = np.flatnonzero((model.variants == 0) & (model.labels != 52))
    rng = np.random.default_rng(0)
    right = 0
    for f in range(0, 52, 4):
        face = opaque(faces[CODES[f]])
        region = discriminant.camera_corner(face, model.aspect, 90.0, 0.5, (0.3, 0.6), 0.5, 2.0, 90, (40, 110, 30), rng)
        win = discriminant.corner_windows(region)
        assert win.shape[1:] == (STRIP_H, STRIP_W, 3)
        plain, _ = embed2(win, model.mean, model.weight)
        best = (plain @ model.plain[prim].T).max(axis=0)  # per class, best window
        right += int(best.reshape(52, 2).max(axis=1).argmax() == f)
    assert right == 13


@pytest.mark.slow  # out of the default suite (over 15 min on the 2-core machine); .ci/run runs it
def test_enrollment_is_deterministic_and_saved(faces_dir, tmp_path) -> None:
    """The simulated views come from a seeded generator: one deck always enrolls to the same
    discriminant, and the deck file keeps it."""
    from vision.deck import load, save

    faces, back = read_face_dir(faces_dir("paris"))
    a = enroll(faces, back, "paris")
    faces2 = {c: cv2.flip(cv2.flip(img, 0), 0) for c, img in faces.items()}  # same pixels, new arrays
    b = enroll(faces2, back, "paris")
    assert np.array_equal(a.lda_w, b.lda_w) and np.array_equal(a.lda_b, b.lda_b)
    save(a, tmp_path / "paris.deck")
    c = load(tmp_path / "paris.deck")
    assert np.array_equal(c.lda_w, a.lda_w) and c.lda_w.shape == (a.plain.shape[1], 104)
    assert np.array_equal(c.lda_p, a.lda_p) and c.lda_m2 == a.lda_m2 > 0
