"""The floor's inputs: one parser, typed results, bounds, and a table entry for every kind and rule."""

from __future__ import annotations

from typing import Any

import pytest

from engine.cards import UNKNOWN, Card
from engine.floor import EFFECTS, INPUTS, Floor, FloorError
from engine.inputs import (
    KINDS,
    MAX_CHIPS,
    MAX_NAME,
    Action,
    CameraView,
    Correction,
    Input,
    InputError,
    Irregular,
    ManualCard,
    Muck,
    Report,
    Ruling,
    SeatSeen,
    ShoeCard,
    Show,
    SourceStatus,
    TableOp,
    parse_input,
)
from engine.irregularities import RULES
from engine.rules import GameConfig, Variant

C = Card.parse

SAMPLES: list[Input] = [
    TableOp("seat", 3, "Ann", 200),
    TableOp("leave", 3),
    TableOp("add_chips", 3, amount=50),
    TableOp("sit_out", 3),
    TableOp("start_hand"),
    TableOp("game", game={"variant": "FR", "small_bet": 10, "big_bet": 20}),
    Correction("undo", 4, 12),
    Correction("undo", 4, 9, "ok"),
    Action(2, "raise", 20),
    Action(2, "fold"),
    ShoeCard(C("As"), "ok", 17),
    ShoeCard(C("Kd"), "ok", 18, boot=3),
    ShoeCard(None, "unknown_tag"),
    CameraView((SeatSeen(1, (C("7h"), UNKNOWN), 2),), (Irregular("off_felt", 2, "Ah"),)),
    ManualCard(4, C("Kd"), True),
    ManualCard(4),
    Show(1, (C("As"), C("Ks"), C("Qs"))),
    Muck(5),
    Report("wrong-bring-in", 2, C("8h")),
    Report("burn-error", burns=0, note="two cards stuck together"),
    Ruling("p3", "confirm"),
    SourceStatus("shoe-1", "gap", 3),
    SourceStatus("cam-1", "offline"),
    SourceStatus("shoe-1", "restart", None),
    SourceStatus("shoe-1", "forged", channel="sensor/shoe"),
    SourceStatus("engine", "store", problem="disk full"),
]


@pytest.mark.parametrize("inp", SAMPLES, ids=lambda i: f"{i.kind}")
def test_every_input_goes_to_json_and_back(inp: Input) -> None:
    assert parse_input(inp.to_json(), 8) == inp


def test_every_kind_has_a_parser_a_class_and_a_handler() -> None:
    classes = {type(i) for i in SAMPLES}
    assert {c.kind for c in classes} == set(KINDS)
    assert set(INPUTS) == classes


def test_every_rule_whose_ruling_changes_the_hand_has_an_effect() -> None:
    changing = {r.id for r in RULES if r.changes_hand and r.handling != "enforced"}
    assert changing == set(EFFECTS), (changing - set(EFFECTS), set(EFFECTS) - changing)


@pytest.mark.parametrize(
    ("data", "field"),
    [
        ({"kind": "table", "op": "seat", "seat": 3, "name": "x" * (MAX_NAME + 1), "amount": 100}, "name"),
        ({"kind": "table", "op": "seat", "seat": 3, "name": "x" * 300_000, "amount": 100}, "name"),
        ({"kind": "table", "op": "seat", "seat": 3, "name": "Ann\x1b[2J", "amount": 100}, "name"),
        ({"kind": "table", "op": "seat", "seat": 3, "name": "   ", "amount": 100}, "name"),
        ({"kind": "table", "op": "seat", "seat": 3, "name": "Ann", "amount": -100}, "amount"),
        ({"kind": "table", "op": "seat", "seat": 3, "name": "Ann", "amount": MAX_CHIPS + 1}, "amount"),
        ({"kind": "table", "op": "seat", "seat": 3, "name": "Ann", "amount": 1.5}, "amount"),
        ({"kind": "table", "op": "seat", "seat": 9, "name": "Ann", "amount": 100}, "seat"),
        ({"kind": "table", "op": "seat", "seat": 0, "name": "Ann", "amount": 100}, "seat"),
        ({"kind": "table", "op": "seat", "seat": True, "name": "Ann", "amount": 100}, "seat"),
        ({"kind": "table", "op": "add_chips", "seat": 1, "amount": 0}, "amount"),
        ({"kind": "table", "op": "start_hand", "seat": 2}, "seat"),
        ({"kind": "table", "op": "explode"}, "op"),
        ({"kind": "table", "op": "leave", "seat": 1, "name": "extra"}, "name"),
        ({"kind": "action", "seat": 1, "action": "raise", "amount": -10}, "amount"),
        ({"kind": "action", "seat": 1, "action": "raise", "amount": 10**18}, "amount"),
        ({"kind": "action", "seat": 1, "action": "shove"}, "action"),
        ({"kind": "action", "action": "fold"}, "seat"),
        ({"kind": "shoe_card", "card": "Zz"}, "card"),
        ({"kind": "shoe_card", "card": "As", "status": "maybe"}, "status"),
        ({"kind": "camera", "seats": {"9": {"up": [], "down": 1}}}, "seats.9"),
        ({"kind": "camera", "seats": {"1": {"up": ["As"], "down": 99}}}, "seats.1.down"),
        ({"kind": "camera", "seats": {"1": {"up": ["As"] * 9, "down": 0}}}, "seats.1.up"),
        ({"kind": "manual_card", "seat": 1, "card": "As"}, "face_up"),
        ({"kind": "show", "seat": 1, "cards": ["As"] * 8}, "cards"),
        ({"kind": "show", "seat": 1, "cards": ["As", "??"]}, "cards[1]"),
        ({"kind": "report", "report": "burn-error", "burns": 1}, "burns"),
        ({"kind": "report", "report": "boxed-card", "note": "n" * 201}, "note"),
        ({"kind": "report", "report": "boxed-card", "why": "because"}, "why"),
        ({"kind": "ruling", "prompt": "p1"}, "option"),
        ({"kind": "table", "op": "game", "game": {"variant": "holdem"}}, "game.variant"),
        ({"kind": "table", "op": "game", "game": {"ante": -1}}, "game.ante"),
        ({"kind": "table", "op": "game", "game": {}}, "game"),
        ({"kind": "table", "op": "game", "seat": 1, "game": {"ante": 1}}, "seat"),
        ({"kind": "correction", "op": "undo", "hand": 1, "input": 3, "pin": "1234"}, "pin"),
        ({"kind": "correction", "op": "undo", "hand": 1, "input": 3, "floor": "yes"}, "floor"),
        ({"kind": "correction", "op": "redo", "hand": 1, "input": 3}, "op"),
        ({"kind": "source", "device": "shoe-1", "status": "gap", "missing": -1}, "missing"),
        ({"kind": "nonsense"}, "kind"),
        ({"seat": 1}, "kind"),
    ],
)
def test_out_of_bounds_or_unknown_fields_are_refused_naming_the_field(data: dict[str, Any], field: str) -> None:
    with pytest.raises(InputError) as refused:
        parse_input(data, 8)
    assert refused.value.field == field
    assert f"field {field!r}" in str(refused.value)
    assert len(str(refused.value)) < 300  # a refusal never echoes a long value back


def test_a_refused_card_code_is_not_repeated_back() -> None:
    for data in ({"kind": "shoe_card", "card": "Ax"}, {"kind": "show", "seat": 1, "cards": ["Ax"]}):
        with pytest.raises(InputError) as refused:
            parse_input(data)
        assert "Ax" not in str(refused.value)
    assert "ShoeCard(" in repr(ShoeCard(C("As"))) and "As" not in repr(ShoeCard(C("As")))


def test_the_floor_refuses_a_malformed_input_with_the_field_rule_and_phase() -> None:
    floor = Floor(GameConfig(Variant.STUD, 1, 2, 5, 10), seat_count=6)
    data = {"kind": "table", "op": "seat", "seat": 7, "name": "Ann", "amount": 100}
    with pytest.raises(FloorError) as refused:
        floor.handle(data)
    err = refused.value
    assert (err.rule, err.field, err.phase, err.input) == ("engine.input", "seat", "idle", data)
    assert "from 1 to 6" in str(err)
