"""Regenerate ``states.jsonl``: the public states of the scripted hand, one JSON object per line.

Run ``python -m tests.dealer_console.record_states`` after changing ``dealer_console.scripted`` or the
engine's public projection; the tests read the recorded file so a change in what the engine
publishes shows up as a diff in review.
"""

from __future__ import annotations

import json
from pathlib import Path

from dealer_console.scripted import scripted_hand

OUT = Path(__file__).with_name("states.jsonl")


def main() -> None:
    with OUT.open("w", encoding="utf-8") as f:
        for step in scripted_hand():
            record = {"label": step.label, "tags": sorted(step.tags), "event": step.event, "state": step.state}
            f.write(json.dumps(record, separators=(",", ":")) + "\n")
    print(f"wrote {OUT}")


if __name__ == "__main__":
    main()
