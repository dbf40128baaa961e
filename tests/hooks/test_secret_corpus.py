"""Secrets of every kind, through every way in: none is kept verbatim, none reaches the model.

The corpus (``tests/support/secret_corpus.py``) goes through the real hook processes (prompts,
failing commands, test runs, git commits, written files), the real MCP server over stdio (records,
supersession rationales, file names, searches), and a transcript that the real Stop, PreCompact
and SessionEnd hooks hand to their detached children (extraction against a loopback stand-in for
the Messages API, then consolidation). Many secrets are placed across the cuts agentctx makes
(tool arguments at 200 characters, tool results at 300, command signatures at 120, handover items
at 300), where cutting before redacting would keep half a secret.

Afterwards no ten consecutive characters of any secret may appear in any file under the home (the
store, its WAL, logs, backups), in anything a hook injected, in any MCP result, or in any request
sent to the model; and every file agentctx wrote is private.
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import ClientSession, StdioServerParameters, stdio_client, types

from tests.extract.builders import TranscriptWriter, extraction
from tests.hooks.conftest import SESSION, at, payloads, run_hook
from tests.support.messages_standin import MessagesStandIn, Reply, StandInRequest, json_reply
from tests.support.secret_corpus import SECRETS, Secret, generated

WINDOW = 10  # this many consecutive characters of a secret count as keeping it
# Secrets that are one word and can name a file (keys/<secret>.txt).
FILE_KINDS = ("aws-access-key", "github-token", "slack-token", "stripe-key", "openai-key",
              "anthropic-key", "npm-token", "google-api-key", "sendgrid-key", "gitlab-token",
              "huggingface-token", "jwt", "aws-secret-key")


def windows(secret: str) -> set[str]:
    """Every run of :data:`WINDOW` characters of ``secret`` (the whole of a shorter one)."""
    if len(secret) <= WINDOW:
        return {secret}
    return {secret[i:i + WINDOW] for i in range(len(secret) - WINDOW + 1)}


def leaks(blobs: Iterable[str | bytes], corpus: Iterable[Secret]) -> list[str]:
    """``kind: window`` for every piece of a secret found in ``blobs``."""
    found = []
    data = [b if isinstance(b, bytes) else b.encode("utf-8", "replace") for b in blobs]
    for case in corpus:
        for piece in sorted(windows(case.secret)):
            needle = piece.encode()
            if any(needle in blob for blob in data):
                found.append(f"{case.kind}: {piece!r}")
                break
    return found


def file_secrets(corpus: Iterable[Secret]) -> list[Secret]:
    """The secrets that can be a file's name (a word of letters, digits, ``-._/+``)."""
    return [c for c in corpus if c.kind in FILE_KINDS and "/" not in c.secret]


class Exposure:
    """Everything that went to the model: hook injections, MCP results, API requests."""

    def __init__(self) -> None:
        self.sent: list[str] = []

    def hook(self, event: str, payload: dict[str, Any], env: dict[str, str], cwd: Path) -> None:
        self.sent.append(run_hook(event, payload, env=env, cwd=cwd, launcher=True).stdout)


def _echoing(corpus: list[Secret]) -> Any:
    """A model that puts secrets in its answer (as a model might from its own knowledge)."""
    named = file_secrets(corpus)
    # Secrets alone, or in a text without spaces, so that a cut cannot move to a word boundary.
    unspaced = [c._replace(text=c.secret) for c in named[:4]] + \
        [c for c in corpus if c.kind == "azure-key"]

    def reply(request: StandInRequest) -> Reply:
        # Titles are cut at 200 characters ("Handover: " comes first in a handover's).
        return json_reply(extraction(
            decisions=[{"what": "Staging uses the shared replica", "rationale": corpus[0].text,
                        "supersedes": None, "confidence": "explicit"},
                       *({"what": across(case, 199), "rationale": "r", "supersedes": None,
                          "confidence": "explicit"} for case in unspaced)],
            conventions=[{"scope": "file", "convention": "Keys live in keys/",
                          "applies_to": [f"keys/{c.secret}.txt" for c in named[:3]],
                          "supersedes": None, "confidence": "explicit"}],
            gotchas=[{"pattern": f"Login fails with {corpus[1].secret}",
                      "why_it_matters": corpus[2].text}],
            active_work={"current_task": across(unspaced[0], 199, before=len("Handover: ")),
                         "blockers": [corpus[4].text],
                         "next_steps": [], "open_questions": []}))
    return reply


def across(case: Secret, cut: int, before: int = 0) -> str:
    """``case.text`` padded so that a cut after ``cut`` characters (``before`` of which come
    ahead of the padding) falls in the middle of its secret."""
    middle = case.text.index(case.secret) + len(case.secret) // 2
    return ("z" * max(0, cut - before - middle - 1) + ":" + case.text)


def _transcript(path: Path, cwd: Path, corpus: list[Secret]) -> Path:
    writer = TranscriptWriter(path, session_id=SESSION, cwd=str(cwd))
    named = {c.kind: c.secret for c in file_secrets(corpus)}
    for n, case in enumerate(corpus):
        writer.user(f"Please wire up the deploy; the credentials are {case.text}")
        key_file = f"{cwd}/keys/{named.get(case.kind, 'app')}.txt"
        writer.assistant(f"Using {case.text} for now.",
                         tools=[("Bash", {"command": "x" * (185 + n % 10) + " " + case.text}),
                                ("Read", {"file_path": key_file})],
                         results=["y" * (285 + n % 10) + " " + case.text, "file content"])
    # PreCompact keeps 299 characters of an item shown as "[pending] <content>".
    writer.assistant(tools=[("TodoWrite", {"todos": [
        {"content": across(c, 299, before=len("[pending] ")), "status": "pending",
         "activeForm": "rotating"} for c in corpus]})], results=["ok"])
    return writer.save()


def _wait(path: Path, needles: tuple[str, ...], timeout: float = 120) -> str:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        text = path.read_text(encoding="utf-8", errors="replace") if path.exists() else ""
        if any(needle in text for needle in needles):
            return text
        time.sleep(0.2)
    raise AssertionError(f"none of {needles} in {path}")


async def _mcp(home: Path, project: Path, corpus: list[Secret], sent: list[str]) -> None:
    params = StdioServerParameters(command=sys.executable, args=["-P", "-m", "agentctx", "mcp"],
                                   env={"AGENTCTX_HOME": str(home), "PATH": os.environ["PATH"],
                                        "CLAUDE_PROJECT_DIR": str(project)}, cwd=str(project))

    async def call(session: ClientSession, tool: str, **arguments: Any) -> str:
        result = await session.call_tool(tool, arguments=arguments)
        block = result.content[0]
        assert isinstance(block, types.TextContent)
        sent.append(block.text)
        return block.text

    named = {c.kind: c.secret for c in file_secrets(corpus)}
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        for n, case in enumerate(corpus):
            text = await call(session, "ctx_record", type="discovery", title=case.text[:300],
                              body=f"Connect with {case.text}", files=[
                                  f"keys/{named.get(case.kind, 'plain')}.txt"])
            assert text.startswith("Recorded "), text
            record_id = text.split()[1]
            replaced = await call(session, "ctx_supersede", old_id=record_id,
                                  new_body=f"Rotated; the new one is {case.text}",
                                  rationale=f"the old {case.text} leaked ({n})")
            assert "Current now:" in replaced, replaced
            await call(session, "ctx_search", query=case.text[:900])
            await call(session, "ctx_get", ids=[record_id])
            await call(session, "ctx_related", file=f"keys/{named.get(case.kind, 'plain')}.txt")


def push_through_everything(app: Path, tmp_path: Path, home: Path,
                            corpus: list[Secret]) -> Exposure:
    """Run ``corpus`` through every way in; returns what went to the model."""
    exposure = Exposure()
    with MessagesStandIn(_echoing(corpus)) as standin:
        env = {"ANTHROPIC_API_KEY": "test-key", "ANTHROPIC_BASE_URL": standin.base_url,
               "AGENTCTX_EXTRACT_MIN_NEW_TOKENS": "0", "AGENTCTX_EMBEDDINGS": "off",
               "AGENTCTX_LLM_COST_CAP_USD": "100"}  # the full-size transcript is long
        exposure.hook("session-start", at(payloads("SessionStart")[0], app), env, app)
        for n, case in enumerate(corpus):
            # Whole, and again across the 2,000 characters a session keeps of a prompt.
            prompt = f"why does {case.text} fail? " + "p" * (1960 + n % 20) + case.text
            exposure.hook("prompt", at(payloads("UserPromptSubmit")[0], app, prompt=prompt),
                          env, app)
            failure = at(payloads("PostToolUseFailure")[0], app)
            failure["tool_input"] = {"command": "deploy " + "a" * (105 + n % 20) + " " +
                                     case.text, "description": "deploy"}
            failure["error"] = f"Exit code 1\nerror: cannot connect with {case.text}"
            exposure.hook("post-tool", failure, env, app)
            bash = at(payloads("PostToolUse")[1], app)
            bash["tool_input"] = {"command": case.text, "description": "run"}
            bash["tool_response"] = {"stdout": f"Traceback (most recent call last):\n{case.text}",
                                     "stderr": "", "interrupted": False, "isImage": False}
            exposure.hook("post-tool", bash, env, app)
        for case in file_secrets(corpus):
            write = at(payloads("PostToolUse")[0], app)
            write["tool_input"] = {"file_path": f"{app}/keys/{case.secret}.txt", "content": "k"}
            exposure.hook("post-tool", write, env, app)
            tests = at(payloads("PostToolUse")[1], app)
            tests["tool_input"] = {"command": f"pytest tests/{case.secret}_test.py"}
            tests["tool_response"] = {"stdout": f"FAILED tests/{case.secret}_test.py::test_a - "
                                                "boom\n1 failed", "stderr": ""}
            exposure.hook("post-tool", tests, env, app)
        commit = at(payloads("PostToolUse")[1], app)
        commit["tool_input"] = {"command": f'git commit -m "rotate {corpus[0].text}"'}
        exposure.hook("post-tool", commit, env, app)

        anyio.run(_mcp, home, app, corpus, exposure.sent)

        transcript = _transcript(tmp_path / "session.jsonl", app, corpus)
        with_transcript = {"transcript_path": str(transcript)}
        exposure.hook("stop", at(payloads("Stop")[0], app, **with_transcript), env, app)
        _wait(home / "logs" / "extract.log", ("extracted:", "failed"))
        exposure.hook("pre-compact", at(payloads("PreCompact")[0], app, **with_transcript),
                      env, app)
        exposure.hook("session-start", at(payloads("SessionStart")[0], app, source="compact"),
                      env, app)
        exposure.hook("session-end", at(payloads("SessionEnd")[0], app, **with_transcript),
                      env, app)
        _wait(home / "logs" / "finish-session.log", ("consolidate done", "consolidate exited"))
        exposure.sent.extend(request.raw.decode("utf-8", "replace")
                             for request in standin.requests)
        assert standin.message_requests(), "the extraction child never called the model"
    return exposure


def check_nothing_kept_or_sent(home: Path, exposure: Exposure, corpus: list[Secret]) -> None:
    """The assertions of the corpus test (shared with its full-size version)."""
    files = [p for p in sorted(home.rglob("*")) if p.is_file()]
    assert leaks((p.read_bytes() for p in files), corpus) == []
    sent_leaks = [(leak, text[:200]) for text in exposure.sent
                  for leak in leaks([text], corpus)]
    assert sent_leaks == []
    exposed = [str(p.relative_to(home)) for p in files
               if p.stat().st_mode & 0o077 and "models" not in p.parts]
    assert exposed == []
    log = (home / "logs" / "hooks.log")
    problems = log.read_text(encoding="utf-8").splitlines() if log.exists() else []
    assert [line for line in problems if "failed" in line] == []


def test_no_secret_is_kept_under_the_home_or_sent_to_the_model(
        app: Path, tmp_path: Path, isolated_home: Path) -> None:
    corpus = list(SECRETS)
    exposure = push_through_everything(app, tmp_path, isolated_home, corpus)
    # The secrets really went in: the store holds their markers, in every kind.
    from agentctx.store import Store

    with Store.open() as db:
        stored = " ".join(str(tuple(row)) for table in ("records", "sessions", "nodes", "edges")
                          for row in db.rows(f"SELECT * FROM {table}"))
    assert {c.kind for c in corpus} <= {part.split("]")[0]
                                        for part in stored.split("[REDACTED:")[1:]}
    check_nothing_kept_or_sent(isolated_home, exposure, corpus)


@pytest.mark.slow
@pytest.mark.timeout(3600)
def test_no_secret_of_a_large_generated_corpus_is_kept_or_sent(
        app: Path, tmp_path: Path, isolated_home: Path) -> None:
    corpus = list(SECRETS) + generated(seed=13, per_secret=20)
    exposure = push_through_everything(app, tmp_path, isolated_home, corpus)
    check_nothing_kept_or_sent(isolated_home, exposure, corpus)
