"""Background work without a daemon: detached children and the locks that keep them single.

A hook that needs slow work (extraction, consolidation) spawns a detached child and returns at
once; the child finishes and exits. :func:`exclusive` is a non-blocking ``flock`` under
``<home>/locks`` so two children of the same kind never run together; the lock dies with its
process, so a killed child never leaves a stale lock. Standard library only (hook hot path):
the session-end hook must return within Claude Code's 1.5 s, so spawning uses ``os.posix_spawn``
(no ``subprocess``, ``contextlib`` or ``pathlib`` import) where the platform has it.
"""

from __future__ import annotations

import fcntl
import os
import sys

from agentctx.core import config, logfile

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import BinaryIO


def _lock_file(name: str) -> str:
    safe = "".join(ch if ch.isalnum() or ch in "-_" else "_" for ch in name)[:120]
    folder = os.path.join(config.ensure_home_dir(), "locks")
    try:
        os.mkdir(folder, mode=0o700)
    except FileExistsError:
        pass
    return os.path.join(folder, f"{safe}.lock")


class exclusive:  # lower case: it reads like the function it replaced, ``with exclusive(n) as ok``
    """Try to take the lock ``name`` without waiting; ``as`` gives whether this process holds it.

    The lock is released when the block ends (or the process dies).
    """

    __slots__ = ("_handle", "_held", "_name")

    def __init__(self, name: str) -> None:
        self._name = name
        self._handle: BinaryIO | None = None
        self._held = False

    def __enter__(self) -> bool:
        fd = os.open(_lock_file(self._name), os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
        self._handle = open(fd, "a+b")  # held until __exit__
        try:
            fcntl.flock(self._handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            self._held = False
        except BaseException:
            self._handle.close()
            raise
        else:
            self._held = True
        return self._held

    def __exit__(self, *exc: object) -> None:
        handle, self._handle = self._handle, None
        if handle is None:
            return
        try:
            if self._held:
                fcntl.flock(handle, fcntl.LOCK_UN)
        finally:
            handle.close()


def is_locked(name: str) -> bool:
    """Whether another process holds the lock ``name`` right now."""
    with exclusive(name) as acquired:
        return not acquired


# Variables that make a Python start-up run code other than agentctx's (PYTHONPATH is handled
# on its own: an entry that is agentctx's own install is kept).
_FOREIGN_CODE_ENV = ("PYTHONSTARTUP", "PYTHONINSPECT")


def python_command(args: list[str]) -> list[str]:
    """The argv of ``python -m agentctx <args>`` for a child process.

    ``-P`` keeps the working folder off the module path: a hook runs in the user's project, and
    a ``logging.py`` or ``secrets.py`` there must never be imported by agentctx.
    """
    return [sys.executable, "-P", "-m", "agentctx", *args]


def child_environment(base: dict[str, str] | None = None) -> dict[str, str]:
    """``base`` (default: this process's environment) made safe for :func:`python_command`.

    ``PYTHONSTARTUP`` and ``PYTHONINSPECT`` go; ``PYTHONPATH`` (often the project, set by
    direnv) goes too, except an entry that is the folder agentctx itself is imported from, and
    so does ``PYTHONUSERBASE`` unless agentctx is installed under it.
    """
    environment = dict(os.environ if base is None else base)
    for key in _FOREIGN_CODE_ENV:
        environment.pop(key, None)
    search_path = environment.pop("PYTHONPATH", "")
    own = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    if any(entry and os.path.abspath(entry) == own for entry in search_path.split(os.pathsep)):
        environment["PYTHONPATH"] = own
    # A user base (its site folder's .pth files and usercustomize.py run at start-up) is kept
    # only when agentctx itself is installed under it (pip install --user with a moved base).
    user_base = environment.pop("PYTHONUSERBASE", "")
    if user_base and own.startswith(os.path.abspath(user_base).rstrip(os.sep) + os.sep):
        environment["PYTHONUSERBASE"] = user_base
    return environment


def spawn_detached(args: list[str], *, log_name: str = "background.log",
                   env: dict[str, str] | None = None) -> int:
    """Start ``python -P -m agentctx <args>`` fully detached and return its pid at once.

    The child gets its own session (it survives the hook's process group being killed), no
    stdin, the environment of :func:`child_environment`, and appends its output to
    ``<home>/logs/<log_name>``.
    """
    argv = python_command(args)
    environment = child_environment(env)
    log_fd = logfile.open_append(log_name)
    try:
        if hasattr(os, "posix_spawn"):
            try:
                # Only stdin, stdout and stderr are inherited: every descriptor Python opens is
                # close-on-exec, so nothing else leaks into the child.
                return os.posix_spawn(argv[0], argv, environment, setsid=True, file_actions=[
                    (os.POSIX_SPAWN_OPEN, 0, os.devnull, os.O_RDONLY, 0),
                    (os.POSIX_SPAWN_DUP2, log_fd, 1),
                    (os.POSIX_SPAWN_DUP2, log_fd, 2)])
            except NotImplementedError:  # no POSIX_SPAWN_SETSID in this C library
                pass
        import subprocess

        process = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=log_fd, stderr=log_fd,
                                   start_new_session=True, close_fds=True, env=environment)
        return process.pid
    finally:
        os.close(log_fd)
