"""`studtable setup` keeps each secret with the one service that needs it (issue 19 item 4 and the
security review's findings 7 and 8): the store in a folder only the engine's own account can open,
one broker login per service handed to its unit alone by systemd (LoadCredential=), and
credentials.json (every password) left to root.  The logins are checked against a real mosquitto
started from the generated configuration."""

from __future__ import annotations

import getpass
import json
import os
import pwd
import shutil
import subprocess
import sys
import tempfile
import tomllib
from pathlib import Path
from typing import Any

import pytest

from engine.broker.config import load_files
from engine.tableconfig import load
from engine.tablesetup import login_file, service_devices
from tests.support.fixtures import MosquittoBroker, mosquitto_executable

CLI = [sys.executable, "-m", "engine.cli"]


def _setup(tmp_path: Path, *extra: str) -> tuple[Path, Path, subprocess.CompletedProcess[str]]:
    etc, var = tmp_path / "etc", tmp_path / "var"
    done = subprocess.run([*CLI, "setup", "--out", str(etc), "--table", "t1", "--state-dir", str(var),
                           "--broker-port", "18999", "--shoe-port", str(tmp_path / "ttyShoe"),
                           "--camera", "0", "--units-dir", str(tmp_path / "units"), *extra],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return etc, var, done


def _unit(tmp_path: Path, name: str) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for line in (tmp_path / "units" / name).read_text().splitlines():
        if "=" in line:
            key, value = line.split("=", 1)
            out.setdefault(key, []).append(value)
    return out


def test_each_unit_gets_its_own_login_and_the_engine_its_own_account(tmp_path: Path) -> None:
    etc, _var, done = _setup(tmp_path)
    cfg = load(etc / "table.toml")
    services = dict((device, role) for role, device in service_devices(cfg))
    assert set(services) == {"engine", "shoe-1", "cam-1", "console-1", "monitor-1"}
    units = {"engine": "studtable-engine.service", "shoe-1": "studtable-bridge.service",
             "cam-1": "studtable-vision-cam-1.service", "console-1": "studtable-console.service",
             "monitor-1": "studtable-monitor.service"}
    files = load_files(etc / "broker")
    passwords = set()
    for device, name in units.items():
        unit = _unit(tmp_path, name)
        assert unit["LoadCredential"] == [f"studtable-login:{login_file(cfg, device)}"], name
        login = json.loads(login_file(cfg, device).read_text())
        assert login["username"] == device and login["device"] == device
        assert (login["username"], login["password"]) == files.login(services[device], device)
        assert login_file(cfg, device).stat().st_mode & 0o777 == 0o600
        passwords.add(login["password"])
        assert unit["User"] == ["studtable-engine" if device == "engine" else "studtable"], name
    assert len(passwords) == len(units)  # no two services share a password
    # The store has a folder of its own; nothing points a screen at it.
    store = Path(tomllib.loads((etc / "table.toml").read_text())["store"]["url"])
    assert store.parent.name == "store" and store.parent.stat().st_mode & 0o777 == 0o700
    for device in ("console-1", "monitor-1", "shoe-1", "cam-1"):
        assert str(store) not in (tmp_path / "units" / units[device]).read_text()
    assert "useradd --system --no-create-home studtable-engine" in done.stdout


@pytest.mark.skipif(os.geteuid() != 0, reason="giving files to other accounts needs root")
def test_as_root_only_the_engines_account_can_open_the_store_and_credentials_stay_roots() -> None:
    # Two real accounts of this machine stand in for studtable-engine and studtable; the folder is
    # one they may walk into (pytest's own is root's alone).
    engine_user, services_user = "daemon", "nobody"
    tmp_path = Path(tempfile.mkdtemp(prefix="studtable-setup-"))
    os.chmod(tmp_path, 0o755)
    try:
        _as_root(tmp_path, engine_user, services_user)
    finally:
        shutil.rmtree(tmp_path, ignore_errors=True)


def _as_root(tmp_path: Path, engine_user: str, services_user: str) -> None:
    etc, var, _ = _setup(tmp_path, "--engine-user", engine_user, "--user", services_user)
    store = Path(tomllib.loads((etc / "table.toml").read_text())["store"]["url"])
    (store.parent / store.name).write_bytes(b"SQLite format 3\0")  # what the engine will create, 0600
    os.chown(store, pwd.getpwnam(engine_user).pw_uid, pwd.getpwnam(engine_user).pw_gid)
    os.chmod(store, 0o600)
    assert store.parent.stat().st_uid == pwd.getpwnam(engine_user).pw_uid
    assert var.stat().st_uid == pwd.getpwnam(services_user).pw_uid
    credentials = etc / "broker" / "credentials.json"
    assert credentials.stat().st_uid == 0 and credentials.stat().st_mode & 0o777 == 0o600

    def read_as(user: str, path: Path) -> int:
        entry = pwd.getpwnam(user)

        def drop() -> None:
            os.setgroups([])
            os.setgid(entry.pw_gid)
            os.setuid(entry.pw_uid)

        return subprocess.run(["cat", str(path)], preexec_fn=drop, capture_output=True).returncode

    assert read_as(services_user, store) != 0, "a screen's account read the store"
    assert read_as(services_user, credentials) != 0, "a screen's account read every password"
    assert read_as(services_user, etc / "broker" / "logins" / "engine.json") != 0
    assert read_as(engine_user, store) == 0, "the engine's account cannot read its own store"
    # Review F5: a table set up before the store had its own folder keeps it in STATE; running setup
    # again must not give that store to the screens' account (the engine then could not write it).
    text = (etc / "table.toml").read_text().replace(str(store), str(var / "t1.sqlite"))
    (etc / "table.toml").write_text(text)
    old = var / "t1.sqlite"
    old.write_bytes(b"SQLite format 3\0")
    os.chown(old, pwd.getpwnam(engine_user).pw_uid, pwd.getpwnam(engine_user).pw_gid)
    done = subprocess.run([*CLI, "setup", "--out", str(etc), "--units-dir", str(tmp_path / "units")],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "move it into a folder of its own" in done.stdout
    assert old.stat().st_uid == pwd.getpwnam(engine_user).pw_uid, "setup gave the old store to the screens"


def test_each_login_logs_in_as_its_device_only(tmp_path: Path) -> None:
    exe = mosquitto_executable()
    if exe is None:
        pytest.skip("mosquitto is not installed")
    etc, _var, _ = _setup(tmp_path)
    import paho.mqtt.client as mqtt
    from paho.mqtt.enums import CallbackAPIVersion

    from engine.broker.config import write_config
    from tests.support.fixtures import free_port

    port = free_port()
    run_as = getpass.getuser() if os.geteuid() == 0 else None  # mosquitto as root would drop to its own account
    files = write_config(etc / "broker", port=port, table="t1", data_dir=tmp_path / "mq", run_as=run_as)
    assert files.devices == load_files(etc / "broker").devices  # re-writing kept every password
    broker = MosquittoBroker(exe, files).start()
    try:
        def logs_in(username: str, password: str) -> bool:
            c = mqtt.Client(CallbackAPIVersion.VERSION2, client_id=username, protocol=mqtt.MQTTv311)
            c.username_pw_set(username, password)
            try:
                return bool(c.connect("127.0.0.1", port, keepalive=5) == 0 and _connack(c))
            finally:
                c.disconnect()

        console: Any = json.loads((etc / "broker" / "logins" / "console-1.json").read_text())
        assert logs_in(console["username"], console["password"])
        assert not logs_in("engine", console["password"])
        assert not logs_in("monitor-1", console["password"])
    finally:
        broker.stop()


def _connack(client: Any) -> bool:
    import time

    ok: list[bool] = []
    client.on_connect = lambda c, u, f, rc, p: ok.append(not rc.is_failure)
    deadline = time.monotonic() + 5
    while not ok and time.monotonic() < deadline:
        client.loop(0.1)
    return bool(ok and ok[0])
