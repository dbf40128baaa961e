"""What every hook shares: the call's context (payload, config, store, project) and the hook log.

The log is ``<home>/logs/hooks.log``: one line per problem (time, event, session, message), every
line redacted, rotated to ``hooks.log.1`` when it reaches the ``log_max_bytes`` knob; the one log
writer (:mod:`agentctx.core.logfile`) writes it.
"""

from __future__ import annotations

import os
import time

from agentctx.core import config, logfile
from agentctx.store.db import Store
from agentctx.store.projects import Resolved, resolve

LOG_NAME = "hooks.log"
# Longest message kept in one log line (a traceback-free summary, never a payload dump).
LOG_LINE_MAX = 2000


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
    """Append one redacted line to ``<home>/logs/hooks.log``; never raises.

    The log is rotated (one ``.1`` kept) once it reaches ``max_bytes`` (default: the
    ``log_max_bytes`` knob).
    """
    try:
        from agentctx.core.redact import redact  # late: its patterns cost a hook that logs nothing

        # Redacted before the cut, so a secret across it is never half kept.
        flat = " ".join(redact(message).split())[:LOG_LINE_MAX]
    except Exception:  # the log is best effort: a hook never fails because of it
        return
    stamp = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime())
    logfile.append(LOG_NAME, f"{stamp}Z {_token(event, 40)} {_token(session_id, 36)} {flat}",
                   max_bytes=max_bytes)


def _token(text: str, limit: int) -> str:
    """``text`` as one printable word of the log line (``-`` when empty)."""
    word = "".join(ch if ch.isprintable() and not ch.isspace() else "?" for ch in text[:limit])
    return word or "-"


def describe(exc: BaseException) -> str:
    """``Type: message (file:line)`` of an exception, naming the innermost frame."""
    where = ""
    tb = exc.__traceback__
    while tb is not None and tb.tb_next is not None:
        tb = tb.tb_next
    if tb is not None:
        where = f" ({os.path.basename(tb.tb_frame.f_code.co_filename)}:{tb.tb_lineno})"
    return f"{type(exc).__name__}: {exc}{where}"
