"""The bridge against the simulated shoe on a real pty and a real TCP socket."""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from engine import wire
from engine.cards import DECK
from firmware_bridge.bridge import BridgeConfig, BridgeCore, SerialBridge, explain_open_error
from firmware_bridge.deck import Deck, Resolver
from firmware_bridge.simulator import Faults, ShoeSimulator
from tests.firmware_bridge.loopback import make_uids

RED = Deck.build("red", zip(make_uids(52, 21), DECK, strict=True))
BLUE = Deck.build("blue", zip(make_uids(52, 22), DECK, strict=True))


def wait_for(cond: Callable[[], bool], timeout: float = 15.0, what: str = "condition") -> None:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if cond():
            return
        time.sleep(0.005)
    raise AssertionError(f"timed out after {timeout} s waiting for {what}")


class Rig:
    def __init__(self, sim: ShoeSimulator) -> None:
        self.sim = sim
        self.out: list[wire.Message] = []
        self.core = BridgeCore("t1", "shoe", 1, Resolver([RED, BLUE], "red"), self.out.append)
        self.bridge = SerialBridge(sim.url, self.core, reconnect_interval=0.1, nonce_seed=5)

    def kinds(self, kind: str) -> list[dict]:
        return [dict(m.body) for m in list(self.out) if m.kind == kind]

    def availability(self) -> list[str]:
        return [m.kind for m in list(self.out) if m.channel is wire.Channel.AVAIL]

    def online(self) -> bool:
        return self.core.online is True


@pytest.fixture
def pty_rig(tmp_path: Path) -> Iterator[Rig]:
    sim = ShoeSimulator(RED, pty_link=tmp_path / "ttyShoe", seed=1).start()
    rig = Rig(sim)
    rig.bridge.start()
    wait_for(rig.online, what="the shoe to come online")
    yield rig
    rig.bridge.stop()
    sim.close()


def test_bad_cable_through_a_pty_no_wrong_card_each_card_once_in_order(tmp_path: Path) -> None:
    faults = Faults(drop_rate=0.01, corrupt_rate=0.01, duplicate_rate=0.01, seed=7)
    with ShoeSimulator(RED, pty_link=tmp_path / "ttyShoe", faults=faults, seed=2) as sim:
        rig = Rig(sim)
        rig.bridge.start()
        try:
            drawn = []
            for _ in range(6):  # 312 draws
                sim.load()
                rig.core.new_hand()
                drawn += [sim.draw() for _ in range(52)]
            wait_for(lambda: len(rig.kinds("card_drawn")) >= len(drawn), 60, "every card")
            time.sleep(0.3)
            cards = rig.kinds("card_drawn")
            assert [c["uid"] for c in cards] == [u.hex() for u in drawn]
            assert all(c["card"] == str(RED.tags[bytes.fromhex(c["uid"])]) for c in cards)  # zero wrong cards
            assert {c["status"] for c in cards} == {"ok"}
            assert sim.out_channel.stats.corrupted > 20 and sim.out_channel.stats.dropped > 20
            assert rig.bridge.session.arq.stats.duplicates + rig.bridge.session.stats.duplicates_suppressed > 0
            seqs = [m.seq for m in rig.out if m.channel is wire.Channel.SHOE]
            assert seqs == list(range(1, len(seqs) + 1))
        finally:
            rig.bridge.stop()


def test_cable_pulled_mid_deal_on_a_pty(pty_rig: Rig) -> None:
    rig, sim = pty_rig, pty_rig.sim
    sim.load()
    first = [sim.draw() for _ in range(10)]
    wait_for(lambda: len(rig.kinds("card_drawn")) == 10, what="the first ten cards")
    sim.unplug()
    wait_for(lambda: not rig.online(), what="the shoe to go offline")
    during = [sim.draw() for _ in range(5)]  # drawn while the cable is out: they wait in the shoe
    time.sleep(0.3)
    assert any("does not exist; check that the shoe is plugged in" in p for p in rig.bridge.problems)
    assert len(rig.kinds("card_drawn")) == 10
    sim.plug()
    wait_for(rig.online, what="the shoe to come back")
    after = [sim.draw() for _ in range(5)]
    wait_for(lambda: len(rig.kinds("card_drawn")) >= 20, what="all twenty cards")
    time.sleep(0.2)
    assert [c["uid"] for c in rig.kinds("card_drawn")] == [u.hex() for u in first + during + after]
    assert rig.availability() == ["offline", "online", "offline", "online"]


def test_cable_pulled_on_a_socket_url(tmp_path: Path) -> None:
    with ShoeSimulator(RED, tcp_port=0, seed=3) as sim:
        assert sim.url.startswith("socket://127.0.0.1:")
        rig = Rig(sim)
        rig.bridge.start()
        try:
            wait_for(rig.online)
            sim.load()
            first = [sim.draw() for _ in range(8)]
            wait_for(lambda: len(rig.kinds("card_drawn")) == 8)
            sim.unplug()
            during = [sim.draw() for _ in range(4)]
            wait_for(lambda: not rig.online(), what="offline")
            time.sleep(0.3)
            assert any("nothing is listening" in p or "went away" in p or "could not" in p for p in rig.bridge.problems)
            sim.plug()
            wait_for(rig.online, what="back online")
            wait_for(lambda: len(rig.kinds("card_drawn")) >= 12)
            time.sleep(0.2)
            assert [c["uid"] for c in rig.kinds("card_drawn")] == [u.hex() for u in first + during]
            assert rig.availability()[-2:] == ["offline", "online"]
        finally:
            rig.bridge.stop()


def test_shoe_reset_mid_deal_is_published_and_counting_restarts(pty_rig: Rig) -> None:
    rig, sim = pty_rig, pty_rig.sim
    sim.load()
    before = [sim.draw() for _ in range(5)]
    wait_for(lambda: len(rig.kinds("card_drawn")) == 5)
    sim.reset()
    wait_for(lambda: len(rig.kinds("reset")) == 1, what="the reset message")
    assert "brownout" in rig.kinds("reset")[0]["reason"]
    wait_for(rig.online)
    after = [sim.draw() for _ in range(3)]
    wait_for(lambda: len(rig.kinds("card_drawn")) == 8, what="cards after the reset")
    cards = rig.kinds("card_drawn")
    assert [c["uid"] for c in cards] == [u.hex() for u in before + after]
    assert [c["counter"] for c in cards] == [2, 3, 4, 5, 6, 1, 2, 3]  # counter 1 was shoe_loaded


def test_garbled_uid_duplicate_and_foreign_card_are_flagged_not_guessed(pty_rig: Rig) -> None:
    rig, sim = pty_rig, pty_rig.sim
    sim.load()
    uid = sim.draw()
    sim.draw(uid)  # the same card again in this hand
    garbled = sim.garbled_read()
    foreign = next(iter(BLUE.tags))
    sim.draw(foreign)
    wait_for(lambda: len(rig.kinds("card_drawn")) == 4)
    c = rig.kinds("card_drawn")
    assert [x["status"] for x in c] == ["ok", "duplicate", "unknown_tag", "foreign_deck"]
    assert c[2]["uid"] == garbled.hex() and c[2]["card"] is None and c[2]["deck"] is None
    assert c[3]["deck"] == "blue" and c[3]["card"] == str(BLUE.tags[foreign])
    rig.bridge.new_hand()
    time.sleep(0.05)
    sim.draw(uid)
    wait_for(lambda: len(rig.kinds("card_drawn")) == 5)
    assert rig.kinds("card_drawn")[-1]["status"] == "ok"


def test_stalled_shoe_goes_offline_and_recovers(pty_rig: Rig) -> None:
    rig, sim = pty_rig, pty_rig.sim
    sim.stall(3.6)
    wait_for(lambda: not rig.online(), 6, "offline after silence")
    wait_for(rig.online, 6, "online after the stall")
    sim.load()
    u = sim.draw()
    wait_for(lambda: len(rig.kinds("card_drawn")) == 1)
    assert rig.kinds("card_drawn")[0]["uid"] == u.hex()


def test_technician_messages() -> None:
    import serial

    with pytest.raises(serial.SerialException) as info:
        serial.serial_for_url("/dev/ttyUSB_studtable_none", baudrate=115200)
    text = explain_open_error("/dev/ttyUSB_studtable_none", info.value)
    assert text == ("the serial path /dev/ttyUSB_studtable_none does not exist; check that the shoe is plugged in "
                    "and powered; list /dev/serial/by-id/ to find its name")
    with pytest.raises(serial.SerialException) as info:
        serial.serial_for_url("socket://127.0.0.1:1", baudrate=115200)
    assert explain_open_error("socket://127.0.0.1:1", info.value).startswith("nothing is listening at 127.0.0.1:1")


def test_config_file_names_unknown_settings(tmp_path: Path) -> None:
    p = tmp_path / "bridge.toml"
    p.write_text('table = "t7"\nport = "socket://127.0.0.1:9"\ndeck = "red"\n')
    cfg = BridgeConfig.load(p)
    assert (cfg.table, cfg.port, cfg.deck) == ("t7", "socket://127.0.0.1:9", "red")
    p.write_text('tabel = "t7"\n')
    with pytest.raises(ValueError, match="unknown setting\\(s\\) tabel"):
        BridgeConfig.load(p)


def test_the_session_file_is_replaced_atomically_not_rewritten_in_place(tmp_path: Path) -> None:
    """Security review item 2: a torn or empty session file restarts the bridge at session 1; the
    new counter goes to a temporary file, fsynced, renamed over the old one (a new inode)."""
    state = tmp_path / "state" / "session"
    config = BridgeConfig(state_file=state)
    assert config.next_session() == 1
    inode = state.stat().st_ino
    keep = tmp_path / "the-old-file"
    os.link(state, keep)  # what a reader holding the old file sees
    assert config.next_session() == 2
    assert state.read_text() == "2\n" and state.stat().st_ino != inode
    assert keep.read_text() == "1\n"
    assert sorted(p.name for p in state.parent.iterdir()) == ["session"]  # no temporary file left
