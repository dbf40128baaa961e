"""Special files a project folder may hold: FIFOs, devices, huge sparse files, folders.

Used by the tests that prove reading them never blocks, never fills memory and reads little.
"""

from __future__ import annotations

import os
import resource
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

MEMORY_CAP = 2 << 30  # address space of a hook process under test: a runaway read fails fast


def fifo(path: Path) -> None:
    """A named pipe with no writer: a blocking ``open`` for reading waits forever."""
    os.mkfifo(path)


def zero_device(path: Path) -> None:
    """A symlink to ``/dev/zero``: an endless read."""
    path.symlink_to("/dev/zero")


def sparse(size: int) -> Callable[[Path], None]:
    """A maker of a sparse file of ``size`` bytes (all zeros, no newline, no disk used)."""
    def make(path: Path) -> None:
        with open(path, "wb") as handle:
            handle.truncate(size)
    return make


def folder(path: Path) -> None:
    """A folder where a file is expected."""
    path.mkdir()


MAKERS: dict[str, Callable[[Path], None]] = {
    "fifo": fifo, "dev-zero": zero_device, "huge": sparse(300_000_000), "folder": folder,
}


def remove(path: Path) -> None:
    """Remove whatever is at ``path`` (a file, a link, a FIFO or a folder tree)."""
    if path.is_symlink() or path.is_file() or path.is_fifo():
        path.unlink()
    elif path.is_dir():
        for child in sorted(path.rglob("*"), key=lambda p: len(p.parts), reverse=True):
            child.rmdir() if child.is_dir() and not child.is_symlink() else child.unlink()
        path.rmdir()


def replace(path: Path, kind: str) -> None:
    """Replace whatever is at ``path`` by a special file of ``kind``."""
    remove(path)
    MAKERS[kind](path)


def bytes_read() -> int:
    """Bytes this process has read through system calls so far (``rchar`` of /proc/self/io)."""
    for line in Path("/proc/self/io").read_text(encoding="ascii").splitlines():
        if line.startswith("rchar:"):
            return int(line.split()[1])
    raise RuntimeError("no rchar in /proc/self/io")


def cap_memory() -> None:
    """``preexec_fn`` for a child: its address space is capped at :data:`MEMORY_CAP`."""
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_CAP, MEMORY_CAP))


@contextmanager
def limited_memory(extra: int = 1 << 30) -> Iterator[None]:
    """Cap this process's address space at its current size plus ``extra`` bytes for a while:
    an endless read in the code under test raises ``MemoryError`` instead of exhausting the
    machine."""
    size = 0
    for line in Path("/proc/self/status").read_text(encoding="ascii").splitlines():
        if line.startswith("VmSize:"):
            size = int(line.split()[1]) * 1024
    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    resource.setrlimit(resource.RLIMIT_AS, (size + extra, hard))
    try:
        yield
    finally:
        resource.setrlimit(resource.RLIMIT_AS, (soft, hard))
