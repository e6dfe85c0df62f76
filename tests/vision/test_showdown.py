"""Cards tabled at showdown (vision/scene_showdown.py, vision/detect/tabled.py), on the tuning deck anglo."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from tests.vision.decks import enrolled
from vision.calibration import calibrate
from vision.detect import PARAMS, Detection, Detector
from vision.scene import FaceSet, Scene, render_scene
from vision.scene_showdown import TabledCard, render_showdown
from vision.tracking import raw_view


def _width(card: TabledCard) -> float:
    return float(np.linalg.norm(card.corners[1] - card.corners[0]))


def _tabled(scene: Scene, seat: int | None = None) -> list[TabledCard]:
    return [c for c in scene.cards if isinstance(c, TabledCard) and c.in_view and seat in (None, c.seat)]


def _read_right(card: TabledCard, dets: list[Detection]) -> bool:
    return any(d.card == card.code and float(np.linalg.norm(d.center - card.center)) < 0.5 * _width(card) for d in dets)


def _invented(scene: Scene, dets: list[Detection]) -> list[str]:
    """Detections lying on a tabled card with a code that is no card of that seat lying there."""
    out = []
    for card in _tabled(scene):
        mine = _tabled(scene, card.seat)
        for d in dets:
            if d.card is None or d.card == card.code or float(np.linalg.norm(d.center - card.center)) > 0.2 * _width(card):
                continue
            if not any(o.code == d.card and float(np.linalg.norm(d.center - o.center)) < 0.5 * _width(o) for o in mine):
                out.append(f"seat {card.seat}: {card.code} (index {'shows' if card.index_visible else 'covered'}) read as {d.card}")
    return out


def _detect(faces_dir, scene: Scene, deck: str = "anglo", **params: object) -> list[Detection]:
    directory = faces_dir(deck)
    return Detector(enrolled(directory), calibrate(scene.image, scene.layout), params=replace(PARAMS, **params)).detect(scene.image)


def _on_seat(scene: Scene, seat: int, dets: list[Detection]) -> list[Detection]:
    """The face-up detections lying on the seat's tabled cards (within half a card of one's centre)."""
    cards = _tabled(scene, seat)
    return [d for d in dets if d.face_up and any(float(np.linalg.norm(d.center - c.center)) < 0.5 * _width(c) for c in cards)]


def test_the_showdown_truth_says_which_index_shows(faces_dir) -> None:
    """Each tabled seat's last card lies on top: both its indices show; a card under it shows an index only
    where no later card lies on that corner strip; the same seed renders the same picture."""
    fs = FaceSet.load(faces_dir("anglo"))
    scene = render_showdown(fs, 2, arrangement="fan")
    assert np.array_equal(scene.image, render_showdown(fs, 2, arrangement="fan").image)
    seats = sorted({c.seat for c in _tabled(scene)})
    assert len(seats) >= 3
    for seat in seats:
        cards = sorted(_tabled(scene, seat), key=lambda c: c.order)
        assert cards[-1].corners_shown() == "TLTRBRBL" and cards[-1].covered_share == 0
        assert all(c.covered_share > 0 for c in cards[:-1])  # a fan: every card but the top one partly covered
    covered = [c for c in _tabled(scene) if not c.index_visible]
    assert len(covered) >= 10  # tight and reversed fans hide their indices (seats 1, 3, 5, 6)
    # a deck printed elsewhere is counted at its own corners: a card lying turned round shows its bottom
    # right only (a standard deck's index, none of a deck printed at the top left alone), and a card
    # showing its top right but not its top left counts for a deck printed at the top right
    tabled = _tabled(scene)
    top_left_only, top_right_only = (True, False, False, False), (False, True, False, False)
    assert any(c.index_visible and not c.index_shown(top_left_only) for c in tabled)
    assert any(c.index_shown(top_right_only) and not c.index_shown(top_left_only) for c in tabled)


def test_a_fanned_hand_is_read_completely(faces_dir) -> None:
    """Two seats fan seven cards each, every index showing: all fourteen are read, nothing is invented.
    (The rows' reading took each fan for a blob that is no row: an occluder, nothing read.)"""
    scene = render_showdown(FaceSet.load(faces_dir("anglo")), 1, arrangement="fan")
    dets = _detect(faces_dir, scene)
    for seat in (4, 5):
        cards = _tabled(scene, seat)
        assert len(cards) == 7 and all(c.index_visible for c in cards)
        assert [c.code for c in cards if not _read_right(c, dets)] == [], f"seat {seat}"
    assert _invented(scene, dets) == []


def test_a_fans_card_whose_index_is_covered_is_not_invented(faces_dir) -> None:
    """Tight and reversed fans cover most of their indices: no covered card is read as a card that is not
    there (the rows' reading took two such fans for rows and read five cards of pips and borders), and the
    fans whose indices show are read."""
    scene = render_showdown(FaceSet.load(faces_dir("anglo")), 2, arrangement="fan")
    dets = _detect(faces_dir, scene)
    assert _invented(scene, dets) == []
    for seat in (2, 4, 5, 6, 7):
        assert [c.code for c in _tabled(scene, seat) if c.index_visible and not _read_right(c, dets)] == [], f"seat {seat}"


def test_a_tabled_card_read_lies_on_the_frames_cards(faces_dir) -> None:
    """A card read from a tabled hand lies on the frame's cards (``Detector._on_cards``): every card of
    the two fans read lies 0.8 or more on the foreground, the same outline laid in the bare middle of
    the table lies on none (a corner hypothesised at a pip puts its card
    over the felt: such a reading is dropped, ``tabled_inside``), and the bar loses none of the fans'
    cards.  A picture's scale is estimated: without the layout's markers no bar."""
    scene = render_showdown(FaceSet.load(faces_dir("anglo")), 1, arrangement="fan")
    model = enrolled(faces_dir("anglo"))
    calib = calibrate(scene.image, scene.layout)
    assert calib.markers_seen
    detector = Detector(model, calib)
    dets = detector.detect(scene.image)
    fans = [d for seat in (4, 5) for d in _on_seat(scene, seat, dets)]
    assert len(fans) == 14
    shares = [detector._on_cards(d.table_corners) for d in fans]
    assert min(shares) >= PARAMS.tabled_inside, shares
    height = scene.layout.card_width_mm * 1.4
    assert all(np.linalg.norm(c.table_corners.mean(axis=0)) > 2 * height for c in scene.cards)  # the middle is bare felt
    for d in fans:
        away = d.table_corners - d.table_corners.mean(axis=0)  # the same card, laid in the middle of the table
        assert detector._on_cards(away) < 0.05
    without = Detector(model, calib, params=replace(PARAMS, tabled_inside=0.0)).detect(scene.image)
    assert sorted(str(d.card) for d in dets) == sorted(str(d.card) for d in without)


@pytest.mark.parametrize("seed", [10003, 80002])
def test_stud_tables_read_as_without_the_tabled_reading(faces_dir, seed: int) -> None:
    """On a stud table (rows and hole cards) the tabled reading changes no detection."""
    scene = render_scene(FaceSet.load(faces_dir("anglo")), seed)
    with_it, without = _detect(faces_dir, scene), _detect(faces_dir, scene, tabled=False)
    assert [(d.card, d.face_up, tuple(np.round(d.center, 1))) for d in with_it] == \
        [(d.card, d.face_up, tuple(np.round(d.center, 1))) for d in without]


def test_a_spreads_cards_read_as_backs_by_the_row_are_read_as_tabled_cards(faces_dir) -> None:
    """Seed 92002, seat 2: two cards of a spread lie across each other in one blob that passes for a
    row, and the row reading took them for two face-down cards (Ad and 7d read as backs, nothing
    read); a blob read as down cards only is now read again corner first, and both are read."""
    scene = render_showdown(FaceSet.load(faces_dir("anglo")), 92002)
    dets = _detect(faces_dir, scene)
    cards = {c.code: c for c in _tabled(scene, 2)}
    assert cards["Ad"].index_visible and cards["7d"].index_visible
    assert _read_right(cards["Ad"], dets) and _read_right(cards["7d"], dets)
    assert _invented(scene, dets) == []


def test_a_close_call_on_a_card_read_surely_in_the_hand_is_not_counted_again(faces_dir) -> None:
    """neoclassical_4_color, seed 92003, seat 1: seven cards heaped, Kc and the 6d on top show their
    indices.  A corner of the 6d's face read 8d a hair ahead of 6d (a lead under ``tabled_lead``):
    counted as an eighth card of the hand, read wrong.  A close call one of whose labels is a card
    read surely in the blob is that card again: dropped, and the seat shows the two cards it shows.
    (Its outline also hides the 6d's index and the 6d's hides its own: ``tabled_hidden``, off here with
    the close call's lead, would drop it as the 6d read twice.)"""
    scene = render_showdown(FaceSet.load(faces_dir("neoclassical_4_color")), 92003)
    cards = {c.code: c for c in _tabled(scene, 1)}
    visible = sorted(code for code, c in cards.items() if c.index_visible)
    assert visible == ["6d", "Kc"]
    before = _detect(faces_dir, scene, "neoclassical_4_color", tabled_lead=0.0, tabled_hidden=1.1)
    assert sorted(str(d.card) for d in _on_seat(scene, 1, before)) == ["6d", "8d", "Kc"]
    also = _detect(faces_dir, scene, "neoclassical_4_color", tabled_hidden=1.1)  # the close call's drop alone
    assert sorted(str(d.card) for d in _on_seat(scene, 1, also)) == visible
    dets = _detect(faces_dir, scene, "neoclassical_4_color")
    assert sorted(str(d.card) for d in _on_seat(scene, 1, dets)) == visible
    assert all(_read_right(cards[code], dets) for code in visible)


@pytest.mark.slow
def test_a_tabled_close_call_is_left_unread(faces_dir) -> None:
    """simplistic, seed 92002, seat 2: six cards spread; a corner of the 7s read Js by a hair (its lead
    under ``tabled_lead``, and no card read surely in the blob among its close labels).  It is now
    left unread where it lies (face up, no code: the console shows a card it cannot name rather than
    a wrong one), and every card read right before still is."""
    scene = render_showdown(FaceSet.load(faces_dir("simplistic")), 92002)
    # (since session 26 the close call is also dropped as the 7s read twice, ``tabled_hidden``: off here)
    before = _detect(faces_dir, scene, "simplistic", tabled_lead=0.0, tabled_hidden=1.1)
    js = [d for d in _on_seat(scene, 2, before) if d.card == "Js"]
    assert len(js) == 1 and "Js" not in {c.code for c in _tabled(scene, 2)}
    dets = _detect(faces_dir, scene, "simplistic", tabled_hidden=1.1)
    assert all(d.card != "Js" for d in _on_seat(scene, 2, dets))
    unread = [d for d in _on_seat(scene, 2, dets) if d.card is None]
    assert any(float(np.linalg.norm(d.center - js[0].center)) < 3.0 for d in unread)
    right = [c.code for c in _tabled(scene) if _read_right(c, before)]
    assert [code for code in right if not _read_right(next(c for c in _tabled(scene) if c.code == code), dets)] == []


def test_a_fans_neighbours_are_two_cards_and_one_card_read_twice_is_one() -> None:
    """The geometry of ``TabledStage._one_card``: two cards of a fan 8 degrees apart about a pivot 20 or
    45 mm below them (centres 9-12 mm apart; the lower one's index strip a third or less under the
    upper) are two cards; the same outline read 5 mm along and 4 degrees round (a corner a pip
    suggested), or from its other index corner 3 mm off, is one, though past ``tabled_same_mm``."""
    from types import SimpleNamespace

    from vision.detect.tabled import TabledStage

    w, h = 63.0, 88.0

    def fanned(turn: float, pivot_below: float) -> np.ndarray:
        """A card turned ``turn`` degrees (its top to its right) about a pivot below its bottom edge (TL, TR, BR, BL; y down)."""
        c, s = np.cos(np.radians(turn)), np.sin(np.radians(turn))
        local = np.array([[-w / 2, -h - pivot_below], [w / 2, -h - pivot_below], [w / 2, -pivot_below], [-w / 2, -pivot_below]])
        out: np.ndarray = local @ np.array([[c, -s], [s, c]]).T
        return out

    def moved(tc: np.ndarray, turn: float, shift: tuple[float, float]) -> np.ndarray:
        c, s = np.cos(np.radians(turn)), np.sin(np.radians(turn))
        mid = tc.mean(axis=0)
        out: np.ndarray = (tc - mid) @ np.array([[c, -s], [s, c]]).T + mid + np.array(shift)
        return out

    stage = SimpleNamespace(p=PARAMS)
    for pivot in (20.0, 45.0):
        lower, upper = fanned(0.0, pivot), fanned(8.0, pivot)
        assert not TabledStage._one_card(stage, lower, upper), pivot  # type: ignore[arg-type]
    card = fanned(0.0, 20.0)
    again = moved(card, 4.0, (5.0, 0.0))
    assert float(np.linalg.norm(again.mean(axis=0) - card.mean(axis=0))) > PARAMS.tabled_same_mm
    assert TabledStage._one_card(stage, card, again)  # type: ignore[arg-type]
    assert TabledStage._one_card(stage, card, moved(np.roll(card, 2, axis=0), 0.0, (3.0, 1.0)))  # type: ignore[arg-type]


@pytest.mark.slow
def test_a_tabled_card_read_twice_is_counted_once(faces_dir) -> None:
    """simplistic, seed 92002: seat 3 fans seven cards, and a corner near the 4d's index read Qd too (2.6 mm
    and 2.9 degrees off the 4d: past ``tabled_same_mm``); at seat 2 the 7s was read again twice, left
    unread, and the 7d read 7h as well, so the engine was sent eight and nine cards (RRoP stud 19's
    prompt).  Of two cards whose indices both show, the lower one's index lies outside the upper one:
    two readings each of whose index strips lies inside the other's outline are one card read twice
    (``tabled_hidden``), and the surer is kept.  Every card read right before still is."""
    scene = render_showdown(FaceSet.load(faces_dir("simplistic")), 92002)
    layout = scene.layout
    before = _detect(faces_dir, scene, "simplistic", tabled_hidden=1.1)
    seen_before, _ = raw_view(layout, before)
    assert (len(seen_before[3][0]), len(seen_before[2][0])) == (8, 9)
    dets = _detect(faces_dir, scene, "simplistic")
    seen, _ = raw_view(layout, dets)
    assert sorted(seen[3][0]) == sorted(c.code for c in _tabled(scene, 3))  # the seven, each once
    assert len(seen[2][0]) <= len(_tabled(scene, 2))
    assert all(len(up) + down <= 7 for up, down in seen.values())
    right = [c for c in _tabled(scene) if _read_right(c, before)]
    assert [c.code for c in right if not _read_right(c, dets)] == []


def test_a_deck_printed_at_one_corner_is_read_tabled(faces_dir) -> None:
    """``anglo+onecorner`` (its bottom-right index painted out), seed 2: its showdown fans were not read
    corner first at all (the tabled reading was for decks printed at two corners: the view without an
    index matched pips), and the rows' reading read none of the 14 cards whose top-left index shows,
    inventing 21 cards from covered corners.  Now its corners are matched with the index view's
    templates alone: 13 of the 14 are read, and fewer cards are invented (8: pips of covered cards, a
    known limit)."""
    scene = render_showdown(FaceSet.load(faces_dir("anglo+onecorner")), 2, arrangement="fan")
    shown = [c for c in _tabled(scene) if c.index_tl]
    assert len(shown) == 14
    rows_only = _detect(faces_dir, scene, "anglo+onecorner", tabled=False)
    dets = _detect(faces_dir, scene, "anglo+onecorner")
    assert sum(_read_right(c, rows_only) for c in shown) <= 3
    assert sum(_read_right(c, dets) for c in shown) >= 13
    assert len(_invented(scene, dets)) < len(_invented(scene, rows_only))



@pytest.mark.slow
@pytest.mark.parametrize(("deck", "seed", "seat", "off", "lost"), [
    ("paris", 92000, 1, {"tabled_first_cover": 1.1}, "9d"),
    # (with numba 0.68.1, numpy 2.4.6 and OpenCV 5.1.0.95, session 28's machine, the 4s is read with the
    # mechanism off as well (not traced); there the mechanism's own case is not asserted)
    ("tigullio", 92002, 2, {"tabled_row_cover": 0.0}, None),
])
def test_a_spread_that_touches_is_read_as_tabled_cards(faces_dir, deck: str, seed: int, seat: int,
                                                       off: dict[str, float], lost: str | None) -> None:
    """A seat's spread whose cards touch, every index showing, lost one card:

    * paris 92000 seat 1: five cards touching at their corners, one blob that is no row, came apart
      when opened (the disc that parts a chip from the cards it bridges) and the piece the disc bit
      out of the 9d read as a back (seven tuning designs lost it).  Such a blob is now read corner
      first before it is opened (``tabled_first_cover``: taken where the cards read cover 0.9 of it).
    * tigullio 92002 seat 2: the 7s, 4s and 3c side by side passed for a row; the row's plan read the
      7s and 3c at its ends, surely, and found nothing of the 4s between them, so the row was kept.
      A row whose cards read leave its blob bare (``tabled_row_cover``: 0.67 here, 0.94 or more on
      every other row of the tuning showdowns) is now read again corner first.

    With the mechanism off (``off``) the card is lost; with it every card of the seat is read, none
    invented, nothing counted twice."""
    scene = render_showdown(FaceSet.load(faces_dir(deck)), seed)
    cards = _tabled(scene, seat)
    assert len(cards) >= 5 and all(c.index_visible for c in cards)
    if lost is not None:
        before = _detect(faces_dir, scene, deck, **off)
        assert [c.code for c in cards if not _read_right(c, before)] == [lost]
    dets = _detect(faces_dir, scene, deck)
    assert [c.code for c in cards if not _read_right(c, dets)] == []
    assert sorted(str(d.card) for d in _on_seat(scene, seat, dets)) == sorted(c.code for c in cards)
    assert _invented(scene, dets) == []
