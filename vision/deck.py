"""Deck enrollment: what the recognizer learns from the 52 flat faces of the deck in use.

Why the index corner: in a stud row every card but the top one is covered
except for a strip at its left edge, and that strip holds the index (rank
above suit).  It is also the part every deck design agrees on, so one learned
template per card of that strip reads covered and uncovered cards alike.  A
card lying the other way round shows its bottom-right index in the same
place, rotated; we learn that view too (it differs on decks whose two
indices are not identical), so every card has two templates.

A template is the strip resampled to :data:`STRIP_W` x :data:`STRIP_H` pixels in
a canonical card :data:`CARD_W` pixels wide, blurred slightly, as three
channels (brightness and two colour-opponent channels, so four-colour decks and
red/black suits separate), zero-mean and unit-norm: matching is then one
matrix product, and a uniform change of light scales a vector without changing
its direction.

Pure core: images in, :class:`DeckModel` out.  ``load``/``save`` and the face
directory reader sit at the bottom as a thin edge.
"""

from __future__ import annotations

import io
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import NamedTuple

import cv2
import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

from engine.cards import DECK
from vision import classifier, discriminant, index_layout
from vision.classifier import Classifier
from vision.corner import CARD_W as CARD_W  # the corner's geometry, re-exported for the detector
from vision.corner import QUERY_BLUR as QUERY_BLUR
from vision.corner import STRIP_H as STRIP_H
from vision.corner import STRIP_W as STRIP_W
from vision.corner import STRIP_X0 as STRIP_X0
from vision.corner import STRIP_Y0 as STRIP_Y0
from vision.corner import channels as channels
from vision.window_match import window_stats

BLUR = 1.0
BACK = 52  # label of the back
THUMB = (12, 18)
AUGMENT = ((52, 0.5), (70, 0.25), (90, 0.5))  # (camera card width px, sub-pixel phase)
MODEL_VERSION = 5
READABLE_VERSIONS = (4, 5)  # version 4: no classifier (the detector then uses the discriminant alone)

CODES = [str(c) for c in DECK]


class EnrollmentError(ValueError):
    """The faces given cannot make a deck; the message names the file or card at fault."""


@dataclass(frozen=True)
class DeckModel:
    """Learned strip templates of one deck.

    ``templates`` is (N, D) float32, rows unit-norm; ``labels`` (N,) gives the card
    index 0..51 (engine order) or :data:`BACK`; ``images`` (N, STRIP_H, STRIP_W, 3)
    float32 are the same templates as images for the fine search.
    """

    name: str
    aspect: float  # card height / width
    labels: np.ndarray
    templates: np.ndarray
    images: np.ndarray
    has_back: bool
    mean: np.ndarray  # (STRIP_H, STRIP_W, 3) mean of the normalised face templates
    weight: np.ndarray  # (STRIP_H, STRIP_W, 1) where the faces differ (the index glyphs)
    back_thumbs: np.ndarray  # (2, D) the whole back, both ways round, as unit vectors (empty without a back)
    plain: np.ndarray  # (N, D) the templates normalised but not embedded (for the blank-window gate)
    variants: np.ndarray  # (N,) 0 for the two plain views of a card, k > 0 for camera-like resamplings
    #: (N, card_h, CARD_W, 3) float16: the whole card of each template (same view and resampling) as
    #: blurred channels, for reading the rest of a covered card's visible strip and a top card's face.
    cards: np.ndarray = field(default_factory=lambda: np.zeros((0, 1, CARD_W, 3), np.float16))
    #: the corner discriminant (:mod:`vision.discriminant`): plain corner vector @ lda_w + lda_b scores
    #: class 2*label (printed corner) and 2*label + 1 (opposite corner turned round); empty: not used.
    lda_w: np.ndarray = field(default_factory=lambda: np.zeros((0, 0), np.float32))
    lda_b: np.ndarray = field(default_factory=lambda: np.zeros(0, np.float32))
    lda_p: np.ndarray = field(default_factory=lambda: np.zeros((0, 0), np.float32))  # its precision matrix
    lda_m2: float = 0.0  # a corner's squared Mahalanobis distance to its own card, 99th percentile
    #: which corners of the faces carry an index (:mod:`vision.index_layout`); a deck file from before
    #: it was learned has the usual top-left and bottom-right
    layout: index_layout.IndexLayout = index_layout.STANDARD
    #: the corner classifier (:mod:`vision.classifier`), classes as the discriminant's; empty: not used
    clf: Classifier = field(default_factory=classifier.empty)

    @property
    def card_h(self) -> int:
        return round(CARD_W * self.aspect)

    def code(self, label: int) -> str | None:
        return None if label == BACK else CODES[label]

    def embed(self, windows: np.ndarray) -> np.ndarray:
        """(..., STRIP_H, STRIP_W, 3) channel windows -> (..., D) unit vectors for matching.

        Each window is normalised (light-invariant), the deck's average corner is
        subtracted (what all cards share: white paper, the common strokes) and
        what is left is weighted by where the cards differ, so two cards whose
        corners differ only in the rank glyph (a five and a six) are far apart.
        """
        return embed(windows, self.mean, self.weight)


def embed(windows: np.ndarray, mean: np.ndarray, weight: np.ndarray) -> np.ndarray:
    return embed2(windows, mean, weight)[1]


def embed2(windows: np.ndarray, mean: np.ndarray, weight: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(plain normalised windows, embedded windows), both flattened to (..., D).

    The plain form is kept as a gate: a blank window (white paper) embeds close
    to "minus the average corner" and would otherwise match the cards with the
    least ink (the deuces); its plain correlation with any corner is low.
    """
    return embed2_channel_major(_channel_major(windows), mean, weight, windows.shape[:-3])


def embed2_channel_major(x: np.ndarray, mean: np.ndarray, weight: np.ndarray,
                         n: tuple[int, ...] | None = None) -> tuple[np.ndarray, np.ndarray]:
    """:func:`embed2` of windows already laid out (N, c, h, w) float32 and contiguous; ``x`` is overwritten."""
    shape = n if n is not None else (len(x),)
    plain = plain_channel_major(x)
    return plain.reshape(*shape, -1), embed_plain(plain, mean, weight).reshape(*shape, -1)


def embed_plain(plain: np.ndarray, mean: np.ndarray, weight: np.ndarray) -> np.ndarray:
    """Plain windows (N, D), as :func:`plain_channel_major` or :func:`plain_windows` give them -> embedded (N, D).

    The deck's average corner is subtracted and the rest weighted by where the cards differ.
    """
    m, wt, _basis, _ = _pooled_statistics(mean, weight)
    pooled: np.ndarray = plain - m
    pooled *= wt
    pooled /= np.sqrt(np.einsum("nd,nd->n", pooled, pooled))[:, None] + 1e-6
    return pooled


def embedding_terms(mean: np.ndarray, weight: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The weight map in the pooled layout (D,) and the basis :func:`embed_raw` subtracts (4, D):
    a raw window ``x`` with channel means ``mu`` and spread ``s`` embeds as ``x * wt - [mu, s] @ basis``,
    normalised."""
    _m, wt, basis, _ = _pooled_statistics(mean, weight)
    return wt.ravel(), basis


def _pooled_statistics(mean: np.ndarray, weight: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, object]:
    """The deck's average corner and weight map in the pooled layout, (1, D) each, and the basis
    :func:`embed_raw` subtracts, (4, D) (computed once per deck and size)."""
    h, w, c = mean.shape
    key = (id(mean), id(weight), h, w)
    if key not in _POOLED:
        m = _pool_colour(np.moveaxis(mean.reshape(1, h, w, c), 3, 1).astype(np.float32))
        wt = _pool_colour(np.repeat(np.moveaxis(weight.reshape(1, h, w, -1), 3, 1), c, axis=1).astype(np.float32))
        npx = h * w
        ones = np.zeros((3, m.shape[1]), np.float32)  # what a unit mean of each channel adds to a window
        ones[0, :npx], ones[1, npx : npx + npx // 4], ones[2, npx + npx // 4 :] = 1.0, 2.0, 2.0
        basis = np.vstack([ones * wt, m * wt]).astype(np.float32)
        _POOLED[key] = (m, wt, basis, (mean, weight))  # mean and weight kept alive so their ids stay theirs
    return _POOLED[key]


def _channel_major(windows: np.ndarray) -> np.ndarray:
    """(..., h, w, c) -> (N, c, h, w) float32, one contiguous copy: every reduction then runs over contiguous memory."""
    h, w, c = windows.shape[-3:]
    return np.ascontiguousarray(np.moveaxis(windows.reshape(-1, h, w, c), 3, 1), dtype=np.float32)


def plain_channel_major(x: np.ndarray) -> np.ndarray:
    """Windows laid out (N, c, h, w), contiguous float32 -> (N, D): normalised (in place), colour pooled, not embedded."""
    x -= x.mean(axis=(2, 3), keepdims=True)
    x /= np.sqrt(np.einsum("nchw,nchw->n", x, x))[:, None, None, None] + 1e-6
    return _pool_colour(x)


class RawWindows(NamedTuple):
    """Windows gathered but not yet normalised: the pooled layout of the raw channels (K, D), and
    each window's per-channel mean (K, 3) and spread (K,) at full resolution (what normalising uses)."""

    x: np.ndarray
    mean: np.ndarray
    spread: np.ndarray

    def rows(self, k: np.ndarray | slice) -> RawWindows:
        return RawWindows(self.x[k], self.mean[k], self.spread[k])


def raw_windows(regions: list[np.ndarray]) -> RawWindows:
    """Every STRIP_H x STRIP_W window of equal-shaped channel images (H, W, 3) float32:
    window ``k`` of region ``n`` at ``n * dy * dx + k``, row-major over (dy, dx).

    Why not cut the windows out and normalise each: neighbouring windows share almost all
    their pixels.  Each window's brightness and 2x2 colour sums are gathered by index from
    the regions (the colour sums made once per region), and each window's per-channel mean
    and spread come from integral images (in float64): about half the work.
    """
    stack = np.stack(regions).astype(np.float32, copy=False)  # (N, Hr, Wr, 3)
    n, hr, wr, _ = stack.shape
    oy, ox = np.divmod(np.arange((hr - STRIP_H + 1) * (wr - STRIP_W + 1)), wr - STRIP_W + 1)
    rows = (np.arange(n)[:, None] * hr + oy[None, :]).ravel()
    # the regions stacked into one tall image: no window straddles two regions
    return WindowSource(stack.reshape(n * hr, wr, 3), STRIP_H, STRIP_W).windows(rows, np.tile(ox, n))


def raw_windows_at(image: np.ndarray, rows: np.ndarray, cols: np.ndarray, h: int, w: int) -> RawWindows:
    """The ``h`` x ``w`` windows of a channel image (R, C, 3) float32 whose top left corners are
    at ``rows``, ``cols``."""
    return WindowSource(image, h, w).windows(rows, cols)


class WindowSource:
    """A channel image (R, C, 3) float32 whose ``h`` x ``w`` windows are gathered many times (a
    frame's bands laid side by side): its 2x2 colour sums and integral images are made once.

    Each channel is kept as a plane of its own (``bright``, and the 2x2 sums of the two colour
    channels), which the compiled fine match (:mod:`vision.window_match`) reads directly and
    :meth:`windows` copies out through sliding-window views, a few runs of neighbouring floats
    per window (gathering by a flat index per value was 2.5 times slower).
    """

    def __init__(self, image: np.ndarray, h: int, w: int) -> None:
        self.shape = image.shape
        self.h, self.w = h, w
        pairs = _pairs(image)
        self.bright = np.ascontiguousarray(image[:, :, 0])
        self.colour1 = np.ascontiguousarray(pairs[:, :, 1])
        self.colour2 = np.ascontiguousarray(pairs[:, :, 2])
        hc, wc = 2 * (h // 2) - 1, 2 * (w // 2) - 1  # the colour samples: every other pixel
        self._views = (
            sliding_window_view(self.bright, (h, w)),
            sliding_window_view(self.colour1, (hc, wc))[:, :, ::2, ::2],
            sliding_window_view(self.colour2, (hc, wc))[:, :, ::2, ::2],
        )
        total, squares = cv2.integral2(image, sdepth=cv2.CV_64F, sqdepth=cv2.CV_64F)
        self._total, self._squares = total.reshape(*total.shape[:2], 3), squares.reshape(*squares.shape[:2], 3)

    def windows(self, rows: np.ndarray, cols: np.ndarray) -> RawWindows:
        """The windows whose top left corners are at ``rows``, ``cols`` (K,)."""
        k = len(rows)
        x = np.empty((k, sum(v.shape[2] * v.shape[3] for v in self._views)), np.float32)
        start = 0
        for view in self._views:
            n = view.shape[2] * view.shape[3]
            x[:, start : start + n] = view[rows, cols].reshape(k, n)
            start += n
        return RawWindows(x, *self.stats(rows, cols))

    def stats(self, rows: np.ndarray, cols: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Per-channel mean (K, 3) and spread (K,) of the windows at ``rows``, ``cols`` at full
        resolution (what normalising a window uses), from the integral images, in float64."""
        mu = np.empty((len(rows), 3))
        spread = np.empty(len(rows))
        window_stats(self._total, self._squares, rows, cols, self.h, self.w, mu, spread)
        return mu, spread


def plain_windows(regions: list[np.ndarray]) -> np.ndarray:
    """:func:`raw_windows` as :func:`plain_channel_major` makes them: (N * dy * dx, D)."""
    return centred(raw_windows(regions))


def centred(raw: RawWindows) -> np.ndarray:
    """Raw windows made zero-mean per channel and unit norm (as at full resolution), in place."""
    x, mu, spread = raw
    npx = x.shape[1] * 2 // 3  # brightness at full resolution, two colour channels at a quarter
    quarter = npx // 4
    x[:, :npx] -= mu[:, 0:1].astype(np.float32)
    x[:, npx : npx + quarter] -= (2 * mu[:, 1:2]).astype(np.float32)
    x[:, npx + quarter :] -= (2 * mu[:, 2:3]).astype(np.float32)
    x *= (1.0 / spread).astype(np.float32)[:, None]
    return x


def embed_raw(raw: RawWindows, mean: np.ndarray, weight: np.ndarray) -> np.ndarray:
    """Raw windows embedded (K, D): as :func:`embed_plain` of their :func:`centred` form, in one go.

    The embedding is normalised at the end, so the spread need not divide first:
    ((x - mean * E) / s - m) * w is parallel to (x - mean * E - s * m) * w, and the
    subtracted part is a combination of four fixed vectors.
    """
    _m, wt, basis, _ = _pooled_statistics(mean, weight)
    x, mu, spread = raw
    y: np.ndarray = x * wt
    y -= np.hstack([mu, spread[:, None]]).astype(np.float32) @ basis
    y /= (np.sqrt(np.einsum("nd,nd->n", y, y)) + 1e-6 * spread).astype(np.float32)[:, None]
    return y


def _pairs(image: np.ndarray) -> np.ndarray:
    """Each pixel's 2x2 block (it and the pixels right and below) summed and halved: the pooled
    layout holds twice each block's mean of the colour channels."""
    return cv2.filter2D(image, -1, _HALF_2X2, anchor=(0, 0), borderType=cv2.BORDER_REPLICATE)


_HALF_2X2 = np.full((2, 2), 0.5, np.float32)


_POOLED: dict[tuple[int, int, int, int], tuple[np.ndarray, np.ndarray, np.ndarray, tuple[np.ndarray, np.ndarray]]] = {}


def _pool_colour(x: np.ndarray) -> np.ndarray:
    """(N, 3, h, w) -> (N, D): brightness at full resolution, the two colour channels pooled 2x2.

    Colour only has to say red, black, green or blue; at half resolution it costs a
    quarter as much in every match (the whole fine match is dot products).
    """
    n, c, h, w = x.shape
    out = np.empty((n, h * w + (c - 1) * (h // 2) * (w // 2)), np.float32)
    out[:, : h * w] = x[:, 0].reshape(n, -1)
    # 2x2 sums as one area resize of the windows stacked into one tall image (no pair of rows
    # straddles two windows: h is even); brightness is pooled too and thrown away, which costs
    # less than copying the colour out first.  2.4 times faster than four strided adds.
    small = cv2.resize(np.ascontiguousarray(x, dtype=np.float32).reshape(n * c * h, w), (w // 2, n * c * h // 2),
                       interpolation=cv2.INTER_AREA).reshape(n, c, h // 2, w // 2)
    np.multiply(small[:, 1:].reshape(n, -1), 2.0, out=out[:, h * w :])
    return out


def _statistics(images: np.ndarray, labels: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Mean corner, and the weight map: where the faces' corners differ (the index glyphs, the pips)."""
    faces = normalize(images[labels != BACK])
    mean = faces.mean(axis=0)
    std = faces.std(axis=0).mean(axis=2)
    std = cv2.GaussianBlur(std, (0, 0), 1.0)
    weight = 0.15 + std / std.max()
    return mean.astype(np.float32), weight[:, :, None].astype(np.float32)


def canonical_card(face: np.ndarray, aspect: float) -> np.ndarray:
    """A flat face image (BGR or BGRA) resampled to the canonical card size, on white."""
    return cv2.resize(opaque(face), (CARD_W, round(CARD_W * aspect)), interpolation=cv2.INTER_AREA)


def opaque(face: np.ndarray) -> np.ndarray:
    """A face image (grey, BGR or BGRA) as BGR, transparent parts on white paper."""
    if face.ndim == 2:
        return cv2.cvtColor(face, cv2.COLOR_GRAY2BGR)
    if face.shape[2] == 4:
        alpha = cv2.cvtColor(face[:, :, 3], cv2.COLOR_GRAY2BGR).astype(np.float32) * np.float32(1 / 255)
        paper = np.full_like(alpha, 255.0)
        return cv2.convertScaleAbs(cv2.add(cv2.multiply(face[:, :, :3], alpha, dtype=cv2.CV_32F),
                                           cv2.multiply(paper, 1 - alpha, dtype=cv2.CV_32F)))
    return face


def resampled_card(face: np.ndarray, aspect: float, src_w: int, phase: float) -> np.ndarray:
    """The face as a camera with ``src_w`` pixels across the card would sample it, on the template grid."""
    if face.shape[1] < src_w:
        return canonical_card(face, aspect)
    face = opaque(face)
    cam = cv2.resize(face, (src_w, round(src_w * aspect)), interpolation=cv2.INTER_AREA)
    s = CARD_W / src_w
    m = np.array([[s, 0, phase * s], [0, s, phase * s]], np.float32)
    return cv2.warpAffine(cam, m, (CARD_W, round(CARD_W * aspect)), flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE)


def normalize(x: np.ndarray) -> np.ndarray:
    """Zero-mean per channel, unit norm over the last three axes (batched)."""
    x = x - x.mean(axis=(-3, -2), keepdims=True)
    n = np.sqrt((x * x).sum(axis=(-3, -2, -1), keepdims=True))
    unit: np.ndarray = x / np.maximum(n, 1e-6)
    return unit


def thumb(card: np.ndarray) -> np.ndarray:
    """A whole canonical card as a unit vector, for telling a back from a face."""
    small = cv2.resize(card, THUMB, interpolation=cv2.INTER_AREA)  # area averaging: the back's pattern cannot alias
    return normalize(channels(small)).ravel()


def card_channels(card: np.ndarray) -> np.ndarray:
    """A whole canonical card image (BGR) as blurred channels (the same treatment as :func:`strip_of`)."""
    return cv2.GaussianBlur(channels(card), (0, 0), BLUR)


def strip_of(card: np.ndarray) -> np.ndarray:
    """The index strip of a canonical card image (BGR), as blurred channel image."""
    s = card[STRIP_Y0 : STRIP_Y0 + STRIP_H, STRIP_X0 : STRIP_X0 + STRIP_W]
    return cv2.GaussianBlur(channels(s), (0, 0), BLUR)


def enroll(faces: Mapping[str, np.ndarray], back: np.ndarray | None = None, name: str = "deck",
           with_classifier: bool = True) -> DeckModel:
    """Learn a deck from its 52 flat faces (code -> image) and optionally its back.

    Faces must be the card itself (cropped to the card edge), upright, any size.
    ``with_classifier=False`` leaves the corner classifier out (about 3 s of CPU a deck instead of
    15; the detector then reads with the discriminant alone).
    """
    missing = [c for c in CODES if c not in faces]
    if missing:
        raise EnrollmentError(f"enrollment needs all 52 faces; missing {', '.join(missing)}")
    aspects = {c: faces[c].shape[0] / faces[c].shape[1] for c in CODES}
    aspect = float(np.median(list(aspects.values())))
    for c, a in aspects.items():
        if abs(a - aspect) > 0.08 * aspect:
            raise EnrollmentError(
                f"face {c} is {faces[c].shape[1]}x{faces[c].shape[0]} px, not the shape of the other faces "
                f"(height/width {a:.2f} vs {aspect:.2f}); crop every face to the card's edge"
            )
        if not 1.1 < a < 2.0:
            raise EnrollmentError(f"face {c} is not an upright card picture (height/width {a:.2f})")
    faces = {c: opaque(faces[c]) for c in CODES}  # once: every step below resamples them many times
    if back is not None:
        back = opaque(back)
    # Which corners carry the index; the templates are learned in the orientation the detector reads.
    layout = index_layout.measure([canonical_card(faces[c], aspect) for c in CODES])
    faces, back = index_layout.oriented(faces, back, layout)
    labels, imgs = [], []
    items: list[tuple[int, np.ndarray]] = [(i, faces[c]) for i, c in enumerate(CODES)]
    if back is not None:
        items.append((BACK, back))
    back_thumbs = np.zeros((0, THUMB[0] * THUMB[1] * 3), np.float32)
    if back is not None:
        bc = canonical_card(back, aspect)
        back_thumbs = np.stack([thumb(bc), thumb(cv2.rotate(bc, cv2.ROTATE_180))]).astype(np.float32)
    variants, wholes = [], []
    for label, img in items:
        card = canonical_card(img, aspect)
        for view in (card, cv2.rotate(card, cv2.ROTATE_180)):
            labels.append(label)
            imgs.append(strip_of(view))
            wholes.append(card_channels(view))
            variants.append(0)
    # Extra views of each card as a camera sees it: sampled by a coarser pixel grid at a
    # few card sizes and sub-pixel phases, then resampled to the template grid, so that
    # the match does not hinge on the sampling phase of a 7-pixel suit sign.
    for label, img in items:
        for k, (src_w, phase) in enumerate(AUGMENT, start=1):
            card = resampled_card(img, aspect, src_w, phase)
            for view in (card, cv2.rotate(card, cv2.ROTATE_180)):
                labels.append(label)
                imgs.append(strip_of(view))
                wholes.append(card_channels(view))
                variants.append(k)
    images = np.stack(imgs).astype(np.float32)
    lab = np.array(labels, np.int32)
    var = np.array(variants, np.int32)
    mean, weight = _statistics(images[var == 0], lab[var == 0])
    plain, flat = embed2(images, mean, weight)
    # The same picture under two names is a copying mistake: refuse the deck.  (Two cards whose
    # corners alone look alike, as some decks' kings do, are allowed: the whole top card decides.)
    pixels = np.stack([canonical_card(faces[c], aspect).astype(np.int16) for c in CODES]).reshape(len(CODES), -1)
    for a in range(len(CODES)):
        diff = np.abs(pixels[a + 1 :] - pixels[a]).mean(axis=1)
        if len(diff) and diff.min() < 0.05:  # only a copy is this close; some decks differ by the index alone
            b = a + 1 + int(diff.argmin())
            raise EnrollmentError(f"faces {CODES[a]} and {CODES[b]} are the same picture; is one file a copy of the other?")
    cards = np.stack(wholes).astype(np.float16)
    first = np.flatnonzero((var == 0) & (lab != BACK))  # the two plain views of each face, in label order
    lda_w, lda_b, lda_p, lda_m2 = discriminant.train([faces[c] for c in CODES], aspect, mean, weight, plain[first])
    clf = classifier.train([faces[c] for c in CODES], aspect, mean, weight, plain[first]) if with_classifier else classifier.empty()
    return DeckModel(
        name, aspect, lab, flat.astype(np.float32), images, back is not None, mean, weight, back_thumbs, plain, var, cards,
        lda_w, lda_b, lda_p, lda_m2, layout, clf,
    )


# -- edge: files ----------------------------------------------------------------------------


def read_face_dir(directory: Path) -> tuple[dict[str, np.ndarray], np.ndarray | None]:
    """Read ``As.png`` .. ``2c.png`` (+ optional ``back.png``) from ``directory``.

    Also accepts ``.jpg``; errors name every missing or unreadable file.
    """
    if not directory.is_dir():
        raise EnrollmentError(f"face directory {directory} does not exist")
    faces: dict[str, np.ndarray] = {}
    missing, unreadable = [], []
    for c in CODES:
        path = next((directory / f"{c}{ext}" for ext in (".png", ".jpg", ".jpeg") if (directory / f"{c}{ext}").is_file()), None)
        if path is None:
            missing.append(f"{c}.png")
            continue
        img = cv2.imread(str(path), cv2.IMREAD_UNCHANGED)
        if img is None:
            unreadable.append(path.name)
            continue
        faces[c] = img
    if missing or unreadable:
        parts = []
        if missing:
            parts.append(f"missing {', '.join(missing)}")
        if unreadable:
            parts.append(f"not readable as images: {', '.join(unreadable)}")
        raise EnrollmentError(
            f"enrollment directory {directory}: {'; '.join(parts)} "
            "(expected 52 faces named by card code, e.g. As.png, Td.png, 9c.png, and optionally back.png)"
        )
    back = None
    if (directory / "back.png").is_file():
        back = cv2.imread(str(directory / "back.png"), cv2.IMREAD_UNCHANGED)
        if back is None:
            raise EnrollmentError(f"{directory / 'back.png'} is not a readable image")
    return faces, back


def save(model: DeckModel, path: Path) -> None:
    buf = io.BytesIO()
    np.savez_compressed(
        buf, version=MODEL_VERSION, name=model.name, aspect=model.aspect, labels=model.labels,
        templates=model.templates, images=model.images, has_back=model.has_back, mean=model.mean, weight=model.weight,
        back_thumbs=model.back_thumbs, plain=model.plain, variants=model.variants, cards=model.cards, lda_w=model.lda_w, lda_b=model.lda_b,
        lda_p=model.lda_p, lda_m2=model.lda_m2, index_layout=index_layout.to_array(model.layout),
        **{f"clf_{k}": v for k, v in model.clf._asdict().items()},
        strip=np.array([CARD_W, STRIP_X0, STRIP_Y0, STRIP_W, STRIP_H]),
    )
    path.write_bytes(buf.getvalue())


def load(path: Path) -> DeckModel:
    if not path.is_file():
        raise EnrollmentError(f"deck file {path} does not exist; create it with 'studtable vision enroll'")
    try:
        z = np.load(path, allow_pickle=False)
        version = int(z["version"])
    except Exception as e:
        raise EnrollmentError(f"{path} is not a deck file written by 'studtable vision enroll' ({e})") from e
    if version not in READABLE_VERSIONS or list(z["strip"]) != [CARD_W, STRIP_X0, STRIP_Y0, STRIP_W, STRIP_H]:
        raise EnrollmentError(
            f"deck file {path} is version {version} (this studtable reads versions "
            f"{', '.join(map(str, READABLE_VERSIONS))}) or has another corner geometry; enroll the deck again")
    layout = index_layout.STANDARD  # a file from before the layout was learned
    if "index_layout" in z.files:
        try:
            layout = index_layout.from_array(z["index_layout"])
        except ValueError as e:
            raise EnrollmentError(f"deck file {path}: {e}; enroll the deck again") from e
    # version 4 has no corner classifier: the detector reads with the discriminant alone
    clf = Classifier(*(z[f"clf_{k}"] for k in Classifier._fields)) if version >= 5 else classifier.empty()
    return DeckModel(
        str(z["name"]), float(z["aspect"]), z["labels"], z["templates"], z["images"], bool(z["has_back"]), z["mean"], z["weight"],
        z["back_thumbs"], z["plain"], z["variants"], z["cards"], z["lda_w"], z["lda_b"], z["lda_p"], float(z["lda_m2"]), layout,
        clf,
    )
