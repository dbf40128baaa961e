"""The fail-open hook dispatcher: ``agentctx hook <event>`` reads Claude Code's JSON from stdin.

Events (the names Claude Code's settings register): ``session-start``, ``prompt``, ``post-tool``
(PostToolUse and PostToolUseFailure), ``pre-compact``, ``stop``, ``session-end``, ``cwd-changed``
and ``subagent-start``; each has a module here with ``handle(ctx) -> str | None``.

Fail open, always: malformed or missing input, an unknown event, a store locked past the hook's
busy timeout or newer than this code, any exception — one line in ``<home>/logs/hooks.log``, exit
0, nothing on stdout. Stdout is exactly one JSON object
``{"hookSpecificOutput": {"hookEventName": …, "additionalContext": …}}`` or nothing — model-facing
text goes only in ``additionalContext`` (Claude Code shows ``systemMessage`` to the user, never
to the model), and never over Claude Code's 10,000-unit cap (:func:`fit_output`); the exit code
is never 2 (that would erase the user's prompt). ``AGENTCTX_DISABLE=1`` (or the ``disable`` knob)
turns every hook into a no-op.
"""

from __future__ import annotations

import json
import os
import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, NoReturn

# event -> (module, Claude Code event names it accepts; the first is the default)
EVENTS: dict[str, tuple[str, tuple[str, ...]]] = {
    "session-start": ("session_start", ("SessionStart",)),
    "prompt": ("prompt", ("UserPromptSubmit",)),
    "post-tool": ("post_tool", ("PostToolUse", "PostToolUseFailure")),
    "pre-compact": ("pre_compact", ("PreCompact",)),
    "stop": ("stop", ("Stop",)),
    "session-end": ("session_end", ("SessionEnd",)),
    "cwd-changed": ("cwd_changed", ("CwdChanged",)),
    "subagent-start": ("subagent_start", ("SubagentStart",)),
}
# Events whose output Claude Code adds to the model's context.
INJECTING = frozenset({"SessionStart", "UserPromptSubmit", "SubagentStart"})
SESSION_ID_MAX = 200
_TRUE = ("1", "true", "yes", "on")


def main(args: list[str]) -> NoReturn:
    """The ``agentctx hook`` process: run the hook, then leave at once with exit code 0.

    ``os._exit`` skips the interpreter's teardown and the store's close-time WAL checkpoint (an
    fsync), which would otherwise dominate a hook's run time. Nothing is lost: every write has
    committed, SQLite treats the unclosed connection like any ended process (the WAL is
    checkpointed later by another writer), stdout and stderr are flushed first, and the hook log
    is written unbuffered.
    """
    code = run(args, close_store=False)
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    finally:
        os._exit(code)


def run(args: list[str], *, close_store: bool = True) -> int:
    """Run one hook call; always returns 0 (``close_store=False`` leaves the store open)."""
    event = args[0] if args else ""
    session_id = ""
    try:
        raw = _read_stdin()
        if os.environ.get("AGENTCTX_DISABLE", "").strip().lower() in _TRUE:
            return 0
        if event not in EVENTS:
            _log(event, "", f"unknown hook event {event!r} (expected one of "
                            f"{', '.join(EVENTS)})")
            return 0
        payload = _parse(raw)
        if isinstance(payload, str):
            _log(event, "", payload)
            return 0
        session_id = str(payload.get("session_id", ""))
        problem = _check(event, payload)
        if problem:
            _log(event, session_id, problem)
            return 0
        hook_event_name = str(payload.get("hook_event_name") or EVENTS[event][1][0])
        text = _handle(event, hook_event_name, payload, close_store)
        if text and hook_event_name in INJECTING:
            _emit(hook_event_name, text)
    except BaseException as exc:  # fail open: even KeyboardInterrupt or SystemExit leaves exit 0
        _log_exception(event, session_id, exc)
    return 0


def _read_stdin() -> bytes:
    try:
        stream = sys.stdin.buffer if sys.stdin is not None else None
    except AttributeError:
        return b""
    if stream is None or stream.isatty():  # run by hand in a terminal: there is no payload
        return b""
    return stream.read()


def _parse(raw: bytes) -> dict[str, object] | str:
    """The payload object, or a one-line reason why there is none."""
    if not raw.strip():
        return "no JSON payload on stdin"
    try:
        payload = json.loads(raw)
    except ValueError as exc:
        return f"malformed JSON payload on stdin: {exc}"
    except RecursionError:
        return "JSON payload on stdin is nested too deeply"
    if not isinstance(payload, dict):
        return f"payload is a JSON {type(payload).__name__}, not an object"
    if b"\\ud" in raw.lower():  # an escaped lone surrogate cannot be stored or logged
        scrubbed: dict[str, object] = _scrub(payload)
        return scrubbed
    return payload


def _scrub(value: Any) -> Any:
    """``value`` with lone UTF-16 surrogates in its strings replaced by U+FFFD."""
    if isinstance(value, str):
        return value.encode("utf-8", "surrogatepass").decode("utf-8", "replace")
    if isinstance(value, list):
        return [_scrub(item) for item in value]
    if isinstance(value, dict):
        return {_scrub(key): _scrub(item) for key, item in value.items()}
    return value


def _check(event: str, payload: dict[str, object]) -> str:
    """Why the payload cannot be used for ``event`` (``""`` when it can)."""
    session_id = payload.get("session_id")
    if not isinstance(session_id, str) or not session_id.strip():
        return "payload has no session_id"
    if len(session_id) > SESSION_ID_MAX or not session_id.isprintable():
        return "payload's session_id is not a plausible id"
    name = payload.get("hook_event_name")
    if name is not None and name not in EVENTS[event][1]:
        return f"payload is for {name!r}, not for 'agentctx hook {event}'"
    cwd = payload.get("cwd")
    if cwd is not None and (not isinstance(cwd, str) or "\x00" in cwd):
        return "payload's cwd is not a path"
    return ""


def _handle(event: str, hook_event_name: str, payload: dict[str, object],
            close_store: bool) -> str | None:
    from agentctx.core import config
    from agentctx.hooks.event import HookContext, log_problem

    try:
        cfg = config.Config.load()
        if cfg.get_bool("disable"):
            return None
    except config.ConfigError as exc:
        log_problem(event, str(payload.get("session_id", "")),
                    f"config problem, using defaults: {exc}")
        cfg = config.Config({}, environ={})
    module = __import__(f"agentctx.hooks.{EVENTS[event][0]}", fromlist=["handle"])
    ctx = HookContext(event, hook_event_name, payload, cfg)
    try:
        result: str | None = module.handle(ctx)
    finally:
        if close_store:
            ctx.close()
    return result


def fit_output(text: str) -> str:
    """``text`` within Claude Code's cap on a hook output value, which counts UTF-16 code units:
    the injection laws keep a text under 8,000 characters, but a character beyond the Basic
    Multilingual Plane (an emoji) counts two there. Should a text of many such characters still
    exceed it, each of them becomes U+FFFD (one unit), which keeps the fence and every line."""
    from agentctx.core.laws import CLAUDE_CODE_OUTPUT_MAX

    if len(text) * 2 <= CLAUDE_CODE_OUTPUT_MAX or \
            len(text.encode("utf-16-le")) // 2 <= CLAUDE_CODE_OUTPUT_MAX:
        return text
    return "".join(ch if ord(ch) <= 0xFFFF else "\ufffd" for ch in text)


def _emit(hook_event_name: str, text: str) -> None:
    document = json.dumps({"hookSpecificOutput": {"hookEventName": hook_event_name,
                                                  "additionalContext": fit_output(text)}},
                          ensure_ascii=False)
    sys.stdout.buffer.write(document.encode("utf-8"))
    sys.stdout.buffer.flush()


def _log(event: str, session_id: str, message: str) -> None:
    from agentctx.hooks.event import log_problem

    log_problem(event, session_id, message)


def _log_exception(event: str, session_id: str, exc: BaseException) -> None:
    try:
        from agentctx.hooks.event import describe, log_problem
        from agentctx.store.errors import StoreLocked, StoreTooNew

        if isinstance(exc, StoreTooNew | StoreLocked):
            log_problem(event, session_id, f"{exc} (hook skipped)")
        elif _is_locked(exc):
            log_problem(event, session_id, f"the store stayed locked past the hook's busy "
                                           f"timeout (hook skipped): {exc}")
        else:
            log_problem(event, session_id, f"hook failed: {describe(exc)}")
    except BaseException:
        pass


def _is_locked(exc: BaseException) -> bool:
    import sqlite3

    return isinstance(exc, sqlite3.OperationalError) and (
        "locked" in str(exc) or "busy" in str(exc))
