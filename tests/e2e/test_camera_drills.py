"""The camera's whole path in the demo table: a simulated overhead camera (Aisleriot card art,
rendered as the simulated dealer lays the cards) read by the production vision pipeline in its
own process, publishing on the bus to the engine, whose floor compares the view with the hand.

The drills are the irregularities only the camera can see (a hole card dealt face up, a card
off the felt) and the camera's own fault (it stops delivering frames)."""

from __future__ import annotations

from typing import Any

import pytest

from dealer_console.demo import DemoError, DemoOptions, run_demo
from tests.e2e.test_demo import assert_table_ok
from vision.deckart import AISLERIOT_DIR

pytestmark = [pytest.mark.slow, pytest.mark.skipif(not AISLERIOT_DIR.is_dir(),
                                reason="Debian's gnome-cards-data (the camera's card art) is not installed")]


def read_fraction(camera: dict[str, Any], key: str) -> float:
    got, total = (int(x) for x in camera[key].split("/"))
    assert total > 0
    return got / total


def test_camera_reads_the_table_as_dealt_every_hand() -> None:
    result = run_demo(DemoOptions(hands=3, seed=12, players=5))
    assert_table_ok(result, 3, players=5)
    cam = result["camera"]
    assert cam["frames"] > 20 and cam["offline_episodes"] == 0
    assert cam["hands_checked"] == 3
    # At the end of each hand the service's stable view is compared with what lies on the felt.
    assert read_fraction(cam, "up_cards_read") >= 0.95, cam
    assert read_fraction(cam, "down_cards_found") >= 0.95, cam
    assert cam["hands_agreeing"] >= 2, cam["differences"]


def test_hole_card_dealt_face_up_is_seen_by_the_camera_and_ruled() -> None:
    result = run_demo(DemoOptions(hands=2, seed=6, drill="exposed-holecard"))
    assert_table_ok(result, 2)
    drill = result["drill"]
    assert drill["name"] == "exposed-holecard" and drill["ruling"] == "confirm"
    # The shoe dealt it down; only the camera saw it land face up.
    assert result["irregularities"]["by_rule"] == {"stud.exposed-holecard": 1}
    assert drill["camera_raised_after_s"] < 10
    assert "third card face down" in drill["text"]
    # RRoP stud 5: it plays as the up card; the seat's other cards came down (the hand check
    # compares every card's face with the shoe's deal and the state's next_deal).
    assert drill["card_plays_up"] is True


def test_card_off_the_felt_is_seen_by_the_camera_and_plays_as_exposed() -> None:
    result = run_demo(DemoOptions(hands=2, seed=4, drill="card-off-table"))
    assert_table_ok(result, 2)
    drill = result["drill"]
    assert drill["name"] == "card-off-table"
    assert result["irregularities"]["by_rule"] == {"stud.card-off-table": 1}
    assert "went off the table" in drill["text"]
    assert drill["card_plays_up"] is True


def test_camera_stall_mid_hand_is_a_prompt_and_the_hand_completes() -> None:
    result = run_demo(DemoOptions(hands=2, seed=8, players=4, drill="camera-stall"))
    assert_table_ok(result, 2, players=4)
    drill = result["drill"]
    assert drill["name"] == "camera-stall"
    assert result["irregularities"]["by_rule"] == {"source.offline": 1}
    assert drill["offline_seen_after_s"] < 10
    assert drill["frames_while_stalled"] == 0 and "online_again_after_s" in drill
    cam = result["camera"]
    assert cam["offline_episodes"] == 1
    # Back online, the camera's view caught up with the felt by the end of the hand.
    assert cam["hands_checked"] == 2 and read_fraction(cam, "up_cards_read") >= 0.9


def test_camera_drills_need_the_camera() -> None:
    with pytest.raises(DemoError, match="needs the camera"):
        DemoOptions(drill="camera-stall", camera=False).check()


def test_without_card_art_the_camera_says_so_and_the_table_plays(monkeypatch: pytest.MonkeyPatch,
                                                                  tmp_path: Any, capfd: pytest.CaptureFixture[str]) -> None:
    """Without Debian's Aisleriot art the camera draws studtable's own plain cards (vision/plain_deck.py)
    and the demo says, in one line, what to install for the real art; the table plays as always."""
    import vision.deckart

    monkeypatch.setattr(vision.deckart, "AISLERIOT_DIR", tmp_path / "no-cards-here")
    result = run_demo(DemoOptions(hands=1, seed=2, players=3))
    assert_table_ok(result, 1, players=3)
    err = capfd.readouterr().err
    assert "plain cards" in err and "gnome-cards-data" in err and "apt-get install" in err
