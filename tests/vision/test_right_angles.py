"""The camera's turn from the cards' right angles (vision.right_angles): on outlines of cards drawn
through a known camera, the convex corners found are the cards' corners (never where two cards'
edges cross), they are square through the camera that drew them and not through a flat view, and
the turn found is that camera's."""

from __future__ import annotations

import math

import cv2
import numpy as np
import pytest

from vision.camera_tilt import camera_tilt
from vision.right_angles import (
    FEWEST_CORNERS,
    MOST_ANGLE_ERROR_DEG,
    Corner,
    angle_errors,
    outline_corners,
    squareness,
    turn_from_corners,
)

SIZE = (1600, 1200)
CARD = (63.0 * 1.6, 88.0 * 1.6)  # a card's width and height in the top view, px


def _card(x: float, y: float, turn_deg: float) -> np.ndarray:
    """A card's four corners in the top view, centred at (x, y), turned ``turn_deg``."""
    w, h = CARD
    a = math.radians(turn_deg)
    rot = np.array([[math.cos(a), -math.sin(a)], [math.sin(a), math.cos(a)]])
    out: np.ndarray = np.array([[-w / 2, -h / 2], [w / 2, -h / 2], [w / 2, h / 2], [-w / 2, h / 2]]) @ rot.T + [x, y]
    return out


#: three hands: a spread (cards side by side, touching), a fan about one point, a loose heap
HANDS = [
    [_card(420 + 70 * k, 520, 4.0) for k in range(4)],
    [_card(800 + 60 * math.sin(math.radians(a)), 720 - 60 * math.cos(math.radians(a)), a) for a in (-30, -12, 6, 24)],
    [_card(1150, 560, 17.0), _card(1180, 600, 68.0), _card(1130, 620, -41.0)],
]


def _pictured(top_to_picture: np.ndarray) -> list[np.ndarray]:
    """Each card's corners in the picture, the hands laid about the point the picture's centre sees."""
    seen = cv2.perspectiveTransform(np.array([[[SIZE[0] / 2, SIZE[1] / 2]]]), np.linalg.inv(top_to_picture))[0, 0]
    shift = seen - [SIZE[0] / 2, SIZE[1] / 2]
    return [cv2.perspectiveTransform((card + shift).reshape(-1, 1, 2), top_to_picture).reshape(-1, 2)
            for hand in HANDS for card in hand]


def _mask(top_to_picture: np.ndarray) -> np.ndarray:
    """The half-size foreground mask of the hands seen through ``top_to_picture``, cards drawn in order."""
    mask = np.zeros((SIZE[1] // 2, SIZE[0] // 2), np.uint8)
    for pic in _pictured(top_to_picture):
        assert ((pic >= 0) & (pic < SIZE)).all()  # (every card in the picture)
        cv2.fillPoly(mask, [np.round(pic / 2 * 16).astype(np.int32)], 255, cv2.LINE_AA, shift=4)
    return cv2.threshold(mask, 127, 255, cv2.THRESH_BINARY)[1]


def _corners_on_table(top_to_picture: np.ndarray) -> np.ndarray:
    return np.concatenate(_pictured(top_to_picture))


@pytest.mark.parametrize(("tilt", "near"), [(30.0, 90.0), (30.0, 210.0), (20.0, 300.0), (42.0, 10.0)])
def test_the_turn_that_squares_the_cards_corners_is_the_cameras(tilt: float, near: float) -> None:
    m = camera_tilt(SIZE, tilt, near)
    corners = outline_corners(_mask(m))
    assert len(corners) >= 8
    # every corner found is a card's corner, not a crossing of two cards' edges
    card_corners = _corners_on_table(m)
    for c in corners:
        assert float(np.min(np.hypot(*(card_corners - c.at).T))) < 4.0
    assert float(np.median(angle_errors(corners, np.linalg.inv(m)))) < 1.5  # square through the camera
    assert float(np.median(angle_errors(corners, np.eye(3)))) > 3.0  # not straight down
    turn = turn_from_corners(corners, SIZE)
    assert turn is not None
    assert turn.tilt_deg == pytest.approx(tilt, abs=3.0)
    assert (turn.near_deg - near + 180.0) % 360.0 - 180.0 == pytest.approx(0.0, abs=8.0)
    assert turn.error < 0.3 * turn.flat_error


def test_cards_seen_straight_down_say_no_turn() -> None:
    turn = turn_from_corners(outline_corners(_mask(np.eye(3))), SIZE)
    assert turn is not None
    assert turn.tilt_deg <= 4.0
    assert turn.flat_error < 2.0


def test_fewer_corners_than_enough_say_nothing() -> None:
    corners = outline_corners(_mask(camera_tilt(SIZE, 30.0, 90.0)))
    assert turn_from_corners(corners[: FEWEST_CORNERS - 1], SIZE) is None


def test_a_corner_that_is_no_cards_counts_no_more_than_the_cap() -> None:
    """A blunt corner (a shadow's, two edges joined across a gap) costs at most the cap, so a few of
    them cannot outweigh many square ones."""
    square = Corner(np.array([800.0, 600.0]), np.array([1.0, 0.0]), np.array([0.0, 1.0]), 50.0)
    a = math.radians(130)
    blunt = Corner(np.array([400.0, 600.0]), np.array([1.0, 0.0]), np.array([math.cos(a), math.sin(a)]), 50.0)
    assert angle_errors([square, blunt], np.eye(3)) == pytest.approx([0.0, 40.0], abs=1e-6)
    assert squareness([square, blunt], np.eye(3)) == pytest.approx(MOST_ANGLE_ERROR_DEG**2 / 2)


def test_an_empty_picture_has_no_corners() -> None:
    assert outline_corners(np.zeros((600, 800), np.uint8)) == []
