"""Photograph-like pictures of hands tabled on a plain surface: wood or cloth, no layout, no markers.

Why: ``studtable vision detect --deck DECKFILE IMAGE`` promises to read any picture of cards, and
the pictures other tools bring are not of our printed felt: hands laid down on a wooden table or
a cloth, fanned, heaped, spread edge to edge, often with no card lying on its own.  The markerless
scale (:mod:`vision.scale`) first looked only for lone cards and rows, and refused such a
picture outright.  These pictures test the whole command on them.

Cards are the deck's own faces, laid as :mod:`vision.scene_showdown` lays tabled hands (its
``_fan``, ``_loose`` and ``_spread``), each hand somewhere of its own on the picture, then seen
through a mildly tilted camera with the scenes' light, blur, noise and JPEG.  Truth: every card is
a :class:`vision.scene_showdown.TabledCard` with which index corners show.  The test edge: the
detector never imports it.
"""

from __future__ import annotations

import cv2
import numpy as np

from engine.cards import DECK
from vision.camera_tilt import PHONE_FOCAL, camera_tilt
from vision.scale import picture_layout
from vision.scene import (
    FaceSet,
    Scene,
    TruthCard,
    _apply_conditions,
    _median_card_px,
    _paste,
    _project,
    _shadow,
)
from vision.scene_showdown import _fan, _loose, _spread, tabled_card

SURFACES = ("wood", "cloth")
#: wood tones and cloth colours (BGR): none near the cards' white paper
WOODS = ((40, 80, 130), (60, 110, 160), (30, 60, 100), (90, 140, 190))
CLOTHS = ((120, 120, 125), (150, 170, 180), (70, 60, 50), (40, 40, 45), (60, 110, 60))
ARRANGE = {"fan": _fan, "loose": _loose, "spread": _spread}


def _surface(rng: np.random.Generator, kind: str, size: tuple[int, int],
             tone_bgr: tuple[int, int, int] | None) -> np.ndarray:
    """Wood: a tone with wavy grain and fine texture; cloth: a colour with a fine weave and mottling."""
    w, h = size
    yy, xx = np.mgrid[0:h, 0:w].astype(np.float32)
    if kind == "wood":
        warp = cv2.resize(cv2.GaussianBlur(rng.normal(0, 1, (h // 20, w // 20)).astype(np.float32), (0, 0), 2), (w, h))
        grain = np.sin((yy + 60 * warp) / rng.uniform(5, 12)) * 0.5 + 0.5
        fine = cv2.GaussianBlur(rng.normal(0, 1, (h, w)).astype(np.float32), (0, 0), 1.5) * 0.3
        tone = np.array(tone_bgr or WOODS[int(rng.integers(len(WOODS)))], np.float32)
        img = tone * (0.75 + 0.35 * grain + fine)[..., None]
    else:
        tone = np.array(tone_bgr or CLOTHS[int(rng.integers(len(CLOTHS)))], np.float32)
        weave = np.sin(xx / 1.6) * np.sin(yy / 1.6) * 0.06
        mottle = cv2.GaussianBlur(rng.normal(0, 0.05, (h, w)).astype(np.float32), (0, 0), 3)
        img = tone * (1 + weave + mottle)[..., None]
    out: np.ndarray = np.clip(img, 0, 255).astype(np.uint8)
    return out


def render_picture(faces: FaceSet, seed: int, *, surface: str | None = None, hands: int | None = None,
                   arrangement: str | None = None, tone: tuple[int, int, int] | None = None,
                   size: tuple[int, int] = (1600, 1200), tilt_deg: float = 0.0,
                   focal: float = PHONE_FOCAL) -> Scene:
    """One picture; every random choice comes from ``seed``.  ``hands`` (2-3) hands of 4-7 cards, each
    ``arrangement`` (one of ``fan``, ``loose``, ``spread``, or drawn per hand), on ``surface`` of
    colour ``tone`` (BGR; default drawn from :data:`WOODS` or :data:`CLOTHS`).  ``tilt_deg``: the
    camera looks that far off straight down through a lens of ``focal`` (over the picture's longer
    side), the near side drawn at random (:func:`vision.camera_tilt.camera_tilt`; the same cards and
    hands as at 0)."""
    rng = np.random.default_rng(seed)
    kind = surface or str(rng.choice(SURFACES))
    w, h = size
    img = _surface(rng, kind, size, tone)
    px_mm = float(rng.uniform(1.2, 1.8))  # cards 76-113 px wide
    cw = 63.0
    ch = cw * faces.aspect
    w_mm, h_mm = w / px_mm, h / px_mm
    middle = (0.0, 0.0)  # (of the table the picture sees, mm)
    # the camera: the top view at px_mm, its corners moved by up to 4 % of the picture (a mild tilt)
    top = np.array([[px_mm, 0, w / 2], [0, px_mm, h / 2], [0, 0, 1]], np.float64)
    src = np.array([[0, 0], [w, 0], [w, h], [0, h]], np.float32)
    tilt = cv2.getPerspectiveTransform(src, (src + rng.uniform(-0.04, 0.04, (4, 2)) * [w, h]).astype(np.float32))
    hmat = tilt @ top
    if tilt_deg:
        near = float(np.random.default_rng([seed, 1]).uniform(0, 360))
        hmat = camera_tilt(size, tilt_deg, near, focal) @ hmat
        # the hands are laid where the tilted camera sees the table (within the picture's corners, seen on it)
        seen = _project(np.linalg.inv(hmat), np.array([[0, 0], [w, 0], [w, h], [0, h]], np.float64))
        (x0, x1), (y0, y1) = (sorted(seen[:, 0])[1:3], sorted(seen[:, 1])[1:3])
        w_mm, h_mm = x1 - x0, y1 - y0
        middle = ((x0 + x1) / 2, (y0 + y1) / 2)
    deck = [str(c) for c in DECK]
    rng.shuffle(deck)
    n_hands = hands or int(rng.integers(2, 4))
    # each hand in a cell of its own (the picture cut into columns), its middle kept off the edges
    cells = [(middle[0] - w_mm / 2 + (i + 0.5) * w_mm / n_hands, middle[1]) for i in range(n_hands)]
    cards: list[TruthCard] = []
    for i, (cx, cy) in enumerate(cells):
        how = arrangement or str(rng.choice(list(ARRANGE)))
        local = ARRANGE[how](rng, int(rng.integers(4, 8)), cw, ch)
        mid = np.mean(np.concatenate(local), axis=0)
        turn = np.radians(rng.uniform(-180, 180) if how != "spread" else rng.uniform(-20, 20))
        rot = np.array([[np.cos(turn), -np.sin(turn)], [np.sin(turn), np.cos(turn)]])
        spread_mm = 0.5 * min(w_mm / n_hands, h_mm) - 0.6 * ch
        shift = np.array([cx, cy]) + rng.uniform(-1, 1, 2) * max(spread_mm, 0.0) * [0.3, 0.6]
        outlines = [(q - mid) @ rot.T + shift for q in local]
        for k, tc in enumerate(outlines):
            code = deck.pop()
            ic = _project(hmat, tc)
            _shadow(img, ic, np.array([2.0, 3.0]), 0.35, max(1.0, 0.02 * float(np.linalg.norm(ic[1] - ic[0]))))
            _paste(img, faces.faces[code], ic)
            cards.append(tabled_card(code, i + 1, k, tc, outlines[k + 1 :], hmat, size, how))
    img = _apply_conditions(rng, img)
    info = {"surface": kind, "hands": n_hands, "px_per_mm": px_mm, "card_px": _median_card_px(cards)}
    return Scene(img, cards, hmat, picture_layout(w_mm, h_mm), seed, info)
