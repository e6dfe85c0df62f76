"""The glare bank: corner templates washed by ramps, for a corner under a lamp's glare (issue #22).

A specular band over a glossy card washes its ink towards white, more in the band's middle than at
its flanks, so one end of a corner keeps more of its contrast than the other; a ten of hearts under
the band's flank read as a four, the ten not among the four cards the full match weighs
(``vision.detect.glare``, ``FineMatch._through_glare``).  And a row whose top card the band washes
until it looks like a blank paper back is still read as the up cards it is (``back_every_end``).
"""

from __future__ import annotations

import shutil
from dataclasses import replace
from pathlib import Path

import cv2
import numpy as np
import pytest

from tests.vision.decks import enrolled
from vision.calibration import calibrate
from vision.conditions import paint_glare
from vision.corner import CARD_W, STRIP_H, STRIP_W, STRIP_X0, STRIP_Y0
from vision.deck import enroll, read_face_dir
from vision.detect import PARAMS, Detection, Detector
from vision.detect.glare import RAMPS, WHITE, washed_strips
from vision.evaluate import score_scene
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


def _plain_backed(faces_dir, tmp_path: Path) -> Path:
    """anglo's faces with a back of blank paper (cream, its grain, a thin grey frame), as some decks
    print it (x-pysol-joan-darc's): the back's whole-card likeness is that of any pale card."""
    src = faces_dir("anglo")
    out = tmp_path / "plain-backed"
    shutil.copytree(src, out)
    back = cv2.imread(str(src / "back.png"), cv2.IMREAD_UNCHANGED)
    h, w = back.shape[:2]
    paper = np.full((h, w, 3), (224, 236, 238), np.float32) + np.random.default_rng(0).normal(0, 6, (h, w, 1))
    cv2.rectangle(paper, (6, 6), (w - 7, h - 7), (150, 160, 160), 2)
    art = np.clip(paper, 0, 255).astype(np.uint8)
    cv2.imwrite(str(out / "back.png"), np.dstack([art, back[:, :, 3]]) if back.shape[2] == 4 else art)
    return out


def test_a_row_whose_top_card_glare_washes_to_its_blank_back_is_still_read(faces_dir, tmp_path: Path) -> None:
    """A row is face-down cards only where each of its ends is like the back (``back_every_end``): the
    lamp washed a plain-backed deck's top card (its 2c) until the card looked more like the back than
    like any face, and the whole row of four up cards was taken for two face-down cards (joan-darc's
    rows under glare, bench seeds 80001 and 80004).  The face-down cards of the table are still found."""
    directory = _plain_backed(faces_dir, tmp_path)
    faces, back = read_face_dir(directory)
    model = enroll(faces, back, "plain-backed")
    fs = FaceSet.load(directory)
    seed = 10001
    top = next(c for c in render_scene(fs, seed).cards if c.code == "2c" and c.in_view)
    centre = top.table_corners.mean(axis=0)
    scene = render_scene(fs, seed, optics=lambda s: paint_glare(s, centre, np.random.default_rng([seed, 0])))
    row = [c for c in scene.cards if c.in_view and c.role == "up" and c.seat == top.seat]
    assert len(row) == 4
    calib = calibrate(scene.image, scene.layout)
    before = Detector(model, calib, params=replace(PARAMS, back_every_end=False)).detect(scene.image)
    assert all(_read(before, c) is None for c in row)  # the case: the row read as its back
    now = Detector(model, calib).detect(scene.image)
    assert [_read(now, c) for c in row] == [c.code for c in row]
    score = score_scene(scene, now)
    assert score.down_found == score.down_total > 0 and score.false_cards == 0
