"""A cardroom: two tables' mosquittos bridged over TLS (client certificate per table) to a
central mosquitto; certificates made here.  Only public state and finished hands leave a
table, and a table can neither read nor write another table's topics."""

from __future__ import annotations

import datetime
import getpass
import ipaddress
import json
import os
import subprocess
import threading
import time
from pathlib import Path
from typing import Any

import paho.mqtt.client as mqtt
import pytest
from paho.mqtt.enums import CallbackAPIVersion

from engine.broker.cardroom import TableCerts, write_cardroom
from engine.broker.config import write_config
from engine.bus import BusClient
from engine.publicstate import idle_state
from engine.wire import Channel, topic
from tests.support.fixtures import (
    MosquittoBroker,
    _wait_port,
    free_port,
    mosquitto_executable,
    require_service,
)

x509 = pytest.importorskip("cryptography.x509")
from cryptography.hazmat.primitives import hashes, serialization  # noqa: E402
from cryptography.hazmat.primitives.asymmetric import ec  # noqa: E402
from cryptography.x509.oid import NameOID  # noqa: E402


def _name(cn: str) -> Any:
    return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, cn)])


def _write_key(key: Any, path: Path) -> None:
    path.write_bytes(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                       serialization.NoEncryption()))
    path.chmod(0o600)


class CA:
    def __init__(self, directory: Path) -> None:
        self.dir = directory
        self.key = ec.generate_private_key(ec.SECP256R1())
        now = datetime.datetime.now(datetime.UTC)
        self.cert = (
            x509.CertificateBuilder().subject_name(_name("studtable test CA")).issuer_name(_name("studtable test CA"))
            .public_key(self.key.public_key()).serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(minutes=5)).not_valid_after(now + datetime.timedelta(days=1))
            .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
            .sign(self.key, hashes.SHA256())
        )
        self.cafile = directory / "ca.crt"
        self.cafile.write_bytes(self.cert.public_bytes(serialization.Encoding.PEM))

    def issue(self, cn: str, *, server: bool = False) -> TableCerts:
        key = ec.generate_private_key(ec.SECP256R1())
        now = datetime.datetime.now(datetime.UTC)
        builder = (
            x509.CertificateBuilder().subject_name(_name(cn)).issuer_name(self.cert.subject)
            .public_key(key.public_key()).serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(minutes=5)).not_valid_after(now + datetime.timedelta(days=1))
        )
        if server:
            builder = builder.add_extension(
                x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]), critical=False
            )
        cert = builder.sign(self.key, hashes.SHA256())
        certfile, keyfile = self.dir / f"{cn}.crt", self.dir / f"{cn}.key"
        certfile.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
        _write_key(key, keyfile)
        return TableCerts(self.cafile, certfile, keyfile)


class TlsClient:
    """A paho client that logs in to the central broker with a certificate."""

    def __init__(self, port: int, certs: TableCerts, client_id: str) -> None:
        self.received: list[tuple[str, bytes]] = []
        self.connected = threading.Event()
        self.c = mqtt.Client(CallbackAPIVersion.VERSION2, client_id=client_id, protocol=mqtt.MQTTv311)
        self.c.tls_set(ca_certs=str(certs.cafile), certfile=str(certs.certfile), keyfile=str(certs.keyfile),
                       )
        self.c.on_connect = lambda *a: self.connected.set()
        self.c.on_message = lambda c, u, m: self.received.append((m.topic, m.payload))
        self.c.connect("127.0.0.1", port)
        self.c.loop_start()
        assert self.connected.wait(10), "no TLS connection to the central broker"

    def close(self) -> None:
        self.c.disconnect()
        self.c.loop_stop()


def _start(conf: Path, port: int, log: Path) -> subprocess.Popen[bytes]:
    exe = mosquitto_executable()
    assert exe is not None
    with open(log, "ab") as fh:
        proc = subprocess.Popen([exe, "-c", str(conf)], stdout=fh, stderr=subprocess.STDOUT)
    if not _wait_port(port, lambda: proc.poll() is None, 10):
        proc.kill()
        raise RuntimeError(f"mosquitto did not start:\n{log.read_text()[-2000:]}")
    return proc


def eventually(predicate: Any, timeout: float = 15.0) -> bool:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if predicate():
            return True
        time.sleep(0.05)
    return predicate()


def test_tables_bridged_to_a_central_broker_over_tls(tmp_path: Path) -> None:
    if mosquitto_executable() is None:
        require_service("mosquitto is not installed (apt-get install mosquitto)")
    run_as = getpass.getuser() if os.geteuid() == 0 else None
    ca = CA(tmp_path)
    central_port = free_port()
    tables = ["t1", "t2"]
    certs = {t: ca.issue(t) for t in tables}
    files = write_cardroom(
        tmp_path / "cardroom", tables, central_host="127.0.0.1", central_port=central_port,
        central_certs=ca.issue("central", server=True), table_certs=certs, run_as=run_as,
    )
    procs: list[subprocess.Popen[bytes]] = []
    locals_: dict[str, MosquittoBroker] = {}
    clients: list[Any] = []
    try:
        procs.append(_start(files.central_conf, central_port, tmp_path / "central.log"))
        for t in tables:
            bf = write_config(tmp_path / t, port=free_port(), table=t, run_as=run_as)
            with open(bf.mosquitto_conf, "a") as conf:
                conf.write("\n" + files.bridges[t].read_text())
            exe = mosquitto_executable()
            assert exe is not None
            locals_[t] = MosquittoBroker(exe, bf).start()
        recorder = TlsClient(central_port, ca.issue("recorder"), "recorder-1")
        clients.append(recorder)
        recorder.c.subscribe("#", qos=1)
        # A rogue client holding table t2's certificate, straight on the central broker.
        rogue = TlsClient(central_port, certs["t2"], "rogue-t2")
        clients.append(rogue)
        rogue.c.subscribe("#", qos=1)
        time.sleep(0.5)
        for t in tables:
            b = locals_[t]
            user, password = b.login("engine")
            engine = BusClient(host=b.host, port=b.port, username=user, password=password, table=t,
                               device="engine", role="engine", session=1).start()
            clients.append(engine)
            user, password = b.login("bridge", "shoe-1")
            shoe = BusClient(host=b.host, port=b.port, username=user, password=password, table=t,
                             device="shoe-1", role="bridge", session=1).start()
            clients.append(shoe)
            shoe.publish(Channel.SHOE, "card_drawn", counter=1, uid="04aabbccdd", card="As", deck="d1",
                         quality=200, status="ok")
            engine.publish(Channel.STATE, "state", state=dict(idle_state(t).to_json(), pot=7))
            engine.publish(Channel.HISTORY, "hand", hand=f"{t}-1", variant="F7S", events=[], phh=None)
        wanted = {topic(t, c) for t in tables for c in (Channel.STATE, Channel.HISTORY)}
        assert eventually(lambda: wanted <= {tp for tp, _ in recorder.received}), recorder.received
        # The rogue t2 certificate tries to forge t1's state on the central broker.
        rogue.c.publish(topic("t1", Channel.STATE), json.dumps({"forged": True}), qos=1)
        time.sleep(1.0)
        topics = [tp for tp, _ in recorder.received]
        assert not any("/sensor/" in tp or "/dealer/" in tp for tp in topics), topics
        assert not any(b"forged" in payload for _, payload in recorder.received)
        assert all(b'"As"' not in payload for _, payload in recorder.received)
        # A table reads nothing on the central broker, not even its own topics.
        assert rogue.received == []
    finally:
        for c in clients:
            c.stop() if isinstance(c, BusClient) else c.close()
        for b in locals_.values():
            b.stop()
        for p in procs:
            p.terminate()
            p.wait(10)
