"""Shared pytest fixtures: real brokers and a real PostgreSQL, for every area's tests.

Fixtures
--------
``mosquitto_broker``  a mosquitto process on a free loopback port, started from the
                      configuration ``studtable broker config`` generates (users, ACL).
``amqtt_broker``      the embedded amqtt broker on a free loopback port, same users and rules.
``mqtt_broker``       parametrized over both (the test runs once per broker).
``pg_dsn``            a ``postgresql://`` URL of a fresh, empty database, dropped afterwards:
                      on the local server if one answers, else in a throwaway cluster made
                      with initdb/pg_ctl.

Every broker fixture yields an object with ``kind``, ``host``, ``port``, ``files``
(``engine.broker.BrokerFiles``), ``login(role) -> (username, password)``, ``stop()``,
``start()``, ``restart()``; mosquitto also has ``kill()`` (SIGKILL) and ``log_text()``.

A service that is not there skips the test with the reason, except when
``STUDTABLE_REQUIRE_SERVICES=1`` (CI sets it): then it fails, so CI can never go
green by skipping.

Use them in an area's ``conftest.py`` with ``from tests.support.fixtures import *``,
or for the whole suite with ``pytest_plugins = ["tests.support.fixtures"]`` in
``tests/conftest.py``.
"""

from __future__ import annotations

import getpass
import glob
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any, NoReturn

import pytest

from engine.broker.config import BrokerFiles, write_config
from engine.broker.embedded import RestartableBroker
from engine.wire import Role

__all__ = ["amqtt_broker", "mosquitto_broker", "mqtt_broker", "pg_dsn", "pg_server", "require_service"]

REQUIRE_SERVICES = os.environ.get("STUDTABLE_REQUIRE_SERVICES") == "1"


def require_service(reason: str) -> NoReturn:
    """Skip for a missing service, or fail when CI says services are required."""
    if REQUIRE_SERVICES:
        pytest.fail(f"{reason} (STUDTABLE_REQUIRE_SERVICES=1, so a missing service is a failure)", pytrace=False)
    pytest.skip(reason)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def _wait_port(port: int, alive: Any, timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if not alive():
            return False
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                return True
        except OSError:
            time.sleep(0.02)
    return False


# --------------------------------------------------------------------------- mosquitto


def mosquitto_executable() -> str | None:
    found = shutil.which("mosquitto")
    if found:
        return found
    for candidate in ("/usr/sbin/mosquitto", "/usr/local/sbin/mosquitto"):
        if os.access(candidate, os.X_OK):
            return candidate
    return None


class MosquittoBroker:
    """A mosquitto process run from a generated configuration directory."""

    kind = "mosquitto"

    def __init__(self, executable: str, files: BrokerFiles) -> None:
        self.executable = executable
        self.files = files
        self.host = files.host
        self.port = files.port
        self.log_path = files.directory / "mosquitto.log"
        self.proc: subprocess.Popen[bytes] | None = None

    def login(self, role: Role | str, device: str | None = None) -> tuple[str, str]:
        return self.files.login(role, device)

    def log_text(self) -> str:
        return self.log_path.read_text("utf-8", "replace") if self.log_path.exists() else ""

    def start(self, timeout: float = 10.0) -> MosquittoBroker:
        log = open(self.log_path, "ab")  # noqa: SIM115 - the process owns it
        self.proc = subprocess.Popen([self.executable, "-c", str(self.files.mosquitto_conf)],
                                     stdout=log, stderr=subprocess.STDOUT)
        log.close()
        proc = self.proc
        if not _wait_port(self.port, lambda: proc.poll() is None, timeout):
            self.kill()
            raise RuntimeError(f"mosquitto did not start on port {self.port}:\n{self.log_text()[-2000:]}")
        return self

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.proc = None

    def kill(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        self.proc = None

    def restart(self) -> MosquittoBroker:
        self.stop()
        return self.start()


def make_mosquitto(directory: Path) -> MosquittoBroker:
    exe = mosquitto_executable()
    if exe is None:
        require_service("mosquitto is not installed (apt-get install mosquitto)")
    run_as = getpass.getuser() if os.geteuid() == 0 else None
    last: Exception | None = None
    for _ in range(3):
        files = write_config(directory, port=free_port(), run_as=run_as)
        broker = MosquittoBroker(exe, files)
        try:
            return broker.start()
        except RuntimeError as exc:  # most likely the port was taken between probe and bind
            last = exc
    raise RuntimeError(f"could not start mosquitto: {last}")


@pytest.fixture
def mosquitto_broker(tmp_path: Path) -> Iterator[MosquittoBroker]:
    """A real mosquitto on a free loopback port with the project's generated config."""
    broker = make_mosquitto(tmp_path / "mosquitto")
    try:
        yield broker
    finally:
        broker.stop()


# --------------------------------------------------------------------------- amqtt


# The embedded broker on its thread; restartable on the same port (state is not kept).
AmqttBroker = RestartableBroker


@pytest.fixture
def amqtt_broker(tmp_path: Path) -> Iterator[AmqttBroker]:
    """The embedded amqtt broker on a free loopback port, with the project's users and rules."""
    try:
        import amqtt  # noqa: F401
    except ImportError:
        require_service("amqtt is not installed (pip install 'studtable[bus]')")
    broker = AmqttBroker(write_config(tmp_path / "amqtt", port=free_port())).start()
    try:
        yield broker
    finally:
        broker.stop()


@pytest.fixture(params=["mosquitto", "amqtt"])
def mqtt_broker(request: pytest.FixtureRequest) -> Any:
    """Each broker studtable supports, in turn."""
    return request.getfixturevalue(f"{request.param}_broker")


# --------------------------------------------------------------------------- PostgreSQL


def _try_server(conninfo: str) -> str | None:
    """Return ``conninfo`` if we can connect and create databases there."""
    import psycopg

    try:
        with psycopg.connect(conninfo, autocommit=True, connect_timeout=3) as conn:
            row = conn.execute("SELECT rolcreatedb OR rolsuper FROM pg_roles WHERE rolname = current_user").fetchone()
            return conninfo if row and row[0] else None
    except psycopg.Error:
        return None


def _pg_binary(name: str) -> str | None:
    found = shutil.which(name)
    if found:
        return found
    versions = sorted(glob.glob(f"/usr/lib/postgresql/*/bin/{name}"))
    return versions[-1] if versions else None


class _Cluster:
    """A throwaway PostgreSQL cluster (initdb + pg_ctl), as a non-root user."""

    def __init__(self, base: Path) -> None:
        initdb, pg_ctl = _pg_binary("initdb"), _pg_binary("pg_ctl")
        if not initdb or not pg_ctl:
            raise FileNotFoundError("initdb/pg_ctl not found")
        self.pg_ctl = pg_ctl
        self.prefix: list[str] = []
        if os.geteuid() == 0:  # PostgreSQL refuses to run as root
            runuser = shutil.which("runuser")
            if not runuser:
                raise PermissionError("running as root and runuser is missing")
            self.prefix = [runuser, "-u", "postgres", "--"]
        # Not under pytest's tmp dir: as root that is mode 0700 and the postgres user cannot enter it.
        self.base = base
        self.data = base / "data"
        self.sock = base / "sock"
        self.sock.mkdir(exist_ok=True)
        os.chmod(self.sock, 0o777)
        self.port = free_port()
        self.log = base / "pg.log"
        self._run([initdb, "-D", str(self.data), "-U", "postgres", "--auth=trust", "-E", "UTF8"])
        self._run([pg_ctl, "-D", str(self.data), "-l", str(self.log), "-w", "-t", "30", "start", "-o",
                   f"-p {self.port} -k {self.sock} -c listen_addresses=127.0.0.1 -c fsync=off"])
        self.conninfo = f"host=127.0.0.1 port={self.port} user=postgres dbname=postgres"

    def _run(self, cmd: list[str]) -> None:
        done = subprocess.run([*self.prefix, *cmd], capture_output=True, text=True, timeout=120)
        if done.returncode != 0:
            raise OSError(f"{Path(cmd[0]).name} failed: {(done.stderr or done.stdout).strip()[-500:]}")

    def stop(self) -> None:
        subprocess.run([*self.prefix, self.pg_ctl, "-D", str(self.data), "-m", "immediate", "stop"],
                       capture_output=True, timeout=60)
        shutil.rmtree(self.base, ignore_errors=True)


def find_or_make_pg_server() -> tuple[str, _Cluster | None]:
    """A conninfo for a server where we may create databases: the local one, else a fresh cluster."""
    candidates = [os.environ.get("STUDTABLE_PG_DSN", "")] if os.environ.get("STUDTABLE_PG_DSN") else []
    candidates += [
        "host=127.0.0.1 port=5432 user=postgres dbname=postgres",
        f"host=127.0.0.1 port=5432 user={getpass.getuser()} dbname=postgres",
        "host=127.0.0.1 port=5432 user=postgres dbname=test",
    ]
    if os.environ.get("STUDTABLE_PG_NO_LOCAL") != "1":
        for conninfo in candidates:
            if _try_server(conninfo):
                return conninfo, None
    base = Path(tempfile.mkdtemp(prefix="studtable-pg-"))
    os.chmod(base, 0o777)
    cluster = _Cluster(base)
    return cluster.conninfo, cluster


@pytest.fixture(scope="session")
def pg_server() -> Iterator[str]:
    """Conninfo of a PostgreSQL server on which the tests may create databases."""
    try:
        import psycopg  # noqa: F401
    except ImportError:
        require_service("psycopg is not installed (pip install 'studtable[postgres]')")
    try:
        conninfo, cluster = find_or_make_pg_server()
    except (OSError, subprocess.SubprocessError) as exc:
        require_service(f"no PostgreSQL server answers on 127.0.0.1:5432 and a throwaway cluster could not be "
                        f"made ({exc})")
    try:
        yield conninfo
    finally:
        if cluster is not None:
            cluster.stop()


@pytest.fixture
def pg_dsn(pg_server: str) -> Iterator[str]:
    """A ``postgresql://`` URL of a fresh empty database, dropped after the test."""
    import psycopg
    from psycopg.conninfo import conninfo_to_dict

    name = f"studtable_test_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(pg_server, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    params = conninfo_to_dict(pg_server)
    url = f"postgresql://{params.get('user', 'postgres')}@{params.get('host', '127.0.0.1')}:" \
          f"{params.get('port', 5432)}/{name}"
    try:
        yield url
    finally:
        with psycopg.connect(pg_server, autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
