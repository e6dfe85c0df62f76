"""Per-deck linear discriminant of the index corner, learned at enrollment.

Why: correlation with a template weighs every pixel of the corner by a fixed
map, and the pixels that move most when a camera samples a card (the edges of
the rank glyph, a pixel of misalignment) then drown the few that tell a club
from a spade or a six from an eight (a 6-7 px suit sign).  At enrollment each
corner is seen through many simulated cameras: card sizes 60-150 px, sub-pixel
phase, a degree or two of rotation, blur, sensor noise, JPEG.  What varies
between the views of one card is what a camera does; what varies between card
means is what tells cards apart.  Fisher's linear discriminant with a shared
covariance (shrunk towards its diagonal, as there are fewer views than pixels)
weighs each pixel by exactly that ratio, and scores a corner against every
card with one matrix product.

Pure core: face images in, arrays out (no file, no clock; the random views
come from a seeded generator, so one deck always enrolls to the same file).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import cv2
import numpy as np

from vision.corner import CARD_W, QUERY_BLUR, STRIP_H, STRIP_W, STRIP_X0, STRIP_Y0, channels

VIEWS_PER_CORNER = 48  # simulated camera views of each card corner (each way round)
SHRINK = 0.25  # weight of the diagonal in the shrunk covariance
CAM_WIDTHS = (60.0, 150.0)  # camera card widths, px
SLACK = 1  # template px of alignment search around the nominal corner, as the detector's fine match
_REGION = (STRIP_X0 + STRIP_W + SLACK + 4, STRIP_Y0 + STRIP_H + SLACK + 4)  # template px of the corner simulated
BACKGROUNDS = ((40, 110, 30), (110, 60, 20), (30, 20, 110), (235, 235, 235), (60, 60, 60))  # BGR felts, paper


def camera_corner(face: np.ndarray, aspect: float, cam_w: float, angle_deg: float, offset: tuple[float, float],
                  blur: float, noise: float, jpeg: int, background: Sequence[int], rng: np.random.Generator,
                  optics: Callable[[np.ndarray], np.ndarray] | None = None) -> np.ndarray:
    """A card's top-left corner as the detector sees it: (H, W, 3) blurred channels at the template scale.

    ``face`` is the flat face (BGR), upright; ``offset`` is where the card's corner
    falls on the camera's pixel grid (sub-pixel), ``angle_deg`` how far the card
    lies off the row the detector measured; ``optics`` (glare, motion blur: :mod:`vision.classifier`)
    acts on the corner in camera pixels before the lens blur, the noise and the JPEG.
    """
    hf, wf = face.shape[:2]
    c = cam_w / wf
    rw, rh = _REGION
    cam_size = (int(np.ceil(rw * cam_w / CARD_W)) + 8, int(np.ceil(rh * cam_w / CARD_W)) + 8)
    # The face's corner, at camera size (area-averaged: the lens and sensor integrate).
    part = face[: int(hf * 0.5), : int(wf * 0.45)]
    small = cv2.resize(part, (max(1, round(part.shape[1] * c)), max(1, round(part.shape[0] * c))),
                       interpolation=cv2.INTER_AREA)
    sx, sy = part.shape[1] * c / small.shape[1], part.shape[0] * c / small.shape[0]
    th = np.radians(angle_deg)
    rot = np.array([[np.cos(th), -np.sin(th)], [np.sin(th), np.cos(th)]])
    ox, oy = 4 + offset[0], 4 + offset[1]
    a = np.hstack([rot @ np.diag([sx, sy]), [[ox], [oy]]]).astype(np.float32)
    cam: np.ndarray = cv2.warpAffine(small, a, cam_size, flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_CONSTANT,
                                     borderValue=tuple(float(v) for v in background))
    if optics is not None:
        cam = optics(cam)
    if blur > 0.05:
        cam = cv2.GaussianBlur(cam, (0, 0), blur)
    cam = cam.astype(np.float32) + rng.normal(0, noise, cam.shape).astype(np.float32)
    cam = np.clip(cam, 0, 255).astype(np.uint8)
    if jpeg < 100:
        ok, buf = cv2.imencode(".jpg", cam, [cv2.IMWRITE_JPEG_QUALITY, jpeg])
        decoded = cv2.imdecode(buf, cv2.IMREAD_COLOR) if ok else None
        if decoded is not None:
            cam = decoded
    # The detector's crop: the card's corner at the template scale, k-fold supersampled and area-averaged
    # when the camera sees the card bigger than the template (as Detector._crop does).
    k = max(1, round(cam_w / CARD_W))
    s = cam_w / (CARD_W * k)
    m = np.array([[s, 0, ox], [0, s, oy]], np.float32)
    big = cv2.warpAffine(cam, m, (rw * k, rh * k), flags=cv2.INTER_LINEAR | cv2.WARP_INVERSE_MAP,
                         borderMode=cv2.BORDER_REPLICATE)
    crop = big if k == 1 else cv2.resize(big, (rw, rh), interpolation=cv2.INTER_AREA)
    return cv2.GaussianBlur(channels(crop), (0, 0), QUERY_BLUR)


def corner_windows(region: np.ndarray) -> np.ndarray:
    """Every corner window within SLACK px of the nominal place: (n, STRIP_H, STRIP_W, 3)."""
    y0, x0 = STRIP_Y0 - SLACK, STRIP_X0 - SLACK
    sub = region[y0 : y0 + STRIP_H + 2 * SLACK, x0 : x0 + STRIP_W + 2 * SLACK]
    return np.lib.stride_tricks.sliding_window_view(sub, (STRIP_H, STRIP_W, 3))[:, :, 0].reshape(-1, STRIP_H, STRIP_W, 3)


def simulated_views(face: np.ndarray, aspect: float, n: int, rng: np.random.Generator) -> list[np.ndarray]:
    """``n`` camera views of a face's top-left corner, under the conditions a table camera meets."""
    out = []
    for _ in range(n):
        cam_w = float(np.exp(rng.uniform(np.log(CAM_WIDTHS[0]), np.log(CAM_WIDTHS[1]))))
        out.append(camera_corner(
            face, aspect, cam_w, float(rng.uniform(-2.0, 2.0)), (float(rng.uniform(0, 1)), float(rng.uniform(0, 1))),
            float(rng.uniform(0.0, 1.2)), float(rng.uniform(1.0, 5.0)), int(rng.integers(55, 96)),
            BACKGROUNDS[int(rng.integers(len(BACKGROUNDS)))], rng,
        ))
    return out


def fit(features: np.ndarray, classes: np.ndarray, n_classes: int,
        shrink: float = SHRINK) -> tuple[np.ndarray, np.ndarray, np.ndarray, float]:
    """Fisher's discriminant with a shared covariance: (weights (D, C), offsets (C,), precision (D, D), m2 scale).

    A corner x scores ``x @ weights + offsets`` against every class: the log-likelihood
    of each class's Gaussian up to a term common to all classes.  Its squared Mahalanobis
    distance to class c is ``x @ precision @ x - 2 * score_c``; the scale is the 99th
    percentile of that distance over the training views' own classes (what a corner's
    distance looks like), so a window can be told to be no index corner at all.
    """
    d = features.shape[1]
    means = np.zeros((n_classes, d))
    for k in range(n_classes):
        means[k] = features[classes == k].mean(axis=0)
    resid = features - means[classes]
    cov = resid.T @ resid / max(1, len(features) - n_classes)
    cov = (1 - shrink) * cov + shrink * np.diag(np.diag(cov)) + 1e-6 * np.trace(cov) / d * np.eye(d)
    precision = np.linalg.inv(cov)
    weights = precision @ means.T  # (D, C)
    offsets = -0.5 * np.einsum("cd,dc->c", means, weights)
    own = ((resid @ precision) * resid).sum(axis=1)  # x'Px per view (one matrix product; a 3-operand einsum loops naively)
    return weights.astype(np.float32), offsets.astype(np.float32), precision.astype(np.float32), float(np.percentile(own, 99))


def train(faces: Sequence[np.ndarray], aspect: float, mean: np.ndarray, weight: np.ndarray, plain: np.ndarray,
          seed: int = 0, views: int = VIEWS_PER_CORNER) -> tuple[np.ndarray, np.ndarray, np.ndarray, float]:
    """The discriminant of a deck's corners (see :func:`fit`): classes 0..2F-1 for F faces.

    Class ``2f`` is face ``f``'s printed corner, ``2f + 1`` its opposite corner turned
    round (how a card lying the other way shows).  Features are the detector's plain
    corner vectors (``embed2(...)[0]``); each simulated view is aligned, within the
    detector's slack, on its own card's plain template (``plain``: (2F, D), the plain
    views in class order), as the detector's fine match aligns a window on each candidate.
    """
    from vision.deck import embed2  # deck.enroll calls this module

    rng = np.random.default_rng(seed)
    feats, classes = [], []
    for f, face in enumerate(faces):
        for view, img in enumerate((face, cv2.rotate(face, cv2.ROTATE_180))):
            k = 2 * f + view
            regions = simulated_views(img, aspect, views, rng)
            wins = np.stack([corner_windows(r) for r in regions])  # (views, n, H, W, 3)
            pl, _ = embed2(wins, mean, weight)  # (views, n, D)
            best = np.argmax(pl @ plain[k], axis=1)
            feats.append(pl[np.arange(len(pl)), best])
            classes.extend([k] * len(pl))
    return fit(np.concatenate(feats), np.array(classes), 2 * len(faces))
