"""Bus latency: a real table input published -> its public/state received, through the engine service.

Against mosquitto (from the generated config) and the embedded amqtt broker, in one run.
Every process is what a table runs: the broker (mosquitto, or ``studtable broker`` for
amqtt), the engine (``studtable engine --config FILE``: the EngineService with its
SQLite store, WAL, synchronous=FULL, on the disk of the temporary directory) and, in
this process, the table's devices:

* a shoe bridge (``shoe-1``, role bridge) that publishes ``sensor/shoe`` card_drawn,
* a dealer console (``console-1``, role console) that publishes ``console/command``,
* a console-role subscriber to ``public/state``, whose receipt ends each sample.

They play real hands of seven-card stud: a dealer deals from a shuffled deck whatever
the state says is due (``next_deal``), the players act at random from the legal options
the state offers (``engine.simulate.ACTION_WEIGHTS``), hands are shown at showdown,
busted players add chips.  Each sample is one accepted input: from just before its
publish to the arrival of the first ``public/state`` whose ``input`` names it (the
engine has decoded it, appended it to the store with an fsync, folded it into the
floor and published the state).  A state that names an error (``last_error``) or an
open prompt stops the run: every sample is an input the engine accepted.

The floor is the broker's own round trip, measured in the same run on the same
broker: a client publishes a QoS 1 message and receives it back.

Rounds alternate between the brokers (floor, engine path; floor, engine path; ...)
so that load from other work on the machine falls on both alike; the load average is
printed with every measurement.  After each engine round the bench waits a second:
the engine checkpoints its store when its table has been quiet for half a second
(as a real table is between hands), and that should not land in the other table's round.

Usage: python bench/bench_bus.py [--n 2000] [--rounds 8] [--engine process|thread]
       [--amqtt process|thread] [--echo] [--only mosquitto|amqtt] [--profile DIR] [--gap MS]

``--engine thread`` runs the EngineService on threads of this process and times its store appends
and its whole message handler (where the time goes);
``--amqtt thread`` runs amqtt in this process (as the one-command demo does);
``--gap MS`` waits between samples (floor and engine alike; on this VM a pause lets the
vCPUs go idle and every wake-up then costs more, so back to back is the default);
``--echo`` adds the old breakdown: a minimal engine (decode, append with fsync, publish
a small retained state) in this process, to separate the bus from the engine's own work.
"""

from __future__ import annotations

import argparse
import getpass
import json
import os
import queue
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import paho.mqtt.client as mqtt
from paho.mqtt.enums import CallbackAPIVersion

from engine import wire
from engine.broker.config import BrokerFiles, write_config
from engine.broker.embedded import EmbeddedBroker, free_port
from engine.bus import BusClient, _no_delay
from engine.cards import DECK
from engine.publicstate import idle_state
from engine.simulate import ACTION_WEIGHTS, pick_weighted
from engine.store import SqliteStore
from engine.wire import Channel, Message

T = "bench"
PLAYERS = 6
STACK = 1000
ROOT = Path(__file__).resolve().parents[1]


def pct(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(p / 100 * (len(ordered) - 1)))]


def loadavg() -> str:
    with open("/proc/loadavg") as f:
        return " ".join(f.read().split()[:3])


def raw_client(files: BrokerFiles, port: int, role: str, client_id: str) -> mqtt.Client:
    c = mqtt.Client(CallbackAPIVersion.VERSION2, client_id=client_id, protocol=mqtt.MQTTv311)
    c.username_pw_set(*files.login(role))
    c.on_socket_open = _no_delay  # the same socket options as BusClient, so the floor is fair
    return c


def python(profile: Path | None, name: str) -> list[str]:
    """The interpreter command line for a child process, under cProfile if asked."""
    if profile is None:
        return [sys.executable]
    profile.mkdir(parents=True, exist_ok=True)
    return [sys.executable, "-m", "cProfile", "-o", str(profile / f"{name}.prof")]


# ----------------------------------------------------------------------------- brokers


class Broker:
    def __init__(self, kind: str, tmp: Path, mode: str, profile: Path | None = None) -> None:
        self.kind = kind
        self.port = free_port()
        self.proc: subprocess.Popen[bytes] | None = None
        self.embedded: EmbeddedBroker | None = None
        run_as = getpass.getuser() if os.geteuid() == 0 else None
        self.files = write_config(tmp / kind, port=self.port, run_as=run_as if kind == "mosquitto" else None)
        self.log = tmp / f"{kind}.log"
        if kind == "mosquitto":
            exe = shutil.which("mosquitto") or "/usr/sbin/mosquitto"
            with open(self.log, "wb") as logf:
                self.proc = subprocess.Popen([exe, "-c", str(self.files.mosquitto_conf)], stdout=logf,
                                             stderr=subprocess.STDOUT)
        elif mode == "process":
            with open(self.log, "wb") as logf:
                self.proc = subprocess.Popen(
                    [*python(profile, "amqtt"), "-m", "engine.broker", "--port", str(self.port), "--config-dir",
                     str(self.files.directory)], stdout=logf, stderr=subprocess.STDOUT, cwd=ROOT)
        else:
            self.embedded = EmbeddedBroker(self.files, "127.0.0.1", self.port).start()
        self._wait_listening()

    def _wait_listening(self) -> None:
        import socket

        deadline = time.monotonic() + 15
        while time.monotonic() < deadline:
            with socket.socket() as s:
                if s.connect_ex(("127.0.0.1", self.port)) == 0:
                    return
            time.sleep(0.05)
        raise RuntimeError(f"{self.kind} did not listen on {self.port}: {self.log.read_text()[-2000:]}")

    def stop(self) -> None:
        if self.proc is not None:
            self.proc.terminate()
            self.proc.wait(10)
        if self.embedded is not None:
            self.embedded.stop()


class FloorProbe:
    """The broker's own round trip: publish QoS 1, receive it back."""

    def __init__(self, broker: Broker) -> None:
        self.got = threading.Event()
        self.topic = wire.topic("bench-floor", Channel.VISION)  # a table no engine listens to
        c = raw_client(broker.files, broker.port, "engine", "floor-probe")
        c.on_message = lambda *a: self.got.set()
        c.connect("127.0.0.1", broker.port)
        c.loop_start()
        c.subscribe(self.topic, qos=1)
        self.c = c
        time.sleep(0.3)

    def run(self, n: int, gap: float = 0.0) -> list[float]:
        out = []
        for _ in range(n):
            time.sleep(gap)
            self.got.clear()
            t0 = time.perf_counter()
            self.c.publish(self.topic, b"x" * 200, qos=1)
            if not self.got.wait(5):
                raise RuntimeError("floor probe: no message back within 5 s")
            out.append((time.perf_counter() - t0) * 1000)
        return out

    def close(self) -> None:
        self.c.disconnect()
        self.c.loop_stop()


# ----------------------------------------------------------------------------- the engine


def engine_config(broker: Broker, store: Path) -> dict[str, Any]:
    return {
        "table": T,
        "game": {"variant": "F7S", "ante": 1, "bring_in": 2, "small_bet": 5, "big_bet": 10},
        "seats": [{"seat": i + 1, "name": f"Player {i + 1}", "stack": STACK} for i in range(PLAYERS)],
        "store": {"url": str(store)},
        "broker": {"host": "127.0.0.1", "port": broker.port, "config_dir": str(broker.files.directory)},
        "engine": {"device": "engine", "auto_start": True},
    }


def config_toml(config: dict[str, Any]) -> str:
    def value(v: Any) -> str:
        if isinstance(v, bool):
            return "true" if v else "false"
        return str(v) if isinstance(v, int) else json.dumps(str(v))

    lines = [f"table = {value(config['table'])}"]
    for section in ("game", "store", "broker", "engine"):
        lines.append(f"\n[{section}]")
        lines += [f"{k} = {value(v)}" for k, v in config[section].items()]
    for seat in config["seats"]:
        lines.append("\n[[seats]]")
        lines += [f"{k} = {value(v)}" for k, v in seat.items()]
    return "\n".join(lines) + "\n"


class Engine:
    def __init__(self, broker: Broker, tmp: Path, mode: str, profile: Path | None = None) -> None:
        config = engine_config(broker, tmp / f"engine-{broker.kind}.db")
        self.proc: subprocess.Popen[bytes] | None = None
        self.service: Any = None
        self.log = tmp / f"engine-{broker.kind}.log"
        if mode == "process":
            path = tmp / f"engine-{broker.kind}.toml"
            path.write_text(config_toml(config), "utf-8")
            with open(self.log, "wb") as logf:
                self.proc = subprocess.Popen([*python(profile, f"engine-{broker.kind}"), "-m", "engine.cli",
                                              "engine", "--config", str(path)],
                                             stdout=logf, stderr=subprocess.STDOUT, cwd=ROOT)
        else:
            from engine.service import EngineConfig, EngineService

            self.service = EngineService(EngineConfig.from_dict(config))
            self.timings: dict[str, list[float]] = {"append (fsync)": [], "engine handler": []}
            self._time(self.service.store, "append", "append (fsync)")
            self._time(self.service, "_handle", "engine handler")
            # When each input reached the engine and when its state left it, to split a sample
            # into bus in, engine, bus out.
            self.arrived: dict[tuple[str, int], float] = {}
            self.sent: dict[tuple[str, int], float] = {}
            handle, publish, core = self.service._handle, self.service.publish, self.service.core

            def handle_at(msg: Message) -> None:
                if msg.seq is not None:
                    self.arrived.setdefault((msg.source, msg.seq), time.perf_counter())
                handle(msg)

            def publish_at(**kw: Any) -> None:
                publish(**kw)
                key = core.last_input
                if key is not None:
                    self.sent.setdefault((key["source"], key["seq"]), time.perf_counter())

            self.service._handle, self.service.publish = handle_at, publish_at
            self.service.start()

    def _time(self, obj: Any, name: str, label: str) -> None:
        """Wrap a method of the in-process engine to time it (``--engine thread`` breakdown)."""
        inner = getattr(obj, name)
        out = self.timings[label]

        def timed(*args: Any, **kwargs: Any) -> Any:
            t0 = time.perf_counter()
            try:
                return inner(*args, **kwargs)
            finally:
                ms = (time.perf_counter() - t0) * 1000
                out.append(ms)
                if args and isinstance(args[0], Message):  # the handler: also by message kind
                    self.timings.setdefault(f"{label}: {args[0].kind}", []).append(ms)

        setattr(obj, name, timed)

    def check(self) -> None:
        if self.proc is not None and self.proc.poll() is not None:
            raise RuntimeError(f"the engine exited: {self.log.read_text()[-3000:]}")

    def stop(self) -> None:
        if self.proc is not None:
            self.proc.terminate()
            self.proc.wait(10)
        if self.service is not None:
            self.service.stop()


# ----------------------------------------------------------------------------- the table's devices


class Table:
    """Shoe, console and a console-role state subscriber, playing real hands from public/state."""

    def __init__(self, broker: Broker, engine: Engine, seed: int) -> None:
        self.broker, self.engine = broker, engine
        self.rng = random.Random(seed)
        self.states: queue.Queue[tuple[float, dict[str, Any]]] = queue.Queue()
        self.state: dict[str, Any] | None = None
        self.hand_id: Any = None
        self.deck: list[str] = []
        self.down: dict[int, list[str]] = {}
        self.counter = 0
        files, port = broker.files, broker.port
        self.bridge = self._bus(files, port, "bridge", "shoe-1")
        self.console = self._bus(files, port, "console", "console-1")
        sub = raw_client(files, port, "console", "console-monitor")
        sub.on_message = self._on_state
        sub.connect("127.0.0.1", port)
        sub.loop_start()
        sub.subscribe(wire.topic(T, Channel.STATE), qos=1)
        self.sub = sub
        self.samples: list[float] = []
        self.kinds: dict[str, list[float]] = {}
        self.hops: dict[str, list[float]] = {}  # with --engine thread: the sample split in three
        self._settle(first=True)

    @staticmethod
    def _bus(files: BrokerFiles, port: int, role: str, device: str) -> BusClient:
        user, pw = files.login(role, device)
        return BusClient(host="127.0.0.1", port=port, username=user, password=pw, table=T, device=device,
                         role=role, session=int(time.time()))

    def _on_state(self, client: Any, userdata: Any, raw: Any) -> None:
        t = time.perf_counter()  # arrival: before anything else is done with it
        self.states.put((t, json.loads(raw.payload)["state"]))

    def start(self) -> None:
        self.bridge.start()
        self.console.start()

    def _next_state(self, timeout: float) -> tuple[float, dict[str, Any]] | None:
        try:
            return self.states.get(timeout=timeout)
        except queue.Empty:
            return None

    def _settle(self, first: bool = False) -> None:
        """Take every state that arrives until the table is quiet (after a hand ends, the engine
        starts the next one by itself and says so in a second state)."""
        due = self.state is not None and self._next_hand_due(self.state)
        got = self._next_state(15 if first else 5.0 if due else 0.0)
        if got is None and first:
            self.engine.check()
            raise RuntimeError(f"no public/state from the engine on {self.broker.kind}")
        while got is not None:
            self.state = got[1]
            got = self._next_state(5.0 if self._next_hand_due(self.state) else 0.0)

    @staticmethod
    def _next_hand_due(s: dict[str, Any]) -> bool:
        """A hand just ended and the engine will start the next one by itself (auto_start)."""
        return (s["phase"] == "complete" and not s.get("prompts")
                and sum(1 for seat in s["seats"] if seat["stack"] > 0) >= 2)

    # -- what the table does next -----------------------------------------------------
    def _next_input(self) -> tuple[BusClient, Channel, str, dict[str, Any]]:
        s = self.state
        assert s is not None
        if s.get("prompts"):
            raise RuntimeError(f"the engine opened a prompt (the bench plays clean hands): {s['prompts']}")
        if s["hand_id"] != self.hand_id and s["phase"] in ("dealing", "betting"):
            self.hand_id = s["hand_id"]
            self.deck = [str(c) for c in DECK]
            self.rng.shuffle(self.deck)
            self.down = {}
        phase = s["phase"]
        if phase == "betting":
            options = s["options"]
            o = pick_weighted(self.rng, options, [ACTION_WEIGHTS.get(o["action"], 1) for o in options])
            amount = None if o["action"] in ("fold", "check") else o["amount"]
            return self.console, Channel.COMMAND, "action", {"seat": s["to_act"], "action": o["action"],
                                                             "amount": amount}
        if phase == "dealing":
            due = s["next_deal"][0]
            card = self.deck.pop()
            if due["kind"] == "card" and not due["face_up"]:
                self.down.setdefault(due["seat"], []).append(card)
            self.counter += 1
            return self.bridge, Channel.SHOE, "card_drawn", {
                "counter": self.counter, "uid": f"04{self.counter:012x}", "card": card, "deck": "d1",
                "quality": 200, "status": "ok"}
        if phase == "showdown":
            seat = s["to_act"]
            return self.console, Channel.COMMAND, "show", {"seat": seat, "cards": self.down[seat]}
        if phase not in ("complete", "idle"):
            raise RuntimeError(f"phase {phase}: {json.dumps(s)[:3000]}")
        # Between hands with fewer than two players who have chips: buy the busted ones back in.
        for seat in s["seats"]:
            if seat["stack"] == 0:
                return self.console, Channel.COMMAND, "table", {"op": "add_chips", "seat": seat["seat"],
                                                                "amount": STACK}
        return self.console, Channel.COMMAND, "table", {"op": "start_hand", "seat": None}

    def play(self, n: int, gap: float = 0.0) -> list[float]:
        out = []
        for _ in range(n):
            time.sleep(gap)
            client, channel, kind, body = self._next_input()
            t0 = time.perf_counter()
            msg = client.publish(channel, kind, **body)
            while True:
                got = self._next_state(5)
                if got is None:
                    self.engine.check()
                    raise RuntimeError(f"{self.broker.kind}: no public/state for {kind} {body} within 5 s")
                t1, state = got
                inp = state.get("input") or {}
                if (inp.get("source"), inp.get("session"), inp.get("seq")) == (msg.source, msg.session, msg.seq):
                    break
            ms = (t1 - t0) * 1000
            arrived, sent = getattr(self.engine, "arrived", {}), getattr(self.engine, "sent", {})
            key = (msg.source, msg.seq)
            if key in arrived and key in sent:
                for label, a, b in (("bus in", t0, arrived[key]), ("engine", arrived[key], sent[key]),
                                    ("bus out", sent[key], t1)):
                    self.hops.setdefault(label, []).append((b - a) * 1000)
            out.append(ms)
            self.kinds.setdefault(kind, []).append(ms)
            if state.get("last_error"):
                raise RuntimeError(f"the engine refused {kind} {body}: {state['last_error']}")
            self.state = state
            self._settle()
        self.samples += out
        return out

    def close(self) -> None:
        self.console.stop()
        self.bridge.stop()
        self.sub.disconnect()
        self.sub.loop_stop()


# ----------------------------------------------------------------------------- the echo breakdown


def echo_path(broker: Broker, n: int, store_path: Path) -> list[float]:
    """A minimal engine in this process: decode, append (fsync), publish a small retained state."""
    files, port = broker.files, broker.port
    table = "bench-echo"  # not the real engine's table, so it does not see these inputs
    store = SqliteStore(store_path, table)
    state_seen = threading.Event()

    def client(role: str, device: str, **kw: Any) -> BusClient:
        user, pw = files.login(role, device)
        return BusClient(host="127.0.0.1", port=port, username=user, password=pw, table=table, device=device,
                         role=role, session=1, **kw)

    echo: BusClient

    def on_input(msg: Message) -> None:
        assert msg.seq is not None and msg.session is not None
        store.append(msg.source, msg.session, msg.seq, msg.kind, dict(msg.body))
        echo.publish(Channel.STATE, "state", state=dict(idle_state(T).to_json(), x_last=msg.seq))

    echo = client("engine", "echo-engine", on_message=on_input)
    echo.subscribe(Channel.COMMAND)
    echo.start()
    console = client("console", "echo-console", on_message=lambda m: state_seen.set()
                     if m.source == "echo-engine" else None)
    console.subscribe(Channel.STATE)
    console.start()
    time.sleep(0.3)
    out = []
    for i in range(n):
        state_seen.clear()
        t0 = time.perf_counter()
        console.publish(Channel.COMMAND, "report", report="echo", seat=1 + i % 8)
        if not state_seen.wait(5):
            raise RuntimeError(f"echo: no state for input {i}")
        out.append((time.perf_counter() - t0) * 1000)
    console.stop()
    echo.stop()
    store.close()
    return out


# ----------------------------------------------------------------------------- the run


def line(label: str, values: list[float]) -> str:
    return (f"{label:14s} n {len(values):5d}  p50 {statistics.median(values):6.2f} ms  "
            f"p99 {pct(values, 99):6.2f} ms  max {max(values):6.2f} ms")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--n", type=int, default=2000, help="inputs per broker (default %(default)s)")
    ap.add_argument("--rounds", type=int, default=8, help="rounds the inputs are split into (default %(default)s)")
    ap.add_argument("--engine", choices=("process", "thread"), default="process")
    ap.add_argument("--amqtt", choices=("process", "thread"), default="process")
    ap.add_argument("--only", choices=("mosquitto", "amqtt"), default=None)
    ap.add_argument("--echo", action="store_true", help="also measure the minimal in-process echo engine")
    ap.add_argument("--gap", type=float, default=0.0,
                    help="ms between one sample's end and the next input, for floor and engine alike "
                         "(default %(default)s: back to back)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--profile", type=Path, default=None,
                    help="run the engine and amqtt processes under cProfile, stats into this directory")
    ap.add_argument("--tmp", type=Path, default=None, help="where the stores go (default: a new temporary dir)")
    args = ap.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="bench-bus-", dir=args.tmp))
    kinds = [k for k in ("mosquitto", "amqtt") if args.only in (None, k)]
    print(f"bus bench: {args.n} inputs per broker in {args.rounds} interleaved rounds, {args.gap:g} ms between "
          f"samples; engine as a {args.engine}, amqtt as a {args.amqtt}; stores in {tmp} (SQLite WAL, "
          "synchronous=FULL)")
    print(f"load average at start: {loadavg()}  ({os.cpu_count()} cpus)", flush=True)
    brokers: dict[str, Broker] = {}
    engines: dict[str, Engine] = {}
    tables: dict[str, Table] = {}
    probes: dict[str, FloorProbe] = {}
    floors: dict[str, list[float]] = {k: [] for k in kinds}
    echoes: dict[str, list[float]] = {k: [] for k in kinds}
    cleanup: list[Callable[[], None]] = []
    try:
        for k in kinds:
            brokers[k] = Broker(k, tmp, args.amqtt, args.profile)
            cleanup.append(brokers[k].stop)
            engines[k] = Engine(brokers[k], tmp, args.engine, args.profile)
            cleanup.append(engines[k].stop)
            tables[k] = Table(brokers[k], engines[k], args.seed)
            cleanup.append(tables[k].close)
            tables[k].start()
            probes[k] = FloorProbe(brokers[k])
            cleanup.append(probes[k].close)
        for k in kinds:  # warm up: a hand or so each, not counted
            tables[k].play(40)
            tables[k].samples.clear()
            tables[k].kinds.clear()
            tables[k].hops.clear()
            probes[k].run(100)
            for values in getattr(engines[k], "timings", {}).values():
                values.clear()
        per_round = [args.n // args.rounds + (1 if r < args.n % args.rounds else 0) for r in range(args.rounds)]
        for r, count in enumerate(per_round):
            order = kinds if r % 2 == 0 else kinds[::-1]
            for k in order:
                fl = probes[k].run(count, args.gap / 1000)
                floors[k] += fl
                got = tables[k].play(count, args.gap / 1000)
                # The engine does its store upkeep once its table has been quiet for 0.5 s: let
                # that happen now, not during the next round, which is the other table's.
                time.sleep(1.0)
                if args.echo:
                    echoes[k] += echo_path(brokers[k], count, tmp / f"echo-{k}-{r}.db")
                print(f"  round {r + 1}/{args.rounds} {k:9s} floor p99 {pct(fl, 99):6.2f} ms  engine p50 "
                      f"{statistics.median(got):5.2f} p99 {pct(got, 99):6.2f} ms  load {loadavg()}", flush=True)
        print(f"load average at end: {loadavg()}")
        for k in kinds:
            fl, eng = floors[k], tables[k].samples
            print(f"{k}:")
            print("  " + line("floor", fl))
            print("  " + line("engine path", eng))
            for kind, vals in sorted(tables[k].kinds.items()):
                print("    " + line(kind, vals))
            for label, values in tables[k].hops.items():
                print("    split: " + line(label, values))
            for label, values in sorted(getattr(engines[k], "timings", {}).items()):
                if values:
                    print("    in the engine: " + line(label, values))
            if args.echo:
                print("  " + line("echo engine", echoes[k]))
            print(f"  p99 over floor {pct(eng, 99) - pct(fl, 99):+6.2f} ms (goal <= 5)  "
                  f"hands {tables[k].state['hand_id'] if tables[k].state else 0}")
    finally:
        for fn in reversed(cleanup):
            try:
                fn()
            except Exception as exc:  # report it and go on cleaning up
                print(f"cleanup: {exc!r}", file=sys.stderr)
        if args.tmp is None:
            shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
