"""The bridge's outbox on a full disk (issue 19 items 7 and 9): a real `studtable bridge` process,
the shoe simulator on a pty, mosquitto, and the outbox on a real tmpfs filled to the last byte.

A card the bridge cannot write to its outbox must not be acknowledged to the shoe (the shoe keeps
it and sends it again), must not be reported as a pulled cable, and must arrive once, resolved as
it was drawn (not as a duplicate of itself), when the disk has room again."""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from engine import wire
from engine.wire import Channel
from tests.e2e.test_bridge_publish import T, _shoe_table, _start_bridge, _wait, payloads
from tests.support.disk import fill_to_the_last_byte, small_tmpfs
from tests.support.mqtt import TestClient

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="mounting a tmpfs needs root")


@pytest.fixture
def small_disk() -> Iterator[Path]:
    with small_tmpfs("200k") as where:
        yield where


def test_a_card_the_outbox_cannot_write_stays_at_the_shoe_and_arrives_once_when_there_is_room(
        mosquitto_broker: Any, tmp_path: Path, small_disk: Path) -> None:
    deck, sim, cfg = _shoe_table(mosquitto_broker, tmp_path)
    text = cfg.read_text().replace(f'state_file = "{tmp_path / "session"}"', f'state_file = "{small_disk / "session"}"')
    assert text != cfg.read_text()
    cfg.write_text(text)
    engine = TestClient(mosquitto_broker, "engine")
    assert engine.connected()
    engine.subscribe([wire.topic_filter(T, Channel.SHOE), wire.topic(T, Channel.AVAIL, "shoe-1")])
    log = tmp_path / "bridge.log"
    bridge = _start_bridge(cfg, log)
    try:
        assert engine.wait(lambda: payloads(engine, "/avail/shoe-1")[-1:] == ["online"], 20), log.read_text()
        sim.load()
        drawn = [str(deck.tags[sim.draw()]) for _ in range(2)]
        assert engine.wait(lambda: len(payloads(engine, "/sensor/shoe")) >= 3, 10), log.read_text()

        def published() -> list[dict[str, Any]]:
            return [m for m in payloads(engine, "/sensor/shoe") if m["kind"] == "card_drawn"]

        # The outbox is emptied once the broker has everything, which gives its block back: fill the
        # disk again before each card, until one does not fit.
        fillers = []
        for k in range(40):
            fillers.append(fill_to_the_last_byte(small_disk, f"filler-{k}"))
            drawn.append(str(deck.tags[sim.draw()]))
            if not engine.wait(lambda: len(published()) == len(drawn), 2):
                break
        else:
            pytest.fail("40 cards fitted in the outbox of a full disk")
        time.sleep(2)  # long enough for a wrong bridge to publish or acknowledge it
        assert [m["card"] for m in published()] == drawn[:-1], "a card the outbox could not keep was published"
        assert sim.pending_events() >= 1, "the shoe was told a card was safe that is on no disk"
        bridge_log = log.read_text()
        assert "cannot write the bridge's outbox" in bridge_log and "No space left" in bridge_log, bridge_log
        assert "cable pulled" not in bridge_log, bridge_log

        for filler in fillers:
            filler.unlink()
        assert _wait(lambda: sim.pending_events() == 0, 20), log.read_text()
        drawn.append(str(deck.tags[sim.draw()]))
        assert engine.wait(lambda: len(published()) >= len(drawn), 15), log.read_text()
        engine.wait(lambda: False, 1.0)  # anything doubled would come now
        cards = published()
        assert [m["card"] for m in cards] == drawn
        assert {m["status"] for m in cards} == {"ok"}  # the resent card is not its own duplicate
        assert [m["counter"] for m in cards] == list(range(2, len(drawn) + 2))
    finally:
        bridge.kill()
        bridge.wait(10)
        sim.close()
        engine.close()
