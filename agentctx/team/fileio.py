"""Reading and writing a worktree's team file as a file kept on a teammate's behalf.

The team file arrives through ``git pull``: whatever a teammate committed is at that path. So
it is used only when, every link followed, it lies inside its worktree (a committed
``.agentctx -> ~/.claude/commands`` would otherwise make agentctx write Claude Code slash
commands), it is a regular file (a FIFO would hang every reader, ``/dev/zero`` would fill the
memory) and it is at most :data:`~agentctx.core.safeio.SHARED_FILE_MAX` bytes. It is opened without
blocking, and written through a new file made by ``mkstemp`` in the same folder, renamed over it:
never through a link that is already there.
"""

from __future__ import annotations

import errno
from pathlib import Path

from agentctx.core import safeio


class TeamFileUnusable(OSError):
    """The team file is not a regular file, is too big, or leads outside its worktree; the
    message is one line saying which (nothing was read or written)."""


def describe(exc: OSError) -> str:
    """What is wrong with a file, in a few words, from the error a check raised."""
    if isinstance(exc, safeio.OutsideFolder):
        return f"it {exc.strerror}"
    if isinstance(exc, (safeio.NotRegularFile, IsADirectoryError)):
        return "it is not a regular file"
    if isinstance(exc, safeio.FileTooLarge):
        return f"it is {exc.strerror}"
    if exc.errno == errno.ELOOP:
        return "it is a link that changed while it was read"
    return f"it cannot be read ({exc.strerror or exc})"


def unusable(path: Path, exc: OSError, what: str = "the team file") -> TeamFileUnusable:
    """The :class:`TeamFileUnusable` for ``path`` failing a check with ``exc``."""
    return TeamFileUnusable(errno.EINVAL, f"{what} {path} is unusable: {describe(exc)}; "
                            "agentctx neither reads nor writes it")


def real_path(path: Path, root: Path | None, *, what: str = "the team file") -> Path:
    """Where ``path`` really is, checked (see the module); ``root`` ``None``: a file the user
    named, whose type and size are checked when it is read."""
    try:
        if root is None:
            return path
        return Path(safeio.check_shared_file(path, root))
    except OSError as exc:
        raise unusable(path, exc, what) from None


def read(path: Path, root: Path | None, limit: int = safeio.SHARED_FILE_MAX, *,
         what: str = "the team file") -> bytes | None:
    """The bytes of the file at ``path`` (``None`` when there is none), read without blocking.

    Raises :class:`TeamFileUnusable`."""
    real = real_path(path, root, what=what)
    try:
        return safeio.read_small(real, limit, follow=root is None)
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise unusable(path, exc, what) from None


def write(path: Path, root: Path | None, data: bytes, *, what: str = "the team file") -> Path:
    """Replace the file at ``path`` by ``data`` atomically; returns the real path written.

    Raises :class:`TeamFileUnusable` (a FIFO or folder in its place is left alone)."""
    real = real_path(path, root, what=what)
    try:
        real.parent.mkdir(parents=True, exist_ok=True)
        if root is not None:
            real_path(path, root, what=what)  # the folder just made is where it was checked
        safeio.write_atomic(real, data, 0o644)
    except TeamFileUnusable:
        raise
    except OSError as exc:
        raise unusable(path, exc, what) from None
    return real

