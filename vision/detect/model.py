"""What the detector hands out (:class:`Detection`) and what it works on (:class:`Row`, :class:`Job`,
:class:`Key`, :class:`Reading`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import NamedTuple

import numpy as np


@dataclass
class Detection:
    card: str | None
    face_up: bool
    corners: np.ndarray  # (4, 2) image px
    table_corners: np.ndarray  # (4, 2) table mm
    score: float
    covered: bool = False  # another card lies on part of it
    half_turned: bool = False
    blob: int = -1
    order: int = 0  # position in its blob (a stud row) from the row's first card

    @property
    def center(self) -> np.ndarray:
        c: np.ndarray = self.corners.mean(axis=0)
        return c

    @property
    def table_center(self) -> tuple[float, float]:
        (x0, y0), (x1, y1), (x2, y2), (x3, y3) = self.table_corners.tolist()  # plain floats: once per card per frame
        return ((x0 + x1 + x2 + x3) / 4, (y0 + y1 + y2 + y3) / 4)

    def to_json(self) -> dict[str, object]:
        return {
            "card": self.card,
            "face_up": self.face_up,
            "center": [round(float(v), 1) for v in self.center],
            "corners": [[round(float(x), 1), round(float(y), 1)] for x, y in self.corners],
        }


@dataclass(eq=False)
class Row:
    """One blob read as a row of cards along ``ua`` (working state of ``Detector.detect``)."""

    blob: int
    origin: np.ndarray
    ua: np.ndarray
    uc: np.ndarray
    along: float
    length_px: int
    last: int
    bands: tuple[np.ndarray, np.ndarray]
    backness: float
    ambiguous: bool
    down: bool = False  # face-down cards: like the back, and more like it than like any face
    tops: tuple[np.ndarray, np.ndarray] = field(default=(np.zeros(0), np.zeros(0)))
    scans: list[np.ndarray] = field(default_factory=list)
    lscans: list[np.ndarray] = field(default_factory=list)
    positions: list[int] = field(default_factory=list)
    total: float = -np.inf
    way: int = 0
    top_median: tuple[np.ndarray, np.ndarray] = field(default=(np.zeros(0, np.int32), np.zeros(0, np.int32)))
    thumbs: list[np.ndarray] = field(default_factory=list)  # its ends at the back-thumbnail size
    crop: np.ndarray | None = None  # the row at the template scale (BGR), card height plus MARGIN above and below
    full: np.ndarray | None = None  # the crop as the chosen way reads it, pooled, as blurred channels
    ghosts: set[int] = field(default_factory=set)  # planned cards the card below explains (not cards)
    atlas_cols: tuple[int, int] = (0, 0)  # where its two bands start in the frame's band atlas
    #: a piece of a blob a hand was cut out of (FeltSegmenter.hand_cut), at its crop's start (0) or end (1):
    #: the hand lies against that end (unless the other end holds a whole top card, the row is read from
    #: its other end, every card as a covered one: RowStage._orient_and_plan); -1: no hand at either end
    open_end: int = -1


class Key(NamedTuple):
    """Which reading: card ``card`` of the row ``row`` (``id`` of its :class:`Row`) read ``way`` round.

    ``card`` is -1 for a row's far end (which way round is it?); ``trial`` numbers the
    other places tried for the same card (0: where the plan put it).
    """

    row: int
    way: int
    card: int
    trial: int = 0


class Job(NamedTuple):
    """One card to read with the fine match: its ``views`` (band way, position along the band;
    a top card has two) and the candidate labels ``cand``."""

    row: Row
    way: int
    card: int
    views: list[tuple[int, int]]
    cand: np.ndarray
    trial: int = 0

    @property
    def key(self) -> Key:
        return Key(id(self.row), self.way, self.card, self.trial)


class Reading(NamedTuple):
    """The fine match's reading of one card.

    ``label`` won with ``score`` (its corner match); ``cand`` are the candidates it was
    chosen from and ``total`` their scores; ``corner`` is where the match put the card's
    corner in the row's crop, per view; ``strip`` the winner's strip score (0 without the
    second look).
    """

    label: int
    score: float
    cand: np.ndarray
    total: np.ndarray
    corner: list[tuple[int, int]]
    strip: float = 0.0


Reads = dict[Key, Reading]
Opts = dict[Key, tuple[np.ndarray, np.ndarray]]  # re-ranked candidates: (labels, scores)


class Tables(NamedTuple):
    """Which templates the fine match scores a label with (rows: labels; entries: template numbers):
    ``primary`` for the shortlist, ``full`` for the match itself, each also as a covered card is
    matched (a deck printed at one corner: index views only)."""

    primary: np.ndarray
    covered_primary: np.ndarray
    full: np.ndarray
    covered_full: np.ndarray
