"""The event store and hand log, the same suite against SQLite and PostgreSQL."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from engine.store import HandRecord, SqliteStore, StoreError, open_store


@pytest.fixture(params=["sqlite", "postgres"])
def store_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "sqlite":
        return str(tmp_path / "events.db")
    dsn: str = request.getfixturevalue("pg_dsn")
    return dsn


def test_append_returns_growing_offsets_and_replays_in_order(store_url: str) -> None:
    with open_store(store_url, "t1") as s:
        offsets = [s.append("shoe-1", 1, seq, "card_drawn", {"card": card}).offset
                   for seq, card in enumerate(["Ah", "Kd", "2c"], 1)]
        assert offsets == sorted(offsets) and len(set(offsets)) == 3
        got = list(s.events())
        assert [(e.source, e.session, e.seq, e.kind, e.payload) for e in got] == [
            ("shoe-1", 1, 1, "card_drawn", {"card": "Ah"}),
            ("shoe-1", 1, 2, "card_drawn", {"card": "Kd"}),
            ("shoe-1", 1, 3, "card_drawn", {"card": "2c"}),
        ]
        assert [e.offset for e in s.events(after=offsets[0])] == offsets[1:]
        assert list(s.events(after=offsets[-1])) == []


def test_duplicate_key_is_reported_and_not_stored_twice(store_url: str) -> None:
    with open_store(store_url, "t1") as s:
        first = s.append("console-1", 4, 17, "action", {"seat": 2, "action": "fold"})
        again = s.append("console-1", 4, 17, "action", {"seat": 2, "action": "fold"})
        assert (first.status, again.status) == ("new", "duplicate")
        assert again.offset == first.offset
        # Same seq in a new session (device restarted) is a different input.
        other = s.append("console-1", 5, 17, "action", {"seat": 2, "action": "call"})
        assert other.status == "new"
        assert len(list(s.events())) == 2


def test_dedup_and_log_survive_reopening(store_url: str) -> None:
    with open_store(store_url, "t1") as s:
        s.append("shoe-1", 2, 1, "card_drawn", {"card": "Ah"})
    with open_store(store_url, "t1") as s:
        assert s.append("shoe-1", 2, 1, "card_drawn", {"card": "Ah"}).duplicate
        assert [e.seq for e in s.events()] == [1]


def test_tables_are_kept_apart_in_one_database(store_url: str) -> None:
    with open_store(store_url, "t1") as a, open_store(store_url, "t2") as b:
        a.append("shoe-1", 1, 1, "card_drawn", {"t": 1})
        assert b.append("shoe-1", 1, 1, "card_drawn", {"t": 2}).status == "new"
        assert [e.payload for e in a.events()] == [{"t": 1}]
        assert [e.payload for e in b.events()] == [{"t": 2}]


def test_heads_give_latest_session_and_seq_per_source(store_url: str) -> None:
    with open_store(store_url, "t1") as s:
        for session, seq in [(1, 1), (1, 2), (1, 9), (2, 1), (2, 3)]:
            s.append("shoe-1", session, seq, "k", {})
        s.append("cam-1", 7, 40, "k", {})
        assert s.heads() == {"shoe-1": (2, 3), "cam-1": (7, 40)}


def test_replay_crosses_batches(store_url: str) -> None:
    with open_store(store_url, "t1") as s:
        for seq in range(1, 1203):
            s.append("cam-1", 1, seq, "observation", {"frame": seq})
        seqs = [e.seq for e in s.events()]
        assert seqs == list(range(1, 1203))


def test_non_json_payload_is_refused_before_writing(store_url: str) -> None:
    with open_store(store_url, "t1") as s:
        with pytest.raises(StoreError, match="not plain JSON"):
            s.append("x", 1, 1, "k", {"bad": {1, 2}})
        assert list(s.events()) == []


def test_concurrent_appends_from_threads_all_land_once(store_url: str) -> None:
    with open_store(store_url, "t1") as s:
        def worker(source: str) -> None:
            for seq in range(1, 51):
                s.append(source, 1, seq, "k", {})
                s.append(source, 1, seq, "k", {})  # redelivery
        threads = [threading.Thread(target=worker, args=(f"dev-{i}",)) for i in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert len(list(s.events())) == 200


def hand(hand_id: str, started: str) -> HandRecord:
    return HandRecord(hand_id, "t1", "F7S", started, started.replace("T20", "T21"),
                      [{"kind": "deal", "seat": 1}], "variant = 'F7S'\n")


def test_hand_log_keeps_each_hand_once(store_url: str) -> None:
    with open_store(store_url, "t1") as s:
        assert s.record_hand(hand("t1-2", "2024-05-01T20:05:00Z"))
        assert s.record_hand(hand("t1-1", "2024-05-01T20:00:00Z"))
        assert not s.record_hand(hand("t1-1", "2024-05-01T20:00:00Z"))
        assert [h.hand_id for h in s.list_hands()] == ["t1-1", "t1-2"]
        got = s.get_hand("t1-1")
        assert got == hand("t1-1", "2024-05-01T20:00:00Z")
        assert s.get_hand("nope") is None
    with open_store(store_url, "t2") as other:
        assert other.list_hands() == []


def test_sqlite_runs_wal_with_full_sync(tmp_path: Path) -> None:
    path = tmp_path / "e.db"
    with SqliteStore(path, "t1") as s:
        s.append("a", 1, 1, "k", {})
        assert s._conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        assert s._conn.execute("PRAGMA synchronous").fetchone()[0] == 2  # FULL


def test_append_is_durable_before_return(tmp_path: Path) -> None:
    """A process that appends and is SIGKILLed right after leaves the row on disk."""
    path = tmp_path / "e.db"
    code = (
        "import os, signal, sys\n"
        "from engine.store import SqliteStore\n"
        f"s = SqliteStore({str(path)!r}, 't1')\n"
        "r = s.append('shoe-1', 1, 1, 'card_drawn', {'card': 'Ah'})\n"
        "print(r.offset, flush=True)\n"
        "os.kill(os.getpid(), signal.SIGKILL)\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60,
                          env={**os.environ, "PYTHONPATH": str(Path(__file__).parents[2])})
    assert proc.returncode == -9, proc.stderr
    offset = int(proc.stdout.strip())
    conn = sqlite3.connect(path)
    assert conn.execute("SELECT event_offset, payload FROM events").fetchall() == [(offset, '{"card":"Ah"}')]


def test_unwritable_location_names_the_path(tmp_path: Path) -> None:
    with pytest.raises(StoreError, match="missing/dir"):
        SqliteStore(tmp_path / "missing" / "dir" / "e.db", "t1")


def test_appends_do_not_checkpoint_maintain_does_and_the_wal_starts_over(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An append is one WAL fsync; maintain() (run when no one waits) copies the WAL into the
    database, and the WAL file is then written from its beginning again instead of growing."""
    from engine import store as store_module

    monkeypatch.setattr(store_module, "CHECKPOINT_EVERY", 20)
    path = tmp_path / "e.db"
    wal = Path(str(path) + "-wal")
    with SqliteStore(path, "t1") as s:
        assert s._conn.execute("PRAGMA wal_autocheckpoint").fetchone()[0] == 0
        size = path.stat().st_size
        for seq in range(1, 20):
            s.append("shoe-1", 1, seq, "card_drawn", {"card": "Ah"})
            s.maintain()
        assert path.stat().st_size == size  # nothing copied yet
        s.append("shoe-1", 1, 20, "card_drawn", {"card": "Ah"})
        s.maintain()
        assert path.stat().st_size > size  # the rows reached the database file
        wal_size = wal.stat().st_size
        for seq in range(21, 81):
            s.append("shoe-1", 1, seq, "card_drawn", {"card": "Kd"})
            s.maintain()
        assert wal.stat().st_size <= wal_size * 1.5  # reused, not grown by three more rounds
        # A quiet table: one commit is enough.
        s.append("shoe-1", 1, 81, "card_drawn", {"card": "Qs"})
        s.append("shoe-1", 1, 82, "card_drawn", {"card": "Js"})
        s.maintain()
        assert s._since_checkpoint == 2
        s.maintain(idle=True)
        assert s._since_checkpoint == 0
    with SqliteStore(path, "t1") as again:
        assert [e.seq for e in again.events()][-1] == 82


def test_an_owner_that_never_calls_maintain_still_gets_checkpoints(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from engine import store as store_module

    monkeypatch.setattr(store_module, "CHECKPOINT_INLINE", 30)
    path = tmp_path / "e.db"
    with SqliteStore(path, "t1") as s:
        size = path.stat().st_size
        for seq in range(1, 31):
            s.append("shoe-1", 1, seq, "card_drawn", {"card": "Ah"})
        assert path.stat().st_size > size


def test_a_new_sqlite_store_uses_small_pages_and_an_old_one_keeps_its_own(tmp_path: Path) -> None:
    from engine import store as store_module

    with SqliteStore(tmp_path / "new.db", "t1") as s:
        offsets = [s.append("shoe-1", 1, seq, "card_drawn", {"card": "Ah"}).offset for seq in (1, 2, 3)]
        assert offsets == sorted(offsets) and len(set(offsets)) == 3
        assert s._conn.execute("PRAGMA page_size").fetchone()[0] == store_module.PAGE_SIZE
        ddl = s._conn.execute("SELECT sql FROM sqlite_master WHERE name = 'events'").fetchone()[0]
        assert "AUTOINCREMENT" not in ddl  # no sqlite_sequence page in every append
    old = tmp_path / "old.db"
    conn = sqlite3.connect(old)
    conn.execute("PRAGMA page_size=4096")
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute(
        "CREATE TABLE events (event_offset INTEGER PRIMARY KEY AUTOINCREMENT, table_id TEXT NOT NULL, "
        "source TEXT NOT NULL, session BIGINT NOT NULL, seq BIGINT NOT NULL, kind TEXT NOT NULL, "
        "payload TEXT NOT NULL, recorded_at TEXT NOT NULL DEFAULT CURRENT_TIMESTAMP, "
        "UNIQUE (table_id, source, session, seq))"
    )
    conn.execute("INSERT INTO events (table_id, source, session, seq, kind, payload) "
                 "VALUES ('t1', 'shoe-1', 1, 1, 'card_drawn', '{\"card\":\"Kd\"}')")
    conn.commit()
    conn.close()
    with SqliteStore(old, "t1") as s:
        s.append("shoe-1", 1, 2, "card_drawn", {"card": "Ah"})
        assert s._conn.execute("PRAGMA page_size").fetchone()[0] == 4096
        assert [e.payload for e in s.events()] == [{"card": "Kd"}, {"card": "Ah"}]
