"""The hook log, ``<home>/logs/hooks.log``: one line per problem (time, event, session, message),
every line redacted, rotated to ``hooks.log.1`` when it reaches the ``log_max_bytes`` knob.

Written by the hooks and by the detached children they start (``agentctx finish-session``),
without the ``logging`` package, which would cost the hot path several milliseconds of imports.
"""

from __future__ import annotations

import os
import time

from agentctx.core import config

LOG_NAME = "hooks.log"
# Longest message kept in one log line (a traceback-free summary, never a payload dump).
LOG_LINE_MAX = 2000


def log_problem(event: str, session_id: str, message: str, *,
                max_bytes: int | None = None) -> None:
    """Append one redacted line to ``<home>/logs/hooks.log``; never raises.

    The log is rotated (one ``.1`` kept) once it reaches ``max_bytes`` (default: the
    ``log_max_bytes`` knob).
    """
    try:
        from agentctx.core.redact import redact

        folder = os.path.join(str(config.home()), "logs")
        os.makedirs(folder, mode=0o700, exist_ok=True)
        path = os.path.join(folder, LOG_NAME)
        if max_bytes is None:
            max_bytes = _log_max_bytes()
        try:
            if os.path.getsize(path) >= max_bytes:
                os.replace(path, path + ".1")
        except OSError:
            pass
        flat = " ".join(redact(message).split())[:LOG_LINE_MAX]
        stamp = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime())
        line = f"{stamp}Z {_token(event, 40)} {_token(session_id, 36)} {flat}\n"
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        try:
            os.write(fd, line.encode("utf-8", "replace"))
        finally:
            os.close(fd)
    except Exception:  # the log is best effort: a hook never fails because of it
        pass


def _token(text: str, limit: int) -> str:
    """``text`` as one printable word of the log line (``-`` when empty)."""
    word = "".join(ch if ch.isprintable() and not ch.isspace() else "?" for ch in text[:limit])
    return word or "-"


def _log_max_bytes() -> int:
    try:
        return config.Config.load().get_int("log_max_bytes")
    except Exception:
        return int(config.KNOBS["log_max_bytes"].default)
