"""Reading a Claude Code transcript (JSONL) into the conversation an extractor should see.

The file format is internal to Claude Code and changes between versions, so the reader is
defensive: unknown line types, unparseable lines and a half-written last line are skipped, never
fatal. What it keeps:

* the **main conversation**: the ``parentUuid`` chain from the latest leaf back to the start,
  crossing compaction boundaries through ``logicalParentUuid``; parallel tool calls, which Claude
  Code writes as side branches of the chain, are folded back in (an assistant line sharing the
  chain's ``message.id``, a tool result answering a kept tool call); abandoned branches (rewinds)
  and subagent sidechains are left out;
* user text, assistant text (lines of one API message — same ``message.id`` — merged), and a
  compact summary of each tool call: the tool name, its key argument and a truncated result.

What it drops: thinking, progress, API-request bookkeeping, attachments (hook context among
them), meta messages, Claude Code's ``<system-reminder>`` blocks and agentctx's own fenced
context (no feedback loop), and the post-compaction summary when the compacted part is still in
the file. Secrets are redacted by :func:`agentctx.core.redact.redact` in every rendered entry, and
before any text is cut (half a secret no longer matches its pattern).

Each entry remembers the byte offset of its first line, so a caller can take only what was
written after the offset it stored last time.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any, BinaryIO, NamedTuple

from agentctx.core.budget import truncate
from agentctx.core.redact import Redactor, redact
from agentctx.core.safeio import open_stream, read_line

# A transcript line longer than this is skipped (a real one, even with a pasted image, is far
# smaller; a sparse or corrupt file may have no newline at all).
LINE_MAX_BYTES = 32 << 20
USER_TEXT_MAX_CHARS = 6000
ASSISTANT_TEXT_MAX_CHARS = 4000
TOOL_ARG_MAX_CHARS = 200
TOOL_RESULT_MAX_CHARS = 300
LONG_RESULT_MAX_CHARS = 1000  # answers the developer gave (AskUserQuestion), subagent reports
PLAN_MAX_CHARS = 1500

# Context injected into the conversation by hooks (Claude Code wraps it in <system-reminder>)
# and agentctx's own fenced reference context: never extracted from.
_INJECTED = re.compile(
    r"<system-reminder>.*?(?:</system-reminder>|\Z)"
    r"|<agentctx\b[^>]*>.*?(?:</agentctx\b[^>]*>|\Z)"
    r"|<local-command-caveat>.*?</local-command-caveat>"
    r"|<local-command-stdout>.*?</local-command-stdout>"
    r"|<local-command-stderr>.*?</local-command-stderr>",
    re.DOTALL)
_COMMAND = re.compile(r"<command-name>(.*?)</command-name>", re.DOTALL)
_COMMAND_ARGS = re.compile(r"<command-args>(.*?)</command-args>", re.DOTALL)
_COMMAND_TAGS = re.compile(r"<command-(?:message|name|args)>.*?</command-(?:message|name|args)>",
                           re.DOTALL)
_HOOK_CONTEXT_PREFIX = re.compile(r"^\s*\w+ hook additional context:", re.IGNORECASE)

# The argument that says what a tool call did, by tool name.
_KEY_ARGUMENTS: dict[str, tuple[str, ...]] = {
    "Bash": ("command",),
    "Read": ("file_path",),
    "Write": ("file_path",),
    "Edit": ("file_path",),
    "MultiEdit": ("file_path",),
    "NotebookEdit": ("notebook_path",),
    "Glob": ("pattern", "path"),
    "Grep": ("pattern", "path"),
    "WebFetch": ("url",),
    "WebSearch": ("query",),
    "Task": ("subagent_type", "description"),
    "Agent": ("subagent_type", "description"),
    "Skill": ("skill",),
}
# Tools whose successful result is file content or a listing: only errors are worth keeping.
_QUIET_RESULTS = frozenset({"Read", "Write", "Edit", "MultiEdit", "NotebookEdit", "Glob", "Grep",
                            "TodoWrite", "LS"})
_LONG_RESULTS = frozenset({"AskUserQuestion", "Task", "Agent"})
# agentctx's own MCP tools return existing records: never read back as new information.
_OWN_TOOLS = "mcp__agentctx__"


class Entry(NamedTuple):
    """One rendered step of the conversation."""

    role: str  # "user" | "assistant" | "command" | "summary"
    text: str  # rendered and redacted
    timestamp: str | None
    offset: int  # byte offset of the entry's first line in the file


class Transcript(NamedTuple):
    """A parsed transcript."""

    path: str
    entries: list[Entry]  # the main conversation, oldest first
    session_id: str | None
    cwd: str | None
    git_branch: str | None
    version: str | None
    first_timestamp: str | None
    last_timestamp: str | None
    end_offset: int  # bytes of complete lines read (where the next read starts)
    lines: int  # complete lines read
    skipped_lines: int  # lines that were not JSON objects

    def since(self, offset: int) -> list[Entry]:
        """The entries whose first line starts at or after ``offset``."""
        return [entry for entry in self.entries if entry.offset >= offset]

    def before(self, offset: int) -> list[Entry]:
        """The entries that start before ``offset`` (already extracted)."""
        return [entry for entry in self.entries if entry.offset < offset]


class _Line(NamedTuple):
    offset: int
    data: dict[str, Any]


class TranscriptError(Exception):
    """A transcript that cannot be read at all (missing, unreadable, a folder)."""


def read_transcript(path: str | Path, *, line_max: int = LINE_MAX_BYTES) -> Transcript:
    """Parse the transcript at ``path``. Raises :class:`TranscriptError` only if unreadable.

    The file is read line by line; a line over ``line_max`` bytes is skipped (counted in
    ``skipped_lines``), so memory stays bounded whatever the file holds.
    """
    target = Path(path)
    try:
        handle = open_stream(target)
    except FileNotFoundError:
        raise TranscriptError(f"no transcript at {target}") from None
    except IsADirectoryError:
        raise TranscriptError(f"{target} is a folder, not a transcript") from None
    except OSError as exc:
        raise TranscriptError(f"cannot read {target}: {exc.strerror}") from None
    try:
        with handle:
            lines, end_offset, count, skipped = _split(handle, line_max)
    except OSError as exc:
        raise TranscriptError(f"cannot read {target}: {exc.strerror}") from None
    kept = _main_conversation(lines)
    entries = _without_learned(kept, list(_render(kept)))
    meta = _metadata(lines, kept)
    return Transcript(str(target), entries, meta["session_id"], meta["cwd"], meta["git_branch"],
                      meta["version"], meta["first"], meta["last"], end_offset, count, skipped)


def _without_learned(kept: list[_Line], entries: list[Entry]) -> list[Entry]:
    """``entries`` with every secret value found anywhere in the conversation removed from all
    of them: a password given in a command is gone from the output that repeats it bare."""
    redactor = Redactor()
    for line in kept:
        _learn(redactor, line.data, 0)
    if not redactor.known:
        return entries
    return [entry._replace(text=redactor(entry.text)) for entry in entries]


def _learn(redactor: Redactor, value: object, depth: int) -> None:
    if isinstance(value, str):
        redactor.learn(value)
    elif depth < 12 and isinstance(value, dict):
        for item in value.values():
            _learn(redactor, item, depth + 1)
    elif depth < 12 and isinstance(value, list):
        for item in value:
            _learn(redactor, item, depth + 1)


def peek_metadata(path: str | Path, max_lines: int = 200) -> dict[str, str | None]:
    """Session id, cwd and first timestamp from the head of a transcript (cheap; for listings)."""
    found: dict[str, str | None] = {"session_id": None, "cwd": None, "first": None}
    try:
        with open_stream(path) as handle:
            for _ in range(max_lines):
                line, consumed, _complete = read_line(handle, LINE_MAX_BYTES)
                if not consumed:
                    break
                if line is None:
                    continue
                try:
                    data = json.loads(line)
                except (json.JSONDecodeError, UnicodeDecodeError, RecursionError):
                    continue
                if not isinstance(data, dict):
                    continue
                for key, field in (("session_id", "sessionId"), ("cwd", "cwd"),
                                   ("first", "timestamp")):
                    value = data.get(field)
                    if found[key] is None and isinstance(value, str) and value:
                        found[key] = value
                if all(found.values()):
                    break
    except OSError:
        pass
    return found


# --------------------------------------------------------------------------- parsing


def _split(handle: BinaryIO, line_max: int) -> tuple[list[_Line], int, int, int]:
    """JSON object lines with their offsets; the end of the last complete line; counts."""
    lines: list[_Line] = []
    position = 0
    count = skipped = 0
    while True:
        raw, consumed, terminated = read_line(handle, line_max)
        if not consumed:
            break
        if raw is None:  # longer than line_max: skipped, unless it is still being written
            if not terminated:
                break
            data: object = False
        else:
            chunk = raw[:-1] if terminated else raw
            try:
                data = json.loads(chunk) if chunk.strip() else None
            except (json.JSONDecodeError, UnicodeDecodeError, RecursionError):
                data = False
            if not terminated and data is False:
                break  # a half-written last line: read it next time
        count += 1
        if isinstance(data, dict):
            lines.append(_Line(position, data))
        elif data is not None:
            skipped += 1
        position += consumed
    return lines, position, count, skipped


def _main_conversation(lines: list[_Line]) -> list[_Line]:
    """The lines of the main conversation, in file order (see the module docstring)."""
    by_uuid: dict[str, _Line] = {}
    for line in lines:
        uuid = line.data.get("uuid")
        if isinstance(uuid, str):
            by_uuid[uuid] = line
    if not by_uuid:
        return []
    with_uuid = [line for line in lines if isinstance(line.data.get("uuid"), str)]
    main = [line for line in with_uuid if not line.data.get("isSidechain")]
    leaf = (main or with_uuid)[-1]
    sidechain = bool(leaf.data.get("isSidechain"))
    chain: set[str] = set()
    current: _Line | None = leaf
    while current is not None:
        uuid = str(current.data["uuid"])
        if uuid in chain:
            break
        chain.add(uuid)
        parent = current.data.get("parentUuid") or current.data.get("logicalParentUuid")
        current = by_uuid.get(parent) if isinstance(parent, str) else None

    included: set[str] = set()
    message_ids: set[str] = set()
    tool_ids: set[str] = set()
    for line in with_uuid:
        if line.data.get("uuid") in chain and line.data.get("type") == "assistant":
            message_id = _message(line.data).get("id")
            if isinstance(message_id, str):
                message_ids.add(message_id)
    kept: list[_Line] = []
    for line in with_uuid:
        data = line.data
        uuid = str(data["uuid"])
        if bool(data.get("isSidechain")) != sidechain:
            continue
        keep = uuid in chain
        if not keep and data.get("parentUuid") in included:
            if data.get("type") == "assistant":
                keep = _message(data).get("id") in message_ids
            elif data.get("type") == "user":
                results = _tool_result_ids(data)
                keep = bool(results) and results <= tool_ids
        if not keep:
            continue
        included.add(uuid)
        if data.get("type") == "assistant":
            for block in _blocks(_message(data).get("content")):
                if block.get("type") == "tool_use" and isinstance(block.get("id"), str):
                    tool_ids.add(block["id"])
        kept.append(line)
    return kept


def _metadata(lines: list[_Line], kept: list[_Line]) -> dict[str, str | None]:
    found: dict[str, str | None] = {"session_id": None, "cwd": None, "git_branch": None,
                                    "version": None, "first": None, "last": None}
    for line in kept or lines:
        data = line.data
        for key, field in (("session_id", "sessionId"), ("cwd", "cwd"),
                           ("git_branch", "gitBranch"), ("version", "version")):
            value = data.get(field)
            if isinstance(value, str) and value:
                found[key] = found[key] or value
        stamp = data.get("timestamp")
        if isinstance(stamp, str) and stamp:
            found["first"] = found["first"] or stamp
            found["last"] = stamp
    if found["session_id"] is None:
        for line in lines:
            value = line.data.get("sessionId")
            if isinstance(value, str) and value:
                found["session_id"] = value
                break
    return found


def _message(data: dict[str, Any]) -> dict[str, Any]:
    message = data.get("message")
    return message if isinstance(message, dict) else {}


def _blocks(content: object) -> list[dict[str, Any]]:
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    if isinstance(content, list):
        return [b for b in content if isinstance(b, dict)]
    return []


def _tool_result_ids(data: dict[str, Any]) -> set[str]:
    blocks = _blocks(_message(data).get("content"))
    if not blocks or any(b.get("type") != "tool_result" for b in blocks):
        return set()
    return {str(b.get("tool_use_id")) for b in blocks}


# --------------------------------------------------------------------------- rendering


class _Result(NamedTuple):
    text: str
    is_error: bool


def _render(kept: list[_Line]) -> Iterator[Entry]:
    """Turn the kept lines into entries: merged assistant messages with tool summaries."""
    # Tool-use ids are unique in real transcripts, but a result is matched to the first answer
    # *after* its call anyway, so a reused id (seen with API stand-ins) cannot cross turns.
    results: dict[str, list[tuple[int, _Result]]] = {}
    for position, line in enumerate(kept):
        if line.data.get("type") == "user":
            for block in _blocks(_message(line.data).get("content")):
                if block.get("type") == "tool_result":
                    results.setdefault(str(block.get("tool_use_id")), []).append(
                        (position, _Result(_result_text(block.get("content")),
                                           bool(block.get("is_error")))))
    kept_uuids = {line.data.get("uuid") for line in kept}
    compacted_in_file = any(line.data.get("type") == "system"
                            and line.data.get("subtype") == "compact_boundary"
                            and line.data.get("logicalParentUuid") in kept_uuids
                            for line in kept)
    open_id: str | None = None
    parts: list[str] = []
    start: _Line | None = None
    for position, line in enumerate(kept):
        data = line.data
        kind = data.get("type")
        if kind == "assistant":
            message_id = _message(data).get("id")
            if start is not None and (message_id is None or message_id != open_id):
                entry = _finish(start, parts)
                if entry:
                    yield entry
                start, parts = None, []
            if start is None:
                start, open_id = line, message_id if isinstance(message_id, str) else None
            parts.extend(_assistant_parts(data, position, results))
            continue
        if kind != "user" or _tool_result_ids(data):
            continue  # tool results render with their calls; other kinds are dropped
        if start is not None:
            entry = _finish(start, parts)
            if entry:
                yield entry
            start, parts, open_id = None, [], None
        entry = _user_entry(line, compacted_in_file)
        if entry:
            yield entry
    if start is not None:
        entry = _finish(start, parts)
        if entry:
            yield entry


def _finish(start: _Line, parts: list[str]) -> Entry | None:
    text = "\n".join(part for part in parts if part.strip()).strip()
    if not text:
        return None
    return Entry("assistant", redact(text), _stamp(start.data), start.offset)


def _stamp(data: dict[str, Any]) -> str | None:
    value = data.get("timestamp")
    return value if isinstance(value, str) else None


def _user_entry(line: _Line, compacted_in_file: bool) -> Entry | None:
    data = line.data
    if data.get("isMeta") or data.get("isVisibleInTranscriptOnly"):
        return None
    if data.get("isCompactSummary"):
        if compacted_in_file:
            return None  # the compacted conversation is still in the file: read that instead
        summary = _clean_user_text(_joined_text(_message(data).get("content")))
        if not summary:
            return None
        return Entry("summary", truncate(redact(summary), USER_TEXT_MAX_CHARS, " […]"),
                     _stamp(data), line.offset)
    content = _message(data).get("content")
    raw = _joined_text(content)
    command = _COMMAND.search(raw)
    if command:
        args = _COMMAND_ARGS.search(raw)
        shown = command.group(1).strip() + (" " + args.group(1).strip() if args and
                                            args.group(1).strip() else "")
        # The arguments of a slash command are the developer's own words: kept like a prompt.
        return Entry("command", redact(_head_tail(shown, USER_TEXT_MAX_CHARS)), _stamp(data),
                     line.offset)
    text = _clean_user_text(raw)
    images = sum(1 for b in _blocks(content) if b.get("type") == "image")
    if images:
        text = (text + " " if text else "") + f"[{images} image{'s' if images > 1 else ''}]"
    if not text:
        return None
    return Entry("user", redact(_head_tail(text, USER_TEXT_MAX_CHARS)), _stamp(data), line.offset)


def _joined_text(content: object) -> str:
    return "\n".join(str(b.get("text", "")) for b in _blocks(content)
                     if b.get("type") == "text")


def _clean_user_text(text: str) -> str:
    cleaned = _INJECTED.sub("", text)
    cleaned = _COMMAND_TAGS.sub("", cleaned)
    if _HOOK_CONTEXT_PREFIX.match(cleaned):
        return ""
    return cleaned.strip()


def _head_tail(text: str, limit: int) -> str:
    text = redact(text)  # before cutting: half a secret no longer matches its pattern
    if len(text) <= limit:
        return text
    head = text[: limit * 2 // 3]
    tail = text[-(limit // 3):]
    return f"{head} […{len(text) - len(head) - len(tail)} characters omitted…] {tail}"


def _assistant_parts(data: dict[str, Any], position: int,
                     results: dict[str, list[tuple[int, _Result]]]) -> list[str]:
    parts: list[str] = []
    for block in _blocks(_message(data).get("content")):
        kind = block.get("type")
        if kind == "text":
            text = _INJECTED.sub("", str(block.get("text", ""))).strip()
            if text:
                parts.append(_head_tail(text, ASSISTANT_TEXT_MAX_CHARS))
        elif kind == "tool_use":
            answers = results.get(str(block.get("id")), [])
            answer = next((found for at, found in answers if at > position), None)
            parts.append(_tool_line(block, answer))
    return parts


def _tool_line(block: dict[str, Any], result: _Result | None) -> str:
    name = str(block.get("name") or "tool")
    tool_input = block.get("input") if isinstance(block.get("input"), dict) else {}
    assert isinstance(tool_input, dict)
    line = f"  → {name}{_tool_argument(name, tool_input)}"
    if result is None:
        return line
    if result.is_error:
        return line + " ⇒ error: " + _flat(result.text, TOOL_RESULT_MAX_CHARS)
    if name in _QUIET_RESULTS or name.startswith(_OWN_TOOLS) or not result.text.strip():
        return line
    limit = LONG_RESULT_MAX_CHARS if name in _LONG_RESULTS else TOOL_RESULT_MAX_CHARS
    return line + " ⇒ " + _flat(result.text, limit)


def _tool_argument(name: str, tool_input: dict[str, Any]) -> str:
    if name == "TodoWrite":
        todos = tool_input.get("todos")
        if isinstance(todos, list):
            items = [f"[{t.get('status', '?')}] {t.get('content', '')}" for t in todos
                     if isinstance(t, dict)]
            return ": " + _flat("; ".join(items), TOOL_RESULT_MAX_CHARS * 2)
    if name == "AskUserQuestion":
        questions = tool_input.get("questions")
        if isinstance(questions, list):
            asked = [str(q.get("question", "")) for q in questions if isinstance(q, dict)]
            return ": " + _flat(" | ".join(asked), LONG_RESULT_MAX_CHARS)
    if name == "ExitPlanMode":
        return ": plan: " + _flat(str(tool_input.get("plan", "")), PLAN_MAX_CHARS)
    keys = _KEY_ARGUMENTS.get(name)
    if keys is None:
        keys = tuple(k for k, v in tool_input.items() if isinstance(v, str) and v.strip())[:1]
    shown = [_flat(str(tool_input[k]), TOOL_ARG_MAX_CHARS) for k in keys
             if isinstance(tool_input.get(k), str | int | float) and str(tool_input[k]).strip()]
    return f"({', '.join(shown)})" if shown else ""


def _result_text(content: object) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        texts = []
        for block in content:
            if isinstance(block, dict) and block.get("type") == "text":
                texts.append(str(block.get("text", "")))
            elif isinstance(block, dict) and block.get("type") == "image":
                texts.append("[image]")
        return "\n".join(texts)
    return ""


def _flat(text: str, limit: int) -> str:
    """One line, redacted, then cut to ``limit`` characters."""
    return truncate(" ".join(redact(text).split()), limit, "…")
