"""The whole table end to end: embedded broker, engine, shoe simulator on a pty read by the
bridge, simulated dealer and players through console commands; every hand checked against
what the simulated shoe really dealt (dealer_console/demo/); the dealer and players press the
console's own widgets by accessible name."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from typing import Any

import pytest

from dealer_console.demo import DemoOptions, run_demo

CLI = [sys.executable, "-m", "engine.cli"]

# Whole tables played through the console's widgets (the double-tap guard paces the dealer as a
# finger would): seconds each, so they carry the slow marker (still in the default suite).
pytestmark = pytest.mark.slow

def assert_table_ok(result: dict[str, Any], hands: int, players: int = 6) -> None:
    assert result["failures"] == [], result
    assert result["ok"] is True
    assert result["hands_played"] == result["hands_verified"] == hands
    assert result["hands_in_store"] == hands  # the engine's hand log agrees
    assert result["chips"]["start"] == result["chips"]["end"] == players * 500
    assert result["irregularities"]["raised"] == result["irregularities"]["resolved"]
    # No irregularity the drill did not cause (e.g. a shoe reload taken for a sequence gap).
    assert result["irregularities"]["unexpected"] == []


def test_headless_hands_match_what_the_shoe_dealt() -> None:
    result = run_demo(DemoOptions(hands=3, seed=5))
    assert_table_ok(result, 3)
    # Every card went through the pty and the bridge; every decision through a console command.
    assert result["inputs"]["cards_drawn"] >= 3 * 19 and result["inputs"]["actions"] >= 3 * 2
    assert result["events"] > result["inputs"]["cards_drawn"]
    lat = result["latency_ms"]["card_drawn_to_state"]
    assert lat["n"] == result["inputs"]["cards_drawn"]
    assert 0 < lat["p50"] <= lat["p99"] < 1000


def test_no_prompt_at_all_when_nothing_goes_wrong() -> None:
    # The dealer reloads the shoe every hand (the bridge sends shoe_loaded): not a sequence gap.
    result = run_demo(DemoOptions(hands=3, seed=6, players=3))
    assert_table_ok(result, 3, players=3)
    assert result["irregularities"]["raised"] == 0 and result["inputs"]["rulings"] == 0


def test_premature_card_is_prompted_ruled_and_set_aside() -> None:
    result = run_demo(DemoOptions(hands=2, seed=3, drill="premature-card"))
    assert_table_ok(result, 2)
    drill = result["drill"]
    assert drill["name"] == "premature-card" and drill["ruling"] == "confirm"
    assert "will not play" in drill["text"]
    assert result["irregularities"]["by_rule"]["stud.premature-card"] == 1
    # The premature card and the cards set aside after the round are in the engine's record
    # (the per-hand check compares them with the draws, in order).  The set-aside draws follow
    # the state's next_deal; only the premature card itself was drawn without waiting for it.
    assert drill["live_players"] >= 2
    lat = result["latency_ms"]["card_drawn_to_state"]
    assert result["inputs"]["cards_drawn"] - lat["n"] == 1


def test_shoe_cable_pulled_mid_hand_loses_and_duplicates_nothing() -> None:
    # The shoe alone: a camera starved on a busy machine would add its own offline prompts.
    result = run_demo(DemoOptions(hands=2, seed=4, drill="shoe-cable", camera=False))
    assert_table_ok(result, 2)
    drill = result["drill"]
    assert drill["name"] == "shoe-cable"
    assert drill["events_kept_in_shoe"] >= 1  # the card drawn while unplugged waited in the shoe
    assert drill["card_delivered_after_reconnect"] is True
    assert drill["console_saw_offline_after_s"] < 5
    assert result["irregularities"]["by_rule"].get("source.offline") == 1


def test_broker_restart_mid_hand_resumes_with_nothing_lost() -> None:
    result = run_demo(DemoOptions(hands=2, seed=7, players=4, drill="broker-restart"))
    assert_table_ok(result, 2, players=4)
    drill = result["drill"]
    assert drill["name"] == "broker-restart"
    assert drill["broker_down_s"] >= 1.0
    assert drill["state_same_after_restart"] is True


def test_cli_headless_prints_one_json_summary_and_exits_0() -> None:
    done = subprocess.run([*CLI, "demo", "--headless", "--hands", "2", "--seed", "11", "--variant", "razz",
                           "--players", "4"], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.strip().splitlines()
    assert len(lines) == 1
    result = json.loads(lines[0])
    assert result["ok"] and result["variant"] == "FR" and result["hands_verified"] == 2


def test_cli_refuses_a_bad_player_count_in_plain_words() -> None:
    done = subprocess.run([*CLI, "demo", "--headless", "--players", "9"], capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 2
    assert "--players must be 2 to 8" in done.stderr


def test_without_a_display_the_demo_says_so_and_prints_the_hands() -> None:
    env = {k: v for k, v in os.environ.items() if k not in ("DISPLAY", "WAYLAND_DISPLAY", "QT_QPA_PLATFORM")}
    done = subprocess.run([*CLI, "demo", "--hands", "1", "--seed", "2"], capture_output=True, text=True,
                          timeout=300, env=env)
    assert done.returncode == 0, done.stderr
    assert "no display here" in done.stderr and "runs headless" in done.stderr
    out = done.stdout
    assert "Hand 1: Seven-card stud" in out and "third street" in out and " wins " in out
    assert json.loads(out.strip().splitlines()[-1])["ok"] is True
    # The terminal shows what the monitor shows: down cards as xx until they are shown.
    assert " xx " in out or "[xx" in out


def test_windows_with_autoplay_play_a_hand_offscreen() -> None:
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen"}
    done = subprocess.run([*CLI, "demo", "--autoplay", "--pace", "0", "--hands", "1", "--seed", "9"],
                          capture_output=True, text=True, timeout=300, env=env)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "Hand 1:" in done.stdout and " wins " in done.stdout


def test_manual_table_every_card_keyed_on_the_console_picker() -> None:
    """No shoe, no camera: the simulated dealer keys every card on the 52-card picker (seat and
    up/down preset by the engine's next card due), shows on the picker too, and every hand checks."""
    result = run_demo(DemoOptions(hands=2, seed=13, players=3, manual=True))
    assert_table_ok(result, 2, players=3)
    assert result["inputs"]["cards_drawn"] == 0 and result["inputs"]["cards_keyed"] >= 2 * 3 * 3
    assert result["camera"] is None and result["bridge"].startswith("none")
    assert result["console"]["taps"] > result["inputs"]["cards_keyed"] and result["console"]["taps_swallowed_by_guard"] == 0


@pytest.mark.skipif(not __import__("vision.deckart", fromlist=["AISLERIOT_DIR"]).AISLERIOT_DIR.is_dir(),
                    reason="Debian's gnome-cards-data (the camera's card art) is not installed")
def test_camera_only_table_the_camera_deals_and_the_hole_cards_are_keyed_when_shown() -> None:
    """No shoe (issue 21, 12): the simulated dealer lays each card on the felt from a deck in hand;
    the production vision pipeline reads it and the engine takes it as the deal in the deal's
    order; down cards stay unknown ("??" in the hand log) until the player shows them, keyed on
    the picker.  Seed 5 deals a seat the same door card two hands running, which the stale-picture
    filter used to skip (the table then hung on that card)."""
    result = run_demo(DemoOptions(hands=3, seed=5, players=7, no_shoe=True))
    assert_table_ok(result, 3, players=7)
    assert result["inputs"]["cards_drawn"] == 0 and result["inputs"]["cards_laid"] >= 3 * 7 * 3
    assert result["inputs"]["shows"] >= 1 and result["bridge"].startswith("none (a camera-only")
    assert result["camera"]["hands_checked"] == 3


#: Nobody folds: eight players reach seventh street with one card left (RRoP stud 15).
NO_FOLDS = {"fold": 0, "check": 6, "call": 6, "bring_in": 6, "complete": 1, "bet": 1, "raise": 1}


def assert_common_card_hands(result: dict[str, Any], hands: int) -> None:
    """Every hand ran out of cards: the engine counted the burns nobody reported (three, unknown),
    prompted on seventh street, the dealer tapped prompt.option.common and the common card played."""
    assert_table_ok(result, hands, players=8)
    assert result["irregularities"]["by_rule"] == {"stud.out-of-cards": hands}
    assert result["out_of_cards"] == {"hands": hands, "common_card": hands, "reshuffled": 0}
    assert result["inputs"]["out_of_cards_common"] == hands and result["inputs"]["common_cards"] == hands
    assert result["inputs"]["burns_unreported"] == 3 * hands  # no burn before the last card: 1 was left
    assert result["inputs"]["cards_drawn"] == 0


def test_manual_table_of_eight_runs_out_of_cards_and_keys_the_common_card() -> None:
    """Issue 21, 12: a manual table seats eight.  The dealer burns from the deck in hand and keys
    no burn; the engine counts them, so on seventh street one card is left for eight players and
    the out-of-cards prompt opens (the old code refused eight players, and without the burns it
    saw four cards left and refused the first seventh card).  The common card is keyed on the
    picker (the manual panel reads "Common card") and every hand checks against the truth."""
    result = run_demo(DemoOptions(hands=1, seed=2, players=8, manual=True, action_weights=NO_FOLDS))
    assert_common_card_hands(result, 1)
    assert result["inputs"]["cards_keyed"] == 8 * 6  # and the common card (common_cards)


@pytest.mark.skipif(not __import__("vision.deckart", fromlist=["AISLERIOT_DIR"]).AISLERIOT_DIR.is_dir(),
                    reason="Debian's gnome-cards-data (the camera's card art) is not installed")
def test_camera_only_table_of_eight_runs_out_of_cards_and_the_camera_sees_the_common_card() -> None:
    """Issue 21, 12: a camera-only table seats eight; the common card the dealer turns up in the
    middle of the felt is read by the production vision pipeline and plays for everyone."""
    result = run_demo(DemoOptions(hands=1, seed=3, players=8, no_shoe=True, action_weights=NO_FOLDS))
    assert_common_card_hands(result, 1)
    assert result["inputs"]["cards_laid"] == 8 * 6 and result["camera"]["hands_checked"] == 1
