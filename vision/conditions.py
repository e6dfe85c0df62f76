"""Cardroom conditions painted onto rendered tables (test edge, like :mod:`vision.scene`).

What a camera over a real table sees and the plain renders do not: a chip lying on a card, a
hand over the felt, a lamp's specular glare on glossy cards, a blurred frame.  The painters
take a :class:`~vision.scene.Scene` (its picture and where its cards lie) and return a new
picture; the ones given to ``render_scene(..., optics=...)`` act on the table as it lies,
before the camera's own light, noise and JPEG.  Used by the conditions bench and the tests.
"""

from __future__ import annotations

import math

import cv2
import numpy as np

from vision.scene import Scene

SKIN = (120, 160, 215)  # BGR, a light skin tone
#: the ten swatches of the Monk Skin Tone scale (Google, 2022; CC BY 4.0), palest to darkest, as BGR: a hand of
#: every tone for the hand's runs (session 31: the palest and darkest are no skin to the detector, a dark brown
#: one on a burgundy felt is the felt's hue)
MONK_SKIN_TONES = tuple(
    (int(h[4:6], 16), int(h[2:4], 16), int(h[0:2], 16))
    for h in ("f6ede4", "f3e7db", "f7ead0", "eadaba", "d7bd96", "a07e56", "825c43", "604134", "3a312a", "292420")
)
CHIP_COLOURS = ((30, 30, 190), (170, 60, 30), (25, 25, 25), (40, 140, 40))


def to_image(scene: Scene, pts_mm: np.ndarray) -> np.ndarray:
    """Table millimetres to the scene's image pixels."""
    return cv2.perspectiveTransform(np.asarray(pts_mm, np.float64).reshape(-1, 1, 2), scene.table_to_image).reshape(-1, 2)


def _px_per_mm(scene: Scene, at_mm: np.ndarray) -> float:
    p = to_image(scene, np.asarray(at_mm, np.float64) + np.array([[0.0, 0.0], [10.0, 0.0], [0.0, 10.0]]))
    return float(math.sqrt(np.linalg.norm(p[1] - p[0]) * np.linalg.norm(p[2] - p[0])) / 10)


def _shadowed(img: np.ndarray, poly_px: np.ndarray, offset_px: float, strength: float) -> None:
    mask = np.zeros(img.shape[:2], np.float32)
    cv2.fillPoly(mask, [np.round(poly_px + offset_px).astype(np.int32)], 1.0)
    soft = cv2.GaussianBlur(mask, (0, 0), max(1.0, offset_px))
    img[:] = (img * (1 - strength * soft[:, :, None])).astype(np.uint8)


def paint_chip(scene: Scene, centre_mm: np.ndarray, rng: np.random.Generator, diameter_mm: float = 38.0,
               colour: tuple[int, int, int] | None = None) -> np.ndarray:
    """A chip (a disc with white edge spots, an inlay ring and a shadow) at ``centre_mm``; its
    colour (BGR) drawn from :data:`CHIP_COLOURS` unless given."""
    img = scene.image.copy()
    r = diameter_mm / 2
    t = np.linspace(0, 2 * math.pi, 48, endpoint=False)
    ring = np.stack([np.cos(t), np.sin(t)], axis=1)
    disc = to_image(scene, centre_mm + r * ring)
    scale = float(np.linalg.norm(disc[0] - disc[24]) / diameter_mm)
    _shadowed(img, disc, 2.0 * scale, 0.45)
    drawn = tuple(int(v) for v in rng.choice(CHIP_COLOURS))
    cv2.fillPoly(img, [np.round(disc).astype(np.int32)], colour or drawn, cv2.LINE_AA)
    for k in range(8):  # the edge spots
        a0, a1 = k * math.pi / 4, k * math.pi / 4 + math.pi / 10
        arc = np.stack([np.cos(np.linspace(a0, a1, 6)), np.sin(np.linspace(a0, a1, 6))], axis=1)
        spot = np.concatenate([centre_mm + r * arc, centre_mm + (r - 5) * arc[::-1]])
        cv2.fillPoly(img, [np.round(to_image(scene, spot)).astype(np.int32)], (235, 235, 235), cv2.LINE_AA)
    inner = to_image(scene, centre_mm + (r - 8) * ring)
    cv2.polylines(img, [np.round(inner).astype(np.int32)], True, (230, 230, 230), max(1, round(scale)), cv2.LINE_AA)
    return img


def hand_polygon(scene: Scene, seat: int, reach: float) -> np.ndarray:
    """A forearm and hand (table mm) from the rail towards the table centre over ``seat``'s zone."""
    s = scene.layout.seats[seat]
    fwd, right = np.array(s.forward), np.array(s.right)
    base = np.array(s.center) - fwd * 170.0 + right * 60.0  # at the rail, a little to the player's right
    tip = base + fwd * (170.0 + reach)
    half = 45.0
    arm = [base - right * half, tip - right * half * 1.1, tip + fwd * 40 - right * 20, tip + fwd * 55,
           tip + fwd * 40 + right * 25, tip + right * half * 1.1, base + right * half]
    return np.array(arm)


def paint_hand(scene: Scene, poly_mm: np.ndarray, rng: np.random.Generator,
               skin: tuple[int, int, int] = SKIN) -> np.ndarray:
    """A hand of ``skin``'s tone (BGR; ``poly_mm``, see :func:`hand_polygon`) with skin texture and a soft shadow."""
    img = scene.image.copy()
    px = to_image(scene, poly_mm)
    _shadowed(img, px, 12.0 * _px_per_mm(scene, np.asarray(poly_mm).mean(axis=0)), 0.5)
    mask = np.zeros(img.shape[:2], np.uint8)
    cv2.fillPoly(mask, [np.round(px).astype(np.int32)], 255, cv2.LINE_AA)
    shade = np.clip(np.array(skin, np.float32) * rng.uniform(0.85, 1.1), 0, 255)
    tex = 1 + 0.04 * rng.standard_normal(img.shape[:2]).astype(np.float32)
    textured = np.clip(shade[None, None, :] * tex[:, :, None], 0, 255).astype(np.uint8)
    alpha = (cv2.GaussianBlur(mask, (0, 0), 1.0).astype(np.float32) / 255)[:, :, None]
    img[:] = (img * (1 - alpha) + textured * alpha).astype(np.uint8)
    return img


def card_mask(scene: Scene) -> np.ndarray:
    """Where the scene's cards lie in its picture (0..1)."""
    mask = np.zeros(scene.image.shape[:2], np.float32)
    for c in scene.cards:
        cv2.fillPoly(mask, [np.round(c.corners).astype(np.int32)], 1.0, cv2.LINE_AA)
    return mask


def paint_glare(scene: Scene, centre_mm: np.ndarray, rng: np.random.Generator, strength: float = 0.9,
                width_mm: float = 30.0, felt_share: float = 0.2) -> np.ndarray:
    """A lamp's specular reflection: a long soft band through ``centre_mm`` (any angle), ``width_mm``
    across at half height, that washes glossy cards towards white (``strength`` at its middle, so
    the ink there fades but stays) and the matte felt ``felt_share`` as much."""
    img = scene.image.astype(np.float32)
    h, w = img.shape[:2]
    c = to_image(scene, centre_mm[None])[0]
    ang = rng.uniform(0, math.pi)
    along = np.array([math.cos(ang), math.sin(ang)])
    sigma = width_mm * _px_per_mm(scene, centre_mm) / 2.355
    yy, xx = np.mgrid[0:h, 0:w].astype(np.float32)
    across = (xx - c[0]) * -along[1] + (yy - c[1]) * along[0]
    length = (xx - c[0]) * along[0] + (yy - c[1]) * along[1]
    band = np.exp(-0.5 * (across / sigma) ** 2) * np.exp(-0.5 * (length / (8 * sigma)) ** 2)
    gloss = felt_share + (1 - felt_share) * card_mask(scene)
    a = (strength * band * gloss)[:, :, None]
    out: np.ndarray = np.clip(img + (255 - img) * a, 0, 255).astype(np.uint8)
    return out


def motion_blur(img: np.ndarray, length_px: float, angle_deg: float) -> np.ndarray:
    """The table moving ``length_px`` during the exposure, along ``angle_deg`` (a line kernel)."""
    n = max(1, math.ceil(length_px))
    size = n + 2 if n % 2 else n + 3  # odd: the line's middle is the kernel's
    k = np.zeros((size * 4, size * 4), np.float32)  # drawn 4x finer, then pooled: sub-pixel ends
    c = size * 2 - 0.5
    dx, dy = math.cos(math.radians(angle_deg)) * length_px * 2, math.sin(math.radians(angle_deg)) * length_px * 2
    cv2.line(k, (round((c - dx) * 16), round((c - dy) * 16)), (round((c + dx) * 16), round((c + dy) * 16)), 1.0, 4,
             cv2.LINE_AA, 4)
    kernel = cv2.resize(k, (size, size), interpolation=cv2.INTER_AREA)
    return cv2.filter2D(img, -1, kernel / kernel.sum(), borderType=cv2.BORDER_REPLICATE)


def gaussian_blur(img: np.ndarray, sigma_px: float) -> np.ndarray:
    """Out of focus: a Gaussian of ``sigma_px``."""
    return cv2.GaussianBlur(img, (0, 0), sigma_px)
