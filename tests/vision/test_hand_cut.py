"""A hand over a row: cut out of the blob (FeltSegmenter.hand_cut), the cards it does not touch read.

Before the cut, a hand over part of a row made one blob of the hand, its arm and the row; the
blob was no row, so all of it was an occluder and the row's first card, its index in plain view,
was lost with it (bench_vision_conditions.py's hand condition, issue #22).
"""

from __future__ import annotations

from dataclasses import replace

import cv2
import numpy as np
import pytest

from tests.vision.decks import enrolled
from vision.calibration import calibrate
from vision.conditions import MONK_SKIN_TONES, SKIN, hand_polygon, paint_hand, to_image
from vision.detect import PARAMS, Detection, Detector
from vision.detect.foreground import SKIN_CB, SKIN_CR, deck_colour_table
from vision.scene import FaceSet, Scene, TruthCard, render_scene
from vision.tracking import Tracker


def _read(dets: list[Detection], card: TruthCard) -> tuple[bool, str | None] | None:
    """What the detections say of one true card: (face up, code) of the detection on it, or None."""
    width = float(np.linalg.norm(card.corners[1] - card.corners[0]))
    near = [d for d in dets if np.linalg.norm(d.center - card.center) < width / 3]
    return (near[0].face_up, near[0].card) if near else None


def _touches(card: TruthCard, poly_px: np.ndarray) -> bool:
    inter, _ = cv2.intersectConvexConvex(card.corners.astype(np.float32), cv2.convexHull(poly_px.astype(np.float32)))
    return bool(inter > 1.0)


def _hand_scene(faces_dir, deck: str, seed: int, seat: int, reach: float,
                skin: tuple[int, int, int] = SKIN) -> tuple[Scene, np.ndarray, np.ndarray]:
    scene = render_scene(FaceSet.load(faces_dir(deck)), seed)
    poly = hand_polygon(scene, seat, reach)
    return scene, poly, paint_hand(scene, poly, np.random.default_rng(seed), skin)


# (deck, seed, the seat the hand reaches over, how far past the seat's centre): each hand lies over
# the seat's up row and leaves the row's first card, index and all, in view
CASES = [("anglo", 80000, 1, 101.0), ("paris", 80001, 1, 70.0), ("tigullio", 80000, 1, 101.0)]


@pytest.mark.parametrize(("deck", "seed", "seat", "reach"),
                         [CASES[0], *(pytest.param(*case, marks=pytest.mark.slow) for case in CASES[1:])])
def test_cards_a_hand_does_not_touch_read_as_without_it(faces_dir, deck: str, seed: int, seat: int, reach: float) -> None:
    scene, poly, img = _hand_scene(faces_dir, deck, seed, seat, reach)
    model = enrolled(faces_dir(deck))
    calib = calibrate(scene.image, scene.layout)
    base = Detector(model, calib).detect(scene.image)
    det = Detector(model, calib)
    handed = det.detect(img)
    without_cut = Detector(model, calib, params=replace(PARAMS, hand_min=0.0)).detect(img)
    poly_px = to_image(scene, poly)
    untouched = [c for c in scene.cards if c.in_view and c.role in ("up", "down") and not _touches(c, poly_px)]
    in_seat = [c for c in untouched if c.seat == seat and c.role == "up"]
    assert in_seat, "the case must leave an up card of the seat untouched"
    changed = [c.code for c in untouched if _read(handed, c) != _read(base, c)]
    assert changed == [], f"cards the hand does not touch changed: {changed}"
    # what makes the difference is the cut: without it the seat's untouched up card went with the hand
    assert any(_read(without_cut, c) != _read(base, c) for c in in_seat)
    # the hand itself is still an occluder over the seat (the tracker holds the seat while it lies there)
    assert seat in Tracker(scene.layout).occluded_seats(det.occluders)
    # and no card is read where the hand lies
    hand_mm = np.asarray(poly, np.float32).reshape(-1, 1, 2)
    inside = [d.card for d in handed if cv2.pointPolygonTest(hand_mm, (float(d.table_center[0]), float(d.table_center[1])), True) > 15]
    assert inside == [], f"cards read under the hand: {inside}"


def test_the_published_view_holds_while_the_hand_passes(faces_dir) -> None:
    deck, seed, seat, reach = CASES[0]
    scene, _poly, img = _hand_scene(faces_dir, deck, seed, seat, reach)
    det = Detector(enrolled(faces_dir(deck)), calibrate(scene.image, scene.layout), reuse=True)
    tracker = Tracker(scene.layout, 3)
    views = []
    for f, frame in enumerate([scene.image] * 6 + [img] * 6 + [scene.image] * 6):
        views.append(tracker.update(f, det.detect(frame), f / 12, det.occluders).seats)
    assert views[5], "the still table must publish its cards"
    assert all(v == views[5] for v in views[5:])


def test_a_deck_printed_in_skin_tones_keeps_its_colour() -> None:
    """A deck whose paper is tinted like skin (a sepia print) must not have its cards cut out as a hand:
    the chroma it is printed in over a large area is the deck's, whatever the skin band says."""
    skin = np.array(SKIN, np.float32)
    sepia = np.full((52, 89, 64, 3), skin, np.float32)  # every face this colour ...
    sepia[:, 10:20, 10:20] = (0, 0, 200)  # ... with a red pip
    ycc = cv2.cvtColor(skin.astype(np.uint8)[None, None], cv2.COLOR_BGR2YCrCb)[0, 0]
    assert SKIN_CR[0] <= ycc[1] <= SKIN_CR[1] and SKIN_CB[0] <= ycc[2] <= SKIN_CB[1], "the hand's colour is skin"
    table = deck_colour_table(sepia, PARAMS.hand_deck_share)
    assert table[ycc[1] // 4, ycc[2] // 4]
    white = np.full((52, 89, 64, 3), 245, np.float32)
    assert not deck_colour_table(white, PARAMS.hand_deck_share)[ycc[1] // 4, ycc[2] // 4]
    # a deck file without whole-card templates: no colour is known to be the deck's
    assert not deck_colour_table(np.zeros((0, 1, 1, 3), np.float32), PARAMS.hand_deck_share).any()


def test_a_colour_of_the_courts_alone_is_not_the_decks() -> None:
    """A chroma the deck prints only in patches (a court's brown robe, a few hundredths of each court)
    is still skin when a hand has it: summed over the twelve courts it passed half a percent of the
    deck's printed area, and until session 31 a dark brown hand was never cut on such decks."""
    brown = np.array(MONK_SKIN_TONES[7], np.float32)  # the Monk scale's eighth tone, a dark brown
    ycc = cv2.cvtColor(brown.astype(np.uint8)[None, None], cv2.COLOR_BGR2YCrCb)[0, 0]
    faces = np.full((53, 89, 64, 3), 245, np.float32)
    faces[40:52, 30:50, 10:25] = brown  # twelve courts, each 5 % of it that brown
    assert (12 * 20 * 15) / faces[..., 0].size > 0.005  # (the old rule: half a percent of the whole deck)
    assert not deck_colour_table(faces, PARAMS.hand_deck_share)[ycc[1] // 4, ycc[2] // 4]
    faces[52, :, :] = brown  # a back printed all in that brown: the deck's own
    assert deck_colour_table(faces, PARAMS.hand_deck_share)[ycc[1] // 4, ycc[2] // 4]


def test_a_dark_brown_hand_is_cut_on_a_deck_that_prints_brown_courts(faces_dir) -> None:
    """anglo prints brown in its courts; the Monk scale's eighth tone over seat 1's row (CASES[0]):
    the row's first card, untouched, reads as without the hand, and the hand is an occluder.  Before
    session 31 the brown was the deck's, nothing was cut, and the row with the hand read as backs."""
    deck, seed, seat, reach = CASES[0]
    scene, poly, img = _hand_scene(faces_dir, deck, seed, seat, reach, MONK_SKIN_TONES[7])
    model = enrolled(faces_dir(deck))
    calib = calibrate(scene.image, scene.layout)
    base = Detector(model, calib).detect(scene.image)
    det = Detector(model, calib)
    handed = det.detect(img)
    poly_px = to_image(scene, poly)
    untouched = [c for c in scene.cards if c.in_view and c.role in ("up", "down") and not _touches(c, poly_px)]
    assert any(c.seat == seat and c.role == "up" for c in untouched)
    changed = [c.code for c in untouched if _read(handed, c) != _read(base, c)]
    assert changed == [], f"cards the hand does not touch changed: {changed}"
    assert seat in Tracker(scene.layout).occluded_seats(det.occluders)


def test_a_hand_of_the_decks_own_colour_is_not_cut(faces_dir) -> None:
    """With the hand's chroma among the deck's (as a sepia deck's would be), the blob stays whole and an
    occluder, as before the cut: the seat is held, nothing under or beside the hand is guessed at."""
    deck, seed, seat, reach = CASES[0]
    scene, _poly, img = _hand_scene(faces_dir, deck, seed, seat, reach)
    det = Detector(enrolled(faces_dir(deck)), calibrate(scene.image, scene.layout))
    det.deck_colours = np.ones((64, 64), bool)  # every chroma the deck's
    dets = det.detect(img)
    assert seat in Tracker(scene.layout).occluded_seats(det.occluders)
    poly_px = to_image(scene, _poly)
    row = [c for c in scene.cards if c.seat == seat and c.role == "up" and c.in_view]
    assert all(_read(dets, c) is None for c in row if not _touches(c, poly_px))


def _hand_passes(det: Detector, scene: Scene, img: np.ndarray) -> list[list[Detection]]:
    """The still table, the hand over it, the still table again, each frame read by ``det``."""
    return [det.detect(frame) for frame in (scene.image, scene.image, img, scene.image)]


def test_a_blob_read_afresh_alone_is_read_as_the_camera_was_judged(faces_dir, monkeypatch) -> None:
    """Whether the camera blurs (step 4's optics bank) is judged on a frame's best-read corners.  When a
    hand has gone, its seat's blob is read afresh and alone while every other blob is kept: its three
    corners were too few to judge the camera by, and on x-pysol-transformation (bench seed 80000) they
    said "blurred", so the row's covered jack read Js, not the Jd it was before the hand came, and the
    published view changed.  With blobs kept (``reuse``), fewer fresh corners than ``optics_sample``
    keep the last judgement; a detector that reads every frame whole judges every frame."""
    deck, seed, seat, reach = CASES[0]
    scene, _poly, img = _hand_scene(faces_dir, deck, seed, seat, reach)
    model, calib = enrolled(faces_dir(deck)), calibrate(scene.image, scene.layout)
    judged: list[int] = []
    original = Detector._frame_blurred

    def spy(self: Detector, probe, reads) -> bool:  # type: ignore[no-untyped-def]
        judged.append(len(probe))
        return original(self, probe, reads)

    monkeypatch.setattr(Detector, "_frame_blurred", spy)
    frames = _hand_passes(Detector(model, calib, reuse=True), scene, img)
    assert len(judged) == 1 and judged[0] >= PARAMS.optics_sample  # the first frame, whole
    cards = [c for c in scene.cards if c.in_view and c.role in ("up", "down")]
    assert [_read(frames[3], c) for c in cards] == [_read(frames[0], c) for c in cards]
    judged.clear()
    _hand_passes(Detector(model, calib), scene, img)
    assert len(judged) == 4


def test_a_blob_read_afresh_gives_no_card_a_kept_blob_holds(faces_dir) -> None:
    """One deck across the blobs kept from the last frame and those read afresh: step 7 (no card twice)
    saw only the fresh ones, so a fresh blob could take a kept blob's card and the table would show it
    twice.  Here a kept blob is made to hold the card the hand's seat reads, and that seat, read afresh
    when the hand has gone, must not read it again."""
    deck, seed, seat, reach = CASES[0]
    scene, poly, img = _hand_scene(faces_dir, deck, seed, seat, reach)
    det = Detector(enrolled(faces_dir(deck)), calibrate(scene.image, scene.layout), reuse=True)
    first = det.detect(scene.image)
    poly_px = to_image(scene, poly)
    row = [c for c in scene.cards if c.seat == seat and c.role == "up" and c.in_view and not _touches(c, poly_px)]
    wanted = _read(first, row[0])
    assert wanted is not None and wanted[1] is not None
    det.detect(img)  # the hand over the seat: its blob changes; the rest are kept
    other = next(d.card for _g, _lk, kept, _oc in det._memory for d in kept if d.card not in (None, wanted[1]))
    det._memory = [(g, lk, [replace(d, card=wanted[1]) if d.card == other else d for d in kept], oc)
                   for g, lk, kept, oc in det._memory]
    again = det.detect(scene.image)  # the hand gone: the seat is read afresh, the rest kept
    assert _read(again, row[0]) != wanted
    assert [d.card for d in again].count(wanted[1]) == 1


def test_a_hand_the_felt_takes_in_is_held_by_the_tracker(faces_dir) -> None:
    """A dark brown hand (the Monk scale's 8th tone) over seat 8's cards on a burgundy felt has the felt's
    hue and is darker, as a shadow is: step 1 takes it for felt, no occluder is found, and the cards
    under it are simply not seen.  Lying there a second and a half (18 frames at 12 a second), it changes
    nothing published: the tracker believes cards gone only after ``vanish_s`` (without that hold the
    seat's view changes)."""
    scene, _poly, img = _hand_scene(faces_dir, "paris", 80002, 8, 100.0, MONK_SKIN_TONES[7])
    assert scene.image[540, 960, 2] > 2 * scene.image[540, 960, 1], "the felt must be burgundy"
    model = enrolled(faces_dir("paris"))
    calib = calibrate(scene.image, scene.layout)
    published = {}
    for hold in (Tracker.vanish_s, 0.0):
        det = Detector(model, calib, reuse=True)
        tracker = Tracker(scene.layout, 3, vanish_s=hold)
        views = []
        for f, frame in enumerate([scene.image] * 6 + [img] * 18 + [scene.image] * 6):
            views.append(tracker.update(f, det.detect(frame), f / 12, det.occluders).seats)
            if frame is img:
                assert 8 not in Tracker(scene.layout).occluded_seats(det.occluders)
        assert views[5][8], "the still table must publish seat 8's cards"
        published[hold] = all(v == views[5] for v in views[5:])
    assert published == {Tracker.vanish_s: True, 0.0: False}
