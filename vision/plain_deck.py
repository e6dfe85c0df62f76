"""The project's own card faces, drawn with OpenCV: the demo camera's art when Aisleriot's is missing.

``vision.deckart`` renders Debian's Aisleriot decks (``gnome-cards-data`` through ``rsvg-convert``),
which pip cannot install.  So that ``pip install`` alone gives a demo whose camera runs, this module
draws a plain deck of its own: white faces with rounded corners, the rank and suit in two corners,
the pips laid out as on a printed card (court cards: a framed letter), four colours (black spades,
red hearts, blue diamonds, green clubs), and a blue patterned back.  The faces are written as ``As.png`` ..
``back.png`` under ``$STUDTABLE_CACHE/decks/plain-<width>``: the same enrollment folder a cardroom
photographs its own deck into, so the vision service enrolls and reads them like any deck.

``card_faces(deck)`` is what the demo calls: the Aisleriot deck when it can be had, else these.
This is an edge module (it writes files); the vision core never imports it.
"""

from __future__ import annotations

import logging
import shutil
import tempfile
from pathlib import Path

import cv2
import numpy as np

from engine.cards import DECK, Card
from vision.deckart import FACE_WIDTH, DeckArtError, cache_root
from vision.deckart import face_dir as aisleriot_face_dir

log = logging.getLogger(__name__)

NAME = "plain4"
ASPECT = 3.5 / 2.5  # poker size, height / width
# A four-colour deck (as some cardrooms use): every suit its own colour, so even a few pixels of the
# index tell clubs from spades and diamonds from hearts.  BGR.
RED, BLUE, GREEN, BLACK = (30, 30, 200), (170, 80, 10), (40, 130, 20), (25, 25, 25)
SUIT_COLOUR = {"h": RED, "d": BLUE, "c": GREEN, "s": BLACK}
RANK_TEXT = {"T": "10"}
INSTALL_HINT = "apt-get install gnome-cards-data librsvg2-bin"

# Pip centres for 2..10 as fractions of the pip area (x, y); y > 0.5 pips are drawn upside down.
_PIPS: dict[str, list[tuple[float, float]]] = {
    "A": [(0.5, 0.5)],
    "2": [(0.5, 0.0), (0.5, 1.0)],
    "3": [(0.5, 0.0), (0.5, 0.5), (0.5, 1.0)],
    "4": [(0.0, 0.0), (1.0, 0.0), (0.0, 1.0), (1.0, 1.0)],
    "5": [(0.0, 0.0), (1.0, 0.0), (0.5, 0.5), (0.0, 1.0), (1.0, 1.0)],
    "6": [(0.0, 0.0), (1.0, 0.0), (0.0, 0.5), (1.0, 0.5), (0.0, 1.0), (1.0, 1.0)],
    "7": [(0.0, 0.0), (1.0, 0.0), (0.5, 0.25), (0.0, 0.5), (1.0, 0.5), (0.0, 1.0), (1.0, 1.0)],
    "8": [(0.0, 0.0), (1.0, 0.0), (0.5, 0.25), (0.0, 0.5), (1.0, 0.5), (0.5, 0.75), (0.0, 1.0), (1.0, 1.0)],
    "9": [(0.0, 0.0), (1.0, 0.0), (0.0, 1 / 3), (1.0, 1 / 3), (0.5, 0.5), (0.0, 2 / 3), (1.0, 2 / 3),
          (0.0, 1.0), (1.0, 1.0)],
    "T": [(0.0, 0.0), (1.0, 0.0), (0.5, 1 / 6), (0.0, 1 / 3), (1.0, 1 / 3), (0.0, 2 / 3), (1.0, 2 / 3),
          (0.5, 5 / 6), (0.0, 1.0), (1.0, 1.0)],
}


def suit_mask(suit: str, size: int) -> np.ndarray:
    """A ``size`` x ``size`` mask (255 inside) of one suit symbol, point or stem at the bottom."""
    s = size * 4  # drawn large, then shrunk: smooth edges
    m: np.ndarray = np.zeros((s, s), np.uint8)
    if suit == "d":
        pts = np.array([[s // 2, 0], [int(s * 0.9), s // 2], [s // 2, s - 1], [int(s * 0.1), s // 2]])
        cv2.fillConvexPoly(m, pts, 255, cv2.LINE_AA)
    elif suit in ("h", "s"):
        r = int(s * 0.26)
        cy = int(s * 0.34)
        for cx in (int(s * 0.27), int(s * 0.73)):
            cv2.circle(m, (cx, cy), r, 255, -1, cv2.LINE_AA)
        pts = np.array([[int(s * 0.03), int(s * 0.44)], [int(s * 0.97), int(s * 0.44)], [s // 2, int(s * 0.97)]])
        cv2.fillConvexPoly(m, pts, 255, cv2.LINE_AA)
        if suit == "s":  # a heart upside down, with a stem
            m = cv2.flip(m, 0)
            m = cv2.resize(m, (s, int(s * 0.8)))
            m = np.vstack([m, np.zeros((s - m.shape[0], s), np.uint8)])
            stem = np.array([[s // 2, int(s * 0.55)], [int(s * 0.7), s - 1], [int(s * 0.3), s - 1]])
            cv2.fillConvexPoly(m, stem, 255, cv2.LINE_AA)
    elif suit == "c":
        r = int(s * 0.22)
        for cx, cy in ((s // 2, int(s * 0.24)), (int(s * 0.25), int(s * 0.55)), (int(s * 0.75), int(s * 0.55))):
            cv2.circle(m, (cx, cy), r, 255, -1, cv2.LINE_AA)
        cv2.rectangle(m, (int(s * 0.4), int(s * 0.4)), (int(s * 0.6), int(s * 0.6)), 255, -1)
        stem = np.array([[s // 2, int(s * 0.5)], [int(s * 0.7), s - 1], [int(s * 0.3), s - 1]])
        cv2.fillConvexPoly(m, stem, 255, cv2.LINE_AA)
    else:
        raise ValueError(f"no suit {suit!r}")
    return cv2.resize(m, (size, size), interpolation=cv2.INTER_AREA)


def _stamp(img: np.ndarray, mask: np.ndarray, x: int, y: int, colour: tuple[int, int, int],
           flip: bool = False) -> None:
    """Paint ``colour`` through ``mask`` with its centre at (x, y)."""
    if flip:
        mask = cv2.rotate(mask, cv2.ROTATE_180)
    h, w = mask.shape
    x0, y0 = x - w // 2, y - h // 2
    region = img[y0 : y0 + h, x0 : x0 + w, :3]
    a = (mask[: region.shape[0], : region.shape[1]].astype(np.float32) / 255.0)[..., None]
    region[:] = (region * (1 - a) + np.array(colour, np.float32) * a).astype(np.uint8)


def _glyph(text: str, w: int, h: int) -> np.ndarray:
    """``text`` drawn bold and stretched to fill a ``w`` x ``h`` mask (the index must fill its strip)."""
    big = np.zeros((200, 140 * len(text)), np.uint8)
    cv2.putText(big, text, (5, 180), cv2.FONT_HERSHEY_DUPLEX, 6.0, 255, 22, cv2.LINE_AA)
    ys, xs = np.nonzero(big)
    big = big[ys.min() : ys.max() + 1, xs.min() : xs.max() + 1]
    return cv2.resize(big, (w, h), interpolation=cv2.INTER_AREA)


def _index(img: np.ndarray, c: Card, width: int) -> None:
    """Rank above suit in the top-left corner, the same turned round in the bottom-right: inside the
    strip the recognizer learns (vision.deck: the left quarter of the card, the top 0.58 widths)."""
    h = img.shape[0]
    colour = SUIT_COLOUR[c.suit]
    text = RANK_TEXT.get(c.rank, c.rank)
    cw, ch = int(width * 0.22), int(width * 0.5)
    mask = np.zeros((ch, cw), np.uint8)
    gw, gh = int(width * 0.16), int(width * 0.2)
    g = _glyph(text, gw if len(text) == 1 else int(width * 0.19), gh)
    x = (cw - g.shape[1]) // 2
    mask[int(width * 0.03) : int(width * 0.03) + gh, x : x + g.shape[1]] = g
    pip = suit_mask(c.suit, int(width * 0.16))
    _stamp_mask(mask, pip, cw // 2, int(width * 0.27) + pip.shape[0] // 2)
    x0, y0 = int(width * 0.025), int(width * 0.02)
    for m, (bx, by) in ((mask, (x0, y0)), (cv2.rotate(mask, cv2.ROTATE_180), (width - x0 - cw, h - y0 - ch))):
        a = (m.astype(np.float32) / 255.0)[..., None]
        region = img[by : by + ch, bx : bx + cw, :3]
        region[:] = (region * (1 - a) + np.array(colour, np.float32) * a).astype(np.uint8)


def _stamp_mask(dst: np.ndarray, mask: np.ndarray, x: int, y: int) -> None:
    h, w = mask.shape
    y0, x0 = y - h // 2, x - w // 2
    dst[y0 : y0 + h, x0 : x0 + w] = np.maximum(dst[y0 : y0 + h, x0 : x0 + w], mask)


def _blank(width: int) -> np.ndarray:
    """A white BGRA card with rounded, transparent corners and a thin grey edge."""
    h = round(width * ASPECT)
    img = np.zeros((h, width, 4), np.uint8)
    r = int(width * 0.06)
    shape = np.zeros((h, width), np.uint8)
    cv2.rectangle(shape, (r, 0), (width - 1 - r, h - 1), 255, -1)
    cv2.rectangle(shape, (0, r), (width - 1, h - 1 - r), 255, -1)
    for cx, cy in ((r, r), (width - 1 - r, r), (r, h - 1 - r), (width - 1 - r, h - 1 - r)):
        cv2.circle(shape, (cx, cy), r, 255, -1, cv2.LINE_AA)
    img[..., :3] = 255
    img[..., 3] = shape
    edge = cv2.morphologyEx(shape, cv2.MORPH_GRADIENT, np.ones((3, 3), np.uint8))
    img[..., :3][edge > 0] = (150, 150, 150)
    return img


def face(c: Card, width: int = FACE_WIDTH) -> np.ndarray:
    """One card's face (BGRA)."""
    img = _blank(width)
    h = img.shape[0]
    colour = SUIT_COLOUR[c.suit]
    _index(img, c, width)
    left, right = int(width * 0.34), int(width * 0.66)
    top, bottom = int(h * 0.2), int(h * 0.8)
    if c.rank in _PIPS:
        size = int(width * (0.42 if c.rank == "A" else 0.18))
        pip = suit_mask(c.suit, size)
        for fx, fy in _PIPS[c.rank]:
            x = round(left + fx * (right - left))
            y = round(top + fy * (bottom - top))
            _stamp(img, pip, x, y, colour, flip=fy > 0.5)
    else:  # a court card: a frame, the letter large, the suit under it
        cv2.rectangle(img, (int(width * 0.24), int(h * 0.16)), (int(width * 0.76), int(h * 0.84)), (*colour, 255),
                      3, cv2.LINE_AA)
        scale = width / 300 * 4.0
        thick = max(3, round(width / 300 * 9))
        (tw, th), _ = cv2.getTextSize(c.rank, cv2.FONT_HERSHEY_TRIPLEX, scale, thick)
        cv2.putText(img, c.rank, ((width - tw) // 2, int(h * 0.5) + th // 3), cv2.FONT_HERSHEY_TRIPLEX, scale,
                    (*colour, 255), thick, cv2.LINE_AA)
        pip = suit_mask(c.suit, int(width * 0.16))
        _stamp(img, pip, width // 2, int(h * 0.72), colour)
        _stamp(img, pip, width // 2, int(h * 0.25), colour, flip=True)
    return img


def back(width: int = FACE_WIDTH) -> np.ndarray:
    """The back: a blue field with a white border and a diamond lattice."""
    img = _blank(width)
    h = img.shape[0]
    m = int(width * 0.06)
    field = np.zeros((h, width, 3), np.uint8)
    field[:] = (150, 70, 20)
    step = max(8, width // 12)
    for k in range(-h, width + h, step):
        cv2.line(field, (k, 0), (k + h, h), (210, 150, 90), 2, cv2.LINE_AA)
        cv2.line(field, (k, h), (k + h, 0), (210, 150, 90), 2, cv2.LINE_AA)
    inner = img[m : h - m, m : width - m, :3]
    inner[:] = field[m : h - m, m : width - m]
    return img


def face_dir(width: int = FACE_WIDTH) -> Path:
    """The folder of plain faces (``As.png`` .. ``back.png``), drawn on first use and cached."""
    out = cache_root() / "decks" / f"{NAME}-{width}"
    if (out / "back.png").is_file() and all((out / f"{c}.png").is_file() for c in DECK):
        return out
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{NAME}-", dir=out.parent))
    try:
        for c in DECK:
            cv2.imwrite(str(tmp / f"{c}.png"), face(c, width))
        cv2.imwrite(str(tmp / "back.png"), back(width))
        try:
            tmp.rename(out)
        except OSError:  # another process won the race, or a partial old folder is there
            if not (out / "back.png").is_file():
                shutil.rmtree(out, ignore_errors=True)
                tmp.rename(out)
    finally:
        if tmp.exists():
            shutil.rmtree(tmp, ignore_errors=True)
    return out


def aisleriot_missing(deck: str = "anglo") -> str | None:
    """None when the Aisleriot deck can be rendered here, else one line: what is missing, what is
    used instead, and how to get it."""
    from vision.deckart import AISLERIOT_DIR

    missing = []
    if not (AISLERIOT_DIR / f"{deck}.svgz").is_file():
        missing.append("gnome-cards-data")
    if shutil.which("rsvg-convert") is None:
        missing.append("librsvg2-bin")
    if not missing:
        return None
    return (f"the camera draws studtable's plain cards: the Aisleriot card art needs {' and '.join(missing)} "
            f"(sudo apt-get install {' '.join(missing)})")


def card_faces(deck: str, width: int = FACE_WIDTH) -> tuple[Path, str, str | None]:
    """``(folder, deck name, why not Aisleriot)``: the Aisleriot deck ``deck`` when it can be rendered,
    else the plain deck drawn here and one line saying what was missing and how to get it."""
    try:
        return aisleriot_face_dir(deck, width), deck, None
    except DeckArtError as exc:
        why = (f"Aisleriot card art not available ({str(exc).split(';')[0].split(' (')[0]}); the camera draws "
               f"studtable's plain cards instead (for the real art: {INSTALL_HINT})")
        log.info("%s", why)
        return face_dir(width), NAME, why
