"""The engine's subcommands of ``studtable``: hand histories and a terminal hand."""

from __future__ import annotations

import argparse
import contextlib
import json
import sqlite3
import sys
from pathlib import Path
from typing import Any


def register(sub: Any) -> None:
    version = sub.add_parser("version", help="print the studtable version")
    version.set_defaults(handler=_version)

    store = sub.add_parser("store", help="the event store and hand log")
    ssub_store = store.add_subparsers(dest="store_command", metavar="ACTION")
    ssub_store.required = True
    check = ssub_store.add_parser("check", help="read the whole store back; say what is damaged and how to recover")
    check.add_argument("--store", required=True, help="SQLite path or postgresql:// URL")
    check.add_argument("--table", default=None, help="table id (default: every table in the store)")
    check.set_defaults(handler=_store_check)

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
    listing.add_argument("--table", default=None, help="table id (without it: the tables in the store)")
    listing.set_defaults(handler=_history_list)
    export = hsub.add_parser("export", help="export one hand from the hand log")
    export.add_argument("--store", required=True, help="SQLite path or postgresql:// URL")
    export.add_argument("--table", required=True, help="table id")
    export.add_argument("--hand", required=True, metavar="ID")
    export.add_argument("--format", choices=("phh", "json"), default="phh")
    export.set_defaults(handler=_history_export)

    engine = sub.add_parser("engine", help="run the engine service for one table")
    engine.add_argument("--config", required=True, help="engine config (TOML), see docs/deploy.md")
    engine.set_defaults(handler=_engine)

    recorder = sub.add_parser("recorder", help="record every table's finished hands into one store")
    recorder.add_argument("--config", default=None, help="the table file (its broker and store)")
    recorder.add_argument("--broker", default=None, help="HOST:PORT of the broker (default 127.0.0.1:1883)")
    recorder.add_argument("--config-dir", default=None, help="directory from `studtable broker config` (logins)")
    recorder.add_argument("--store", default=None, help="SQLite path or postgresql:// URL")
    recorder.add_argument("--device", default=None, help="device id (default recorder-1)")

    from engine.tablesetup import register as register_setup

    register_setup(sub)
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


def open_store_or_explain(url: str, table: str, file: str | None = None, key: str = "store") -> Any:
    """The event store, or a ``ConfigFileError`` that says why it cannot be opened and what to do."""
    from engine.configfile import ConfigFileError
    from engine.store import StoreDamaged, StoreError, open_store

    postgres = url.startswith(("postgresql://", "postgres://"))
    if not postgres:
        path = Path(url[len("sqlite://"):] if url.startswith("sqlite:///") else url).expanduser()
        if not path.parent.is_dir():
            raise ConfigFileError(file, key, f"the store folder {path.parent} does not exist",
                                  f"create it (mkdir -p {path.parent}) or fix the path")
    try:
        return open_store(url, table)
    except StoreDamaged as exc:
        what, _, todo = str(exc).partition("; ")
        raise ConfigFileError(file, key, what, todo) from None
    except StoreError as exc:
        first = str(exc).splitlines()[0]
        raise ConfigFileError(file, key, first, "check that PostgreSQL runs and answers at that URL "
                              "(pg_isready), and the URL's user, password and database") from None
    except (OSError, sqlite3.Error) as exc:
        raise ConfigFileError(file, key, f"cannot open the store {url}: {exc}",
                              "check the path and that this user may write there") from None


def _existing_store(url: str) -> None:
    """Reading the hand log must not create an empty one at a mistyped path."""
    from engine.configfile import ConfigFileError

    if "://" not in url and not Path(url).expanduser().exists():
        raise ConfigFileError(None, "--store", f"{url} does not exist",
                              "give the engine's store (table file: [store] url)")


def _store_check(args: argparse.Namespace) -> int:
    """One line: ok with what was read back (exit 0), or what is wrong and how to recover (exit 1)."""
    from engine.store import StoreError, check_store

    _existing_store(args.store)
    try:
        print(check_store(args.store, args.table))
    except StoreError as exc:
        print(f"studtable store check: {exc}", file=sys.stderr)
        return 1
    return 0


def _history_list(args: argparse.Namespace) -> int:
    _existing_store(args.store)
    if args.table is None:
        store = open_store_or_explain(args.store, "table", key="--store")
        try:
            tables = sorted({str(row[0]) for row in store._execute("SELECT DISTINCT table_id FROM hands")})
        finally:
            store.close()
        have = ", ".join(tables) if tables else "none: no hand has been logged yet"
        print(f"studtable history list: give --table; tables in {args.store}: {have}", file=sys.stderr)
        return 2
    store = open_store_or_explain(args.store, args.table, key="--store")
    try:
        hands = store.list_hands()
        for h in hands:
            print(json.dumps({"hand": h.hand_id, "table": h.table, "variant": h.variant,
                              "started": h.started_at, "ended": h.ended_at}))
    finally:
        store.close()
    if not hands:
        print(f"no hands of table {args.table!r} in {args.store}", file=sys.stderr)
    return 0


def _history_export(args: argparse.Namespace) -> int:
    _existing_store(args.store)
    store = open_store_or_explain(args.store, args.table, key="--store")
    try:
        record = store.get_hand(args.hand)
    finally:
        store.close()
    if record is None:
        print(f"no hand {args.hand!r} in the hand log; list them with: studtable history list", file=sys.stderr)
        return 1
    if args.format == "phh":
        if record.phh is None:
            # Changed by a ruling (or voided): its plain play as PHH, the rulings as comments and
            # _studtable_rulings (engine.handlog), as the console's export writes it.
            from engine import handlog

            hand, steps = handlog.steps_of(record.events, reveal=True, table_id=record.table)
            sys.stdout.write(handlog.export_phh(hand, steps))
            return 0
        sys.stdout.write(record.phh)
    else:
        print(json.dumps({"hand": record.hand_id, "table": record.table, "variant": record.variant,
                          "events": list(record.events)}, indent=1))
    return 0


def _engine(args: argparse.Namespace) -> int:
    from engine.bus import BusError
    from engine.configfile import ConfigFileError
    from engine.procs import on_sigterm, wait_for
    from engine.service import EngineConfig, EngineService, ServiceConfigError
    from engine.store import StoreError

    try:
        config = EngineConfig.load(args.config)
    except ServiceConfigError as exc:
        raise ConfigFileError(args.config, None, str(exc), "fix the engine's settings") from None
    if config.broker_config_dir:  # the login first: a wrong folder must not touch the store
        from engine.configfile import broker_login, read_config
        from engine.tableconfig import is_table_file

        table_file = is_table_file(read_config(args.config))
        broker_login("engine", broker_dir=config.broker_config_dir, file=args.config,
                     key="broker.credentials" if table_file else "broker.config_dir", device=config.device)
    store = open_store_or_explain(config.store, config.table, args.config, "store.url")
    store.close()
    service = EngineService(config)
    stop = on_sigterm()
    try:
        service.start()
    except BusError:
        service.stop()
        raise ConfigFileError(args.config, "broker", f"no broker answers at {config.broker_host}:"
                              f"{config.broker_port} with the engine's login within 10 s",
                              "start the broker (systemctl start mosquitto) or fix broker.host/port and "
                              "the credentials folder") from None
    except StoreError as exc:  # a damaged row met during the replay: one line, never a traceback
        service.stop()
        what, _, todo = str(exc).partition("; ")
        raise ConfigFileError(args.config, "store.url", what, todo or "check the store") from None
    except BaseException:
        service.stop()
        raise
    print(f"engine for table {config.table}: {service.replayed} inputs replayed; store {config.store}", flush=True)
    with contextlib.suppress(KeyboardInterrupt):
        wait_for(stop)
    service.stop()
    return 0


def _recorder(args: argparse.Namespace) -> int:
    from engine.bus import BusError
    from engine.configfile import ConfigFileError, broker_login, parse_host_port, read_config
    from engine.procs import on_sigterm, wait_for
    from engine.recorder import Recorder

    settings: dict[str, Any] = {"broker": "127.0.0.1:1883", "config_dir": None, "store": None,
                                "device": "recorder-1"}
    if args.config:
        from engine.tableconfig import part

        data = read_config(args.config, "table file")
        settings |= part(args.config, data, "recorder") or {}
    given = {k: v for k, v in {"broker": args.broker, "config_dir": args.config_dir, "store": args.store,
                                "device": args.device}.items() if v is not None}
    settings |= given
    where = args.config if args.config and not given else None
    if not settings["store"]:
        raise ConfigFileError(where, "--store", "no store to record into",
                              "give --store (SQLite path or postgresql:// URL) or --config the table file")
    host, port = parse_host_port(settings["broker"], where, "broker" if where else "--broker")
    user, password = broker_login("recorder", broker_dir=settings["config_dir"], file=where,
                                  key="broker.credentials" if where else "--config-dir", device=str(settings["device"]))
    open_store_or_explain(str(settings["store"]), "table", where, "store.url" if where else "--store").close()
    rec = Recorder(host=host, port=port, username=user, password=password,
                   store=str(settings["store"]), device=str(settings["device"]))
    try:
        rec.start()
    except BusError:
        rec.stop()
        raise ConfigFileError(where, "broker" if where else "--broker",
                              f"no broker answers at {host}:{port} with the recorder's login within 10 s",
                              "start the broker or fix the address and the credentials folder") from None
    stop = on_sigterm()
    print(f"recorder on {host}:{port}, store {settings['store']}", flush=True)
    with contextlib.suppress(KeyboardInterrupt):
        wait_for(stop)
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
