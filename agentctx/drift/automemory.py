"""Claude Code's auto memory, read (never written): where it is, whether it is on, what it holds.

Claude Code keeps it in ``~/.claude/projects/<encoded>/memory/`` (``claude-code-contract.md`` §7),
``<encoded>`` being the repository's main root with every character that is not a letter or a
digit replaced by ``-`` (all worktrees share it; observed with Claude Code 2.1.328). The folder
holds ``MEMORY.md`` — an index whose first :data:`INDEX_LINES` lines (at most
:data:`INDEX_BYTES` bytes) Claude Code loads into every session — and topic files with a front
matter block (``name``, ``description``, ``type``: ``user``, ``feedback``, ``project`` or
``reference``, and ``modified``), which Claude opens when it needs them.

Settings, as Claude Code reads them: ``CLAUDE_CODE_DISABLE_AUTO_MEMORY`` (1/true: off, 0/false: on)
wins; then ``autoMemoryEnabled`` in the settings files (local over project over user); on by
default. ``autoMemoryDirectory`` moves the folder (``~`` expanded; a relative path is taken from
the project root). ``CLAUDE_CONFIG_DIR`` moves ``~/.claude``.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any, NamedTuple

from agentctx.core import safeio

INDEX_NAME = "MEMORY.md"
INDEX_LINES = 200
INDEX_BYTES = 25 * 1024
TOPIC_MAX_BYTES = 1024 * 1024
TOPICS_MAX = 500
DISABLE_ENV = "CLAUDE_CODE_DISABLE_AUTO_MEMORY"
TYPES = ("user", "feedback", "project", "reference")
_TRUE = ("1", "true", "yes", "on")
_FALSE = ("0", "false", "no", "off")
_FRONT = re.compile(r"\A---[ \t]*\r?\n(.*?)\r?\n---[ \t]*(?:\r?\n|\Z)", re.DOTALL)


def config_dir() -> Path:
    """Claude Code's user folder: ``CLAUDE_CONFIG_DIR`` when set, else ``~/.claude``."""
    raw = os.environ.get("CLAUDE_CONFIG_DIR")
    return Path(raw).expanduser().absolute() if raw else Path.home() / ".claude"


def encode(root: str | os.PathLike[str]) -> str:
    """The folder name Claude Code gives a project: every non-alphanumeric character as ``-``."""
    return "".join(ch if ch.isascii() and ch.isalnum() else "-" for ch in os.fspath(root))


def settings_files(root: str | os.PathLike[str]) -> list[Path]:
    """The settings files that may hold the auto memory settings, weakest first."""
    base = Path(root)
    return [config_dir() / "settings.json", base / ".claude" / "settings.json",
            base / ".claude" / "settings.local.json"]


def _settings(root: str | os.PathLike[str]) -> dict[str, Any]:
    merged: dict[str, Any] = {}
    for path in settings_files(root):
        try:
            data = json.loads(safeio.read_small_text(path))
        except (OSError, ValueError, RecursionError):
            continue
        if isinstance(data, dict):
            merged.update({k: v for k, v in data.items()
                           if k in ("autoMemoryEnabled", "autoMemoryDirectory")})
    return merged


class State(NamedTuple):
    """Whether auto memory is on for a project, why, and where its folder is."""

    enabled: bool
    why: str
    folder: Path


def state(root: str | os.PathLike[str]) -> State:
    """Auto memory for the project whose main root is ``root`` (see the module docstring)."""
    settings = _settings(root)
    where = settings.get("autoMemoryDirectory")
    if isinstance(where, str) and where.strip():
        moved = Path(where.strip()).expanduser()
        folder = moved if moved.is_absolute() else Path(root) / moved
    else:
        folder = config_dir() / "projects" / encode(root) / "memory"
    env = os.environ.get(DISABLE_ENV, "").strip().lower()
    if env in _TRUE:
        return State(False, f"{DISABLE_ENV}={os.environ[DISABLE_ENV]}", folder)
    if env in _FALSE:
        return State(True, f"{DISABLE_ENV}={os.environ[DISABLE_ENV]}", folder)
    setting = settings.get("autoMemoryEnabled")
    if isinstance(setting, bool):
        return State(setting, f"autoMemoryEnabled: {'true' if setting else 'false'}", folder)
    return State(True, "on by default", folder)


def index_head(folder: Path) -> str:
    """What Claude Code loads of ``MEMORY.md``: its first 200 lines, at most 25 KB ("" when
    there is none)."""
    try:
        fd = safeio.open_regular(folder / INDEX_NAME)
    except OSError:
        return ""
    try:  # only the head is ever read, however large the file is
        data = os.read(fd, INDEX_BYTES)
    except OSError:
        return ""
    finally:
        os.close(fd)
    text = data.decode("utf-8", errors="ignore")
    return "\n".join(text.split("\n")[:INDEX_LINES])


class Topic(NamedTuple):
    """One file of the memory folder, read."""

    path: Path
    name: str  # the front matter's name, else the file's stem
    description: str
    type: str | None  # user | feedback | project | reference (None: not said)
    modified: str | None
    body: str  # the text after the front matter
    text: str  # the whole file


def front_matter(text: str) -> tuple[dict[str, str], str]:
    """A topic file's front matter (simple ``key: value`` lines) and the text after it."""
    found = _FRONT.match(text)
    if not found:
        return {}, text
    fields: dict[str, str] = {}
    for line in found.group(1).splitlines():
        key, sep, value = line.partition(":")
        if sep and key.strip() and not key.startswith((" ", "\t", "#")):
            fields[key.strip().lower()] = value.strip().strip("'\"")
    return fields, text[found.end():]


def topics(folder: Path) -> list[Topic]:
    """The topic files of the folder (``*.md`` but ``MEMORY.md``, by name; at most
    :data:`TOPICS_MAX`), each read whole up to :data:`TOPIC_MAX_BYTES`."""
    try:
        names = sorted(p for p in folder.iterdir() if p.suffix.lower() == ".md"
                       and p.name != INDEX_NAME)
    except OSError:
        return []
    found: list[Topic] = []
    for path in names[:TOPICS_MAX]:
        try:
            text = safeio.read_small(path, TOPIC_MAX_BYTES).decode("utf-8", errors="replace")
        except OSError:
            continue
        fields, body = front_matter(text)
        kind = fields.get("type", "").lower() or None
        found.append(Topic(path, fields.get("name") or path.stem,
                           fields.get("description", ""),
                           kind if kind in TYPES else None,
                           fields.get("modified") or fields.get("updated") or None,
                           body.strip(), text))
    return found

