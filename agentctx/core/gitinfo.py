"""Project identity from git, read straight from the repository files (no ``git`` subprocess).

A project is identified by its ``origin`` remote (else the first remote by name), normalized so
``git@github.com:a/b.git`` and ``https://github.com/a/b`` are one project, then hashed; without a
remote, by the main repository root's path; outside git, by the folder's path. All worktrees of a
repository share one project; handovers are kept per worktree. Git's files are read through
:mod:`agentctx.core.safeio` (a FIFO or a huge file is skipped, never waited on). Standard library
only.
"""

from __future__ import annotations

import configparser
import hashlib
import os
import re
from pathlib import Path

from agentctx.core.lean import NamedTuple
from agentctx.core.safeio import read_small_text

_SCP_LIKE = re.compile(r"^(?:(?P<user>[^@/]+)@)?(?P<host>[^:/]+):(?P<path>(?!//).+)$")
_URL = re.compile(r"^(?P<scheme>[a-zA-Z][a-zA-Z0-9+.-]*)://(?:(?P<auth>[^@/]*)@)?"
                  r"(?P<host>[^/:]*)(?::(?P<port>\d*))?(?P<path>/.*)?$")
_DEFAULT_PORTS = {"22", "80", "443", "9418"}


class RepoInfo(NamedTuple):
    """Where a path sits in git."""

    worktree: str  # top of the worktree containing the path
    main_root: str  # top of the main worktree (shared by all worktrees)
    remote: str | None  # normalized remote, origin first


class Identity(NamedTuple):
    """What a project is called and how it is recognised."""

    id: str
    name: str
    root: str  # main repository root, or the folder
    worktree: str  # this worktree's root, or the folder
    remote: str | None


def normalize_remote(url: str) -> str:
    """Normalize a git remote URL: no scheme, user, password, default port, ``.git`` or ``/``.

    The host is lower-cased; the path keeps its case (it is case-sensitive on most hosts).
    """
    raw = url.strip()
    match = _URL.match(raw)
    if match:
        if match.group("scheme").lower() == "file":
            return (match.group("path") or "").rstrip("/").removesuffix(".git")
        host = match.group("host").lower()
        port = match.group("port")
        if port and port not in _DEFAULT_PORTS:
            host = f"{host}:{port}"
        path = match.group("path") or ""
    else:
        scp = _SCP_LIKE.match(raw)
        if scp and not raw.startswith(("/", ".")):
            host, path = scp.group("host").lower(), "/" + scp.group("path")
        else:
            return raw.rstrip("/").removesuffix(".git").rstrip("/")
    path = re.sub(r"/+", "/", path).rstrip("/").removesuffix(".git").rstrip("/")
    return host + path


def _read_gitdir(dot_git: Path) -> Path | None:
    if dot_git.is_dir():
        return dot_git
    try:
        text = read_small_text(dot_git).strip()
    except OSError:  # a FIFO, a device, a huge file: not a repository we can read
        return None
    if not text.startswith("gitdir:") or "\x00" in text:
        return None
    target = Path(text.split(":", 1)[1].strip())
    try:
        found = target if target.is_absolute() else (dot_git.parent / target).resolve()
        return found if found.is_dir() else None
    except (OSError, RuntimeError):  # a name too long, a symlink loop
        return None


def _remotes(common_dir: Path) -> dict[str, str]:
    parser = configparser.RawConfigParser(strict=False)
    try:
        parser.read_string(read_small_text(common_dir / "config"))
    except (OSError, configparser.Error):
        return {}
    found: dict[str, str] = {}
    for section in parser.sections():
        match = re.match(r'^remote\s+"(.+)"$', section.strip())
        if match and parser.has_option(section, "url"):
            found[match.group(1)] = parser.get(section, "url").strip().strip('"')
    return found


def find_repo(path: str | Path) -> RepoInfo | None:
    """The git repository (worktree, main root, normalized remote) containing ``path``."""
    start = Path(path).expanduser()
    try:
        current = start.resolve()
    except OSError:
        current = start.absolute()
    for folder in (current, *current.parents):
        dot_git = folder / ".git"
        if not os.path.lexists(dot_git):
            continue
        gitdir = _read_gitdir(dot_git)
        if gitdir is None:
            return None
        common = gitdir
        commondir_file = gitdir / "commondir"
        if os.path.lexists(commondir_file):
            try:
                pointer = read_small_text(commondir_file).strip()
                found = (gitdir / pointer).resolve() if pointer else gitdir
                common = found if found.is_dir() else gitdir
            except (OSError, ValueError, RuntimeError):  # unreadable, a NUL byte, a loop
                common = gitdir
        main_root = common.parent if common.name == ".git" else common
        remotes = _remotes(common)
        chosen = remotes.get("origin") or (remotes[sorted(remotes)[0]] if remotes else None)
        return RepoInfo(str(folder), str(main_root), normalize_remote(chosen) if chosen else None)
    return None


def _hash(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def identify(path: str | Path) -> Identity:
    """The project identity of ``path`` (see the module docstring for the rules)."""
    repo = find_repo(path)
    if repo is not None and repo.remote:
        name = repo.remote.rstrip("/").split("/")[-1] or Path(repo.main_root).name
        return Identity(_hash("remote:" + repo.remote), name, repo.main_root, repo.worktree,
                        repo.remote)
    if repo is not None:
        return Identity(_hash("path:" + repo.main_root), Path(repo.main_root).name,
                        repo.main_root, repo.worktree, None)
    folder = str(Path(path).expanduser().resolve())
    return Identity(_hash("path:" + folder), Path(folder).name or folder, folder, folder, None)
