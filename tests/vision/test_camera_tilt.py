"""The camera model of a photograph taken off straight down (vision.camera_tilt): what it draws,
that the tilt it draws is the one the cards' sizes give back, and the markerless path's search
for it (vision.scale.search_tilt) on a stand-in for reading."""

from __future__ import annotations

import math
from collections.abc import Callable

import cv2
import numpy as np
import pytest

from vision.calibration import Calibration
from vision.camera_tilt import GRADIENT_TILT_DEG, camera_tilt, most_tilt, scale_gradient, tilt_for_gradient
from vision.detect.foreground import FeltSegmenter
from vision.scale import camera_calibration, card_samples, search_tilt

SIZE = (1600, 1200)
ASPECT = 88.0 / 63.0


def _square(m: np.ndarray, x: float, y: float, side: float = 20.0) -> np.ndarray:
    """The picture of a ``side`` px square of the top view centred at (x, y): its four corners."""
    pts = np.array([[x - side / 2, y - side / 2], [x + side / 2, y - side / 2], [x + side / 2, y + side / 2],
                    [x - side / 2, y + side / 2]], np.float64)
    out: np.ndarray = cv2.perspectiveTransform(pts.reshape(-1, 1, 2), m).reshape(-1, 2)
    return out


def test_a_camera_turned_off_straight_down_sees_near_cards_bigger_and_every_card_squashed() -> None:
    m = camera_tilt(SIZE, 30.0, 90.0)  # the near side at the bottom of the picture
    x0, y0 = cv2.perspectiveTransform(np.array([[[800.0, 600.0]]]), np.linalg.inv(m))[0, 0]
    assert x0 == pytest.approx(800) and y0 < 600  # the picture's centre sees the table beyond the point below
    centre = _square(m, x0, y0)
    width = np.linalg.norm(centre[1] - centre[0])
    height = np.linalg.norm(centre[3] - centre[0])
    assert width * height == pytest.approx(400.0, rel=0.01)  # a card there keeps its area
    assert height / width == pytest.approx(math.cos(math.radians(30)), abs=0.02)  # squashed along the line of sight
    near = np.linalg.norm(_square(m, x0, y0 + 300)[1] - _square(m, x0, y0 + 300)[0])
    far = np.linalg.norm(_square(m, x0, y0 - 300)[1] - _square(m, x0, y0 - 300)[0])
    assert near > 1.15 * far
    assert scale_gradient(m, SIZE)[1] > 0 and abs(scale_gradient(m, SIZE)[0]) < 1e-9
    assert np.allclose(camera_tilt(SIZE, 0.0, 37.0), np.eye(3), atol=1e-9)


@pytest.mark.parametrize(("tilt", "near"), [(10.0, 0.0), (30.0, 90.0), (25.0, -150.0), (45.0, 200.0), (50.0, 270.0)])
def test_the_tilt_is_what_the_change_of_the_cards_size_gives_back(tilt: float, near: float) -> None:
    got_tilt, got_near = tilt_for_gradient(SIZE, scale_gradient(camera_tilt(SIZE, tilt, near), SIZE))
    assert got_tilt == pytest.approx(tilt, abs=0.05)
    assert (got_near - near + 180.0) % 360.0 - 180.0 == pytest.approx(0.0, abs=0.05)


@pytest.mark.parametrize("near", [0.0, 35.0, 90.0, 200.0])
def test_no_tilt_is_modelled_past_the_horizon(near: float) -> None:
    """However fast the cards shrink, the camera found sees every corner of the picture on the table."""
    top = min(most_tilt(SIZE, near), GRADIENT_TILT_DEG)
    assert 0.0 < top <= GRADIENT_TILT_DEG
    a = math.radians(near)
    tilt, _ = tilt_for_gradient(SIZE, np.array([math.cos(a), math.sin(a)]) * 0.05)
    assert tilt == pytest.approx(top, abs=1e-6)
    to_table = np.linalg.inv(camera_tilt(SIZE, tilt, near))
    corners = np.array([[0, 0, 1], [SIZE[0], 0, 1], [SIZE[0], SIZE[1], 1], [0, SIZE[1], 1]], np.float64)
    assert (corners @ to_table[2]).min() > 0  # in front of the camera


def _support_near(truth: Calibration, reach: float = 0.08) -> Callable[[Calibration], float]:
    """A stand-in for reading the picture: a card reads where a calibration gives the table's shape
    there (a card's width, height and diagonal, wherever it lies and however turned: the picture has
    no layout) within ``reach`` of the truth, more the closer (the detector reads a card within about
    8 % of its size and shape); over a grid of places in the middle of the picture."""
    w, h = SIZE
    grid = np.array([[x, y] for x in np.linspace(0.3 * w, 0.7 * w, 5) for y in np.linspace(0.3 * h, 0.7 * h, 5)], np.float64)

    def shape(calib: Calibration) -> np.ndarray:
        at, across, down = (calib.to_table(grid + d) for d in ([0.0, 0.0], [60.0, 0.0], [0.0, 80.0]))
        lengths: np.ndarray = np.linalg.norm(np.stack([across - at, down - at, across - down]), axis=2)
        return lengths

    want = shape(truth)

    def support(calib: Calibration) -> float:
        err = np.abs(shape(calib) / want - 1).max(axis=0)
        return float(np.clip(1.0 - err / reach, 0.0, None).sum())

    return support


@pytest.mark.parametrize(("tilt", "near", "height"), [(30.0, 90.0, 140.0), (25.0, 200.0, 120.0), (28.0, -40.0, 160.0), (20.0, 10.0, 110.0)])
def test_the_search_finds_the_camera_a_picture_reads_best_through(tilt: float, near: float, height: float) -> None:
    """Started from the card height at the picture's centre, with no tilt said, the search ends on a
    camera that gives the middle of the picture's table its shape, better than the flat view does."""
    truth = camera_calibration(SIZE, height, tilt, near, ASPECT)
    support = _support_near(truth)
    score, found = search_tilt(SIZE, height, ASPECT, support)
    assert score == pytest.approx(support(found))
    assert score >= 0.3 * 25  # a fair share of the middle read (the steps are coarse: not all of it)
    assert score > support(camera_calibration(SIZE, height, 0.0, 0.0, ASPECT))  # better than the flat view


def test_a_card_reads_at_the_height_it_reads_surely_at() -> None:
    """Each card's height: the heights it read surely at, weighted by how much better than sure."""
    at = np.array([100.0, 200.0])
    samples = card_samples([(100.0, {"Ah": (0.99, at), "2c": (0.95, at + 10)}),
                            (110.0, {"Ah": (0.91, at + 2), "Kd": (0.97, at - 10)})])
    got = {round(x): v[0] for x, _y, v in samples}
    assert got[90] == pytest.approx(110.0)  # Kd, read at one height
    assert got[110] == pytest.approx(100.0)
    assert 100.0 < got[101] < 102.0  # Ah: mostly the height it read best at


@pytest.mark.parametrize("tilt", [0.0, 30.0, 45.0])
def test_a_picture_seen_through_a_turned_camera_is_all_felt(tilt: float) -> None:
    """The markerless layout's felt circumscribes the picture; drawn through a camera turned 30 degrees
    its ellipse reached past the horizon and came back inside out, and no card was ever seen through
    any turned camera (session 28's search read nothing at the right turn; found in session 29).  The
    cards are found through a turned camera as through the flat view."""
    img = np.full((SIZE[1], SIZE[0], 3), (60, 110, 60), np.uint8)  # green cloth
    cards = [(300, 300), (700, 500), (1200, 800), (400, 900)]
    for x, y in cards:
        cv2.rectangle(img, (x, y), (x + 90, y + 126), (235, 235, 235), cv2.FILLED)
    calib = camera_calibration(SIZE, 126.0, tilt, 120.0, ASPECT)
    mask = FeltSegmenter(calib).foreground(img)
    flat = FeltSegmenter(camera_calibration(SIZE, 126.0, 0.0, 0.0, ASPECT)).foreground(img)
    assert np.array_equal(mask, flat)
    for x, y in cards:
        assert mask[(y + 63) // 2, (x + 45) // 2] == 255
    assert mask[50, 50] == 0


@pytest.mark.parametrize(("tilt", "near", "height"), [(30.0, 90.0, 140.0), (25.0, 200.0, 120.0), (40.0, 10.0, 110.0)])
def test_from_the_corners_turn_the_search_steps_finely(tilt: float, near: float, height: float) -> None:
    """Started 5 degrees of tilt and 8 of direction off (what the cards' right angles say on rendered
    pictures), the squared search reads the middle of the picture at least twice as well as its start."""
    truth = camera_calibration(SIZE, height, tilt, near, ASPECT)
    support = _support_near(truth)
    start = (tilt + 5.0, near - 8.0)
    score, found = search_tilt(SIZE, height * 1.03, ASPECT, support, start, squared=True)
    assert score == pytest.approx(support(found))
    assert score >= 2 * support(camera_calibration(SIZE, height * 1.03, *start, ASPECT))
    assert score >= 0.45 * 25
