"""The hook log, ``<home>/logs/hooks.log``: one line per problem (time, event, session, message),
every line redacted, rotated to ``hooks.log.1`` when it reaches the ``log_max_bytes`` knob; the one
log writer (:mod:`agentctx.core.logfile`) writes it.

Written by the hooks (loaded only when a hook has a problem to log) and by the detached children
they start (``agentctx finish-session``), without the ``logging`` package.
"""

from __future__ import annotations

import time

from agentctx.core import logfile

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
