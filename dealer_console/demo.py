"""The whole table in one command: ``studtable demo``.

Theory of operation
-------------------
``TableStack`` starts every part of a table the way a cardroom runs it, each
talking to the others only over MQTT and the shoe's serial link:

    embedded amqtt broker (generated users and ACL, loopback, a temp dir)
    engine service (SQLite store in the temp dir; a thread, or a real
        ``studtable engine`` process for the crash drills)
    shoe simulator on a pseudo-terminal  --serial frames-->  shoe bridge
        (``firmware_bridge``: framing, ACKs, de-duplication, BusPublisher)
    a console-role client (the simulated dealer's touch screen) and a
        recorder-role client (the finished hands, for the check)

``SimulatedTable`` is the people at the table.  It reads only what a console
may read (``public/state`` and ``dealer/prompt``) and does what the state asks:
when the state says a card is due (``next_deal``) the dealer draws the next
card from the simulated shoe (a real serial frame through the bridge); when a
player is to act, that player picks one of the legal options the state lists
(random, weighted like ``engine.simulate``, deterministic from the seed) and
the dealer enters it as a console ``action``; at showdown the dealer enters
each shown hand (``show``); when a prompt opens the dealer rules on it.  It
never looks inside the engine.

Meanwhile it writes down the simulated truth: every card as it left the shoe
and where the dealer put it, every action entered, every hand shown.  When a
hand's record arrives on ``history/hand`` (the recorder role), the record is
replayed through the engine's own ``Hand`` and compared with the truth: the
same cards to the same seats face up or down in the same order, the same
burns and set-aside cards, the same actions, the hands shown as dealt, the
hand complete and every chip accounted for.  ``run_demo`` returns a summary
and ``ok`` only if every hand passed.

Drills (``--drill``) make one thing go wrong mid-hand, on purpose:

``shoe-cable``      the shoe's USB cable is pulled (the pty closes) while a card
                    is due; the dealer draws it anyway; the console sees the
                    shoe go offline; the cable goes back in; the card, kept in
                    the shoe, arrives once; the dealer acknowledges the prompt.
``broker-restart``  the embedded broker is stopped and started again mid-hand;
                    every client reconnects; play resumes; nothing is lost.
``premature-card``  the dealer draws a card while betting is open; the engine
                    raises ``stud.premature-card``; the dealer confirms the
                    ruling; after the round one card per active player is set
                    aside before the burn (RRoP stud 14).
``engine-kill``     the engine runs as its own process and is killed with
                    SIGKILL mid-hand, a card is drawn while it is dead, it is
                    started again, replays its store and the hand goes on.

``exposed-holecard``  the dealer deals a seat's first hole card face up; the shoe says it went
                    down, only the camera sees it face up; ``stud.exposed-holecard`` (RRoP
                    stud 5): it plays as the up card and the seat's other cards come down.
``card-off-table``  the first hole card flies off the felt onto the rail; the camera reports it
                    off the felt; ``stud.card-off-table`` (RRoP stud 11): it plays as exposed.
``camera-stall``    the camera stops delivering frames mid-hand; the vision service's frame
                    watchdog says offline; the engine prompts ``source.offline``; the hand goes
                    on with the shoe; frames return a street later and the camera catches up.

The camera (``demo_camera``): ``vision.camera_sim.TableCamera`` draws the felt as the dealer
lays each card (a fixed camera pose, real Aisleriot art, fresh sensor noise every frame), and
the production vision pipeline reads those frames in its own process (enrolled deck,
calibration from the printed markers, ``Detector``, ``Tracker``, ``VisionCore``) and publishes
on the bus as ``cam-1``.  At the end of every hand the service's stable view is compared with
what lies on the felt; the summary reports it (a camera misread is reported, not a failed hand:
the shoe is the deal's source of truth).  With ``processes`` the engine and the shoe bridge run
as ``studtable engine`` and ``studtable bridge`` processes too.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import random
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol, TextIO

from engine import wire
from engine.bus import BusClient
from engine.cards import DECK
from engine.wire import Channel, Message, Role

log = logging.getLogger("studtable.demo")

DRILLS = ("shoe-cable", "broker-restart", "premature-card", "engine-kill", "exposed-holecard", "card-off-table",
          "camera-stall")
# Drills that need the camera: only it can see these.
CAMERA_DRILLS = ("exposed-holecard", "card-off-table", "camera-stall")
NAMES = ("Ann", "Bob", "Cy", "Dee", "Eve", "Fay")
VARIANTS = {"stud": "F7S", "F7S": "F7S", "stud8": "F7S/8", "F7S/8": "F7S/8", "razz": "FR", "FR": "FR"}
SHOE_DEVICE = "shoe-1"
CONSOLE_DEVICE = "console-sim"
RECORDER_DEVICE = "recorder-sim"
ENGINE_DEVICE = "engine"
# How often a simulated player picks each kind of action when it is legal (engine.simulate's weights).
ACTION_WEIGHTS = {"fold": 2, "check": 6, "call": 6, "bring_in": 6, "complete": 2, "bet": 3, "raise": 2}


class DemoError(RuntimeError):
    """Something in the demo table failed; the message says what and where to look."""


# ----------------------------------------------------------------------------- options


@dataclass
class DemoOptions:
    hands: int = 5
    seed: int = 1
    variant: str = "F7S"
    players: int = 6
    stack: int = 500
    table: str = "demo"
    drill: str | None = None
    pace: float = 0.0  # seconds between the dealer's and the players' moves
    autoplay: bool = True  # the simulated players act; False: a person presses the console's buttons
    step_timeout: float = 15.0  # longest wait for the engine to answer one input
    engine_process: bool = False  # run the engine as a `studtable engine` process (engine-kill needs it)
    workdir: Path | None = None  # keep the broker config, store and pty here (default: a temp dir)
    camera: bool = True  # the simulated overhead camera and the vision service reading it
    bridge_process: bool = False  # run the shoe bridge as a `studtable bridge` process (else a thread here)
    processes: bool = False  # engine and bridge as their own processes, as a real table runs them
    camera_fps: float = 12.0

    def check(self) -> None:
        if self.variant not in VARIANTS:
            raise DemoError(f"unknown variant {self.variant!r}; use one of {', '.join(sorted(set(VARIANTS)))}")
        self.variant = VARIANTS[self.variant]
        if not 2 <= self.players <= 6:
            # 7 or 8 players can run out of cards on seventh street (RRoP stud 15: common card or
            # reshuffle); the engine's shoe input has no way yet to say which, so the demo stops at 6.
            raise DemoError("--players must be 2 to 6 (a seven- or eight-handed deal may need a common card)")
        if self.drill is not None and self.drill not in DRILLS:
            raise DemoError(f"unknown drill {self.drill!r}; drills: {', '.join(DRILLS)}")
        if self.drill == "engine-kill":
            self.engine_process = True
        if self.processes:
            self.engine_process = self.bridge_process = True
        if self.drill in CAMERA_DRILLS and not self.camera:
            raise DemoError(f"the {self.drill} drill needs the camera (leave out --no-camera)")
        if self.hands < 1:
            raise DemoError("--hands must be at least 1")


# ----------------------------------------------------------------------------- the parts


class Broker(Protocol):
    host: str
    port: int

    def login(self, role: Role | str) -> tuple[str, str]: ...

    def start(self) -> Any: ...

    def stop(self) -> None: ...


def embedded_broker(directory: Path, host: str = "127.0.0.1") -> Any:
    """The embedded amqtt broker with a generated config in ``directory``; restartable on its port."""
    from engine.broker.config import write_config
    from engine.broker.embedded import RestartableBroker, free_port

    return RestartableBroker(write_config(directory, host=host, port=free_port(host)))


def _cache_dir() -> Path:
    from vision.deckart import cache_root

    return cache_root()


def game_config(opts: DemoOptions) -> dict[str, Any]:
    return {"variant": opts.variant, "ante": 1, "bring_in": 2, "small_bet": 5, "big_bet": 10}


def engine_config_dict(opts: DemoOptions, broker: Broker, store: Path) -> dict[str, Any]:
    user, password = broker.login(Role.ENGINE)
    return {
        "table": opts.table,
        "game": game_config(opts),
        "seats": [{"seat": i + 1, "name": NAMES[i], "stack": opts.stack} for i in range(opts.players)],
        "store": {"url": str(store)},
        "broker": {"host": broker.host, "port": broker.port, "username": user, "password": password},
        "engine": {"device": ENGINE_DEVICE, "auto_start": True},
    }


def _toml_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return str(value)
    return json.dumps(str(value))  # a JSON string is a valid TOML basic string


def engine_config_toml(config: Mapping[str, Any]) -> str:
    """The engine config dict as the TOML file ``studtable engine --config`` reads."""
    lines = [f"table = {_toml_value(config['table'])}"]
    for section in ("game", "store", "broker", "engine"):
        lines.append(f"\n[{section}]")
        lines += [f"{k} = {_toml_value(v)}" for k, v in config[section].items()]
    for seat in config["seats"]:
        lines.append("\n[[seats]]")
        lines += [f"{k} = {_toml_value(v)}" for k, v in seat.items()]
    return "\n".join(lines) + "\n"


class ThreadEngine:
    """The engine service on threads of this process."""

    def __init__(self, config: Mapping[str, Any]) -> None:
        self.config = dict(config)
        self.service: Any = None

    def start(self) -> None:
        from engine.service import EngineConfig, EngineService

        self.service = EngineService(EngineConfig.from_dict(self.config)).start()

    def stop(self) -> None:
        if self.service is not None:
            self.service.stop()
            self.service = None

    def kill(self) -> None:
        raise DemoError("the engine runs in this process; the engine-kill drill runs it as a process")

    @property
    def pid(self) -> int | None:
        return None


class ChildProcess:
    """A ``studtable`` subcommand as a child process with its log in the demo's directory."""

    def __init__(self, args: list[str], log_path: Path) -> None:
        self.args = args
        self.log_path = log_path
        self.proc: subprocess.Popen[bytes] | None = None
        self.starts = 0

    def start(self) -> None:
        from engine import procs

        # Its own process group: a Ctrl-C at the terminal reaches the demo, which stops it in order.
        self.proc = procs.studtable(self.args, self.log_path, new_group=True)
        self.starts += 1

    def stop(self) -> None:
        from engine import procs

        procs.stop(self.proc, 10)
        self.proc = None

    def kill(self) -> None:
        """SIGKILL: no clean shutdown, no offline message; the broker sends its Last Will."""
        from engine import procs

        procs.kill(self.proc)
        self.proc = None

    @property
    def pid(self) -> int | None:
        return self.proc.pid if self.proc is not None else None

    def log_tail(self) -> str:
        try:
            return self.log_path.read_text("utf-8", "replace")[-2000:]
        except FileNotFoundError:
            return ""


def _private_file(path: Path, text: str) -> Path:
    path.write_text(text, "utf-8")
    os.chmod(path, 0o600)  # it holds a broker password
    return path


class ProcessEngine(ChildProcess):
    """``studtable engine --config FILE`` as a child process (what a real table runs)."""

    def __init__(self, config: Mapping[str, Any], directory: Path) -> None:
        self.path = _private_file(directory / "engine.toml", engine_config_toml(config))
        super().__init__(["engine", "--config", str(self.path)], directory / "engine.log")


class ProcessBridge(ChildProcess):
    """``studtable bridge --config FILE`` as a child process reading the simulator's pty."""

    def __init__(self, directory: Path, deck: Any, port: Path, table: str, broker: Broker) -> None:
        from firmware_bridge.deck import DeckRegistry

        DeckRegistry(directory / "decks").save(deck, replace=True)
        user, password = broker.login(Role.BRIDGE)
        settings = {"table": table, "port": port, "deck": deck.name, "decks_dir": directory / "decks",
                    "device": SHOE_DEVICE, "broker": f"{broker.host}:{broker.port}", "user": user,
                    "password": password, "state_file": directory / "bridge.session"}
        self.path = _private_file(directory / "bridge.toml",
                                  "".join(f"{k} = {_toml_value(v)}\n" for k, v in settings.items()))
        super().__init__(["bridge", "--config", str(self.path)], directory / "bridge.log")

    @property
    def problems(self) -> str:
        return self.log_tail()[-1000:]


# ----------------------------------------------------------------------------- what the console sees


def signature(state: Mapping[str, Any]) -> str:
    """What changes in ``public/state`` when the engine accepts any input of the demo's (a burn
    moves ``next_deal`` on).  Prompts about devices (``source.*``) are left out: they follow
    availability messages, not the dealer's inputs, so they must not pass for an answer."""
    seats = [(s.get("seat"), s.get("status"), s.get("committed"), s.get("stack"), len(s.get("cards", [])),
              len(s.get("shown", []))) for s in state.get("seats", [])]
    prompts = [p.get("id") for p in state.get("prompts", []) or [] if not str(p.get("rule")).startswith("source.")]
    return json.dumps([state.get("hand_id"), state.get("hands_played"), state.get("phase"),
                       state.get("street_index"), state.get("to_act"), state.get("pot"), seats, prompts,
                       state.get("next_deal")])


class TableWatch:
    """The console-role client's view (state, prompts, availability) and the recorder's hands."""

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self.state: dict[str, Any] | None = None
        self.state_at = 0.0
        self.states = 0
        self.sig = ""
        self.sig_at = 0.0  # when the signature last changed (time.monotonic)
        self.avail: dict[str, bool] = {}
        self.avail_events: list[tuple[float, str, bool]] = []
        self.histories: dict[str, dict[str, Any]] = {}
        self.stopping = threading.Event()

    def on_console(self, msg: Message) -> None:
        now = time.monotonic()
        with self._cond:
            if msg.channel is Channel.STATE:
                state = dict(msg.body["state"])
                sig = signature(state)
                if sig != self.sig:
                    self.sig, self.sig_at = sig, now
                self.state, self.state_at = state, now
                self.states += 1
            elif msg.channel is Channel.AVAIL:
                online = msg.kind == wire.AVAILABILITY_ONLINE
                self.avail[msg.source] = online
                self.avail_events.append((now, msg.source, online))
            self._cond.notify_all()

    def on_recorder(self, msg: Message) -> None:
        if msg.channel is Channel.HISTORY:
            with self._cond:
                self.histories[str(msg.body["hand"])] = dict(msg.body)
                self._cond.notify_all()

    def wait(self, predicate: Callable[[], bool], timeout: float | None, what: str) -> None:
        deadline = None if timeout is None else time.monotonic() + timeout
        with self._cond:
            while not predicate():
                if self.stopping.is_set():
                    raise DemoError("stopped")
                left = 0.5 if deadline is None else min(0.5, deadline - time.monotonic())
                if left <= 0:
                    raise DemoError(f"timed out after {timeout:.0f} s waiting for {what}")
                self._cond.wait(left)

    def current(self) -> dict[str, Any]:
        with self._cond:
            if self.state is None:
                raise DemoError("no table state yet")
            return self.state


class TableStack:
    """Broker, engine, shoe simulator, bridge and the demo's own console and recorder clients."""

    def __init__(self, opts: DemoOptions, *, broker: Broker | None = None) -> None:
        self.opts = opts
        self._own_dir = opts.workdir is None
        if opts.workdir is None:
            from engine.procs import scratch_dir

            self.dir = scratch_dir("studtable-demo-")  # and the folders of demos that died are removed
        else:
            self.dir = opts.workdir
        self.dir.mkdir(parents=True, exist_ok=True)
        self._own_broker = broker is None
        self.broker: Broker | Any = broker
        self.store = self.dir / "table.sqlite"
        self.watch = TableWatch()
        self.engine: ThreadEngine | ProcessEngine | None = None
        self.sim: Any = None
        self.deck: Any = None
        self.bridge: Any = None
        self.publisher: Any = None
        self.console: BusClient | None = None
        self.recorder: BusClient | None = None
        self.draw_times: dict[bytes, float] = {}
        self._probe_no = 0
        self.camera: Any = None  # dealer_console.demo_camera.CameraProcess
        self.camera_skipped: str | None = None  # why the camera could not run here

    # -- life cycle -----------------------------------------------------------------
    def start(self) -> TableStack:
        try:
            self._start()
        except Exception:
            self.stop()
            raise
        return self

    def _start(self) -> None:
        from firmware_bridge.bridge import BridgeCore, BusPublisher, SerialBridge
        from firmware_bridge.deck import Deck, Resolver
        from firmware_bridge.simulator import ShoeSimulator

        opts = self.opts
        if self.broker is None:
            try:
                self.broker = embedded_broker(self.dir / "broker").start()
            except Exception as exc:
                raise DemoError(f"the embedded broker did not start: {exc}") from exc
        config = engine_config_dict(opts, self.broker, self.store)
        self.engine = ProcessEngine(config, self.dir) if opts.engine_process else ThreadEngine(config)
        # The demo's console and recorder first, so they see everything from the first state on.
        self.console = self._client(Role.CONSOLE, CONSOLE_DEVICE, self.watch.on_console,
                                    (Channel.STATE, Channel.AVAIL))
        self.recorder = self._client(Role.RECORDER, RECORDER_DEVICE, self.watch.on_recorder, (Channel.HISTORY,),
                                     persistent=True)
        self.engine.start()
        # The shoe: an enrolled deck (made-up tags), the simulator on a pty, the bridge reading it.
        rng = random.Random(opts.seed)
        uids = [bytes([0x04]) + rng.randbytes(6) for _ in range(52)]
        self.deck = Deck.build("demo", zip(uids, DECK, strict=True))
        self.sim = ShoeSimulator(self.deck, pty_link=self.dir / "ttyShoe", seed=opts.seed).start()
        self.sim.on_draw = self._drawn
        user, password = self.broker.login(Role.BRIDGE)
        if opts.bridge_process:
            self.bridge = ProcessBridge(self.dir, self.deck, self.dir / "ttyShoe", opts.table, self.broker)
            self.bridge.start()
        else:
            self.publisher = BusPublisher(host=self.broker.host, port=self.broker.port, username=user,
                                          password=password, table=opts.table, device=SHOE_DEVICE, session=1)
            self.publisher.start()
            core = BridgeCore(opts.table, SHOE_DEVICE, 1, Resolver([self.deck], "demo"), self.publisher)
            self.bridge = SerialBridge(self.sim.url, core, reconnect_interval=0.2).start()
            if not self.publisher.wait_connected(15):
                raise DemoError(f"the shoe bridge did not reach the broker; problems: {self.bridge.problems}")
        self.watch.wait(lambda: self.watch.avail.get(SHOE_DEVICE) is True, 15, "the shoe to come online")
        if opts.camera:
            from dealer_console.demo_camera import CAMERA_DEVICE, CameraProcess, CameraUnavailable

            try:
                self.camera = CameraProcess(self.broker, opts.table, opts.players, seed=opts.seed,
                                            cache=_cache_dir(), fps=opts.camera_fps).start()
            except CameraUnavailable as exc:
                if opts.drill in CAMERA_DRILLS:
                    raise DemoError(f"the {opts.drill} drill needs the camera: {exc}") from exc
                # The table runs without it (the shoe is the deal's source), and says why.
                self.camera_skipped = str(exc)
                log.error("demo: no camera: %s; the table runs with the shoe alone", exc)
            else:
                self.watch.wait(lambda: self.watch.avail.get(CAMERA_DEVICE) is True, 15,
                                "the camera to come online")
        self.watch.wait(lambda: self.watch.state is not None and self.watch.state.get("hand_id") is not None,
                        20, "the engine's first table state")

    def _client(self, role: Role, device: str, handler: Callable[[Message], None],
                channels: tuple[Channel, ...], persistent: bool = False) -> BusClient:
        user, password = self.broker.login(role)
        client = BusClient(host=self.broker.host, port=self.broker.port, username=user, password=password,
                           table=self.opts.table, device=device, role=role, session=time.time_ns() // 1_000_000,
                           persistent=persistent, on_message=handler)
        for ch in channels:
            client.subscribe(ch)
        return client.start(wait=10.0)

    def _drawn(self, uid: bytes, at: float) -> None:
        self.draw_times[uid] = at

    def stop(self) -> None:
        self.watch.stopping.set()
        parts: list[tuple[str, Callable[[], object]]] = [
            ("camera", lambda: self.camera.stop() if self.camera else None),
            ("bridge", lambda: self.bridge.stop() if self.bridge else None),
            ("shoe", lambda: self.sim.close() if self.sim else None),
            ("bridge bus", lambda: self.publisher.stop() if self.publisher else None),
            ("engine", lambda: self.engine.stop() if self.engine else None),
            ("console", lambda: self.console.stop(1.0) if self.console else None),
            ("recorder", lambda: self.recorder.stop(1.0) if self.recorder else None),
            ("broker", lambda: self.broker.stop() if self.broker is not None and self._own_broker else None),
        ]
        for name, fn in parts:
            try:
                fn()
            except Exception as exc:  # keep stopping the rest
                log.warning("stopping the %s: %s", name, exc)
        if self._own_dir:
            shutil.rmtree(self.dir, ignore_errors=True)

    # -- things the drills do -------------------------------------------------------
    def probe_engine(self, timeout: float = 20.0) -> None:
        """Make sure the engine is connected *and subscribed*: it answers another device's
        availability with a fresh state, and it subscribes to everything in one packet."""
        before = self.watch.states
        self._probe_no += 1
        probe = self._client(Role.MONITOR, "monitor-probe", lambda m: None, ())
        try:
            self.watch.wait(lambda: self.watch.states > before, timeout, "the engine to answer after reconnecting")
        finally:
            probe.stop(1.0)

    def hands_in_store(self) -> int:
        from engine.store import open_store

        store = open_store(str(self.store), self.opts.table)
        try:
            return len(store.list_hands())
        finally:
            store.close()


# ----------------------------------------------------------------------------- the simulated people


@dataclass
class HandTruth:
    hand_id: int
    cards: list[tuple[str, int | None, bool | None, str]] = field(default_factory=list)  # (kind, seat, up, card)
    actions: list[tuple[int, str, int | None]] = field(default_factory=list)
    shown: dict[int, list[str]] = field(default_factory=dict)

    def down_cards(self, seat: int) -> list[str]:
        return [c for kind, s, up, c in self.cards if kind == "card" and s == seat and not up]


def percentile(values: list[float], q: float) -> float | None:
    if not values:
        return None
    xs = sorted(values)
    k = min(len(xs) - 1, max(0, round(q / 100 * (len(xs) - 1))))
    return xs[k]


def latency_summary(values_s: list[float]) -> dict[str, Any]:
    ms = [v * 1000 for v in values_s]
    def r(x: float | None) -> float | None:
        return None if x is None else round(x, 2)
    return {"n": len(ms), "p50": r(percentile(ms, 50)), "p99": r(percentile(ms, 99)),
            "max": r(max(ms) if ms else None)}


class Narrator:
    """Prints the hands as they are played, as the table monitor would show them (no hole cards)."""

    def __init__(self, out: TextIO | None) -> None:
        self.out = out
        self._said: set[str] = set()

    def say(self, text: str) -> None:
        if self.out is not None:
            print(text, file=self.out, flush=True)

    def announcements(self, state: Mapping[str, Any]) -> None:
        for a in state.get("announcements", []):
            key = f"{state.get('hand_id')}:{a.get('kind')}:{a.get('text')}"
            if key not in self._said:
                self._said.add(key)
                self.say(f"    dealer: {a.get('text')}")


class SimulatedTable:
    """The dealer and the players: they see only the console's view and act on it."""

    def __init__(self, stack: TableStack, opts: DemoOptions, narrate: TextIO | None = None) -> None:
        self.stack = stack
        self.opts = opts
        self.rng = random.Random(opts.seed)
        self.watch = stack.watch
        self.say = Narrator(narrate)
        self.truths: dict[int, HandTruth] = {}
        self.names: dict[int, str] = {i + 1: NAMES[i] for i in range(opts.players)}
        self.latencies: list[float] = []
        self.inputs = {"cards_drawn": 0, "actions": 0, "shows": 0, "rulings": 0}
        self.prompts_seen: dict[str, dict[str, Any]] = {}
        self.prompts_resolved: list[str] = []
        self.expected_rules: set[str] = set()
        self.drill_report: dict[str, Any] = {}
        self.drill_done = False
        self.failures: list[str] = []
        self.verified: list[str] = []
        self.hand_events = 0
        self.chips: dict[str, int] = {}
        self.camera_checks: list[dict[str, Any]] = []
        self.camera_stalled_until: int | None = None  # camera-stall drill: the street it comes back on

    # -- plumbing ---------------------------------------------------------------------
    def _pause(self, factor: float = 1.0) -> None:
        if self.opts.pace > 0:
            self.watch.stopping.wait(self.opts.pace * factor)

    def _send(self, kind: str, **body: Any) -> None:
        assert self.stack.console is not None
        self.stack.console.publish(Channel.COMMAND, kind, **body)

    def _await_change(self, sig: str, error: Any, what: str, timeout: float | None = None) -> dict[str, Any]:
        """Wait until the state shows the engine took our input; a new refusal is a failure."""
        w = self.watch

        def changed() -> bool:
            s = w.state or {}
            return w.sig != sig or (s.get("last_error") is not None and s.get("last_error") != error)

        w.wait(changed, timeout or self.opts.step_timeout, f"the engine to take {what}")
        state = w.current()
        if w.sig == sig and state.get("last_error"):
            raise DemoError(f"the engine refused {what}: {state['last_error'].get('reason')}")
        return state

    def _draw(self, state: Mapping[str, Any], slot: Mapping[str, Any] | None, wait: bool = True,
              kind: str | None = None, lay: Callable[[Any, int, str], None] | None = None) -> str:
        """The dealer draws the next card from the shoe and puts it where ``slot`` says
        (``lay(camera_table, seat, card)`` puts it somewhere else: the drills' mistakes)."""
        sig, err = self.watch.sig, state.get("last_error")
        uid = self.stack.sim.draw()
        card = str(self.stack.deck.tags[uid])
        self.inputs["cards_drawn"] += 1
        truth = self.truths[int(state["hand_id"])]
        if kind is None:
            assert slot is not None
            kind = str(slot["kind"])
            truth.cards.append((kind, slot.get("seat"), bool(slot.get("face_up")) if kind == "card" else None, card))
            if kind == "card" and self.stack.camera is not None:
                felt = self.stack.camera.table_camera
                if lay is not None:
                    lay(felt, int(slot["seat"]), card)
                else:
                    felt.deal(int(slot["seat"]), card, bool(slot.get("face_up")))
        else:
            truth.cards.append((kind, None, None, card))
        if wait:
            self._await_change(sig, err, f"the {card} from the shoe")
            drawn_at = self.stack.draw_times.get(uid)
            if drawn_at is not None:
                self.latencies.append(self.watch.sig_at - drawn_at)
        return card

    # -- one hand ----------------------------------------------------------------------
    def play(self) -> None:
        for k in range(self.opts.hands):
            if self.watch.stopping.is_set():
                break
            self.play_hand(k)

    def play_hand(self, k: int) -> None:
        w = self.watch
        # A prompt may be open as the hand starts (a device's gap reported late): the loop below rules on it.
        done = set(self.truths)
        w.wait(lambda: (w.state or {}).get("phase") == "dealing" and (w.state or {}).get("hand_id") not in done,
               self.opts.step_timeout, "the next hand to start")
        state = w.current()
        hand_id = int(state["hand_id"])
        self.truths[hand_id] = HandTruth(hand_id)
        self.stack.sim.load()  # the dealer loads a freshly shuffled deck into the shoe
        if self.stack.camera is not None:
            self.stack.camera.table_camera.clear()  # the last hand's cards are in the muck
        self.say.say(f"Hand {hand_id}: {state['game']['name']}, "
                     + ", ".join(f"{s['name']} {s['stack']}" for s in state["seats"] if s["in_hand"]))
        street = None
        while not w.stopping.is_set():
            state = w.current()
            if state.get("hand_id") != hand_id or state.get("phase") == "complete":
                break
            self.say.announcements(state)
            if state.get("street") != street and state.get("phase") == "betting":
                street = state.get("street")
                self.say.say(f"  {street}, pot {state['pot']}: " + "  ".join(
                    f"{s['name']} [{' '.join(c['card'] if c['up'] else 'xx' for c in s['cards'])}]"
                    for s in state["seats"] if s["status"] in ("active", "all_in")))
            if self._drill(state, k):
                continue
            if state.get("prompts"):
                self._rule(state)
            elif state["phase"] == "dealing":
                self._deal(state)
            elif state["phase"] == "betting":
                self._act(state)
            elif state["phase"] == "showdown":
                self._show(state)
            else:
                raise DemoError(f"the table is in phase {state['phase']!r}, which the dealer does not know")
        self._check_camera(hand_id)
        self._check_hand(hand_id)

    def _deal(self, state: Mapping[str, Any]) -> None:
        slots = state.get("next_deal") or []
        if not slots:
            seats = "; ".join(f"{x['seat']} {x['status']} " + " ".join(c["card"] if c["up"] else "xx" for c in x["cards"])
                              for x in state["seats"])
            raise DemoError(f"the state says dealing but names no next card (next_deal is empty); street "
                            f"{state.get('street_index')}, prompts {state.get('prompts')}, seats: {seats}")
        if slots[0].get("kind") == "set_aside":
            # RRoP stud 14: the engine says the next draws after a premature card are set aside.
            card = self._draw(state, None, wait=True, kind="removed")
            self.say.say(f"    set aside {card}")
            return
        self._pause(0.4)
        self._draw(state, slots[0])

    def _act(self, state: Mapping[str, Any]) -> None:
        seat = int(state["to_act"])
        options = list(state.get("options") or [])
        if not options:
            raise DemoError(f"seat {seat} is to act but the state lists no options")
        if not self.opts.autoplay:
            # A person presses the console's buttons; just wait for the state to move on.
            self._await_change(self.watch.sig, state.get("last_error"), f"seat {seat}'s action", timeout=24 * 3600)
            return
        self._pause()
        weights = [ACTION_WEIGHTS.get(o["action"], 1) for o in options]
        o = self.rng.choices(options, weights)[0]
        amount = None if o["action"] in ("fold", "check") else o["amount"]
        sig, err = self.watch.sig, state.get("last_error")
        self._send("action", seat=seat, action=o["action"], amount=amount)
        self.truths[int(state["hand_id"])].actions.append((seat, o["action"], amount))
        self.inputs["actions"] += 1
        self.say.say(f"    {self.names.get(seat, seat)}: {o.get('label') or o['action']}")
        self._await_change(sig, err, f"seat {seat}'s {o['action']}")
        if o["action"] == "fold" and self.stack.camera is not None:
            self.stack.camera.table_camera.muck(seat)  # the dealer pulls the folded cards in

    def _show(self, state: Mapping[str, Any]) -> None:
        seat = int(state["to_act"])
        truth = self.truths[int(state["hand_id"])]
        # The cards dealt down, less any the ruling made an up card (a hole card exposed: RRoP stud 5).
        seat_now = next((s for s in state["seats"] if s["seat"] == seat), {})
        up_now = {c["card"] for c in seat_now.get("cards", []) if c.get("up")}
        cards = [c for c in truth.down_cards(seat) if c not in up_now]
        self._pause()
        sig, err = self.watch.sig, state.get("last_error")
        self._send("show", seat=seat, cards=cards)
        truth.shown[seat] = cards
        self.inputs["shows"] += 1
        seat_view = next(s for s in state["seats"] if s["seat"] == seat)
        self.say.say(f"    {self.names.get(seat, seat)} shows {' '.join(cards)} + "
                     f"{' '.join(seat_view.get('up', []))}")
        self._await_change(sig, err, f"seat {seat}'s hand shown")

    def _rule(self, state: Mapping[str, Any], expected: bool = False) -> None:
        """The dealer rules on the first open prompt: the rules' default (confirm, else the first option)."""
        p = state["prompts"][0]
        pid, rule = str(p["id"]), str(p["rule"])
        self.prompts_seen.setdefault(pid, {"rule": rule, "text": p.get("text"), "expected": expected
                                           or rule in self.expected_rules, "hand": state.get("hand_id")})
        if not self.opts.autoplay:
            self._await_change(self.watch.sig, state.get("last_error"), f"a ruling on {rule}", timeout=24 * 3600)
            return
        ids = [o["id"] for o in p.get("options", [])]
        option = "confirm" if "confirm" in ids or not ids else ids[0]
        self.say.say(f"    prompt {rule}: {p.get('text')} -> {option}")
        self._pause()
        err = state.get("last_error")
        self._send("ruling", prompt=pid, option=option)
        self.inputs["rulings"] += 1
        w = self.watch

        def closed() -> bool:
            s = w.state or {}
            return pid not in [p["id"] for p in s.get("prompts", [])] or (
                s.get("last_error") is not None and s.get("last_error") != err)

        w.wait(closed, self.opts.step_timeout, f"the engine to take the ruling on {rule}")
        s = w.current()
        if pid in [p["id"] for p in s.get("prompts", [])]:
            raise DemoError(f"the engine refused the ruling on {rule}: {s['last_error'].get('reason')}")
        self.prompts_resolved.append(pid)

    # -- drills -------------------------------------------------------------------------
    def _drill(self, state: Mapping[str, Any], k: int) -> bool:
        """Run the drill when its moment comes (once, in the first hand that allows it)."""
        drill = self.opts.drill
        if (self.camera_stalled_until is not None and not state.get("prompts")
                and (state.get("street_index") or 0) >= self.camera_stalled_until):
            self._resume_camera()
        if drill is None or self.drill_done or state.get("prompts"):
            return False
        street = state.get("street_index")
        phase = state.get("phase")
        if drill == "shoe-cable" and phase == "dealing" and (street or 0) >= 1:
            slot = (state.get("next_deal") or [{}])[0]
            if slot.get("kind") == "card":
                self._drill_shoe_cable(state, slot)
                return True
        if drill == "broker-restart" and phase == "betting" and (street or 0) >= 1:
            self._drill_broker_restart(state)
            return True
        if drill == "engine-kill" and phase == "betting" and (street or 0) >= 1:
            self._drill_engine_kill(state)
            return True
        if drill == "premature-card" and phase == "betting" and self._cards_allow_premature(state):
            self._drill_premature(state)
            return True
        if drill in ("exposed-holecard", "card-off-table") and phase == "dealing" and street == 0:
            slot = (state.get("next_deal") or [{}])[0]
            seat_view = next((s for s in state["seats"] if s["seat"] == slot.get("seat")), {})
            if slot.get("kind") == "card" and not slot.get("face_up") and not seat_view.get("cards"):
                self._drill_misplaced_holecard(state, slot, drill)
                return True
        if drill == "camera-stall" and phase == "betting" and (street or 0) >= 1:
            self._drill_camera_stall(state)
            return True
        return False

    def _drill_shoe_cable(self, state: Mapping[str, Any], slot: Mapping[str, Any]) -> None:
        w, sim = self.watch, self.stack.sim
        self.drill_done = True
        self.expected_rules.add("source.offline")
        self.say.say("  DRILL shoe-cable: the shoe's USB cable is pulled")
        t0 = time.monotonic()
        sim.unplug()
        w.wait(lambda: w.avail.get(SHOE_DEVICE) is False, 10, "the console to see the shoe go offline")
        seen_offline = time.monotonic() - t0
        w.wait(lambda: any(p["rule"] == "source.offline" for p in (w.state or {}).get("prompts", [])), 10,
               "the engine's prompt that the shoe is offline")
        # The dealer, not looking at the screen, draws the card that was due: the shoe keeps it.
        sig, err = w.sig, state.get("last_error")
        hand_id = int(state["hand_id"])
        uid = sim.draw()
        card = str(self.stack.deck.tags[uid])
        self.inputs["cards_drawn"] += 1
        self.truths[hand_id].cards.append(("card", slot.get("seat"), bool(slot.get("face_up")), card))
        self.stack.watch.stopping.wait(0.5)
        kept = sim.pending_events()
        self.say.say(f"  DRILL shoe-cable: {card} drawn while unplugged ({kept} event(s) waiting in the shoe); "
                     "cable back in")
        sim.plug()
        w.wait(lambda: w.avail.get(SHOE_DEVICE) is True, 15, "the shoe to come back online")
        back_online = time.monotonic() - t0
        after = self._await_change(sig, err, f"the {card} drawn while the cable was out")
        seat = slot.get("seat")
        seat_view: dict[str, Any] = next((s for s in after["seats"] if s["seat"] == seat), {})
        cards_now = seat_view.get("cards", [])
        self.drill_report = {
            "name": "shoe-cable", "hand": hand_id, "card_drawn_while_unplugged": card, "for_seat": seat,
            "events_kept_in_shoe": kept, "console_saw_offline_after_s": round(seen_offline, 3),
            "back_online_after_s": round(back_online, 3),
            "card_delivered_after_reconnect": len(cards_now) > 0,
        }

    def _drill_broker_restart(self, state: Mapping[str, Any]) -> None:
        w = self.watch
        self.drill_done = True
        hand_id = int(state["hand_id"])
        before = w.current()
        self.say.say("  DRILL broker-restart: stopping the broker mid-hand")
        # The embedded broker keeps nothing across a restart: a camera observation it had taken but
        # not yet delivered is gone, and the engine rightly says so (source.gap).  The shoe's draws are
        # made after the restart and the hand check would catch one lost.
        self.expected_rules.add("source.gap")
        t0 = time.monotonic()
        console, publisher = self.stack.console, self.stack.publisher
        assert console is not None
        self.stack.broker.stop()
        w.wait(lambda: not console.connected, 10, "the console to see the broker go")
        self.watch.stopping.wait(1.0)  # a second with no broker at all
        self.stack.broker.start()
        restarted = time.monotonic() - t0
        w.wait(lambda: console.connected and (publisher.bus.connected if publisher is not None
                                              else w.avail.get(SHOE_DEVICE) is True), 20,
               "the console and the shoe bridge to reconnect")
        self.stack.probe_engine()
        resumed = time.monotonic() - t0
        after = w.current()
        same = signature(after) == signature(before)
        self.say.say(f"  DRILL broker-restart: broker back after {restarted:.1f} s, table resumed after "
                     f"{resumed:.1f} s; state unchanged: {same}")
        self.drill_report = {"name": "broker-restart", "hand": hand_id, "broker_down_s": round(restarted, 3),
                             "resumed_after_s": round(resumed, 3), "state_same_after_restart": same}
        if not same:
            self.failures.append("the table state after the broker restart differs from before it")

    def _drill_engine_kill(self, state: Mapping[str, Any]) -> None:
        w, stack = self.watch, self.stack
        engine = stack.engine
        if not isinstance(engine, ProcessEngine):
            raise DemoError("the engine-kill drill needs the engine as a process")
        self.drill_done = True
        hand_id = int(state["hand_id"])
        before = w.current()
        pid = engine.pid
        self.say.say(f"  DRILL engine-kill: kill -9 {pid} mid-hand")
        engine.kill()
        w.wait(lambda: w.avail.get(ENGINE_DEVICE) is False, 15, "the engine's Last Will (offline)")
        # A player acts while the engine is dead: the command waits in the broker for it.
        opts = [o for o in before["options"] if o["action"] in ("check", "call", "bring_in")] or before["options"]
        o = opts[0]
        seat = int(before["to_act"])
        amount = None if o["action"] in ("fold", "check") else o["amount"]
        self._send("action", seat=seat, action=o["action"], amount=amount)
        self.truths[hand_id].actions.append((seat, o["action"], amount))
        self.inputs["actions"] += 1
        self.say.say(f"    {self.names.get(seat, seat)}: {o.get('label') or o['action']} (engine down)")
        engine.start()
        w.wait(lambda: w.avail.get(ENGINE_DEVICE) is True, 20, "the engine to come back")
        after = self._await_change(signature(before), before.get("last_error"),
                                   "the action entered while the engine was down")
        self.drill_report = {"name": "engine-kill", "hand": hand_id, "killed_pid": pid,
                             "action_while_down": [seat, o["action"], amount],
                             "applied_after_restart": after.get("to_act") != seat or after["pot"] != before["pot"]}

    def _await_prompt(self, rule: str, timeout: float, what: str) -> dict[str, Any]:
        w = self.watch
        w.wait(lambda: any(p["rule"] == rule for p in (w.state or {}).get("prompts", [])), timeout, what)
        return w.current()

    def _drill_misplaced_holecard(self, state: Mapping[str, Any], slot: Mapping[str, Any], drill: str) -> None:
        """A first hole card that lands face up among the down cards, or off the felt: only the camera sees it."""
        self.drill_done = True
        rule = "stud.exposed-holecard" if drill == "exposed-holecard" else "stud.card-off-table"
        self.expected_rules.add(rule)
        hand_id, seat = int(state["hand_id"]), int(slot["seat"])
        if drill == "exposed-holecard":
            self.say.say(f"  DRILL exposed-holecard: seat {seat}'s first hole card is dealt face up")
            def lay(felt: Any, s: int, c: str) -> None:
                felt.deal(s, c, True, spot="down")
        else:
            self.say.say(f"  DRILL card-off-table: seat {seat}'s first hole card flies off the felt")
            def lay(felt: Any, s: int, c: str) -> None:
                felt.pitch_off_felt(s, c, True)
        t0 = time.monotonic()
        card = self._draw(state, slot, lay=lay)
        prompted = self._await_prompt(rule, 20, f"the camera to raise {rule}")
        seen_after = time.monotonic() - t0
        prompt = next(p for p in prompted["prompts"] if p["rule"] == rule)
        self._rule(prompted, expected=True)
        # RRoP stud 5 / 11: the card plays as the up card; the dealer squares it into the stud row.
        assert self.stack.camera is not None
        self.stack.camera.table_camera.move(card, seat, face_up=True, spot="up")
        after = self.watch.current()
        seat_view = next((s for s in after["seats"] if s["seat"] == seat), {})
        up_now = [c["card"] for c in seat_view.get("cards", []) if c.get("up")]
        nxt = [d for d in after.get("next_deal") or [] if d.get("seat") == seat][:1]
        self.drill_report = {"name": drill, "hand": hand_id, "seat": seat, "card": card,
                             "camera_raised_after_s": round(seen_after, 3), "prompt": prompt["id"],
                             "text": prompt.get("text"), "ruling": "confirm", "card_plays_up": card in up_now,
                             "seat_next_card": nxt[0] if nxt else None}
        if card not in up_now:
            self.failures.append(f"{drill}: after the ruling the {card} does not play as seat {seat}'s up card")

    def _drill_camera_stall(self, state: Mapping[str, Any]) -> None:
        """The camera stops delivering frames mid-hand; the vision service says offline; play goes on."""
        from dealer_console.demo_camera import CAMERA_DEVICE

        w = self.watch
        camera = self.stack.camera
        assert camera is not None
        self.drill_done = True
        self.expected_rules.add("source.offline")
        street = int(state.get("street_index") or 0)
        self.say.say(f"  DRILL camera-stall: the camera freezes on {state.get('street')}")
        t0 = time.monotonic()
        camera.capture.stall()
        w.wait(lambda: w.avail.get(CAMERA_DEVICE) is False, 15, "the console to see the camera go offline")
        offline_after = time.monotonic() - t0
        prompted = self._await_prompt("source.offline", 15, "the engine's source.offline prompt for the camera")
        self._rule(prompted, expected=True)
        self.camera_stalled_until = min(street + 1, 4)
        self.drill_report = {"name": "camera-stall", "hand": int(state["hand_id"]), "street": state.get("street"),
                             "offline_seen_after_s": round(offline_after, 3),
                             "frames_before": camera.stats()["frames"]}

    def _resume_camera(self) -> None:
        from dealer_console.demo_camera import CAMERA_DEVICE

        w = self.watch
        camera = self.stack.camera
        assert camera is not None
        self.camera_stalled_until = None
        t0 = time.monotonic()
        frames = camera.stats()["frames"]
        camera.capture.resume()
        w.wait(lambda: w.avail.get(CAMERA_DEVICE) is True, 15, "the camera to come back online")
        self.say.say("  DRILL camera-stall: frames again; the camera is back online")
        self.drill_report.update({"online_again_after_s": round(time.monotonic() - t0, 3),
                                  "frames_while_stalled": frames - self.drill_report.get("frames_before", frames)})

    def _check_camera(self, hand_id: int) -> None:
        """At the end of the hand, what the vision service reports against what lies on the felt."""
        camera = self.stack.camera
        if camera is None or camera.stalled:
            return
        truth = camera.table_camera.truth()
        deadline = time.monotonic() + 8.0  # the (niced) camera process may be slow on a busy machine
        view = camera.view()
        while view != truth and time.monotonic() < deadline and not self.watch.stopping.is_set():
            self.watch.stopping.wait(0.1)
            view = camera.view()
        up_total = sum(len(t["up"]) for t in truth.values())
        up_read = sum(1 for n, t in truth.items() for i, c in enumerate(t["up"])
                      if i < len(view.get(n, {}).get("up", [])) and view[n]["up"][i] == c)
        down_total = sum(int(t["down"]) for t in truth.values())
        down_found = sum(min(int(t["down"]), int(view.get(n, {}).get("down", 0))) for n, t in truth.items())
        check = {"hand": hand_id, "agrees": view == truth, "up_cards": up_total, "up_read": up_read,
                 "down_cards": down_total, "down_found": down_found}
        if view != truth:
            check["differences"] = {n: {"felt": truth.get(n), "camera": view.get(n)}
                                    for n in sorted(set(truth) | set(view)) if truth.get(n) != view.get(n)}
        self.camera_checks.append(check)

    def _cards_allow_premature(self, state: Mapping[str, Any]) -> bool:
        """Enough cards left in the shoe for the premature card, the set-aside cards and the rest."""
        street = int(state.get("street_index") or 0)
        if street >= 4:
            return False
        live = sum(1 for s in state["seats"] if s["status"] in ("active", "all_in"))
        drawn = len(self.truths[int(state["hand_id"])].cards)
        needed = 1 + live + (4 - street) * (1 + live)
        return 52 - drawn >= needed

    def _drill_premature(self, state: Mapping[str, Any]) -> None:
        w = self.watch
        self.drill_done = True
        self.expected_rules.add("stud.premature-card")
        hand_id = int(state["hand_id"])
        live = sum(1 for s in state["seats"] if s["status"] in ("active", "all_in"))
        self.say.say("  DRILL premature-card: the dealer draws while betting is open")
        sig, err = w.sig, state.get("last_error")
        card = self._draw(state, None, wait=False, kind="removed")
        prompted = self._await_change(sig, err, "the premature-card prompt")
        prompts = [p for p in prompted.get("prompts", []) if p["rule"] == "stud.premature-card"]
        if not prompts:
            raise DemoError(f"the engine raised no stud.premature-card prompt for the {card} "
                            f"(prompts: {prompted.get('prompts')})")
        self._rule(prompted, expected=True)
        # After the round the engine's state names the cards to set aside (next_deal: set_aside).
        self.drill_report = {"name": "premature-card", "hand": hand_id, "street": state.get("street"),
                             "card": card, "prompt": prompts[0]["id"], "ruling": "confirm",
                             "live_players": live, "text": prompts[0].get("text")}

    # -- the check ----------------------------------------------------------------------
    def _check_hand(self, hand_id: int) -> None:
        from engine.events import (
            CardBurned,
            CardDealt,
            CardsRemoved,
            CardsShown,
            HandStarted,
            PlayerAction,
            event_from_json,
        )
        from engine.hand import Hand

        key = f"{self.opts.table}-{hand_id}"
        w = self.watch
        w.wait(lambda: key in w.histories, self.opts.step_timeout, f"hand {key}'s record on history/hand")
        record = w.histories[key]
        truth = self.truths[hand_id]
        problems: list[str] = []
        try:
            events = [event_from_json(e) for e in record["events"]]
            hand = Hand.replay(events)
        except Exception as exc:
            self.failures.append(f"hand {key}: its record does not replay: {exc}")
            return
        self.hand_events += len(events)
        if not hand.is_over:
            problems.append("the recorded hand is not complete")
        start = events[0]
        assert isinstance(start, HandStarted)
        before = sum(s.stack for s in start.seats)
        after = sum(hand.finishing_stacks())
        if before != after:
            problems.append(f"chips not conserved: {before} at the start, {after} at the end")
        self.chips.setdefault("start", before)
        self.chips["end"] = after
        seen: list[tuple[str, int | None, bool | None, str]] = []
        actions: list[tuple[int, str, int | None]] = []
        shown: dict[int, list[str]] = {}
        for e in events:
            if isinstance(e, CardDealt):
                seen.append(("card", e.seat, e.face_up, str(e.card)))
            elif isinstance(e, CardBurned):
                seen.append(("burn", None, None, str(e.card)))
            elif isinstance(e, CardsRemoved):
                seen += [("removed", None, None, str(c)) for c in e.cards]
            elif isinstance(e, PlayerAction):
                actions.append((e.seat, e.action, e.amount))
            elif isinstance(e, CardsShown):
                shown[e.seat] = [str(c) for c in e.cards]
        if seen != truth.cards:
            diff = next((i for i, (a, b) in enumerate(zip(seen, truth.cards, strict=False)) if a != b),
                        min(len(seen), len(truth.cards)))
            problems.append(f"cards differ from what the shoe dealt at #{diff}: engine "
                            f"{seen[diff:diff + 2]} vs dealt {truth.cards[diff:diff + 2]} "
                            f"({len(seen)} vs {len(truth.cards)} cards)")
        if actions != truth.actions:
            problems.append(f"actions differ: engine {len(actions)}, entered {len(truth.actions)}")
        if shown != truth.shown:
            problems.append(f"shown hands differ: engine {shown}, shown {truth.shown}")
        for a in getattr(hand, "awards", []):
            self.say.say(f"    {self.names.get(a.seat, a.seat)} wins {a.amount}"
                         + (f" with {a.hand}" if getattr(a, "hand", None) else ""))
        if problems:
            self.failures += [f"hand {key}: {p}" for p in problems]
        else:
            self.verified.append(key)


# ----------------------------------------------------------------------------- running it


def summary(table: SimulatedTable, stack: TableStack, opts: DemoOptions, elapsed: float,
            error: str | None) -> dict[str, Any]:
    raised = list(table.prompts_seen.values())
    unexpected = [p for p in raised if not p["expected"]]
    logged: int | str
    try:
        logged = stack.hands_in_store()
    except Exception as exc:  # the store is only a cross-check
        logged = f"unreadable: {exc}"
    failures = list(table.failures)
    if error:
        failures.append(error)
    if len(table.verified) != opts.hands:
        failures.append(f"{len(table.verified)} of {opts.hands} hands verified")
    by_rule: dict[str, int] = {}
    for p in raised:
        by_rule[p["rule"]] = by_rule.get(p["rule"], 0) + 1
    return {
        "ok": not failures,
        "hands_requested": opts.hands,
        "hands_played": len(table.truths),
        "hands_verified": len(table.verified),
        "hands_in_store": logged,
        "variant": opts.variant,
        "players": opts.players,
        "seed": opts.seed,
        "drill": table.drill_report or (None if opts.drill is None else {"name": opts.drill, "ran": False}),
        "events": table.hand_events,
        "inputs": table.inputs,
        "irregularities": {
            "raised": len(raised),
            "resolved": len([p for p in table.prompts_resolved if p in table.prompts_seen]),
            "by_rule": by_rule,
            "unexpected": [f"{p['rule']} (hand {p['hand']}): {p['text']}" for p in unexpected],
        },
        "chips": table.chips,
        "latency_ms": {"card_drawn_to_state": latency_summary(table.latencies)},
        "broker": "amqtt (embedded)" if getattr(stack.broker, "kind", "") == "amqtt" else getattr(stack.broker, "kind", "external"),
        "engine": "process" if opts.engine_process else "thread",
        "bridge": "process" if opts.bridge_process else "thread",
        "camera": camera_summary(table, stack),
        "elapsed_s": round(elapsed, 2),
        "failures": failures,
    }


def camera_summary(table: SimulatedTable, stack: TableStack) -> dict[str, Any] | None:
    cam = stack.camera
    if cam is None:
        return {"skipped": stack.camera_skipped} if stack.camera_skipped else None
    checks = table.camera_checks
    try:
        stats = cam.stats()
    except (RuntimeError, OSError, EOFError) as exc:
        return {"error": f"the camera process did not report: {exc}"}
    ms = sorted(1000 * s for s in stats["detect_s"][5:])  # the first frames warm the detector up
    return {
        "device": "cam-1 (simulated capture; the production vision pipeline in its own process)",
        "frames": stats["frames"],
        "fps": round(stats["fps"], 1),
        "cpu_ms_per_frame": {"p50": round(ms[len(ms) // 2], 1) if ms else None,
                             "p99": round(ms[min(len(ms) - 1, int(0.99 * len(ms)))], 1) if ms else None},
        "offline_episodes": stats["offline_events"],
        "hands_checked": len(checks),
        "hands_agreeing": sum(1 for c in checks if c["agrees"]),
        "up_cards_read": f"{sum(c['up_read'] for c in checks)}/{sum(c['up_cards'] for c in checks)}",
        "down_cards_found": f"{sum(c['down_found'] for c in checks)}/{sum(c['down_cards'] for c in checks)}",
        "differences": [c for c in checks if not c["agrees"]],
    }


def run_demo(opts: DemoOptions, *, broker: Broker | None = None, narrate: TextIO | None = None) -> dict[str, Any]:
    """Start the table, play ``opts.hands`` hands, check them, stop everything; return the summary."""
    opts.check()
    t0 = time.monotonic()
    stack = TableStack(opts, broker=broker)
    table = SimulatedTable(stack, opts, narrate)
    error: str | None = None
    try:
        stack.start()
        table.play()
    except DemoError as exc:
        error = str(exc)
        if isinstance(stack.engine, ProcessEngine) and stack.engine.log_tail():
            error += f"; engine log: {stack.engine.log_tail()[-600:]}"
    finally:
        result = summary(table, stack, opts, time.monotonic() - t0, error)
        stack.stop()
    return result


def display_available() -> tuple[bool, str]:
    """Whether windows can be shown here, and if not, why (in words for the user)."""
    if sys.platform.startswith(("win", "darwin")):
        return True, ""
    if os.environ.get("QT_QPA_PLATFORM"):
        return True, ""  # the user chose a Qt platform (e.g. offscreen for tests)
    if os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY"):
        return True, ""
    return False, "no display here (DISPLAY and WAYLAND_DISPLAY are not set)"


def guard_bool_refcounts() -> bool:
    """Work around a PySide6 6.12 bug on Python 3.11: ``Signal.emit()`` returns ``True``
    without taking a reference to it, so every emit lowers ``True``'s reference count by
    one and after a few thousand messages (each MQTT message is an emit) the interpreter
    aborts with "Fatal Python error: bool_dealloc".  ``dealer_console.qtguard`` does the
    same for ``None``; like it, this probes for the bug and only then makes ``True`` and
    ``False`` effectively immortal (what Python 3.12 does by design).  It belongs in
    qtguard (the console's owner has been told); it is here so the demo's windows live.
    """
    import ctypes

    from PySide6.QtCore import QObject, Signal

    if sys.version_info >= (3, 12) or sys.implementation.name != "cpython":
        return False

    class _Probe(QObject):
        fired = Signal(int)

    probe = _Probe()
    probe.fired.connect(lambda _v: None)
    before = sys.getrefcount(True)
    for _ in range(100):
        probe.fired.emit(1)
    if sys.getrefcount(True) - before > -50:
        return False
    for value in (True, False):
        ctypes.c_ssize_t.from_address(id(value)).value += 1 << 40
    return True


def run_gui(opts: DemoOptions, *, hands_limit: int | None, stop_after: float | None = None) -> int:
    """The table with the dealer console and the table monitor windows; play until closed."""
    opts.check()
    from PySide6.QtCore import QTimer
    from PySide6.QtWidgets import QApplication

    from dealer_console.cards import CardImages
    from dealer_console.console import ConsoleWindow
    from dealer_console.edge import Commands, MqttEdge
    from dealer_console.history import StoreHistory
    from dealer_console.model import TableModel
    from dealer_console.monitor import MonitorWindow

    stack = TableStack(opts).start()
    app = QApplication.instance() or QApplication(sys.argv[:1])
    # Ctrl-C: Qt's loop runs no Python, so without this the windows would stay; quit, then stop all.
    previous_sigint = signal.signal(signal.SIGINT, lambda *_: app.quit())
    guard_bool_refcounts()
    edges = []
    windows: list[Any] = []
    try:
        images = CardImages("anglo")
        for role, device in ((Role.CONSOLE, "console-1"), (Role.MONITOR, "monitor-1")):
            user, password = stack.broker.login(role)
            edge = MqttEdge(host=stack.broker.host, port=stack.broker.port, username=user, password=password,
                            table=opts.table, role=role, device=device)
            model = TableModel(engine_device=ENGINE_DEVICE, self_device=device)
            edge.received.connect(model.apply_message)
            edge.connectionChanged.connect(model.set_broker)
            if role is Role.MONITOR:
                window: Any = MonitorWindow(model, images=images)
                window.resize(1280, 720)
            else:
                window = ConsoleWindow(model, Commands(edge), images=images,
                                       history=StoreHistory(stack.store, opts.table))
                window.resize(1280, 800)
            edge.start()
            window.show()
            edges.append(edge)
            windows.append(window)
        opts.hands = hands_limit if hands_limit is not None else 10_000
        table = SimulatedTable(stack, opts, narrate=sys.stdout)
        done = threading.Event()

        def play() -> None:
            try:
                table.play()
            except DemoError as exc:
                if not stack.watch.stopping.is_set():
                    print(f"demo: {exc}", file=sys.stderr)
            finally:
                done.set()

        threading.Thread(target=play, name="demo-table", daemon=True).start()
        timer = QTimer()
        timer.timeout.connect(lambda: app.quit() if done.is_set() else None)
        timer.start(200)
        if stop_after is not None:
            QTimer.singleShot(int(stop_after * 1000), app.quit)
        app.exec()
        stack.watch.stopping.set()
        done.wait(5)
        return 0 if not table.failures else 1
    finally:
        for edge in edges:
            with contextlib.suppress(Exception):
                edge.stop()
        for window in windows:
            window.close()
        stack.stop()
        signal.signal(signal.SIGINT, previous_sigint)
