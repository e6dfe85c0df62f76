"""A cardroom under load: one mosquitto and one PostgreSQL-backed recorder taking the
traffic of 40 simulated tables, at a realistic pace and at ten times that pace.

    python bench/bench_load.py [--tables 40] [--seconds 20]

Each table is a real MQTT client with the engine role publishing what an engine
publishes: the retained public state (a real state of a six-handed stud hand,
about 4 KB) on every input, and the finished hand (its real event log) when a
hand ends. Realistic pace: one input every 2 s per table and a hand every 60 s;
the x10 run divides both by ten. A monitor-role client receives every state and
the recorder writes every hand to PostgreSQL before acknowledging it. Printed:
messages per second, publish-to-receive latency p50/p99, anything lost (must be
0), and the CPU used by mosquitto and by this process.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import sys
import tempfile
import threading
import time
import uuid
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from engine.bus import BusClient
from engine.public import public_state
from engine.recorder import Recorder
from engine.simulate import SimulatedDealer, new_hand
from engine.wire import Channel, Message
from tests.support.fixtures import find_or_make_pg_server, make_mosquitto


def proc_cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def sample_payloads() -> tuple[dict, list]:
    rng = random.Random(1)
    hand = new_hand("F7S", 6, rng)
    dealer = SimulatedDealer(hand, rng)
    for _ in range(20):
        event = dealer.next_event()
        assert event is not None
        dealer.apply(event)
    state = public_state(None, hand, "t00")
    while (event := dealer.next_event()) is not None:
        dealer.apply(event)
    return state, [e.to_json() for e in hand.events]


def run(broker, dsn: str, tables: int, seconds: float, input_every: float, hand_every: float) -> dict:
    state, events = sample_payloads()
    latencies: list[float] = []
    seen: dict[str, set[int]] = {}
    lock = threading.Lock()

    def on_state(msg: Message) -> None:
        sent = msg.body["state"].get("x_sent_at", 0.0)
        with lock:
            latencies.append((time.perf_counter() - sent) * 1000)
            seen.setdefault(msg.table, set()).add(msg.seq)

    u, p = broker.login("monitor")
    watcher = BusClient(host=broker.host, port=broker.port, username=u, password=p, table="cardroom",
                        device=f"watch-{uuid.uuid4().hex[:6]}", role="monitor", session=1, on_message=on_state)
    watcher.subscribe(Channel.STATE, table="+")
    watcher.start()
    u, p = broker.login("recorder")
    recorder = Recorder(host=broker.host, port=broker.port, username=u, password=p, store=dsn,
                        device=f"rec-{uuid.uuid4().hex[:6]}").start()
    u, p = broker.login("engine")
    clients = [
        BusClient(host=broker.host, port=broker.port, username=u, password=p, table=f"t{k:02d}",
                  device=f"engine-t{k:02d}", role="engine", session=1).start()
        for k in range(tables)
    ]
    time.sleep(0.5)
    cpu0 = proc_cpu_seconds(broker.proc.pid)
    me0 = time.process_time()
    rng = random.Random(7)
    next_input = [rng.uniform(0, input_every) for _ in clients]
    next_hand = [rng.uniform(0, hand_every) for _ in clients]
    sent_states: dict[str, list[int]] = {c.table: [] for c in clients}
    hands_sent = 0
    start = time.perf_counter()
    while (now := time.perf_counter() - start) < seconds:
        for i, c in enumerate(clients):
            if now >= next_input[i]:
                body = dict(state, table=c.table, x_sent_at=time.perf_counter())
                msg = c.publish(Channel.STATE, "state", state=body)
                sent_states[c.table].append(msg.seq)
                next_input[i] += input_every
            if now >= next_hand[i]:
                hands_sent += 1
                c.publish(Channel.HISTORY, "hand", hand=f"{c.table}-{hands_sent}-{uuid.uuid4().hex[:6]}",
                          variant="F7S", events=events, phh=None)
                next_hand[i] += hand_every
        time.sleep(0.002)
    elapsed = time.perf_counter() - start
    for c in clients:
        c.flush(10)
    deadline = time.monotonic() + 20
    expected_states = sum(len(v) for v in sent_states.values())
    while time.monotonic() < deadline:
        with lock:
            got = sum(len(v) for v in seen.values())
        if got >= expected_states and recorder.stats.recorded >= hands_sent:
            break
        time.sleep(0.1)
    cpu = proc_cpu_seconds(broker.proc.pid) - cpu0
    mine = time.process_time() - me0
    lost_states = sum(len(set(v) - seen.get(t, set())) for t, v in sent_states.items())
    for c in clients:
        c.stop()
    watcher.stop()
    recorder.stop()
    lat = sorted(latencies)
    return {
        "tables": tables,
        "seconds": round(elapsed, 1),
        "states_sent": expected_states,
        "hands_sent": hands_sent,
        "msgs_per_s": round((expected_states + hands_sent) / elapsed, 1),
        "states_lost": lost_states,
        "hands_recorded": recorder.stats.recorded,
        "hands_lost": hands_sent - recorder.stats.recorded,
        "latency_ms_p50": round(statistics.median(lat), 2) if lat else None,
        "latency_ms_p99": round(lat[int(len(lat) * 0.99) - 1], 2) if lat else None,
        "mosquitto_cpu_pct": round(100 * cpu / elapsed, 1),
        "clients_and_recorder_cpu_pct": round(100 * mine / elapsed, 1),
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tables", type=int, default=40)
    ap.add_argument("--seconds", type=float, default=20.0)
    args = ap.parse_args()
    import psycopg

    conninfo, cluster = find_or_make_pg_server()
    name = f"studtable_load_{uuid.uuid4().hex[:8]}"
    with psycopg.connect(conninfo, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    params = psycopg.conninfo.conninfo_to_dict(conninfo)
    dsn = f"postgresql://{params.get('user', 'postgres')}@{params.get('host', '127.0.0.1')}:{params.get('port', 5432)}/{name}"
    broker = make_mosquitto(Path(tempfile.mkdtemp(prefix="studtable-load-")))
    ok = True
    try:
        for label, factor in (("realistic", 1), ("x10", 10)):
            result = run(broker, dsn, args.tables, args.seconds, 2.0 / factor, 60.0 / factor)
            print(json.dumps({"pace": label, **result}))
            ok &= result["states_lost"] == 0 and result["hands_lost"] == 0
    finally:
        broker.stop()
        with psycopg.connect(conninfo, autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}"')
        if cluster is not None:
            cluster.stop()
    print("no message lost" if ok else "MESSAGES LOST")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
