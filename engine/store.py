"""The event store and the hand log: the engine's durable memory.

Theory of operation
-------------------
The engine is event-sourced: state is a fold over the inputs it accepted.  So
the one thing that must never be lost is the list of accepted inputs, in the
order they were accepted.  ``EventStore.append`` writes one input and returns
only once the write is durable (SQLite: WAL journal with ``synchronous=FULL``,
so the commit is fsynced; PostgreSQL: a committed transaction).  Only then does
the engine publish the input's effects, so nothing a player saw can be
missing from the log after a crash.

Every input is identified by ``(source, session, seq)`` from the wire header
(see ``engine.wire``).  MQTT QoS 1 may deliver a message twice, and a
publisher re-sends un-acknowledged messages after a reconnect; the store's
unique key turns the second delivery into ``Appended(duplicate=True)`` with
the offset of the first, and no second row.  De-duplication is therefore as
durable as the log itself, across engine restarts.

``events(after=offset)`` replays the log in offset order (in batches, so a
long session never sits in memory at once).  Offsets grow strictly but are
not dense: PostgreSQL's sequences skip numbers after a rolled-back
transaction, and one PostgreSQL database holds many tables' logs.  Each store
is bound to one table id; a cardroom points every table's engine at the same
PostgreSQL database.

The hand log keeps each finished hand once: id, table, variant, start and end
times (ISO-8601 text, UTC, supplied by the caller so this module needs no
clock), the hand's event log as JSON and its PHH text.

Both back ends speak the same interface and are tested by one parametrized
suite; the SQL differs only in placeholders and the key column type.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import sqlite3
import threading
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

_BATCH = 500

log = logging.getLogger(__name__)


class StoreError(RuntimeError):
    """The store cannot be opened or written; the message says what to check."""


class StoreDamaged(StoreError):
    """The store is damaged: opening it would start the table with fewer inputs than were
    committed.  The message (one line) says what is wrong and how to recover."""


#: How to recover from a damaged store (said with every ``StoreDamaged``).
RECOVER = ("restore the store from its backup, or move it aside and start a new one "
           "(finished hands stay in the old file's hand log: studtable history export); "
           "details: studtable store check --store PATH")


@dataclass(frozen=True, slots=True)
class Appended:
    """The result of an append: where the input sits, and whether it was already there."""

    offset: int
    duplicate: bool

    @property
    def status(self) -> str:
        return "duplicate" if self.duplicate else "new"


@dataclass(frozen=True, slots=True)
class StoredEvent:
    offset: int
    source: str
    session: int
    seq: int
    kind: str
    payload: Mapping[str, Any]
    recorded_at: str = ""  # when it was stored (UTC, the database's clock)


@dataclass(frozen=True, slots=True)
class HandSummary:
    hand_id: str
    table: str
    variant: str
    started_at: str
    ended_at: str | None


@dataclass(frozen=True, slots=True)
class HandRecord:
    hand_id: str
    table: str
    variant: str
    started_at: str
    ended_at: str | None
    events: Sequence[Any]
    phh: str | None

    @property
    def summary(self) -> HandSummary:
        return HandSummary(self.hand_id, self.table, self.variant, self.started_at, self.ended_at)


class EventStore(Protocol):
    """What the engine service needs from a store (both back ends implement it)."""

    table: str

    def append(
        self, source: str, session: int, seq: int, kind: str, payload: Mapping[str, Any], *, durable: bool = True
    ) -> Appended: ...

    def sync(self) -> None: ...

    def events(self, after: int = 0) -> Iterator[StoredEvent]: ...

    def heads(self) -> dict[str, tuple[int, int]]: ...

    def record_hand(self, hand: HandRecord) -> bool: ...

    def list_hands(self) -> list[HandSummary]: ...

    def get_hand(self, hand_id: str) -> HandRecord | None: ...

    def maintain(self, idle: bool = False) -> None: ...

    def close(self) -> None: ...


def _dumps(value: Any) -> str:
    try:
        return json.dumps(value, separators=(",", ":"), ensure_ascii=False, allow_nan=False, sort_keys=True)
    except (TypeError, ValueError) as exc:
        raise StoreError(f"payload is not plain JSON and cannot be stored: {exc}") from None


class _SqlStore:
    """The shared logic; subclasses provide a DB-API connection and the placeholder style."""

    _ph = "?"
    _key_type = "INTEGER PRIMARY KEY AUTOINCREMENT"

    def __init__(self, table: str) -> None:
        self.table = table
        self._lock = threading.Lock()

    def maintain(self, idle: bool = False) -> None:
        """Housekeeping the owner runs when nothing waits on the store (SQLite: checkpoints);
        ``idle``: the table has been quiet for a while, a good moment for it."""

    def sync(self) -> None:
        """Make every append so far durable (those made with ``durable=False`` too).  Safe to call
        from another thread while appends go on; those that began after the call may not be covered."""

    def _lazy(self, on: bool) -> None:
        """Commits without waiting for the disk (``on``), or back to durable commits (a back end
        that cannot do the first keeps every commit durable)."""

    # -- subclass hooks -----------------------------------------------------------
    def _execute(self, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        raise NotImplementedError

    def _write(self, statements: Sequence[tuple[str, Sequence[Any]]]) -> list[list[tuple[Any, ...]]]:
        """Run statements in one committed transaction; return each one's rows."""
        raise NotImplementedError

    def close(self) -> None:
        raise NotImplementedError

    # -- schema -------------------------------------------------------------------
    def _q(self, sql: str) -> str:
        return sql.replace("?", self._ph)

    def _schema(self) -> list[tuple[str, Sequence[Any]]]:
        return [
            (
                f"""CREATE TABLE IF NOT EXISTS events (
                    event_offset {self._key_type},
                    table_id TEXT NOT NULL,
                    source TEXT NOT NULL,
                    session BIGINT NOT NULL,
                    seq BIGINT NOT NULL,
                    kind TEXT NOT NULL,
                    payload TEXT NOT NULL,
                    recorded_at TEXT NOT NULL DEFAULT CURRENT_TIMESTAMP,
                    UNIQUE (table_id, source, session, seq))""",
                (),
            ),
            ("CREATE INDEX IF NOT EXISTS events_by_table ON events (table_id, event_offset)", ()),
            (
                """CREATE TABLE IF NOT EXISTS hands (
                    hand_id TEXT PRIMARY KEY,
                    table_id TEXT NOT NULL,
                    variant TEXT NOT NULL,
                    started_at TEXT NOT NULL,
                    ended_at TEXT,
                    events TEXT NOT NULL,
                    phh TEXT)""",
                (),
            ),
            ("CREATE INDEX IF NOT EXISTS hands_by_table ON hands (table_id, started_at)", ()),
        ]

    # -- events -------------------------------------------------------------------
    def append(self, source: str, session: int, seq: int, kind: str, payload: Mapping[str, Any], *,
               durable: bool = True) -> Appended:
        """Append one accepted input; durable when this returns.  A repeated key is not stored twice.

        ``durable=False``: committed (every later read sees it, in its place in the order) but
        not yet synced to the disk: it becomes durable with the next durable append or ``sync()``,
        whichever comes first (SQLite: the next fsync of the WAL, which holds it before any later
        commit).  The caller must not show its effects, or acknowledge it, before then."""
        data = _dumps(payload)
        with self._lock:
            if not durable:
                self._lazy(True)
            try:
                inserted, existing = self._write(
                    [
                        (
                            self._q(
                                "INSERT INTO events (table_id, source, session, seq, kind, payload) VALUES (?, ?, ?, ?, ?, ?) "
                                "ON CONFLICT (table_id, source, session, seq) DO NOTHING RETURNING event_offset"
                            ),
                            (self.table, source, session, seq, kind, data),
                        ),
                        (
                            self._q(
                                "SELECT event_offset FROM events WHERE table_id = ? AND source = ? AND session = ? AND seq = ?"
                            ),
                            (self.table, source, session, seq),
                        ),
                    ]
                )
            finally:
                if not durable:
                    self._lazy(False)
        if inserted:
            return Appended(int(inserted[0][0]), duplicate=False)
        return Appended(int(existing[0][0]), duplicate=True)

    def events(self, after: int = 0) -> Iterator[StoredEvent]:
        """Every stored input with an offset greater than ``after``, in offset order."""
        last = after
        while True:
            with self._lock:
                rows = self._execute(
                    self._q(
                        "SELECT event_offset, source, session, seq, kind, payload, recorded_at FROM events "
                        "WHERE table_id = ? AND event_offset > ? ORDER BY event_offset LIMIT ?"
                    ),
                    (self.table, last, _BATCH),
                )
            for offset, source, session, seq, kind, payload, recorded_at in rows:
                try:
                    data = json.loads(payload)
                except (TypeError, ValueError) as exc:
                    raise StoreDamaged(
                        f"the event store's input {offset} ({source}, session {session}, seq {seq}) is not "
                        f"JSON ({exc}); {RECOVER}"
                    ) from None
                if not isinstance(data, dict):
                    raise StoreDamaged(f"the event store's input {offset} is not a JSON object; {RECOVER}")
                yield StoredEvent(int(offset), source, int(session), int(seq), kind, data, str(recorded_at or ""))
            if len(rows) < _BATCH:
                return
            last = int(rows[-1][0])

    def heads(self) -> dict[str, tuple[int, int]]:
        """For each source, its latest session and the highest seq stored in it (to seed a SourceTracker)."""
        with self._lock:
            rows = self._execute(
                self._q(
                    "SELECT e.source, e.session, MAX(e.seq) FROM events e "
                    "JOIN (SELECT source, MAX(session) AS s FROM events WHERE table_id = ? GROUP BY source) m "
                    "ON e.source = m.source AND e.session = m.s WHERE e.table_id = ? GROUP BY e.source, e.session"
                ),
                (self.table, self.table),
            )
        return {source: (int(session), int(seq)) for source, session, seq in rows}

    # -- hands --------------------------------------------------------------------
    def record_hand(self, hand: HandRecord) -> bool:
        """Keep a finished hand; False (and nothing written) if that hand id is already kept."""
        with self._lock:
            (rows,) = self._write(
                [
                    (
                        self._q(
                            "INSERT INTO hands (hand_id, table_id, variant, started_at, ended_at, events, phh) "
                            "VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (hand_id) DO NOTHING RETURNING hand_id"
                        ),
                        (
                            hand.hand_id,
                            hand.table,
                            hand.variant,
                            hand.started_at,
                            hand.ended_at,
                            _dumps(list(hand.events)),
                            hand.phh,
                        ),
                    )
                ]
            )
        return bool(rows)

    def list_hands(self) -> list[HandSummary]:
        """This table's hands, oldest first."""
        with self._lock:
            rows = self._execute(
                self._q(
                    "SELECT hand_id, table_id, variant, started_at, ended_at FROM hands WHERE table_id = ? "
                    "ORDER BY started_at, hand_id"
                ),
                (self.table,),
            )
        return [HandSummary(*row) for row in rows]

    def get_hand(self, hand_id: str) -> HandRecord | None:
        with self._lock:
            rows = self._execute(
                self._q(
                    "SELECT hand_id, table_id, variant, started_at, ended_at, events, phh FROM hands "
                    "WHERE hand_id = ?"
                ),
                (hand_id,),
            )
        if not rows:
            return None
        hid, table, variant, started, ended, events, phh = rows[0]
        return HandRecord(hid, table, variant, started, ended, json.loads(events), phh)

    def __enter__(self) -> _SqlStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class SqliteStore(_SqlStore):
    """The embedded store: one SQLite file per table (or shared), WAL, fsync on every commit."""

    # A plain rowid key for a new store (an existing one keeps AUTOINCREMENT): rows are never
    # deleted, so the next offset is always the largest + 1 and offsets still only grow, and an
    # append no longer updates the sqlite_sequence page: one page less in every fsync.
    _key_type = "INTEGER PRIMARY KEY"

    def __init__(self, path: str | Path, table: str) -> None:
        super().__init__(table)
        self.path = Path(path)
        created = _private(self.path)
        if not created:
            problem = damage_before_open(self.path)
            if problem:
                raise StoreDamaged(f"the event store {self.path} {problem}; {RECOVER}")
        try:
            self._conn = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False, timeout=30)
            # Small pages for a new store (an existing one keeps its own): an append touches
            # three pages (the row and two indexes), all written to the WAL and fsynced; 1 KB
            # pages make that ~3 KB instead of ~12-16 KB per input, and on the disks measured
            # the tail of the fsync shrinks with it (p99 about 4 ms against 7.6 ms under load,
            # same run, interleaved).
            self._conn.execute(f"PRAGMA page_size={PAGE_SIZE}")
            mode = self._conn.execute("PRAGMA journal_mode=WAL").fetchone()[0]
            if mode != "wal":
                raise StoreError(
                    f"{self.path}: SQLite refused WAL mode (got {mode!r}); is it on a network filesystem?"
                )
            # FULL: the WAL is fsynced at every commit, so a returned append survives a power cut.
            self._conn.execute("PRAGMA synchronous=FULL")
            # Checkpoints (copying the WAL back into the database file: more writes and fsyncs)
            # are not left to SQLite, which does one inside whichever commit crosses ~1000
            # pages; the owner calls ``maintain()`` when nothing waits on it (the engine: after
            # publishing an input's state), so an append costs one WAL fsync.  See ``maintain``.
            self._conn.execute("PRAGMA wal_autocheckpoint=0")
            if not created:
                verdict = [str(r[0]) for r in self._conn.execute("PRAGMA quick_check").fetchall()]
                if verdict != ["ok"]:
                    self._conn.close()
                    found = " ".join(" ".join(verdict[:3]).split())
                    raise StoreDamaged(f"the event store {self.path} is damaged ({found}); {RECOVER}")
            for sql, params in self._schema():
                self._conn.execute(sql, params)
        except sqlite3.DatabaseError as exc:
            if isinstance(exc, sqlite3.OperationalError) and "unable to open" in str(exc):
                raise StoreError(
                    f"cannot open the event store {self.path}: {exc}; check the directory exists and is writable"
                ) from exc
            raise StoreDamaged(f"the event store {self.path} is damaged ({' '.join(str(exc).split())}); "
                               f"{RECOVER}") from exc
        except sqlite3.Error as exc:
            raise StoreError(
                f"cannot open the event store {self.path}: {exc}; check the directory exists and is writable"
            ) from exc
        self._since_checkpoint = 0
        self._wal_fd: int | None = None  # opened at the first sync()
        self._sync_lock = threading.Lock()

    def _execute(self, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        return list(self._conn.execute(sql, tuple(params)).fetchall())

    def _write(self, statements: Sequence[tuple[str, Sequence[Any]]]) -> list[list[tuple[Any, ...]]]:
        out: list[list[tuple[Any, ...]]] = []
        try:
            self._conn.execute("BEGIN IMMEDIATE")
            try:
                for sql, params in statements:
                    out.append(list(self._conn.execute(sql, tuple(params)).fetchall()))
                self._conn.execute("COMMIT")
            except BaseException:
                # SQLite may already have rolled back (a full disk does): rolling back again would
                # raise "cannot rollback - no transaction is active" and hide the real error.
                if self._conn.in_transaction:
                    with contextlib.suppress(sqlite3.Error):
                        self._conn.execute("ROLLBACK")
                raise
        except sqlite3.Error as exc:
            raise StoreError(f"the event store cannot write: {exc} ({self.path})") from exc
        self._since_checkpoint += 1
        if self._since_checkpoint >= CHECKPOINT_INLINE:
            self._checkpoint()  # an owner that never calls maintain(): as SQLite itself would
        return out

    def maintain(self, idle: bool = False) -> None:
        """Checkpoint (call it when no one waits): when the table is ``idle`` and anything was
        committed since the last one, or when many commits have gathered in the WAL.

        A checkpoint run between commits copies the whole WAL, so the next commit starts the
        WAL file from its beginning again: the file stops growing, and a commit's fsync then
        has no file-size change (no filesystem journal commit) to wait for.  A checkpoint
        running beside a stream of commits would not do that."""
        if self._since_checkpoint >= CHECKPOINT_EVERY or (idle and self._since_checkpoint):
            with self._lock:
                try:
                    self._checkpoint()
                except sqlite3.Error as exc:  # a full disk: the WAL still holds every commit
                    log.warning("store checkpoint failed (%s); the next one will try again", exc)

    def _checkpoint(self) -> None:
        self._conn.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchall()
        self._since_checkpoint = 0

    def _lazy(self, on: bool) -> None:
        # NORMAL in WAL mode: the commit is written to the WAL but not fsynced; the next FULL
        # commit fsyncs the WAL, which holds it before that commit, and a checkpoint syncs the
        # WAL before copying it (sqlite.org/pragma.html#pragma_synchronous).
        try:
            self._conn.execute(f"PRAGMA synchronous={'NORMAL' if on else 'FULL'}")
        except sqlite3.Error as exc:
            raise StoreError(f"the event store cannot write: {exc} ({self.path})") from exc

    def sync(self) -> None:
        """fsync the WAL file (an fd of its own, so no lock: a commit may go on meanwhile).  The
        WAL holds every commit since the last checkpoint, which synced the ones before it."""
        with self._sync_lock:  # two threads may sync: one fd
            if self._wal_fd is None:
                try:
                    self._wal_fd = os.open(f"{self.path}-wal", os.O_RDONLY)
                except FileNotFoundError:
                    return  # no WAL: nothing is written that is not in the database file
            fd = self._wal_fd
        try:
            os.fsync(fd)
        except OSError as exc:
            raise StoreError(f"the event store cannot write: fsync of the WAL failed: {exc} ({self.path})") from exc

    def close(self) -> None:
        with self._sync_lock:
            if self._wal_fd is not None:
                os.close(self._wal_fd)
                self._wal_fd = None
        self._conn.close()


def damage_before_open(path: Path) -> str | None:
    """What is wrong with a SQLite store's files that SQLite itself would quietly get over by
    starting with less: an emptied file, a WAL deleted after an unclean stop, a WAL with damaged
    bytes before committed transactions.  None: nothing found."""
    try:
        size = path.stat().st_size
    except FileNotFoundError:
        return None
    wal = path.with_name(path.name + "-wal")
    if size == 0 and not wal.exists():
        return "is an empty file (0 bytes) where a store was expected: its inputs are gone"
    shm = path.with_name(path.name + "-shm")
    if not wal.exists() and shm.exists():
        # The last clean close checkpoints and deletes both the WAL and the -shm index; after a
        # kill both stay.  An index that still counts frames not yet copied into the database
        # (mxFrame > nBackfill, sqlite.org/walformat.html) with no WAL: those commits are gone.
        import struct

        head = shm.read_bytes()[:136]
        if len(head) >= 100:
            mx_frame, backfilled = struct.unpack("=I", head[16:20])[0], struct.unpack("=I", head[96:100])[0]
            if mx_frame > backfilled:
                return (f"was not closed cleanly and its WAL ({wal.name}) is missing: {mx_frame - backfilled} "
                        "WAL frame(s) of committed inputs since the last checkpoint are gone")
    if wal.exists():
        return wal_damage(wal)
    return None


_WAL_MAGIC = (0x377F0682, 0x377F0683)


def wal_damage(wal: Path) -> str | None:
    """Check a SQLite WAL's frame checksums (sqlite.org/fileformat2.html#walformat).  SQLite
    replays frames up to the first bad checksum and drops the rest without a word; a bad frame
    with a committed transaction of the same WAL generation after it means committed inputs
    would be lost.  A torn last transaction (a crash mid-commit, never acknowledged) is fine."""
    import struct

    data = wal.read_bytes()
    if len(data) < 32:
        return None
    magic, _version, page_size, _seq, salt1, salt2, c1, c2 = struct.unpack(">8I", data[:32])
    if magic not in _WAL_MAGIC:
        return f"has a WAL ({wal.name}) whose header is damaged"
    order = "<" if magic == 0x377F0682 else ">"

    def checksum(buf: bytes, s0: int, s1: int) -> tuple[int, int]:
        words = struct.unpack(f"{order}{len(buf) // 4}I", buf)
        for i in range(0, len(words), 2):
            s0 = (s0 + words[i] + s1) & 0xFFFFFFFF
            s1 = (s1 + words[i + 1] + s0) & 0xFFFFFFFF
        return s0, s1

    s0, s1 = checksum(data[:24], 0, 0)
    if (s0, s1) != (c1, c2):
        return f"has a WAL ({wal.name}) whose header is damaged"
    frame = 24 + page_size
    bad: int | None = None
    commits_after = 0
    count = (len(data) - 32) // frame
    for n in range(count):
        at = 32 + n * frame
        header = data[at:at + 24]
        _page, commit, f1, f2, fc1, fc2 = struct.unpack(">6I", header)
        if (f1, f2) != (salt1, salt2):
            if bad is None:
                break  # frames of an older generation: the end of this WAL
            continue
        if bad is None:
            s0, s1 = checksum(header[:8] + data[at + 24:at + frame], s0, s1)
            if (s0, s1) != (fc1, fc2):
                bad = n + 1
        if bad is not None and commit:
            commits_after += 1
    # The first commit frame at or after the bad one closes the transaction it is in (the torn
    # last one, if it is the last); any commit after that was acknowledged and would be lost.
    commits_after -= 1
    if bad is not None and commits_after > 0:
        return (f"has damaged bytes in its WAL ({wal.name}) at frame {bad} of {count}: {commits_after} committed "
                "transaction(s) after it would be lost")
    return None


def check_store(url: str | Path, table: str | None = None) -> str:
    """``studtable store check``: open the store as the engine would and read every input and hand;
    returns a one-line summary, raises ``StoreError``/``StoreDamaged`` with what is wrong."""
    store = open_store(url, table or "")
    try:
        tables = [table] if table else sorted(
            {str(r[0]) for r in store._execute("SELECT DISTINCT table_id FROM events")})
        inputs = hands = 0
        for t in tables:
            store.table = t
            inputs += sum(1 for _ in store.events())
            for h in store.list_hands():
                if store.get_hand(h.hand_id) is not None:
                    hands += 1
    except (ValueError, TypeError) as exc:  # a hand log row that is not JSON
        raise StoreDamaged(f"the hand log of {url} holds a row that is not JSON ({exc}); {RECOVER}") from None
    finally:
        store.close()
    return f"{url}: ok: {inputs} inputs and {hands} hands of {len(tables)} table(s) read back"


def _private(path: Path) -> bool:
    """The store holds every live down card: its file (and the -wal and -shm files, which SQLite
    creates with the database file's permissions) is readable by its owner only, mode 0600."""
    if str(path) in ("", ":memory:") or str(path).startswith("file:"):
        return True
    created = True
    try:
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        created = False
        try:
            fd = os.open(path, os.O_RDONLY)
        except OSError:
            return created
    except OSError:
        return created  # no folder: sqlite3.connect says so in the StoreError below
    try:
        if os.fstat(fd).st_mode & 0o077:
            os.fchmod(fd, 0o600)
    finally:
        os.close(fd)
    for suffix in ("-wal", "-shm"):
        side = path.with_name(path.name + suffix)
        try:
            if side.stat().st_mode & 0o077:
                os.chmod(side, 0o600)
        except OSError:
            pass
    return created


#: SQLite page size for a new store (see ``SqliteStore.__init__``).
PAGE_SIZE = 1024
#: Commits after which ``maintain()`` checkpoints even if the table is never idle (~16 MB of WAL).
CHECKPOINT_EVERY = 1000
#: Commits after which an append checkpoints by itself (an owner that does not call maintain()).
CHECKPOINT_INLINE = 2000


class PostgresStore(_SqlStore):
    """The cardroom store: many tables' logs in one PostgreSQL database."""

    _ph = "%s"
    _key_type = "BIGSERIAL PRIMARY KEY"

    def __init__(self, dsn: str, table: str) -> None:
        super().__init__(table)
        try:
            import psycopg
        except ImportError as exc:  # pragma: no cover - depends on the install
            raise StoreError("PostgreSQL needs psycopg: pip install 'studtable[postgres]'") from exc
        try:
            self._conn = psycopg.connect(dsn, autocommit=True)
            self._conn.execute("SET TIME ZONE 'UTC'")  # recorded_at (the database's clock) in UTC
            with self._conn.transaction():
                for sql, params in self._schema():
                    self._conn.execute(sql, params)
        except psycopg.Error as exc:
            raise StoreError(f"cannot open the PostgreSQL event store: {exc}".strip()) from exc

    def _execute(self, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        cur = self._conn.execute(sql, tuple(params))
        return list(cur.fetchall()) if cur.description else []

    def _write(self, statements: Sequence[tuple[str, Sequence[Any]]]) -> list[list[tuple[Any, ...]]]:
        import psycopg

        out: list[list[tuple[Any, ...]]] = []
        try:
            with self._conn.transaction():
                for sql, params in statements:
                    cur = self._conn.execute(sql, tuple(params))
                    out.append(list(cur.fetchall()) if cur.description else [])
        except psycopg.OperationalError as exc:
            raise StoreError(f"the event store cannot write: {exc}".strip()) from exc
        return out

    def close(self) -> None:
        self._conn.close()


def open_store(url: str | Path, table: str) -> SqliteStore | PostgresStore:
    """Open a store from a config value: ``postgresql://...`` (or ``postgres://``), else a SQLite path
    (``sqlite:///abs/path.db`` or a plain path)."""
    text = str(url)
    if text.startswith(("postgresql://", "postgres://")):
        return PostgresStore(text, table)
    if text.startswith("sqlite:///"):
        text = text[len("sqlite://") :]
    return SqliteStore(text, table)
