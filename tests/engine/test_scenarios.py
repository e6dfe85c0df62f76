"""Every scenario under tests/scenarios passes, through the CLI contract too, and
docs/rules.md is the generated view of the rule catalogue."""

from __future__ import annotations

import json
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from engine.irregularities import RULES
from engine.scenario import run_file

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
        assert r.id.split(".")[0] in ("stud", "razz", "stud8", "misdeal", "dead", "deck", "deal", "betting", "showdown", "source")
