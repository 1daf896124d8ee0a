"""Connections to one project database: a single locked writer and per-thread readers.

All writes go through one connection guarded by a re-entrant lock, in ``BEGIN IMMEDIATE``
transactions (so other processes wait on the busy timeout instead of failing mid-transaction).
Readers use their own connections (one per thread, ``query_only``) and, thanks to WAL, neither
block the writer nor are blocked by it. A thread that is inside a write transaction reads through
the writer, so it sees its own uncommitted changes.

A project that cannot be written (a read-only mount, a folder of another user) is opened with
readers only, through SQLite's ``mode=ro`` — or ``immutable=1`` when the WAL files are not there
(they could not be created) — and every write is refused with the reason.
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Any

import peewee

from tunaflow_tui.core.storage.failures import describe_failure
from tunaflow_tui.core.storage.storage_errors import StorageError

BUSY_TIMEOUT_SECONDS = 5.0
READS_DRAIN_SECONDS = 5.0
"""How long closing waits for reads under way in other threads before it leaves their connections open."""

_COMMON_PRAGMAS: tuple[tuple[str, object], ...] = (
    ("foreign_keys", 1),
    ("busy_timeout", int(BUSY_TIMEOUT_SECONDS * 1000)),
    ("synchronous", "NORMAL"),
)


class _TrackedDatabase(peewee.SqliteDatabase):
    """A peewee database that remembers every connection it opened, so all can be closed at once."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._opened: list[sqlite3.Connection] = []
        self._opened_lock = threading.Lock()

    def _connect(self) -> sqlite3.Connection:
        conn: sqlite3.Connection = super()._connect()  # type: ignore[misc]  # stubs omit it
        with self._opened_lock:
            self._opened.append(conn)
        return conn

    def close_everywhere(self) -> None:
        """Close the connections of every thread (the store is going away)."""
        with self._opened_lock:
            opened, self._opened = self._opened, []
        for conn in opened:
            with suppress(sqlite3.Error):
                conn.close()


@contextmanager
def translated_errors(database: Path | None = None) -> Iterator[None]:
    """Turn driver and peewee errors into :class:`StorageError` with a human message (see ``failures``)."""
    try:
        yield
    except (peewee.PeeweeException, sqlite3.Error) as exc:
        raise StorageError(describe_failure(exc, database)) from exc


class DatabaseAccess:
    """The writer and the readers of one database file."""

    def __init__(self, path: Path, *, read_only: str | None = None) -> None:
        """``read_only``: why the file cannot be written (then it is only read, see the module)."""
        self.path = path
        self.read_only = read_only
        reader_name, reader_uri = str(path), False
        if read_only is not None:
            wal_files = all(Path(f"{path}{suffix}").exists() for suffix in ("-wal", "-shm"))
            reader_name, reader_uri = f"{path.as_uri()}?{'mode=ro' if wal_files else 'immutable=1'}", True
        self._writer = _TrackedDatabase(
            str(path),
            pragmas=(("journal_mode", "wal"), *_COMMON_PRAGMAS),
            timeout=BUSY_TIMEOUT_SECONDS,
            lock_type="IMMEDIATE",
            thread_safe=False,
            check_same_thread=False,
            autoconnect=False,
        )
        self._readers = _TrackedDatabase(
            reader_name,
            pragmas=(*_COMMON_PRAGMAS, ("query_only", 1)),
            timeout=BUSY_TIMEOUT_SECONDS,
            thread_safe=True,
            check_same_thread=False,
            uri=reader_uri,
        )
        self._lock = threading.RLock()
        self._owner: int | None = None
        self._closed = False
        self._reads = 0
        self._reads_changed = threading.Condition(threading.Lock())

    def connect(self) -> sqlite3.Connection:
        """Open the writer connection and return the raw driver connection (for migrations)."""
        self._refuse_if_read_only()
        with self._lock, translated_errors(self.path):
            self._writer.connect()
            conn: sqlite3.Connection = self._writer.connection()  # type: ignore[no-untyped-call]
            return conn

    @property
    def writer_connection(self) -> sqlite3.Connection:
        """The raw writer connection; only use it while holding :meth:`writing`."""
        conn: sqlite3.Connection = self._writer.connection()  # type: ignore[no-untyped-call]
        return conn

    @contextmanager
    def writing(self) -> Iterator[peewee.SqliteDatabase]:
        """Hold the writer for one atomic transaction (a savepoint when nested)."""
        with self._lock:
            if self._closed:
                raise StorageError("The project database is closed.")
            self._refuse_if_read_only()
            outer = self._owner is None
            self._owner = threading.get_ident()
            try:
                with translated_errors(self.path), self._writer.atomic():
                    yield self._writer
            finally:
                if outer:
                    self._owner = None

    @contextmanager
    def reading(self) -> Iterator[peewee.SqliteDatabase]:
        """A consistent read snapshot: the writer inside this thread's transaction, else a reader."""
        if self._owner == threading.get_ident():
            if self._closed:
                raise StorageError("The project database is closed.")
            with self._lock:
                yield self._writer
            return
        with self._reads_changed:
            if self._closed:
                raise StorageError("The project database is closed.")
            self._reads += 1
        try:
            with translated_errors(self.path), self._readers.atomic():
                yield self._readers
        finally:
            with self._reads_changed:
                self._reads -= 1
                self._reads_changed.notify_all()

    def _refuse_if_read_only(self) -> None:
        if self.read_only is not None:
            raise StorageError(f"The project is read-only ({self.read_only}): tunaflow can show it but not change it.")

    def data_version(self) -> int:
        """SQLite's ``PRAGMA data_version`` on the writer: it changes when another process commits.

        The writer's own commits leave it as it is, so a change means someone else wrote.
        """
        with self._lock, translated_errors(self.path):
            if self._closed:
                raise StorageError("The project database is closed.")
            row = self.writer_connection.execute("PRAGMA data_version").fetchone()
        return int(row[0])

    def close(self) -> None:
        """Close the writer and every reader connection, once the reads under way have finished.

        A reader connection closed while another thread's query runs on it crashes the process
        (SQLite frees what the query is using), so new reads are refused from here on and the ones
        under way get :data:`READS_DRAIN_SECONDS` to end.
        """
        with self._lock, self._reads_changed:
            if self._closed:
                return
            self._closed = True
        with self._reads_changed:
            drained = self._reads_changed.wait_for(lambda: self._reads == 0, timeout=READS_DRAIN_SECONDS)
        with self._lock:
            if drained:
                self._readers.close_everywhere()
            self._writer.close_everywhere()
