"""Security review item 3: padded console commands must not fill the store.

``table`` and ``report`` take extra fields, and a message's body was stored before the Floor
parsed it (refused inputs too), so a console could store up to 1 MiB per message.  Now the wire
contract caps a console command at MAX_COMMAND_BYTES (refused with the reason, never stored) and
the generated mosquitto config refuses any packet above the contract's largest message.  Real
engine, real SQLite store, real mosquitto.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest

from engine import wire
from engine.broker.config import MAX_PACKET_BYTES
from engine.service import EngineService
from engine.store import open_store
from engine.wire import MAX_COMMAND_BYTES, MAX_PAYLOAD_BYTES, Channel, WireError
from tests.engine.edge.test_service import TABLE, client, engine_config, wait_state
from tests.support.mqtt import TestClient


def padded(size: int, seq: int = 1) -> bytes:
    doc = (b'{"v":1,"source":"console-1","session":1,"seq":%d,"kind":"report","report":"nothing",'
           b'"seat":null,"pad":"' % seq)
    return doc + b"x" * size + b'"}'


def test_the_contract_refuses_a_padded_console_command_with_the_reason() -> None:
    with pytest.raises(WireError, match="limit for console commands"):
        wire.make(TABLE, Channel.COMMAND, "report", source="console-1", session=1, seq=1, report="nothing",
                  seat=None, pad="x" * (MAX_COMMAND_BYTES + 1))
    with pytest.raises(WireError, match="limit for console commands"):
        wire.decode(wire.topic(TABLE, Channel.COMMAND), padded(MAX_COMMAND_BYTES * 4))
    with pytest.raises(WireError, match="limit for console commands"):  # just over, within the header slack
        wire.decode(wire.topic(TABLE, Channel.COMMAND), padded(MAX_COMMAND_BYTES))
    wire.decode(wire.topic(TABLE, Channel.COMMAND), padded(1000))  # a little extra still goes


def test_padded_commands_are_not_stored(mosquitto_broker: Any, tmp_path: Path) -> None:
    config = engine_config(mosquitto_broker, tmp_path / "engine.db")
    service = EngineService(config).start()
    monitor = TestClient(mosquitto_broker, "monitor")
    raw = TestClient(mosquitto_broker, "console", "console-1")
    console = None
    try:
        assert monitor.connected() and raw.connected()
        monitor.subscribe([wire.topic(TABLE, Channel.STATE)])
        wait_state(monitor, lambda s: s["phase"] == "dealing")
        for seq in range(1, 21):
            raw.publish(wire.topic(TABLE, Channel.COMMAND), padded(500_000, seq))
        raw.close()
        console = client(mosquitto_broker, "console", "console-2")
        msg = console.publish(Channel.COMMAND, "report", report="nothing", seat=None)
        wait_state(monitor, lambda s: s["input"] == {"source": "console-2", "session": 1, "seq": msg.seq})
    finally:
        if console is not None:
            console.stop()
        monitor.close()
        service.stop()
    with open_store(tmp_path / "engine.db", TABLE) as store:
        events = list(store.events())
    assert not any(e.source.endswith("console-1") for e in events)
    assert (tmp_path / "engine.db").stat().st_size < 1_000_000


def test_the_generated_mosquitto_refuses_a_packet_above_the_wire_limit(mosquitto_broker: Any) -> None:
    conf = mosquitto_broker.files.mosquitto_conf.read_text()
    assert f"max_packet_size {MAX_PACKET_BYTES}" in conf and MAX_PACKET_BYTES > MAX_PAYLOAD_BYTES
    engine = TestClient(mosquitto_broker, "engine")
    sender = TestClient(mosquitto_broker, "console", "console-1")
    try:
        assert engine.connected() and sender.connected()
        engine.subscribe([wire.topic(TABLE, Channel.COMMAND)])
        sender._client.publish(wire.topic(TABLE, Channel.COMMAND), b"x" * (MAX_PACKET_BYTES + 1), qos=1)
        sender._client.publish(wire.topic(TABLE, Channel.COMMAND), b"small", qos=1)
        time.sleep(1.5)
        assert engine.received == []  # the big one was refused, its sender cut off
    finally:
        engine.close()
        sender.close()
