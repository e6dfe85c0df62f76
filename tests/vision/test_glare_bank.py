"""The glare bank: corner templates washed by ramps, for a corner under a lamp's glare (issue #22).

A specular band over a glossy card washes its ink towards white, more in the band's middle than at
its flanks, so one end of a corner keeps more of its contrast than the other; a ten of hearts under
the band's flank read as a four, the ten not among the four cards the full match weighs
(``vision.detect.glare``, ``FineMatch._through_glare``).
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from tests.vision.decks import enrolled
from vision.calibration import calibrate
from vision.conditions import paint_glare
from vision.corner import CARD_W, STRIP_H, STRIP_W, STRIP_X0, STRIP_Y0
from vision.detect import PARAMS, Detection, Detector
from vision.detect.glare import RAMPS, WHITE, washed_strips
from vision.scene import FaceSet, Scene, TruthCard, render_scene


def _read(dets: list[Detection], card: TruthCard) -> str | None:
    width = float(np.linalg.norm(card.corners[1] - card.corners[0]))
    near = [d for d in dets if np.linalg.norm(d.center - card.center) < width / 3]
    return near[0].card if near else None


def test_a_washed_strip_keeps_the_ramps_share_of_the_inks_contrast() -> None:
    rng = np.random.default_rng(1)
    cards = rng.uniform(0, 255, (2, 90, CARD_W, 3)).astype(np.float32)
    out = washed_strips(cards)
    assert out.shape == (2 * len(RAMPS), STRIP_H, STRIP_W, 3)
    strip = cards[1, STRIP_Y0 : STRIP_Y0 + STRIP_H, STRIP_X0 : STRIP_X0 + STRIP_W]
    for k, (_name, g) in enumerate(RAMPS):
        washed = out[len(RAMPS) + k]  # card 1, ramp k
        np.testing.assert_allclose(washed - WHITE, g[:, :, None] * (strip - WHITE), rtol=1e-4, atol=1e-3)
    # the ramps wash one end of the corner and leave the other as it was
    for _name, g in RAMPS:
        assert g.max() == pytest.approx(1.0) and g.min() <= 0.5


def _glare_scene(faces_dir, deck: str, seed: int, code: str) -> tuple[Scene, TruthCard]:
    """The scene of ``seed`` with the lamp's band through the middle of the card ``code``, as
    bench_vision_conditions.py paints it."""
    fs = FaceSet.load(faces_dir(deck))
    card = next(c for c in render_scene(fs, seed).cards if c.code == code and c.in_view)
    centre = card.table_corners.mean(axis=0)
    scene = render_scene(fs, seed, optics=lambda s: paint_glare(s, centre, np.random.default_rng([seed, 0])))
    return scene, next(c for c in scene.cards if c.code == code and c.in_view)


def test_a_card_under_glare_is_read_through_the_bank(faces_dir) -> None:
    scene, card = _glare_scene(faces_dir, "anglo", 80002, "Th")
    model = enrolled(faces_dir("anglo"))
    calib = calibrate(scene.image, scene.layout)
    without = Detector(model, calib, params=replace(PARAMS, glare_gain=0.0)).detect(scene.image)
    assert _read(without, card) not in (None, "Th")  # the case: misread without the bank
    assert _read(Detector(model, calib).detect(scene.image), card) == "Th"


def test_a_plain_table_reads_as_without_the_bank(faces_dir) -> None:
    """A plain corner matches a washed template a little better than the sharp one, never by
    ``glare_gain``: no reading of a table without glare changes."""
    fs = FaceSet.load(faces_dir("anglo"))
    model = enrolled(faces_dir("anglo"))
    for seed in (80002, 80003):
        scene = render_scene(fs, seed)
        calib = calibrate(scene.image, scene.layout)
        with_bank = Detector(model, calib).detect(scene.image)
        without = Detector(model, calib, params=replace(PARAMS, glare_gain=0.0)).detect(scene.image)
        assert [(d.card, d.face_up) for d in with_bank] == [(d.card, d.face_up) for d in without]
