"""Scenarios: a hand scripted as the engine's inputs, with the outputs expected.

The format is described in ``docs/scenarios.md``; other tools write it, so it
is stable: a TOML (``.toml``) or JSON (``.json``) document with a ``table``
and a list of ``steps``.  ``run_scenario`` feeds the steps to a fresh
``engine.floor.Floor`` and checks every expectation; ``studtable scenario run``
prints one JSON line per file.
"""

from __future__ import annotations

import contextlib
import json
import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from engine.floor import Floor, FloorError
from engine.hand import STREET_NAMES, Hand
from engine.rules import ConfigError, GameConfig

INPUT_KEYS = ("input", "shoe", "camera", "action", "report", "ruling", "manual", "table", "show", "muck", "source")


class ScenarioError(ValueError):
    """A scenario document that does not follow docs/scenarios.md."""


def load(path: str | Path) -> dict[str, Any]:
    p = Path(path)
    text = p.read_text(encoding="utf-8")
    try:
        data = json.loads(text) if p.suffix == ".json" else tomllib.loads(text)
    except (json.JSONDecodeError, tomllib.TOMLDecodeError) as exc:
        raise ScenarioError(f"{p.name}: not valid {p.suffix.lstrip('.') or 'TOML'}: {exc}") from None
    if not isinstance(data, dict):
        raise ScenarioError(f"{p.name}: a scenario is an object")
    return data


def build_floor(table: Mapping[str, Any]) -> tuple[Floor, list[dict[str, Any]]]:
    """A Floor set up as the scenario's table says, and the inputs that seated it."""
    game = {k: table[k] for k in ("variant", "ante", "bring_in", "small_bet", "big_bet", "max_raises", "rules", "min_buy_in") if k in table}
    game.setdefault("min_buy_in", 1)
    try:
        config = GameConfig.from_json(game)
    except ConfigError as exc:
        raise ScenarioError(f"table: {exc}") from None
    floor = Floor(config, str(table.get("id", "scenario")), int(table.get("seat_count", 8)))
    floor.shoe_active = bool(table.get("shoe", True))
    floor.shoe_absent = not floor.shoe_active
    floor.camera_active = bool(table.get("camera", True))
    seats = table.get("seats")
    if not isinstance(seats, list) or not seats:
        raise ScenarioError("table.seats must list the players: [{seat, name, stack}, ...]")
    inputs = []
    for s in seats:
        inputs.append({"kind": "table", "op": "seat", "seat": s["seat"], "name": s.get("name", f"Seat {s['seat']}"), "amount": s["stack"]})
    if table.get("start", True):
        inputs.append({"kind": "table", "op": "start_hand"})
    for inp in inputs:
        floor.handle(inp)
    return floor, inputs


def step_inputs(step: Mapping[str, Any], floor: Floor) -> list[dict[str, Any]]:
    """Expand a step's shorthand into Floor inputs."""
    out: list[dict[str, Any]] = []
    if "input" in step:
        items = step["input"] if isinstance(step["input"], list) else [step["input"]]
        out.extend(dict(i) for i in items)
    if "shoe" in step:
        codes = step["shoe"].split() if isinstance(step["shoe"], str) else list(step["shoe"])
        for code in codes:
            status = "ok"
            if ":" in code:
                code, status = code.split(":", 1)
            out.append({"kind": "shoe_card", "card": None if code == "??" and status == "unknown_tag" else code, "status": status})
    if "camera" in step:
        cam = step["camera"]
        if "seats" in cam or "irregular" in cam:
            out.append({"kind": "camera", "seats": cam.get("seats", {}), "irregular": cam.get("irregular", [])})
        else:
            out.append({"kind": "camera", "seats": cam, "irregular": []})
    if "action" in step:
        actions = step["action"] if isinstance(step["action"], list) else [step["action"]]
        for text in actions:
            parts = str(text).split()
            if len(parts) < 2:
                raise ScenarioError(f"action {text!r}: write 'SEAT ACTION [AMOUNT]'")
            out.append({"kind": "action", "seat": int(parts[0]), "action": parts[1], "amount": int(parts[2]) if len(parts) > 2 else None})
    if "manual" in step:
        items = step["manual"] if isinstance(step["manual"], list) else [step["manual"]]
        for m in items:
            out.append({"kind": "manual_card", "seat": m["seat"], "card": m.get("card", "??"), "face_up": bool(m.get("up", False))})
    for key in ("report", "table", "show", "muck", "source"):
        if key in step:
            if not isinstance(step[key], Mapping):
                raise ScenarioError(f"{key} must be a table of fields")
            out.append({"kind": key, **step[key]})
    if "ruling" in step:
        r = dict(step["ruling"])
        if r.get("prompt") in (None, "$last"):
            if not floor.prompts:
                raise ScenarioError("ruling on $last, but no prompt is open")
            r["prompt"] = list(floor.prompts)[-1]
        out.append({"kind": "ruling", **r})
    return out


def public_states(data: Mapping[str, Any], service: Mapping[str, Any], table: str = "t1") -> list[dict[str, Any]]:
    """The public state after every input of a scenario (inputs the floor refuses included), with
    ``service`` as the engine's own part: real states for the schema's tests and the codec bench."""
    from engine.public import public_state

    floor, _ = build_floor(data["table"])
    out = []
    for step in data["steps"]:
        for inp in step_inputs(step, floor):
            with contextlib.suppress(FloorError):
                floor.handle(inp)
            out.append(public_state(floor.table, None, table, {**service, "prompts": floor.open_prompts()}))
    return out


def _next_deal_words(floor: Floor) -> str:
    """What the deal tracker tells the dealer to do next: ``burn``, ``seat 3 down``, ``seat 3 up``,
    ``reshuffle`` or ``common`` (RRoP stud 15), ``set aside`` (RRoP stud 14), or ``none``."""
    if floor.set_aside_due():
        return "set aside"
    slots = floor.next_deal()
    if not slots:
        return "none"
    kind, seat, face_up = slots[0]
    if kind == "card":
        return f"seat {seat} {'up' if face_up else 'down'}"
    return str(kind)


def summary(floor: Floor) -> dict[str, Any]:
    hand = floor.table.hand
    prompt_options: dict[str, list[str]] = {}
    for p in floor.prompts.values():
        prompt_options[p.rule.id] = [o.label for o in p.options]  # the latest prompt of a rule id
    result: dict[str, Any] = {
        "prompts": [p.rule.id for p in floor.prompts.values()],
        "prompt_options": prompt_options,
        "stacks": {str(n): s.stack for n, s in sorted(floor.table.seats.items())},
        "hands": len(floor.hands),
    }
    if hand is not None:
        result["next_deal"] = _next_deal_words(floor)
        opts = hand.options()
        result.update(
            {
                "phase": hand.phase.value,
                "street": STREET_NAMES[hand.street] if hand.street < len(STREET_NAMES) else None,
                "to_act": hand.to_act,
                "options": [o.label.lower() for o in opts.options] if opts else [],
                "pot": hand.pot_total,
                "dead": sorted(s.seat for s in hand.seats if not s.live),
                "cards": {
                    str(s.seat): {"up": [str(c) for c in s.up], "down": len(s.down)} for s in hand.seats
                },
                "down_cards": {str(s.seat): [str(c) for c in s.down] for s in hand.seats},
                "hand_stacks": {str(s.seat): s.stack for s in hand.seats},
                "common": [str(c) for c in hand.common],
                "voided": hand.voided,
                "announcements": [a.text for a in hand.announcements],
            }
        )
    return result


def _check(
    expect: Mapping[str, Any], state: Mapping[str, Any], opened: list[str], announced: list[str]
) -> list[str]:
    failures = []
    for key, want in expect.items():
        if key == "error":
            continue
        if key == "announced":
            # The announcements this step made, in order; each expected text is part of one.
            if not isinstance(want, list) or len(want) != len(announced) or any(
                str(w) not in a for w, a in zip(want, announced, strict=False)
            ):
                failures.append(f"announced: expected {want!r}, got {announced!r}")
            continue
        if key == "prompt_options":
            got_options = state.get("prompt_options", {})
            for rule_id, labels in dict(want).items():
                have = got_options.get(rule_id)
                if have is None:
                    failures.append(f"prompt_options: no {rule_id} prompt is open")
                elif sorted(x.lower() for x in have) != sorted(str(x).lower() for x in labels):
                    failures.append(f"prompt_options of {rule_id}: expected {sorted(labels)}, got {sorted(have)}")
            continue
        if key == "down_cards":
            got_down = state.get("down_cards", {})
            for seat, codes in dict(want).items():
                if str(seat) not in got_down:
                    failures.append(f"down_cards: seat {seat} is not in the hand")
                elif got_down[str(seat)] != [str(c) for c in codes]:
                    failures.append(f"down cards of seat {seat}: expected {list(codes)}, got {got_down[str(seat)]}")
            continue
        if key == "opened":
            if sorted(opened) != sorted(want):
                failures.append(f"opened: expected {sorted(want)}, got {sorted(opened)}")
            continue
        if key == "announcements_lack":
            for text in want:
                if any(text in a for a in state.get("announcements", [])):
                    failures.append(f"an announcement contains {text!r}")
            continue
        if key == "announcements_contain":
            for text in want:
                if not any(text in a for a in state.get("announcements", [])):
                    failures.append(f"no announcement contains {text!r}")
            continue
        if key in ("stacks", "hand_stacks"):
            got = state.get(key, {})
            what = "stack" if key == "stacks" else "stack in the hand"
            for seat, amount in want.items():
                if got.get(str(seat)) != amount:
                    failures.append(f"{what} of seat {seat}: expected {amount}, got {got.get(str(seat))}")
            continue
        if key == "cards":
            got = state.get("cards", {})
            for seat, view in want.items():
                have = got.get(str(seat))
                if have is None:
                    failures.append(f"cards: seat {seat} is not in the hand")
                    continue
                for part in ("up", "down"):
                    if part in view and have[part] != view[part]:
                        failures.append(f"cards of seat {seat} {part}: expected {view[part]}, got {have[part]}")
            continue
        if key not in state:
            failures.append(f"unknown expectation {key!r}")
            continue
        got = state[key]
        if key in ("prompts", "options", "dead"):
            if sorted(map(str, got)) != sorted(map(str, want)):
                failures.append(f"{key}: expected {sorted(want)}, got {sorted(got)}")
        elif got != want:
            failures.append(f"{key}: expected {want!r}, got {got!r}")
    return failures


def _announced_since(floor: Floor, before: Hand | None, said: int) -> list[str]:
    """The announcements made since ``before`` (the hand then) had made ``said`` of them."""
    texts: list[str] = []
    hand = floor.table.hand
    if before is not None:
        texts += [a.text for a in before.announcements[said:]]
    if hand is not None and hand is not before:
        texts += [a.text for a in hand.announcements]
    return texts


def run_scenario(data: Mapping[str, Any]) -> dict[str, Any]:
    """Run one scenario document; the result says whether every expectation held."""
    failures: list[str] = []
    table = data.get("table")
    if not isinstance(table, Mapping):
        raise ScenarioError("a scenario needs a [table]")
    floor, _ = build_floor(table)
    steps = data.get("steps", [])
    if not isinstance(steps, list):
        raise ScenarioError("steps must be a list")
    for k, step in enumerate(steps, start=1):
        # A step that fails (refused, not as expected, or not written as docs/scenarios.md says)
        # is a failure of that step; the next steps still run.
        if not isinstance(step, Mapping):
            failures.append(f"step {k}: a step is a table (an object)")
            continue
        unknown = set(step) - {*INPUT_KEYS, "expect", "note"}
        if unknown:
            failures.append(f"step {k}: unknown key(s) {sorted(unknown)}")
            continue
        expect = step.get("expect", {})
        if not isinstance(expect, Mapping):
            failures.append(f"step {k}: expect must be a table")
            continue
        opened: list[str] = []
        error: str | None = None
        before = floor.table.hand
        said = len(before.announcements) if before is not None else 0
        try:
            for inp in step_inputs(step, floor):
                out = floor.handle(inp)
                opened += [p.rule.id for p in out.opened]
        except (FloorError, ScenarioError) as exc:
            error = str(exc)
        except (KeyError, TypeError, ValueError) as exc:
            error = f"step {k} is not written as docs/scenarios.md says: {exc!r}"
        announced = _announced_since(floor, before, said)
        want_error = expect.get("error")
        if want_error is not None and (error is None or str(want_error).lower() not in error.lower()):
            failures.append(f"step {k}: expected a refusal containing {want_error!r}, got {error!r}")
        elif want_error is None and error is not None:
            failures.append(f"step {k}: refused: {error}")
        failures += [f"step {k}: {f}" for f in _check(expect, summary(floor), opened, announced)]
    return {
        "name": data.get("name", ""),
        "rules": list(data.get("rules", [])),
        "passed": not failures,
        "failures": failures,
        "steps": len(steps),
        "outputs": summary(floor),
    }


def run_file(path: str | Path) -> dict[str, Any]:
    try:
        result = run_scenario(load(path))
    except (ScenarioError, KeyError, TypeError, ValueError) as exc:
        result = {"passed": False, "failures": [f"cannot run: {exc}"], "error": str(exc)}
    return {"file": str(path), **result}
