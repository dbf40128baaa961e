"""The store's connection: one SQLite file in WAL mode, with busy timeouts and transactions.

Opening is cheap (the hook hot path opens a store per call): ``PRAGMA user_version`` tells whether
the schema is current; only an older store imports the migration machinery (sqlite-utils).
"""

from __future__ import annotations

import os
import sqlite3

from agentctx.core.lean import NamedTuple
from agentctx.store.errors import StoreError, StoreLocked, StoreTooNew

# Start-up cost matters here (hooks): typing, pathlib and contextlib are not imported at run time.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence
    from pathlib import Path
    from typing import Any

    Params = Sequence[Any] | dict[str, Any]

# Bump together with a new migration in agentctx.store.schema (a test checks they agree).
SCHEMA_VERSION = 9
DEFAULT_BUSY_TIMEOUT_MS = 3000


class Store:
    """An open agentctx store. Use :meth:`open`; close it (or use it as a context manager).

    All SQL in agentctx goes through this class and the modules of ``agentctx.store``.
    Writes that touch more than one row run inside :meth:`write`.
    """

    def __init__(self, conn: sqlite3.Connection, path: Path | str) -> None:
        self.conn = conn
        self._path = str(path)
        self._depth = 0
        self.read_only = False  # opened read-only: the file or its folder cannot be written

    @property
    def path(self) -> Path:
        """The store's file."""
        from pathlib import Path

        return Path(self._path)

    @classmethod
    def open(cls, path: Path | str | None = None, *,
             busy_timeout_ms: int = DEFAULT_BUSY_TIMEOUT_MS) -> Store:
        """Open (creating or upgrading as needed) the store at ``path``.

        The default path is ``<home>/agentctx.db``. Raises :class:`StoreTooNew` for a store
        written by a newer agentctx and :class:`StoreLocked` when an upgrade cannot get the lock.
        """
        if path is None:
            from agentctx.core import config

            config.ensure_home_dir()
            target = config.db_file()
        else:
            target = os.fspath(path)
            if not _cannot_write(target):
                os.makedirs(os.path.dirname(os.path.abspath(target)), exist_ok=True)
        if _cannot_write(target):
            return cls._open_read_only(target, busy_timeout_ms)
        create_private(target)
        conn = _connect(target, busy_timeout_ms)
        try:
            version = int(conn.execute("PRAGMA user_version").fetchone()[0])
            if version > SCHEMA_VERSION:
                raise StoreTooNew(
                    f"{target} was written by a newer agentctx (schema {version}, this version "
                    f"reads up to {SCHEMA_VERSION}); upgrade agentctx")
            if version < SCHEMA_VERSION:
                conn.close()
                from pathlib import Path

                from agentctx.store import schema

                try:
                    schema.upgrade(Path(target))
                except sqlite3.OperationalError as exc:
                    if "locked" in str(exc) or "busy" in str(exc):
                        raise StoreLocked(f"{target} is locked; try again") from None
                    raise StoreError(f"cannot upgrade {target}: {exc}") from None
                conn = _connect(target, busy_timeout_ms)
        except BaseException:
            conn.close()
            raise
        return cls(conn, target)

    @classmethod
    def _open_read_only(cls, target: str, busy_timeout_ms: int) -> Store:
        """A store whose file (or folder) cannot be written, opened for reading only: every
        read works, a write raises :class:`StoreError` saying so."""
        from urllib.parse import quote

        uri = "file:" + quote(os.path.abspath(target))
        conn = None
        # mode=ro needs the -shm of a WAL store; without one in a folder nobody may write to,
        # only an immutable open can read it (nobody can change it then either).
        for query in ("?mode=ro", "?mode=ro&immutable=1"):
            try:
                conn = sqlite3.connect(uri + query, uri=True, timeout=busy_timeout_ms / 1000,
                                       isolation_level=None, check_same_thread=True)
                version = int(conn.execute("PRAGMA user_version").fetchone()[0])
                break
            except sqlite3.Error as exc:
                if conn is not None:
                    conn.close()
                    conn = None
                problem = exc
        if conn is None:
            raise StoreError(f"cannot open {target} (read-only): {problem}") from None
        if version != SCHEMA_VERSION:
            conn.close()
            raise StoreError(f"{target} is read-only and has schema {version}; this agentctx "
                             f"reads schema {SCHEMA_VERSION} and cannot upgrade it")
        conn.row_factory = sqlite3.Row
        conn.execute(f"PRAGMA busy_timeout = {int(busy_timeout_ms)}")
        store = cls(conn, target)
        store.read_only = True
        return store

    def close(self) -> None:
        """Close the connection."""
        self.conn.close()

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def write(self) -> _Transaction:
        """A write transaction (``BEGIN IMMEDIATE``); nested calls become savepoints.

        Use it as ``with db.write(): …``: everything inside commits together or not at all.
        Raises :class:`StoreError` on a store opened read-only.
        """
        if self.read_only:
            raise StoreError(f"{self._path} is read-only: nothing can be changed (check the "
                             "file's and its folder's permissions)")
        return _Transaction(self)

    def execute(self, sql: str, params: Params = ()) -> sqlite3.Cursor:
        """Run one statement."""
        return self.conn.execute(sql, params)

    def rows(self, sql: str, params: Params = ()) -> list[sqlite3.Row]:
        """Run a query and fetch all rows (``sqlite3.Row``: by index or column name)."""
        return self.conn.execute(sql, params).fetchall()

    def one(self, sql: str, params: Params = ()) -> sqlite3.Row | None:
        """Run a query and fetch the first row, or ``None``."""
        row: sqlite3.Row | None = self.conn.execute(sql, params).fetchone()
        return row

    def scalar(self, sql: str, params: Params = ()) -> Any:
        """Run a query and return the first column of the first row (``None`` when empty)."""
        row = self.conn.execute(sql, params).fetchone()
        return None if row is None else row[0]

    def change_counter(self) -> int:
        """The store-wide counter bumped by every meaningful record write."""
        return int(self.scalar("SELECT value FROM meta WHERE key = 'changes'") or 0)

    def data_version(self) -> int:
        """A number that changes whenever another connection commits to the store (SQLite's
        ``PRAGMA data_version``): a live view polls it, and reads only when it moved."""
        return int(self.conn.execute("PRAGMA data_version").fetchone()[0])

    def backup_to(self, path: Path | str) -> None:
        """Copy the whole store, consistently, into the file ``path`` (SQLite's online backup:
        other connections keep reading and writing meanwhile)."""
        target = sqlite3.connect(os.fspath(path))
        try:
            self.conn.backup(target)
        finally:
            target.close()

    def quick_check(self, limit: int = 5) -> list[str]:
        """``PRAGMA quick_check``'s findings: ``[]`` when the file is sound, else up to ``limit``
        problems (a page that is not a page, a broken index, a malformed record)."""
        try:
            found = [str(row[0]) for row in
                     self.conn.execute(f"PRAGMA quick_check({int(limit)})").fetchall()]
        except sqlite3.DatabaseError as exc:
            return [str(exc)]
        return [] if found == ["ok"] else found

    def has_fts(self) -> bool:
        """Whether the FTS5 index exists and this SQLite can use it."""
        try:
            self.conn.execute("SELECT 1 FROM records_fts LIMIT 0")
        except sqlite3.OperationalError:
            return False
        return True

    def meta_get(self, key: str) -> Any:
        """A value from the ``meta`` table (``None`` when absent)."""
        return self.scalar("SELECT value FROM meta WHERE key = ?", (key,))

    def meta_set(self, key: str, value: Any) -> None:
        """Set a value in the ``meta`` table."""
        self.execute("INSERT INTO meta (key, value) VALUES (?, ?) "
                     "ON CONFLICT (key) DO UPDATE SET value = excluded.value", (key, value))


class SqliteFeatures(NamedTuple):
    """What this interpreter's SQLite offers agentctx."""

    version: str
    fts5: bool  # full-text search (else search falls back to a LIKE scan)
    json1: bool  # JSON functions (required: session meta is merged with json_set)


def sqlite_features() -> SqliteFeatures:
    """Probe this interpreter's SQLite in a throwaway in-memory database (``agentctx doctor``)."""
    conn = sqlite3.connect(":memory:")
    try:
        try:
            conn.execute("CREATE VIRTUAL TABLE t USING fts5(a)")
            fts5 = True
        except sqlite3.OperationalError:
            fts5 = False
        try:
            conn.execute("SELECT json_set('{}', '$.a', 1)")
            json1 = True
        except sqlite3.OperationalError:
            json1 = False
    finally:
        conn.close()
    return SqliteFeatures(sqlite3.sqlite_version, fts5, json1)


class _Transaction:
    """The context manager :meth:`Store.write` returns (a class: contextlib costs start-up)."""

    __slots__ = ("_done", "_store", "_undo")

    def __init__(self, store: Store) -> None:
        self._store = store
        self._done = ""
        self._undo: tuple[str, ...] = ()

    def __enter__(self) -> None:
        store = self._store
        if store._depth == 0:
            try:
                store.conn.execute("BEGIN IMMEDIATE")
            except sqlite3.OperationalError as exc:
                raise StoreLocked(f"the store is busy ({exc}); try again") from None
            self._done, self._undo = "COMMIT", ("ROLLBACK",)
        else:
            name = f"sp{store._depth}"
            store.conn.execute(f"SAVEPOINT {name}")
            self._done, self._undo = f"RELEASE {name}", (f"ROLLBACK TO {name}", f"RELEASE {name}")
        store._depth += 1

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: object) -> None:
        store = self._store
        store._depth -= 1
        if exc_type is not None:
            for statement in self._undo:
                store.conn.execute(statement)
            return
        store.conn.execute(self._done)


def _cannot_write(target: str) -> bool:
    """Whether an existing store file, or the folder its ``-wal`` and ``-shm`` live in, cannot
    be written by this process."""
    if not os.path.exists(target):
        return False
    if not os.access(target, os.W_OK):
        return True
    folder = os.path.dirname(os.path.abspath(target))
    return not os.access(folder, os.W_OK) and not (
        os.path.exists(target + "-wal") and os.path.exists(target + "-shm"))


def create_private(path: str) -> None:
    """Create ``path`` empty with mode 0600 if it does not exist (an empty file is a valid new
    database). SQLite gives the ``-wal`` and ``-shm`` files the database file's mode."""
    if os.path.exists(path):
        return
    try:
        os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o600))
    except FileExistsError:
        pass
    except OSError as exc:
        raise StoreError(f"cannot create {path}: {exc.strerror}") from None


def _connect(path: str, busy_timeout_ms: int) -> sqlite3.Connection:
    try:
        conn = sqlite3.connect(path, timeout=busy_timeout_ms / 1000, isolation_level=None,
                               check_same_thread=True)
    except sqlite3.Error as exc:
        raise StoreError(f"cannot open {path}: {exc}") from None
    conn.row_factory = sqlite3.Row
    conn.execute(f"PRAGMA busy_timeout = {int(busy_timeout_ms)}")
    conn.execute("PRAGMA foreign_keys = ON")
    try:
        mode = conn.execute("PRAGMA journal_mode").fetchone()[0]
        if mode != "wal":
            conn.execute("PRAGMA journal_mode = WAL")
        conn.execute("PRAGMA synchronous = NORMAL")
    except sqlite3.DatabaseError as exc:
        conn.close()
        if "not a database" in str(exc) or "malformed" in str(exc):
            raise StoreError(f"{path} is not an agentctx store (or is damaged): {exc}") from None
        if "locked" in str(exc) or "busy" in str(exc):
            raise StoreLocked(f"{path} is locked; try again") from None
        raise StoreError(f"cannot open {path}: {exc}") from None
    return conn
