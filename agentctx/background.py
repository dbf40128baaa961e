"""Background work without a daemon: detached children and the locks that keep them single.

A hook that needs slow work (extraction, consolidation) spawns a detached child and returns at
once; the child finishes and exits. :func:`exclusive` is a non-blocking ``flock`` under
``<home>/locks`` so two children of the same kind never run together; the lock dies with its
process, so a killed child never leaves a stale lock. Standard library only (hook hot path).
"""

from __future__ import annotations

import fcntl
import os
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from agentctx import config


def lock_path(name: str) -> Path:
    """Path of the lock file called ``name`` (letters, digits, ``-`` and ``_`` kept)."""
    safe = "".join(ch if ch.isalnum() or ch in "-_" else "_" for ch in name)[:120]
    folder = config.ensure_home() / "locks"
    folder.mkdir(mode=0o700, exist_ok=True)
    return folder / f"{safe}.lock"


@contextmanager
def exclusive(name: str) -> Iterator[bool]:
    """Try to take the lock ``name`` without waiting; yields whether this process holds it."""
    handle = open(lock_path(name), "a+b")  # noqa: SIM115 - held for the whole block
    try:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            yield False
            return
        try:
            yield True
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)
    finally:
        handle.close()


def is_locked(name: str) -> bool:
    """Whether another process holds the lock ``name`` right now."""
    with exclusive(name) as acquired:
        return not acquired


def spawn_detached(args: list[str], *, log_name: str = "background.log",
                   env: dict[str, str] | None = None) -> int:
    """Start ``python -m agentctx <args>`` fully detached and return its pid at once.

    The child gets its own session (it survives the hook's process group being killed), no
    stdin, and appends its output to ``<home>/logs/<log_name>``.
    """
    logs = config.ensure_home() / "logs"
    with open(logs / log_name, "ab") as log:
        process = subprocess.Popen(
            [sys.executable, "-m", "agentctx", *args],
            stdin=subprocess.DEVNULL, stdout=log, stderr=log, start_new_session=True,
            close_fds=True, env=env if env is not None else dict(os.environ))
    return process.pid
