"""The hand-log recorder: every finished hand of every table, into one store.

It logs in with the recorder role, which may read ``history/hand`` (published
by each engine only after the pot is awarded) and nothing secret before that.
Each hand is written (SQLite, or PostgreSQL for a cardroom) inside the MQTT
callback, before the broker gets its acknowledgement, so a recorder crash
loses nothing: the broker redelivers what was not acknowledged, and the store
keeps one row per hand id.
"""

from __future__ import annotations

import logging
import threading
import time
from dataclasses import dataclass, field
from typing import Any

from engine.bus import BusClient
from engine.store import HandRecord, open_store
from engine.wire import Channel, Message

log = logging.getLogger(__name__)


@dataclass
class RecorderStats:
    received: int = 0
    recorded: int = 0
    duplicates: int = 0
    by_table: dict[str, int] = field(default_factory=dict)


class Recorder:
    """Subscribes to every table's finished hands and records them."""

    def __init__(self, *, host: str, port: int, username: str, password: str, store: str,
                 device: str = "recorder-1", session: int = 1) -> None:
        self.store = open_store(store, "cardroom")
        self.stats = RecorderStats()
        self._lock = threading.Lock()
        self.bus = BusClient(host=host, port=port, username=username, password=password, table="cardroom",
                             device=device, role="recorder", session=session, persistent=True,
                             on_message=self._on_message)
        self.bus.subscribe(Channel.HISTORY, table="+")

    def start(self, wait: float = 10.0) -> Recorder:
        self.bus.start(wait=wait)
        return self

    def stop(self) -> None:
        self.bus.stop()
        self.store.close()

    def _on_message(self, msg: Message) -> None:
        if msg.channel is not Channel.HISTORY or msg.kind != "hand":
            return
        body: dict[str, Any] = dict(msg.body)
        now = time.strftime("%Y-%m-%dT%H:%M:%S")
        record = HandRecord(str(body["hand"]), msg.table, str(body.get("variant", "")), now, now,
                            list(body.get("events", [])), body.get("phh"))
        with self._lock:
            new = self.store.record_hand(record)
            if new:
                self.stats.recorded += 1
                self.stats.by_table[msg.table] = self.stats.by_table.get(msg.table, 0) + 1
            else:
                self.stats.duplicates += 1
            # counted last: whoever sees a message counted (without the lock) sees what became of it
            self.stats.received += 1
