"""The session core, host and device back to back on a virtual clock."""

from __future__ import annotations

import pytest

from firmware_bridge import messages as m
from firmware_bridge.lossy import LossyChannel
from firmware_bridge.session import (
    DeviceReset,
    DeviceSession,
    HostSession,
    HostState,
    LinkDown,
    LinkUp,
    ProtocolError,
    Received,
)
from tests.firmware_bridge.loopback import IDENT, Loopback, make_uids


def run_draws(lb: Loopback, uids: list[bytes], gap: float = 0.05, settle: float = 5.0) -> list[bytes]:
    """Draw ``uids`` one every ``gap`` seconds of virtual time, then let the link settle."""
    for uid in uids:
        lb.draw(uid)
        lb.run_until(lb.now + gap)
    lb.run_until(lb.now + settle)
    return list(uids)


def test_clean_link_handshakes_and_delivers() -> None:
    lb = Loopback()
    uids = make_uids(52, 1)
    sent = run_draws(lb, uids)
    assert [c.uid for c in lb.received_cards()] == sent
    assert isinstance(lb.events[0], LinkUp) and lb.events[0].ident.boot_count == IDENT.boot_count
    assert lb.device.arq.stats.retransmitted == 0


def test_ten_thousand_draws_through_a_bad_cable_arrive_once_in_order() -> None:
    """Issue 5's proof at the core level: 1% of bytes corrupted and 1% dropped,
    in both directions, plus 1% of chunks duplicated, over 10,000 draws."""
    lb = Loopback(
        host_to_dev=LossyChannel(drop_rate=0.01, corrupt_rate=0.01, duplicate_rate=0.01, seed=11),
        dev_to_host=LossyChannel(drop_rate=0.01, corrupt_rate=0.01, duplicate_rate=0.01, seed=12),
    )
    deck = make_uids(52, 2)
    uids = [deck[i % 52] for i in range(10_000)]
    sent = run_draws(lb, uids)
    got = lb.received_cards()
    assert [c.uid for c in got] == sent  # none lost, none repeated, none altered, in order
    assert [c.counter for c in got] == list(range(1, 10_001))
    # The faults really happened and really cost retransmissions.
    assert lb.dev_to_host.stats.corrupted > 1000 and lb.dev_to_host.stats.dropped > 1000
    assert lb.dev_to_host.stats.duplicated > 50
    assert lb.device.arq.stats.retransmitted > 100 and lb.host.arq.stats.duplicates > 10
    assert lb.host.decoder.stats.bad_crc > 100


def test_reconnect_replays_unacked_events_and_host_drops_the_repeats() -> None:
    lb = Loopback()
    uids = make_uids(52, 3)
    run_draws(lb, uids[:10])
    # The cable goes: the host closes its port; the device keeps drawing and
    # its frames go nowhere; the ACKs for the last two delivered frames are lost too.
    lb.host.close(lb.now, "the cable was pulled")
    for u in uids[10:15]:
        lb.draw(u)
    lb.device.bytes_to_send()
    lb.host.open(lb.now)
    sent = run_draws(lb, uids[15:20])
    got = [c.uid for c in lb.received_cards()]
    assert got == uids[:15] + sent
    assert any(isinstance(e, LinkDown) and "pulled" in e.reason for e in lb.events)
    assert sum(isinstance(e, LinkUp) for e in lb.events) == 2


def test_replayed_event_after_lost_ack_is_suppressed_by_counter() -> None:
    lb = Loopback()
    uids = make_uids(52, 4)
    run_draws(lb, uids[:3])
    # Device sends card 4; host receives it but the host's ACK is lost, then a new session starts.
    lb.draw(uids[3])
    lb.advance()
    lb.host_to_dev.drop_rate = 1.0
    for _ in range(20):
        lb.advance()
    assert [c.uid for c in lb.received_cards()][-1] == uids[3]
    lb.host.close(lb.now)
    lb.host_to_dev.drop_rate = 0.0
    lb.host.open(lb.now)
    for _ in range(500):
        lb.advance()
    assert [c.uid for c in lb.received_cards()] == uids[:4]
    assert lb.host.stats.duplicates_suppressed >= 1


def test_device_reset_is_reported_and_new_counters_are_not_taken_for_duplicates() -> None:
    lb = Loopback()
    uids = make_uids(52, 5)
    run_draws(lb, uids[:5])
    booted = m.Ident(*[getattr(IDENT, f) for f in ("protocol_version", "firmware", "device_id", "capabilities",
                                                     "seat_antennas")], IDENT.boot_count + 1, m.ResetReason.BROWNOUT, 0)
    lb.device = DeviceSession(booted, lb.now, lb.config)  # power cycle: RAM (counter, queue) gone
    sent = run_draws(lb, uids[5:10])
    resets = [e for e in lb.events if isinstance(e, DeviceReset)]
    assert len(resets) == 1 and "brownout" in resets[0].reason
    assert [c.uid for c in lb.received_cards()] == uids[:5] + sent
    assert [c.counter for c in lb.received_cards()] == [1, 2, 3, 4, 5, 1, 2, 3, 4, 5]
    assert any(isinstance(e, LinkDown) for e in lb.events)


def test_silence_takes_the_link_down_and_it_comes_back() -> None:
    lb = Loopback()
    run_draws(lb, make_uids(52, 6)[:2])
    lb.dev_to_host.drop_rate = 1.0
    for _ in range(int(3.5 / lb.step)):
        lb.advance()
    assert isinstance(lb.events[-1], LinkDown) and "3 s" in lb.events[-1].reason
    assert lb.host.state is HostState.CONNECTING
    lb.dev_to_host.drop_rate = 0.0
    for _ in range(int(1.0 / lb.step)):
        lb.advance()
    assert isinstance(lb.events[-1], LinkUp)


def test_protocol_version_mismatch_is_reported_not_accepted() -> None:
    lb = Loopback()
    lb.device.ident = m.Ident(2, (9, 0, 0), IDENT.device_id, 0, 0, 1, 0, 0)
    for _ in range(100):
        lb.advance()
    assert lb.host.state is HostState.CONNECTING
    msgs = [str(getattr(e, "reason", "")) for e in lb.events]
    assert any("protocol version 2" in t and "update the shoe firmware" in t for t in msgs)


def test_host_can_reset_the_device_reliably() -> None:
    lb = Loopback(host_to_dev=LossyChannel(corrupt_rate=0.05, seed=3))
    lb.run_until(3.0)
    assert lb.host.state is HostState.READY
    lb.host.send(m.ResetCommand(), lb.now)
    for _ in range(500):
        lb.advance()
    assert lb.device.commands == [m.ResetCommand(m.ResetReason.HOST_REQUEST)]


def test_misuse_names_the_event_and_the_state() -> None:
    host = HostSession()
    with pytest.raises(ProtocolError, match=r"cannot handle event 'bytes' in state IDLE"):
        host.receive_bytes(b"\xa5", 0.0)
    host.open(0.0)
    with pytest.raises(ProtocolError, match=r"'send' in state CONNECTING: commands can be sent only once"):
        host.send(m.ResetCommand(), 0.0)


def test_garbage_in_any_state_never_raises() -> None:
    host = HostSession()
    host.open(0.0)
    host.receive_bytes(bytes(range(256)) * 4, 0.1)
    host.poll(10.0)
    assert host.state is HostState.CONNECTING
    assert not [e for e in host.events() if isinstance(e, Received)]
