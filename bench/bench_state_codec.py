"""The engine's public/state on the wire: checked, encoded, read back, per state.

The engine checks every state it publishes against the schema (``wire.make``) and every screen
checks every state it draws (``PublicState.from_json``); at the table that is one state per input.
Measured on the states the engine builds for the rule scenarios (8-seat showdowns among them),
against the named peer in the same run: the standard library's ``json.dumps`` + ``json.loads`` of
the same state, which is the least any wire format costs.

    python bench/bench_state_codec.py [--rounds 15]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # this tree's code, also from a worktree

from engine import wire  # noqa: E402
from engine.publicstate import PublicState  # noqa: E402
from engine.scenario import load, public_states  # noqa: E402
from engine.wire import Channel  # noqa: E402

SCENARIOS = ("showdown", "stud-out-of-cards-common", "deck-duplicate-card", "showdown-order-side-pots")


def states() -> list[dict[str, Any]]:
    service = {"devices": {"shoe-1": {"online": True}}, "last_error": None, "input": None,
               "shoe_active": True, "camera_active": False}
    return [state for name in SCENARIOS
            for state in public_states(load(ROOT / "tests" / "scenarios" / f"{name}.toml"), service)]


def per_state_ms(work: Any, items: list[dict[str, Any]]) -> float:
    t = time.process_time()
    for s in items:
        work(s)
    return (time.process_time() - t) / len(items) * 1000


def publish(state: dict[str, Any]) -> bytes:
    msg = wire.make("t1", Channel.STATE, "state", source="engine", session=1, seq=1, state=state)
    try:
        return wire.encode(msg, checked=True)
    except TypeError:  # a tree from before session 14, which checked the state twice
        return wire.encode(msg)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=15)
    args = ap.parse_args()
    items = states()
    seats = max(len(s["seats"]) for s in items)
    runs: dict[str, list[float]] = {"publish": [], "read": [], "json": []}
    jobs = {"publish": publish, "read": PublicState.from_json, "json": lambda s: json.loads(json.dumps(s))}
    for job in jobs.values():  # warm
        per_state_ms(job, items)
    for _ in range(args.rounds):  # interleaved, so the machine's other work slows all alike
        for name, job in jobs.items():
            runs[name].append(per_state_ms(job, items))
    med = {k: statistics.median(v) for k, v in runs.items()}
    print(f"{len(items)} states (up to {seats} seats), median of {args.rounds} rounds, CPU ms per state:")
    print(f"  engine publish (checked, encoded):      {med['publish']:.3f} ms = x{med['publish'] / med['json']:.1f} json")
    print(f"  screen read (PublicState.from_json):    {med['read']:.3f} ms = x{med['read'] / med['json']:.1f} json")
    print(f"  peer: json.dumps + json.loads:          {med['json']:.3f} ms")
    return 0


if __name__ == "__main__":
    sys.exit(main())
