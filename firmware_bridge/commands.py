"""The firmware_bridge subcommands of ``studtable``: deck, shoe-sim, bridge."""

from __future__ import annotations

import argparse
import json
import logging
import sys
import threading
from pathlib import Path
from typing import Any


def register(sub: Any) -> None:
    """Add this package's subcommands to the ``studtable`` parser."""
    deck = sub.add_parser("deck", help="enroll, list and show RFID-tagged decks")
    dsub = deck.add_subparsers(dest="deck_command", metavar="ACTION")
    dsub.required = True
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--decks", type=Path, default=None, help="deck directory (default $STUDTABLE_DECKS or "
                        "~/.local/share/studtable/decks)")
    enroll = dsub.add_parser("enroll", parents=[common], help="enroll a deck from the shoe or import a file")
    enroll.add_argument("name", help="the deck's name, e.g. red-1")
    src = enroll.add_mutually_exclusive_group(required=True)
    src.add_argument("--port", help="the shoe's serial port or socket:// URL; draw each card and type its name")
    src.add_argument("--import", dest="import_file", type=Path, help="CSV (uid,card) or JSON file to import")
    enroll.add_argument("--baud", type=int, default=115200)
    enroll.add_argument("--replace", action="store_true", help="overwrite an existing deck of that name")
    enroll.set_defaults(handler=_deck_enroll)
    lst = dsub.add_parser("list", parents=[common], help="list enrolled decks")
    lst.set_defaults(handler=_deck_list)
    show = dsub.add_parser("show", parents=[common], help="show a deck's tags and cards")
    show.add_argument("name")
    show.set_defaults(handler=_deck_show)

    sim = sub.add_parser("shoe-sim", help="run a simulated RFID card shoe on a pty or a TCP port")
    where = sim.add_mutually_exclusive_group(required=True)
    where.add_argument("--pty", type=Path, help="create the pty and a symlink to it at this path")
    where.add_argument("--tcp", type=int, help="listen on this TCP port (bridge with --port socket://HOST:PORT)")
    sim.add_argument("--deck", help="enrolled deck to shuffle and deal (default: a made-up deck)")
    sim.add_argument("--decks", type=Path, default=None)
    sim.add_argument("--baud", type=int, default=115200)
    sim.add_argument("--seed", type=int, default=0)
    sim.add_argument("--drop", type=float, default=0.0, help="fraction of bytes dropped")
    sim.add_argument("--corrupt", type=float, default=0.0, help="fraction of bytes corrupted")
    sim.add_argument("--duplicate", type=float, default=0.0, help="fraction of writes repeated")
    sim.set_defaults(handler=_shoe_sim)

    br = sub.add_parser("bridge", help="run the shoe bridge: serial port in, card events to the broker")
    br.add_argument("--config", type=Path, required=True,
                    help="TOML or JSON: table, port, deck, decks_dir, device, broker, broker_dir (or user, password)")
    br.add_argument("--port", help="override the config's port (device path or socket:// URL)")
    br.add_argument("--print", dest="print_messages", action="store_true",
                    help="print the messages as JSON lines instead of publishing them to the broker")
    br.add_argument("-v", "--verbose", action="store_true")
    br.set_defaults(handler=_bridge)


def _registry(path: Path | None) -> Any:
    from firmware_bridge.deck import DeckRegistry, default_decks_dir

    return DeckRegistry(path or default_decks_dir())


def _deck_list(args: argparse.Namespace) -> int:
    reg = _registry(args.decks)
    names = reg.names()
    if not names:
        print(f"no decks enrolled in {reg.directory}")
    for n in names:
        print(n)
    return 0


def _deck_show(args: argparse.Namespace) -> int:
    from firmware_bridge.deck import DeckError

    try:
        deck = _registry(args.decks).load(args.name)
    except DeckError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    print(f"deck {deck.name}: {len(deck.tags)} cards")
    for uid, card in deck.tags.items():
        print(f"{card}  {uid.hex(':')}  {card.name}")
    return 0


def _deck_enroll(args: argparse.Namespace) -> int:
    from firmware_bridge.deck import DeckError, read_import

    reg = _registry(args.decks)
    try:
        if args.import_file:
            deck = read_import(args.import_file, args.name)
        else:
            deck = _enroll_from_shoe(args, reg)
            if deck is None:
                return 1
        path = reg.save(deck, replace=args.replace)
    except (DeckError, OSError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    print(f"deck {deck.name} enrolled: 52 cards, 52 tags -> {path}")
    return 0


def _enroll_from_shoe(args: argparse.Namespace, reg: Any) -> Any:
    """Draw each card through the shoe and type its name.  Names pair with tags strictly in the order
    drawn: a refused name keeps that tag waiting (firmware_bridge.deck.Enrollment), and Enter accepts
    only a suggestion checked against the tag (the card it had in the deck being re-enrolled)."""
    import queue

    from engine import wire
    from firmware_bridge.bridge import BridgeCore, SerialBridge
    from firmware_bridge.deck import DeckError, Enrollment

    known_here = {}
    if args.replace and args.name in reg.names():
        known_here = dict(reg.load(args.name).tags)
    elsewhere = {uid: v for uid, v in reg.tag_index().items() if v[0] != args.name}
    enrol = Enrollment(args.name, elsewhere, known_here)
    uids: queue.Queue[str] = queue.Queue()

    def sink(msg: wire.Message) -> None:
        if msg.kind == "card_drawn":
            uids.put(str(msg.body["uid"]))

    bridge = SerialBridge(args.port, BridgeCore("enroll", "enroll", 1, None, sink), baud=args.baud).start()
    print(f"Enrolling deck {args.name!r}: draw each card through the shoe and type its name (e.g. Ah, Td).")
    try:
        while not enrol.complete:
            while True:  # every tag drawn so far joins the queue, in order
                try:
                    uid_hex = uids.get(timeout=0 if enrol.current is not None else 30)
                except queue.Empty:
                    break
                try:
                    enrol.drawn(bytes.fromhex(uid_hex))
                except DeckError as exc:
                    print(f"  tag {uid_hex} not taken: {exc}")
            uid = enrol.current
            if uid is None:
                problem = bridge.problems[-1] if bridge.problems else "no card drawn for 30 s"
                print(f"  waiting for the next card ({problem})")
                continue
            hint = enrol.suggestion()
            queued = f", {len(enrol.waiting) - 1} more drawn" if len(enrol.waiting) > 1 else ""
            prompt = f"[{len(enrol.pairs) + 1}/52] tag {uid.hex()}{queued}: card? " + (f"[{hint}] " if hint else "")
            try:
                card = enrol.name_current(input(prompt))
            except DeckError as exc:
                print(f"  not taken: {exc}")
                continue
            print(f"  {card} ({card.name}) = tag {uid.hex()}")
        return enrol.finish()
    except (EOFError, KeyboardInterrupt):
        print(f"\nstopped; {len(enrol.pairs)} of 52 cards were enrolled and nothing was saved")
        return None
    finally:
        bridge.stop()


def _shoe_sim(args: argparse.Namespace) -> int:
    from engine.cards import DECK
    from firmware_bridge.deck import Deck, DeckError
    from firmware_bridge.simulator import Faults, ShoeSimulator

    if args.deck:
        try:
            deck = _registry(args.decks).load(args.deck)
        except DeckError as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 1
    else:
        import random

        rng = random.Random(args.seed)
        deck = Deck.build("sim", zip([bytes([4]) + rng.randbytes(6) for _ in range(52)], DECK, strict=True))
    faults = Faults(args.drop, args.corrupt, args.duplicate, seed=args.seed)
    sim = ShoeSimulator(deck, pty_link=args.pty, tcp_port=args.tcp, baud=args.baud, faults=faults,
                        seed=args.seed).start()
    print(f"shoe simulator on {sim.url} (deck {deck.name}); commands: load, draw [N], garbled, reset, "
          "unplug, plug, stall SECONDS, error TEXT, quit", flush=True)
    try:
        for line in sys.stdin:
            words = line.split()
            if not words:
                continue
            cmd, rest = words[0], words[1:]
            try:
                if cmd == "load":
                    sim.load()
                elif cmd == "draw":
                    for _ in range(int(rest[0]) if rest else 1):
                        uid = sim.draw()
                        print(f"drew {deck.tags.get(uid, '??')} {uid.hex()}", flush=True)
                elif cmd == "garbled":
                    print(f"garbled read {sim.garbled_read().hex()}", flush=True)
                elif cmd in ("reset", "unplug", "plug"):
                    getattr(sim, cmd)()
                elif cmd == "stall":
                    sim.stall(float(rest[0]) if rest else 5.0)
                elif cmd == "error":
                    sim.error(255, " ".join(rest) or "simulated error")
                elif cmd in ("quit", "exit"):
                    break
                else:
                    print(f"unknown command {cmd!r}", flush=True)
            except (RuntimeError, ValueError) as exc:
                print(f"error: {exc}", flush=True)
    except KeyboardInterrupt:
        pass
    finally:
        sim.close()
    return 0


def _bridge(args: argparse.Namespace) -> int:
    from engine import wire
    from engine.configfile import ConfigFileError
    from engine.procs import on_sigterm, wait_for
    from firmware_bridge.bridge import BridgeConfig, BridgeCore, BusPublisher, SerialBridge, make_resolver
    from firmware_bridge.deck import DeckError

    logging.basicConfig(level=logging.INFO if args.verbose else logging.WARNING,
                        format="%(asctime)s %(levelname)s %(message)s", stream=sys.stderr)
    cfg = BridgeConfig.load(args.config)  # a ConfigFileError is one line (engine.cli)
    if args.port:
        cfg.port = args.port
    table_file = cfg.config_file is not None and "shoe" in _read_keys(args.config)
    try:
        resolver = make_resolver(cfg)
    except DeckError as exc:
        raise ConfigFileError(args.config, "shoe.deck" if table_file else "deck", str(exc),
                              f"enroll it: studtable deck enroll {cfg.deck} --port {cfg.port} "
                              f"--decks {cfg.decks_dir}") from None
    publish = bool(cfg.broker) and not args.print_messages
    if publish:
        host, port = cfg.host_port()
        user, password = cfg.login()
    session = cfg.next_session()

    publisher: BusPublisher | None = None
    if publish:
        publisher = BusPublisher(host=host, port=port, username=user, password=password, table=cfg.table,
                                 device=cfg.device, session=session, outbox=cfg.outbox_file())
        publisher.start()
        sink: Any = publisher
        print(f"shoe bridge: {cfg.port} -> broker {cfg.broker} as {cfg.device} (table {cfg.table}, "
              f"session {session})", file=sys.stderr)
    else:
        if not cfg.broker:
            print("no broker in the config (broker = \"HOST:PORT\"): printing the messages instead of "
                  "publishing them", file=sys.stderr)

        def sink(msg: wire.Message) -> None:
            # One JSON object per line with the topic and the payload it would publish.
            print(json.dumps({"topic": msg.topic, "payload": wire.encode(msg).decode()}), flush=True)

    core = BridgeCore(cfg.table, cfg.device, session, resolver, sink)
    bridge = SerialBridge(cfg.port, core, baud=cfg.baud)
    bridge.start()
    if publisher is not None:
        threading.Thread(target=_report_broker, args=(publisher, cfg.broker), daemon=True).start()
    stop = on_sigterm()
    try:
        wait_for(stop)
    except KeyboardInterrupt:
        pass
    finally:
        bridge.stop()
        if publisher is not None:
            publisher.stop()
    return 0


def _read_keys(path: Path) -> set[str]:
    from engine.configfile import read_config

    return set(read_config(path))


def _report_broker(publisher: Any, broker: str) -> None:
    """Say once if the broker cannot be reached (paho keeps trying; the shoe's events wait)."""
    if not publisher.wait_connected(publisher.grace + 10.0):
        print(f"warning: no connection to the broker at {broker} yet; check that it runs and that the bridge "
              "role's login is right (still trying; card events wait in the queue)", file=sys.stderr)
