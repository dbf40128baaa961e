"""Where things are: Claude Code's config files, the project root, the launchers."""

from __future__ import annotations

import os
import shutil
import site
import sys
from pathlib import Path
from typing import NamedTuple

import agentctx
from agentctx.core import config, gitinfo
from agentctx.install.entries import launch_argv as argv_for
from agentctx.install.jsonfile import InstallError

SCOPES = ("user", "project")
MIN_PYTHON = (3, 11)


class Targets(NamedTuple):
    """The two files one scope's installation touches."""

    scope: str
    settings: Path  # hook registrations
    mcp: Path  # MCP server registration
    project_root: Path | None  # the project folder (project scope only)


def claude_config_dir() -> Path:
    """Claude Code's user folder: ``CLAUDE_CONFIG_DIR`` when set, else ``~/.claude``."""
    raw = os.environ.get("CLAUDE_CONFIG_DIR")
    return Path(raw).expanduser().absolute() if raw else Path.home() / ".claude"


def user_settings() -> Path:
    """The user's Claude Code settings file (hooks live here)."""
    return claude_config_dir() / "settings.json"


def user_claude_json() -> Path:
    """The file of user-scope MCP servers: ``~/.claude.json`` or in ``CLAUDE_CONFIG_DIR``."""
    raw = os.environ.get("CLAUDE_CONFIG_DIR")
    return (Path(raw).expanduser().absolute() / ".claude.json") if raw \
        else Path.home() / ".claude.json"


def project_root(cwd: Path | None = None) -> Path:
    """The project folder of ``cwd``: the top of its git worktree, else the folder itself."""
    start = (cwd or Path.cwd()).absolute()
    repo = gitinfo.find_repo(start)
    return Path(repo.worktree) if repo else start


def targets(scope: str, cwd: Path | None = None) -> Targets:
    """The files of ``scope`` (``user`` or ``project``)."""
    if scope == "user":
        return Targets("user", user_settings(), user_claude_json(), None)
    if scope == "project":
        root = project_root(cwd)
        return Targets("project", root / ".claude" / "settings.json", root / ".mcp.json", root)
    raise InstallError(f"unknown scope {scope!r}: use user or project")


def find_launcher() -> str:
    """Absolute path of the installed ``agentctx`` launcher.

    The one on ``PATH`` first, else the console script next to this interpreter. The path is
    made absolute but symlinks are not resolved: a ``~/.local/bin/agentctx`` link stays stable
    across upgrades, whereas its target may carry a version.
    """
    found = shutil.which("agentctx")
    if found:
        return os.path.abspath(found)  # not resolve(): that would follow the symlink
    sibling = Path(sys.executable).parent / "agentctx"
    if sibling.is_file() and os.access(sibling, os.X_OK):
        return str(sibling.absolute())
    raise InstallError("cannot find the agentctx launcher: 'agentctx' is not on PATH and not "
                       f"next to {sys.executable}; install agentctx with pip or pipx and run "
                       "'agentctx init' again")


def find_python() -> str:
    """The interpreter agentctx runs in, as an absolute path with its links kept (a virtual
    environment's ``bin/python`` link is what makes it that environment)."""
    return os.path.abspath(sys.executable)


def user_site_folder() -> str | None:
    """The user's site folder when agentctx is installed there (``pip install --user``):
    isolated mode leaves that folder out, so the commands must name it. ``None`` otherwise."""

    own = os.path.dirname(os.path.dirname(os.path.abspath(agentctx.__file__)))
    user = site.getusersitepackages()
    return own if user and os.path.normpath(own) == os.path.normpath(user) else None


def launch_argv(python: str | None = None) -> list[str]:
    """How Claude Code starts agentctx: ``python`` (default: this one) in isolated mode."""
    return argv_for(python or find_python(), user_site_folder())


def find_claude() -> str | None:
    """The ``claude`` command on ``PATH``, if any."""
    return shutil.which("claude")


def default_home() -> Path:
    """The home agentctx uses when ``AGENTCTX_HOME`` is not set."""
    return Path.home() / ".agentctx"


def home_env() -> str | None:
    """``AGENTCTX_HOME`` to pass to hooks and the server; ``None`` when it is the default."""
    current = config.home().absolute()
    if os.path.normpath(current) == os.path.normpath(default_home().absolute()):
        return None
    return str(current)


def check_python(version: tuple[int, ...] | None = None) -> None:
    """Refuse interpreters older than 3.11 with a clear message."""
    running = tuple(version or sys.version_info[:3])
    if running[:2] < MIN_PYTHON:
        shown = ".".join(str(part) for part in running)
        raise InstallError(f"agentctx needs Python 3.11 or newer; this is Python {shown}. "
                           "Reinstall agentctx with a newer Python (for example "
                           "'pipx install --python python3.11 agentctx')")
