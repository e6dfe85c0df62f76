"""A calibration without markers: the card scale estimated from the cards in the picture.

``studtable vision detect --deck DECKFILE IMAGE`` is a contract other tools use on any
picture of cards, with or without the printed layout.  Without its ArUco markers there is
no homography to the table, but the detector needs only one thing from it to read cards:
how many pixels a card is.  Cards have one known size and shape (the deck's aspect), so
the picture says it: every blob that is one card lying flat is a rectangle of the deck's
aspect, whose long side is a card height; every row of overlapping cards or down cards
side by side is a longer rectangle whose short side is a card height.  The median of
those heights sets a scale; the picture is then taken as a top view at that scale (the
whole picture as felt, no seats, no markers).

A photograph taken from a chair is not a top view: 30 degrees off straight down, near cards are
half as big again as far ones and every card is squashed along the line of sight, past what the
detector reads.  The picture is then also read through cameras turned off straight down
(:mod:`vision.camera_tilt`, :func:`search_tilt`), from the turn that squares the cards' corners
(:mod:`vision.right_angles`), and the one it reads best through is kept.

A picture in which every card touches another (hands tabled at a showdown: fans, heaps, cards
spread edge to edge) has no such blob.  Its cards still say their scale through what the
detector reads: at the right card height it reads many cards surely, a tenth off it reads few or
none (:func:`calibrate_by_reading`).  That costs a dozen readings of the picture, and the search
for the camera's turn about as many (seconds each): fine for the one-off command, never for a
camera's frames, which have the layout's markers.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable

import cv2
import numpy as np

from vision.calibration import Calibration, CalibrationError
from vision.camera_tilt import PHONE_FOCAL, camera_tilt, most_tilt, tilt_for_gradient
from vision.deck import DeckModel
from vision.detect import Detection, Detector
from vision.detect.foreground import FeltSegmenter
from vision.layout import CARD_WIDTH_MM, TableLayout
from vision.right_angles import outline_corners, turn_from_corners


def picture_layout(width_mm: float, height_mm: float, card_width_mm: float = CARD_WIDTH_MM) -> TableLayout:
    """A layout that is all felt over a picture ``width_mm`` x ``height_mm`` centred on the origin."""
    # The felt ellipse circumscribes the picture's rectangle (so every pixel is felt); no rail to speak of.
    return TableLayout(felt_a=width_mm / 2 * 1.4143, felt_b=height_mm / 2 * 1.4143, rail_mm=0.01, seats={},
                       dealer=[(0.0, 0.0), (0.0, 0.0), (0.0, 0.0), (0.0, 0.0)], markers={},
                       card_width_mm=card_width_mm, extras={"picture": True})


def top_view(size: tuple[int, int], px_per_mm: float, card_width_mm: float = CARD_WIDTH_MM) -> Calibration:
    """The picture as a top view at ``px_per_mm``, the origin at its centre."""
    w, h = size
    s = 1.0 / px_per_mm
    hmat = np.array([[s, 0.0, -w / 2 * s], [0.0, s, -h / 2 * s], [0.0, 0.0, 1.0]])
    return Calibration(picture_layout(w * s, h * s, card_width_mm), hmat, (w, h))


def card_heights(image: np.ndarray, aspect: float) -> list[tuple[float, float, list[float]]]:
    """(x, y, what its card height may be) in pixels, for every blob that may be one card or one row.

    One card: the height of a card of the blob's area, ``sqrt(short * long * aspect)`` (a tilted
    camera stretches a card one way and shrinks it the other; its area keeps the scale).  A row of
    cards (or down cards side by side): its short side.  A blob of a card's shape and a little long
    may be either.
    """
    h, w = image.shape[:2]
    seg = FeltSegmenter(top_view((w, h), 1.0))
    out: list[tuple[float, float, list[float]]] = []
    min_area = 2e-4 * w * h / 4  # half-size pixels
    for cnt in seg.contours(image):
        area = cv2.contourArea(cnt)
        if area < min_area or area > 0.25 * w * h / 4:  # no card fills a quarter of the picture (blank paper)
            continue
        ((cx, cy), (rw, rh), _a) = cv2.minAreaRect(cnt)
        short, long_ = sorted((2 * float(rw), 2 * float(rh)))
        if short < SMALLEST_CARD_PX / 2 or area / (rw * rh) < 0.8:
            continue
        ratio = long_ / short
        options = []
        if 0.75 * aspect <= ratio <= 1.35 * aspect:
            options.append(float(np.sqrt(short * long_ * aspect)))
        if 1.1 * aspect <= ratio <= 6.0:
            options.append(short)
        if options:
            out.append((2 * float(cx), 2 * float(cy), options))
    return out


def fit_scale(samples: list[tuple[float, float, list[float]]], size: tuple[int, int], tol: float = 0.1) -> np.ndarray:
    """Card height in pixels over the picture, ``a + b x + c y`` (x, y from the picture's centre).

    A tilted camera sees near cards bigger, to first order linearly across the picture.  The plane
    is the one most blobs agree with, each by the reading of it that fits best (a consensus over
    planes through three blobs, then least squares over those within ``tol``); a blob that fits no
    reading (a half-turned card, two rows touching) has no say.  Fewer than six blobs: one scale.
    """
    w, h = size
    pts = [(x - w / 2, y - h / 2, v) for x, y, opts in samples for v in opts]
    blob = np.array([i for i, (_x, _y, opts) in enumerate(samples) for _ in opts])
    xyv = np.array(pts, np.float64)
    design = np.column_stack([np.ones(len(xyv)), xyv[:, 0], xyv[:, 1]])

    def agreeing(coef: np.ndarray) -> np.ndarray:
        """Per reading, whether it is its blob's best and within tol of the plane."""
        pred = design @ coef
        err = np.abs(xyv[:, 2] / np.maximum(pred, 1e-6) - 1)
        best = np.full(len(samples), np.inf)
        np.minimum.at(best, blob, err)
        ok: np.ndarray = (err <= tol) & (err == best[blob])
        return ok

    flat = [np.array([v, 0.0, 0.0]) for v in xyv[:, 2]]
    trials = flat
    if len(samples) >= 6:
        rng = np.random.default_rng(0)
        for _ in range(300):
            pick = rng.choice(len(xyv), 3, replace=False)
            if len(set(blob[pick].tolist())) < 3:
                continue
            coef, *_ = np.linalg.lstsq(design[pick], xyv[pick, 2], rcond=None)
            trials.append(coef)
    coef = max(trials, key=lambda c: (int(agreeing(c).sum()), -float(np.abs(c[1:]).sum())))
    for _ in range(3):
        ok = agreeing(coef)
        if len(set(blob[ok].tolist())) < 6:
            coef = np.array([float(np.median(xyv[ok, 2])), 0.0, 0.0]) if ok.any() else coef
            break
        coef, *_ = np.linalg.lstsq(design[ok], xyv[ok, 2], rcond=None)
    fitted: np.ndarray = np.asarray(coef, np.float64)
    return fitted


def card_plane(image: np.ndarray, aspect: float) -> np.ndarray:
    """The card height over the picture its lone cards and rows give (:func:`fit_scale`)."""
    size = (image.shape[1], image.shape[0])
    samples = card_heights(image, aspect)
    if not samples:
        raise CalibrationError(
            "found no ArUco markers and no blob the size and shape of a card to estimate the card scale from; "
            "pass --calibration (from `studtable vision calibrate`)"
        )
    return fit_scale(samples, size)


def calibrate_from_cards(image: np.ndarray, aspect: float, card_width_mm: float = CARD_WIDTH_MM) -> Calibration:
    """A calibration at the card scale the picture shows (see the module docstring).

    With the card height ``a + b x + c y`` pixels (:func:`card_plane`), the homography
    ``[[s, 0, 0], [0, s, 0], [g, h, 1]]`` (image coordinates from the picture's centre,
    ``s = card_h_mm / a``, ``g = b / a``, ``h = c / a``) has that local scale to first
    order: the perspective of a camera tilted by a moderate angle.
    """
    return _plane_calibration((image.shape[1], image.shape[0]), card_plane(image, aspect), aspect, card_width_mm)


def _plane_calibration(size: tuple[int, int], coef: np.ndarray, aspect: float, card_width_mm: float) -> Calibration:
    a, b, c = coef
    card_h_mm = card_width_mm * aspect
    s = card_h_mm / a
    w, h = size
    centre = np.array([[1.0, 0.0, -w / 2], [0.0, 1.0, -h / 2], [0.0, 0.0, 1.0]])
    hmat = np.array([[s, 0.0, 0.0], [0.0, s, 0.0], [b / a, c / a, 1.0]]) @ centre
    return _over_picture(size, hmat, card_width_mm)


def _over_picture(size: tuple[int, int], hmat: np.ndarray, card_width_mm: float) -> Calibration:
    """The calibration ``hmat`` (picture to table mm) with a layout that is all felt under the picture."""
    w, h = size
    corners = cv2.perspectiveTransform(np.array([[[0, 0]], [[w, 0]], [[w, h]], [[0, h]]], np.float64), hmat).reshape(-1, 2)
    span = np.abs(corners).max(axis=0) * 2
    return Calibration(picture_layout(float(span[0]), float(span[1]), card_width_mm), hmat, size)


#: a picture whose card size changes by at least this share from its centre to its farthest corner says
#: a tilt (:func:`tilt_said`), where the search starts
TILT_CHANGE = 0.1


def camera_calibration(size: tuple[int, int], height_px: float, tilt_deg: float, near_deg: float, aspect: float,
                       card_width_mm: float = CARD_WIDTH_MM, focal: float = PHONE_FOCAL) -> Calibration:
    """The picture as a camera turned ``tilt_deg`` off straight down sees it, its near side at
    ``near_deg`` (:func:`vision.camera_tilt.camera_tilt`), a card at its centre ``height_px`` tall
    (as a card of that area lying square to the camera would be).  Unlike
    :func:`calibrate_from_cards`' first-order model, the cards are also stretched back along the
    line of sight."""
    m = camera_tilt(size, min(tilt_deg, most_tilt(size, near_deg, focal)), near_deg, focal)
    hmat = top_view(size, height_px / (card_width_mm * aspect), card_width_mm).image_to_table @ np.linalg.inv(m)
    return _over_picture(size, hmat, card_width_mm)


def tilt_said(size: tuple[int, int], coef: np.ndarray, focal: float = PHONE_FOCAL) -> tuple[float, float] | None:
    """(tilt_deg, near_deg) of the camera (:func:`camera_calibration`) whose card height is ``a + b x + c y``
    px to first order at the picture's centre (``coef``: a, b, c); None where the card size changes by
    less than :data:`TILT_CHANGE` across the picture."""
    a, b, c = (float(v) for v in coef)
    w, h = size
    gradient = np.array([b, c]) / a
    if a <= 0 or float(np.hypot(*gradient)) * math.hypot(w, h) / 2 < TILT_CHANGE:
        return None
    return tilt_for_gradient(size, gradient, focal)


#: where a picture's cards do not say how its camera is turned, this tilt is tried ...
SEARCH_TILT_DEG = 30.0
#: ... towards this many directions
SEARCH_DIRECTIONS = 4


#: from the turn the cards' right angles say (:mod:`vision.right_angles`: within about 6 degrees of tilt
#: and 10 of direction on rendered pictures), the tilt is tried this share either way (at least
#: :data:`LEAST_TILT_STEP_DEG`) and the direction this many degrees either way
SQUARE_TILT_STEP = 0.15
LEAST_TILT_STEP_DEG = 3.0
SQUARE_TURN_DEG = 10.0


def search_tilt(size: tuple[int, int], height_px: float, aspect: float, support: Callable[[Calibration], float],
                start: tuple[float, float] | None = None, squared: bool = False) -> tuple[float, Calibration]:
    """The camera turned off straight down (:func:`camera_calibration`) the picture reads best
    through (``support``), and how well.  From ``start`` (the tilt and direction the cards' sizes
    say), or else the best of :data:`SEARCH_TILT_DEG` towards :data:`SEARCH_DIRECTIONS` directions:
    its tilt a half more and a third less, its direction turned either way (by half the directions'
    step, then a quarter; from ``start`` by a sixteenth of a turn), its card height a twentieth either
    way, each step keeping the best of three.  A camera turned 30 degrees squashes a card at the
    centre by 13 % along the line of sight, past what the detector reads (about 8 %), so no flat view
    reads it well.  Few views on purpose: a search over three times as many (six directions, three
    card heights, two rounds of steps) read fewer cards right at 30 degrees (134 against 168 of 251,
    wrong 47 against 32): the more views, the likelier one whose wrong readings look sure wins.
    ``squared``: ``start`` is the turn the cards' right angles say (:mod:`vision.right_angles`), near
    already: its tilt :data:`SQUARE_TILT_STEP` either way, its direction :data:`SQUARE_TURN_DEG`, its
    card height a twentieth."""
    tried: dict[tuple[float, float, float], tuple[float, Calibration]] = {}

    def key(view: tuple[float, float, float]) -> tuple[float, float, float]:
        return round(view[0], 2), round(view[1] % 360.0, 2), round(view[2], 2)

    def at(view: tuple[float, float, float]) -> float:
        k = key(view)
        if k not in tried:
            calib = camera_calibration(size, k[2], k[0], k[1], aspect)
            tried[k] = (support(calib), calib)
        return tried[k][0]

    step = 360.0 / SEARCH_DIRECTIONS
    if start is not None and squared:  # the corners' turn: near already, finer steps
        tilt, near, height = (*start, height_px)
        dt = max(LEAST_TILT_STEP_DEG, SQUARE_TILT_STEP * tilt)
        tilt, near, height = max([(tilt, near, height), (tilt + dt, near, height), (max(tilt - dt, 0.0), near, height)],
                                 key=at)
        tilt, near, height = max([(tilt, near, height), (tilt, near - SQUARE_TURN_DEG, height),
                                  (tilt, near + SQUARE_TURN_DEG, height)], key=at)
        best = max([(tilt, near, height), (tilt, near, height * 1.05), (tilt, near, height / 1.05)], key=at)
        return tried[key(best)]
    if start is not None:
        turns = [step / 4]
        tilt, near, height = (*start, height_px)
    else:
        turns = [step / 2, step / 4]
        tilt, near, height = max([(SEARCH_TILT_DEG, k * step, height_px) for k in range(SEARCH_DIRECTIONS)], key=at)
    tilt, near, height = max([(tilt, near, height), (tilt * 1.5, near, height), (tilt / 1.5, near, height)], key=at)
    for turn in turns:
        tilt, near, height = max([(tilt, near, height), (tilt, near - turn, height), (tilt, near + turn, height)], key=at)
    best = max([(tilt, near, height), (tilt, near, height * 1.05), (tilt, near, height / 1.05)], key=at)
    return tried[key(best)]


def card_samples(readings: list[tuple[float, dict[str, tuple[float, np.ndarray]]]]) -> list[tuple[float, float, list[float]]]:
    """(x, y, [card height]) per card read surely through any of ``readings`` (card height px, and each
    card read surely there: its score and centre): where it lies, and the height it reads at (the
    geometric mean of those it was read surely at, weighted by how much better than sure it read)."""
    by_card: dict[str, list[tuple[float, float, np.ndarray]]] = {}
    for height, read in readings:
        for card, (score, centre) in read.items():
            by_card.setdefault(card, []).append((height, score, centre))
    out = []
    for seen in by_card.values():
        wts = np.array([score - SURE_READING + 0.01 for _h, score, _c in seen])
        logh = np.log([hh for hh, _s, _c in seen])
        x, y = np.mean([c for _h, _s, c in seen], axis=0)
        out.append((float(x), float(y), [float(np.exp(np.average(logh, weights=wts)))]))
    return out


#: a card read at least this well counts towards a card scale (:func:`calibrate_picture`)
SURE_READING = 0.9
#: ... and the scale from lone cards and rows is kept when at least this many distinct cards read so
SURE_CARDS = 3
#: the card heights tried by :func:`calibrate_by_reading` are this factor apart (the detector reads
#: a card whose size is within about 8 % of what the calibration says; measured on anglo pictures of
#: fans and heaps: sure readings at 133 and 147 px, none at 120 or 163)
READING_STEP = 1.1
#: a blob holds at most this many cards' area (a heap of seven; a fan covers less): the smallest
#: card height tried is that of a card this many times smaller than the biggest blob
MOST_CARDS_IN_A_BLOB = 12
#: no card is read under this height in pixels (its index corner would be a few pixels)
SMALLEST_CARD_PX = 40.0


def reading_heights(image: np.ndarray, aspect: float) -> np.ndarray:
    """Card heights in pixels worth trying on ``image``: from what its biggest blob allows (it holds
    at least one whole card and at most :data:`MOST_CARDS_IN_A_BLOB`), :data:`READING_STEP` apart;
    empty if nothing in the picture is big enough to be a card."""
    h, w = image.shape[:2]
    seg = FeltSegmenter(top_view((w, h), 1.0))
    areas = [4 * cv2.contourArea(c) for c in seg.contours(image)]  # (full-size pixels)
    areas = [a for a in areas if a <= 0.25 * w * h]
    if not areas:
        return np.zeros(0)
    biggest = max(areas)
    top = 1.05 * float(np.sqrt(biggest * aspect))  # a card's area is height ** 2 / aspect
    low = max(SMALLEST_CARD_PX, float(np.sqrt(biggest / MOST_CARDS_IN_A_BLOB * aspect)))
    if top < low:
        return np.zeros(0)
    n = int(np.floor(np.log(top / low) / np.log(READING_STEP))) + 1
    return low * READING_STEP ** np.arange(n)


def best_height(heights: np.ndarray, view: Callable[[float], Calibration],
                support: Callable[[Calibration], float]) -> tuple[float, float]:
    """The card height (px) the picture reads best at through ``view(height)``, and how well: the best
    of ``heights`` (:data:`READING_STEP` apart), then its neighbours half a step either side, then a
    quarter."""
    tried: dict[float, float] = {}

    def at(height: float) -> float:
        if height not in tried:
            tried[height] = support(view(height))
        return tried[height]

    best = max(heights.tolist(), key=at)
    for finer in (0.5, 0.25):
        f = READING_STEP**finer
        best = max((best / f, best, best * f), key=at)
    return best, tried[best]


def calibrate_by_reading(image: np.ndarray, aspect: float, support: Callable[[Calibration], float],
                         card_width_mm: float = CARD_WIDTH_MM, first: Calibration | None = None) -> Calibration:
    """The picture as a top view at the card height the detector reads it best at.

    ``support(calib)`` reads the picture through ``calib`` and says how surely it read cards there
    (:func:`calibrate_picture`: the sum of the scores of the distinct cards read surely).  Each of
    :func:`reading_heights` is tried, then the best
    one's neighbours half a step either side, then a quarter;
    ``first`` (the estimate from lone cards and rows, which also models a tilt) is kept unless a
    height reads better.
    """
    size = (image.shape[1], image.shape[0])
    card_h_mm = card_width_mm * aspect
    heights = reading_heights(image, aspect)
    first_support = support(first) if first is not None else 0.0
    if not len(heights):
        if first is not None:
            return first
        raise CalibrationError(
            "found no ArUco markers and nothing the size of a card in the picture to estimate the card scale "
            "from; pass --calibration (from `studtable vision calibrate`)"
        )
    best, score = best_height(heights, lambda height: top_view(size, height / card_h_mm, card_width_mm), support)
    if first is not None and first_support >= score:
        return first
    if score <= 0:
        raise CalibrationError(
            f"found no ArUco markers, no blob the shape of one card or one row, and no card read at any "
            f"card height from {heights[0]:.0f} to {heights[-1]:.0f} px; pass --calibration "
            "(from `studtable vision calibrate`)"
        )
    return top_view(size, best / card_h_mm, card_width_mm)


#: a picture whose longer side is over this many pixels (a phone's 12 MP photograph: 4000) is read on a
#: copy scaled down to it (:func:`read_picture`): the side the reading was measured at
#: (:mod:`vision.scene_picture`: a hand's card 76-113 px wide; a 12 MP photograph of a few hands has cards
#: two to three times that).  Its three dozen readings for the scale and the turn cost its pixels each
#: (pictures scaled up 2.5 times: 15.9 -> 8.1 s a tuning picture, 18.5 -> 9.6 s held out), and read at its
#: own size the tuning pictures lost cards (90.8 % of the cards whose index shows, 96.0 % on the copy;
#: held out 80.9 % either way)
PICTURE_READ_SIDE = 1600
#: ... unless the copy's cards come out shorter than this (px, at the picture's centre): then it is made
#: again with cards :data:`COPY_CARD_PX` tall (the middle of the 106-158 px of the bench's pictures), or
#: the picture read at its own size (a wide shot: a 1600 x 1200 picture of 19 cards with felt either side,
#: 6400 px wide, read 8 cards, 7 of them right, on a copy 1600 px wide; 12 right so)
LEAST_COPY_CARD_PX = 80.0
COPY_CARD_PX = 130.0


def read_picture(image: np.ndarray, model: DeckModel, at_showdown: bool | None = None) -> list[Detection]:
    """The cards of a picture without the layout's markers (:func:`calibrate_picture`), a picture bigger
    than :data:`PICTURE_READ_SIDE` read on a copy scaled down to it (made again bigger where its cards
    come out under :data:`LEAST_COPY_CARD_PX`), its cards' corners carried back to the picture's own
    pixels (their table millimetres are the copy's: one table)."""
    h, w = image.shape[:2]

    def copy(f: float) -> np.ndarray:
        return image if f >= 1.0 else \
            cv2.resize(image, (max(1, round(w * f)), max(1, round(h * f))), interpolation=cv2.INTER_AREA)

    f = min(1.0, PICTURE_READ_SIDE / max(w, h))
    small = copy(f)
    try:
        calib = calibrate_picture(small, model, at_showdown)
        card_px = calib.px_per_mm((0.0, 0.0)) * CARD_WIDTH_MM * model.aspect
    except CalibrationError:
        if small is image:
            raise
        card_px = 0.0
    if small is not image and card_px < LEAST_COPY_CARD_PX:
        # a wide shot (a whole table at 12 MP): the copy's cards too small to read well, or to read at all
        f = 1.0 if card_px <= 0 else min(1.0, f * COPY_CARD_PX / card_px)
        small = copy(f)
        calib = calibrate_picture(small, model, at_showdown)
    detector = Detector(model, calib)
    detector.at_showdown = at_showdown
    dets = detector.detect(small)
    if small is image:
        return dets
    back = np.array([w / small.shape[1], h / small.shape[0]])
    return [dataclasses.replace(d, corners=d.corners * back) for d in dets]


def calibrate_picture(image: np.ndarray, model: DeckModel, at_showdown: bool | None = None) -> Calibration:
    """A picture without the layout's markers.

    First the card scale its lone cards and rows give (:func:`calibrate_from_cards`), kept when the
    detector reads at least :data:`SURE_CARDS` distinct cards surely through it.  Otherwise (no lone
    card: hands fanned, heaped or spread edge to edge; or a blob that only looked like one: a spread
    taken for one card, the grain of a cloth for many small ones, session 23 measured both) the card
    height the detector reads best at (:func:`calibrate_by_reading`), the first estimate among them.
    Then the picture seen through cameras turned off straight down (:func:`search_tilt`): from the
    turn that squares the outline's corners where six or more are found (:mod:`vision.right_angles`,
    the card height read again through it first), else from the tilt the cards' sizes say where six
    or more say one (the lone cards' plane, or the heights each card read at); the best kept if it
    reads better than the flat view.
    """
    size = (image.shape[1], image.shape[0])
    card_h_mm = CARD_WIDTH_MM * model.aspect
    read_through: dict[int, tuple[Calibration, dict[str, tuple[float, np.ndarray]]]] = {}

    def sure(calib: Calibration) -> dict[str, tuple[float, np.ndarray]]:
        """The distinct cards read surely through ``calib``: each one's best score and its centre."""
        if id(calib) in read_through:
            return read_through[id(calib)][1]
        detector = Detector(model, calib)
        detector.at_showdown = at_showdown
        out: dict[str, tuple[float, np.ndarray]] = {}
        for d in detector.detect(image):
            if d.card is not None and d.score >= SURE_READING and d.score > out.get(d.card, (0.0, None))[0]:
                out[d.card] = (d.score, d.center)
        read_through[id(calib)] = (calib, out)  # (the calibration kept too: its id is not reused)
        return out

    def support(calib: Calibration) -> float:
        return sum(score for score, _c in sure(calib).values())

    blobs = card_heights(image, model.aspect)
    plane = fit_scale(blobs, size) if blobs else None
    first = _plane_calibration(size, plane, model.aspect, CARD_WIDTH_MM) if plane is not None else None
    said = len(blobs) >= 6  # (enough lone cards and rows to say how the card height changes)
    if first is not None and len(sure(first)) >= SURE_CARDS:
        chosen = first
    else:
        chosen = calibrate_by_reading(image, model.aspect, support, first=first)
        if chosen is not first:  # the heights each card read at, across the flat views tried
            flat = [(c.px_per_mm((0.0, 0.0)) * card_h_mm, read) for c, read in read_through.values()
                    if not c.image_to_table[2, :2].any()]
            samples = card_samples(flat)
            said = len(samples) >= 6
            plane = fit_scale(samples, size) if said else None
    # Searched whatever the sizes say: hands near the middle of a picture taken 30 degrees off differ in
    # size by less than the blobs' own noise, and are still squashed past reading.
    turn = turn_from_corners(outline_corners(FeltSegmenter(top_view(size, 1.0)).foreground(image)), size)
    start = tilt_said(size, plane) if plane is not None and said else None
    # (the height at the centre: the cards' own where they said a tilt, else the one read best at)
    height = float(plane[0]) if start is not None and plane is not None else chosen.px_per_mm((0.0, 0.0)) * card_h_mm
    if turn is not None:  # the cards' right angles say the turn better than their sizes
        start = (turn.tilt_deg, turn.near_deg)
        # the flat views read best at the far cards' height or a squashed card's (30 degrees off: 15 to
        # 25 % short of the card at the centre), so the height is read again through the turn
        height, _score = best_height(height * READING_STEP ** np.arange(-2.0, 5.0),
                                     lambda h: camera_calibration(size, h, *start, model.aspect), support)
    score, searched = search_tilt(size, height, model.aspect, support, start, squared=turn is not None)
    return searched if score > support(chosen) else chosen
