"""Per-deck classifier of the index corner, trained at enrollment under simulated cardroom conditions.

Why, beside the corner discriminant (:mod:`vision.discriminant`): the discriminant is linear
with one covariance shared by all cards, learned from views as a good camera sees them.  A
lamp's glare lays a gradient across the corner that normalising a window cannot take off,
motion blur smears each card's glyphs its own way, and at 720p a card is 40-65 px wide: what a
card looks like then is no shift of the same Gaussian.  So each corner, both ways round, is
also seen through simulated cameras that have these faults (a specular band at any angle and
strength, a motion blur up to 10 px or a defocus, cards 40-150 px wide, JPEG down to 35,
noise, a few degrees off the row), cut out and aligned as the detector does, and a small
neural network (one hidden layer) learns which card it is.

Its input is what the detector has at hand for each candidate: the corner window the
candidate aligns on, in the plain layout (:func:`vision.deck.centred`).  The window is
first made blind to glare: a smooth surface is taken off its brightness and what is left is
divided by its local contrast (the colour channels by the same), so a band that washes half
the corner towards white only changes the contrast the division undoes.

Trained in numpy (minibatch Adam, cross-entropy, weight decay), not with OpenCV's ``ml``
module: the OpenCV this project runs (5.x) no longer has it, and a one-layer network is a
few matrix products either way.  At runtime it is two matrix products and a ``tanh``.

Pure core: faces in, arrays out; seeded, so a deck always enrolls to the same network.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import NamedTuple

import cv2
import numpy as np

from vision.corner import STRIP_H, STRIP_W
from vision.discriminant import BACKGROUNDS, CAM_WIDTHS, camera_corner, corner_windows

VIEWS_PER_CORNER = 160  # simulated views of each corner, each way round (48: 93.8 % of held-back simulated views read, 96: 96.2 %, 160: 97.3 %)
CAM_RANGE = (40.0, CAM_WIDTHS[1])  # card widths, camera px: a 720p camera over the whole table shows 43-65
PCA_DIM = 128  # inputs of the network
HIDDEN = 128
EPOCHS = 30
SMOOTH = 4.0  # template px: the scale of what glare changes (the local mean and contrast)
_EPS = 0.05  # of the window's mean local energy: blank paper is not blown up into noise


class Classifier(NamedTuple):
    """The network: features -> ``(x - mu) @ proj`` -> tanh(. @ w1 + b1) -> . @ w2 + b2 (logits per class)."""

    mu: np.ndarray  # (F,)
    proj: np.ndarray  # (F, PCA_DIM)
    w1: np.ndarray
    b1: np.ndarray
    w2: np.ndarray
    b2: np.ndarray

    @property
    def empty(self) -> bool:
        return not self.w2.size

    def log_probs(self, plain: np.ndarray) -> np.ndarray:
        """Plain corner windows (N, D) -> log-probabilities of the classes (N, C)."""
        h = np.tanh((features(plain) - self.mu) @ self.proj @ self.w1 + self.b1)
        z = h @ self.w2 + self.b2
        z -= z.max(axis=1, keepdims=True)
        out: np.ndarray = z - np.log(np.exp(z).sum(axis=1, keepdims=True))
        return out


def empty() -> Classifier:
    z2, z1 = np.zeros((0, 0), np.float32), np.zeros(0, np.float32)
    return Classifier(z1, z2, z2, z1, z2, z1)


def _smoother(n: int, sigma: float) -> np.ndarray:
    """(n, n) Gaussian smoothing matrix, rows summing to one (the window's edge renormalised)."""
    i = np.arange(n)
    g = np.exp(-0.5 * ((i[:, None] - i[None, :]) / sigma) ** 2)
    out: np.ndarray = (g / g.sum(axis=1, keepdims=True)).astype(np.float32)
    return out


_GY, _GX = _smoother(STRIP_H, SMOOTH), _smoother(STRIP_W, SMOOTH)
_GY2, _GX2 = _smoother(STRIP_H // 2, SMOOTH / 2), _smoother(STRIP_W // 2, SMOOTH / 2)


def _smooth(x: np.ndarray) -> np.ndarray:
    """(N, STRIP_H, STRIP_W) -> the same smoothed by _GY and _GX, as two matrix products over the whole
    stack (numpy's stacked matmul of small matrices loops one window at a time)."""
    n = len(x)
    along = (x.reshape(n * STRIP_H, STRIP_W) @ _GX.T).reshape(n, STRIP_H, STRIP_W)
    across = np.ascontiguousarray(along.transpose(0, 2, 1)).reshape(n * STRIP_W, STRIP_H) @ _GY.T
    out: np.ndarray = across.reshape(n, STRIP_W, STRIP_H).transpose(0, 2, 1)
    return out


def features(plain: np.ndarray) -> np.ndarray:
    """Plain windows (N, D) -> glare-blind features (N, D): brightness less its local mean, brightness
    and colour divided by the brightness's local contrast."""
    n = len(plain)
    npx, q = STRIP_H * STRIP_W, (STRIP_H // 2) * (STRIP_W // 2)
    b = plain[:, :npx].reshape(n, STRIP_H, STRIP_W)
    hp = b - _smooth(b)
    energy = _smooth(hp * hp)
    energy += _EPS * energy.mean(axis=(1, 2), keepdims=True) + 1e-12
    scale = 1.0 / np.sqrt(energy)
    small = cv2.resize(np.ascontiguousarray(scale.reshape(n * STRIP_H, STRIP_W)), (STRIP_W // 2, n * STRIP_H // 2),
                       interpolation=cv2.INTER_AREA).reshape(n, STRIP_H // 2, STRIP_W // 2)
    out = np.empty((n, npx + 2 * q), np.float32)
    out[:, :npx] = (hp * scale).reshape(n, -1)
    for k in range(2):
        c = plain[:, npx + k * q : npx + (k + 1) * q].reshape(n, STRIP_H // 2, STRIP_W // 2)
        out[:, npx + k * q : npx + (k + 1) * q] = (c * small).reshape(n, -1)
    out /= np.sqrt(npx)
    return out


# -- simulated cardroom optics (in the camera's pixels) ------------------------------------------


def _glare(cam: np.ndarray, cam_w: float, rng: np.random.Generator) -> np.ndarray:
    """A specular band (20-45 mm across, any angle, 0.3-0.92 of the way to white at its middle)
    somewhere over the corner."""
    h, w = cam.shape[:2]
    px_mm = cam_w / 63.0
    sigma = rng.uniform(20.0, 45.0) * px_mm / 2.355
    ang = rng.uniform(0, math.pi)
    cx, cy = rng.uniform(-0.3, 1.3) * w, rng.uniform(-0.3, 1.3) * h
    yy, xx = np.mgrid[0:h, 0:w].astype(np.float32)
    across = (xx - cx) * -math.sin(ang) + (yy - cy) * math.cos(ang)
    a = (rng.uniform(0.3, 0.92) * np.exp(-0.5 * (across / sigma) ** 2))[:, :, None]
    img = cam.astype(np.float32)
    out: np.ndarray = np.clip(img + (255 - img) * a, 0, 255).astype(np.uint8)
    return out


def motion_kernel(length_px: float, angle_deg: float) -> np.ndarray:
    """A line ``length_px`` long at ``angle_deg``, drawn 4x finer and pooled (sub-pixel ends), unit sum."""
    size = 2 * math.ceil(length_px / 2) + 3
    k = np.zeros((size * 4, size * 4), np.float32)
    c = size * 2 - 0.5
    dx, dy = math.cos(math.radians(angle_deg)) * length_px * 2, math.sin(math.radians(angle_deg)) * length_px * 2
    cv2.line(k, (round((c - dx) * 16), round((c - dy) * 16)), (round((c + dx) * 16), round((c + dy) * 16)), 1.0, 4,
             cv2.LINE_AA, 4)
    kernel = cv2.resize(k, (size, size), interpolation=cv2.INTER_AREA)
    out: np.ndarray = kernel / kernel.sum()
    return out


def _optics(cam_w: float, rng: np.random.Generator) -> Callable[[np.ndarray], np.ndarray]:
    """One simulated camera's faults: glare a third of the time, motion blur a third (2-10 px)."""
    glare = rng.random() < 0.35
    motion = float(rng.uniform(2.0, 10.0)) if rng.random() < 0.35 else 0.0
    angle = float(rng.uniform(0, 180))

    def apply(cam: np.ndarray) -> np.ndarray:
        if glare:
            cam = _glare(cam, cam_w, rng)
        if motion:
            cam = cv2.filter2D(cam, -1, motion_kernel(motion, angle), borderType=cv2.BORDER_REPLICATE)
        return cam

    return apply


def simulated_views(face: np.ndarray, aspect: float, n: int, rng: np.random.Generator) -> list[np.ndarray]:
    """``n`` views of a face's top-left corner through cameras with a cardroom's faults."""
    out = []
    for _ in range(n):
        cam_w = float(np.exp(rng.uniform(np.log(CAM_RANGE[0]), np.log(CAM_RANGE[1]))))
        blur = float(rng.uniform(0.5, 2.2)) if rng.random() < 0.25 else float(rng.uniform(0.0, 1.2))
        out.append(camera_corner(
            face, aspect, cam_w, float(rng.uniform(-3.0, 3.0)), (float(rng.uniform(0, 1)), float(rng.uniform(0, 1))),
            blur, float(rng.uniform(1.0, 6.0)), int(rng.integers(35, 96)),
            BACKGROUNDS[int(rng.integers(len(BACKGROUNDS)))], rng, optics=_optics(cam_w, rng),
        ))
    return out


# -- training ---------------------------------------------------------------------------------------


def fit(x: np.ndarray, y: np.ndarray, n_classes: int, seed: int = 0, epochs: int = EPOCHS) -> Classifier:
    """A one-hidden-layer network on features ``x`` (N, F) and classes ``y``: PCA to PCA_DIM whitened
    inputs, tanh, softmax; minibatch Adam on cross-entropy with weight decay."""
    rng = np.random.default_rng(seed)
    mu = x.mean(axis=0)
    xc = (x - mu).astype(np.float32)
    _u, s, vt = np.linalg.svd(xc[rng.permutation(len(xc))[:4000]], full_matrices=False)
    k = min(PCA_DIM, len(s))
    proj = (vt[:k].T / (s[:k] / math.sqrt(min(4000, len(xc))) + 1e-6)).astype(np.float32)
    z = xc @ proj
    params = [rng.normal(0, 1 / math.sqrt(k), (k, HIDDEN)).astype(np.float32), np.zeros(HIDDEN, np.float32),
              rng.normal(0, 1 / math.sqrt(HIDDEN), (HIDDEN, n_classes)).astype(np.float32), np.zeros(n_classes, np.float32)]
    m = [np.zeros_like(p) for p in params]
    v = [np.zeros_like(p) for p in params]
    lr, decay, batch, t = 3e-3, 1e-4, 256, 0
    onehot = np.eye(n_classes, dtype=np.float32)
    for epoch in range(epochs):
        rate = lr * (0.5 * (1 + math.cos(math.pi * epoch / epochs)))
        for idx in np.array_split(rng.permutation(len(z)), max(1, len(z) // batch)):
            w1, b1, w2, b2 = params
            xb = z[idx] + rng.normal(0, 0.1, (len(idx), k)).astype(np.float32)  # input noise: a smoother boundary
            h = np.tanh(xb @ w1 + b1)
            logits = h @ w2 + b2
            logits -= logits.max(axis=1, keepdims=True)
            p = np.exp(logits)
            p /= p.sum(axis=1, keepdims=True)
            g = (p - onehot[y[idx]]) / len(idx)
            gw2, gb2 = h.T @ g + decay * w2, g.sum(axis=0)
            gh = (g @ w2.T) * (1 - h * h)
            gw1, gb1 = xb.T @ gh + decay * w1, gh.sum(axis=0)
            t += 1
            for i, gr in enumerate((gw1, gb1, gw2, gb2)):
                m[i] = 0.9 * m[i] + 0.1 * gr
                v[i] = 0.999 * v[i] + 0.001 * gr * gr
                params[i] -= rate * (m[i] / (1 - 0.9**t)) / (np.sqrt(v[i] / (1 - 0.999**t)) + 1e-8)
    w1, b1, w2, b2 = params
    return Classifier(mu.astype(np.float32), proj, w1, b1, w2, b2)


def training_set(faces: Sequence[np.ndarray], aspect: float, mean: np.ndarray, weight: np.ndarray, plain: np.ndarray,
                 seed: int = 1, views: int = VIEWS_PER_CORNER) -> tuple[np.ndarray, np.ndarray]:
    """Features (N, D) and classes (N,) of simulated views: class ``2f`` face ``f``'s printed corner,
    ``2f + 1`` its opposite corner turned round; each view aligned within the detector's slack on
    its own card's plain view (``plain`` (2F, D), class order), as the detector aligns a candidate."""
    from vision.deck import embed2  # deck.enroll calls this module

    rng = np.random.default_rng(seed)
    feats, classes = [], []
    for f, face in enumerate(faces):
        for view, img in enumerate((face, cv2.rotate(face, cv2.ROTATE_180))):
            k = 2 * f + view
            wins = np.stack([corner_windows(r) for r in simulated_views(img, aspect, views, rng)])
            pl, _ = embed2(wins, mean, weight)  # (views, n, D)
            best = np.argmax(pl @ plain[k], axis=1)
            feats.append(features(pl[np.arange(len(pl)), best]))
            classes.extend([k] * len(pl))
    return np.concatenate(feats), np.array(classes)


def train(faces: Sequence[np.ndarray], aspect: float, mean: np.ndarray, weight: np.ndarray, plain: np.ndarray,
          seed: int = 1, views: int = VIEWS_PER_CORNER) -> Classifier:
    """The classifier of a deck's corners (classes as :func:`training_set`)."""
    x, y = training_set(faces, aspect, mean, weight, plain, seed, views)
    return fit(x, y, 2 * len(faces), seed)
