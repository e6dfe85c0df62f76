"""The engine's subcommands of ``studtable``: hand histories and a terminal hand."""

from __future__ import annotations

import argparse
import contextlib
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

    listing = hsub.add_parser("list", help="list the hands in the hand log")
    listing.add_argument("--store", required=True, help="SQLite path or postgresql:// URL")
    listing.add_argument("--table", default="table")
    listing.set_defaults(handler=_history_list)
    export = hsub.add_parser("export", help="export one hand from the hand log")
    export.add_argument("--store", required=True, help="SQLite path or postgresql:// URL")
    export.add_argument("--table", default="table")
    export.add_argument("--hand", required=True, metavar="ID")
    export.add_argument("--format", choices=("phh", "json"), default="phh")
    export.set_defaults(handler=_history_export)

    engine = sub.add_parser("engine", help="run the engine service for one table")
    engine.add_argument("--config", required=True, help="engine config (TOML), see docs/deploy.md")
    engine.set_defaults(handler=_engine)

    recorder = sub.add_parser("recorder", help="record every table's finished hands into one store")
    recorder.add_argument("--broker", default="127.0.0.1:1883", help="HOST:PORT of the broker")
    recorder.add_argument("--config-dir", required=True, help="directory from `studtable broker config` (logins)")
    recorder.add_argument("--store", required=True, help="SQLite path or postgresql:// URL")
    recorder.add_argument("--device", default="recorder-1")
    recorder.set_defaults(handler=_recorder)

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


def _history_list(args: argparse.Namespace) -> int:
    from engine.store import open_store

    store = open_store(args.store, args.table)
    try:
        for h in store.list_hands():
            print(json.dumps({"hand": h.hand_id, "table": h.table, "variant": h.variant,
                              "started": h.started_at, "ended": h.ended_at}))
    finally:
        store.close()
    return 0


def _history_export(args: argparse.Namespace) -> int:
    from engine.store import open_store

    store = open_store(args.store, args.table)
    try:
        record = store.get_hand(args.hand)
    finally:
        store.close()
    if record is None:
        print(f"no hand {args.hand!r} in the hand log; list them with: studtable history list", file=sys.stderr)
        return 1
    if args.format == "phh":
        if record.phh is None:
            print(f"hand {args.hand} was voided (misdeal): it has no PHH, only its events", file=sys.stderr)
            return 1
        sys.stdout.write(record.phh)
    else:
        print(json.dumps({"hand": record.hand_id, "table": record.table, "variant": record.variant,
                          "events": list(record.events)}, indent=1))
    return 0


def _engine(args: argparse.Namespace) -> int:
    import signal
    import threading

    from engine.service import EngineConfig, EngineService, ServiceConfigError

    try:
        config = EngineConfig.load(args.config)
    except ServiceConfigError as exc:
        print(f"studtable engine: {exc}", file=sys.stderr)
        return 2
    service = EngineService(config)
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    service.start()
    print(f"engine for table {config.table}: {service.replayed} inputs replayed; store {config.store}", flush=True)
    with contextlib.suppress(KeyboardInterrupt):
        stop.wait()
    service.stop()
    return 0


def _recorder(args: argparse.Namespace) -> int:
    import signal
    import threading

    from engine.broker.config import load_files
    from engine.recorder import Recorder

    host, _, port = str(args.broker).rpartition(":")
    user, password = load_files(args.config_dir).login("recorder")
    rec = Recorder(host=host or "127.0.0.1", port=int(port), username=user, password=password,
                   store=args.store, device=args.device).start()
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    print(f"recorder on {args.broker}, store {args.store}", flush=True)
    with contextlib.suppress(KeyboardInterrupt):
        stop.wait()
    rec.stop()
    print(json.dumps(vars(rec.stats)))
    return 0


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
