"""The bus edge on real brokers, and the SourceTracker that spots gaps, duplicates and restarts."""

from __future__ import annotations

import contextlib
import itertools
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine import wire
from engine.bus import BusClient, BusError, SourceTracker, Verdict
from engine.publicstate import idle_state
from engine.wire import Channel, Message, Role
from tests.support.mqtt import TestClient

T = "t1"


# --------------------------------------------------------------------------- SourceTracker (pure)


def test_tracker_classifies_every_case() -> None:
    tr = SourceTracker()
    assert tr.observe("shoe", 1, 1).verdict is Verdict.NEW_SESSION
    assert tr.observe("shoe", 1, 2).verdict is Verdict.NEW
    assert tr.observe("shoe", 1, 2).verdict is Verdict.DUPLICATE
    gap = tr.observe("shoe", 1, 6)
    assert (gap.verdict, gap.missing) == (Verdict.GAP, (3, 5))
    assert tr.outstanding("shoe") == [(3, 5)]
    assert tr.observe("shoe", 1, 4).verdict is Verdict.LATE
    assert tr.outstanding("shoe") == [(3, 3), (5, 5)]
    assert tr.observe("shoe", 1, 4).verdict is Verdict.DUPLICATE
    restart = tr.observe("shoe", 2, 1)
    assert (restart.verdict, restart.missing) == (Verdict.NEW_SESSION, None)
    assert tr.outstanding("shoe") == []
    assert tr.observe("shoe", 1, 7).verdict is Verdict.STALE
    late_start = tr.observe("cam", 5, 4)
    assert (late_start.verdict, late_start.missing) == (Verdict.NEW_SESSION, (1, 3))
    with pytest.raises(ValueError, match="observe_birth"):
        tr.observe("cam", 5, 0)


def test_tracker_seeded_from_the_store_recognises_redeliveries() -> None:
    tr = SourceTracker({"shoe": (3, 10)})
    assert tr.observe("shoe", 3, 10).verdict is Verdict.DUPLICATE
    assert tr.observe("shoe", 3, 11).verdict is Verdict.NEW
    assert tr.observe("shoe", 2, 99).verdict is Verdict.STALE


def test_birth_announces_what_should_have_arrived() -> None:
    tr = SourceTracker()
    assert tr.observe_birth("shoe", 4, 0) is Verdict.NEW_SESSION
    tr.observe("shoe", 4, 1)
    assert tr.observe_birth("shoe", 4, 3) is Verdict.DUPLICATE  # reconnect: it sent 2 and 3 meanwhile
    assert tr.outstanding("shoe") == [(2, 3)]
    tr.observe("shoe", 4, 2)
    tr.observe("shoe", 4, 3)
    assert tr.outstanding("shoe") == []
    assert tr.observe_birth("shoe", 3, 50) is Verdict.STALE
    assert tr.observe_birth("shoe", 5, 0) is Verdict.NEW_SESSION and tr.session("shoe") == 5


@settings(max_examples=200, deadline=None)
@given(st.integers(1, 40).flatmap(lambda n: st.permutations(list(range(1, n + 1)) * 2)))
def test_any_delivery_order_accepts_each_seq_exactly_once(order: list[int]) -> None:
    tr = SourceTracker({"dev": (1, 0)})
    accepted = [seq for seq in order if tr.observe("dev", 1, seq).verdict.accept]
    assert sorted(accepted) == sorted(set(order))
    assert tr.outstanding("dev") == []


# --------------------------------------------------------------------------- BusClient on real brokers


def eventually(pred: Callable[[], bool], timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while not pred():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.02)
    return True


class Inbox:
    def __init__(self) -> None:
        self.messages: list[Message] = []
        self.invalid: list[tuple[str, str]] = []
        self.cond = threading.Condition()

    def add(self, msg: Message) -> None:
        with self.cond:
            self.messages.append(msg)
            self.cond.notify_all()

    def bad(self, topic: str, payload: bytes, err: wire.WireError) -> None:
        with self.cond:
            self.invalid.append((topic, str(err)))
            self.cond.notify_all()

    def wait(self, pred: Callable[[], bool], timeout: float = 10.0) -> bool:
        with self.cond:
            return self.cond.wait_for(pred, timeout)

    def of(self, channel: Channel) -> list[Message]:
        with self.cond:
            return [m for m in self.messages if m.channel is channel]


@pytest.fixture
def bus(mqtt_broker: Any) -> Iterator[Callable[..., BusClient]]:
    made: list[BusClient] = []

    def make(role: str, device: str, session: int = 1, **kw: Any) -> BusClient:
        user, pw = mqtt_broker.login(role, device)
        client = BusClient(host=mqtt_broker.host, port=mqtt_broker.port, username=user, password=pw, table=T,
                           device=device, role=role, session=session, version="9.9", **kw)
        made.append(client)
        return client

    yield make
    for c in made:
        with contextlib.suppress(Exception):
            c.stop(timeout=1)


def test_sensor_messages_reach_the_engine_with_seq_and_bad_ones_are_dropped(mqtt_broker: Any, bus: Any) -> None:
    inbox = Inbox()
    engine = bus("engine", "engine", on_message=inbox.add, on_invalid=inbox.bad)
    engine.subscribe(Channel.SHOE)
    engine.start()
    shoe = bus("bridge", "shoe-1", session=7).start()
    # The broken messages go out on the shoe's own connection (a second connection of the
    # bridge user would take over the shoe's client id on mosquitto: use_username_as_clientid).
    for i, card in enumerate(["Ah", "Kd"], 1):
        shoe.publish(Channel.SHOE, "card_drawn", counter=i, uid="04a1b2c3", card=card, deck="d1", quality=9,
                     status="ok")
    shoe._client.publish(wire.topic(T, Channel.SHOE), b'{"v":1,"kind":"card_drawn"}', qos=1)
    shoe._client.publish(wire.topic(T, Channel.SHOE), b"\x00garbage", qos=1)
    shoe.publish(Channel.SHOE, "shoe_empty")
    assert inbox.wait(lambda: len(inbox.of(Channel.SHOE)) == 3 and len(inbox.invalid) == 2)
    got = inbox.of(Channel.SHOE)
    assert [(m.source, m.session, m.seq, m.kind) for m in got] == [
        ("shoe-1", 7, 1, "card_drawn"), ("shoe-1", 7, 2, "card_drawn"), ("shoe-1", 7, 3, "shoe_empty")]
    assert got[1].body["card"] == "Kd"
    assert any("field 'source' is missing" in err for _, err in inbox.invalid)
    assert engine.invalid_count == 2 and engine.connected


def test_availability_birth_and_last_will(mqtt_broker: Any, bus: Any) -> None:
    cam = bus("vision", "cam-1", session=12, capabilities=["fps_report"]).start()
    cam.publish(Channel.VISION, "observation", frame=1, seats={}, changed=[], irregular=[], fps=30)
    assert cam.flush()
    # A console that starts late sees the retained availability and birth at once.
    console = TestClient(mqtt_broker, "console", "console-1")
    try:
        console.subscribe([wire.topic_filter(T, Channel.AVAIL), wire.topic_filter(T, Channel.BIRTH)])
        assert console.wait(lambda: len(console.received) >= 2)
        by_topic = {m.topic: m for m in console.received}
        avail = by_topic[wire.topic(T, Channel.AVAIL, "cam-1")]
        assert avail.payload == b"online" and avail.retain
        birth = wire.decode(wire.topic(T, Channel.BIRTH, "cam-1"), by_topic[wire.topic(T, Channel.BIRTH, "cam-1")].payload)
        assert (birth.session, birth.seq) == (12, 0)
        assert birth.body == {"role": "vision", "version": "9.9", "capabilities": ["fps_report"], "last_seq": 0}
        # The process dies without a DISCONNECT: the broker publishes its Will.
        cam._client.loop_stop()
        sock = cam._client.socket()
        assert sock is not None
        sock.close()
        assert console.wait(lambda: console.received[-1].payload == b"offline"
                            and console.received[-1].topic.endswith("avail/cam-1"), 15)
    finally:
        console.close()


def test_clean_stop_leaves_offline_retained(mqtt_broker: Any, bus: Any) -> None:
    shoe = bus("bridge", "shoe-1").start()
    shoe.stop()
    late = TestClient(mqtt_broker, "monitor", "monitor-1")
    try:
        late.subscribe([wire.topic_filter(T, Channel.AVAIL)])
        assert late.wait(lambda: any(m.topic.endswith("avail/shoe-1") for m in late.received))
        assert [m.payload for m in late.received if m.topic.endswith("avail/shoe-1")] == [b"offline"]
    finally:
        late.close()


def test_wrong_password_is_a_clear_error(mqtt_broker: Any) -> None:
    client = BusClient(host=mqtt_broker.host, port=mqtt_broker.port, username="console-1", password="nope",
                       table=T, device="console-1", role="console", session=1)
    try:
        with pytest.raises(BusError, match="username and password"):
            client.start(wait=2)
    finally:
        client.stop(timeout=1)


def test_reconnect_resubscribes_and_loses_nothing(mqtt_broker: Any, bus: Any) -> None:
    inbox = Inbox()
    changes: list[bool] = []
    engine = bus("engine", "engine", persistent=True, on_message=inbox.add, on_connection=changes.append)
    engine.subscribe(Channel.COMMAND)
    engine.start()
    console = bus("console", "console-1").start()
    console.publish(Channel.COMMAND, "action", seat=1, action="fold", amount=None)
    assert inbox.wait(lambda: len(inbox.of(Channel.COMMAND)) == 1)

    began = time.monotonic()
    mqtt_broker.stop()
    stopped = time.monotonic() - began
    assert eventually(lambda: not engine.connected and not console.connected, 10), \
        f"clients still connected {stopped:.1f} s after the broker stopped"
    # Sent while the broker is down: paho queues them and sends them after it reconnects.
    for seat in (2, 3):
        console.publish(Channel.COMMAND, "action", seat=seat, action="check", amount=None)
    mqtt_broker.start()
    assert engine.wait_connected(15) and console.wait_connected(15)
    console.publish(Channel.COMMAND, "action", seat=4, action="bet", amount=10)
    last = 4
    if mqtt_broker.kind != "mosquitto":
        # amqtt: a message sent before the engine's re-subscription lands is gone; keep sending
        # (as a console would) until one arrives, and check below that the losses are all named.
        deadline = time.monotonic() + 15
        while not inbox.wait(lambda: any(m.seq >= 4 for m in inbox.of(Channel.COMMAND)), 1):
            assert time.monotonic() < deadline, "nothing reached the engine after the broker restart"
            last += 1
            console.publish(Channel.COMMAND, "action", seat=4, action="bet", amount=10)
    assert inbox.wait(lambda: last in {m.seq for m in inbox.of(Channel.COMMAND)}, 15)
    time.sleep(0.3)
    tracker = SourceTracker()
    for m in inbox.of(Channel.COMMAND):
        tracker.observe(m.source, m.session, m.seq)
    seqs = {m.seq for m in inbox.of(Channel.COMMAND)}
    if mqtt_broker.kind == "mosquitto":
        # mosquitto keeps the engine's persistent session across the restart: nothing lost.
        assert seqs == {1, 2, 3, 4}
        assert tracker.outstanding("console-1") == []
    else:
        # amqtt keeps no state across a restart: whatever the console re-sent before the
        # engine re-subscribed is gone, and the tracker names exactly that, for a prompt.
        lost = set(range(1, last + 1)) - seqs
        named = {seq for lo, hi in tracker.outstanding("console-1") for seq in range(lo, hi + 1)}
        assert named == lost
    assert changes[:3] == [True, False, True]
    assert engine.connect_count == 2


def test_a_late_console_sees_the_retained_public_state(mqtt_broker: Any, bus: Any) -> None:
    engine = bus("engine", "engine").start()
    engine.publish(Channel.STATE, "state", state=dict(idle_state("t1").to_json(), hand_id=3, to_act=5))
    assert engine.flush()
    inbox = Inbox()
    console = bus("console", "console-2", on_message=inbox.add)
    console.subscribe(Channel.STATE)
    console.start()
    assert inbox.wait(lambda: bool(inbox.of(Channel.STATE)))
    assert inbox.of(Channel.STATE)[0].body == {"state": dict(idle_state("t1").to_json(), hand_id=3, to_act=5)}


def test_handler_errors_do_not_stop_the_client(mqtt_broker: Any, bus: Any) -> None:
    seen: list[int] = []

    def flaky(msg: Message) -> None:
        seen.append(msg.seq or 0)
        if msg.seq == 1:
            raise RuntimeError("boom")

    engine = bus("engine", "engine", on_message=flaky)
    engine.subscribe(Channel.COMMAND)
    engine.start()
    console = bus("console", "console-1").start()
    for seat in (1, 2):
        console.publish(Channel.COMMAND, "action", seat=seat, action="fold", amount=None)
    assert eventually(lambda: len(seen) >= 2, 10)
    assert seen == [1, 2] and engine.connected


def test_ids_are_checked_before_connecting() -> None:
    with pytest.raises(wire.WireError, match="device id"):
        BusClient(host="127.0.0.1", port=1, username="u", password="p", table=T, device="cam/1",
                  role=Role.VISION, session=1)


def test_round_trip_is_not_held_by_nagle(mqtt_broker: Any, bus: Any) -> None:
    """paho leaves Nagle on; with it every QoS 1 round trip waits ~40 ms for a delayed ACK."""
    inbox = Inbox()
    engine = bus("engine", "engine", on_message=inbox.add)
    engine.subscribe(Channel.COMMAND)
    engine.start()
    console = bus("console", "console-1").start()
    # The engine subscribes when it connects, without waiting for the broker's SUBACK: a message
    # sent before the subscription is in place is not for it.  Send until one comes through.
    deadline = time.monotonic() + 10
    while not inbox.messages and time.monotonic() < deadline:
        console.publish(Channel.COMMAND, "action", seat=1, action="check", amount=None)
        inbox.wait(lambda: bool(inbox.messages), 0.5)
    base = len(inbox.messages)
    assert base
    samples = []
    for i in range(40):
        t0 = time.perf_counter()
        console.publish(Channel.COMMAND, "action", seat=1, action="check", amount=None)
        assert inbox.wait(lambda n=i: len(inbox.messages) > base + n, 5)
        samples.append(time.perf_counter() - t0)
    samples.sort()
    assert samples[len(samples) // 2] < 0.02, f"median {samples[len(samples) // 2] * 1000:.1f} ms"


def test_embedded_broker_asks_the_acl_directly() -> None:
    """amqtt's task-per-plugin dispatch is bypassed for the studtable ACL, with the same verdicts."""
    from engine.broker.amqtt_plugins import StudtableAclPlugin
    from engine.broker.embedded import start_embedded_broker

    broker = start_embedded_broker()
    try:
        inbox = Inbox()
        user, password = broker.login("console", "console-1")
        console = BusClient(host="127.0.0.1", port=broker.port, username=user, password=password, table="t1",
                            device="console-1", role="console", session=1, on_message=inbox.add)
        console.subscribe(Channel.STATE)
        console.start()
        user, password = broker.login("engine")
        engine = BusClient(host="127.0.0.1", port=broker.port, username=user, password=password, table="t1",
                           device="engine", role="engine", session=1).start()
        deadline = time.monotonic() + 10
        while not inbox.messages and time.monotonic() < deadline:
            engine.publish(Channel.STATE, "state", state=idle_state("t1").to_json())
            inbox.wait(lambda: bool(inbox.messages), 0.5)
        assert inbox.messages and inbox.messages[0].channel is Channel.STATE
        acl = broker._broker._studtable_acl
        assert isinstance(acl, StudtableAclPlugin)
        # console-1 logs in as its own user (its own password: BrokerFiles.login(role, device))
        assert ("console-1", "console-1", "studtable/v1/t1/public/state") in {k[:3] for k in acl._verdicts}
        engine.stop()
        console.stop()
    finally:
        broker.stop()


def test_a_publish_from_a_handler_goes_out_before_the_handler_returns(mqtt_broker: Any, bus: Any) -> None:
    """The engine publishes a state inside its message handler and then does more work; the
    state must not wait for that work (paho would write it only after the handler returns)."""
    returned = threading.Event()
    seen: list[bool] = []
    inbox = Inbox()

    def handler(msg: Message) -> None:
        engine.publish(Channel.STATE, "state", state=dict(idle_state("t1").to_json(), x_seat=msg.body["seat"]))
        if msg.body["seat"] == 2:
            time.sleep(1.0)  # the hand log, the next hand, store upkeep...
            returned.set()

    def watch(msg: Message) -> None:
        if msg.body["state"]["x_seat"] == 2:
            seen.append(returned.is_set())
        inbox.add(msg)

    engine = bus("engine", "engine", on_message=handler)
    engine.subscribe(Channel.COMMAND)
    engine.start()
    console = bus("console", "console-1", on_message=watch)
    console.subscribe(Channel.STATE)
    console.start()
    deadline = time.monotonic() + 15
    while not inbox.messages and time.monotonic() < deadline:  # until both subscriptions are in place
        console.publish(Channel.COMMAND, "action", seat=1, action="check", amount=None)
        inbox.wait(lambda: bool(inbox.messages), 1.5)
    assert inbox.messages
    console.publish(Channel.COMMAND, "action", seat=2, action="check", amount=None)
    assert inbox.wait(lambda: bool(seen), 5)
    assert seen == [False]  # it arrived while the handler was still busy
    assert returned.wait(5)


@pytest.mark.parametrize("restart", [False, True], ids=["first-connect", "broker-restart"])
def test_numbered_messages_arrive_in_seq_order_while_another_thread_publishes_through_the_connect(
        mqtt_broker: Any, bus: Any, restart: bool) -> None:
    """paho says "connected" before it resends what it queued; a card published by the serial
    thread in that instant would overtake them, and the engine would prompt for a lost card
    (CI saw it: a bridge restarting with an outbox entry).  Whatever the timing, the engine
    must see one source's messages in seq order, none missing."""
    inbox = Inbox()
    engine = bus("engine", "engine", persistent=True, on_message=inbox.add)
    engine.subscribe(Channel.SHOE)
    engine.start()
    shoe = bus("bridge", "shoe-1", persistent=True)
    stop = threading.Event()

    def serial_thread() -> None:
        counter = 0
        while not stop.is_set():
            counter += 1
            shoe.publish(Channel.SHOE, "shoe_loaded", deck=f"d{counter}")
            time.sleep(0.0005)

    runner = threading.Thread(target=serial_thread, daemon=True)
    runner.start()
    try:
        time.sleep(0.05)  # some held before the first connect
        shoe.start(wait=10)
        if restart:
            time.sleep(0.1)
            mqtt_broker.stop()
            assert eventually(lambda: not shoe.connected, 10)
            time.sleep(0.05)
            mqtt_broker.start()
            assert shoe.wait_connected(15) and engine.wait_connected(15)
        time.sleep(0.3)
    finally:
        stop.set()
        runner.join(5)
    sent = shoe.last_seq
    assert shoe.flush(10)
    if mqtt_broker.kind != "mosquitto" and restart:
        # amqtt keeps no session across a restart (see above): only the order is promised.
        assert inbox.wait(lambda: any(m.seq == sent for m in inbox.of(Channel.SHOE)), 15)
    else:
        assert inbox.wait(lambda: len({m.seq for m in inbox.of(Channel.SHOE)}) == sent, 15), \
            (sent, len(inbox.of(Channel.SHOE)))
    seqs = [m.seq for m in inbox.of(Channel.SHOE) if m.session == 1]
    firsts = list(dict.fromkeys(seqs))  # a redelivery after the restart may repeat one
    assert firsts == sorted(firsts), [s for a, s in itertools.pairwise(firsts) if s < a][:5]
