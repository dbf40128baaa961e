"""Special files in a project (FIFOs, devices, huge files, folders) never hang a hook.

Each hook runs as the real process in a project where one file is replaced by a special one, with
its address space capped (an endless read fails instead of filling the machine) and a time limit
that only a hang reaches. The hook must exit 0 having done its work: no "failed" line in the log.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.hooks.conftest import EVENT_OF, LAUNCHER, at, check_contract, payloads
from tests.support import special_files

HANG = 60  # seconds: far above any hook's run time, reached only by a blocked one

CASES = [
    (".git", "fifo"), (".git/config", "fifo"), (".git/config", "huge"), (".git", "huge"),
    ("pyproject.toml", "fifo"), ("pyproject.toml", "huge"), ("pyproject.toml", "dev-zero"),
    ("pyproject.toml", "folder"), ("package.json", "dev-zero"), ("package.json", "fifo"),
    ("Makefile", "fifo"), ("go.mod", "dev-zero"), ("Cargo.toml", "huge"),
]


def _run(event: str, payload: dict[str, object], cwd: Path) -> str:
    command = [str(LAUNCHER)] if LAUNCHER.exists() else [sys.executable, "-m", "agentctx"]
    done = subprocess.run([*command, "hook", event], input=json.dumps(payload).encode(),
                          capture_output=True, timeout=HANG, cwd=cwd, check=False,
                          preexec_fn=special_files.cap_memory)
    assert done.returncode == 0, done.stderr
    stdout = done.stdout.decode("utf-8")
    check_contract(stdout)
    return stdout


@pytest.mark.parametrize(("name", "kind"), CASES, ids=[f"{n}-{k}" for n, k in CASES])
def test_no_hook_blocks_or_balloons_on_a_special_project_file(
        name: str, kind: str, app: Path, hook_log: Callable[[], list[str]]) -> None:
    (app / "Makefile").write_text("test:\n\tpytest\n", encoding="utf-8")
    special_files.replace(app / name, kind)
    for event_name in ("SessionStart", "CwdChanged", "UserPromptSubmit", "PostToolUse",
                       "SubagentStart"):
        payload = at(payloads(event_name)[0], app)
        if event_name == "CwdChanged":
            payload["new_cwd"] = str(app)
        _run(EVENT_OF[event_name], payload, app)
    problems = [line for line in hook_log() if "failed" in line or "Error" in line]
    assert problems == []


@pytest.mark.parametrize("kind", ["fifo", "dev-zero", "folder"])
def test_a_special_transcript_never_blocks_pre_compact_stop_or_session_end(
        kind: str, app: Path, tmp_path: Path, hook_log: Callable[[], list[str]]) -> None:
    transcript = tmp_path / "session.jsonl"
    special_files.MAKERS[kind](transcript)
    for event_name in ("UserPromptSubmit", "PreCompact", "Stop", "SessionEnd"):
        payload = at(payloads(event_name)[0], app, transcript_path=str(transcript))
        _run(EVENT_OF[event_name], payload, app)
    assert [line for line in hook_log() if "hook failed" in line] == []


def test_a_special_config_file_means_defaults(app: Path, isolated_home: Path,
                                              hook_log: Callable[[], list[str]]) -> None:
    isolated_home.mkdir(parents=True, exist_ok=True)
    special_files.fifo(isolated_home / "config.json")
    _run("session-start", at(payloads("SessionStart")[0], app), app)
    [line] = hook_log()
    assert "config problem, using defaults" in line and "not a regular file" in line
