"""Tracking: debounce, hands passing over the cards, seat assignment, irregular things, the wire payload."""

from __future__ import annotations

import cv2
import numpy as np
import pytest

from engine import wire
from tests.vision.decks import enrolled
from vision.calibration import calibrate
from vision.conditions import motion_blur
from vision.detect import Detection, Detector
from vision.layout import default_layout
from vision.scene import FaceSet, render_scene
from vision.tracking import Tracker, raw_view

LAYOUT = default_layout(6)


def _card(seat: int, along: float, card: str | None, face_up: bool = True, blob: int = 0, order: int = 0,
          forward: float = 60.0) -> Detection:
    s = LAYOUT.seats[seat]
    c = np.array(s.center) + np.array(s.right) * along + np.array(s.forward) * forward
    corners = c + np.array([[-30, -44], [30, -44], [30, 44], [-30, 44]], float)
    return Detection(card, face_up, corners, corners, 0.9, blob=blob, order=order)


def test_raw_view_orders_rows_and_counts_down_cards() -> None:
    dets = [
        _card(2, 20, "Kd", blob=1, order=1), _card(2, 0, "Ah", blob=1, order=0),
        _card(2, -40, None, False, blob=2, forward=-60), _card(2, 30, None, False, blob=3, forward=-60),
        _card(5, 0, "7c", blob=4),
    ]
    seats, irregular = raw_view(LAYOUT, dets)
    assert seats == {2: (("Ah", "Kd"), 2), 5: (("7c",), 0)}
    assert irregular == []


def test_off_felt_and_half_turned_are_irregular() -> None:
    off = np.array([LAYOUT.felt_a + 30, 0.0])
    corners = off + np.array([[-30, -44], [30, -44], [30, 44], [-30, 44]], float)
    ht = _card(3, 0, None, False)
    ht.half_turned = True
    _seats, irregular = raw_view(LAYOUT, [Detection("Qs", True, corners, corners, 0.9), ht])
    assert ("off_felt", LAYOUT.seat_at((off[0], off[1])), "Qs") in irregular
    assert ("half_turned", 3, None) in irregular


def test_a_change_must_hold_for_n_frames() -> None:
    tr = Tracker(LAYOUT, stable_frames=3)
    base = [_card(1, 0, "Ah")]
    more = [_card(1, 0, "Ah", order=0), _card(1, 20, "Kd", order=1)]
    obs = [tr.update(i, base, i / 30) for i in range(3)]
    assert obs[2].changed == [1] and obs[2].seats[1] == (("Ah",), 0)
    # Two frames of something else (a hand passing): nothing changes.
    for i in range(3, 5):
        assert tr.update(i, [], i / 30).changed == []
    assert tr.update(5, base, 5 / 30).seats[1] == (("Ah",), 0)
    # The fourth-street card arrives and stays: reported once, on its third frame.
    changes = [tr.update(i, more, i / 30).changed for i in range(6, 10)]
    assert changes == [[], [], [1], []]
    final = tr.update(10, more, 10 / 30)
    assert final.seats[1] == (("Ah", "Kd"), 0)
    assert final.fps == pytest.approx(30, rel=0.01)


def test_occluded_seat_is_held_however_long_the_hand_stays() -> None:
    tr = Tracker(LAYOUT, stable_frames=2)
    base = [_card(4, 0, "9s")]
    for i in range(3):
        tr.update(i, base, i)
    zone = np.array(LAYOUT.seats[4].zone, np.float32)
    hand = (zone - zone.mean(axis=0)) * 0.8 + zone.mean(axis=0)
    for i in range(3, 20):
        obs = tr.update(i, [], i, occluders=[hand])
        assert obs.changed == [] and obs.seats[4] == (("9s",), 0)


def test_cards_gone_from_view_are_believed_only_after_vanish_s() -> None:
    """A hand the detector took for felt (a dark hand on a burgundy felt: no occluder) hides two
    of a seat's cards for a second and a half at 12 frames a second: nothing is published.  A fold
    (the cards really gone) is published once the seat has shown fewer cards for ``vanish_s``
    seconds and the view has held ``stable_frames``; a new card or the showdown's hole cards turned
    up (as many cards) still wait only ``stable_frames``."""
    tr = Tracker(LAYOUT, stable_frames=3)
    row = [_card(2, 0, "Ah", blob=1, order=0), _card(2, 20, "Kd", blob=1, order=1),
           _card(2, -40, None, False, blob=2, forward=-60), _card(2, 30, None, False, blob=3, forward=-60)]
    t = 0.0
    for i in range(4):
        tr.update(i, row, t)
        t += 1 / 12
    hidden = row[:1] + row[3:]  # the hand lies over the Kd and a hole card
    for i in range(4, 22):  # 18 frames: 1.5 s
        obs = tr.update(i, hidden, t)
        assert obs.changed == [] and obs.seats[2] == (("Ah", "Kd"), 2), i
        t += 1 / 12
    assert tr.update(22, row, t).changed == []  # the hand has gone: as it was
    t += 1 / 12
    # A brown hand joined to the row on green felt: as many cards, but the up cards read as backs.
    as_backs = [_card(2, k * 20, None, False, blob=7 + k, forward=-60) for k in range(4)]
    for i in range(100, 118):
        obs = tr.update(i, as_backs, t)
        assert obs.changed == [] and obs.seats[2] == (("Ah", "Kd"), 2), i
        t += 1 / 12
    assert tr.update(118, row, t).changed == []
    t += 1 / 12
    # The seat folds: its cards are gone, and stay gone.
    published = []
    start = t
    for i in range(23, 23 + 36):
        if tr.update(i, [], t).changed:
            published.append(t - start)
        t += 1 / 12
    assert len(published) == 1 and 2.0 <= published[0] < 2.0 + 3 / 12, published
    assert 2 not in tr.update(60, [], t).seats
    # Cards arriving (third street, then the showdown's turn-up) wait stable_frames, as ever.
    t += 1 / 12
    dealt = [_card(2, 0, "7c", blob=4, order=0), _card(2, -40, None, False, blob=5, forward=-60),
             _card(2, 30, None, False, blob=6, forward=-60)]
    changes = [tr.update(61 + k, dealt, t + k / 12).changed for k in range(3)]
    assert changes == [[], [], [2]]
    tabled = [_card(2, 0, "7c", blob=4, order=0), _card(2, 20, "8c", blob=4, order=1),
              _card(2, 40, "9c", blob=4, order=2)]
    changes = [tr.update(64 + k, tabled, t + (3 + k) / 12).changed for k in range(3)]
    assert changes == [[], [], [2]]
    for bad in (-1.0, float("nan")):
        with pytest.raises(ValueError, match="vanish_s must be 0 or more seconds"):
            Tracker(LAYOUT, vanish_s=bad)


def test_a_clock_set_back_starts_the_vanish_run_again() -> None:
    """The frames' clock jumping back (a camera restarted) cannot make a loss look old already."""
    tr = Tracker(LAYOUT, stable_frames=1, vanish_s=2.0)
    tr.update(0, [_card(4, 0, "9s")], 100.0)
    assert tr.update(1, [], 100.5).changed == []
    assert tr.update(2, [], 50.0).changed == []  # set back: the run starts here
    assert tr.update(3, [], 51.5).changed == []
    assert tr.update(4, [], 52.0).changed == [4]


def test_a_shaken_camera_is_held_then_read_once_the_shake_outlasts_shake_frames() -> None:
    """A bump on the table smears a few frames: what they show changes nothing published, at any
    seat, however many frames running it holds, up to ``shake_frames``; a camera that keeps shaking
    is read as it is after that (and the change still waits ``stable_frames``)."""
    # (vanish_s=0: the shaken reading replaces seats' up cards, which the tracker otherwise believes only
    # after vanish_s; that hold has its own test above)
    tr = Tracker(LAYOUT, stable_frames=2, shake_frames=6, vanish_s=0)
    base = [_card(1, 0, "Ah"), _card(3, 0, "9s")]
    smeared = [_card(1, 0, "Ac"), _card(3, 0, "8s"), _card(4, 0, "7d")]  # what a shaken frame might read
    for i in range(3):
        tr.update(i, base, i)
    for i in range(3, 9):  # six shaken frames: held
        obs = tr.update(i, smeared, i, shaken=True)
        assert obs.changed == [] and obs.seats == {1: (("Ah",), 0), 3: (("9s",), 0)}
    # A sharp frame ends the shake; the seats' candidates were never fed by the smeared frames.
    assert tr.update(9, base, 9).changed == []
    for i in range(10, 16):
        assert tr.update(i, smeared, i, shaken=True).changed == []
    # Still shaking past shake_frames: read through the blur, once it holds stable_frames.
    assert tr.update(16, smeared, 16, shaken=True).changed == []
    obs = tr.update(17, smeared, 17, shaken=True)
    assert obs.changed == [1, 3, 4] and obs.seats[4] == (("7d",), 0)
    with pytest.raises(ValueError, match="shake_frames must be 0 or more, got -1"):
        Tracker(LAYOUT, shake_frames=-1)


def test_observation_is_a_valid_wire_message() -> None:
    tr = Tracker(LAYOUT, stable_frames=1)
    obs = tr.update(7, [_card(1, 0, "Ah"), _card(1, 30, None, False, blob=2, forward=-60)], 0.0)
    body = obs.to_body()
    assert obs.to_payload()["kind"] == "observation"
    msg = wire.make("t1", wire.Channel.VISION, "observation", source="cam1", session=1, seq=1, **body)
    back = wire.decode(msg.topic, wire.encode(msg))
    assert back.body["seats"] == {"1": {"up": ["Ah"], "down": 1}}
    assert back.body["changed"] == [1]


def test_a_hand_over_real_frames_is_not_a_change(faces_dir) -> None:
    """Rendered frames, real detector: a skin-coloured hand sweeps over a seat for 8 frames."""
    d = faces_dir("anglo")
    scene = render_scene(FaceSet.load(d), 21, seats=4, street=5, all_active=True, close_up=False, off_felt=False,
                         half_turned=False)
    det = Detector(enrolled(d), calibrate(scene.image, scene.layout))
    tr = Tracker(scene.layout, stable_frames=4)
    truth = {n: (tuple(v["up"]), v["down"]) for n, v in scene.seats().items()}
    obs = None
    frames = [scene.image] * 5
    seat = scene.layout.seats[2]
    for k in range(8):  # the hand moves across the seat
        img = scene.image.copy()
        c = np.array(seat.center) + np.array(seat.right) * (k * 30 - 100)
        poly = c + np.array([[-90, -70], [90, -70], [90, 70], [-90, 70]])
        pts = cv2.perspectiveTransform(poly.reshape(-1, 1, 2), scene.table_to_image).reshape(-1, 2)
        cv2.fillConvexPoly(img, np.round(pts).astype(np.int32), (120, 150, 210))
        frames.append(img)
    frames += [scene.image] * 3
    changes = []
    for i, f in enumerate(frames):
        obs = tr.update(i, det.detect(f), i / 30, det.occluders)
        changes.append(obs.changed)
    assert obs is not None
    assert {n: v for n, v in obs.seats.items()} == truth
    assert all(c == [] for c in changes[5:])  # only the first settling counts as a change


def test_a_shaken_camera_over_real_frames_publishes_nothing_it_smeared(faces_dir) -> None:
    """Rendered frames, real detector: a still table, then the camera shakes (9 px of motion blur) while
    the felt shows another table.  The detector says each smeared frame is shaken; the tracker holds
    the first table through the shake (without the hold the second table's smeared reading would be
    published: it differs), then reads the second table once the camera is sharp again."""
    d = faces_dir("anglo")
    model = enrolled(d)
    fs = FaceSet.load(d)
    still = render_scene(fs, 80002, seats=4, street=5, all_active=True, close_up=False, off_felt=False,
                         half_turned=False)
    other = render_scene(fs, 80003, seats=4, street=5, all_active=True, close_up=False, off_felt=False,
                         half_turned=False, optics=lambda s: motion_blur(s.image, 9.0, 30.0))
    sharp_other = render_scene(fs, 80003, seats=4, street=5, all_active=True, close_up=False, off_felt=False,
                               half_turned=False)
    det = Detector(model, calibrate(still.image, still.layout), reuse=True)
    # (each rendered table has its own camera pose: the other table's frames are read through their own
    # calibration, into the same table millimetres; reuse, as the service: a smeared frame that repeats
    # is kept from memory, and stays shaken)
    det_b = Detector(model, calibrate(sharp_other.image, sharp_other.layout), reuse=True)
    assert sharp_other.layout == still.layout
    tr = Tracker(still.layout, stable_frames=3)
    truth = {n: (tuple(v["up"]), v["down"]) for n, v in still.seats().items()}
    for i in range(4):
        obs = tr.update(i, det.detect(still.image), i / 12, det.occluders, det.shaken)
        assert not det.shaken
    assert obs.seats == truth
    smeared_view, _ = raw_view(still.layout, det_b.detect(other.image))
    assert det_b.shaken and smeared_view != obs.seats
    for i in range(4, 12):
        obs = tr.update(i, det_b.detect(other.image), i / 12, det_b.occluders, det_b.shaken)
        assert det_b.shaken and obs.changed == [] and obs.seats == truth
    # sharp again: the other table's seats replace up cards, believed after vanish_s (2 s) and stable_frames
    for i in range(12, 12 + 24 + 3):
        obs = tr.update(i, det_b.detect(sharp_other.image), i / 12, det_b.occluders, det_b.shaken)
    assert not det_b.shaken
    assert obs.seats == {n: (tuple(v["up"]), v["down"]) for n, v in sharp_other.seats().items()}
