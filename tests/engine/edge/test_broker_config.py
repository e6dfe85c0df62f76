"""Broker configuration: generated files, the rules they encode, and real brokers accepting them."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from engine.broker import acl as aclmod
from engine.broker.acl import broker_users, build_acl, filter_covers, parse_acl, render_acl, topic_matches
from engine.broker.config import MAX_QUEUED_MESSAGES, load_files, write_config
from engine.broker.passwd import hash_password, parse_password_file, verify_password
from engine.wire import CHANNELS, Channel, Role, topic
from tests.support.mqtt import TestClient

T = "t1"


def test_topic_matching_follows_mqtt() -> None:
    assert topic_matches("a/+/c", "a/b/c")
    assert topic_matches("a/#", "a")
    assert topic_matches("a/#", "a/b/c")
    assert not topic_matches("a/+", "a/b/c")
    assert not topic_matches("#", "$SYS/x")


@pytest.mark.parametrize(("allowed", "wanted", "covered"), [
    ("studtable/v1/+/public/state", "studtable/v1/t1/public/state", True),
    ("studtable/v1/+/public/state", "studtable/v1/+/public/state", True),
    ("studtable/v1/+/public/state", "#", False),
    ("studtable/v1/+/public/state", "studtable/v1/+/+/state", False),
    ("studtable/v1/+/public/state", "studtable/v1/t1/public/#", False),
    ("studtable/v1/+/avail/+", "studtable/v1/t1/avail/#", False),
    ("studtable/v1/+/#", "studtable/v1/t1/sensor/#", True),
    ("studtable/v1/+/#", "studtable/v1/#", False),
])
def test_subscription_is_granted_only_when_every_match_is_readable(allowed: str, wanted: str,
                                                                   covered: bool) -> None:
    assert filter_covers(allowed, wanted) is covered


def test_rules_follow_the_channel_table() -> None:
    acl = build_acl()
    for channel, spec in CHANNELS.items():
        for role in Role:
            device = f"{role}-1"
            name = topic(T, channel, device if spec.per_device else None)
            may_read = acl.may_receive(str(role), device, name)
            may_write = acl.may_publish(str(role), device, name)
            assert may_read == (role in spec.readers or role is Role.ENGINE), (role, channel)
            assert may_write == (role in spec.writers or role is Role.ENGINE), (role, channel)


def test_devices_may_only_announce_themselves() -> None:
    acl = build_acl()
    assert acl.may_publish("vision", "cam-1", topic(T, Channel.AVAIL, "cam-1"))
    assert not acl.may_publish("vision", "cam-1", topic(T, Channel.AVAIL, "shoe-1"))
    assert not acl.may_publish("console", "console-1", topic(T, Channel.BIRTH, "shoe-1"))
    assert not acl.may_publish("console", "a/b", "studtable/v1/t1/avail/a/b")


def test_nobody_but_engine_and_recorder_reads_a_secret() -> None:
    acl = build_acl()
    for channel in (Channel.SHOE, Channel.HISTORY):
        name = topic(T, channel)
        readers = {r for r in Role if acl.may_receive(str(r), "x", name)}
        assert readers <= {Role.ENGINE, Role.RECORDER}
        for role in (Role.CONSOLE, Role.MONITOR):
            assert not acl.may_subscribe(str(role), "x", "#")
            assert not acl.may_subscribe(str(role), "x", name)


def test_acl_file_round_trips_and_pins_a_table() -> None:
    acl = build_acl("t7")
    text = render_acl(acl)
    assert "user console\n" in text and "topic read studtable/v1/t7/public/state" in text
    assert "pattern write studtable/v1/t7/avail/%c" in text
    assert "user console-1\n" in text  # a device's own user: mosquitto binds its client id to it
    assert parse_acl(text) == acl
    assert not acl.may_receive("monitor", "m", "studtable/v1/t8/public/state")
    with pytest.raises(aclmod.AclSyntaxError, match="line 1"):
        parse_acl("topic deny x")


def test_password_hashes_are_mosquitto_format() -> None:
    hashed = hash_password("s3cret", salt=b"0123456789ab")
    assert hashed.startswith("$7$1000$") and verify_password("s3cret", hashed)
    assert not verify_password("S3cret", hashed)
    assert not verify_password("s3cret", "$6$abc$def")
    assert not verify_password("s3cret", "$7$x$y$z")


def test_we_verify_what_mosquitto_passwd_writes(tmp_path: Path) -> None:
    tool = shutil.which("mosquitto_passwd")
    if tool is None:
        pytest.skip("mosquitto_passwd not installed")
    pw = tmp_path / "pw"
    subprocess.run([tool, "-c", "-b", str(pw), "alice", "open sesame"], check=True)
    hashed = parse_password_file(pw.read_text())["alice"]
    assert verify_password("open sesame", hashed) and not verify_password("open sesame!", hashed)


def test_generated_files(tmp_path: Path) -> None:
    files = write_config(tmp_path / "cfg", port=18883, table="t1")
    conf = files.mosquitto_conf.read_text()
    for line in ("listener 18883 127.0.0.1", "allow_anonymous false", f"password_file {files.password_file}",
                 f"acl_file {files.acl_file}", "set_tcp_nodelay true",
                 f"max_queued_messages {MAX_QUEUED_MESSAGES}", "persistence true"):
        assert line in conf.splitlines(), line
    assert "# mosquitto's default (1000) silently drops" in conf
    users = parse_password_file(files.password_file.read_text())
    assert set(users) == set(broker_users())
    assert {str(r) for r in Role} <= set(users) and {"shoe-1", "cam1", "console-1", "monitor-2"} <= set(users)
    for user, role in broker_users().items():
        name, password = files.login(role, user)
        assert name == user and verify_password(password, users[user]), user
    # Every device user has a password of its own: a console's login is no other console's.
    device_passwords = [files.login(role, user)[1] for user, role in broker_users().items()]
    assert len(set(device_passwords)) == len(device_passwords)
    assert not verify_password(files.login("console", "console-1")[1], users["console-2"])
    assert not verify_password(files.login("console")[1], users["console-1"])
    assert "use_username_as_clientid true" in conf.splitlines()
    assert files.credentials_file.stat().st_mode & 0o777 == 0o600
    again = write_config(tmp_path / "cfg", port=18883, table="t1")
    # re-generating never locks services out
    assert again.credentials == files.credentials and again.devices == files.devices
    assert load_files(tmp_path / "cfg").credentials == files.credentials
    assert load_files(tmp_path / "cfg").devices == files.devices


def test_cli_writes_the_config(tmp_path: Path) -> None:
    out = tmp_path / "cli"
    done = subprocess.run([sys.executable, "-m", "engine.broker", "config", "--out", str(out), "--port", "1999",
                           "--table", "t3"], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert "listener 1999 127.0.0.1" in (out / "mosquitto.conf").read_text()
    assert "studtable/v1/t3/public/state" in (out / "acl").read_text()
    assert set(json.loads((out / "credentials.json").read_text())) == {str(r) for r in Role} | {"devices"}


def test_every_role_logs_in_and_strangers_do_not(mqtt_broker: Any) -> None:
    clients = [TestClient(mqtt_broker, str(role)) for role in Role]
    try:
        assert all(c.connected() for c in clients)
    finally:
        for c in clients:
            c.close()
    wrong = TestClient(mqtt_broker, "console", password="not-the-password")
    try:
        assert not wrong.connected(3)
    finally:
        wrong.close()


def test_generated_mosquitto_refuses_anonymous_clients(mosquitto_broker: Any) -> None:
    """The generated config starts a mosquitto that refuses anonymous clients."""
    import paho.mqtt.client as mqtt
    from paho.mqtt.enums import CallbackAPIVersion

    anon = mqtt.Client(CallbackAPIVersion.VERSION2, client_id="anon", protocol=mqtt.MQTTv311)
    result: list[Any] = []
    anon.on_connect = lambda c, u, f, rc, p: result.append(rc)
    anon.connect(mosquitto_broker.host, mosquitto_broker.port)
    anon.loop_start()
    try:
        import time
        deadline = time.monotonic() + 5
        while not result and time.monotonic() < deadline:
            time.sleep(0.02)
        assert result and result[0].is_failure
    finally:
        anon.loop_stop()


def test_a_single_table_config_lets_a_console_command_that_table_only(tmp_path: Path) -> None:
    """Issue 19 item 6: the generated rules name the table; a console of t1 cannot command t2 on
    the same broker (real mosquitto from the files the CLI wrote)."""
    from tests.support.fixtures import MosquittoBroker, free_port, mosquitto_executable

    cli = [sys.executable, "-m", "engine.cli", "broker", "config", "--out", str(tmp_path / "b")]
    refused = subprocess.run(cli, capture_output=True, text=True, timeout=60)
    assert refused.returncode == 2 and "--table" in refused.stderr and len(refused.stderr.splitlines()) == 1
    assert "Traceback" not in refused.stderr
    import getpass

    # as the fixtures do: pytest's tmp dir (0700 as root) is closed to mosquitto's own account
    done = subprocess.run([*cli, "--table", "t1", "--port", str(free_port()), "--run-as", getpass.getuser()],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    exe = mosquitto_executable()
    if exe is None:
        pytest.skip("mosquitto is not installed")
    broker = MosquittoBroker(exe, load_files(tmp_path / "b")).start()
    try:
        engine = TestClient(broker, "engine", "engine")
        console = TestClient(broker, "console", "console-1")
        assert engine.connected() and console.connected()
        engine.subscribe(["studtable/v1/+/console/command"])
        for t in ("t1", "t2"):
            console.publish(topic(t, Channel.COMMAND), f"from-{t}".encode())
        assert engine.wait(lambda: any(m.payload == b"from-t1" for m in engine.received))
        engine.wait(lambda: False, 0.5)
        assert [m.topic for m in engine.received] == ["studtable/v1/t1/console/command"]
        engine.close()
        console.close()
    finally:
        broker.stop()
