"""``studtable broker``: run the embedded broker, or generate the mosquitto configuration.

studtable broker [--host 127.0.0.1] [--port 1883] [--config-dir DIR]
studtable broker config --out DIR [--host H] [--port P] [--table T] [--data-dir D] [--run-as USER]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import signal
import sys
from pathlib import Path
from typing import Any

from engine.broker.config import DEFAULT_HOST, DEFAULT_PORT, write_config


def register(sub: Any) -> None:
    """Add ``broker`` (and ``broker config``) to the ``studtable`` parser."""
    broker = sub.add_parser(
        "broker",
        help="run the embedded MQTT broker, or write the mosquitto config",
        description="Without a subcommand: run the embedded amqtt broker on loopback with the "
        "studtable users and access rules.",
    )
    broker.add_argument(
        "--host", default=DEFAULT_HOST, help="address to bind (loopback only; default %(default)s)"
    )
    broker.add_argument("--port", type=int, default=DEFAULT_PORT, help="TCP port (default %(default)s)")
    broker.add_argument("--table", default=None, help="the table id, when the rules are generated here")
    broker.add_argument("--any-table", action="store_true", help="generated rules for every table")
    broker.add_argument(
        "--config-dir",
        type=Path,
        default=Path("broker"),
        help="directory with the generated users and ACL; generated there if missing (default ./%(default)s)",
    )
    broker.set_defaults(handler=_run)
    actions = broker.add_subparsers(dest="broker_command", metavar="SUBCOMMAND")
    config = actions.add_parser("config", help="write mosquitto.conf, passwd, acl and credentials.json")
    config.add_argument("--out", type=Path, required=True, help="output directory (created if needed)")
    config.add_argument("--host", default=DEFAULT_HOST, help="listener address (default %(default)s)")
    config.add_argument("--port", type=int, default=DEFAULT_PORT, help="listener port (default %(default)s)")
    config.add_argument("--table", default=None,
                        help="the table id the rules are for (required: a console may command that table only)")
    config.add_argument("--any-table", action="store_true",
                        help="rules for every table on this broker (a broker several tables share; see cardroom)")
    config.add_argument(
        "--data-dir", type=Path, default=None, help="mosquitto persistence directory (default OUT/data)"
    )
    config.add_argument("--run-as", default=None, help="account mosquitto drops to when started as root")
    config.set_defaults(handler=_config)
    room = actions.add_parser(
        "cardroom", help="bridge tables to a central mosquitto over TLS: central config and one bridge per table"
    )
    room.add_argument("--out", type=Path, required=True, help="output directory (created if needed)")
    room.add_argument("--tables", required=True, help="table ids, comma separated (e.g. t1,t2,t3)")
    room.add_argument("--central", required=True, help="HOST:PORT of the central broker's TLS listener")
    room.add_argument("--cafile", type=Path, required=True, help="the cardroom CA certificate")
    room.add_argument("--central-cert", type=Path, required=True, help="the central broker's certificate")
    room.add_argument("--central-key", type=Path, required=True, help="the central broker's private key")
    room.add_argument(
        "--certs-dir", type=Path, required=True, help="directory with each table's <table>.crt and <table>.key"
    )
    room.add_argument("--run-as", default=None, help="account mosquitto drops to when started as root")
    room.set_defaults(handler=_cardroom)


def _cardroom(args: argparse.Namespace) -> int:
    from engine.broker.cardroom import TableCerts, write_cardroom
    from engine.configfile import parse_host_port

    host, port = parse_host_port(args.central, None, "--central")  # a bad one: one line, exit 2
    tables = [t for t in str(args.tables).split(",") if t]
    certs = {}
    for t in tables:
        crt, key = args.certs_dir / f"{t}.crt", args.certs_dir / f"{t}.key"
        if not crt.exists() or not key.exists():
            print(f"table {t}: {crt} and {key} are needed (a client certificate whose common name is {t!r})")
            return 2
        certs[t] = TableCerts(args.cafile, crt, key)
    files = write_cardroom(
        args.out, tables, central_host=host, central_port=port,
        central_certs=TableCerts(args.cafile, args.central_cert, args.central_key), table_certs=certs,
        run_as=args.run_as,
    )
    print(f"central broker: mosquitto -c {files.central_conf}")
    for t, path in files.bridges.items():
        print(f"table {t}: append {path} to that table's mosquitto.conf (or include_dir its directory)")
    return 0


def _table_scope(args: argparse.Namespace) -> str:
    """The table the generated rules are for: one table unless ``--any-table`` says otherwise, so a
    console of one table can never command another table on the same broker (issue 19 item 6)."""
    from engine.configfile import ConfigFileError

    if getattr(args, "any_table", False):
        return "+"
    if not args.table:
        raise ConfigFileError(None, "--table", "the broker rules need the table id",
                              "give --table T (the engine's table id), or --any-table for a broker "
                              "that several tables share")
    return str(args.table)


def _config(args: argparse.Namespace) -> int:
    files = write_config(
        args.out, host=args.host, port=args.port, table=_table_scope(args), data_dir=args.data_dir,
        run_as=args.run_as,
    )
    print(f"wrote {files.mosquitto_conf}, {files.password_file}, {files.acl_file}")
    print(f"credentials for each role (keep private): {files.credentials_file}")
    print(f"run: mosquitto -c {files.mosquitto_conf}")
    return 0


def _run(args: argparse.Namespace) -> int:
    from engine.broker.embedded import BrokerStartError, serve, shutdown

    directory: Path = args.config_dir
    if (directory / "studtable-broker.json").exists():
        from engine.configfile import load_broker_files

        files = load_broker_files(directory, key="--config-dir")
    else:
        files = write_config(directory, host=args.host, port=args.port, table=_table_scope(args))
        print(f"generated users and rules for table {files.table} in {directory} "
              f"(credentials: {files.credentials_file})")

    async def main() -> None:
        broker = await serve(files, args.host, args.port)
        print(
            f"studtable embedded broker (amqtt, MQTT 3.1.1) on {args.host}:{args.port}; Ctrl-C stops it",
            flush=True,
        )
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGINT, signal.SIGTERM):
            with contextlib.suppress(NotImplementedError):
                loop.add_signal_handler(sig, stop.set)
        await stop.wait()
        await shutdown(broker)

    try:
        asyncio.run(main())
    except BrokerStartError as exc:
        print(f"studtable broker: {exc}", file=sys.stderr)
        return 1
    return 0
