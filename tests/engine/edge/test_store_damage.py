"""Issue 19 item 12: a damaged store never starts silently with less.

Each damage is made to a real SQLite store written the way the engine writes it (WAL,
synchronous FULL, killed without a clean close where the case needs it); then the real
``studtable engine`` and ``studtable store check`` processes are run on it.  Each must refuse
with one line that says what is wrong and how to recover: no traceback, no start with fewer
inputs.  Item 4 too: the store's files are mode 0600.
"""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from engine.store import open_store

CLI = [sys.executable, "-m", "engine.cli"]
T = "t1"
INPUTS = 40


def write_store(db: Path, *, kill: bool) -> None:
    """INPUTS appends by a real process; ``kill``: it dies without closing (the WAL stays)."""
    code = (
        "import os, sys\n"
        "from engine.store import open_store\n"
        f"s = open_store({str(db)!r}, {T!r})\n"
        f"for i in range(1, {INPUTS + 1}):\n"
        "    s.append('sensor/shoe:shoe-1', 1, i, 'shoe_card', {'kind': 'shoe_card', 'card': 'As', 'counter': i})\n"
        + ("os._exit(9)\n" if kill else "s.close()\n")
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == (9 if kill else 0), done.stderr


def engine_config(tmp_path: Path, db: Path) -> Path:
    cfg = tmp_path / "engine.toml"
    cfg.write_text(f'table = "{T}"\n[game]\nvariant = "F7S"\nante = 1\nbring_in = 2\nsmall_bet = 5\nbig_bet = 10\n'
                   f'[store]\nurl = "{db}"\n[broker]\nhost = "127.0.0.1"\nport = 1\n')
    return cfg


def refused(cmd: list[str]) -> str:
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=60)
    err = done.stderr.strip()
    assert done.returncode != 0, (done.stdout, err)
    assert "Traceback" not in err and len(err.splitlines()) == 1, err
    assert "restore the store from its backup" in err, err
    return err


def flip_wal_byte(wal: Path, frame: int) -> None:
    data = bytearray(wal.read_bytes())
    page_size = int.from_bytes(data[8:12], "big")
    at = 32 + (frame - 1) * (24 + page_size) + 24 + 100
    data[at] ^= 0x5A
    wal.write_bytes(bytes(data))


def damage(case: str, db: Path) -> None:
    wal = db.with_name(db.name + "-wal")
    if case == "empty":
        write_store(db, kill=False)
        db.write_bytes(b"")
    elif case == "wal-deleted":
        write_store(db, kill=True)
        assert wal.exists() and wal.stat().st_size > 0
        wal.unlink()
    elif case == "wal-flipped":
        write_store(db, kill=True)
        flip_wal_byte(wal, 3)
    elif case == "malformed":
        write_store(db, kill=False)
        data = bytearray(db.read_bytes())
        page = int.from_bytes(data[16:18], "big")
        data[page * 2:page * 2 + 64] = os.urandom(64)  # the third page: a table b-tree page
        db.write_bytes(bytes(data))
    elif case == "not-json":
        write_store(db, kill=False)
        with sqlite3.connect(db) as conn:
            conn.execute("UPDATE events SET payload = '{\"kind\": \"shoe_' WHERE event_offset = 7")
        conn.close()
    else:  # pragma: no cover
        raise AssertionError(case)


CASES = ["empty", "wal-deleted", "wal-flipped", "malformed", "not-json"]
SAYS = {"empty": "empty file", "wal-deleted": "WAL", "wal-flipped": "damaged bytes in its WAL",
        "malformed": "damaged", "not-json": "is not JSON"}


@pytest.mark.parametrize("case", CASES)
def test_a_damaged_store_is_refused_with_one_line(tmp_path: Path, case: str) -> None:
    db = tmp_path / "engine.db"
    damage(case, db)
    err = refused([*CLI, "engine", "--config", str(engine_config(tmp_path, db))])
    assert SAYS[case] in err and "studtable store check" in err, err
    err = refused([*CLI, "store", "check", "--store", str(db)])
    assert SAYS[case] in err, err


def test_a_store_killed_mid_run_replays_everything_committed(tmp_path: Path) -> None:
    db = tmp_path / "engine.db"
    write_store(db, kill=True)
    done = subprocess.run([*CLI, "store", "check", "--store", str(db)], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert f"ok: {INPUTS} inputs" in done.stdout
    with open_store(db, T) as store:
        assert [e.seq for e in store.events()] == list(range(1, INPUTS + 1))


def test_a_torn_last_commit_is_not_taken_for_damage(tmp_path: Path) -> None:
    """A crash in the middle of writing the last transaction leaves a bad last frame: that
    commit never returned (was never acknowledged), so the store opens with the rest."""
    db = tmp_path / "engine.db"
    write_store(db, kill=True)
    wal = db.with_name(db.name + "-wal")
    page_size = int.from_bytes(wal.read_bytes()[8:12], "big")
    frames = (wal.stat().st_size - 32) // (24 + page_size)
    flip_wal_byte(wal, frames - 1)  # inside the last transaction, before its commit frame
    with open_store(db, T) as store:
        assert len(list(store.events())) == INPUTS - 1


def test_damage_in_the_second_last_transaction_is_refused(tmp_path: Path) -> None:
    db = tmp_path / "engine.db"
    write_store(db, kill=True)
    wal = db.with_name(db.name + "-wal")
    page_size = int.from_bytes(wal.read_bytes()[8:12], "big")
    frames = (wal.stat().st_size - 32) // (24 + page_size)
    flip_wal_byte(wal, frames - 4)  # a transaction is about three frames: this is an earlier one
    err = refused([*CLI, "store", "check", "--store", str(db)])
    assert "committed transaction(s) after it would be lost" in err


def test_the_store_and_its_wal_are_private(tmp_path: Path) -> None:
    db = tmp_path / "engine.db"
    write_store(db, kill=True)
    for path in (db, db.with_name(db.name + "-wal"), db.with_name(db.name + "-shm")):
        assert path.stat().st_mode & 0o777 == 0o600, path
    os.chmod(db, 0o644)
    open_store(db, T).close()  # an existing store is made private again at open
    assert db.stat().st_mode & 0o777 == 0o600
