"""Real card art for tests, the scene renderer and demos: Debian's Aisleriot decks.

``gnome-cards-data`` ships each deck as one gzipped SVG sheet in which every
card is an element with an id (``club_1`` .. ``club_10``, ``club_jack``,
``club_queen``, ``club_king``, the same for ``diamond``/``heart``/``spade``,
and ``back``).  Aisleriot itself does not
use the elements' own bounding boxes (``rsvg-convert --export-id`` gives wrong
boxes for many of them: a king 56 px tall, a back 1394 px tall, because
elements reference shared art by ``<use>``); it divides the sheet into a grid
of 13 columns (ace..king) by 5 rows (clubs, diamonds, hearts, spades, then
jokers and the back in the third cell) and draws each card in its cell.  We do
the same: render the sheet once, cut the grid, trim each cell to its opaque
pixels, and write flat faces named by card code (``As.png``,
``Td.png``, ``back.png``): exactly the enrollment directory a cardroom would
photograph its own deck into.

Rendering a sheet takes a second or two, so faces are cached on disk under
``$STUDTABLE_CACHE`` (default ``~/.cache/studtable``) and never committed.
This is an edge module (it runs a program and writes files); the vision core
never imports it.
"""

from __future__ import annotations

import gzip
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

import cv2
import numpy as np

from engine.cards import DECK, Card

# $STUDTABLE_AISLERIOT_DIR: another place (the tests point it at nothing to try a machine without it).
AISLERIOT_DIR = Path(os.environ.get("STUDTABLE_AISLERIOT_DIR") or "/usr/share/aisleriot/cards")
FACE_WIDTH = 300  # px; enough for index corners at 2x the largest on-table size

_SUIT_IDS = {"c": "club", "d": "diamond", "h": "heart", "s": "spade"}
_RANK_IDS = {
    "A": "1", "2": "2", "3": "3", "4": "4", "5": "5", "6": "6", "7": "7", "8": "8", "9": "9",
    "T": "10", "J": "jack", "Q": "queen", "K": "king",
}


class DeckArtError(RuntimeError):
    """The card art could not be found or rendered; the message says what to install or check."""


_COLUMNS, _ROWS = 13, 5
_SUIT_ROWS = {"c": 0, "d": 1, "h": 2, "s": 3}
_RANK_COLUMNS = {r: i for i, r in enumerate("A23456789TJQK")}


def _render_sheet(svgz: Path, tmp: Path, width: int) -> np.ndarray:
    svg = tmp / "sheet.svg"
    svg.write_bytes(gzip.decompress(svgz.read_bytes()))
    png = tmp / "sheet.png"
    proc = subprocess.run(
        ["rsvg-convert", "--width", str(width), "-o", str(png), str(svg)],
        capture_output=True, text=True, check=False,
    )
    if proc.returncode != 0 or not png.is_file():
        raise DeckArtError(f"rsvg-convert could not render {svgz}: {proc.stderr.strip()}")
    sheet = cv2.imread(str(png), cv2.IMREAD_UNCHANGED)
    svg.unlink()
    png.unlink()
    if sheet is None or sheet.ndim != 3 or sheet.shape[2] != 4:
        raise DeckArtError(f"rendering {svgz} did not give an RGBA image")
    return sheet


def _write_face(sheet: np.ndarray, row: int, col: int, path: Path, what: str) -> None:
    """Cut one grid cell, trim it to the card (opaque pixels) and composite on white."""
    h, w = sheet.shape[:2]
    y0, y1 = round(row * h / _ROWS), round((row + 1) * h / _ROWS)
    x0, x1 = round(col * w / _COLUMNS), round((col + 1) * w / _COLUMNS)
    cell = sheet[y0:y1, x0:x1]
    alpha = cell[:, :, 3]
    ys, xs = np.nonzero(alpha > 128)
    if len(xs) < 0.5 * alpha.size:
        raise DeckArtError(f"{what}: grid cell ({row}, {col}) is mostly empty; not an Aisleriot 13x5 sheet?")
    cell = cell[ys.min() : ys.max() + 1, xs.min() : xs.max() + 1]
    cv2.imwrite(str(path), cell)


def svg_id(c: Card) -> str:
    """The element id of a card in an Aisleriot sheet (``Ah`` -> ``heart_1``)."""
    return f"{_SUIT_IDS[c.suit]}_{_RANK_IDS[c.rank]}"


def list_decks(art_dir: Path = AISLERIOT_DIR) -> list[str]:
    """Names of the installed Aisleriot decks (file stems), sorted."""
    if not art_dir.is_dir():
        return []
    return sorted(p.name[: -len(".svgz")] for p in art_dir.glob("*.svgz"))


def cache_root() -> Path:
    root = os.environ.get("STUDTABLE_CACHE")
    return Path(root) if root else Path.home() / ".cache" / "studtable"


def face_dir(deck: str, width: int = FACE_WIDTH) -> Path:
    """Directory of flat faces for ``deck``, rendering them on first use.

    ``deck`` may name a tuning variant, ``BASE+VARIANT[+VARIANT]`` (see :data:`VARIANTS`).
    Safe against concurrent test workers: faces are rendered into a private
    temporary directory and moved into place with one rename.
    """
    out = cache_root() / "decks" / f"{deck}-{width}"
    if "+" in deck:
        return _variant_dir(deck, width, out)
    if (out / "back.png").is_file() and all((out / f"{c}.png").is_file() for c in DECK):
        return out
    svgz = AISLERIOT_DIR / f"{deck}.svgz"
    if not svgz.is_file():
        have = ", ".join(list_decks()) or "none"
        raise DeckArtError(
            f"Aisleriot deck {deck!r} not found at {svgz}; installed decks: {have}. "
            "Install Debian's gnome-cards-data (apt-get install gnome-cards-data)."
        )
    if shutil.which("rsvg-convert") is None:
        raise DeckArtError("rsvg-convert not found; install librsvg2-bin (apt-get install librsvg2-bin)")
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{deck}-", dir=out.parent))
    try:
        sheet = _render_sheet(svgz, tmp, width * _COLUMNS)
        for c in DECK:
            _write_face(sheet, _SUIT_ROWS[c.suit], _RANK_COLUMNS[c.rank], tmp / f"{c}.png", f"{deck} {c}")
        _write_face(sheet, 4, 2, tmp / "back.png", f"{deck} back")
        try:
            tmp.rename(out)
        except OSError:  # another worker won the race, or a partial old dir exists
            if not (out / "back.png").is_file():
                shutil.rmtree(out, ignore_errors=True)
                tmp.rename(out)
    finally:
        if tmp.exists():
            shutil.rmtree(tmp, ignore_errors=True)
    return out


# -- tuning variants: other index layouts made from tuning decks -------------------------------------
#
# The held-out designs include decks whose index sits at the top right and bottom left, or at one
# corner only.  To develop for such layouts without looking at them, tuning decks are changed into
# such designs: ``anglo+mirror`` is anglo mirrored left to right (its indices at the top right and
# bottom left), ``anglo+onecorner`` has its bottom-right index painted out with the card's paper
# colour (an index at the top left only); ``anglo+onecorner+mirror`` has it at the top right only;
# ``anglo+rankaway`` prints each index's rank at the middle of its end, the suit sign alone in the corner.


def mirrored(face: np.ndarray) -> np.ndarray:
    """The face mirrored left to right: the top-left index moves to the top right, the bottom-right
    one to the bottom left."""
    out: np.ndarray = cv2.flip(face, 1)
    return out


def one_corner(face: np.ndarray) -> np.ndarray:
    """The face with its bottom-right index painted out in the card's paper colour (the box the
    detector's corner window covers, turned round, less a thin margin that keeps the card's edge)."""
    out = face.copy()
    h, w = face.shape[:2]
    paper = _paper_colour(face)
    x0, x1 = round(w * (1 - 0.29)), round(w * (1 - 0.02))
    y0, y1 = round(h - 0.62 * w), round(h - 0.02 * w)
    out[y0:y1, x0:x1, :3] = paper
    if out.shape[2] == 4:
        out[y0:y1, x0:x1, 3] = 255
    return out


def _paper_colour(face: np.ndarray) -> np.ndarray:
    """The card's paper: the median colour of a ring just inside its edge (opaque pixels only)."""
    h, w = face.shape[:2]
    m = max(2, round(0.04 * w))
    ring = np.concatenate([face[m : m + 2, m : w - m].reshape(-1, face.shape[2]),
                           face[h - m - 2 : h - m, m : w - m].reshape(-1, face.shape[2])])
    if face.shape[2] == 4:
        ring = ring[ring[:, 3] > 200]
    paper: np.ndarray = np.median(ring[:, :3], axis=0).astype(face.dtype)
    return paper


def rank_away(face: np.ndarray) -> np.ndarray:
    """The face with the rank of each index moved away from its corner to the middle of that end (as some
    antique and decorative decks print it): the corner keeps the suit sign alone, the same on every card
    of a suit, so the corner tells the suit and the rest of the card the rank.  Fitted to the Aisleriot
    decks' and the plain deck's index (the rank in the top 0.26 widths of the corner, 0.22 widths across)."""
    out = face.copy()
    paper = _paper_colour(face)
    for _end in range(2):
        w = out.shape[1]
        y0, y1, x0, x1 = round(0.03 * w), round(0.26 * w), round(0.01 * w), round(0.22 * w)
        rank = out[y0:y1, x0:x1].copy()
        out[y0:y1, x0:x1, :3] = paper
        cx = round(0.5 * w - (x1 - x0) / 2)
        ink = (rank[:, :, :3].astype(np.int16) - paper.astype(np.int16)).__abs__().max(axis=2) > 40
        middle = out[y0:y1, cx : cx + (x1 - x0)]
        middle[ink] = rank[ink]
        out = cv2.rotate(out, cv2.ROTATE_180)
    return out


VARIANTS = {"mirror": mirrored, "onecorner": one_corner, "rankaway": rank_away}


def _variant_dir(deck: str, width: int, out: Path) -> Path:
    """Faces of ``BASE+VARIANT[+VARIANT]``: the base deck's faces changed by each variant in turn."""
    base, *names = deck.split("+")
    unknown = [n for n in names if n not in VARIANTS]
    if unknown or not names:
        raise DeckArtError(f"deck variant {deck!r}: unknown variant {', '.join(unknown) or '(none)'}; "
                           f"known: {', '.join(VARIANTS)}")
    if (out / "back.png").is_file() and all((out / f"{c}.png").is_file() for c in DECK):
        return out
    src = face_dir(base, width)
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{deck}-", dir=out.parent))
    try:
        for c in DECK:
            img = _read(src / f"{c}.png")
            for n in names:
                img = VARIANTS[n](img)
            cv2.imwrite(str(tmp / f"{c}.png"), img)
        back = _read(src / "back.png")
        cv2.imwrite(str(tmp / "back.png"), mirrored(back) if "mirror" in names else back)
        try:
            tmp.rename(out)
        except OSError:
            if not (out / "back.png").is_file():
                shutil.rmtree(out, ignore_errors=True)
                tmp.rename(out)
    finally:
        if tmp.exists():
            shutil.rmtree(tmp, ignore_errors=True)
    return out


def _read(path: Path) -> np.ndarray:
    img = cv2.imread(str(path), cv2.IMREAD_UNCHANGED)
    if img is None:
        raise DeckArtError(f"{path} is not a readable image")
    out: np.ndarray = img
    return out
