"""The demo's simulated camera (vision/camera_sim.py): the table it draws is the table it was
told, and the production pipeline (calibration from the printed markers, detection, tracking)
reads it back, including a hole card face up among the down cards and a card off the felt."""

from __future__ import annotations

import itertools
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from tests.vision.decks import enrolled
from vision.calibration import calibrate
from vision.camera_sim import TableCamera
from vision.detect import Detector
from vision.scene import FaceSet
from vision.tracking import Tracker


@pytest.fixture(scope="module")
def anglo(faces_dir: Callable[[str], Path]) -> tuple[FaceSet, Any]:
    d = faces_dir("anglo")
    return FaceSet.load(d), enrolled(d)


_CLOCK = itertools.count()  # the frames' clock runs on from one settle to the next, as a camera's does


def settle(camera: TableCamera, detector: Detector, tracker: Tracker, frames: int = 4) -> Any:
    obs = None
    for _ in range(frames):
        i = next(_CLOCK)
        obs = tracker.update(i, detector.detect(camera.frame()), i / 12, detector.occluders)
    return obs


def test_the_camera_reads_back_the_table_it_was_dealt(anglo: tuple[FaceSet, Any]) -> None:
    faces, model = anglo
    camera = TableCamera(faces, 5, seed=2)
    calib = calibrate(camera.frame(), camera.layout)
    assert calib.reprojection_mm < 1.0 and len(calib.markers_seen) >= 6
    codes = iter(["Ah", "Kd", "2c", "9s", "Th", "4d", "Qc", "7h", "3s", "8d", "Js", "5c", "6h", "Ad", "Ks",
                  "2h", "9c", "Td", "4s", "Qh", "7c", "3d", "8s", "Jh", "5d"])
    for _ in range(2):
        for seat in range(1, 6):
            camera.deal(seat, next(codes), False)
    for _ in range(3):
        for seat in range(1, 6):
            camera.deal(seat, next(codes), True)
    detector, tracker = Detector(model, calib, reuse=True), Tracker(calib.layout, 3)
    obs = settle(camera, detector, tracker)
    view = {n: {"up": list(up), "down": down} for n, (up, down) in obs.seats.items()}
    assert view == camera.truth()
    assert camera.truth()[1] == {"up": ["Js", "2h", "7c"], "down": 2}
    assert obs.irregular == []

    camera.muck(3)  # a fold: the dealer pulls the cards in
    obs = settle(camera, detector, tracker, 4 + 24)  # (cards gone are believed after Tracker.vanish_s, 2 s)
    assert 3 not in obs.seats and 3 not in camera.truth()


def test_a_hole_card_face_up_and_a_card_off_the_felt_are_what_the_camera_sees(
        anglo: tuple[FaceSet, Any]) -> None:
    faces, model = anglo
    camera = TableCamera(faces, 6, seed=4)
    calib = calibrate(camera.frame(), camera.layout)
    camera.deal(1, "Ah", True, spot="down")  # dealt face up where a down card belongs
    camera.deal(1, "7c", False)
    camera.pitch_off_felt(4, "Qs", False)
    detector, tracker = Detector(model, calib, reuse=True), Tracker(calib.layout, 3)
    obs = settle(camera, detector, tracker)
    assert obs.seats[1] == (("Ah",), 1)
    assert [(kind, seat) for kind, seat, _ in obs.irregular] == [("off_felt", 4)]
    assert camera.off_felt() == [(4, "Qs")]

    camera.move("Qs", 4, face_up=True, spot="up")  # the card plays as exposed
    obs = settle(camera, detector, tracker)
    assert obs.irregular == [] and obs.seats[4] == (("Qs",), 0)
    camera.clear()
    assert camera.truth() == {} and camera.off_felt() == []


def test_every_frame_has_fresh_sensor_noise_over_the_same_table(anglo: tuple[FaceSet, Any]) -> None:
    faces, _ = anglo
    camera = TableCamera(faces, 3, seed=1)
    a, b = camera.frame().astype(np.int16), camera.frame().astype(np.int16)
    assert a.shape == (1080, 1920, 3)
    diff = np.abs(a - b)
    assert diff.max() > 0  # not the same pixels twice
    assert diff.mean() < 6  # but the same picture


def test_a_seat_the_layout_lacks_is_refused(anglo: tuple[FaceSet, Any]) -> None:
    faces, _ = anglo
    camera = TableCamera(faces, 2, seed=1)
    with pytest.raises(ValueError, match="no seat 5"):
        camera.deal(5, "Ah", True)
    with pytest.raises(ValueError, match="spot must be"):
        camera.deal(1, "Ah", True, spot="rail")
    assert camera.truth() == {}


def test_the_common_card_in_the_middle_of_eight_seats_is_seen_as_the_common_card(
        anglo: tuple[FaceSet, Any]) -> None:
    """RRoP stud 15: the common card lies face up in the centre, in no seat's place; the tracker
    reports it as ``common`` (the engine deals it on a table without a shoe), not as a seat's card."""
    faces, model = anglo
    camera = TableCamera(faces, 8, seed=3)
    calib = calibrate(camera.frame(), camera.layout)
    for seat in range(1, 9):
        camera.deal(seat, "??", False)
    camera.deal(4, "9h", True)
    camera.deal_common("Qd")
    detector, tracker = Detector(model, calib, reuse=True), Tracker(calib.layout, 3)
    obs = settle(camera, detector, tracker)
    assert obs.irregular == [("common", None, "Qd")]
    assert {n: (up, down) for n, (up, down) in obs.seats.items()} == {
        n: (("9h",) if n == 4 else (), 1) for n in range(1, 9)}
    assert camera.common() == ["Qd"]
    camera.clear()
    assert settle(camera, detector, tracker).irregular == [] and camera.common() == []


def test_a_hand_tabled_face_up_at_the_showdown_reaches_the_engine_as_shown_not_exposed(
        anglo: tuple[FaceSet, Any]) -> None:
    """The real path of a showdown, without the bus: the players turn their down cards face up where
    they lie, the detector reads the table as the engine's showdown phase allows (tabled cards), the
    tracker's observation goes to the floor as the camera's view; no prompt opens (RRoP 3.6: a hand
    shown face up is not a hole card dealt face up), and the hands are then shown and the pot won."""
    from engine.scenario import run_scenario

    faces, model = anglo
    camera = TableCamera(faces, 2, seed=7)
    calib = calibrate(camera.frame(), camera.layout)
    dealt = {1: [("As", False), ("Ah", False), ("Kc", True), ("Kd", True), ("Ks", True), ("Ac", True), ("Qc", False)],
             2: [("2s", False), ("3d", False), ("4c", True), ("7h", True), ("8h", True), ("9h", True), ("Ts", False)]}
    for seat, cards in dealt.items():
        for code, up in cards:
            camera.deal(seat, code, up)
    camera.turn_up(1)
    camera.turn_up(2)
    assert camera.truth()[1] == {"up": ["Kc", "Kd", "Ks", "Ac", "As", "Ah", "Qc"], "down": 0}
    detector, tracker = Detector(model, calib, reuse=True), Tracker(calib.layout, 3)
    detector.at_showdown = True  # the engine's public state says showdown (vision.service.PhaseGate)
    obs = settle(camera, detector, tracker)
    view = {str(n): {"up": list(up), "down": down} for n, (up, down) in obs.seats.items()}
    assert {n: (sorted(v["up"]), v["down"]) for n, v in view.items()} == {
        str(n): (sorted(c for c, _ in cards), 0) for n, cards in dealt.items()}

    checks = [{"action": ["1 check", "2 check"]}] * 4  # Ann's kings are high from fourth street on
    result = run_scenario({
        "format": 1, "name": "a showdown as the camera sees it",
        "table": {"variant": "F7S", "ante": 1, "bring_in": 2, "small_bet": 5, "big_bet": 10,
                  "seats": [{"seat": 1, "name": "Ann", "stack": 200}, {"seat": 2, "name": "Bob", "stack": 200}]},
        "steps": [
            {"shoe": "As 2s Ah 3d Kc 4c"}, {"action": ["2 bring_in 2", "1 call"]},
            {"shoe": "5c Kd 7h"}, checks[0], {"shoe": "5d Ks 8h"}, checks[1], {"shoe": "5h Ac 9h"}, checks[2],
            {"shoe": "5s Qc Ts"}, {**checks[3], "expect": {"phase": "showdown"}},
            {"camera": view, "expect": {"opened": [], "prompts": [], "phase": "showdown"}},
            {"show": {"seat": 1, "cards": ["As", "Ah", "Qc"]}},
            {"show": {"seat": 2, "cards": ["2s", "3d", "Ts"]}, "expect": {"phase": "complete", "stacks": {"1": 203, "2": 197}}},
        ],
    })
    assert result["passed"], result["failures"]
