"""What Claude sees at session start, through the real Claude Code CLI (npm, pinned), offline.

Claude Code loads CLAUDE.md and the head of its own auto memory (MEMORY.md) into every session;
agentctx's digest, as the model receives it, leaves out what those files already state and says
so in one line, marks a record whose folder was deleted since, reaches the model only as
``additionalContext`` (never ``systemMessage``) under Claude Code's 10,000-character cap, counts
a forked session's copied injections as seen, and never reads its own injected text back from a
transcript.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from agentctx.drift import automemory
from agentctx.extract.transcript import read_transcript
from agentctx.store import Store, projects, records, sessions
from agentctx.store.models import Draft
from tests.e2e.claude import ClaudeHarness
from tests.e2e.script import ClaudeScript, injections
from tests.support import shown

pytestmark = pytest.mark.e2e

MONEY = "Money is stored as integer cents, never floats"
QUEUE = "Background jobs run on Dramatiq with the Postgres broker"
BILLING = "Billing code lives in harbor/billing/"
POSTGRES = "Use PostgreSQL 16 for the orders service"
FLAKE = "The checkout test flakes at midnight UTC"
FLAKE_PROMPT = "Why does the checkout test flake at midnight UTC?"
CLAUDE_MD = "# app\n\n- Store money as integer cents, never floats.\n- Run the tests with pytest.\n"
MEMORY_MD = ("# Memory\n\n- Background jobs run on Dramatiq with the Postgres broker; retries "
             "back off exponentially, max 5.\n- [Deploys](deploys.md) — how we deploy\n")
DEPLOYS = ("---\nname: deploys\ndescription: We deploy with Helm charts instead of raw "
           "manifests\ntype: project\n---\n\nThe charts live in deploy/charts; always bump the "
           "chart version.\n")


def _add(project_dir: Path, type_: str, title: str, body: str = "") -> str:
    with Store.open() as db:
        project = projects.resolve(db, str(project_dir)).project
        return records.add(db, Draft(type=type_, title=title, body=body,
                                     confidence="explicit"), project_id=project.id).id


@pytest.mark.slow
@pytest.mark.ci
def test_the_digest_leaves_out_what_claude_md_and_memory_md_state(
        harness: ClaudeHarness, script: ClaudeScript, project_dir: Path) -> None:
    home = harness.home
    (project_dir / "CLAUDE.md").write_text(CLAUDE_MD, encoding="utf-8")
    (project_dir / "harbor" / "billing").mkdir(parents=True)
    (project_dir / "harbor" / "billing" / "invoices.py").write_text("", encoding="utf-8")
    memory = home / ".claude" / "projects" / automemory.encode(project_dir) / "memory"
    memory.mkdir(parents=True)
    (memory / "MEMORY.md").write_text(MEMORY_MD, encoding="utf-8")
    (memory / "deploys.md").write_text(DEPLOYS, encoding="utf-8")
    harness.agentctx("init", "--yes")
    harness.agentctx("config", "set", "embeddings", "off")
    money = _add(project_dir, "decision", MONEY, "Amounts are int cents; formatting at the edges.")
    queue = _add(project_dir, "decision", QUEUE, "Retries back off exponentially, max 5.")
    billing = _add(project_dir, "convention", BILLING, "Invoices come from "
                                                       "harbor/billing/invoices.py.")
    postgres = _add(project_dir, "decision", POSTGRES, "Row-level locking and JSONB.")
    flake = _add(project_dir, "discovery", FLAKE, "freezegun fixes it")
    imported = json.loads(harness.agentctx("import", "--claude-memory", "--json").stdout)
    assert len(imported["added"]) == 2  # the deploys topic file and MEMORY.md's other item
    with Store.open() as db:
        deploys = next(r.id for r in (records.get(db, rid) for rid in imported["added"])
                       if r.type == "decision")
    harness.agentctx("consolidate")  # measures what CLAUDE.md and MEMORY.md state

    # 1. session one: the model gets CLAUDE.md and MEMORY.md from Claude Code, and a digest
    #    that leaves out what they state (saying so), with the rest in compact lines
    first = harness.prompt(FLAKE_PROMPT)
    seen = first.requests[0]
    body = json.dumps(seen.body)
    assert "Store money as integer cents" in body and "Dramatiq with the Postgres broker" in body
    [digest] = injections(seen, "SessionStart")
    assert not digest.names(money) and not digest.names(queue) and MONEY not in digest.text
    assert digest.names(postgres) and digest.names(billing) and digest.names(deploys)
    assert "- 1 decision is left out: CLAUDE.md already states it." in digest.text
    assert "- 1 decision is left out: MEMORY.md already states it." in digest.text
    assert len(digest.text) <= 10_000 and "Output too large" not in body
    # model-facing text only as additionalContext: the system message channel stays unused
    assert "systemMessage" not in body
    [per_turn] = injections(seen, "UserPromptSubmit")
    assert per_turn.names(flake) and not per_turn.names(money)
    with Store.open() as db:
        [start] = [r for r in sessions.receipts(db, first.session_id)
                   if r.event == "SessionStart"]
        assert dict(start.left_out) == {money: "CLAUDE.md", queue: "MEMORY.md"}

    # 2. the billing folder is deleted between two sessions: the next digest says so
    shutil.rmtree(project_dir / "harbor" / "billing")
    second = harness.prompt("Where does the billing code live?")
    [again] = injections(second.requests[0], "SessionStart")
    line = shown.line_of(again.text, billing)
    assert "(harbor/billing/ and harbor/billing/invoices.py no longer exist)" in line

    # 3. a fork of session one: SessionStart says "fork", and the per-prompt injection the fork
    #    copied counts as seen, so the same prompt gets no second copy of it
    forked = harness.prompt(FLAKE_PROMPT, resume=first.session_id, fork=True)
    assert forked.session_id != first.session_id
    carrying = [item for item in injections(forked.requests[0], "UserPromptSubmit")
                if item.names(flake)]
    assert len(carrying) == 1  # the copy from session one, not a new injection
    with Store.open() as db:
        fork_starts = [r for r in sessions.receipts(db, forked.session_id)
                       if r.event == "SessionStart"]
        assert [r.source for r in fork_starts] == ["fork"]
        assert flake in sessions.seen(db, forked.session_id)

    # 4. what agentctx injected never comes back from the transcript: neither the reader nor
    #    the extraction requests agentctx sent hold its fence or its digest lines
    harness.wait_for_background()
    transcript = home / ".claude" / "projects" / automemory.encode(project_dir) / \
        f"{first.session_id}.jsonl"
    read = read_transcript(transcript)
    assert read.entries and not any("agentctx-context" in e.text or "left out" in e.text
                                    for e in read.entries)
    assert any(FLAKE_PROMPT in e.text for e in read.entries)
    sent = [json.dumps(r.body) for r in script.other_requests]
    assert sent and not any("agentctx-context" in text or "already states it" in text
                            for text in sent)
