"""Fixtures for installation tests: realistic Claude Code config files in the isolated HOME."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from tests.support.cli import run_cli as in_process

LAUNCHER = str(Path(sys.executable).parent / "agentctx")
PYTHON = os.path.abspath(sys.executable)  # what init registers: PYTHON -I -m agentctx

# A user settings file as people have them: other hooks (on events agentctx uses too), keys
# agentctx does not know, unicode, 4-space indentation.
USER_SETTINGS = """{
    "model": "opus",
    "permissions": {"allow": ["Bash(npm test:*)"], "deny": []},
    "hooks": {
        "SessionStart": [
            {"matcher": "startup", "hooks": [{"type": "command", "command": "echo héllo"}]}
        ],
        "PostToolUse": [
            {"matcher": "Edit", "hooks": [{"type": "command", "command": "prettier -w \\"$F\\"",
                                           "timeout": 20}]}
        ],
        "Notification": [{"hooks": [{"type": "command", "command": "notify-send '✓ fertig'"}]}]
    },
    "statusLine": {"type": "command", "command": "~/.claude/status.sh"},
    "zukünftig": {"λ": [1, 2.5, null, true, "日本語"]}
}
"""

CLAUDE_JSON = """{
  "numStartups": 42,
  "theme": "dark",
  "mcpServers": {
    "github": {
      "type": "stdio",
      "command": "npx",
      "args": ["-y", "@modelcontextprotocol/server-github"],
      "env": {"GITHUB_TOKEN": "ghp_exampleexampleexample"}
    },
    "docs": {"type": "http", "url": "https://example.com/mcp"}
  },
  "projects": {"/home/dev/app": {"allowedTools": [], "mcpServers": {}}},
  "userNote": "Grüße — ünïcode ✓"
}"""


def write(path: Path, text: str, mode: int | None = None) -> bytes:
    """Write ``text`` and return its bytes."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    if mode is not None:
        path.chmod(mode)
    return path.read_bytes()


def load(path: Path) -> dict[str, Any]:
    """A JSON file's content."""
    data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return data


@pytest.fixture
def home() -> Path:
    """The isolated HOME (set by the autouse fixture)."""
    return Path(os.environ["HOME"])


def run_cli(*args: str, cwd: Path | None = None, extra_env: dict[str, str] | None = None,
            stdin: str = "") -> subprocess.CompletedProcess[str]:
    """Run ``agentctx <args>`` in process with ``claude`` off ``PATH`` (only the system
    folders on it)."""
    return in_process(*args, cwd=cwd, stdin=stdin,
                      env={"PATH": "/usr/bin:/bin", **(extra_env or {})})


@contextmanager
def read_only(folder: Path) -> Iterator[None]:
    """``folder`` cannot be written for a while, even by root (mode 0555, plus the immutable
    attribute when running as root, who ignores modes)."""
    mode = folder.stat().st_mode & 0o7777
    folder.chmod(0o555)
    immutable = os.geteuid() == 0
    if immutable:
        subprocess.run(["chattr", "+i", str(folder)], check=True)
    try:
        probe = folder / ".probe"
        try:
            probe.write_text("", encoding="utf-8")
        except OSError:
            pass
        else:
            probe.unlink()
            pytest.skip(f"cannot make {folder} read-only here")
        yield
    finally:
        if immutable:
            subprocess.run(["chattr", "-i", str(folder)], check=True)
        folder.chmod(mode)
