"""The fail-open contract of ``agentctx hook``, on the real process.

Real Claude Code 2.1.328 payloads, constructed ones for events 2.1.328 was not seen firing, and
malformed, hostile and fuzzed input: the exit code is always 0, stdout is empty or exactly one JSON
object, and every problem leaves exactly one line in ``<home>/logs/hooks.log``.
"""

from __future__ import annotations

import json
import os
import pty
import sqlite3
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agentctx.store import Store, records
from agentctx.store.models import Draft
from tests.hooks.conftest import EVENT_OF, SESSION, at, payloads, run_hook

QUIET = {"AGENTCTX_LLM": "off", "AGENTCTX_EMBEDDINGS": "off"}
ALL_EVENTS = ("SessionStart", "UserPromptSubmit", "PostToolUse", "PostToolUseFailure",
              "PreCompact", "Stop", "SessionEnd", "CwdChanged", "SubagentStart")


def _seed(app: Path) -> None:
    from agentctx.store import projects

    with Store.open() as db:
        project = projects.resolve(db, str(app)).project
        records.add(db, Draft(type="decision", title="Use gRPC instead of REST for the internal "
                              "API", body="Typed contracts between services.",
                              confidence="explicit"), project_id=project.id)


@pytest.mark.parametrize("name", ALL_EVENTS)
def test_every_payload_as_sent_exits_0_with_the_contract(name: str,
                                                        hook_log: Callable[[], list[str]]) -> None:
    """Payloads exactly as Claude Code sent them (cwd /home/dev/app does not exist here)."""
    for payload in payloads(name):
        result = run_hook(EVENT_OF[name], payload, env=QUIET)
        if result.output is not None:
            assert result.output["hookSpecificOutput"]["hookEventName"] == name
    assert hook_log() == []


@pytest.mark.parametrize("name", ALL_EVENTS)
def test_every_payload_in_a_real_project(name: str, app: Path,
                                         hook_log: Callable[[], list[str]]) -> None:
    """The same payloads pointed at a real project folder with records."""
    _seed(app)
    for payload in payloads(name):
        result = run_hook(EVENT_OF[name], at(payload, app), env=QUIET)
        if name == "SessionStart":
            assert "Use gRPC instead of REST" in result.context
            assert result.output is not None
            assert result.output["hookSpecificOutput"]["hookEventName"] == "SessionStart"
        elif name not in ("UserPromptSubmit", "SubagentStart"):
            assert result.output is None
    assert hook_log() == []


BAD_INPUT = [
    (b"", "no JSON payload"),
    (b"   \n", "no JSON payload"),
    (b"{not json", "malformed JSON"),
    (b"\xff\xfe\x00garbage", "malformed JSON"),
    (b"[1, 2, 3]", "not an object"),
    (b'"just a string"', "not an object"),
    (b'{"cwd": "/tmp"}', "no session_id"),
    (b'{"session_id": 42}', "no session_id"),
    (b'{"session_id": "  "}', "no session_id"),
    (b'{"session_id": "a\\nb"}', "not a plausible id"),
    (json.dumps({"session_id": "x" * 500}).encode(), "not a plausible id"),
    (b'{"session_id": "s", "hook_event_name": "Stop"}', "is for 'Stop'"),
    (b'{"session_id": "s", "cwd": 7}', "cwd is not a path"),
]


@pytest.mark.parametrize(("stdin", "reason"), BAD_INPUT)
def test_bad_input_logs_one_line_and_prints_nothing(stdin: bytes, reason: str,
                                                    hook_log: Callable[[], list[str]]) -> None:
    result = run_hook("session-start", stdin)
    assert result.stdout == "" and result.stderr == ""
    lines = hook_log()
    assert len(lines) == 1, lines
    assert reason in lines[0] and " session-start " in lines[0]


def test_unknown_or_missing_event(hook_log: Callable[[], list[str]]) -> None:
    payload = payloads("SessionStart")[0]
    assert run_hook("pre-tool", payload).stdout == ""
    assert run_hook("", payload).stdout == ""
    lines = hook_log()
    assert len(lines) == 2
    assert "unknown hook event 'pre-tool'" in lines[0]
    assert "unknown hook event ''" in lines[1]


def test_disable_env_turns_every_hook_off(app: Path, isolated_home: Path,
                                          hook_log: Callable[[], list[str]]) -> None:
    _seed(app)
    before = (isolated_home / "agentctx.db").stat().st_mtime_ns
    for name in ALL_EVENTS:
        for payload in payloads(name):
            result = run_hook(EVENT_OF[name], at(payload, app), env={"AGENTCTX_DISABLE": "1"})
            assert result.stdout == ""
    assert run_hook("session-start", b"not json", env={"AGENTCTX_DISABLE": "1"}).stdout == ""
    assert hook_log() == []
    with Store.open() as db:
        assert db.scalar("SELECT count(*) FROM sessions") == 0
        assert db.scalar("SELECT count(*) FROM injections") == 0
    assert (isolated_home / "agentctx.db").stat().st_mtime_ns == before


def test_disable_knob_in_config_file(app: Path, isolated_home: Path) -> None:
    _seed(app)
    (isolated_home / "config.json").write_text('{"disable": true}', encoding="utf-8")
    result = run_hook("session-start", at(payloads("SessionStart")[0], app))
    assert result.stdout == ""


def test_broken_config_file_logs_and_uses_defaults(app: Path, isolated_home: Path,
                                                   hook_log: Callable[[], list[str]]) -> None:
    _seed(app)
    (isolated_home / "config.json").write_text("{broken", encoding="utf-8")
    result = run_hook("session-start", at(payloads("SessionStart")[0], app))
    assert "Use gRPC instead of REST" in result.context
    lines = hook_log()
    assert len(lines) == 1 and "config problem, using defaults" in lines[0]


@pytest.mark.parametrize("knobs", [
    {"hook_busy_timeout_ms": -5},
    {"prompt_tokens": 999999},
    {"prompt_records": "three", "session_start_tokens": True},
    {"search": "vector", "prompt_min_relevance": [0.2]},
])
def test_an_unusable_knob_falls_back_to_its_default_and_no_hook_goes_silent(
        knobs: dict[str, object], app: Path, isolated_home: Path,
        hook_log: Callable[[], list[str]]) -> None:
    _seed(app)
    (isolated_home / "config.json").write_text(json.dumps(knobs), encoding="utf-8")
    start = run_hook("session-start", at(payloads("SessionStart")[0], app))
    assert "Use gRPC instead of REST" in start.context
    prompt = run_hook("prompt", at(payloads("UserPromptSubmit")[0], app, session_id="another",
                                   prompt="do we still use REST for the internal API?"))
    assert "Use gRPC instead of REST" in prompt.context
    assert hook_log() == []


def test_store_newer_than_the_code(app: Path, isolated_home: Path,
                                   hook_log: Callable[[], list[str]]) -> None:
    _seed(app)
    conn = sqlite3.connect(isolated_home / "agentctx.db")
    conn.execute("PRAGMA user_version = 999")
    conn.close()
    for name in ("SessionStart", "UserPromptSubmit", "PostToolUse"):
        assert run_hook(EVENT_OF[name], at(payloads(name)[0], app)).stdout == ""
    lines = hook_log()
    assert len(lines) == 3
    assert all("newer agentctx" in line and "hook skipped" in line for line in lines)


def test_store_locked_past_the_hook_busy_timeout(app: Path, isolated_home: Path,
                                                 hook_log: Callable[[], list[str]]) -> None:
    _seed(app)
    holder = sqlite3.connect(isolated_home / "agentctx.db", isolation_level=None)
    holder.execute("BEGIN EXCLUSIVE")
    try:
        started = time.monotonic()
        result = run_hook("session-start", at(payloads("SessionStart")[0], app),
                          env={"AGENTCTX_HOOK_BUSY_TIMEOUT_MS": "300"})
        elapsed = time.monotonic() - started
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert result.stdout == ""
    lines = hook_log()
    assert len(lines) == 1 and "locked" in lines[0] and "hook skipped" in lines[0]
    assert elapsed < 30  # bounded by the busy timeout, not Claude Code's hook timeout


def test_a_crash_inside_a_hook_fails_open(app: Path, isolated_home: Path,
                                          hook_log: Callable[[], list[str]]) -> None:
    """A damaged store file: the hook logs the error and prints nothing."""
    (isolated_home).mkdir(parents=True, exist_ok=True)
    (isolated_home / "agentctx.db").write_bytes(b"this is not a database" * 100)
    result = run_hook("prompt", at(payloads("UserPromptSubmit")[0], app))
    assert result.stdout == ""
    lines = hook_log()
    assert len(lines) == 1 and "not an agentctx store" in lines[0]


def test_log_is_rotated_at_log_max_bytes(isolated_home: Path,
                                         hook_log: Callable[[], list[str]]) -> None:
    logs = isolated_home / "logs"
    logs.mkdir(parents=True, exist_ok=True)
    (logs / "hooks.log").write_text("old line\n" * 2000, encoding="utf-8")  # 18,000 bytes
    run_hook("session-start", b"{broken", env={"AGENTCTX_LOG_MAX_BYTES": "10000"})
    assert (logs / "hooks.log.1").read_text(encoding="utf-8").startswith("old line")
    lines = hook_log()
    assert len(lines) == 1 and "malformed JSON" in lines[0]


def test_logged_problems_are_redacted(hook_log: Callable[[], list[str]]) -> None:
    secret = "sk-ant-api03-" + "A" * 40
    run_hook("session-start", json.dumps({"session_id": "s", "hook_event_name": secret}))
    lines = hook_log()
    assert len(lines) == 1
    assert secret not in lines[0] and "[REDACTED:anthropic-key]" in lines[0]


JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=12)
FIELDS = st.sampled_from(["session_id", "cwd", "transcript_path", "hook_event_name", "prompt",
                          "source", "tool_name", "tool_input", "tool_response", "error",
                          "trigger", "new_cwd", "agent_type", "reason", "custom_instructions"])


@settings(max_examples=25, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(event=st.sampled_from([*sorted(set(EVENT_OF.values())), "nope"]),
       base=st.sampled_from(ALL_EVENTS),
       changes=st.dictionaries(FIELDS, JSON_VALUES, max_size=5))
def test_fuzzed_payloads_never_break_the_contract(event: str, base: str,
                                                  changes: dict[str, Any], app: Path,
                                                  hook_log: Callable[[], list[str]]) -> None:
    """Wrong types and odd values are refused or ignored, never a crash."""
    payload = at(payloads(base)[0], app)
    payload.update(changes)
    result = run_hook(event, payload, env=QUIET)
    assert result.stderr == ""
    assert not [line for line in hook_log() if "hook failed" in line]


@settings(max_examples=15, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(event=st.sampled_from(sorted(set(EVENT_OF.values()))), raw=st.binary(max_size=300))
def test_fuzzed_bytes_never_break_the_contract(event: str, raw: bytes,
                                               hook_log: Callable[[], list[str]]) -> None:
    before = len(hook_log())
    result = run_hook(event, raw, env=QUIET)
    assert result.stdout == "" and result.stderr == ""
    assert len(hook_log()) - before == 1


def test_session_id_matches_the_real_payloads() -> None:
    assert {p["session_id"] for name in ALL_EVENTS for p in payloads(name)} == {SESSION}


def test_run_by_hand_in_a_terminal_does_not_wait(hook_log: Callable[[], list[str]]) -> None:
    """With a terminal on stdin (no payload piped in) the hook returns at once."""
    leader, follower = pty.openpty()
    try:
        done = subprocess.run([sys.executable, "-m", "agentctx", "hook", "session-start"],
                              stdin=follower, capture_output=True, timeout=30, check=False)
    finally:
        os.close(leader)
        os.close(follower)
    assert done.returncode == 0 and done.stdout == b""
    assert len(hook_log()) == 1 and "no JSON payload" in hook_log()[0]
