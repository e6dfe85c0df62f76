"""Card art extraction, the scene renderer and marker calibration."""

from __future__ import annotations

import cv2
import numpy as np
import pytest

from engine.cards import DECK
from vision.calibration import Calibration, CalibrationError, calibrate
from vision.deckart import svg_id
from vision.layout import default_layout
from vision.scene import FaceSet, render_scene


def test_svg_ids_follow_aisleriot_names() -> None:
    assert svg_id(DECK[-1]) == "spade_1"  # As
    assert svg_id(DECK[0]) == "club_2"


@pytest.mark.parametrize("deck", ["anglo", "paris"])
def test_faces_are_53_card_shaped_images(faces_dir, deck: str) -> None:
    d = faces_dir(deck)
    shapes = set()
    for name in [*(str(c) for c in DECK), "back"]:
        img = cv2.imread(str(d / f"{name}.png"), cv2.IMREAD_UNCHANGED)
        assert img is not None, name
        shapes.add(img.shape[:2])
        assert 1.3 < img.shape[0] / img.shape[1] < 1.7  # portrait card, not a whole sheet or a sliver
    # One card size for the whole deck (+-2 px of trimming).
    hs = [s[0] for s in shapes]
    assert max(hs) - min(hs) <= 3
    # Different cards really are different pictures.
    a = cv2.resize(cv2.imread(str(d / "As.png")), (300, 450))
    k = cv2.resize(cv2.imread(str(d / "Kh.png")), (300, 450))
    assert np.abs(a.astype(int) - k.astype(int)).mean() > 10


def test_scene_is_deterministic_and_truth_lands_on_cards(faces_dir) -> None:
    fs = FaceSet.load(faces_dir("anglo"))
    s1 = render_scene(fs, 7, seats=4, street=5, conditions=False, close_up=False)
    s2 = render_scene(fs, 7, seats=4, street=5, conditions=False, close_up=False)
    assert np.array_equal(s1.image, s2.image)
    assert [c.code for c in s1.cards] == [c.code for c in s2.cards]
    codes = [c.code for c in s1.cards]
    assert len(codes) == len(set(codes))  # one deck, no card twice
    # Every card is drawn where the truth says: its centre patch is not felt.
    cx, cy = np.round(cv2.perspectiveTransform(np.array([[[0.0, 0.0]]]), s1.table_to_image)[0, 0]).astype(int)
    felt = s1.image[cy - 5 : cy + 5, cx - 5 : cx + 5].reshape(-1, 3).mean(axis=0)
    for seat, info in s1.seats().items():
        assert 1 <= len(info["up"]) <= 4 and info["down"] in (2, 3), seat
    for c in s1.cards:
        x, y = np.round(c.center).astype(int)
        patch = s1.image[y - 3 : y + 3, x - 3 : x + 3].reshape(-1, 3).mean(axis=0)
        assert np.abs(patch - felt).sum() > 40, (c.code, c.role)


def test_calibration_recovers_the_camera(faces_dir) -> None:
    fs = FaceSet.load(faces_dir("tigullio"))
    for seed in (3, 4):
        s = render_scene(fs, seed)
        cal = calibrate(s.image, s.layout)
        truth = np.array([c.table_corners.mean(axis=0) for c in s.cards if c.in_view])
        seen = cal.to_table(np.array([c.center for c in s.cards if c.in_view]))
        assert np.abs(seen - truth).max() < 4.0  # mm
        again = Calibration.from_dict(cal.to_dict())
        assert np.allclose(again.image_to_table, cal.image_to_table)
        assert again.layout.seats.keys() == s.layout.seats.keys()


def test_calibration_without_markers_says_what_it_saw() -> None:
    blank = np.full((480, 640, 3), 90, np.uint8)
    with pytest.raises(CalibrationError, match="found 0 of the layout's ArUco markers"):
        calibrate(blank, default_layout(6))
