"""agentctx's own logs: the one writer of every file under ``<home>/logs``.

Each log is private and append-only: the folder is 0700, the file 0600 and opened with
``O_APPEND``, and an entry goes out in one ``write`` (processes logging at once never interleave
inside an entry). Every entry passes through the one redactor. A log is rotated — one ``.1``
copy kept — once it reaches the ``log_max_bytes`` knob. Writing a log never raises: a failed log
line must not fail what it reports on.

Standard library only, without the ``logging`` package (several milliseconds of imports on the
hook hot path); the MCP server bridges its ``logging`` records here.
"""

from __future__ import annotations

import os

from agentctx.core import config

FOLDER = "logs"


def folder() -> str:
    """``<home>/logs`` (not created)."""
    return os.path.join(config.home_dir(), FOLDER)


def open_append(name: str, *, where: str | os.PathLike[str] | None = None,
                max_bytes: int | None = None) -> int:
    """A descriptor open for appending to log ``name`` in ``where`` (default ``<home>/logs``),
    the folder made (0700) and the file rotated first when it has reached ``max_bytes``
    (default: the ``log_max_bytes`` knob). The caller closes it. Raises :class:`OSError`."""
    base = os.fspath(where) if where is not None else folder()
    os.makedirs(base, mode=0o700, exist_ok=True)
    path = os.path.join(base, name)
    try:
        if os.path.getsize(path) >= (max_bytes if max_bytes is not None else _max_bytes()):
            os.replace(path, path + ".1")
    except OSError:  # no log yet
        pass
    return os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)


def append(name: str, text: str, *, where: str | os.PathLike[str] | None = None,
           max_bytes: int | None = None) -> None:
    """Append ``text``, redacted and ending in a newline, to log ``name`` (see
    :func:`open_append`); never raises."""
    try:
        from agentctx.core.redact import redact  # late: its patterns cost a hook that logs nothing

        entry = redact(text).rstrip("\n") + "\n"
        fd = open_append(name, where=where, max_bytes=max_bytes)
        try:
            os.write(fd, entry.encode("utf-8", "replace"))
        finally:
            os.close(fd)
    except Exception:  # a log is best effort
        pass


def _max_bytes() -> int:
    try:
        return config.Config.load().get_int("log_max_bytes")
    except Exception:
        return int(config.KNOBS["log_max_bytes"].default)
