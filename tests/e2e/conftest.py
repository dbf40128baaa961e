"""End-to-end fixtures: the pinned Claude Code CLI (installed once per session) and a harness."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.e2e.claude import ClaudeHarness, ClaudeUnavailable, ensure_claude
from tests.e2e.script import ClaudeScript
from tests.support.messages_standin import MessagesStandIn


@pytest.fixture(scope="session")
def claude_bin() -> Path:
    """The ``claude`` executable at the pinned version (never skipped: a missing npm fails)."""
    try:
        return ensure_claude()
    except ClaudeUnavailable as exc:
        pytest.fail(str(exc), pytrace=False)


@pytest.fixture
def script() -> ClaudeScript:
    """An empty conversation script; tests add rules."""
    return ClaudeScript()


@pytest.fixture
def harness(claude_bin: Path, script: ClaudeScript, project_dir: Path,
            isolated_home: Path) -> Iterator[ClaudeHarness]:
    """Claude Code in the test's HOME, a git project, and the stand-in answering by ``script``."""
    home = Path(os.environ["HOME"])
    with MessagesStandIn(script) as standin:
        runner = ClaudeHarness(claude_bin, home, project_dir, standin)
        try:
            yield runner
        finally:
            runner.wait_for_background()
    assert not standin.errors, standin.errors
