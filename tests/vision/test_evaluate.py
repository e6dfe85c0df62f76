"""The bench's scoring: what counts as a false card."""

from __future__ import annotations

import numpy as np

from vision.detect import Detection
from vision.evaluate import score_scene
from vision.scene import FaceSet, render_scene


def _at(card: str | None, corners: np.ndarray) -> Detection:
    return Detection(card, card is not None, corners, corners, 0.9)


def test_a_card_the_picture_cuts_off_is_not_scored_and_not_a_false_card(faces_dir) -> None:
    """anglo, seed 70003: seat 1's row runs off the bottom-left of the picture.  Reading its 9d
    (a corner outside the frame) is not a false card; a card where there is only felt is."""
    scene = render_scene(FaceSet.load(faces_dir("anglo")), 70003)
    cut = next(c for c in scene.cards if c.code == "9d")
    assert not cut.in_view and 0 <= cut.center[0] < 1920 and 0 <= cut.center[1] < 1080
    on_cut_card = score_scene(scene, [_at("9d", cut.corners)])
    assert on_cut_card.false_cards == 0
    assert not any("9d" in e for e in on_cut_card.errors if "false" in e)
    on_felt = score_scene(scene, [_at("9d", cut.corners + np.array([600.0, -500.0]))])
    assert on_felt.false_cards == 1
    # the cut card is not in the truth either way: the up cards in view are the same
    assert on_cut_card.up_total == on_felt.up_total == sum(1 for c in scene.cards if c.in_view and c.role == "up")
