"""Issue 23 (mosquitto "Unable to open pwfile"): mosquitto starts from the generated files both
when started as root (it drops to its own account, then reads the password and ACL files) and
when started as that account.  Needs root (to start mosquitto as root) and the mosquitto account."""

from __future__ import annotations

import os
import pwd
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from engine.broker.config import write_config
from tests.support.fixtures import MosquittoBroker, free_port, mosquitto_executable
from tests.support.mqtt import TestClient

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="starting mosquitto as root needs root")


@pytest.fixture
def shared_dir() -> Iterator[Path]:
    # Not pytest's tmp_path: as root that is mode 0700 and mosquitto's account could not enter it.
    base = Path(tempfile.mkdtemp(prefix="studtable-root-"))
    os.chmod(base, 0o755)
    yield base
    shutil.rmtree(base, ignore_errors=True)


def _account() -> pwd.struct_passwd:
    try:
        return pwd.getpwnam("mosquitto")
    except KeyError:
        pytest.skip("no mosquitto account on this machine")


class AsUser(MosquittoBroker):
    """mosquitto started as its own account (as systemd's User=mosquitto would)."""

    def start(self, timeout: float = 10.0) -> MosquittoBroker:
        exe = self.executable
        self.executable = "runuser"
        real = subprocess.Popen
        try:
            subprocess.Popen = lambda cmd, **kw: real(["runuser", "-u", "mosquitto", "--", exe, *cmd[1:]], **kw)  # type: ignore[assignment,misc]
            return super().start(timeout)
        finally:
            subprocess.Popen = real  # type: ignore[misc]
            self.executable = exe


@pytest.mark.parametrize("run_as", [None, "mosquitto"])
def test_mosquitto_started_as_root_reads_the_generated_files(shared_dir: Path, run_as: str | None) -> None:
    account = _account()
    exe = mosquitto_executable()
    if exe is None:
        pytest.skip("mosquitto is not installed")
    files = write_config(shared_dir / "broker", port=free_port(), table="t1", run_as=run_as)
    for path in (files.password_file, files.acl_file):
        st = path.stat()
        assert (st.st_uid, st.st_mode & 0o777) == (account.pw_uid, 0o600 if path == files.password_file else 0o640)
    assert files.credentials_file.stat().st_uid == 0 and files.credentials_file.stat().st_mode & 0o777 == 0o600
    broker = MosquittoBroker(exe, files)
    broker.start()
    try:
        client = TestClient(broker, "engine", "engine")
        assert client.connected(), broker.log_text()
        client.close()
        assert "Unable to open pwfile" not in broker.log_text()
    finally:
        broker.stop()


def test_mosquitto_started_as_its_own_account_reads_the_generated_files(shared_dir: Path) -> None:
    _account()
    exe = mosquitto_executable()
    if exe is None or shutil.which("runuser") is None:
        pytest.skip("mosquitto or runuser is not installed")
    files = write_config(shared_dir / "broker", port=free_port(), table="t1", run_as="mosquitto",
                         log_file=shared_dir / "broker" / "data" / "mosquitto.log")
    broker = AsUser(exe, files)
    broker.log_path = shared_dir / "stdout.log"
    broker.start()
    try:
        client = TestClient(broker, "monitor", "monitor-1")
        assert client.connected(), (shared_dir / "broker" / "data" / "mosquitto.log").read_text()
        client.close()
    finally:
        broker.stop()
