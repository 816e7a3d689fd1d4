"""One way to open SQLite, shared by the local store and the reference service (neutral: no Textual, no models).

A connection guarded by a lock (SQLite serialises writers anyway), foreign keys on (unless a database keeps them
itself), WAL for files, and a schema versioned with ``PRAGMA user_version``: each migration step is one script,
committed with its version number or not at all. With ``readers=True`` (the reference service, whose requests run
in a thread pool; the local store, whose reads must not wait for a sync's writes) each thread reads a file through a
connection of its own, so reads run side by side (WAL lets readers go on while one writer writes) and only writes
take the lock; a thread inside a transaction reads through the writing connection, and so sees its own writes. A
database file and the files beside it are the user's alone (0600; folders made 0700).
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
import threading
import urllib.parse
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any, ClassVar

from pigeon.files import FOLDER_MODE, private_file, private_folders

MEMORY = ":memory:"
SIDE_FILES = ("-journal", "-wal", "-shm")
"""The files SQLite keeps beside a database, named after it."""

Params = Sequence[Any] | dict[str, Any]


class SchemaTooNew(Exception):
    """The database was written by a newer Pigeon."""


class Interrupted(Exception):
    """A read stopped because its answer had become moot (see :meth:`Database.unless`)."""


ASK_EVERY = 20_000
"""SQLite's steps between two asks whether a read is still wanted (well under a millisecond of its work)."""


class StoreUnwritable(OSError):
    """The disk refused a write (full, read-only, gone): nothing of it was kept. The message names the folder."""


# SQLite's result codes that mean the disk or the folder, not the data (extended codes start with these names)
_DISK_FAULTS = ("SQLITE_FULL", "SQLITE_READONLY", "SQLITE_CANTOPEN", "SQLITE_IOERR", "SQLITE_PERM")


def disk_fault(exc: BaseException, path: str) -> StoreUnwritable | None:
    """``exc`` as a :class:`StoreUnwritable` naming the database's folder, when it is a disk fault; else ``None``."""
    if isinstance(exc, StoreUnwritable):
        return exc
    folder = Path(path).expanduser().parent
    if isinstance(exc, sqlite3.Error):
        name = str(getattr(exc, "sqlite_errorname", "") or "")
        if not name.startswith(_DISK_FAULTS):
            return None
        if name == "SQLITE_FULL":
            why = "the disk is full"
        elif name.startswith(("SQLITE_READONLY", "SQLITE_PERM")) or (name == "SQLITE_CANTOPEN" and _read_only(path)):
            why = "the folder or the file in it is read-only"
        else:
            why = f"{exc} (is the folder read-only, or the disk full?)"
    elif isinstance(exc, OSError):
        why = exc.strerror or str(exc)
    else:
        return None
    return StoreUnwritable(f"Cannot write to {folder}: {why}. Nothing was written; what the folder holds is unharmed.")


def _read_only(path: str) -> bool:
    """Whether this process may not write the database's folder or file (a cleanly closed database in a read-only
    folder cannot be opened: SQLite must make its ``-wal`` beside it)."""
    file = Path(path).expanduser()
    folder = file.parent
    return (folder.exists() and not os.access(folder, os.W_OK)) or (file.exists() and not os.access(file, os.W_OK))


def _private_database(path: Path) -> None:
    """The database file made 0600 before SQLite opens it: the journal, ``-wal`` and ``-shm`` files SQLite makes
    beside it take its mode. Ones an older version left readable by others are tightened."""
    private_file(path)
    for suffix in SIDE_FILES:
        private_file(Path(f"{path}{suffix}"), create=False)


def connect(path: str, *, create: bool = True) -> sqlite3.Connection:
    """A connection that any thread may use (callers hold the lock), rows readable by name; not ``create``: only to a
    database that exists."""
    if create or path == MEMORY:
        conn = sqlite3.connect(path, check_same_thread=False, isolation_level=None)
    else:
        uri = f"file:{urllib.parse.quote(path)}?mode=rw"
        conn = sqlite3.connect(uri, check_same_thread=False, isolation_level=None, uri=True)
    conn.row_factory = sqlite3.Row
    conn.execute("PRAGMA busy_timeout = 5000")
    return conn


class Database:
    """A SQLite file (or ``":memory:"``) with its migrations applied."""

    foreign_keys: ClassVar[bool] = True
    """Whether SQLite enforces the schema's foreign keys (off where the code keeps them: see the local store)."""

    def __init__(
        self,
        path: str | Path,
        migrations: Sequence[str],
        *,
        folder_mode: int = FOLDER_MODE,
        readers: bool = False,
        reader_cache_kib: int | None = None,
    ) -> None:
        self.path = str(path)
        self._lock = threading.RLock()
        try:
            if self.path != MEMORY:
                private_folders(Path(self.path).expanduser().parent, folder_mode)
                _private_database(Path(self.path))
            self._conn = connect(self.path)
        except (sqlite3.Error, OSError) as exc:
            self._raise_fault(exc)
            raise
        try:
            self._conn.execute(f"PRAGMA foreign_keys = {'ON' if self.foreign_keys else 'OFF'}")
            if self.path != MEMORY:
                self._conn.execute("PRAGMA journal_mode = WAL")
                self._conn.execute("PRAGMA synchronous = NORMAL")
            self._migrate(migrations)
        except BaseException as exc:
            self._conn.close()
            self._raise_fault(exc)
            raise
        self._readers = readers and self.path != MEMORY  # (a memory database lives in its one connection)
        self._reader_cache_kib = reader_cache_kib  # (SQLite's page cache of each reading connection; None: its own)
        self._local = threading.local()
        self._opened: dict[threading.Thread, sqlite3.Connection] = {}  # each reading thread's connection
        self._opened_lock = threading.Lock()  # (not the write lock: a reader opens while a write is under way)
        self._closed = False

    def _reader(self) -> sqlite3.Connection | None:
        """This thread's connection for reads, when reads go side by side; ``None``: read under the lock."""
        if not self._readers or self._closed or getattr(self._local, "writing", False):
            return None
        conn: sqlite3.Connection | None = getattr(self._local, "conn", None)
        if conn is None:
            if getattr(self._local, "unopened", False):
                return None
            try:
                conn = connect(self.path, create=False)  # (a file removed since is not made again, empty)
                conn.execute("PRAGMA query_only = ON")
                if self._reader_cache_kib is not None:
                    conn.execute(f"PRAGMA cache_size = -{int(self._reader_cache_kib)}")
                conn.execute("PRAGMA schema_version").fetchone()  # (the file opened for reading, or an error now)
            except sqlite3.Error:
                if conn is not None:
                    conn.close()
                self._local.unopened = True  # (a folder made read-only since: the writing connection still reads)
                return None
            self._local.conn = conn
            with self._opened_lock:
                for ended in [thread for thread in self._opened if not thread.is_alive()]:
                    self._opened.pop(ended).close()  # (a thread that has ended: its connection is no one's)
                self._opened[threading.current_thread()] = conn
        return conn

    def _migrate(self, migrations: Sequence[str]) -> None:
        known = len(migrations)
        with self._lock:
            version = int(self._conn.execute("PRAGMA user_version").fetchone()[0])
            if version > known:
                raise SchemaTooNew(f"{self.path} has schema version {version}; this Pigeon knows up to {known}")
            for target in range(version, known):
                self._conn.executescript(
                    f"BEGIN IMMEDIATE;\n{migrations[target]}\nPRAGMA user_version = {target + 1};\nCOMMIT;"
                )

    def dump(self) -> bytes:
        """The whole database as bytes (SQLite's serialization): a memory database made in one process, for another."""
        with self._lock:
            return self._conn.serialize()

    def load(self, data: bytes) -> None:
        """This database's content replaced by ``data``, which :meth:`dump` made (of the same schema)."""
        with self._lock:
            self._conn.deserialize(data)

    @property
    def schema_version(self) -> int:
        return int(self.rows("PRAGMA user_version")[0][0])

    def close(self) -> None:
        """Close the database: this thread's connections and those of threads that have ended. Another thread's
        may be reading now (closed under a read, SQLite can crash the process): it closes as its thread ends, and
        that thread's next read fails, as on the writing connection."""
        with self._lock, self._opened_lock:
            self._closed = True
            me = threading.current_thread()
            for thread, reader in self._opened.items():
                if thread is me or not thread.is_alive():
                    reader.close()
            self._opened.clear()
            self._conn.close()

    @contextlib.contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        """``BEGIN IMMEDIATE`` ... ``COMMIT``, rolled back on any error. The error raised is the first one (SQLite
        may have rolled back by itself, on a full disk); a disk fault becomes :class:`StoreUnwritable`."""
        with self._lock:
            writing = getattr(self._local, "writing", False)
            self._local.writing = True  # (this thread's reads meanwhile see what it writes)
            try:
                self._conn.execute("BEGIN IMMEDIATE")
                try:
                    yield self._conn
                    self._conn.execute("COMMIT")
                except BaseException:
                    if self._conn.in_transaction:
                        with contextlib.suppress(sqlite3.Error):
                            self._conn.execute("ROLLBACK")
                    raise
            except sqlite3.Error as exc:
                self._raise_fault(exc)
                raise
            finally:
                self._local.writing = writing

    def _raise_fault(self, exc: BaseException) -> None:
        """Raise ``exc`` as :class:`StoreUnwritable` if it is a disk fault (the caller re-raises the others)."""
        fault = disk_fault(exc, self.path)
        if fault is not None and fault is not exc:
            raise fault from exc

    @contextlib.contextmanager
    def unless(self, stop: Callable[[], bool]) -> Iterator[None]:
        """Reads in the block stop with :class:`Interrupted` once ``stop()`` says their answer is moot (a search
        overtaken by the next letter typed). Only a thread reading through a connection of its own is stopped:
        the writing connection is shared, and what runs on it runs to its end."""
        reader = self._reader()
        if reader is None:
            yield
            return
        reader.set_progress_handler(lambda: bool(stop()), ASK_EVERY)
        try:
            yield
        except sqlite3.OperationalError as exc:
            if getattr(exc, "sqlite_errorname", "") == "SQLITE_INTERRUPT":
                raise Interrupted(str(exc)) from exc
            raise
        finally:
            reader.set_progress_handler(None, 0)

    def rows(self, sql: str, params: Params = ()) -> list[sqlite3.Row]:
        reader = self._reader()
        if reader is not None:
            return reader.execute(sql, params).fetchall()
        with self._lock:
            return self._conn.execute(sql, params).fetchall()

    def each(self, sql: str, params: Params = (), *, chunk: int = 500) -> Iterator[sqlite3.Row]:
        """The rows one at a time, read ``chunk`` at a time from one statement (one snapshot): a long answer is
        never all in memory at once. Exhaust it in the thread that started it."""
        reader = self._reader()
        if reader is None:
            yield from self.rows(sql, params)
            return
        cursor = reader.execute(sql, params)
        while batch := cursor.fetchmany(chunk):
            yield from batch

    def row(self, sql: str, params: Params = ()) -> sqlite3.Row | None:
        reader = self._reader()
        if reader is not None:
            return reader.execute(sql, params).fetchone()  # type: ignore[no-any-return]
        with self._lock:
            found: sqlite3.Row | None = self._conn.execute(sql, params).fetchone()
            return found
