"""Every scenario under tests/scenarios passes, through the CLI contract too, and
docs/rules.md is the generated view of the rule catalogue."""

from __future__ import annotations

import json
import subprocess
import sys
import tomllib
from pathlib import Path
from typing import Any

import pytest

from engine.irregularities import RULES
from engine.scenario import run_file, run_scenario

ROOT = Path(__file__).resolve().parents[2]
SCENARIOS = sorted((ROOT / "tests" / "scenarios").glob("*.toml"))

# Rule ids that have no scenario yet (docs/rules.md says so too).  This list may only shrink.
PENDING: set[str] = {r.id for r in RULES} - {
    rid for p in SCENARIOS for rid in tomllib.loads(p.read_text()).get("rules", [])
}


def test_every_rule_id_has_a_scenario() -> None:
    assert not PENDING, f"rule ids without a scenario: {sorted(PENDING)}"


@pytest.mark.parametrize("path", SCENARIOS, ids=lambda p: p.stem)
def test_scenario(path: Path) -> None:
    result = run_file(path)
    assert result["passed"], result["failures"]
    assert result["rules"], "a scenario names the rule ids it covers"
    assert set(result["rules"]) <= {r.id for r in RULES}


def test_scenario_cli_contract(tmp_path: Path) -> None:
    broken = tmp_path / "broken.toml"
    broken.write_text('name = "wrong expectation"\n[table]\nvariant = "F7S"\nante = 1\nbring_in = 2\n'
                      'small_bet = 5\nbig_bet = 10\nseats = [{seat = 1, name = "A", stack = 100}, '
                      '{seat = 2, name = "B", stack = 100}]\n[[steps]]\nexpect = {phase = "betting"}\n')
    files = [str(SCENARIOS[0]), str(broken)]
    proc = subprocess.run([sys.executable, "-m", "engine.cli", "scenario", "run", *files],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 1
    lines = [json.loads(line) for line in proc.stdout.splitlines()]
    assert [line["passed"] for line in lines] == [True, False]
    assert "phase: expected 'betting', got 'dealing'" in lines[1]["failures"][0]
    assert lines[0]["outputs"]["stacks"]


def test_rules_doc_is_generated_from_the_catalogue() -> None:
    proc = subprocess.run([sys.executable, str(ROOT / "docs" / "gen_rules.py"), "--check"],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stdout


def test_every_rule_id_is_unique_and_cited() -> None:
    ids = [r.id for r in RULES]
    assert len(ids) == len(set(ids))
    for r in RULES:
        assert r.clause and r.ruling and r.handling in ("detected", "reported", "enforced", "advisory")
        assert r.id.split(".")[0] in ("stud", "razz", "stud8", "misdeal", "dead", "deck", "deal", "betting", "showdown", "source", "table")


# ----------------------------------------------------------- the format's additions

TABLE = (
    '[table]\nvariant = "F7S"\nante = 1\nbring_in = 2\nsmall_bet = 5\nbig_bet = 10\n'
    'seats = [{seat = 1, name = "Ann", stack = 200}, {seat = 2, name = "Bob", stack = 200}, '
    '{seat = 3, name = "Cy", stack = 200}]\n'
)


def _run(steps: str) -> dict[str, Any]:
    return run_scenario(tomllib.loads('format = 1\nname = "t"\nrules = ["stud.announcements"]\n' + TABLE + steps))


def test_prompt_options_checks_the_labels_offered() -> None:
    steps = (
        '[[steps]]\nshoe = "As Ks Qs Ah Kh Qh 2c 9d Tc"\n'
        '[[steps]]\nreport = {report = "misdeal"}\n'
        'expect = {prompt_options = {"misdeal.exposed-first-cards" = ["Misdeal", "Play on"]}}\n'
    )
    assert _run(steps)["failures"] == []
    wrong = _run(steps.replace('"Play on"]', '"Redeal"]'))
    assert wrong["failures"] == [
        "step 2: prompt_options of misdeal.exposed-first-cards: expected ['Misdeal', 'Redeal'], "
        "got ['Misdeal', 'Play on']"
    ]
    none_open = _run(steps.replace("misdeal.exposed-first-cards", "misdeal.boxed-cards"))
    assert none_open["failures"] == ["step 2: prompt_options: no misdeal.boxed-cards prompt is open"]


def test_announced_is_what_this_step_said_in_order() -> None:
    deal = '[[steps]]\nshoe = "As Ks Qs Ah Kh Qh 2c 9d Tc"\nexpect = {announced = ["Deuce of clubs brings it in"]}\n'
    bets = '[[steps]]\naction = ["1 bring_in 2", "2 complete 5", "3 raise 10"]\n'
    said = '["brings it in for 2", "completes to 5", "Raise: seat 3 to 10"]'
    assert _run(deal + bets + f"expect = {{announced = {said}}}\n")["failures"] == []
    # Not in this order, not only some of them, not an earlier step's.
    for wrong in ('["completes to 5", "brings it in for 2", "Raise: seat 3 to 10"]',
                  '["Raise: seat 3 to 10"]', '["Deuce of clubs brings it in", "brings it in for 2", '
                  '"completes to 5", "Raise: seat 3 to 10"]'):
        failures = _run(deal + bets + f"expect = {{announced = {wrong}}}\n")["failures"]
        assert len(failures) == 1 and failures[0].startswith("step 2: announced: expected"), failures


def test_down_cards_are_the_identities_the_engine_holds() -> None:
    deal = '[[steps]]\nshoe = "As Ks Qs Ah Kh Qh 2c 9d Tc"\n'
    ok = _run(deal + 'expect = {down_cards = {"1" = ["As", "Ah"], "3" = ["Qs", "Qh"]}}\n')
    assert ok["failures"] == []
    wrong = _run(deal + 'expect = {down_cards = {"2" = ["Kh", "Ks"]}}\n')
    assert wrong["failures"] == ["step 1: down cards of seat 2: expected ['Kh', 'Ks'], got ['Ks', 'Kh']"]


def test_a_failing_step_fails_alone_and_the_file_runs_on() -> None:
    steps = (
        '[[steps]]\nshoe = "As Ks Qs Ah Kh Qh 2c 9d Tc"\n'
        '[[steps]]\nnote = "no prompt is open"\nruling = {prompt = "$last", option = "confirm"}\n'
        '[[steps]]\naction = "1 bring_in 2"\nexpect = {to_act = 3}\n'
        '[[steps]]\naction = "2 call"\nexpect = {to_act = 3}\n'
    )
    result = _run(steps)
    assert result["steps"] == 4
    assert result["failures"] == [
        "step 2: refused: ruling on $last, but no prompt is open",
        "step 3: to_act: expected 3, got 2",
    ]
    expected_refusal = _run(steps.replace('option = "confirm"}', 'option = "confirm"}\nexpect = {error = "no prompt"}'))
    assert expected_refusal["failures"] == ["step 3: to_act: expected 3, got 2"]
