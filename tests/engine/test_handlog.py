"""The history answer's access rules and export, on a real hand's log (engine.handlog, pure)."""

from __future__ import annotations

import tomllib

from dealer_console.scripted import hand_events
from engine import handlog, phh
from engine.wire import Role


def _answer(role: Role) -> dict:
    events = hand_events()
    hand, _ = handlog.steps_of(events, reveal=True, table_id="t1")
    entry = handlog.entry(hand, "t1-1", [])
    return handlog.answer({"request": "r", "hand": 1, "limit": 5}, role=role, table_id="t1", index=[entry],
                          live=None, fetch=lambda _h: events, hand_id_of=lambda n: f"t1-{n}")


def test_a_finished_hands_hole_cards_go_to_the_console_and_never_to_the_monitor() -> None:
    events = hand_events()
    down = {e["card"] for e in events if e["type"] == "card_dealt" and not e["face_up"]}
    shown = {c for e in events if e["type"] == "cards_shown" for c in e["cards"]}
    burns = {e["card"] for e in events if e["type"] == "card_burned"}
    console = _answer(Role.CONSOLE)["hand"]
    named = {c for s in console["steps"] for c in s["cards"]}
    assert down | burns <= named and console["hole_cards"] and console["phh"] and console["log"]
    monitor = _answer(Role.MONITOR)["hand"]
    seen = {c for s in monitor["steps"] for c in s["cards"]}
    assert not monitor["hole_cards"] and monitor["phh"] is None and monitor["log"] is None
    assert seen & ((down - shown) | burns) == set() and shown <= seen
    assert "Burn card" in [s["text"] for s in monitor["steps"]]


def test_the_result_step_names_the_winner_and_the_shown_losing_hand() -> None:
    steps = _answer(Role.CONSOLE)["hand"]["steps"]
    assert steps[-1]["kind"] == "result"
    assert "Seat 6 (Eli) wins 133" in steps[-1]["text"] and "Seat 3 (Chen) shown, loses" in steps[-1]["text"]


def test_the_phh_export_carries_the_rulings_and_still_reads_back() -> None:
    hand, steps = handlog.steps_of(hand_events(), reveal=True, table_id="t1")
    ruling = {"i": 7, "kind": "action_withdrawn", "at": "2026-12-01T16:00:00Z", "source": "console-1",
              "text": "Ruling: action withdrawn, Seat 3 (Chen)"}
    text = handlog.export_phh(hand, [*steps[:8], ruling, *steps[8:]])
    assert "# studtable: step 8, 2026-12-01T16:00:00Z, console-1: Ruling: action withdrawn" in text
    data = tomllib.loads(text)
    assert data["_studtable_rulings"] == ["step 8, 2026-12-01T16:00:00Z, console-1: Ruling: action withdrawn, "
                                          "Seat 3 (Chen)"]
    assert phh.loads(text).hand.is_over  # the plain play replays as before
    assert handlog.export_phh(hand, steps) == phh.dumps(hand)  # no ruling: plain PHH


def _scenario_hands() -> list[list[dict]]:
    import glob

    from engine import scenario

    hands: list[list[dict]] = []
    for path in sorted(glob.glob("tests/scenarios/*.toml")):
        data = scenario.load(path)
        floor, _ = scenario.build_floor(data["table"])
        for step in data.get("steps", []):
            try:
                for inp in scenario.step_inputs(step, floor):
                    floor.handle(inp)
            except Exception:  # a step the scenario expects to be refused
                pass
        played = list(floor.hands) + ([floor.table.hand] if floor.table.hand is not None else [])
        seen: set[int] = set()
        for hand in played:
            if id(hand) not in seen:
                seen.add(id(hand))
                hands.append([e.to_json() for e in hand.events])
    return hands


def test_every_scenario_hand_folds_exports_and_without_reveal_names_no_unshown_down_card() -> None:
    hands = _scenario_hands()
    ruled = 0
    for events in hands:
        hand, steps = handlog.steps_of(events, reveal=True, table_id="t1")
        text = handlog.export_phh(hand, steps)
        data = tomllib.loads(text)
        if any(s["kind"] not in handlog.PHH_EVENTS and s["kind"] != "result" for s in steps):
            ruled += 1
            assert len(data["_studtable_rulings"]) >= 1 and "# studtable: rulings changed this hand" in text
        public = handlog.steps_of(events, reveal=False, table_id="t1")[1]
        down = {e["card"] for e in events if e["type"] == "card_dealt" and not e["face_up"]}
        burns = {e["card"] for e in events if e["type"] == "card_burned"}
        shown = {c for e in events if e["type"] == "cards_shown" for c in e["cards"]}
        # what the table saw at some step: up cards (an exposed hole card among them), shown cards
        seen = {c for st in public for seat in st["state"]["seats"] for c in [*seat["up"], *seat["shown"]]}
        named = {c for st in public for c in st["cards"]}
        assert named & ((down | burns) - shown - seen) == set(), events[0]
        assert named <= seen | shown | {e["card"] for e in events if e["type"] == "common_card_dealt"}
    assert len(hands) >= 60 and ruled >= 30, (len(hands), ruled)


def test_the_cli_exports_a_ruled_hand_as_phh_with_its_rulings(tmp_path: object, capsys: object) -> None:
    from pathlib import Path

    from engine.cli import main
    from engine.store import HandRecord, SqliteStore

    events = next(h for h in _scenario_hands()
                  if any(e["type"] not in handlog.PHH_EVENTS for e in h) and not any(
                      e["type"] == "hand_voided" for e in h))
    path = Path(str(tmp_path)) / "t1.sqlite"
    store = SqliteStore(path, "t1")
    store.record_hand(HandRecord("t1-1", "t1", "F7S", "x", "x", events, None))
    store.close()
    assert main(["history", "export", "--store", str(path), "--table", "t1", "--hand", "t1-1"]) == 0
    out = capsys.readouterr().out  # type: ignore[attr-defined]
    assert tomllib.loads(out)["_studtable_rulings"] and out.startswith("# studtable: rulings changed this hand")


def test_a_hand_too_long_for_one_message_loses_its_pictures_then_says_what_to_do() -> None:
    import copy
    import json

    body = _answer(Role.CONSOLE)
    size = len(json.dumps(body, separators=(",", ":"), ensure_ascii=False).encode())
    assert handlog.fit(copy.deepcopy(body), size) == body
    bare = copy.deepcopy(body)
    for step in bare["hand"]["steps"]:
        step["state"] = None
    bare_size = len(json.dumps(bare, separators=(",", ":"), ensure_ascii=False).encode())
    assert bare_size < size / 3
    slim = handlog.fit(copy.deepcopy(body), bare_size)
    assert slim["hand"]["steps"] == bare["hand"]["steps"] and slim["error"] is None
    refused = handlog.fit(copy.deepcopy(body), bare_size - 1)
    assert refused["hand"] is None and "studtable history export --hand t1-1" in refused["error"]
    assert refused["hands"] == body["hands"]
