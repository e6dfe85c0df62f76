"""The recorder keeps every table's finished hands in one PostgreSQL store, once each."""

from __future__ import annotations

import time
from typing import Any

from engine.bus import BusClient
from engine.recorder import Recorder
from engine.store import open_store
from engine.wire import Channel


def test_recorder_keeps_each_tables_hands_once(mosquitto_broker: Any, pg_dsn: str) -> None:
    user, password = mosquitto_broker.login("recorder", "recorder-1")
    rec = Recorder(host=mosquitto_broker.host, port=mosquitto_broker.port, username=user, password=password,
                   store=pg_dsn).start()
    engines = []
    try:
        for table in ("t1", "t2"):
            u, p = mosquitto_broker.login("engine")
            engines.append(BusClient(host=mosquitto_broker.host, port=mosquitto_broker.port, username=u, password=p,
                                     table=table, device="engine", role="engine", session=1).start())
        for n in (1, 2):
            for e in engines:
                e.publish(Channel.HISTORY, "hand", hand=f"{e.table}-{n}", variant="F7S",
                          events=[{"type": "hand_started", "n": n}], phh="variant = 'F7S'\n")
        engines[0].publish(Channel.HISTORY, "hand", hand="t1-2", variant="F7S", events=[], phh=None)  # again
        deadline = time.monotonic() + 10
        while rec.stats.received < 5 and time.monotonic() < deadline:
            time.sleep(0.05)
        assert rec.stats.received == 5
        assert rec.stats.recorded == 4 and rec.stats.duplicates == 1
        for table in ("t1", "t2"):
            store = open_store(pg_dsn, table)
            try:
                assert [h.hand_id for h in store.list_hands()] == [f"{table}-1", f"{table}-2"]
                kept = store.get_hand(f"{table}-1")
                assert kept is not None and kept.events == [{"type": "hand_started", "n": 1}]
            finally:
                store.close()
    finally:
        for e in engines:
            e.stop()
        rec.stop()
