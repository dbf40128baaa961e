"""What every pane shares: the one open store, the active project, the pane on screen, the clock
and the settings. Panes are given this state when they are made; none of them reaches for the
App."""

from __future__ import annotations

import asyncio
import os
import sqlite3
import threading
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import TypeVar

from agentctx.core import config
from agentctx.store import Store, StoreError
from agentctx.store import projects as proj
from agentctx.store import records as rec
from agentctx.store.models import GLOBAL_PROJECT, Project
from agentctx.tui.registry import FIRST
from agentctx.tui.writes import Writer

T = TypeVar("T")
# What a read of the store may raise that the browser shows as a notification.
STORE_ERRORS = (StoreError, sqlite3.Error, OSError)


def guarded(read: Callable[[], object], notify: Callable[..., object]) -> None:
    """Run a read of the store; a locked or damaged store becomes a notification, never a
    traceback (the app stays up and ``r`` tries again)."""
    try:
        read()
    except STORE_ERRORS as exc:
        notify(f"cannot read the store: {exc}", severity="error", timeout=6)


class AppState:
    """The browser's state: one :class:`Store` (used on the app's thread only), the project the
    panes show, a fixed clock for tests, and the configuration read once."""

    def __init__(self, db: Store, home: Path, *, now: datetime | None = None,
                 cfg: config.Config | None = None) -> None:
        self.db = db
        self.home = home
        self.fixed_now = now
        self.cfg = cfg or config.Config.load()
        self.project: Project | None = None
        self.current_pane = FIRST  # the id of the pane on screen
        self._counts: dict[str, tuple[tuple[int, int], int]] = {}
        self._reader: ThreadPoolExecutor | None = None
        self._reader_local = threading.local()
        self._writer: Writer | None = None

    @property
    def writer(self) -> Writer:
        """The browser's writes (one undo level, kept while the app runs)."""
        if self._writer is None:
            self._writer = Writer(self.db, self.cwd)
        return self._writer

    @property
    def db_path(self) -> Path:
        """The store's file."""
        return self.db.path

    def now(self) -> datetime:
        """The clock the panes use for "3d ago": fixed in tests, else the wall clock."""
        return self.fixed_now or datetime.now(UTC)

    def choose_default_project(self, ref: str | None, cwd: str) -> None:
        """``ref`` (id, id prefix or name), else the project of ``cwd`` as the store knows it,
        else the most recently active project. Raises the store's ``NotFound`` for a bad ref."""
        if ref:
            self.project = proj.get(self.db, ref)
            return
        self.project = proj.of_folder(self.db, cwd)
        if self.project is None:
            latest = [s.project for s in proj.list_all(self.db, limit=5)
                      if s.project.id != GLOBAL_PROJECT]
            self.project = latest[0] if latest else None

    def current_count(self) -> int:
        """The active project's current records, counted once per change of the store (another
        process's commit or a write of this app)."""
        if self.project is None:
            return 0
        mark = (self.db.data_version(), self.db.change_counter())
        cached = self._counts.get(self.project.id)
        if cached is None or cached[0] != mark:
            cached = (mark, rec.count_records(self.db, project_id=self.project.id))
            self._counts[self.project.id] = cached
        return cached[1]

    async def read(self, work: Callable[[Store], T]) -> T:
        """Run ``work`` on the reader thread's own connection (opened once, kept): searches
        run there so the app's thread keeps drawing, without a connection per keystroke."""
        if self._reader is None:
            self._reader = ThreadPoolExecutor(max_workers=1, thread_name_prefix="agentctx-read")

        def call() -> T:
            db = getattr(self._reader_local, "db", None)
            if db is None:
                db = Store.open(self.db_path, busy_timeout_ms=self.cfg.get_int("busy_timeout_ms"))
                self._reader_local.db = db
            return work(db)

        return await asyncio.get_running_loop().run_in_executor(self._reader, call)

    def close(self) -> None:
        """Close the reader thread's connection and the app's own."""
        if self._reader is not None:
            def close_reader() -> None:
                db = getattr(self._reader_local, "db", None)
                if db is not None:
                    db.close()
            self._reader.submit(close_reader)
            self._reader.shutdown(wait=True)
            self._reader = None
        self.db.close()

    @contextmanager
    def worker_store(self) -> Iterator[Store]:
        """A second connection to the same store, for a worker thread (SQLite connections stay
        on the thread that opened them)."""
        db = Store.open(self.db_path, busy_timeout_ms=self.cfg.get_int("busy_timeout_ms"))
        try:
            yield db
        finally:
            db.close()

    @property
    def cwd(self) -> str:
        """The folder the app was started in."""
        return os.getcwd()
