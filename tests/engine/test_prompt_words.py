"""Prompts and rulings in words (issue 21, 8): every prompt's text has its blanks filled, rulings
cite Robert's Rules by section and rule in words (never the project's seed numbers or DESIGN),
refusals too, and several "device offline" reports for one device are one prompt."""

from __future__ import annotations

import re

import pytest

from engine.citations import cite, in_words
from engine.floor import FloorOutputs
from engine.irregularities import RULES
from engine.scenario import build_floor

PROJECT_IDS = re.compile(r"\b00\d\b|RRoP|DESIGN|\{|\}")


def _floor():  # type: ignore[no-untyped-def]
    floor, _ = build_floor({"id": "t1", "variant": "F7S", "ante": 1, "bring_in": 2, "small_bet": 5, "big_bet": 10,
                            "seats": [{"seat": 1, "name": "Ann", "stack": 100}, {"seat": 3, "name": "Bob", "stack": 100}]})
    for code in ("As", "Kd", "Qh", "2c", "7h", "9d"):
        floor.handle({"kind": "shoe_card", "card": code})
    return floor


@pytest.mark.parametrize("rule", [r for r in RULES if r.handling != "enforced"], ids=lambda r: r.id)
@pytest.mark.parametrize("seats", [(), (3,)], ids=["no seat", "seat 3"])
def test_every_prompt_text_has_its_blanks_filled(rule, seats) -> None:  # type: ignore[no-untyped-def]
    floor = _floor()
    prompt = floor._open(rule.id, seats, FloorOutputs())
    text = prompt.text
    assert "{" not in text and "}" not in text, text
    assert "  " not in text and " ." not in text and " 's" not in text and "Seat 's" not in text, text
    if seats and "{seat}" in rule.ruling:
        assert "3" in text
    wire = prompt.to_json()
    assert wire["clause"] == cite(rule.clause) and not PROJECT_IDS.search(wire["clause"]), wire["clause"]
    assert prompt.to_wire()["clause"] == wire["clause"]


@pytest.mark.parametrize("rule", RULES, ids=lambda r: r.id)
def test_every_clause_is_cited_in_words(rule) -> None:  # type: ignore[no-untyped-def]
    words = cite(rule.clause)
    assert words.startswith(("Robert's Rules, ", "studtable: ")), (rule.clause, words)
    assert not PROJECT_IDS.search(words), (rule.clause, words)


def test_citations_read_as_the_book_numbers_them() -> None:
    assert cite("001 stud 5; 002 8.1; 000 stud 1") == "Robert's Rules, seven-card stud, rule 5"
    assert cite("RRoP stud 7") == "Robert's Rules, seven-card stud, rule 7"
    assert cite("002 3.6") == "Robert's Rules, the showdown, section 3.6"
    assert cite("002 3.3(d); 3.6") == "Robert's Rules, dead hands, section 3.3(d); the showdown, section 3.6"
    assert cite("DESIGN (sensors may fail mid-game)") == "studtable: sensor offline"
    assert cite("DESIGN (sequence numbers)") == "studtable: messages counted in sequence"
    assert in_words("a seat changes only between hands; hand #1 is still live [RRoP 3.1]") == (
        "a seat changes only between hands; hand #1 is still live [Robert's Rules, the buy-in, section 3.1]")
    assert in_words("seat 3 is out of the hand [engine.show]") == "seat 3 is out of the hand"


def test_a_refusal_reaches_the_dealer_in_words() -> None:
    from engine.service import EngineConfig, EngineCore

    core = EngineCore(EngineConfig.from_dict({
        "table": "t1", "game": {"variant": "F7S", "ante": 1, "bring_in": 2, "small_bet": 5, "big_bet": 10},
        "seats": [{"seat": 1, "name": "Ann", "stack": 100}, {"seat": 2, "name": "Bob", "stack": 100}],
        "store": {"url": ":memory:"}}))
    for inp in core.setup_inputs():
        core.apply("engine", inp)
    core.apply("engine", {"kind": "table", "op": "start_hand"})
    assert core.apply("console-1", {"kind": "table", "op": "move", "seat": 1, "to": 5}) is None
    reason = core.last_error["reason"] if core.last_error else ""
    assert "between hands" in reason and "Robert's Rules, the buy-in, section 3.1" in reason
    assert not PROJECT_IDS.search(reason), reason


def test_several_offline_reports_for_one_device_are_one_prompt() -> None:
    floor = _floor()
    for status in ("offline", "online", "offline", "online", "offline"):
        floor.handle({"kind": "source", "device": "shoe-1", "status": status})
    floor.handle({"kind": "source", "device": "cam-1", "status": "offline"})
    offline = [p for p in floor.prompts.values() if p.rule.id == "source.offline"]
    assert sorted(p.data["device"] for p in offline) == ["cam-1", "shoe-1"]
    shoe = next(p for p in offline if p.data["device"] == "shoe-1")
    assert "shoe-1 went offline" in shoe.text and "3 times" in shoe.text, shoe.text
