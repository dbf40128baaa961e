"""PreCompact: snapshot the working state as this worktree's handover before compaction.

The snapshot holds the session's recent prompts, the files it touched, the open todos visible in
the transcript's tail, the last test run and git event. It is a ``handover`` record keyed
``worktree:<path>``, so it supersedes the previous handover of the same worktree and two
worktrees never overwrite each other's. The SessionStart that follows compaction (source
``compact``) injects it with the digest. PreCompact takes no context back, so nothing is printed.
What the transcript's tail gives is redacted before any item is cut to length.
"""

from __future__ import annotations

import json
import os

from agentctx.context.digest import handover_key
from agentctx.core.budget import truncate
from agentctx.core.config import BODY_MAX_CHARS
from agentctx.core.redact import redact
from agentctx.hooks.event import HookContext
from agentctx.store import graph, records, sessions
from agentctx.store.models import Draft

# How much of the transcript's end is read for todos (and prompts when the session has none).
TAIL_BYTES = 512 * 1024
PROMPTS_SHOWN = 5
FILES_SHOWN = 20
TODOS_SHOWN = 15
ITEM_CHARS = 300


def handle(ctx: HookContext) -> str | None:
    """Write the handover; prints nothing."""
    db = ctx.store()
    resolved = ctx.resolved()
    project = resolved.project
    if project.paused:
        return None
    session = sessions.get(db, ctx.session_id)
    meta = session.meta if session else {}
    tail = read_tail(ctx.transcript_path)
    prompts = _meta_prompts(meta) or tail.prompts
    prompts = prompts[-PROMPTS_SHOWN:]
    files = graph.files_touched(db, ctx.session_id)[-FILES_SHOWN:]
    todos = tail.open_todos[:TODOS_SHOWN]
    tests = meta.get("tests")
    last_test = tests[-1] if isinstance(tests, list) and tests else None
    git = meta.get("git")
    last_git = git[-1] if isinstance(git, list) and git else None
    if not (prompts or files or todos):
        return None
    trigger = ctx.text("trigger") or "auto"
    body = snapshot_body(prompts, files, todos, last_test, last_git,
                         ctx.text("custom_instructions"))
    focus = " ".join(prompts[-1].split()) if prompts else (todos[0] if todos else files[-1])
    title = truncate(f"Working state before {trigger} compaction: {focus}", 200, "…")
    with db.write():
        sessions.ensure(db, ctx.session_id, project.id, cwd=ctx.cwd,
                        transcript_path=ctx.transcript_path)
        records.add(db, Draft(type="handover", key=handover_key(resolved.worktree), title=title,
                              body=body, source="hook_observation", session_id=ctx.session_id,
                              confidence="inferred"), project_id=project.id)
    return None


def snapshot_body(prompts: list[str], files: list[str], todos: list[str], last_test: object,
                  last_git: object, instructions: str = "") -> str:
    """The handover's text, at most ``BODY_MAX_CHARS`` characters."""
    parts: list[str] = []
    if prompts:
        parts.append("Recent prompts:\n" + "\n".join(f"- {_one_line(p)}" for p in prompts))
    if todos:
        parts.append("Open todos:\n" + "\n".join(f"- {_one_line(t)}" for t in todos))
    if files:
        parts.append("Files touched: " + ", ".join(files))
    if isinstance(last_test, dict) and last_test.get("command"):
        parts.append(f"Last test run: {last_test.get('command')} → {last_test.get('outcome')}"
                     + (f" ({last_test['summary']})" if last_test.get("summary") else ""))
    if isinstance(last_git, dict) and last_git.get("op"):
        detail = last_git.get("branch") or last_git.get("message") or ""
        parts.append(f"Last git {last_git.get('op')}: {detail}".rstrip(": "))
    if instructions.strip():
        parts.append(f"Compaction instructions: {_one_line(redact(instructions))}")
    return truncate("\n".join(parts), BODY_MAX_CHARS, "…")


def _one_line(text: str) -> str:
    flat = " ".join(str(text).split())
    return flat if len(flat) <= ITEM_CHARS else flat[:ITEM_CHARS - 1] + "…"


def _meta_prompts(meta: dict[str, object]) -> list[str]:
    kept = meta.get("prompts")
    if not isinstance(kept, list):
        return []
    return [str(p.get("text", "")) if isinstance(p, dict) else str(p) for p in kept
            if (p.get("text") if isinstance(p, dict) else p)]


class Tail:
    """What the end of a transcript shows: the latest todo list and the user's prompts."""

    __slots__ = ("open_todos", "prompts")

    def __init__(self) -> None:
        self.open_todos: list[str] = []
        self.prompts: list[str] = []


def read_tail(path: str | None, max_bytes: int = TAIL_BYTES) -> Tail:
    """Parse the last ``max_bytes`` of a transcript defensively (unknown lines are skipped)."""
    tail = Tail()
    if not path:
        return tail
    from agentctx.core.safeio import open_stream

    try:
        with open_stream(path) as handle:  # a FIFO or a device is refused, never waited on
            handle.seek(0, os.SEEK_END)
            size = handle.tell()
            handle.seek(max(0, size - max_bytes))
            data = handle.read(max_bytes)
    except OSError:
        return tail
    lines = data.decode("utf-8", "replace").splitlines()
    if len(data) >= max_bytes and lines:
        lines = lines[1:]  # the first line is probably cut
    todos: list[object] | None = None
    for raw in lines:
        try:
            entry = json.loads(raw)
        except (ValueError, RecursionError):
            continue
        if not isinstance(entry, dict):
            continue
        found = _todos_of(entry)
        if found is not None:
            todos = found
        prompt = _prompt_of(entry)
        if prompt:
            tail.prompts.append(prompt)
    if todos:
        for todo in todos:
            if isinstance(todo, dict) and todo.get("status") != "completed":
                text = todo.get("content") or todo.get("activeForm") or todo.get("subject")
                if isinstance(text, str) and text.strip():
                    status = todo.get("status")
                    tail.open_todos.append(f"[{status}] {text}" if status else text)
    # Redacted here, before the handover cuts each item: half a secret would not match.
    tail.open_todos = [redact(todo) for todo in tail.open_todos]
    tail.prompts = [redact(prompt) for prompt in tail.prompts[-PROMPTS_SHOWN:]]
    return tail


def _todos_of(entry: dict[str, object]) -> list[object] | None:
    """The todo list an entry carries: a TodoWrite call's input, or a ``todos`` field."""
    message = entry.get("message")
    if entry.get("type") == "assistant" and isinstance(message, dict):
        content = message.get("content")
        if isinstance(content, list):
            latest = None
            for block in content:
                if (isinstance(block, dict) and block.get("type") == "tool_use"
                        and block.get("name") == "TodoWrite"):
                    tool_input = block.get("input")
                    if isinstance(tool_input, dict) and isinstance(tool_input.get("todos"), list):
                        latest = tool_input["todos"]
            if latest is not None:
                return list(latest)
    todos = entry.get("todos")
    if isinstance(todos, list) and todos:
        return list(todos)
    return None


def _prompt_of(entry: dict[str, object]) -> str:
    """The text a user typed, from a ``user`` line (tool results and meta lines excluded)."""
    if entry.get("type") != "user" or entry.get("isMeta") or entry.get("isCompactSummary"):
        return ""
    message = entry.get("message")
    if not isinstance(message, dict):
        return ""
    content = message.get("content")
    if isinstance(content, str):
        return content.strip()
    if isinstance(content, list):
        texts = [b.get("text", "") for b in content
                 if isinstance(b, dict) and b.get("type") == "text"]
        return " ".join(t for t in texts if isinstance(t, str)).strip()
    return ""
