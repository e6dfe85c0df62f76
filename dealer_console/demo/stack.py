"""The parts of the demo table and how they start and stop: broker, engine, shoe, bridge, camera."""


from __future__ import annotations

import json
import logging
import os
import random
import shutil
import subprocess
import threading
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, Protocol

from dealer_console.demo.options import (
    CAMERA_DRILLS,
    CONSOLE_DEVICE,
    ENGINE_DEVICE,
    NAMES,
    RECORDER_DEVICE,
    SHOE_DEVICE,
    DemoError,
    DemoOptions,
)
from engine import wire
from engine.bus import BusClient
from engine.cards import DECK
from engine.wire import Channel, Message, Role

# ----------------------------------------------------------------------------- the parts


log = logging.getLogger("studtable.demo")


class Broker(Protocol):
    host: str
    port: int

    def login(self, role: Role | str, device: str | None = None) -> tuple[str, str]: ...

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
    user, password = broker.login(Role.ENGINE, ENGINE_DEVICE)
    return {
        "table": opts.table,
        "game": game_config(opts),
        "seats": [{"seat": i + 1, "name": NAMES[i], "stack": opts.stack} for i in range(opts.players)],
        "store": {"url": str(store)},
        "broker": {"host": broker.host, "port": broker.port, "username": user, "password": password},
        "engine": {"device": ENGINE_DEVICE, "auto_start": False,  # the dealer taps Next hand
                   **({"floor_pin": opts.floor_pin} if opts.floor_pin else {}),
                   # A manual or camera-only table has no shoe at all (the engine counts the burns).
                   **({"shoe": False} if opts.no_shoe or opts.manual else {})},
    }


def engine_config_toml(config: Mapping[str, Any]) -> str:
    """The engine config dict as the TOML file ``studtable engine --config`` reads."""
    from engine.tomlwrite import dumps_toml

    return dumps_toml(config)


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
        user, password = broker.login(Role.BRIDGE, SHOE_DEVICE)
        settings = {"table": table, "port": port, "deck": deck.name, "decks_dir": directory / "decks",
                    "device": SHOE_DEVICE, "broker": f"{broker.host}:{broker.port}", "user": user,
                    "password": password, "state_file": directory / "bridge.session"}
        from engine.tomlwrite import dumps_toml

        self.path = _private_file(directory / "bridge.toml", dumps_toml(settings))
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
        self.camera: Any = None  # dealer_console.demo.camera.CameraProcess
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
        if opts.manual:
            # No sensors: the dealer deals from a deck in hand and keys every card on the console.
            self.watch.wait(lambda: self.watch.state is not None and bool(self.watch.state.get("seats")),
                            20, "the engine's first table state")
            return
        if opts.no_shoe:
            self._start_camera(opts, required=True)
            self.watch.wait(lambda: self.watch.state is not None and bool(self.watch.state.get("seats")),
                            20, "the engine's first table state")
            return
        # The shoe: an enrolled deck (made-up tags), the simulator on a pty, the bridge reading it.
        rng = random.Random(opts.seed)
        uids = [bytes([0x04]) + rng.randbytes(6) for _ in range(52)]
        self.deck = Deck.build("demo", zip(uids, DECK, strict=True))
        self.sim = ShoeSimulator(self.deck, pty_link=self.dir / "ttyShoe", seed=opts.seed).start()
        self.sim.on_draw = self._drawn
        user, password = self.broker.login(Role.BRIDGE, SHOE_DEVICE)
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
            self._start_camera(opts, required=opts.drill in CAMERA_DRILLS)
        self.watch.wait(lambda: self.watch.state is not None and bool(self.watch.state.get("seats")),
                        20, "the engine's first table state")

    def _start_camera(self, opts: DemoOptions, *, required: bool) -> None:
        from dealer_console.demo.camera import CAMERA_DEVICE, CameraProcess, CameraUnavailable

        try:
            self.camera = CameraProcess(self.broker, opts.table, opts.players, seed=opts.seed,
                                        cache=_cache_dir(), fps=opts.camera_fps,
                                        group_nice=opts.camera_nice).start()
        except CameraUnavailable as exc:
            if required:
                why = "a camera-only table (--no-shoe)" if opts.no_shoe else f"the {opts.drill} drill"
                raise DemoError(f"{why} needs the camera: {exc}") from exc
            # The table runs without it (the shoe is the deal's source), and says why.
            self.camera_skipped = str(exc)
            log.error("demo: no camera: %s; the table runs with the shoe alone", exc)
        else:
            self.watch.wait(lambda: self.watch.avail.get(CAMERA_DEVICE) is True, 15, "the camera to come online")

    def _client(self, role: Role, device: str, handler: Callable[[Message], None],
                channels: tuple[Channel, ...], persistent: bool = False) -> BusClient:
        user, password = self.broker.login(role, device)
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


