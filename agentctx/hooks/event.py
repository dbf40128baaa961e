"""What every hook shares: the call's context (payload, config, store, project) and the hook log
(:mod:`agentctx.core.hooklog`, shared with the detached children the hooks start)."""

from __future__ import annotations

import os

from agentctx.core import config
from agentctx.store.db import Store
from agentctx.store.projects import Resolved, resolve


class HookContext:
    """One hook call: the event, its parsed payload and configuration, and a lazily opened store."""

    __slots__ = ("_db", "_resolved", "cfg", "event", "hook_event_name", "payload")

    def __init__(self, event: str, hook_event_name: str, payload: dict[str, object],
                 cfg: config.Config) -> None:
        self.event = event
        self.hook_event_name = hook_event_name
        self.payload = payload
        self.cfg = cfg
        self._db: Store | None = None
        self._resolved: Resolved | None = None

    # ----------------------------------------------------------------------- payload fields

    @property
    def session_id(self) -> str:
        """The Claude Code session id (validated by the dispatcher)."""
        return str(self.payload["session_id"])

    @property
    def cwd(self) -> str:
        """The folder the hook runs for (the payload's ``cwd``, else the process's)."""
        value = self.payload.get("cwd")
        return value if isinstance(value, str) and value else os.getcwd()

    @property
    def transcript_path(self) -> str | None:
        """The session transcript's path, when the payload names one."""
        value = self.payload.get("transcript_path")
        return value if isinstance(value, str) and value and "\x00" not in value else None

    def text(self, key: str) -> str:
        """A string field of the payload (``""`` when missing or not a string)."""
        value = self.payload.get(key)
        return value if isinstance(value, str) else ""

    # ----------------------------------------------------------------------- store and project

    def store(self) -> Store:
        """The store, opened once per call with the short hook busy timeout."""
        if self._db is None:
            self._db = Store.open(busy_timeout_ms=self.cfg.get_int("hook_busy_timeout_ms"))
        return self._db

    def resolved(self) -> Resolved:
        """The project and worktree of the payload's ``cwd``."""
        if self._resolved is None:
            self._resolved = resolve(self.store(), self.cwd)
        return self._resolved

    def close(self) -> None:
        """Close the store if it was opened."""
        if self._db is not None:
            self._db.close()
            self._db = None


def log_problem(event: str, session_id: str, message: str, *,
                max_bytes: int | None = None) -> None:
    """Append one redacted line to the hook log (:func:`agentctx.core.hooklog.log_problem`);
    never raises."""
    from agentctx.core import hooklog  # late: only a hook with a problem to log writes it

    hooklog.log_problem(event, session_id, message, max_bytes=max_bytes)


def describe(exc: BaseException) -> str:
    """``Type: message (file:line)`` of an exception, naming the innermost frame."""
    where = ""
    tb = exc.__traceback__
    while tb is not None and tb.tb_next is not None:
        tb = tb.tb_next
    if tb is not None:
        where = f" ({os.path.basename(tb.tb_frame.f_code.co_filename)}:{tb.tb_lineno})"
    return f"{type(exc).__name__}: {exc}{where}"
