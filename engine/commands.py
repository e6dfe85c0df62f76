"""The engine's subcommands of ``studtable``: hand histories and a terminal hand."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any


def register(sub: Any) -> None:
    version = sub.add_parser("version", help="print the studtable version")
    version.set_defaults(handler=_version)

    history = sub.add_parser("history", help="hand histories (PHH)")
    hsub = history.add_subparsers(dest="history_command", metavar="ACTION")
    hsub.required = True
    replay = hsub.add_parser(
        "replay",
        help="replay PHH files; prints one JSON line per file with the variant and finishing stacks",
    )
    replay.add_argument("--rules", choices=("rrop", "wsop2023"), default="rrop", help="house-rule profile")
    replay.add_argument("files", nargs="+", metavar="FILE")
    replay.set_defaults(handler=_history_replay)

    scenario = sub.add_parser("scenario", help="scripted hands with expected outputs (docs/scenarios.md)")
    ssub = scenario.add_subparsers(dest="scenario_command", metavar="ACTION")
    ssub.required = True
    run = ssub.add_parser("run", help="run scenario files; one JSON line per file")
    run.add_argument("files", nargs="+", metavar="FILE")
    run.set_defaults(handler=_scenario_run)

    hand = sub.add_parser("hand", help="deal and play one simulated hand in the terminal")
    _simulation_args(hand)
    hand.set_defaults(handler=_simulated_hand)


def _simulation_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--variant", default="F7S", help="F7S (stud), F7S/8 (stud high-low) or FR (razz)")
    p.add_argument("--players", type=int, default=6)
    p.add_argument("--seed", type=int, default=None)
    p.add_argument("--rules", choices=("rrop", "wsop2023"), default="rrop")


def _version(args: argparse.Namespace) -> int:
    from importlib.metadata import version

    print(version("studtable"))
    return 0


def _history_replay(args: argparse.Namespace) -> int:
    from engine.phh import PHHError, load_file

    failed = False
    for path in args.files:
        record: dict[str, Any] = {"file": path}
        try:
            imported = load_file(path, args.rules)
        except (OSError, PHHError, ValueError) as exc:
            failed = True
            record["error"] = str(exc)
        else:
            hand = imported.hand
            record["variant"] = imported.config.variant.value
            record["rules"] = imported.config.rules.name
            record["finishing_stacks"] = hand.finishing_stacks()
            record["complete"] = hand.is_over
            record["players"] = imported.players
        print(json.dumps(record), flush=True)
    return 1 if failed else 0


def _scenario_run(args: argparse.Namespace) -> int:
    from engine.scenario import run_file

    failed = False
    for path in args.files:
        result = run_file(path)
        failed |= not result["passed"]
        print(json.dumps(result), flush=True)
    return 1 if failed else 0


def _simulated_hand(args: argparse.Namespace) -> int:
    from engine.simulate import play_random_hand

    hand = play_random_hand(args.variant, args.players, args.seed, args.rules, out=sys.stdout)
    return 0 if hand.is_over else 1
