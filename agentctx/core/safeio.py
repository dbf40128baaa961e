"""Reading files agentctx does not own (build files, git files, transcripts, config) safely.

A hook runs inside someone's editor on every prompt: a ``.git`` or ``pyproject.toml`` that is a
FIFO must not block it, a ``package.json`` linked to ``/dev/zero`` must not fill its memory, and a
300 MB build file must not outlast its time limit. So a file is opened without blocking
(``O_NONBLOCK``: opening a FIFO with no writer returns at once), must be a regular file by
``fstat`` on the open descriptor (no race with a swapped path), and small files are read up to a
limit. Standard library only (``config.json`` is read on the hook hot path).
"""

from __future__ import annotations

import errno
import os
import stat

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import BinaryIO

# Most agentctx reads of a build, git or config file (a real one is a few kilobytes).
SMALL_FILE_MAX = 1_000_000
# A file agentctx reads and writes on a team's behalf (the team file): a few thousand records.
SHARED_FILE_MAX = 32_000_000


class NotRegularFile(OSError):
    """The path is a FIFO, a device, a socket or a folder, not a regular file."""


class FileTooLarge(OSError):
    """The file is larger than the caller's limit."""


class OutsideFolder(OSError):
    """The path, its links followed, leads outside the folder it has to stay in."""


def inside(path: str | os.PathLike[str], root: str | os.PathLike[str]) -> str:
    """The real path of ``path`` (every link followed), which must lie inside ``root``.

    Raises :class:`OutsideFolder` naming where the path really leads. A path that does not
    exist yet is resolved as far as it exists (a dangling link is followed to its target).
    """
    real_root = os.path.realpath(root)
    real = os.path.realpath(path)
    if real != real_root and not real.startswith(real_root.rstrip(os.sep) + os.sep):
        raise OutsideFolder(errno.EXDEV, f"leads outside {os.fspath(root)} (to {real})",
                            os.fspath(path))
    return real


def check_shared_file(path: str | os.PathLike[str], root: str | os.PathLike[str],
                      limit: int = SHARED_FILE_MAX) -> str:
    """The real path of a file agentctx keeps on a team's behalf, after the checks it must pass:
    inside ``root`` once every link is followed, a regular file when it exists, at most
    ``limit`` bytes. A ``stat``, never an open: it cannot block.

    Raises :class:`OutsideFolder`, :class:`NotRegularFile` (``IsADirectoryError`` for a folder)
    or :class:`FileTooLarge`. A missing file passes (it is about to be written).
    """
    real = inside(path, root)
    try:
        mode, size = (found := os.stat(real)).st_mode, found.st_size
    except FileNotFoundError:
        return real
    if stat.S_ISDIR(mode):
        raise IsADirectoryError(errno.EISDIR, "is a folder", os.fspath(path))
    if not stat.S_ISREG(mode):
        raise NotRegularFile(errno.EINVAL, "not a regular file", os.fspath(path))
    if size > limit:
        raise FileTooLarge(errno.EFBIG, f"larger than {limit:,} bytes", os.fspath(path))
    return real


def open_regular(path: str | os.PathLike[str], *, follow: bool = True) -> int:
    """A read-only descriptor of ``path``, which must be a regular file (never blocks).

    ``follow=False`` refuses a link as the last part of the path (``ELOOP``).
    Raises :class:`NotRegularFile` (``IsADirectoryError`` for a folder), or the ``OSError`` of
    ``open`` (``FileNotFoundError``, ``PermissionError`` …).
    """
    flags = os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC
    fd = os.open(path, flags if follow else flags | os.O_NOFOLLOW)
    try:
        mode = os.fstat(fd).st_mode
        if stat.S_ISDIR(mode):
            raise IsADirectoryError(errno.EISDIR, "is a folder", os.fspath(path))
        if not stat.S_ISREG(mode):
            raise NotRegularFile(errno.EINVAL, "not a regular file", os.fspath(path))
    except BaseException:
        os.close(fd)
        raise
    return fd


def read_small(path: str | os.PathLike[str], limit: int = SMALL_FILE_MAX, *,
               follow: bool = True) -> bytes:
    """The bytes of the regular file ``path``; :class:`FileTooLarge` past ``limit`` bytes.

    Never reads more than ``limit + 1`` bytes, whatever the file claims or becomes.
    ``follow`` as for :func:`open_regular`.
    """
    fd = open_regular(path, follow=follow)
    try:
        if os.fstat(fd).st_size > limit:
            raise FileTooLarge(errno.EFBIG, f"larger than {limit:,} bytes", os.fspath(path))
        chunks: list[bytes] = []
        left = limit + 1
        while left > 0:
            chunk = os.read(fd, min(left, 1 << 16))
            if not chunk:
                break
            chunks.append(chunk)
            left -= len(chunk)
    finally:
        os.close(fd)
    data = b"".join(chunks)
    if len(data) > limit:
        raise FileTooLarge(errno.EFBIG, f"larger than {limit:,} bytes", os.fspath(path))
    return data


def read_small_text(path: str | os.PathLike[str], limit: int = SMALL_FILE_MAX) -> str:
    """:func:`read_small` decoded as UTF-8 (undecodable bytes replaced)."""
    return read_small(path, limit).decode("utf-8", "replace")


def write_atomic(path: str | os.PathLike[str], data: bytes, mode: int = 0o644) -> None:
    """Replace ``path`` by a file holding ``data``, atomically.

    The bytes go to a new file made by ``mkstemp`` in the same folder (a name nobody can plant
    a link at beforehand), are flushed to disk, and the file is renamed over ``path``: a link
    already at ``path`` is replaced, never written through, and a reader sees the old file or
    the new one, never half of one.
    """
    import tempfile

    folder, name = os.path.split(os.path.abspath(path))
    fd, temp = tempfile.mkstemp(prefix=f".{name}.", suffix=".tmp", dir=folder)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(temp, mode)
        os.replace(temp, path)
    except BaseException:
        try:
            os.unlink(temp)
        except FileNotFoundError:
            pass
        raise


def open_stream(path: str | os.PathLike[str]) -> BinaryIO:
    """The regular file ``path`` as a buffered binary stream (for reading line by line)."""
    fd = open_regular(path)
    try:
        os.set_blocking(fd, True)
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def read_line(handle: BinaryIO, limit: int) -> tuple[bytes | None, int, bool]:
    """The next line of ``handle``: ``(line, bytes consumed, whether it ended with a newline)``.

    A line longer than ``limit`` bytes is consumed without being kept: ``line`` is ``None``.
    At the end of the file: ``(b"", 0, False)``.
    """
    line = handle.readline(limit + 1)
    if line.endswith(b"\n") or len(line) <= limit:
        return line, len(line), line.endswith(b"\n")
    consumed = len(line)
    del line  # the over-long line is not kept: free it before reading on
    while True:
        more = handle.readline(1 << 20)
        consumed += len(more)
        if not more or more.endswith(b"\n"):
            return None, consumed, bool(more)
