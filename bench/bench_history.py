"""History queries against the table's own latency: a card drawn -> its public/state received,
with and without history queries for a finished hand sent just before the card.

A real engine service (its SQLite store) on the embedded amqtt broker; the shoe's cards on the
bridge's channel, a console that asks ``--queries`` history queries for hand 1 before every other
card.  The engine answers a query on its history thread (``EngineService._history_worker``), not
under the lock its inputs take, so a query costs the table only the CPU it shares.  Also prints
what one answer costs to build (the engine) and to decode (the console) for the scripted 60-event
hand.

Usage: python bench/bench_history.py [--cards 9] [--queries 3]
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from dealer_console.scripted import hand_events
from engine import handlog, wire
from engine.broker.config import write_config
from engine.broker.embedded import RestartableBroker
from engine.cards import DECK
from engine.service import EngineService
from engine.wire import Channel, Role
from tests.engine.edge.test_history_query import Asker, play_first_hand
from tests.engine.edge.test_service import TABLE, client, draw, engine_config, wait_state
from tests.support.fixtures import free_port
from tests.support.mqtt import TestClient


def answer_cost(n: int = 15) -> tuple[float, float, int]:
    events = hand_events()
    hand, _ = handlog.steps_of(events, reveal=True, table_id="t1")
    index = [handlog.entry(hand, "t1-1", [])]
    build, decode, size = [], [], 0
    for _ in range(n):
        t0 = time.perf_counter()
        body = handlog.answer({"request": "r", "hand": 1, "limit": 1}, role=Role.CONSOLE, table_id="t1",
                              index=index, live=None, fetch=lambda _h: events, hand_id_of=lambda k: f"t1-{k}")
        payload = wire.encode(wire.make("t1", Channel.HISTORY_REPLY, "answer", source="engine", session=1, seq=1,
                                        **body))
        t1 = time.perf_counter()
        wire.decode(wire.topic("t1", Channel.HISTORY_REPLY), payload)
        build.append((t1 - t0) * 1000)
        decode.append((time.perf_counter() - t1) * 1000)
        size = len(payload)
    return statistics.median(build), statistics.median(decode), size


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--cards", type=int, default=9)
    p.add_argument("--queries", type=int, default=3)
    args = p.parse_args()
    build, decode, size = answer_cost()
    print(f"one answer (scripted hand, 62 events): built and encoded {build:.1f} ms, decoded {decode:.1f} ms, "
          f"{size} bytes")
    tmp = Path(tempfile.mkdtemp())
    broker = RestartableBroker(write_config(tmp / "amqtt", port=free_port())).start()
    service = EngineService(engine_config(broker, tmp / "engine.db")).start()
    monitor = TestClient(broker, "monitor")
    monitor.connected()
    monitor.subscribe([wire.topic(TABLE, Channel.STATE)])
    bridge = client(broker, "bridge", "shoe-1")
    console = client(broker, "console", "console-3")
    asker = Asker(broker)
    try:
        deck = [str(c) for c in DECK]
        random.Random(5).shuffle(deck)
        counter, _ = play_first_hand(service, monitor, bridge, console, deck)
        while not service.store.list_hands():
            time.sleep(0.05)
        wait_state(monitor, lambda s: s["hand_id"] == 2)
        lat: dict[str, list[float]] = {"quiet": [], "with queries": []}
        for k in range(args.cards):
            mode = "with queries" if k % 2 else "quiet"
            if mode == "with queries":
                for q in range(args.queries):
                    asker.bus.publish(Channel.COMMAND, "history", request=f"b{k}.{q}", hand=1, limit=1)
                time.sleep(0.01)
            before = len(monitor.received)
            t0 = time.perf_counter()
            counter += 1
            draw(bridge, counter, deck.pop())
            monitor.wait(lambda b=before: len(monitor.received) > b, 10)
            lat[mode].append((time.perf_counter() - t0) * 1000)
            time.sleep(0.6)
        for mode, values in lat.items():
            print(f"card drawn -> state, {mode}: " + ", ".join(f"{v:.1f}" for v in values) + " ms")
    finally:
        asker.close()
        console.stop()
        bridge.stop()
        monitor.close()
        service.stop()
        broker.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
