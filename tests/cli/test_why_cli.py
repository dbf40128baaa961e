"""``agentctx why`` in process, on receipts the real prompt hook wrote."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from agentctx.cli.why import render_text
from tests.conftest import run_cli
from tests.hooks.conftest import run_hook
from tests.support import shown

SESSION = "5c2d8e41-1111-4222-8333-944455556666"


def _record(project_dir: Path, *args: str) -> str:
    made = run_cli("record", *args, "--json", cwd=project_dir)
    assert made.returncode == 0, made.stderr
    return str(json.loads(made.stdout)["id"])


def _prompt(project_dir: Path, text: str, session: str = SESSION) -> str:
    payload = {"session_id": session, "cwd": str(project_dir), "prompt": text,
               "hook_event_name": "UserPromptSubmit",
               "transcript_path": str(project_dir / "t.jsonl")}
    return run_hook("prompt", payload, cwd=project_dir).context


def _why(project_dir: Path, *args: str) -> dict[str, Any]:
    done = run_cli("why", *args, "--json", cwd=project_dir)
    assert done.returncode == 0, done.stderr
    return dict(json.loads(done.stdout))


def test_why_explains_the_last_prompt_from_its_receipt(project_dir: Path) -> None:
    grpc = _record(project_dir, "decision", "Internal API is gRPC",
                   "--body", "Protobuf definitions live in proto/.")
    _record(project_dir, "convention", "Public API errors are problem+json")
    assert shown.names(_prompt(project_dir, "which protocol does the internal api use, grpc?"),
                       grpc)

    story = _why(project_dir, "--session", SESSION)
    assert story["injected"] and story["last_prompt"]["text"].startswith("which protocol")
    (item,) = story["receipt"]["records"]
    assert (item["id"], item["type"], item["title"]) == (grpc, "decision", "Internal API is gRPC")
    assert item["matched"] == ["internal", "api", "grpc"] and item["relevance"] > 0
    assert item["pointer"] is False and not item["forgotten"]
    assert story["receipt"]["tokens"] > 0

    text = run_cli("why", cwd=project_dir).stdout  # default: the project's latest session
    assert f"session {SESSION}" in text
    assert 'last prompt (' in text and '"which protocol does the internal api use, grpc?"' in text
    assert "injected 1 record," in text and "decision: Internal API is gRPC" in text
    assert "relevance " in text and "matched: internal, api, grpc" in text


def test_a_prompt_that_got_nothing_and_agentctx_own_commands(project_dir: Path) -> None:
    grpc = _record(project_dir, "decision", "Internal API is gRPC")
    _prompt(project_dir, "which protocol does the internal api use, grpc?")
    # the plugin's own command: no injection, no receipt, not kept as the last prompt
    assert _prompt(project_dir, "/agentctx:why internal api grpc") == ""
    story = _why(project_dir, "--session", SESSION)
    assert story["injected"] and story["receipt"]["records"][0]["id"] == grpc

    # a later prompt that matches nothing: nothing injected, the earlier receipt named as such
    assert _prompt(project_dir, "rename the variable in the loop") == ""
    story = _why(project_dir, "--session", SESSION)
    assert not story["injected"] and story["receipt"] is None
    assert story["last_prompt"]["text"] == "rename the variable in the loop"
    assert story["earlier_receipt"]["records"][0]["id"] == grpc
    text = run_cli("why", "--session", SESSION, cwd=project_dir).stdout
    assert "nothing was injected" in text and "the latest injection was on an earlier" in text


def test_a_forgotten_record_and_the_errors(project_dir: Path, tmp_path: Path) -> None:
    grpc = _record(project_dir, "decision", "Internal API is gRPC")
    _prompt(project_dir, "which protocol does the internal api use, grpc?")
    assert run_cli("forget", grpc, "--yes", cwd=project_dir).returncode == 0
    (item,) = _why(project_dir)["receipt"]["records"]
    assert item["forgotten"] and item["title"] is None
    assert "(forgotten since)" in run_cli("why", cwd=project_dir).stdout

    unknown = run_cli("why", "--session", "nope", cwd=project_dir)
    assert unknown.returncode == 1 and unknown.stdout == ""
    assert unknown.stderr.startswith("agentctx: no session 'nope' in the store")
    fresh = tmp_path / "elsewhere"
    fresh.mkdir()
    none = run_cli("why", cwd=fresh)
    assert none.returncode == 1 and "no Claude Code session of" in none.stderr


def test_records_shown_as_pointers_are_marked() -> None:
    """Receipts that record pointers mark them; the text says so."""
    item = {"id": "01ABC", "short_id": "01ABC", "type": "decision", "title": "Use gRPC",
            "forgotten": False, "superseded": False, "relevance": 0.5, "matched": ["grpc"],
            "pointer": True}
    story = {"session": "s", "last_prompt": {"at": "2026-01-01T00:00:00.000Z", "text": "grpc?"},
             "receipt": {"id": 1, "at": "2026-01-01T00:00:00.000Z", "prompt": "grpc?",
                         "tokens": 10, "chars": 30, "records": [item]},
             "earlier_receipt": None, "session_start": None}
    text = render_text(story)
    assert "decision: Use gRPC [shown as a one-line pointer]" in text
    assert "relevance 0.50 · matched: grpc" in text
