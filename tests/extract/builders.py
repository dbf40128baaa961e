"""Synthetic Claude Code transcripts in the observed 2.1.x line format, and API replies."""

from __future__ import annotations

import itertools
import json
import uuid as uuidlib
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx2

_COUNTER = itertools.count(1)


class TranscriptWriter:
    """Writes a transcript line by line, chaining ``parentUuid`` like Claude Code does."""

    def __init__(self, path: Path, *, session_id: str | None = None, cwd: str = "/home/dev/app",
                 start: datetime | None = None, version: str = "2.1.328") -> None:
        self.path = path
        self.session_id = session_id or str(uuidlib.uuid4())
        self.cwd = cwd
        self.clock = start or datetime(2026, 3, 14, 9, 0, tzinfo=UTC)
        self.version = version
        self.last: str | None = None
        self.lines: list[dict[str, Any]] = []

    def _stamp(self) -> str:
        self.clock += timedelta(seconds=7)
        return self.clock.strftime("%Y-%m-%dT%H:%M:%S.000Z")

    def _line(self, kind: str, *, parent: str | bool | None = True, **fields: Any) -> str:
        uid = str(uuidlib.uuid4())
        line = {"parentUuid": self.last if parent is True else (parent or None),
                "isSidechain": False, "userType": "external", "cwd": self.cwd,
                "sessionId": self.session_id, "version": self.version, "gitBranch": "main",
                "type": kind, "uuid": uid, "timestamp": self._stamp()}
        line.update(fields)
        self.lines.append(line)
        self.last = uid
        return uid

    def user(self, text: str, **fields: Any) -> str:
        """A typed prompt."""
        return self._line("user", message={"role": "user", "content": text}, **fields)

    def assistant(self, text: str | None = None,
                  tools: Sequence[tuple[str, dict[str, Any]]] = (),
                  results: list[str | tuple[str, bool]] | None = None,
                  message_id: str | None = None, thinking: str | None = None) -> list[str]:
        """One API message: one line per block (thinking, text, tool_use), then tool results."""
        mid = message_id or f"msg_{next(_COUNTER):04d}"
        ids = []
        blocks: list[dict[str, Any]] = []
        if thinking:
            blocks.append({"type": "thinking", "thinking": thinking, "signature": "sig"})
        if text:
            blocks.append({"type": "text", "text": text})
        for name, tool_input in tools:
            tool_id = f"toolu_{next(_COUNTER):05d}"
            ids.append(tool_id)
            blocks.append({"type": "tool_use", "id": tool_id, "name": name, "input": tool_input})
        for block in blocks:
            self._line("assistant", requestId=f"req_{mid}", message={
                "id": mid, "type": "message", "role": "assistant", "model": "claude-opus-5-5",
                "content": [block], "stop_reason": None,
                "usage": {"input_tokens": 10, "output_tokens": 5}})
        for tool_id, result in zip(ids, results or [], strict=False):
            content, error = (result, False) if isinstance(result, str) else result
            self.tool_result(tool_id, content, error)
        return ids

    def tool_result(self, tool_use_id: str, content: str, is_error: bool = False,
                    parent: str | bool | None = True) -> str:
        """A user line carrying one tool result."""
        return self._line("user", parent=parent, message={"role": "user", "content": [
            {"tool_use_id": tool_use_id, "type": "tool_result", "content": content,
             "is_error": is_error}]}, toolUseResult={"stdout": content})

    def attachment(self, attachment: dict[str, Any]) -> str:
        """An attachment line (hook context, environment, …)."""
        return self._line("attachment", attachment=attachment)

    def other(self, line: dict[str, Any]) -> None:
        """A line without uuid (bookkeeping types)."""
        self.lines.append(line)

    def text(self) -> str:
        """The JSONL text of every line so far."""
        return "".join(json.dumps(line) + "\n" for line in self.lines)

    def save(self) -> Path:
        """Write (overwrite) the file; returns its path."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.path.write_text(self.text(), encoding="utf-8")
        return self.path

    def append_saved(self, start: int) -> None:
        """Append the lines from index ``start`` on to the file (a session growing)."""
        with open(self.path, "a", encoding="utf-8") as handle:
            for line in self.lines[start:]:
                handle.write(json.dumps(line) + "\n")


def conversation(writer: TranscriptWriter, turns: int, *, words: int = 60) -> None:
    """``turns`` realistic turns: a prompt, an answer with a tool call and its result."""
    for turn in range(turns):
        writer.user(f"Turn {turn}: please refactor module_{turn}.py " + "detail " * words)
        writer.assistant(f"Refactoring module_{turn}.py now. " + "explanation " * words,
                         tools=[("Edit", {"file_path": f"/home/dev/app/module_{turn}.py",
                                          "old_string": "a", "new_string": "b"}),
                                ("Bash", {"command": f"pytest tests/test_module_{turn}.py"})],
                         results=["ok", f"{turn} passed in 0.1s"])


def extraction(**fields: Any) -> dict[str, Any]:
    """An extraction result with every field, empty unless given."""
    value: dict[str, Any] = {"decisions": [], "preferences": [], "conventions": [],
                             "active_work": None, "gotchas": [], "bugfixes": [],
                             "flush_ok": False}
    value.update(fields)
    return value


def api_message(body: dict[str, Any], result: dict[str, Any] | str, *,
                usage: dict[str, Any] | None = None, stop_reason: str = "end_turn",
                ) -> dict[str, Any]:
    """A Messages API reply whose text block is ``result`` (JSON when a dict)."""
    text = result if isinstance(result, str) else json.dumps(result)
    return {"id": f"msg_{next(_COUNTER)}", "type": "message", "role": "assistant",
            "model": body.get("model", "claude-haiku-4-5"),
            "content": [{"type": "text", "text": text}], "stop_reason": stop_reason,
            "stop_sequence": None,
            "usage": usage or {"input_tokens": 1200, "output_tokens": 400,
                               "cache_creation_input_tokens": 0,
                               "cache_read_input_tokens": 6000}}


class FakeAPI:
    """An ``httpx2.MockTransport`` handler answering from a script; keeps every request body."""

    def __init__(self, script: Any) -> None:
        self.script = script
        self.bodies: list[dict[str, Any]] = []

    def __call__(self, request: httpx2.Request) -> httpx2.Response:
        body = json.loads(request.content)
        self.bodies.append(body)
        answer = self.script(body)
        if isinstance(answer, httpx2.Response):
            return answer
        return httpx2.Response(200, json=answer)

    def client(self) -> httpx2.Client:
        """An httpx2 client whose transport is this handler."""
        return httpx2.Client(transport=httpx2.MockTransport(self))

    @staticmethod
    def user_text(body: dict[str, Any]) -> str:
        """The user message of a request."""
        content = body["messages"][0]["content"]
        return content if isinstance(content, str) else json.dumps(content)
