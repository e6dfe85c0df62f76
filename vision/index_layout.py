"""Which corners of a deck's faces carry an index, learned at enrollment.

Why: in a stud row each card is covered by the next, so only a strip along one long side
shows, and that strip holds two corners of the card: its top-left and bottom-left as the
row lies, or, for a card lying the other way round, its bottom-right and top-right.  Most
decks print the index at the top-left and bottom-right, so the top-left corner of the
visible strip always shows one.  A deck printed at the top-right and bottom-left shows it
at the strip's other corner (the bottom-left as the row lies); a deck printed at one corner
only shows it on half the cards of a row, and on the others no index is visible at all.

A corner carries an index when its windows tell the ranks apart: the 13 cards of a suit
show 13 different pictures there.  A corner with pips only shows the same pip on the 4
to the 10 and blank paper on the small cards, and a blank corner the same paper on all.

The detector reads the corner at the top of the visible strip (the card's own top-left
and, turned round, its bottom-right).  When the other pair (bottom-left, top-right) is the
one that carries the indices, enrollment learns the faces turned over top to bottom
(:func:`oriented`) and the detector turns every row it cuts out the same way
(:attr:`IndexLayout.flip`): the strip's bottom-left corner is then at its top.

Pure core: face images in, a layout out.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import NamedTuple

import cv2
import numpy as np

from engine.cards import DECK
from vision.corner import CARD_W, STRIP_H, STRIP_W, STRIP_X0, STRIP_Y0, channels

CORNERS = ("tl", "tr", "br", "bl")  # the card's own corners, upright
PIP_RANKS = "A23456789T"  # the cards whose corners show an index or pips (court cards' art differs anyway)
RANKS_MIN = 5.5  # distinct pictures among a suit's ten pip cards (mean over suits): an index shows 6-10, pips 1-4
RANKS_SHARE = 0.7  # ... and at least this share of the best corner's (a scanned deck's pips differ a little)
SAME = 0.97  # two corner windows whose difference from the deck's mean correlates this well are one picture
SHIFT = 2  # template px either way two cards' corners are compared at (scans lie a pixel or two apart)
BLANK = 3.0  # spread (0-255) of that difference under which a corner shows what every card shows there, ...
BLANK_SHARE = 0.2  # ... or under this share of the typical spread at the deck's most inked corner


class IndexLayout(NamedTuple):
    """Per corner (:data:`CORNERS` order) whether it carries an index, how distinct its windows are,
    and which pair of corners the detector reads (``flip``: the bottom-left and top-right)."""

    has: tuple[bool, bool, bool, bool]
    ranks: tuple[float, float, float, float]  # distinct pictures among each suit's ten pip cards, mean
    flip: bool

    @property
    def views(self) -> tuple[bool, bool]:
        """Whether the detector's two views of a card carry an index: the corner at the top of the
        visible strip for a card lying upright, and for one lying the other way round."""
        tl, tr, br, bl = self.has
        return (bl, tr) if self.flip else (tl, br)

    @property
    def index_corners(self) -> tuple[bool, bool, bool, bool]:
        """The corners (:data:`CORNERS` order) a card's index is read at: the diagonal pair the
        detector reads (top left and bottom right, or with ``flip`` the other two), less one whose
        windows do not tell the ranks apart.  Why not ``has`` itself: a corner of the other pair can
        tell the ranks apart by the pips or the art that reach it (swiss-xvii, joan-darc: a pip
        beside the top right), which is no index; the showdown bench counts an index as shown here."""
        tl, tr, br, bl = self.has
        return (False, tr, False, bl) if self.flip else (tl, False, br, False)

    def describe(self) -> str:
        named = [c for c, h in zip(CORNERS, self.has, strict=True) if h]
        return ("index at " + ", ".join(named) if named else "no corner index") + (" (read turned top to bottom)" if self.flip else "")


#: A deck file from before the layout was learned: the usual top-left and bottom-right.
STANDARD = IndexLayout((True, False, True, False), (10.0, 0.0, 10.0, 0.0), False)


def corner_windows(card: np.ndarray, corner: str) -> np.ndarray:
    """A canonical card's (BGR, CARD_W wide) window at ``corner``, brought to the top left (mirrored,
    not turned: only how distinct the windows are is measured), as channels."""
    flips = {"tl": None, "tr": 1, "bl": 0, "br": -1}[corner]
    view = card if flips is None else cv2.flip(card, flips)
    s = view[STRIP_Y0 : STRIP_Y0 + STRIP_H, STRIP_X0 : STRIP_X0 + STRIP_W]
    out: np.ndarray = cv2.GaussianBlur(channels(s), (0, 0), 1.0)
    return out


def distinct_ranks(windows: Sequence[np.ndarray], blank: float = BLANK) -> float:
    """How many different pictures a corner shows among the ten pip cards of a suit (A to 10), the
    mean over the suits; ``windows`` are the 52 cards' corner windows in engine order.

    What every card shows there (paper, a frame, where the suit sign sits) is taken off first;
    two cards show one picture when what is left of them correlates :data:`SAME` or better, or
    when little is left of either (a blank corner, a frame every card has)."""
    x = _residual(windows)
    energy = _energy(x)
    # A scanned deck's cards lie a pixel or two apart on their scans: compare each card's middle with
    # the other's at every shift within SHIFT px (the same pip, shifted, is still the same picture).
    s = SHIFT
    mid = x[:, s:-s, s:-s].reshape(len(x), -1)
    mid = mid / np.maximum(np.linalg.norm(mid, axis=1), 1e-9)[:, None]
    shifted = np.stack([x[:, s + dy : x.shape[1] - s + dy, s + dx : x.shape[2] - s + dx].reshape(len(x), -1)
                        for dy in range(-s, s + 1) for dx in range(-s, s + 1)], axis=1)  # (N, shifts, D)
    shifted = shifted / np.maximum(np.linalg.norm(shifted, axis=2), 1e-9)[:, :, None]
    counts = []
    for suit in "cdhs":
        idx = [i for i, c in enumerate(DECK) if c.suit == suit and c.rank in PIP_RANKS]
        parent = list(range(len(idx)))
        for a in range(len(idx)):
            for b in range(a + 1, len(idx)):
                i, j = idx[a], idx[b]
                blank_i, blank_j = energy[i] < blank, energy[j] < blank
                if (blank_i and blank_j) or (not blank_i and not blank_j and float((shifted[j] @ mid[i]).max()) >= SAME):
                    parent[_root(parent, a)] = _root(parent, b)
        counts.append(len({_root(parent, a) for a in range(len(idx))}))
    return float(np.mean(counts))


def _residual(windows: Sequence[np.ndarray]) -> np.ndarray:
    """The corner windows (N, h, w, 3) with each one's channel means and then the deck's mean window taken off."""
    x = np.stack([w.astype(np.float64) for w in windows])
    x = x - x.mean(axis=(1, 2), keepdims=True)
    out: np.ndarray = x - x.mean(axis=0, keepdims=True)
    return out


def _energy(x: np.ndarray) -> np.ndarray:
    """Each residual window's brightness spread (N,)."""
    out: np.ndarray = np.sqrt((x[..., 0] ** 2).reshape(len(x), -1).mean(axis=1))
    return out


def _root(parent: list[int], a: int) -> int:
    while parent[a] != a:
        a = parent[a]
    return a


def measure(cards: Sequence[np.ndarray]) -> IndexLayout:
    """The index layout of a deck from its 52 canonical faces (BGR, CARD_W wide, in the order of
    ``engine.cards.DECK``)."""
    if len(cards) != len(DECK) or cards[0].shape[1] != CARD_W:
        raise ValueError("measure() takes the 52 canonical cards in engine order")
    windows = [[corner_windows(c, k) for c in cards] for k in CORNERS]
    # blank: what is left of a corner is small against the inked corners' (a scan's noise is not ink)
    inked = max(float(np.median(_energy(_residual(w)))) for w in windows)
    r = [distinct_ranks(w, max(BLANK, BLANK_SHARE * inked)) for w in windows]
    best = max(r)
    has = [v >= RANKS_MIN and v >= RANKS_SHARE * best for v in r]
    if not any(has):
        # No corner tells the ranks apart by the measure: a deck is printed with an index somewhere
        # (a cardroom's is), and the measure is what failed, e.g. on a small rank printed beside a
        # large suit sign, whose windows differ little within a suit (x-pysol-kabale: 4.5 and 4.75 at
        # the top right and bottom left, 2.5 and 3.25 at the others).  Read the pair of opposite
        # corners that tells them apart better, as a deck printed at two corners (read no corner at
        # all and every covered card is read from its strip alone: 68 of 153 up cards).
        pair = (1, 3) if r[1] + r[3] > r[0] + r[2] else (0, 2)
        has = [k in pair for k in range(4)]
    tl, tr, br, bl = has
    flip = (bl + tr) > (tl + br)
    return IndexLayout((has[0], has[1], has[2], has[3]), (r[0], r[1], r[2], r[3]), bool(flip))


def oriented(faces: Mapping[str, np.ndarray], back: np.ndarray | None,
             layout: IndexLayout) -> tuple[dict[str, np.ndarray], np.ndarray | None]:
    """The faces as the detector's templates are learned from them: turned over top to bottom when
    the layout's indices are at the bottom-left and top-right (see the module's docstring)."""
    if not layout.flip:
        return dict(faces), back
    return {c: cv2.flip(f, 0) for c, f in faces.items()}, (None if back is None else cv2.flip(back, 0))


def to_array(layout: IndexLayout) -> np.ndarray:
    """For the deck file: (9,) float64: has x4, ranks x4, flip."""
    return np.array([*map(float, layout.has), *layout.ranks, float(layout.flip)])


def from_array(a: np.ndarray) -> IndexLayout:
    """The inverse of :func:`to_array`; raises ValueError naming what is wrong."""
    v = np.asarray(a, np.float64).ravel()
    if v.shape != (9,) or not np.isfinite(v).all() or not set(v[[0, 1, 2, 3, 8]].tolist()) <= {0.0, 1.0}:
        raise ValueError(f"index layout is not 4 corner flags, 4 rank counts and a flip flag: {v.tolist()}")
    h = tuple(bool(x) for x in v[:4])
    d = tuple(float(x) for x in v[4:8])
    return IndexLayout((h[0], h[1], h[2], h[3]), (d[0], d[1], d[2], d[3]), bool(v[8]))
