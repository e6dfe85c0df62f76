"""The deck's index layout: learned at enrollment, kept in the deck file, and read wherever it is printed.

Tuning variants only (vision/deckart.py): ``paris+mirror`` is paris mirrored left to right (its
indices at the top right and bottom left, which a stud row covers at the top and shows at the
bottom of each card's visible strip), ``anglo+onecorner`` has its bottom-right index painted out.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from tests.vision.decks import enrolled
from vision import index_layout
from vision.calibration import calibrate
from vision.deck import (
    CODES,
    EnrollmentError,
    canonical_card,
    load,
    opaque,
    read_face_dir,
    save,
)
from vision.detect import Detector
from vision.evaluate import Score, score_scene
from vision.scene import FaceSet, render_scene


def _layout(directory: Path) -> index_layout.IndexLayout:
    faces, _back = read_face_dir(directory)
    aspect = float(np.median([f.shape[0] / f.shape[1] for f in faces.values()]))
    return index_layout.measure([canonical_card(opaque(faces[c]), aspect) for c in CODES])


@pytest.mark.parametrize(("deck", "has", "flip"), [
    ("anglo", (True, False, True, False), False),
    ("paris", (True, False, True, False), False),
    ("paris+mirror", (False, True, False, True), True),
    ("anglo+onecorner", (True, False, False, False), False),
    ("anglo+onecorner+mirror", (False, True, False, False), True),
])
def test_enrollment_finds_the_corners_that_carry_an_index(faces_dir, deck: str, has: tuple[bool, ...], flip: bool) -> None:
    layout = _layout(faces_dir(deck))
    assert layout.has == has and layout.flip == flip, layout


@pytest.mark.parametrize(("deck", "corners"), [
    ("anglo", (True, False, True, False)),
    ("paris+mirror", (False, True, False, True)),
    ("anglo+onecorner", (True, False, False, False)),
    ("anglo+onecorner+mirror", (False, True, False, False)),
])
def test_the_index_is_counted_at_the_corners_it_is_read_at(faces_dir, deck: str, corners: tuple[bool, ...]) -> None:
    """Where a tabled card's index shows (the showdown bench's truth): at the pair of corners read, and
    only those of it that carry an index."""
    assert _layout(faces_dir(deck)).index_corners == corners


def test_a_corner_of_the_other_pair_that_tells_ranks_by_its_pips_is_no_index() -> None:
    """swiss-xvii's and joan-darc's top right and bottom left tell the ranks apart by a pip of the art
    beside them (enrollment's ``has``: all four corners), where nothing is printed."""
    pips_elsewhere = index_layout.IndexLayout((True, True, True, True), (10.0, 8.0, 10.0, 7.5), False)
    assert pips_elsewhere.index_corners == (True, False, True, False)


def test_a_deck_whose_index_differs_little_within_a_suit_is_read_at_its_better_pair_of_corners(faces_dir) -> None:
    """``x-pysol-kabale`` (a tuning deck since its loss was bisected) prints a small rank beside a
    large suit sign at the top right and bottom left: within a suit its corner windows differ little,
    and since 8545896 (corners compared within 2 px of shift) no corner counted as an index (4.5 and
    4.75 pictures of 10 there, 2.5 and 3.25 at the others), so the deck was read with no index at
    all (151 -> 68 of 153 up cards).  Here ``paris+mirror`` made like it: each card three quarters
    its suit's mean card, so what tells its rank from the suit's others is a quarter of its contrast
    (the old code: no corner index)."""
    faces, _back = read_face_dir(faces_dir("paris+mirror"))
    aspect = float(np.median([f.shape[0] / f.shape[1] for f in faces.values()]))
    cards = np.stack([canonical_card(opaque(faces[c]), aspect) for c in CODES]).astype(np.float64)
    for suit in "cdhs":
        idx = [i for i, c in enumerate(CODES) if c.endswith(suit)]
        cards[idx] = 0.25 * cards[idx] + 0.75 * cards[idx].mean(axis=0)
    layout = index_layout.measure([np.round(c).astype(np.uint8) for c in cards])
    assert max(layout.ranks) < index_layout.RANKS_MIN, layout  # the measure alone finds no index ...
    assert layout.has == (False, True, False, True) and layout.flip, layout  # ... the better pair is read
    assert layout.views == (True, True)


def test_a_deck_file_keeps_its_layout_and_an_old_one_reads_as_the_usual(faces_dir, tmp_path: Path) -> None:
    model = enrolled(faces_dir("paris+mirror"))
    assert model.layout.flip
    path = tmp_path / "mirror.deck"
    save(model, path)
    assert load(path).layout == model.layout
    # a file from before the layout was learned: the same arrays without it
    z = dict(np.load(path, allow_pickle=False))
    del z["index_layout"]
    old = tmp_path / "old.deck"
    with old.open("wb") as f:
        np.savez_compressed(f, **z)
    assert load(old).layout == index_layout.STANDARD
    z["index_layout"] = np.array([1.0, 2.0])
    bad = tmp_path / "bad.deck"
    with bad.open("wb") as f:
        np.savez_compressed(f, **z)
    with pytest.raises(EnrollmentError, match="index layout"):
        load(bad)


def test_a_deck_with_its_index_at_the_top_right_and_bottom_left_reads_its_rows(faces_dir) -> None:
    """The covered cards' indices are at the bottom of their visible strips: before the layout was
    learned, 48 of these 65 up cards were read, with 4 false cards (two full tables)."""
    directory = faces_dir("paris+mirror")
    model = enrolled(directory)
    fs = FaceSet.load(directory)
    total = Score()
    for seed in (101, 102):
        scene = render_scene(fs, seed, seats=8, street=6, all_active=True)
        det = Detector(model, calibrate(scene.image, scene.layout))
        total.add(score_scene(scene, det.detect(scene.image)))
    assert total.up_total >= 60
    assert total.up_accuracy >= 0.97, total.errors
    assert total.false_cards == 0, total.errors


def test_a_deck_printed_at_the_top_right_only_reads_no_pip_as_an_index(faces_dir) -> None:
    """No covered card of ``anglo+onecorner+mirror`` shows its index (the next card covers it): its
    pips matched index templates up to 0.94 and were read as cards.  Two full tables: before the
    layout was learned 20 of 65 up cards were read right, 24 as another card, with 6 false cards;
    now a covered card is read from its visible strip only when that is clear (24 right, 4 as
    another card, no false card), and the top cards from their index at the top right."""
    directory = faces_dir("anglo+onecorner+mirror")
    model = enrolled(directory)
    assert model.layout.views == (False, True)
    fs = FaceSet.load(directory)
    total = Score()
    tops = read_tops = 0
    for seed in (101, 102):
        scene = render_scene(fs, seed, seats=8, street=6, all_active=True)
        dets = Detector(model, calibrate(scene.image, scene.layout)).detect(scene.image)
        total.add(score_scene(scene, dets))
        codes = {d.card for d in dets}
        ups = [t for t in scene.cards if t.role == "up"]
        last = {t.seat: max(u.order for u in ups if u.seat == t.seat) for t in ups}
        tops += sum(1 for t in ups if t.order == last[t.seat])
        read_tops += sum(1 for t in ups if t.order == last[t.seat] and t.code in codes)
    misread = [e for e in total.errors if " up #" in e and not e.endswith(("read None", "read nothing"))]
    assert total.false_cards == 0, total.errors
    assert len(misread) <= 6, misread
    assert total.up_correct >= 22, total.errors
    assert read_tops >= tops - 2 and tops >= 14


@pytest.mark.slow  # out of the default suite (over 15 min on the 2-core machine); .ci/run runs it
def test_a_deck_printed_at_the_top_left_only_reads_its_rows(faces_dir) -> None:
    """``anglo+onecorner``: every covered card shows its index; the blank paper where the bottom-right
    index was is never matched as one (before: 55 of 65 up cards, 7 read as another card, 3 false)."""
    directory = faces_dir("anglo+onecorner")
    model = enrolled(directory)
    fs = FaceSet.load(directory)
    total = Score()
    for seed in (101, 102):
        scene = render_scene(fs, seed, seats=8, street=6, all_active=True)
        total.add(score_scene(scene, Detector(model, calibrate(scene.image, scene.layout)).detect(scene.image)))
    assert total.up_correct >= 59, total.errors
    assert total.false_cards <= 2, total.errors
