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

Usage: python bench/bench_table.py (or python -m dealer_console.demo.bench) [--hands 20] [--brokers amqtt,mosquitto] [--floor 500]
"""

from __future__ import annotations

import argparse
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


def run(kind: str, hands: int, floor_n: int, seed: int, camera: bool) -> dict[str, Any]:
    work = Path(tempfile.mkdtemp(prefix="bench-table-"))
    broker: Any = embedded_broker(work / "broker").start() if kind == "amqtt" else Mosquitto(work / "mq").start()
    try:
        before = broker_round_trip(broker, floor_n)
        opts = DemoOptions(hands=hands, seed=seed, workdir=work / "table", camera=camera)
        opts.check()
        stack = TableStack(opts, broker=broker).start()
        table = SimulatedTable(stack, opts)
        t0 = time.monotonic()
        try:
            # The people play through the real console, as in the demo (a card's path is unchanged).
            error = play_on_console(stack, opts, table)
            if error:
                table.failures.append(error)
        finally:
            elapsed = time.monotonic() - t0
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
    args = ap.parse_args()
    ok = True
    # One card-drawn frame at 115200 baud, 10 bits a byte: what the serial link alone costs.
    from firmware_bridge import messages as m
    from firmware_bridge.framing import encode_frame

    frame = encode_frame(1, m.Kind.CARD_DRAWN, m.CardDrawn(1, bytes(7), 200).encode())
    wire_ms = len(frame) * 10 / 115200 * 1000
    cameras = {"off": [False], "on": [True], "both": [False, True]}[args.camera]
    runs = [(kind.strip(), cam) for cam in cameras for kind in args.brokers.split(",")]
    print(f"load average before: {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores")
    for kind, cam in runs:
        try:
            res = run(kind, args.hands, args.floor, args.seed, cam)
        except FileNotFoundError as exc:
            print(f"{kind}: skipped ({exc})")
            continue
        if args.json:
            print(json.dumps(res))
            continue
        lat, flo = res["card_drawn_to_console_state_ms"], res["broker_round_trip_ms"]
        goal = lat["p99"] is not None and lat["p99"] < 25
        ok &= goal and not res["failures"]
        print(f"{kind:9s} camera {'on ' if cam else 'off'} card drawn -> console state: n={lat['n']} p50={lat['p50']} ms p99={lat['p99']} ms "
              f"max={lat['max']} ms ({'meets' if goal else 'MISSES'} p99 < 25 ms); "
              f"broker round trip (floor): p50={flo['p50']} ms p99={flo['p99']} ms; "
              f"card frame on the wire ~{wire_ms:.2f} ms; {res['hands']} hands verified, "
              f"{res['cards_per_s']} cards/s" + (f"; FAILURES: {res['failures']}" if res["failures"] else ""))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
