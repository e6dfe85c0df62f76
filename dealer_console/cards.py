"""Card pictures for the console and the monitor: real deck art with a jumbo index.

Why: players read the monitor from across the table and the dealer glances at
the console, and a standard card's corner index is a few millimetres high.
Cardrooms solve this with jumbo-index cards; we do the same to the real art:
each face is drawn from Debian's Aisleriot decks (rasterised by
``vision.deckart``, which renders the SVG sheets correctly with rsvg-convert;
QtSvg mis-draws these sheets' masks) and a large rank and suit are painted
over its top-left corner.  When the art or its renderer is missing (a console
machine without the vision extra), a plain drawn card with the same jumbo
index is used, so the console always runs.
"""

from __future__ import annotations

import logging
from pathlib import Path

from PySide6.QtCore import QRectF, Qt
from PySide6.QtGui import QColor, QFont, QPainter, QPainterPath, QPen, QPixmap

from dealer_console import qtguard  # noqa: F401 - must run before heavy Qt use; see qtguard

log = logging.getLogger(__name__)

DEFAULT_DECK = "anglo"
ASPECT = 1.4  # height / width of a poker card (63 x 88 mm)
SUIT_SYMBOL = {"c": "♣", "d": "♦", "h": "♥", "s": "♠"}
SUIT_COLOUR = {"c": "#111111", "d": "#c8102e", "h": "#c8102e", "s": "#111111"}
RANK_TEXT = {"T": "10"}
SUIT_NAME = {"c": "clubs", "d": "diamonds", "h": "hearts", "s": "spades"}
RANK_NAME = {"A": "Ace", "K": "King", "Q": "Queen", "J": "Jack", "T": "Ten", "9": "Nine", "8": "Eight",
             "7": "Seven", "6": "Six", "5": "Five", "4": "Four", "3": "Three", "2": "Deuce"}


def card_name(code: str) -> str:
    """``Kh`` -> ``King of hearts`` (for tooltips and accessibility)."""
    if len(code) != 2 or code[0] not in RANK_NAME or code[1] not in SUIT_NAME:
        return code
    return f"{RANK_NAME[code[0]]} of {SUIT_NAME[code[1]]}"


def _art_dir(deck: str) -> Path | None:
    try:
        from vision.deckart import face_dir

        return face_dir(deck, 200)
    except Exception as exc:  # any failure means: draw cards ourselves
        log.info("card art for %r unavailable (%s); drawing plain cards", deck, exc)
        return None


class CardImages:
    """Card pixmaps by code and height, cached; ``None`` code means the back."""

    def __init__(self, deck: str | None = DEFAULT_DECK) -> None:
        self.deck = deck
        self._dir: Path | bool | None = False if deck else None  # False: not looked up yet
        self._cache: dict[tuple[str, int], QPixmap] = {}

    def _faces(self) -> Path | None:
        if self._dir is False:
            self._dir = _art_dir(self.deck) if self.deck else None
        return self._dir if isinstance(self._dir, Path) else None

    def pixmap(self, code: str | None, height: int) -> QPixmap:
        key = (code or "back", height)
        pm = self._cache.get(key)
        if pm is None:
            pm = self._render(code, height)
            self._cache[key] = pm
        return pm

    def _render(self, code: str | None, height: int) -> QPixmap:
        width = round(height / ASPECT)
        pm = QPixmap(width, height)
        pm.fill(Qt.GlobalColor.transparent)
        p = QPainter(pm)
        p.setRenderHint(QPainter.RenderHint.Antialiasing)
        p.setRenderHint(QPainter.RenderHint.SmoothPixmapTransform)
        radius = height * 0.06
        outline = QPainterPath()
        outline.addRoundedRect(QRectF(0.5, 0.5, width - 1, height - 1), radius, radius)
        p.setClipPath(outline)
        faces = self._faces()
        art = QPixmap(str(faces / f"{code or 'back'}.png")) if faces else QPixmap()
        if not art.isNull():
            p.drawPixmap(QRectF(0, 0, width, height), art, QRectF(art.rect()))
        elif code is None:
            p.fillRect(QRectF(0, 0, width, height), QColor("#1f4e9c"))
            p.setPen(QPen(QColor("#8fb3ec"), max(1.0, height / 60)))
            step = height / 10
            x = -float(height)
            while x < width:
                p.drawLine(QRectF(x, 0, height, height).topLeft(), QRectF(x, 0, height, height).bottomRight())
                p.drawLine(QRectF(x, 0, height, height).bottomLeft(), QRectF(x, 0, height, height).topRight())
                x += step
        else:
            p.fillRect(QRectF(0, 0, width, height), QColor("white"))
        if code is not None and len(code) == 2:
            self._jumbo_index(p, code, width, height)
        p.setClipping(False)
        p.setPen(QPen(QColor("#555555"), 1))
        p.setBrush(Qt.BrushStyle.NoBrush)
        p.drawPath(outline)
        p.end()
        return pm

    @staticmethod
    def _jumbo_index(p: QPainter, code: str, width: int, height: int) -> None:
        rank, suit = RANK_TEXT.get(code[0], code[0]), code[1]
        box = QRectF(0, 0, width * 0.58, height * 0.56)
        p.fillRect(box, QColor(255, 255, 255, 245))
        p.setPen(QColor(SUIT_COLOUR.get(suit, "#111111")))
        font = QFont("DejaVu Sans")
        font.setBold(True)
        font.setPixelSize(max(8, round(height * (0.28 if rank != "10" else 0.22))))
        if rank == "10":
            font.setLetterSpacing(QFont.SpacingType.PercentageSpacing, 88)
        p.setFont(font)
        p.drawText(QRectF(0, 0, box.width(), height * 0.3), Qt.AlignmentFlag.AlignCenter, rank)
        font.setPixelSize(max(8, round(height * 0.25)))
        font.setLetterSpacing(QFont.SpacingType.PercentageSpacing, 100)
        p.setFont(font)
        p.drawText(QRectF(0, height * 0.28, box.width(), height * 0.27), Qt.AlignmentFlag.AlignCenter,
                   SUIT_SYMBOL.get(suit, "?"))
