"""`studtable bridge --config FILE` as a real process: the shoe simulator on a pty in, mosquitto
out.  Card events on the secret shoe topic, numbered by the bus client; availability follows the
shoe's cable; the Last Will says offline when the bridge dies; the session grows at each start."""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
from pathlib import Path
from typing import Any

from engine import wire
from engine.cards import DECK
from engine.wire import Channel
from firmware_bridge.deck import Deck, DeckRegistry
from firmware_bridge.simulator import ShoeSimulator
from tests.support.mqtt import TestClient

CLI = [sys.executable, "-m", "engine.cli"]
T = "t1"


def payloads(c: TestClient, suffix: str) -> list[Any]:
    out = []
    for r in list(c.received):
        if r.topic.endswith(suffix):
            text = r.payload.decode()
            out.append(text if "/avail/" in r.topic else json.loads(text))
    return out


def test_bridge_process_publishes_cards_availability_and_its_last_will(mosquitto_broker: Any,
                                                                         tmp_path: Path) -> None:
    rng = random.Random(5)
    deck = Deck.build("red", zip([bytes([4]) + rng.randbytes(6) for _ in range(52)], DECK, strict=True))
    DeckRegistry(tmp_path / "decks").save(deck)
    sim = ShoeSimulator(deck, pty_link=tmp_path / "ttyShoe", seed=2).start()
    cfg = tmp_path / "bridge.toml"
    cfg.write_text(f'table = "{T}"\nport = "{tmp_path / "ttyShoe"}"\ndeck = "red"\ndecks_dir = "{tmp_path / "decks"}"\n'
                   f'device = "shoe-1"\nbroker = "127.0.0.1:{mosquitto_broker.port}"\n'
                   f'broker_dir = "{mosquitto_broker.files.directory}"\nstate_file = "{tmp_path / "session"}"\n')
    engine = TestClient(mosquitto_broker, "engine")
    assert engine.connected()
    engine.subscribe([wire.topic_filter(T, Channel.SHOE), wire.topic(T, Channel.AVAIL, "shoe-1"),
                      wire.topic(T, Channel.BIRTH, "shoe-1")])
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    log = tmp_path / "bridge.log"
    bridge = subprocess.Popen([*CLI, "bridge", "--config", str(cfg)], stderr=log.open("w"), env=env)
    try:
        assert engine.wait(lambda: payloads(engine, "/avail/shoe-1")[-1:] == ["online"], 15), log.read_text()
        assert engine.wait(lambda: payloads(engine, "/birth/shoe-1") != [], 5)
        birth = payloads(engine, "/birth/shoe-1")[-1]
        assert birth["role"] == "bridge" and birth["session"] == 1
        sim.load()
        drawn = [str(deck.tags[sim.draw()]) for _ in range(3)]
        assert engine.wait(lambda: len(payloads(engine, "/sensor/shoe")) >= 4, 10)
        shoe = payloads(engine, "/sensor/shoe")
        assert [m["kind"] for m in shoe] == ["shoe_loaded", "card_drawn", "card_drawn", "card_drawn"]
        assert [m["card"] for m in shoe[1:]] == drawn and {m["status"] for m in shoe[1:]} == {"ok"}
        assert [m["seq"] for m in shoe] == [1, 2, 3, 4] and {m["source"] for m in shoe} == {"shoe-1"}

        # The cable is pulled: offline (retained); a card drawn meanwhile arrives once, after it is back.
        sim.unplug()
        assert engine.wait(lambda: payloads(engine, "/avail/shoe-1")[-1] == "offline", 10)
        late = str(deck.tags[sim.draw()])
        sim.plug()
        assert engine.wait(lambda: payloads(engine, "/avail/shoe-1")[-1] == "online", 15)
        assert engine.wait(lambda: len(payloads(engine, "/sensor/shoe")) >= 5, 10)
        engine.wait(lambda: False, 1.0)  # anything replayed after the reconnect would come now
        shoe = payloads(engine, "/sensor/shoe")
        assert [m["card"] for m in shoe[1:]] == [*drawn, late]
        assert [m["seq"] for m in shoe] == [1, 2, 3, 4, 5]

        # The bridge dies without a word: the broker publishes its Last Will.
        bridge.kill()
        bridge.wait(10)
        assert engine.wait(lambda: payloads(engine, "/avail/shoe-1")[-1] == "offline", 30)
        # Started again, it says so with a new session, so its seq 1 is not taken for a duplicate.
        bridge = subprocess.Popen([*CLI, "bridge", "--config", str(cfg)], stderr=log.open("a"), env=env)
        assert engine.wait(lambda: [b["session"] for b in payloads(engine, "/birth/shoe-1")][-1:] == [2], 15)
        assert engine.wait(lambda: payloads(engine, "/avail/shoe-1")[-1] == "online", 15)
    finally:
        bridge.terminate()
        bridge.wait(10)
        sim.close()
        engine.close()


def test_bridge_says_when_the_broker_login_is_missing(tmp_path: Path) -> None:
    cfg = tmp_path / "bridge.toml"
    cfg.write_text('table = "t1"\nport = "/dev/null"\nbroker = "127.0.0.1:1"\n')
    done = subprocess.run([*CLI, "bridge", "--config", str(cfg)], capture_output=True, text=True, timeout=30)
    assert done.returncode == 2  # a configuration error (engine.configfile): one line, exit 2
    assert "no broker login for the bridge role" in done.stderr and "user and password" in done.stderr
