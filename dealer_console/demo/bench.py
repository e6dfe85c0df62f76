"""Table latency: a card drawn at the simulated shoe -> the console's public/state updated.

The whole path of ``studtable demo``: the shoe simulator emits the card frame on a
pseudo-terminal at 115200 baud, the bridge (pyserial, framing, ACK) publishes it through its
BusClient, the broker hands it to the engine, which appends it to its SQLite store (WAL,
synchronous FULL: an fsync) before it folds it into the hand and publishes the retained
public/state, which the broker hands to a console-role client.  A sample is the time from the
shoe's draw (the simulator's clock, before the UART pacing) to the console's receipt of the
first state that shows the card.  Burns count (the state's ``next_deal`` moves on).

Floor, measured in the same run against the same broker: the broker's own round trip (a paho
client with TCP_NODELAY publishes a 200-byte QoS 1 message on a topic it subscribes to and
receives it back), before and after the table.  The goal is a p99 under 25 ms.

Each run prints its load average (start-end), the camera's frames a second, the camera-on run's
ratio against the camera-off run just before it, and, with the engine on a thread here (the
default), where each card's time went (``trace_breakdown``).  ``--processes`` runs the engine and
the bridge as processes of their own, as a real table does, and gives the camera's process group
the vision service's own nice value (``--camera-nice``; the demo's camera keeps 0).

Usage: python bench/bench_table.py (or python -m dealer_console.demo.bench) [--hands 20] [--brokers amqtt,mosquitto]
       [--floor 500] [--camera off|on|both] [--runs N] [--processes] [--camera-nice N]
"""

from __future__ import annotations

import argparse
import contextlib
import getpass
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import paho.mqtt.client as mqtt
from paho.mqtt.enums import CallbackAPIVersion

from dealer_console.demo.options import DemoOptions
from dealer_console.demo.people import SimulatedTable, latency_summary
from dealer_console.demo.run import play_on_console
from dealer_console.demo.stack import TableStack, embedded_broker
from engine.broker.config import write_config
from engine.broker.embedded import free_port
from engine.bus import _no_delay
from engine.wire import Channel
from vision.service import NICENESS

TABLE = "demo"


class Mosquitto:
    """mosquitto from the project's generated config (users, ACL, set_tcp_nodelay)."""

    kind = "mosquitto"

    def __init__(self, directory: Path) -> None:
        exe = shutil.which("mosquitto") or "/usr/sbin/mosquitto"
        if not os.access(exe, os.X_OK):
            raise FileNotFoundError("mosquitto is not installed (apt-get install mosquitto)")
        self.exe = exe
        self.host = "127.0.0.1"
        self.port = free_port()
        run_as = getpass.getuser() if os.geteuid() == 0 else None
        self.files = write_config(directory, port=self.port, run_as=run_as)
        self.proc: subprocess.Popen[bytes] | None = None

    def login(self, role: Any, device: str | None = None) -> tuple[str, str]:
        return self.files.login(role, device)

    def start(self) -> Mosquitto:
        self.proc = subprocess.Popen([self.exe, "-c", str(self.files.mosquitto_conf)],
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        import socket

        for _ in range(200):
            try:
                with socket.create_connection((self.host, self.port), timeout=0.2):
                    return self
            except OSError:
                time.sleep(0.02)
        raise RuntimeError(f"mosquitto did not start on port {self.port}")

    def stop(self) -> None:
        if self.proc is not None:
            self.proc.terminate()
            self.proc.wait(10)
            self.proc = None

    def restart(self) -> Mosquitto:
        self.stop()
        return self.start()


def broker_round_trip(broker: Any, n: int) -> list[float]:
    """The floor: QoS 1 publish -> the same client receives it, in seconds."""
    got = threading.Event()
    c = mqtt.Client(CallbackAPIVersion.VERSION2, client_id=f"engine-floor-{time.time_ns() % 10**9}", protocol=mqtt.MQTTv311)
    c.username_pw_set(*broker.login("engine"))
    c.on_message = lambda *a: got.set()
    c.on_socket_open = _no_delay  # the same socket options as BusClient, so the floor is fair
    c.connect(broker.host, broker.port)
    c.loop_start()
    topic = f"studtable/v1/{TABLE}/sensor/vision"
    c.subscribe(topic, qos=1)
    time.sleep(0.3)
    out = []
    for _ in range(n):
        got.clear()
        t0 = time.perf_counter()
        c.publish(topic, b"x" * 200, qos=1)
        if got.wait(5):
            out.append(time.perf_counter() - t0)
    c.disconnect()
    c.loop_stop()
    return out


STAGES = ("shoe_to_engine", "store", "apply_publish", "publish_to_console", "behind_other_inputs")


def trace_breakdown(trace: list[Any], draws: list[float], states: list[tuple[float, Any]]) -> dict[str, Any]:
    """Where a shoe card's time went, stage by stage, from the engine's ``InputTrace`` (the engine runs
    on a thread of this process), the shoe's draw times and the console's receipt of each state
    (keyed by the state's ``input``: the source and seq of the last input applied).

    shoe_to_engine: drawn at the shoe -> the bus hands the message to the engine (the serial link,
    the bridge, the broker, and any wait behind the engine's previous message); store: the append
    (an fsync); apply_publish: the Floor and the state handed to the socket; publish_to_console:
    the broker to the console; behind_other_inputs: the engine's time on other inputs while the
    card was on its way in (an upper bound on its wait behind them)."""
    def is_card(t: Any) -> bool:
        return bool(t.channel == str(Channel.SHOE) and t.kind == "card_drawn")

    cards = [t for t in trace if is_card(t)]
    others = [t for t in trace if not is_card(t)]
    seen: dict[tuple[str, int], float] = {}
    for when, key in states:
        if isinstance(key, dict) and key.get("seq") is not None:
            seen.setdefault((str(key.get("source")), int(key["seq"])), when)
    stages: dict[str, list[float]] = {k: [] for k in STAGES}
    behind = 0
    for drawn, t in zip(draws[-len(cards):] if cards else [], cards, strict=False):
        stages["shoe_to_engine"].append(t.arrived - drawn)
        if t.stored:
            stages["store"].append(t.stored - t.started)
        if t.published and t.stored:
            stages["apply_publish"].append(t.published - t.stored)
        got = seen.get((t.source, t.seq if t.seq is not None else -1))
        if got is not None and t.published:
            stages["publish_to_console"].append(got - t.published)
        busy = sum(max(0.0, min(o.done, t.arrived) - max(o.started, drawn)) for o in others)
        stages["behind_other_inputs"].append(busy)
        behind += busy > 0
    camera = [t for t in others if t.channel == str(Channel.VISION)]
    return {"cards": len(cards), "cards_behind_other_inputs": behind,
            "stages_ms": {k: latency_summary(v) for k, v in stages.items()},
            "camera_observations": len(camera),
            "camera_observation_ms": latency_summary([t.done - t.started for t in camera]),
            "camera_observations_stored_with_fsync": sum(1 for t in camera if t.published)}


def run(kind: str, hands: int, floor_n: int, seed: int, camera: bool, processes: bool = False,
        camera_nice: int = 0) -> dict[str, Any]:
    work = Path(tempfile.mkdtemp(prefix="bench-table-"))
    broker: Any = embedded_broker(work / "broker").start() if kind == "amqtt" else Mosquitto(work / "mq").start()
    try:
        before = broker_round_trip(broker, floor_n)
        opts = DemoOptions(hands=hands, seed=seed, workdir=work / "table", camera=camera, processes=processes,
                           camera_nice=camera_nice)
        opts.check()
        stack = TableStack(opts, broker=broker).start()
        table = SimulatedTable(stack, opts)
        draws: list[float] = []
        states: list[tuple[float, Any]] = []
        drawn, seen = stack.sim.on_draw, stack.watch.on_console

        def on_draw(uid: bytes, at: float) -> None:
            draws.append(at)
            drawn(uid, at)

        def on_console(msg: Any) -> None:
            seen(msg)
            if msg.channel is Channel.STATE:
                states.append((time.monotonic(), msg.body["state"].get("input")))

        stack.sim.on_draw = on_draw
        if stack.console is not None:
            stack.console.on_message = on_console  # the console-role client's handler
        trace: list[Any] = []
        camera_stats: dict[str, Any] = {}
        load = [os.getloadavg()[0]]
        t0 = time.monotonic()
        try:
            # The people play through the real console, as in the demo (a card's path is unchanged).
            error = play_on_console(stack, opts, table)
            if error:
                table.failures.append(error)
        finally:
            elapsed = time.monotonic() - t0
            service = getattr(stack.engine, "service", None)
            if service is not None:
                trace = list(service.trace)
            if stack.camera is not None:
                with contextlib.suppress(RuntimeError):
                    camera_stats = stack.camera.stats()
            load.append(os.getloadavg()[0])
            stack.stop()
        after = broker_round_trip(broker, floor_n)
        return {
            "broker": kind,
            "camera": camera,
            "hands": len(table.verified),
            "failures": table.failures,
            "card_drawn_to_console_state_ms": latency_summary(table.latencies),
            "broker_round_trip_ms": latency_summary(before + after),
            "cards_per_s": round(len(table.latencies) / elapsed, 1),
            "breakdown": trace_breakdown(trace, draws, states) if trace else None,
            "camera_frames_per_s": round(camera_stats["frames"] / elapsed, 1) if camera_stats else None,
            "load_average": load,
        }
    finally:
        broker.stop()
        shutil.rmtree(work, ignore_errors=True)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--hands", type=int, default=20)
    ap.add_argument("--brokers", default="amqtt,mosquitto")
    ap.add_argument("--floor", type=int, default=500, help="broker round trips before and after the table")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--json", action="store_true", help="print the results as JSON lines")
    ap.add_argument("--camera", choices=("off", "on", "both"), default="both",
                    help="also run the simulated camera and the vision service (its own process) beside the table")
    ap.add_argument("--processes", action="store_true",
                    help="the engine and the bridge as processes of their own, as a real table runs them (no "
                         "breakdown: the engine's trace is in its process)")
    ap.add_argument("--camera-nice", type=int, default=None,
                    help="the camera process group's nice value (default: the vision service's own, "
                         f"{NICENESS}, with --processes, as a real table runs it; else 0, as the demo does)")
    ap.add_argument("--runs", type=int, default=1,
                    help="repeat the whole set (camera off, then on) this many times, interleaved")
    args = ap.parse_args()
    camera_nice = args.camera_nice if args.camera_nice is not None else NICENESS if args.processes else 0
    ok = True
    # One card-drawn frame at 115200 baud, 10 bits a byte: what the serial link alone costs.
    from firmware_bridge import messages as m
    from firmware_bridge.framing import encode_frame

    frame = encode_frame(1, m.Kind.CARD_DRAWN, m.CardDrawn(1, bytes(7), 200).encode())
    wire_ms = len(frame) * 10 / 115200 * 1000
    cameras = {"off": [False], "on": [True], "both": [False, True]}[args.camera]
    runs = [(kind.strip(), cam) for _ in range(args.runs) for kind in args.brokers.split(",") for cam in cameras]
    print(f"load average before: {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores")
    # The camera-off run just before, per broker: what the camera's run is compared with.
    off: dict[str, dict[str, Any]] = {}
    for kind, cam in runs:
        try:
            res = run(kind, args.hands, args.floor, args.seed, cam, args.processes, camera_nice)
        except FileNotFoundError as exc:
            print(f"{kind}: skipped ({exc})")
            continue
        if args.json:
            print(json.dumps(res))
            continue
        lat, flo = res["card_drawn_to_console_state_ms"], res["broker_round_trip_ms"]
        goal = lat["p99"] is not None and lat["p99"] < 25
        ok &= goal and not res["failures"]
        load = "-".join(f"{x:.1f}" for x in res["load_average"])
        ratio = ""
        if not cam:
            off[kind] = lat
        elif kind in off and off[kind]["p50"] and off[kind]["p99"] and lat["p50"] and lat["p99"]:
            ratio = (f"; against camera off just before: p50 x{lat['p50'] / off[kind]['p50']:.2f}, "
                     f"p99 x{lat['p99'] / off[kind]['p99']:.2f}")
        fps = (f", camera read {res['camera_frames_per_s']} frames/s (its group at nice {camera_nice})"
               if cam and res["camera_frames_per_s"] is not None else "")
        print(f"{kind:9s} camera {'on ' if cam else 'off'} card drawn -> console state: n={lat['n']} p50={lat['p50']} ms "
              f"p99={lat['p99']} ms max={lat['max']} ms ({'meets' if goal else 'MISSES'} p99 < 25 ms){ratio}; "
              f"load average {load}; broker round trip (floor): p50={flo['p50']} ms p99={flo['p99']} ms; "
              f"card frame on the wire ~{wire_ms:.2f} ms; {res['hands']} hands verified, "
              f"{res['cards_per_s']} cards/s{fps}" + (f"; FAILURES: {res['failures']}" if res["failures"] else ""))
        b = res["breakdown"]
        if b:
            stages = ", ".join(f"{k} {v['p50']}/{v['p99']}" for k, v in b["stages_ms"].items())
            print(f"    where a card's time went (p50/p99 ms): {stages}; {b['cards_behind_other_inputs']} of "
                  f"{b['cards']} cards came while the engine was on another input"
                  + (f"; {b['camera_observations']} camera observations, each {b['camera_observation_ms']['p50']}/"
                     f"{b['camera_observation_ms']['p99']} ms in the engine, "
                     f"{b['camera_observations_stored_with_fsync']} published a state" if cam else ""))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
