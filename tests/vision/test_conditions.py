"""Cardroom conditions (vision/conditions.py) on the tuning decks: what they must not break."""

from __future__ import annotations

import numpy as np
import pytest

from tests.vision.decks import enrolled
from vision.calibration import calibrate
from vision.conditions import paint_chip
from vision.detect import Detection, Detector
from vision.scene import FaceSet, Scene, TruthCard, render_scene


def _read(scene: Scene, dets: list[Detection], card: TruthCard) -> tuple[bool, str | None] | None:
    """What the detections say of one true card: (face up, code) of the detection on it, or None."""
    width = float(np.linalg.norm(card.corners[1] - card.corners[0]))
    near = [d for d in dets if np.linalg.norm(d.center - card.center) < width / 3]
    return (near[0].face_up, near[0].card) if near else None


def _truth(card: TruthCard) -> tuple[bool, str | None]:
    return (True, card.code) if card.face_up else (False, None)


@pytest.mark.parametrize(("deck", "seed"), [("anglo", 80002), ("anglo", 10003), ("tigullio", 80000)])
def test_a_chip_on_a_cards_corner_costs_no_other_card(faces_dir, deck: str, seed: int) -> None:
    """A chip on the outer corner of a seat's top up card sticks out of the row's rectangle (and on
    anglo 80002 reaches a hole card): the blob was no row, so it was taken for a hand and every card
    in it was lost.  Each seat in turn gets the chip; every other card read right without it must read right with it,
    and nothing may be reported as an occluder (the tracker would hold the seat while the chip lies)."""
    directory = faces_dir(deck)
    scene = render_scene(FaceSet.load(directory), seed)
    calib = calibrate(scene.image, scene.layout)
    det = Detector(enrolled(directory), calib)
    cards = [c for c in scene.cards if c.in_view and c.role in ("up", "down")]
    plain = det.detect(scene.image)
    base = {id(c): _read(scene, plain, c) for c in cards}
    assert sum(base[id(c)] == _truth(c) for c in cards) >= 0.8 * len(cards)
    seats = sorted({c.seat for c in cards if c.role == "up"})
    assert len(seats) >= 2
    rng = np.random.default_rng(seed)
    for seat in seats:
        top = max((c for c in cards if c.seat == seat and c.role == "up"), key=lambda c: c.order)
        dets = det.detect(paint_chip(scene, calib.to_table(top.corners[2][None])[0], rng))
        assert det.occluders == [], f"seat {seat}: the chip was taken for a hand"
        for c in cards:
            if c.seat == seat and c is not top and base[id(c)] == _truth(c):  # (a card misread without it is not counted)
                assert _read(scene, dets, c) == _truth(c), f"seat {seat}: {c.role} card {c.code}"


@pytest.mark.parametrize(("deck", "seed", "codes", "off_mm", "colour"), [
    ("tigullio", 80001, ["7c", "3s", "2d", "Ah"], 20.5, (170, 60, 30)),
    ("anglo", 80000, ["Jd", "3s", "5s"], 18.0, (40, 140, 40)),
])
def test_a_chip_touching_a_rows_top_edge_moves_no_card(faces_dir, deck: str, seed: int, codes: list[str], off_mm: float,
                                                       colour: tuple[int, int, int]) -> None:
    """A chip of the felt's colour touching the middle of seat 1's row's top edge (where the index
    corners are): only its white rim and spots are foreground.  tigullio 80001 (blue on blue):
    cut off at the neck, the rim left crumbs on the row that made its rectangle 7 mm taller, the
    band read for the corners moved 3.6 mm, and the row read as one 3c.  anglo 80000 (green on
    green, 1 mm over the edge): not cut at all, the row 8 mm taller, its rectangle turned 0.6
    degrees, and two of its three cards lost."""
    directory = faces_dir(deck)
    scene = render_scene(FaceSet.load(directory), seed)
    calib = calibrate(scene.image, scene.layout)
    det = Detector(enrolled(directory), calib)
    ups = sorted((c for c in scene.cards if c.in_view and c.role == "up" and c.seat == 1), key=lambda c: c.order)
    assert [c.code for c in ups] == codes
    base = det.detect(scene.image)
    assert [_read(scene, base, c) for c in ups] == [(True, c.code) for c in ups]
    edge = ups[-1].table_corners[3] - ups[-1].table_corners[0]
    centre = (ups[0].table_corners[0] + ups[-1].table_corners[1]) / 2 - edge / np.linalg.norm(edge) * off_mm
    dets = det.detect(paint_chip(scene, centre, np.random.default_rng(0), colour=colour))
    assert [_read(scene, dets, c) for c in ups] == [(True, c.code) for c in ups]
