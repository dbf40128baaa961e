"""PostToolUse and PostToolUseFailure (registered async): deterministic capture, no LLM.

* Write, Edit, MultiEdit, NotebookEdit → the file becomes an entity of the project, linked to the
  session by a ``touched`` edge (one per session and file).
* A failing Bash call (PostToolUseFailure, or output with ``Traceback``, ``error:``, ``FAILED`` …)
  → a ``bugfix`` stub, title only, for extraction to enrich — at most one per session and command
  signature (kept in the session's meta under ``bugfix_stubs``).
* Test runs (pytest, npm/yarn/pnpm test, go test, cargo test, …) → pass or fail in the session's
  meta under ``tests``, linked to the test files named (``tested`` edges).
* git commit, checkout, switch and merge → the session's meta under ``git``.

Everything stored is redacted first (records through ``records.add``, meta here), by one
:class:`~agentctx.core.redact.Redactor` per event: a secret found anywhere in the event (a password
in the command) is removed everywhere in it (the output that repeats it, the stub's title, file
names) before the first write.
"""

from __future__ import annotations

import os
import re

from agentctx.core.ids import now_iso
from agentctx.hooks.event import HookContext, log_problem
from agentctx.store import graph, records, sessions
from agentctx.store.db import Store
from agentctx.store.errors import InvalidRecord
from agentctx.store.models import Draft, Node

TYPE_CHECKING = False  # typing.TYPE_CHECKING: typing is too slow an import for a hook
if TYPE_CHECKING:
    from agentctx.core.redact import Redactor

FILE_TOOLS = {"Write": "file_path", "Edit": "file_path", "MultiEdit": "file_path",
              "NotebookEdit": "notebook_path"}
META_KEEP = 50
TEXT_MAX = 200
SIGNATURE_TOKENS = 4
# How much of each of a file tool's inputs (a Write's content) the redactor learns secrets from.
LEARN_MAX_CHARS = 256 * 1024

_FAILURE = re.compile(r"Traceback \(most recent call last\)|(?<![A-Za-z])(?i:error):|\bFAILED\b|"
                      r"npm ERR!|^FAIL\b|^--- FAIL|\bpanicked at\b", re.MULTILINE)
_ERROR_LINE = re.compile(r"\b\w*(?:Error|Exception)\b:|(?<![A-Za-z])(?i:error)[:\[]|\bFAILED\b|"
                         r"^FAIL\b|^--- FAIL|npm ERR!|panicked at", re.MULTILINE)
_TEST_COMMAND = re.compile(
    r"^(?:(?:python3?|uv run|poetry run|pipenv run|hatch run|pdm run)\s+(?:-m\s+)?)?"
    r"(?:pytest|py\.test|unittest|tox|nox|jest|vitest|mocha|ava|rspec|phpunit|ctest)\b|"
    r"^(?:npm|yarn|pnpm|bun)\s+(?:run\s+)?test\b|^npx\s+(?:jest|vitest|mocha|playwright)\b|"
    r"^(?:go|cargo|dotnet|deno|mix|swift|zig)\s+test\b|^(?:mvn|gradle|\./gradlew)\b.*\btest\b|"
    r"^make\s+(?:test|check)\b|^bundle\s+exec\s+rspec\b")
_TEST_FILE = re.compile(
    r"(?:^|/)(?:test_[\w.-]+\.py|[\w.-]+_test\.(?:py|go)|[\w.-]+\.(?:test|spec)\.[cm]?[jt]sx?|"
    r"[\w.-]+_spec\.rb|[\w.-]+Test\.(?:java|kt|php))$")
_FAILED_TEST = re.compile(r"^(?:FAILED|ERROR)\s+(\S+?)(?:::\S*)?(?:\s|$)", re.MULTILINE)
_SUMMARY = re.compile(r"^.*\b(?:passed|failed|failures?|errors?|ok|FAIL|PASS|Tests?:)\b.*$",
                      re.MULTILINE)
_FAILED_OUTCOME = re.compile(r"\b[1-9]\d* (?:failed|errors?|failing)\b|\bFAILED\b|^FAIL\b|"
                             r"^--- FAIL|test result: FAILED|Traceback \(most recent",
                             re.MULTILINE)
_SEGMENT_SPLIT = re.compile(r"&&|\|\||;|\n|\|")
_ENV_ASSIGNMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")
_GIT_OPS = ("commit", "checkout", "switch", "merge")
_COMMIT_HEAD = re.compile(r"^\[(?P<branch>[^\s\]]+)(?: \([^)]*\))? (?P<sha>[0-9a-f]{7,40})\] "
                          r"(?P<message>.*)$", re.MULTILINE)
_TRIVIAL = ("cd", "export", "source", ".", "echo", "set", "pushd", "popd", "true", "sleep")


def handle(ctx: HookContext) -> str | None:
    """Capture what the tool call shows; never injects anything."""
    tool = ctx.text("tool_name")
    failed = ctx.hook_event_name == "PostToolUseFailure"
    tool_input = ctx.payload.get("tool_input")
    if not isinstance(tool_input, dict):
        return None
    if tool in FILE_TOOLS:
        path = tool_input.get(FILE_TOOLS[tool])
        if failed or not isinstance(path, str) or not path.strip():
            return None
        db = ctx.store()
        resolved = ctx.resolved()
        if resolved.project.paused:
            return None
        from agentctx.core.redact import Redactor

        redactor = Redactor(path, *(value[:LEARN_MAX_CHARS] for value in tool_input.values()
                                    if isinstance(value, str)))
        try:
            name = file_name(path, ctx.cwd, resolved.worktree, redactor)
        except InvalidRecord as exc:
            log_problem(ctx.event, ctx.session_id, f"{tool} not captured: {exc}")
            return None
        with db.write():
            _ensure_session(ctx)
            node = graph.ensure_node(db, resolved.project.id, "file", name)
            graph.add_edge(db, ctx.session_id, node.id, "touched")
        return None
    if tool == "Bash":
        command = tool_input.get("command")
        if isinstance(command, str) and command.strip() and not ctx.payload.get("is_interrupt"):
            _capture_bash(ctx, command, failed)
    return None


def _ensure_session(ctx: HookContext) -> None:
    sessions.ensure(ctx.store(), ctx.session_id, ctx.resolved().project.id, cwd=ctx.cwd,
                    transcript_path=ctx.transcript_path)


def file_name(path: str, cwd: str, worktree: str, redactor: Redactor | None = None) -> str:
    """A file's entity name: relative to the worktree root when inside it (absolute otherwise),
    redacted; :class:`InvalidRecord` when the path is too long to be a file's.

    The name is redacted whole before it is normalised (``normpath`` can fold a key's ``//``
    and a pattern would no longer see it), with the event's learned secrets when given."""
    if len(path) > graph.NAME_MAX_CHARS:
        return graph.entity_name(path)  # raises before any path arithmetic on the huge string
    from agentctx.core.redact import redact_path

    path = redactor.path(path) if redactor is not None else redact_path(path)
    absolute = path if os.path.isabs(path) else os.path.normpath(os.path.join(cwd, path))
    return graph.entity_name(absolute, worktree)


def tool_output(payload: dict[str, object]) -> str:
    """What a Bash call printed (stdout and stderr), or the failure's ``error`` text."""
    parts: list[str] = []
    error = payload.get("error")
    if isinstance(error, str):
        parts.append(error)
    response = payload.get("tool_response")
    if isinstance(response, dict):
        for key in ("stdout", "stderr"):
            value = response.get(key)
            if isinstance(value, str) and value:
                parts.append(value)
    elif isinstance(response, str):
        parts.append(response)
    return "\n".join(parts)


def segments(command: str) -> list[list[str]]:
    """The simple commands of a shell line, each as words without leading ``VAR=value``."""
    found = []
    for raw in _SEGMENT_SPLIT.split(command):
        words = raw.split()
        while words and (_ENV_ASSIGNMENT.match(words[0]) or words[0] in ("sudo", "time",
                                                                          "env", "exec")):
            words = words[1:]
        if words:
            found.append(words)
    return found


def signature(command: str) -> str:
    """A failing command's identity: its first substantial simple command, options dropped."""
    chosen: list[str] = []
    for words in segments(command):
        if words[0] not in _TRIVIAL:
            chosen = words
            break
    if not chosen:
        chosen = command.split()
    kept = [w for w in chosen if not w.startswith("-")][:SIGNATURE_TOKENS]
    return " ".join(kept)[:120]


def looks_failed(output: str) -> bool:
    """Whether command output shows a failure (traceback, ``error:``, ``FAILED`` …)."""
    return bool(_FAILURE.search(output))


def error_line(output: str) -> str:
    """The most telling line of a failure's output (the last error-looking one)."""
    best = ""
    for match in _ERROR_LINE.finditer(output):
        start = output.rfind("\n", 0, match.start()) + 1
        end = output.find("\n", match.start())
        line = output[start:end if end >= 0 else len(output)].strip()
        if line:
            best = line
    if not best:
        lines = [ln.strip() for ln in output.splitlines() if ln.strip()]
        lines = [ln for ln in lines if not re.match(r"^Exit code \d+$", ln)] or lines
        best = lines[0] if lines else ""
    return " ".join(best.split())


def is_test_command(words: list[str]) -> bool:
    """Whether a simple command runs a test suite."""
    return bool(_TEST_COMMAND.match(" ".join(words)))


def named_test_files(words: list[str], output: str) -> list[str]:
    """Test files named by a test command's arguments or its failure lines, in order."""
    found: dict[str, None] = {}
    for word in words[1:]:
        candidate = word.split("::", 1)[0].strip("'\"")
        if _TEST_FILE.search(candidate) or (candidate.startswith(("tests/", "test/"))
                                            and "." in os.path.basename(candidate)):
            found.setdefault(candidate, None)
    for match in _FAILED_TEST.finditer(output):
        if _TEST_FILE.search(match.group(1)):
            found.setdefault(match.group(1), None)
    return list(found)[:20]


def _test_file_names(paths: list[str], cwd: str, worktree: str,
                     redactor: Redactor) -> list[str]:
    """Entity names of the test files a run named (a name too long to be a file's is left out)."""
    names = []
    for path in paths:
        try:
            names.append(file_name(path, cwd, worktree, redactor))
        except InvalidRecord:
            continue
    return list(dict.fromkeys(names))


def _short(text: str) -> str:
    from agentctx.core.redact import redact

    flat = " ".join(redact(text).split())
    return flat if len(flat) <= TEXT_MAX else flat[:TEXT_MAX - 1] + "…"


def _capture_bash(ctx: HookContext, command: str, failed_call: bool) -> None:
    from agentctx.core.redact import Redactor

    # Redacted before anything is parsed or cut: a signature drops options (curl's -u) and
    # texts are cut to length, either of which can leave a secret its pattern no longer sees.
    # What the command gives away (redis://:pw@, curl -u user:pw) is learned first, so the
    # output that repeats it bare ("auth failed for pw") loses it too.
    raw_output = tool_output(ctx.payload)
    redactor = Redactor(command, raw_output)
    command = redactor(command)
    output = redactor(raw_output)
    simple = segments(command)
    tests = [words for words in simple if is_test_command(words)]
    failed = (failed_call or looks_failed(output)
              or bool(tests and _FAILED_OUTCOME.search(output)))
    git = [words for words in simple
           if len(words) > 1 and words[0] == "git" and _git_op(words) in _GIT_OPS]
    if not (failed or tests or git):
        return
    db = ctx.store()
    resolved = ctx.resolved()
    if resolved.project.paused:
        return
    project_id = resolved.project.id
    with db.write():
        _ensure_session(ctx)
        tested_nodes: list[Node] = []
        for words in tests:
            files = _test_file_names(named_test_files(words, output), ctx.cwd,
                                     resolved.worktree, redactor)
            nodes = [graph.ensure_node(db, project_id, "file", name) for name in files]
            for node in nodes:
                graph.add_edge(db, ctx.session_id, node.id, "tested")
            tested_nodes.extend(nodes)
            outcome = "fail" if failed else "pass"
            summaries = _SUMMARY.findall(output)
            sessions.append_meta(db, ctx.session_id, "tests", {
                "at": now_iso(), "command": _short(" ".join(words)), "outcome": outcome,
                "summary": _short(summaries[-1]) if summaries else "", "files": files},
                META_KEEP)
        for words in git:
            sessions.append_meta(db, ctx.session_id, "git", _git_event(words, output,
                                                                        failed), META_KEEP)
        if failed:
            _bugfix_stub(db, ctx, command, output, tested_nodes)


def _bugfix_stub(db: Store, ctx: HookContext, command: str, output: str,
                 nodes: list[Node]) -> None:
    sig = _short(signature(command))
    session = sessions.get(db, ctx.session_id)
    stubs = session.meta.get("bugfix_stubs") if session else None
    stubs = dict(stubs) if isinstance(stubs, dict) else {}
    if sig in stubs:
        return
    detail = error_line(output)
    title = f"{sig} failed: {detail}" if detail else f"{sig} failed"
    record = records.add(db, Draft(type="bugfix", title=_short(title), source="hook_observation",
                                   session_id=ctx.session_id, confidence="inferred"),
                         project_id=ctx.resolved().project.id)
    for node in nodes:
        graph.link_record(db, record.id, node, "tests")
    stubs[sig] = record.id
    sessions.update_meta(db, ctx.session_id, "bugfix_stubs", stubs)


def _git_op(words: list[str]) -> str:
    index = 1
    while index < len(words) and words[index].startswith("-"):
        # git -C <dir> / -c <key=value> take a value.
        index += 2 if words[index] in ("-C", "-c") else 1
    return words[index] if index < len(words) else ""


def _git_event(words: list[str], output: str, failed: bool) -> dict[str, object]:
    op = _git_op(words)
    args = words[words.index(op) + 1:]
    event: dict[str, object] = {"at": now_iso(), "op": op, "ok": not failed,
                                "command": _short(" ".join(words))}
    if op in ("checkout", "switch"):
        new = next((args[i + 1] for i, w in enumerate(args[:-1]) if w in ("-b", "-B", "-c",
                                                                            "-C")), None)
        plain = [w for w in args if not w.startswith("-")]
        target = new or (plain[-1] if plain else None)
        if target and target != "--":
            event["branch"] = _short(target)
        if new:
            event["created"] = True
    elif op == "merge":
        plain = [w for w in args if not w.startswith("-")]
        if plain:
            event["branch"] = _short(plain[-1])
    elif op == "commit":
        head = _COMMIT_HEAD.search(output)
        if head:
            event["branch"] = _short(head.group("branch"))
            event["sha"] = head.group("sha")
            event["message"] = _short(head.group("message"))
        else:
            message = _commit_message(" ".join(words))
            if message:
                event["message"] = _short(message)
    return event


def _commit_message(command: str) -> str:
    match = re.search(r"(?:-m|--message)[= ]\s*(?:\"((?:[^\"\\]|\\.)*)\"|'([^']*)'|(\S+))",
                      command)
    if not match:
        return ""
    return next(group for group in match.groups() if group is not None)
