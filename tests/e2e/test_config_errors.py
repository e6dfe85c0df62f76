"""Every service, given a broken configuration, exits with ONE line that says what to do.

Each case starts the real command (``python -m engine.cli ...``, as systemd would) against a table
set up by the real ``studtable setup``, with one thing broken, and checks: it ends (no hang), with a
non-zero status, no traceback, exactly one line on stderr, and that line names the file (when there
is one), the key, and what to do.
"""

from __future__ import annotations

import os
import re
import socket
import subprocess
import sys
import tomllib
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from engine.configfile import dumps_toml

CLI = [sys.executable, "-m", "engine.cli"]
TIMEOUT_S = 40  # a service that waits longer than this for anything has hung


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class Table:
    root: Path
    file: Path
    broker_port: int

    def data(self) -> dict[str, Any]:
        return tomllib.loads(self.file.read_text())

    def write(self, data: dict[str, Any]) -> None:
        self.file.write_text(dumps_toml(data))

    def edit(self, change: Callable[[dict[str, Any]], None]) -> None:
        data = self.data()
        change(data)
        self.write(data)


@pytest.fixture
def table(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> Table:
    """A table written by the real ``studtable setup`` and ``studtable deck enroll``.  They run in this
    process (``engine.cli.main``, the code ``python -m engine.cli`` runs), not as two more interpreters
    per case: only the broken service's command is under test, and it runs as its own process below."""
    from engine.cards import DECK
    from engine.cli import main

    port = _free_port()  # nothing listens there: the cases that need a broker get "unreachable"
    etc, var = tmp_path / "etc", tmp_path / "var"
    assert main(["setup", "--out", str(etc), "--table", "t1", "--state-dir", str(var),
                 "--broker-port", str(port), "--shoe-port", str(tmp_path / "ttyShoe"),
                 "--camera", str(tmp_path / "cam.mp4")]) == 0, capsys.readouterr().err
    tags = tmp_path / "red-1.csv"
    tags.write_text("".join(f"04{i:012x},{c}\n" for i, c in enumerate(DECK, 1)))
    assert main(["deck", "enroll", "red-1", "--import", str(tags), "--decks", str(var / "decks")]) == 0, \
        capsys.readouterr().err
    capsys.readouterr()  # what setup printed is not the case's output
    t = Table(tmp_path, etc / "table.toml", port)
    t.edit(lambda d: d.__setitem__("seats", [{"seat": 1, "name": "Ann", "stack": 200},
                                             {"seat": 2, "name": "Bob", "stack": 200}]))
    return t


@dataclass
class Case:
    id: str
    argv: Callable[[Table], list[str]]
    breaks: Callable[[Table], None] = lambda t: None
    says: list[str] = field(default_factory=list)  # regexes the one line must match (besides the fix)
    names_file: bool = True


def _set(*keys: str, value: Any) -> Callable[[Table], None]:
    def change(t: Table) -> None:
        def apply(d: dict[str, Any]) -> None:
            node = d
            for k in keys[:-1]:
                node = node[k]
            node[keys[-1]] = value
        t.edit(apply)
    return change


def _engine(t: Table) -> list[str]:
    return ["engine", "--config", str(t.file)]


def _bridge(t: Table) -> list[str]:
    return ["bridge", "--config", str(t.file)]


def _vision(t: Table) -> list[str]:
    return ["vision", "run", "--config", str(t.file), "--device", "cam-1"]


def _console(t: Table) -> list[str]:
    return ["console", "--config", str(t.file)]


def _monitor(t: Table) -> list[str]:
    return ["monitor", "--config", str(t.file)]


def _recorder(t: Table) -> list[str]:
    return ["recorder", "--config", str(t.file)]


def _write_text(relative: str, text: str) -> Callable[[Table], None]:
    def change(t: Table) -> None:
        (t.file.parent / relative).write_text(text)
    return change


def _without_logins(then: Callable[[Table], None]) -> Callable[[Table], None]:
    """No per-service login files (a folder written by `studtable broker config` alone)."""
    def change(t: Table) -> None:
        for f in (t.file.parent / "broker" / "logins").glob("*.json"):
            f.unlink()
        then(t)
    return change


def _busy_port(t: Table) -> None:
    """Something already listens on the broker's port."""
    s = socket.socket()
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind(("127.0.0.1", t.broker_port))
    s.listen()
    t.__dict__["busy"] = s  # kept open for the run


def _embedded_broker(t: Table) -> list[str]:
    return ["broker", "--config-dir", str(t.file.parent / "broker"), "--port", str(t.broker_port)]


def _remove_credentials(t: Table) -> None:
    import shutil

    shutil.rmtree(t.file.parent / "broker")


CASES = [
    # the list
    Case("engine-port-not-a-number", _engine, _set("broker", "port", value="abc"),
         [r"broker\.port", r"'abc' is not a port number", r"1 to 65535"]),
    Case("bridge-port-not-a-number", _bridge, _set("broker", "port", value="18x3"), [r"broker\.port"]),
    Case("vision-port-not-a-number", _vision, _set("broker", "port", value=-5), [r"broker\.port"]),
    Case("console-port-not-a-number", _console, _set("broker", "port", value="abc"), [r"broker\.port"]),
    Case("monitor-port-not-a-number", _monitor, _set("broker", "port", value="abc"), [r"broker\.port"]),
    Case("recorder-port-not-a-number", _recorder, _set("broker", "port", value="abc"), [r"broker\.port"]),
    Case("engine-broker-unreachable", _engine, lambda t: None,
         [r": broker: no broker answers at 127\.0\.0\.1:\d+", r"start the broker"]),
    Case("recorder-broker-unreachable", _recorder, lambda t: None, [r": broker: no broker answers"]),
    Case("engine-credentials-folder-missing", _engine, _remove_credentials,
         [r"broker\.credentials: the credentials folder .* does not exist", r"studtable setup"]),
    Case("bridge-credentials-folder-missing", _bridge, _remove_credentials, [r"broker\.credentials: "]),
    Case("console-credentials-folder-missing", _console, _remove_credentials, [r"broker\.credentials: "]),
    Case("engine-store-folder-missing", _engine, _set("store", "url", value="/nonexistent/dir/t1.sqlite"),
         [r"store\.url", r"store folder /nonexistent/dir does not exist", r"mkdir -p"]),
    Case("engine-seat-count-0", _engine, _set("seat_count", value=0), [r"seat_count", r"2 to 8"]),
    Case("engine-seat-42", _engine, _set("seats", value=[{"seat": 42, "name": "Ann", "stack": 200}]),
         [r"seats\[0\]\.seat", r"seat 42 does not exist"]),
    Case("engine-negative-stack", _engine, _set("seats", value=[{"seat": 1, "name": "Ann", "stack": -5}]),
         [r"seats\[0\]\.stack", r"positive whole number"]),
    Case("engine-postgres-unreachable", _engine,
         _set("store", "url", value="postgresql://studtable@127.0.0.1:1/studtable?connect_timeout=3"),
         [r"store\.url", r"PostgreSQL", r"pg_isready"]),
    Case("bridge-baud-not-a-number", _bridge, _set("shoe", "baud", value="fast"),
         [r"shoe\.baud", r"'fast' is not a baud rate", r"115200"]),
    Case("engine-bad-table-id", _engine, _set("table", value="t 1/x"), [r": table: 't 1/x' is not a valid table id"]),
    Case("bridge-bad-table-id", _bridge, _set("table", value="+"), [r": table: "]),
    Case("vision-bad-table-id", _vision, _set("table", value="#"), [r": table: "]),
    Case("broker-bad-password-file", _embedded_broker, _write_text("broker/passwd", "garbage\n"),
         [r"passwd: is not a valid password file", r"studtable broker config"]),
    Case("broker-bad-acl-file", _embedded_broker, _write_text("broker/acl", "allow everything\n"),
         [r"acl: is not a valid ACL file", r"studtable broker config"]),
    Case("engine-corrupt-login", _engine, _write_text("broker/logins/engine.json", '{"username": '),
         [r"broker\.credentials: ", r"logins/engine\.json is not a studtable login", r"studtable setup"]),
    Case("engine-corrupt-credentials", _engine, _without_logins(_write_text("broker/credentials.json", '{"engine": ')),
         [r"broker\.credentials: ", r"corrupt", r"studtable broker config"]),
    Case("broker-corrupt-credentials", _embedded_broker, _write_text("broker/credentials.json", "[1, 2"),
         [r"corrupt"], names_file=False),
    Case("broker-port-in-use", _embedded_broker, _busy_port,
         [r"cannot listen on 127\.0\.0\.1:(\d+)", r"ss -ltnp \| grep \d+"], names_file=False),
    # more of our own
    Case("engine-config-missing", lambda t: ["engine", "--config", str(t.root / "nope.toml")], lambda t: None,
         [r"nope\.toml: the engine config does not exist"]),
    Case("engine-toml-syntax", _engine, lambda t: t.file.write_text("table = \n"), [r"does not parse"]),
    Case("engine-misspelt-key", _engine, _set("seat_cont", value=6), [r"seat_cont: is not a known setting"]),
    Case("engine-bad-game", _engine, _set("game", "variant", value="holdem"), [r": game: "]),
    Case("engine-duplicate-seat", _engine, _set("seats", value=[{"seat": 1, "name": "A", "stack": 5},
                                                                {"seat": 1, "name": "B", "stack": 5}]),
         [r"seat 1 is given twice"]),
    Case("vision-no-such-camera", lambda t: ["vision", "run", "--config", str(t.file), "--device", "cam-9"],
         lambda t: None, [r"cameras: no camera with device 'cam-9'"]),
    Case("vision-bad-vanish-s", _vision, lambda t: t.edit(lambda d: d["cameras"][0].__setitem__("vanish_s", "2 s")),
         [r"cameras\[0\]\.vanish_s: '2 s' is not a number of seconds", r"from 0 to 60"]),
    Case("bridge-deck-not-enrolled", _bridge, _set("shoe", "deck", value="blue-9"),
         [r"shoe\.deck: deck 'blue-9' is not enrolled", r"studtable deck enroll blue-9"]),
    Case("bridge-no-shoe", _bridge, lambda t: t.edit(lambda d: d.pop("shoe")), [r": shoe: this table has no"]),
    Case("history-list-without-table", lambda t: ["history", "list", "--store", str(t.root / "h.sqlite")],
         lambda t: _make_store(t.root / "h.sqlite"), [r"give --table; tables in .*: t7"], names_file=False),
    Case("history-list-no-store", lambda t: ["history", "list", "--store", str(t.root / "typo.sqlite"),
                                             "--table", "t1"], lambda t: None,
         [r"--store: .*typo\.sqlite does not exist"], names_file=False),
    Case("setup-bad-table-id", lambda t: ["setup", "--out", str(t.root / "other"), "--table", "a/b"],
         lambda t: None, [r"--table: 'a/b' is not a valid table id"], names_file=False),
]


def _make_store(path: Path) -> None:
    from engine.store import HandRecord, open_store

    store = open_store(str(path), "t7")
    store.record_hand(HandRecord("t7-1", "t7", "F7S", "2026-01-01T00:00:00", "2026-01-01T00:01:00", [], None))
    store.close()


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_a_broken_configuration_is_one_line_that_says_what_to_do(case: Case, table: Table) -> None:
    case.breaks(table)
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen", "PYTHONUNBUFFERED": "1"}
    try:
        r = subprocess.run([*CLI, *case.argv(table)], capture_output=True, text=True, timeout=TIMEOUT_S,
                           env=env, stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired as exc:
        pytest.fail(f"{case.id}: still running after {TIMEOUT_S} s (a hang, not an error): {exc.stderr!r}")
    finally:
        busy = table.__dict__.pop("busy", None)
        if busy is not None:
            busy.close()
    lines = [ln for ln in r.stderr.splitlines() if ln.strip()]
    assert r.returncode != 0, f"{case.id}: exit status 0 (quiet acceptance); stdout {r.stdout!r} stderr {r.stderr!r}"
    assert "Traceback" not in r.stderr + r.stdout, f"{case.id}: a traceback:\n{r.stderr}"
    assert len(lines) == 1, f"{case.id}: {len(lines)} lines on stderr, not one:\n{r.stderr}"
    line = lines[0]
    command = case.argv(table)[0]
    assert re.match(rf"studtable {command}( [a-z]+)?: ", line), f"{case.id}: {line!r} does not say which command"
    if case.names_file:
        named = str(table.root / "nope.toml") if case.id == "engine-config-missing" else str(table.file)
        if case.id.startswith("broker-bad"):
            named = str(table.file.parent / "broker")
        assert named in line, f"{case.id}: the file {named} is not named in {line!r}"
    for pattern in case.says:
        assert re.search(pattern, line), f"{case.id}: {pattern!r} not in {line!r}"
    # what is wrong, then what to do: the line has both halves
    assert ";" in line, f"{case.id}: no 'what to do' in {line!r}"
