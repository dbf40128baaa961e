"""Scripting Claude Code conversations on the Messages stand-in, and reading what the model saw.

:class:`ClaudeScript` answers Claude Code's requests by the latest user prompt: a rule lists the
tool calls to make for prompts containing some words, one per request, and stops issuing
``tool_use`` once that many ``tool_result`` blocks follow the prompt (or Claude Code loops).
Requests that are not Claude Code's — agentctx's own extraction calls through the anthropic SDK —
get a minimal valid answer to the JSON schema they ask for, so the whole loop runs.

:func:`injections` finds the hook context Claude Code put into a request: it arrives as
``"<Event> hook additional context: <text>"`` inside system-role messages.
"""

from __future__ import annotations

import re
import threading
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from agentctx.context import injection
from tests.support.messages_standin import (
    Reply,
    StandInRequest,
    json_reply,
    text_reply,
    tool_use_reply,
)

ULID = re.compile(r"\b[0-9A-HJKMNP-TV-Z]{26}\b")
_LABEL = re.compile(r"(\w+) hook additional context: ")
_END = "</agentctx-context>"


@dataclass
class Rule:
    """Tool calls to make, in order, for prompts containing ``words``; then ``final`` text."""

    words: str
    calls: list[tuple[str, dict[str, Any]]]
    final: str = "Done."


@dataclass
class ClaudeScript:
    """A stand-in script for Claude Code (see the module docstring)."""

    rules: list[Rule] = field(default_factory=list)
    other_requests: list[StandInRequest] = field(default_factory=list)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def on(self, words: str, *calls: tuple[str, dict[str, Any]], final: str = "Done.") -> None:
        """For prompts containing ``words``, make ``calls`` one by one, then answer ``final``."""
        self.rules.append(Rule(words.lower(), list(calls), final))

    def __call__(self, request: StandInRequest) -> Reply:
        if not is_claude_code(request):
            with self._lock:
                self.other_requests.append(request)
            return extraction_reply(request)
        prompt = user_prompt(request).lower()
        done = len(request.tool_results_since_prompt())
        for rule in self.rules:
            if rule.words in prompt:
                if done < len(rule.calls):
                    name, tool_input = rule.calls[done]
                    return tool_use_reply(name, tool_input)
                return text_reply(rule.final)
        return text_reply("Noted.")


def is_claude_code(request: StandInRequest) -> bool:
    """Whether the request came from the Claude Code CLI (not the anthropic SDK)."""
    return request.headers.get("user-agent", "").startswith("claude-cli/")


def _texts(content: object) -> list[str]:
    if isinstance(content, str):
        return [content]
    if isinstance(content, list):
        return [str(block.get("text", "")) for block in content
                if isinstance(block, dict) and block.get("type") == "text"]
    return []


def user_prompt(request: StandInRequest) -> str:
    """What the user typed last: the latest user text that is not a ``<system-reminder>``."""
    for message in reversed(request.messages()):
        if message.get("role") != "user":
            continue
        typed = [text for text in _texts(message.get("content"))
                 if text.strip() and not text.lstrip().startswith("<system-reminder>")]
        if typed:
            return typed[-1]
    return ""


class Injection(NamedTuple):
    """One piece of hook context as the model received it."""

    event: str  # Claude Code's event name, e.g. SessionStart
    message_index: int  # position of the message that carried it
    text: str

    @property
    def ids(self) -> set[str]:
        """Record ids the text's entries show (the store's short ids, or whole ULIDs)."""
        return set(injection.ids_in(self.text)) | set(ULID.findall(self.text))

    def names(self, record_id: str) -> bool:
        """Whether an entry of the text names ``record_id`` (by its short id or in full)."""
        return any(record_id.startswith(shown) for shown in self.ids)


def injections(request: StandInRequest, event: str | None = None) -> list[Injection]:
    """Every hook context in the request (optionally only ``event``'s), in message order."""
    found: list[Injection] = []
    sources: list[tuple[int, str]] = [(-1, request.system_text())]
    sources += [(index, text) for index, message in enumerate(request.messages())
                for text in _texts(message.get("content"))]
    for index, text in sources:
        labels = list(_LABEL.finditer(text))
        for position, label in enumerate(labels):
            end = labels[position + 1].start() if position + 1 < len(labels) else len(text)
            body = text[label.end():end]
            if _END in body:
                body = body[:body.index(_END) + len(_END)]
            if event is None or label.group(1) == event:
                found.append(Injection(label.group(1), index, body))
    return found


def tool_results(request: StandInRequest) -> dict[str, str]:
    """The text of every ``tool_result`` in the request, by ``tool_use_id``."""
    results: dict[str, str] = {}
    for message in request.messages():
        content = message.get("content")
        if not isinstance(content, list):
            continue
        for block in content:
            if isinstance(block, dict) and block.get("type") == "tool_result":
                results[str(block.get("tool_use_id"))] = "\n".join(_texts(block.get("content"))) \
                    if not isinstance(block.get("content"), str) else str(block["content"])
    return results


def tool_uses(request: StandInRequest) -> dict[str, str]:
    """Tool name by ``tool_use`` id, over the request's assistant messages."""
    uses: dict[str, str] = {}
    for message in request.messages():
        content = message.get("content")
        if message.get("role") == "assistant" and isinstance(content, list):
            for block in content:
                if isinstance(block, dict) and block.get("type") == "tool_use":
                    uses[str(block.get("id"))] = str(block.get("name"))
    return uses


# ------------------------------------------------------------------ agentctx's own LLM calls


def minimal_instance(schema: dict[str, Any], defs: dict[str, Any] | None = None) -> Any:
    """The smallest value valid under a JSON schema: empty lists, nulls if allowed, first enum."""
    definitions = {**(defs or {}), **schema.get("$defs", {}), **schema.get("definitions", {})}
    if "$ref" in schema:
        target = definitions.get(str(schema["$ref"]).rsplit("/", 1)[-1], {})
        return minimal_instance(target, definitions)
    for key in ("anyOf", "oneOf"):
        if key in schema:
            options = schema[key]
            for option in options:
                if option.get("type") == "null":
                    return None
            return minimal_instance(options[0], definitions)
    if "const" in schema:
        return schema["const"]
    if "enum" in schema:
        return schema["enum"][0]
    kind = schema.get("type", "object")
    if isinstance(kind, list):
        kind = "null" if "null" in kind else kind[0]
    if kind == "object":
        properties = schema.get("properties", {})
        return {name: minimal_instance(properties.get(name, {}), definitions)
                for name in schema.get("required", list(properties))}
    if kind == "array":
        count = int(schema.get("minItems", 0))
        return [minimal_instance(schema.get("items", {}), definitions) for _ in range(count)]
    return {"string": "", "integer": 0, "number": 0, "boolean": False, "null": None}.get(kind)


def extraction_reply(request: StandInRequest) -> Reply:
    """A valid, empty answer to a structured-output call (nothing extracted)."""
    output = request.body.get("output_config")
    schema = output.get("format", {}).get("schema") if isinstance(output, dict) else None
    if isinstance(schema, dict):
        return json_reply(minimal_instance(schema))
    return text_reply("{}")
