"""Helpers for the hook tests: real payloads, and the real ``agentctx hook`` process.

Every hook test runs ``python -m agentctx hook <event>`` in a subprocess with the test's isolated
home, and checks the contract on the way out: exit code 0, and stdout either empty or exactly one
JSON object ``{"hookSpecificOutput": {"hookEventName": …, "additionalContext": …}}``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, NamedTuple

import pytest

PAYLOADS = Path(__file__).resolve().parent / "payloads"
REAL = PAYLOADS / "claude-code-2.1.328"
CONSTRUCTED = PAYLOADS / "constructed"
SESSION = "858e4fb7-3e6e-45ba-bcb3-f9fc87920620"
REAL_CWD = "/home/dev/app"
LAUNCHER = Path(sys.executable).with_name("agentctx")  # the console script Claude Code runs

# Which ``agentctx hook`` event each Claude Code event is registered under.
EVENT_OF = {
    "SessionStart": "session-start", "UserPromptSubmit": "prompt", "PostToolUse": "post-tool",
    "PostToolUseFailure": "post-tool", "PreCompact": "pre-compact", "Stop": "stop",
    "SessionEnd": "session-end", "CwdChanged": "cwd-changed", "SubagentStart": "subagent-start",
}


class HookRun(NamedTuple):
    """What one real hook process did."""

    returncode: int
    stdout: str
    stderr: str
    output: dict[str, Any] | None  # the parsed JSON object, when one was printed

    @property
    def context(self) -> str:
        """The injected ``additionalContext`` (``""`` when nothing was injected)."""
        if self.output is None:
            return ""
        return str(self.output["hookSpecificOutput"]["additionalContext"])


def payloads(name: str) -> list[dict[str, Any]]:
    """The payloads of one event (real when Claude Code 2.1.328 sent it, else constructed)."""
    path = REAL / f"{name}.jsonl"
    if not path.exists():
        path = CONSTRUCTED / f"{name}.jsonl"
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]


def at(payload: dict[str, Any], folder: Path | str, **changes: Any) -> dict[str, Any]:
    """A copy of ``payload`` whose ``cwd`` (and paths under the real cwd) point into ``folder``."""
    text = json.dumps(payload).replace(REAL_CWD, str(folder))
    moved: dict[str, Any] = json.loads(text)
    moved.update(changes)
    return moved


def check_contract(stdout: str) -> dict[str, Any] | None:
    """Assert the hook stdout contract and return the JSON object (``None`` when empty)."""
    if stdout == "":
        return None
    document = json.loads(stdout)  # one JSON document: json.loads refuses trailing data
    assert isinstance(document, dict), stdout
    assert set(document) == {"hookSpecificOutput"}, document
    specific = document["hookSpecificOutput"]
    assert set(specific) == {"hookEventName", "additionalContext"}, specific
    assert specific["hookEventName"] in ("SessionStart", "UserPromptSubmit", "SubagentStart")
    assert isinstance(specific["additionalContext"], str) and specific["additionalContext"]
    return document


def run_hook(event: str, payload: dict[str, Any] | str | bytes, *,
             env: dict[str, str] | None = None, timeout: float = 60,
             cwd: Path | None = None, launcher: bool = False) -> HookRun:
    """Run the real ``agentctx hook <event>`` with ``payload`` on stdin; checks the contract.

    ``cwd`` is the hook process's working folder; ``launcher`` runs it through the installed
    console script, as Claude Code does (``python -m`` would put ``cwd`` first on its path).
    """
    if isinstance(payload, dict):
        stdin = json.dumps(payload).encode("utf-8")
    elif isinstance(payload, str):
        stdin = payload.encode("utf-8")
    else:
        stdin = payload
    command = [str(LAUNCHER)] if launcher else [sys.executable, "-m", "agentctx"]
    done = subprocess.run([*command, "hook", event], input=stdin,
                          capture_output=True, timeout=timeout, cwd=cwd,
                          env={**os.environ, **(env or {})}, check=False)
    stdout = done.stdout.decode("utf-8")
    assert done.returncode == 0, (done.returncode, done.stderr)
    return HookRun(done.returncode, stdout, done.stderr.decode("utf-8", "replace"),
                   check_contract(stdout))


def read_log(home: Path) -> list[str]:
    """The lines of ``<home>/logs/hooks.log`` (none when it does not exist)."""
    path = home / "logs" / "hooks.log"
    return path.read_text(encoding="utf-8").splitlines() if path.exists() else []


@pytest.fixture
def hook_log(isolated_home: Path) -> Callable[[], list[str]]:
    """A function returning the current lines of the hook log."""
    return lambda: read_log(isolated_home)


@pytest.fixture
def app(project_dir: Path) -> Path:
    """A project folder with build files (so profile detection finds something)."""
    (project_dir / "pyproject.toml").write_text(
        '[project]\nname = "app"\ndependencies = ["fastapi", "httpx"]\n'
        '[project.optional-dependencies]\ndev = ["pytest"]\n', encoding="utf-8")
    return project_dir
