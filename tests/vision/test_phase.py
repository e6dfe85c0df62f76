"""Session 12: cards tabled at the showdown are read only when the engine's public state says they may lie
on the felt (vision.service.PhaseGate, vision.detect.Detector.at_showdown).

The phase comes the real way: the engine's retained ``public/state`` on a real broker, to the vision
login (whose ACL now lets it read that public topic), through the bus client and ``state_listener``
into the production core.  The frames are a showdown on the tuning deck anglo (two seats' fans, the
other seats' seventh-street rows) and stud streets.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from engine import wire
from engine.bus import BusClient
from engine.cli import main
from engine.publicstate import idle_state
from engine.wire import Channel, Role
from tests.support.mqtt import TestClient
from tests.vision.decks import enrolled
from vision.calibration import Calibration, calibrate
from vision.deck import DeckModel
from vision.detect import PARAMS, Detection, Detector
from vision.scene import FaceSet, Scene
from vision.scene_showdown import TabledCard, render_showdown
from vision.service import PHASE_STALE_S, PhaseGate, VisionCore, state_listener, tabled_allowed
from vision.tracking import Tracker

T = "t1"


def state(phase: str, shown: tuple[int, ...] = ()) -> dict[str, Any]:
    """A public state as the engine publishes it, at ``phase``; ``shown``: seats that showed cards."""
    base = idle_state(T).to_json()
    seats = [{"seat": n, "name": f"P{n}", "stack": 100, "sitting_out": False, "in_hand": True, "status": "active",
              "bet": 0, "committed": 2, "up": ["Ah"], "down_count": 2, "shown": ["Kd", "Kc"] if n in shown else [],
              "cards": [{"card": "Kd" if n in shown else "??", "up": False}, {"card": "Kc" if n in shown else "??", "up": False},
                        {"card": "Ah", "up": True}], "last_action": ""} for n in (1, 2)]
    return dict(base, phase=phase, hand_id=7, seats=seats)


# -- the gate alone (pure) ----------------------------------------------------------------------


def test_the_phase_says_when_cards_may_lie_tabled() -> None:
    assert [tabled_allowed(p) for p in ("dealing", "betting", "showdown", "complete", "idle")] == \
        [False, False, True, True, True]
    assert tabled_allowed("betting", shown=True)  # a player showed his cards during the hand (RRoP 3.6)
    assert tabled_allowed("some-new-phase") is None  # not known here: as if nothing were heard


def test_the_gate_from_unheard_to_stale() -> None:
    gate = PhaseGate(stale_s=10.0)
    assert gate.at_showdown(0.0) is None  # nothing heard: tabled cards read as the params say
    gate.observe(state("betting"), 1.0)
    assert gate.at_showdown(1.5) is False
    gate.observe(state("betting", shown=(2,)), 2.0)
    assert gate.at_showdown(2.5) is True
    gate.observe(state("showdown"), 3.0)
    assert gate.at_showdown(12.9) is True
    # The engine gone for longer than a state can be old: rows only, not the showdown for ever ...
    assert gate.at_showdown(13.1) is False
    # ... until it speaks again.
    gate.observe(state("complete"), 20.0)
    assert gate.at_showdown(20.0) is True
    gate.observe({"phase": 3}, 21.0)  # (a state this service cannot read: as unheard, not as the last one)
    assert gate.at_showdown(21.0) is None
    assert PHASE_STALE_S >= 10 * 1.0  # many of the engine's refreshes (at least one a second while the camera reports)


# -- the detector's flag -------------------------------------------------------------------------


@pytest.fixture(scope="module")
def showdown(faces_dir: Callable[[str], Path]) -> tuple[Scene, DeckModel, Calibration]:
    """Seats 4 and 5 fan seven cards each, every index showing; the other seats lie as on seventh street."""
    directory = faces_dir("anglo")
    scene = render_showdown(FaceSet.load(directory), 1, arrangement="fan")
    return scene, enrolled(directory), calibrate(scene.image, scene.layout)


def _fans(scene: Scene) -> list[TabledCard]:
    return [c for c in scene.cards if isinstance(c, TabledCard) and c.in_view]


def _on(card: TabledCard, dets: list[Detection]) -> bool:
    return any(d.card == card.code and float(np.linalg.norm(d.center - card.center)) < 20 for d in dets)


def _key(dets: list[Detection]) -> list[tuple[object, ...]]:
    return [(d.card, d.face_up, tuple(np.round(d.center, 1))) for d in dets]


def test_a_street_frame_is_read_without_tabled_cards_and_a_showdown_frame_with_them(showdown: Any) -> None:
    scene, model, calib = showdown
    fans = _fans(scene)
    assert {c.seat for c in fans} == {4, 5} and len(fans) == 14
    det = Detector(model, calib)
    det.at_showdown = True
    at_showdown = det.detect(scene.image)
    assert all(_on(c, at_showdown) for c in fans)
    det.at_showdown = False  # the same picture as if a street were being bet: the fans are no cards
    on_street = det.detect(scene.image)
    assert not any(_on(c, on_street) for c in fans)
    # ... and everything else is read as the detector without the tabled reading reads it.
    without = Detector(model, calib, params=replace(PARAMS, tabled=False)).detect(scene.image)
    assert _key(on_street) == _key(without)
    det.at_showdown = None  # nobody said (a photo): as the params say, as before the gate
    assert _key(det.detect(scene.image)) == _key(at_showdown)
    # The master switch stays the master: no tabled reading, whatever the phase.
    off = Detector(model, calib, params=replace(PARAMS, tabled=False))
    off.at_showdown = True
    assert _key(off.detect(scene.image)) == _key(without)


def test_a_row_is_not_read_again_as_tabled_cards_on_a_street(faces_dir: Callable[[str], Path]) -> None:
    """Tight and reversed fans (seed 2) pass for stud rows: the tabled reading reads those rows again as
    tabled cards (``_tabled_rows``) at the showdown; on a street no row is read again."""
    directory = faces_dir("anglo")
    scene = render_showdown(FaceSet.load(directory), 2, arrangement="fan")
    model, calib = enrolled(directory), calibrate(scene.image, scene.layout)
    rows_only = _key(Detector(model, calib, params=replace(PARAMS, tabled=False)).detect(scene.image))
    det = Detector(model, calib)
    det.at_showdown = True
    assert _key(det.detect(scene.image)) != rows_only  # (the positive control: rows read again)
    det.at_showdown = tabled_allowed("dealing")
    assert _key(det.detect(scene.image)) == rows_only


def test_a_reused_blob_does_not_keep_its_tabled_reading_into_the_street(showdown: Any) -> None:
    """The service's detector keeps an unchanged blob's cards from the last frame: a fan read at the
    showdown must not stay read when the next state says a street is on (the same picture)."""
    scene, model, calib = showdown
    det = Detector(model, calib, reuse=True)
    det.at_showdown = True
    det.detect(scene.image)
    assert all(_on(c, det.detect(scene.image)) for c in _fans(scene))  # (reused, still read)
    det.at_showdown = False
    assert not any(_on(c, det.detect(scene.image)) for c in _fans(scene))


def test_the_cli_says_the_phase(showdown: Any, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`vision detect` reads the showdown's fans (the contract: any picture of cards) unless told the
    picture is of a street."""
    import cv2

    from vision.deck import save

    scene, model, _calib = showdown
    image, deck = tmp_path / "showdown.png", tmp_path / "anglo.deck"
    cv2.imwrite(str(image), scene.image)
    save(model, deck)
    read = {}
    for phase in ("unknown", "street"):
        assert main(["vision", "detect", "--deck", str(deck), *(["--phase", phase] if phase != "unknown" else []),
                     str(image)]) == 0
        read[phase] = {c["card"] for c in json.loads(capsys.readouterr().out)["cards"]}
    fan_codes = {c.code for c in _fans(scene)}
    assert fan_codes <= read["unknown"]
    assert not fan_codes & read["street"]


# -- the service on a real broker ----------------------------------------------------------------


def _vision_bus(broker: Any, gate: PhaseGate, device: str = "cam-1") -> BusClient:
    user, password = broker.login(Role.VISION, device)
    bus = BusClient(host=broker.host, port=broker.port, username=user, password=password, table=T, device=device,
                    role=Role.VISION, session=1, on_message=state_listener(gate))
    bus.subscribe(Channel.STATE)
    return bus.start()


def _publish_state(engine: TestClient, phase: str, seq: int) -> None:
    msg = wire.make(T, Channel.STATE, "state", source="engine", session=1, seq=seq, state=state(phase))
    engine.publish(msg.topic, wire.encode(msg), retain=True)


def _wait(predicate: Callable[[], bool], timeout: float = 10.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.02)
    return predicate()


@pytest.fixture
def engine_client(mqtt_broker: Any) -> Iterator[TestClient]:
    client = TestClient(mqtt_broker, "engine", "engine")
    assert client.connected()
    yield client
    client.close()


def test_the_vision_login_hears_the_public_state_on_both_brokers(mqtt_broker: Any, engine_client: TestClient) -> None:
    """The vision role may read public/state (the ACL from engine/wire.py CHANNELS), on mosquitto and amqtt:
    a retained showdown reaches a vision service that connects late, and a street after it."""
    _publish_state(engine_client, "showdown", 1)
    gate = PhaseGate()
    bus = _vision_bus(mqtt_broker, gate)
    try:
        assert _wait(lambda: gate.heard is not None), "the vision login heard no public state"
        assert gate.at_showdown(time.monotonic()) is True
        _publish_state(engine_client, "betting", 2)
        assert _wait(lambda: gate.at_showdown(time.monotonic()) is False)
    finally:
        bus.stop()


def test_the_service_reads_tabled_cards_only_at_the_showdown(showdown: Any, mosquitto_broker: Any) -> None:
    """The production core fed by the bus: on a street (the engine says betting) the fans are no cards in
    what it publishes and the rows are read; at the showdown the fans' cards are published; a vision service
    restarted mid-showdown hears the retained state at once and reads them on its first frames."""
    scene, model, calib = showdown
    engine = TestClient(mosquitto_broker, "engine", "engine")
    assert engine.connected()
    _publish_state(engine, "betting", 1)

    def run(device: str, frames: int, sent: list[wire.Message]) -> VisionCore:
        core = VisionCore(Detector(model, calib, reuse=True), Tracker(calib.layout, 2), sent.append, T, device,
                          session=1, heartbeat_frames=1, expect_state=True)
        bus = _vision_bus(mosquitto_broker, core.gate, device)
        try:
            assert _wait(lambda: core.gate.heard is not None)
            for _ in range(frames):
                core.on_frame(scene.image, time.monotonic())
        finally:
            bus.stop()
        return core

    def seat_up(sent: list[wire.Message], seat: int) -> set[str]:
        last = [m for m in sent if m.channel is Channel.VISION][-1]
        return set(last.body["seats"].get(str(seat), {}).get("up", []))

    truth = {n: v for n, v in scene.seats().items() if n not in (4, 5)}
    fans = {seat: {c.code for c in _fans(scene) if c.seat == seat} for seat in (4, 5)}
    try:
        street: list[wire.Message] = []
        run("cam-1", 3, street)
        assert all(not seat_up(street, seat) & fans[seat] for seat in (4, 5))
        last = [m for m in street if m.channel is Channel.VISION][-1].body["seats"]
        assert {int(n): v for n, v in last.items() if int(n) in truth} == \
            {n: {"up": v["up"], "down": v["down"]} for n, v in truth.items()}

        _publish_state(engine, "showdown", 2)  # the hand reaches the showdown; the service restarts meanwhile
        shown: list[wire.Message] = []
        core = run("cam-1", 3, shown)
        assert core.detector.at_showdown is True
        assert all(fans[seat] <= seat_up(shown, seat) for seat in (4, 5))
    finally:
        engine.close()
