"""Issue 19 item 3: a client id cannot be taken over, on either broker.

Three attacks, each played with real clients against a real mosquitto (started from the
generated config) and the real embedded amqtt broker:

1. another role (console) connects with the client id ``engine`` or ``shoe-1``, with its own
   good password: the real engine/shoe must stay connected and keep receiving;
2. a connect with the engine's client id and a wrong password, or none, must not delete the
   engine's session (amqtt 0.12 did it before checking the password);
3. a console reconnecting with the engine's id and a persistent session must not receive
   what the broker queued for the engine (a live down card).
"""

from __future__ import annotations

import contextlib
import threading
import time
import uuid
from collections.abc import Iterator
from typing import Any

import paho.mqtt.client as mqtt
import pytest
from paho.mqtt.enums import CallbackAPIVersion

from engine import wire
from engine.bus import BusClient
from engine.wire import Channel, Message

T = "t1"


class Inbox:
    def __init__(self) -> None:
        self.messages: list[Message] = []
        self.cond = threading.Condition()

    def add(self, msg: Message) -> None:
        with self.cond:
            self.messages.append(msg)
            self.cond.notify_all()

    def cards(self) -> list[str]:
        with self.cond:
            return [str(m.body.get("card")) for m in self.messages if m.kind == "card_drawn"]

    def wait_card(self, card: str, timeout: float = 10.0) -> bool:
        with self.cond:
            return self.cond.wait_for(lambda: card in [str(m.body.get("card")) for m in self.messages
                                                       if m.kind == "card_drawn"], timeout)


class Raw:
    """A bare paho client: any user, password, client id and session flag an attacker likes."""

    def __init__(self, broker: Any, username: str | None, password: str | None, client_id: str,
                 clean: bool = True) -> None:
        self.received: list[tuple[str, bytes]] = []
        self.rc: Any = None
        self.disconnects = 0
        self._event = threading.Event()
        self.client = mqtt.Client(CallbackAPIVersion.VERSION2, client_id=client_id, protocol=mqtt.MQTTv311,
                                  clean_session=clean)
        if username is not None:
            self.client.username_pw_set(username, password)
        self.client.on_connect = self._on_connect
        self.client.on_message = lambda c, u, m: self.received.append((m.topic, bytes(m.payload)))
        self.client.on_disconnect = self._on_disconnect
        self.client.reconnect_delay_set(30, 30)  # one try: an attacker reconnecting in a loop is case 1 again
        self.client.connect_async(broker.host, broker.port, keepalive=5)
        self.client.loop_start()

    def _on_connect(self, client: Any, userdata: Any, flags: Any, rc: Any, props: Any) -> None:
        self.rc = rc
        self._event.set()

    def _on_disconnect(self, *args: Any) -> None:
        self.disconnects += 1
        self._event.set()

    def answered(self, timeout: float = 5.0) -> bool:
        return self._event.wait(timeout)

    def accepted(self) -> bool:
        return self.rc is not None and not self.rc.is_failure

    def close(self) -> None:
        with contextlib.suppress(Exception):
            self.client.disconnect()
        self.client.loop_stop()


@pytest.fixture
def made() -> Iterator[list[Any]]:
    things: list[Any] = []
    yield things
    for thing in things:
        with contextlib.suppress(Exception):
            if isinstance(thing, BusClient):
                thing.stop(timeout=1)
            else:
                thing.close()


def bus(broker: Any, role: str, device: str, made: list[Any], **kw: Any) -> BusClient:
    user, pw = broker.login(role, device)
    client = BusClient(host=broker.host, port=broker.port, username=user, password=pw, table=T, device=device,
                       role=role, session=int(time.time() * 1000), **kw)
    made.append(client)
    return client


def card(shoe: BusClient, name: str) -> None:
    shoe.publish(Channel.SHOE, "card_drawn", counter=shoe.last_seq + 1, uid="04a1b2c3d4e5f6", card=name,
                 deck="d1", quality=9, status="ok")
    assert shoe.flush(5)


def engine_and_shoe(broker: Any, made: list[Any]) -> tuple[BusClient, Inbox, BusClient]:
    inbox = Inbox()
    engine = bus(broker, "engine", "engine", made, persistent=True, on_message=inbox.add)
    engine.subscribe(Channel.SHOE)
    engine.start()
    shoe = bus(broker, "bridge", "shoe-1", made).start()
    card(shoe, "2c")
    assert inbox.wait_card("2c"), "control: the engine hears the shoe"
    return engine, inbox, shoe


@pytest.mark.parametrize("victim", ["engine", "shoe-1"])
def test_another_role_cannot_throw_the_engine_or_the_shoe_off(mqtt_broker: Any, made: list[Any],
                                                              victim: str) -> None:
    engine, inbox, shoe = engine_and_shoe(mqtt_broker, made)
    user, pw = mqtt_broker.login("console")
    attacker = Raw(mqtt_broker, user, pw, victim)
    made.append(attacker)
    attacker.answered()
    time.sleep(1.0)
    # mosquitto accepts the console under its own name (use_username_as_clientid); amqtt refuses it.
    assert (engine.connect_count, shoe.connect_count) == (1, 1), (
        f"{mqtt_broker.kind}: a console connecting as {victim!r} threw the real one off")
    assert engine.connected and shoe.connected
    card(shoe, "3d")
    assert inbox.wait_card("3d"), f"{mqtt_broker.kind}: the engine went deaf after the attack"


@pytest.mark.parametrize("password", ["wrong", None])
def test_a_failed_login_with_the_engines_id_leaves_its_session_alone(mqtt_broker: Any, made: list[Any],
                                                                     password: str | None) -> None:
    engine, inbox, shoe = engine_and_shoe(mqtt_broker, made)
    user = None if password is None else "engine"
    attacker = Raw(mqtt_broker, user, password, "engine")
    made.append(attacker)
    assert attacker.answered()
    assert not attacker.accepted()
    time.sleep(0.5)
    card(shoe, "4h")
    assert inbox.wait_card("4h"), f"{mqtt_broker.kind}: a refused login deleted the engine's session"
    assert engine.connect_count == 1


def test_a_console_cannot_inherit_the_engines_queued_hole_cards(mqtt_broker: Any, made: list[Any]) -> None:
    engine, _inbox, shoe = engine_and_shoe(mqtt_broker, made)
    # The engine goes away without a clean disconnect: its persistent session queues for it.
    engine._client.loop_stop()
    sock = engine._client.socket()
    assert sock is not None
    sock.close()
    time.sleep(1.0)
    secret = "Qs"
    card(shoe, secret)
    user, pw = mqtt_broker.login("console")
    thief = Raw(mqtt_broker, user, pw, "engine", clean=False)
    made.append(thief)
    thief.answered()
    time.sleep(1.5)
    leaked = [(t, p) for t, p in thief.received if secret.encode() in p or t.endswith("sensor/shoe")]
    assert leaked == [], f"{mqtt_broker.kind}: a console inherited the engine's queue: {leaked}"
    thief.close()
    # The real engine comes back and gets its card.
    again = Inbox()
    back = bus(mqtt_broker, "engine", "engine", made, persistent=True, on_message=again.add)
    back.subscribe(Channel.SHOE)
    back.start()
    assert again.wait_card(secret), f"{mqtt_broker.kind}: the engine's queued card is gone"


def test_client_ids_are_bound_to_roles() -> None:
    from engine.broker.acl import client_id_allowed, device_role
    from engine.wire import Role

    assert device_role("shoe-1") is Role.BRIDGE and device_role("cam1") is Role.VISION
    assert device_role("engine") is Role.ENGINE and device_role("enginex") is None
    # The role's own login may use an ad-hoc id of its role, never one that has a login of its own.
    assert client_id_allowed(Role.CONSOLE, "console", "console-tablet")
    assert not client_id_allowed(Role.CONSOLE, "console", "console-sim")
    assert not client_id_allowed(Role.CONSOLE, "console-1", "console-2")
    assert client_id_allowed(Role.CONSOLE, "console-1", "console-1")
    assert not client_id_allowed(Role.CONSOLE, "console", "engine")
    assert not client_id_allowed(Role.CONSOLE, "console", "shoe-1")
    assert not client_id_allowed(Role.MONITOR, "monitor", f"console-{uuid.uuid4().hex[:4]}")
    assert wire.topic(T, Channel.AVAIL, "shoe-1").endswith("avail/shoe-1")


def test_one_console_can_neither_log_in_as_another_nor_take_its_client_id(mqtt_broker: Any,
                                                                           made: list[Any]) -> None:
    """Security review finding 8: the devices of one role shared the role's password, so any
    console could log in as ``console-2`` and throw the real one off.  Each device user now has a
    password of its own, and a device user may use only its own client id."""
    victim = bus(mqtt_broker, "console", "console-2", made).start()
    assert victim.connect_count == 1
    user, pw = mqtt_broker.login("console", "console-1")
    assert user == "console-1"
    attempts = [
        Raw(mqtt_broker, "console-2", pw, "console-2"),  # console-1's password as console-2's
        Raw(mqtt_broker, user, pw, "console-2"),  # its own login, console-2's client id
    ]
    role_user, role_pw = mqtt_broker.login("console")
    attempts.append(Raw(mqtt_broker, role_user, role_pw, "console-2"))  # the role's login, that id
    made.extend(attempts)
    for a in attempts:
        assert a.answered()
    assert not attempts[0].accepted(), "console-1's password let it log in as console-2"
    time.sleep(1.0)
    assert victim.connected and victim.connect_count == 1, (
        f"{mqtt_broker.kind}: another console's login threw console-2 off")
    # Its own login still works: the control that the attempts above were refused for the right reason.
    own = Raw(mqtt_broker, user, pw, "console-1")
    made.append(own)
    assert own.answered() and own.accepted()
