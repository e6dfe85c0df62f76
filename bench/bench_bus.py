"""Bus latency: console input -> engine edge (decode, durable append, publish) -> public/state received.

Runs against mosquitto (from the generated config) and the embedded amqtt broker in
one run.  For each broker it measures, over N inputs (default 2000):

* floor: the broker's own round trip (a client publishes QoS 1 and receives it back),
* bus:   a console BusClient publishes a command; an "echo engine" BusClient decodes
         it, appends it to a SQLite event store (WAL, synchronous=FULL: a real fsync)
         and publishes a retained public/state; the console's receipt ends the sample.

The real engine service will add its fold on top; this is the infrastructure's share.
Usage: python bench/bench_bus.py [--n 2000] [--no-fsync-store]
"""

from __future__ import annotations

import argparse
import getpass
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import paho.mqtt.client as mqtt
from paho.mqtt.enums import CallbackAPIVersion

from engine.broker.config import BrokerFiles, write_config
from engine.broker.embedded import EmbeddedBroker, free_port
from engine.bus import BusClient, _no_delay
from engine.store import SqliteStore
from engine.wire import Channel, Message

T = "bench"


def pct(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(p / 100 * (len(ordered) - 1)))]


def floor(files: BrokerFiles, port: int, n: int) -> list[float]:
    got = threading.Event()
    c = mqtt.Client(CallbackAPIVersion.VERSION2, client_id="engine", protocol=mqtt.MQTTv311)
    c.username_pw_set(*files.login("engine"))
    c.on_message = lambda *a: got.set()
    c.on_socket_open = _no_delay  # same socket options as BusClient, so the floor is fair
    c.connect("127.0.0.1", port)
    c.loop_start()
    c.subscribe(f"studtable/v1/{T}/sensor/vision", qos=1)
    time.sleep(0.3)
    out = []
    for _ in range(n):
        got.clear()
        t0 = time.perf_counter()
        c.publish(f"studtable/v1/{T}/sensor/vision", b"x" * 200, qos=1)
        got.wait(5)
        out.append((time.perf_counter() - t0) * 1000)
    c.disconnect()
    c.loop_stop()
    return out


def bus_path(files: BrokerFiles, port: int, n: int, store_path: Path) -> list[float]:
    store = SqliteStore(store_path, T)
    state_seen = threading.Event()

    def client(role: str, device: str, **kw: Any) -> BusClient:
        user, pw = files.login(role)
        return BusClient(host="127.0.0.1", port=port, username=user, password=pw, table=T, device=device,
                         role=role, session=1, **kw)

    engine: BusClient

    def on_input(msg: Message) -> None:
        assert msg.seq is not None and msg.session is not None
        store.append(msg.source, msg.session, msg.seq, msg.kind, dict(msg.body))
        engine.publish(Channel.STATE, "state", state={"last": msg.seq, "seat": msg.body.get("seat")})

    engine = client("engine", "engine", on_message=on_input)
    engine.subscribe(Channel.COMMAND)
    engine.start()
    console = client("console", "console-1", on_message=lambda m: state_seen.set())
    console.subscribe(Channel.STATE)
    console.start()
    time.sleep(0.3)
    state_seen.clear()
    out = []
    for i in range(n):
        state_seen.clear()
        t0 = time.perf_counter()
        console.publish(Channel.COMMAND, "action", seat=1 + i % 8, action="check", amount=None)
        if not state_seen.wait(5):
            raise RuntimeError(f"no public/state for input {i}")
        out.append((time.perf_counter() - t0) * 1000)
    console.stop()
    engine.stop()
    store.close()
    return out


def report(name: str, fl: list[float], bus: list[float]) -> str:
    return (f"{name:9s}  floor p50 {statistics.median(fl):6.2f} ms  p99 {pct(fl, 99):6.2f} ms | "
            f"bus p50 {statistics.median(bus):6.2f} ms  p99 {pct(bus, 99):6.2f} ms | "
            f"p99 over floor {pct(bus, 99) - pct(fl, 99):+6.2f} ms (goal <= 5)")


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=2000)
    args = ap.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="bench-bus-"))
    lines = []
    exe = shutil.which("mosquitto") or "/usr/sbin/mosquitto"
    if os.access(exe, os.X_OK):
        port = free_port()
        files = write_config(tmp / "mosq", port=port, run_as=getpass.getuser() if os.geteuid() == 0 else None)
        proc = subprocess.Popen([exe, "-c", str(files.mosquitto_conf)], stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL)
        time.sleep(0.5)
        try:
            lines.append(report("mosquitto", floor(files, port, args.n), bus_path(files, port, args.n,
                                                                                   tmp / "m.db")))
        finally:
            proc.terminate()
            proc.wait()
    port = free_port()
    files = write_config(tmp / "amqtt", port=port)
    broker = EmbeddedBroker(files, "127.0.0.1", port).start()
    try:
        lines.append(report("amqtt", floor(files, port, args.n), bus_path(files, port, args.n, tmp / "a.db")))
    finally:
        broker.stop()
    print(f"bus bench, {args.n} inputs per broker, SQLite store with fsync on every append")
    print("\n".join(lines))
    shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
