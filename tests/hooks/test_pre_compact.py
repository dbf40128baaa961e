"""pre-compact: the working state becomes this worktree's handover, superseding its previous one."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from agentctx.context.digest import handover_key
from agentctx.hooks.pre_compact import read_tail
from agentctx.store import Store, projects, records
from agentctx.store.models import Record
from tests.hooks.conftest import SESSION, at, payloads, run_hook
from tests.support import special_files

REAL_TRANSCRIPT = (Path(__file__).parent / "payloads" / "claude-code-2.1.328"
                   / "session-write-bash-mcp.jsonl")


def _transcript(path: Path, prompts: list[str], todos: list[dict[str, str]]) -> Path:
    """A transcript in 2.1.x's line shapes: user prompts, a TodoWrite call, noise lines."""
    lines: list[dict[str, Any]] = [{"type": "queue-operation", "operation": "enqueue"}]
    for n, prompt in enumerate(prompts):
        lines.append({"type": "user", "uuid": f"u{n}", "sessionId": SESSION,
                      "message": {"role": "user", "content": prompt}})
        lines.append({"type": "attachment", "attachment": {"type": "hook_additional_context",
                                                           "content": ["injected"]}})
    lines.append({"type": "assistant", "message": {"id": "m1", "role": "assistant", "content": [
        {"type": "text", "text": "Tracking the work."},
        {"type": "tool_use", "id": "t1", "name": "TodoWrite", "input": {"todos": todos}}]}})
    lines.append({"type": "user", "message": {"role": "user", "content": [
        {"type": "tool_result", "tool_use_id": "t1", "content": "ok"}]}})
    text = "\n".join(json.dumps(line) for line in lines) + "\n{\"type\": \"assistant\", \"mess"
    path.write_text(text, encoding="utf-8")
    return path


def _handover(app: Path) -> Record | None:
    with Store.open() as db:
        pid = projects.resolve(db, str(app)).project.id
        return records.find_current_by_key(db, pid, "handover", handover_key(str(app)))


def test_snapshot_from_session_and_transcript(app: Path, tmp_path: Path) -> None:
    transcript = _transcript(tmp_path / "t.jsonl", ["Add a retry to fetch_user()"], [
        {"content": "Write the retry", "status": "completed", "activeForm": "Writing"},
        {"content": "Test the retry against a flaky server", "status": "in_progress",
         "activeForm": "Testing"},
        {"content": "Update the changelog", "status": "pending", "activeForm": "Updating"}])
    prompt = at(payloads("UserPromptSubmit")[0], app, prompt="Add a retry to fetch_user()")
    run_hook("prompt", prompt)
    run_hook("post-tool", at(payloads("PostToolUse")[0], app))
    compact = at(payloads("PreCompact")[0], app, transcript_path=str(transcript))
    assert run_hook("pre-compact", compact).stdout == ""
    handover = _handover(app)
    assert handover is not None
    assert handover.title == "Working state before auto compaction: Add a retry to fetch_user()"
    assert "Recent prompts:\n- Add a retry to fetch_user()" in handover.body
    assert ("Open todos:\n- [in_progress] Test the retry against a flaky server\n"
            "- [pending] Update the changelog") in handover.body
    assert "Write the retry" not in handover.body
    assert "Files touched: notes.txt" in handover.body
    assert handover.session_id == SESSION and handover.source == "hook_observation"


def test_next_compaction_supersedes_and_worktrees_stay_apart(app: Path, tmp_path: Path) -> None:
    other = tmp_path / "elsewhere"
    (other / ".git").mkdir(parents=True)
    for folder, prompt in ((app, "first task"), (other, "other worktree task"),
                           (app, "second task")):
        run_hook("prompt", at(payloads("UserPromptSubmit")[0], folder, prompt=prompt,
                              session_id=f"s-{folder.name}"))
        run_hook("pre-compact", at(payloads("PreCompact")[1], folder,
                                   session_id=f"s-{folder.name}"))
    current = _handover(app)
    assert current is not None and "second task" in current.body
    assert "Compaction instructions: keep the retry work" in current.body
    with Store.open() as db:
        chain = records.history(db, current.id)
        assert [r.title.split(": ", 1)[1] for r in chain] == ["first task", "second task"]
        assert chain[0].superseded_by == current.id
        elsewhere = projects.resolve(db, str(other)).project.id
        theirs = records.find_current_by_key(db, elsewhere, "handover",
                                             handover_key(str(other)))
    assert theirs is not None and "other worktree task" in theirs.body


def test_nothing_to_snapshot_writes_nothing(app: Path) -> None:
    run_hook("pre-compact", at(payloads("PreCompact")[0], app))
    assert _handover(app) is None


def test_then_session_start_compact_injects_the_handover(app: Path) -> None:
    run_hook("prompt", at(payloads("UserPromptSubmit")[0], app, prompt="migrate billing tables"))
    run_hook("pre-compact", at(payloads("PreCompact")[0], app))
    start = at(payloads("SessionStart")[0], app, source="compact")
    text = run_hook("session-start", start).context
    assert "## Last handover for this worktree" in text and "migrate billing tables" in text


def test_real_transcript_tail() -> None:
    tail = read_tail(str(REAL_TRANSCRIPT))
    assert tail.prompts == [
        "We decided to use gRPC instead of REST for the internal API. WRITETEST please write "
        "notes", "BASHTEST run the listing", "TOOLTEST what rpc do we use"]
    assert tail.open_todos == []
    assert read_tail(None).prompts == [] and read_tail("/nonexistent").prompts == []


@pytest.mark.timeout(60)
@pytest.mark.parametrize("kind", ["fifo", "dev-zero", "folder"])
def test_a_special_transcript_gives_an_empty_tail_without_blocking(kind: str,
                                                                    tmp_path: Path) -> None:
    special_files.MAKERS[kind](tmp_path / "t.jsonl")
    with special_files.limited_memory():
        tail = read_tail(str(tmp_path / "t.jsonl"))
    assert tail.prompts == [] and tail.open_todos == []
