"""What Claude sees at session start is true and not repeated — through the real hook processes.

* A decision ``CLAUDE.md`` states (or ``MEMORY.md``'s head, or ``AGENTS.md`` where it is the one
  read) is left out of the digest and the per-prompt injection, one line naming the file; an
  edit of the file brings it back at the next SessionStart, without a consolidation.
* A record whose folder is deleted between two SessionStarts is marked and ranked down at the
  second, served from the same stored digest otherwise.
* A forked session's copied injections count as seen; no injection is longer than Claude Code's
  10,000-unit cap, counted as it counts.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

from agentctx.drift import automemory
from agentctx.store import Store, projects, records, sessions
from agentctx.store.models import Draft
from tests.conftest import run_cli
from tests.hooks.conftest import SESSION, at, payloads, run_hook
from tests.support import shown

MONEY = "Money is stored as integer cents, never floats"
BILLING = "Billing code lives in harbor/billing/"
QUEUE = "Background jobs run on Dramatiq with the Postgres broker"
CLAUDE_MD = "# app\n\n- Store money as integer cents, never floats.\n- Run the tests with pytest.\n"


def _project(folder: Path) -> str:
    with Store.open() as db:
        return projects.resolve(db, str(folder)).project.id


def _add(folder: Path, type_: str, title: str, body: str = "") -> str:
    with Store.open() as db:
        project = projects.resolve(db, str(folder)).project
        return records.add(db, Draft(type=type_, title=title, body=body,
                                     confidence="explicit"), project_id=project.id).id


def _consolidate(folder: Path) -> None:
    done = run_cli("consolidate", cwd=folder, env={"AGENTCTX_EMBEDDINGS": "off"})
    assert done.returncode == 0, done.stderr


def _start(folder: Path, session: str = SESSION, source: str = "startup",
           env: dict[str, str] | None = None, **changes: object) -> str:
    payload = at(payloads("SessionStart")[0], folder, session_id=session, source=source,
                 **changes)
    return run_hook("session-start", payload, env=env).context


def _prompt(folder: Path, text: str, session: str = SESSION) -> str:
    payload = at(payloads("UserPromptSubmit")[0], folder, prompt=text, session_id=session)
    return run_hook("prompt", payload).context


def _decisions(text: str) -> list[str]:
    lines = text.split("\n")
    start = lines.index("## Decisions") + 1
    end = next(i for i in range(start, len(lines)) if lines[i].startswith(("## ", "ctx_")))
    return lines[start:end]


def test_a_decision_claude_md_states_is_left_out_until_the_file_changes(app: Path) -> None:
    (app / "CLAUDE.md").write_text(CLAUDE_MD, encoding="utf-8")
    money = _add(app, "decision", MONEY, "Amounts are int cents; formatting at the edges.")
    queue = _add(app, "decision", QUEUE, "Retries with exponential backoff, max 5.")
    _consolidate(app)
    text = _start(app)
    assert not shown.names(text, money) and MONEY not in text
    assert shown.names(text, queue)
    assert "- 1 decision is left out: CLAUDE.md already states it." in _decisions(text)
    with Store.open() as db:
        [receipt] = sessions.receipts(db, SESSION)
        assert receipt.left_out == ((money, "CLAUDE.md"),)
        assert money not in receipt.record_ids and queue in receipt.record_ids
        assert money not in sessions.seen(db, SESSION)
    why = run_cli("why", "--session", SESSION, cwd=app).stdout
    assert "— already in CLAUDE.md" in why and MONEY in why
    # the per-prompt hook leaves it out too; preview says where it is stated
    asked = "how do we store money amounts, as integer cents?"
    assert not shown.names(_prompt(app, asked, session="p1"), money)
    preview = json.loads(run_cli("preview", asked, "--json", cwd=app).stdout)
    [candidate] = [c for c in preview["candidates"] if c["id"] == money]
    assert (candidate["outcome"], candidate["why"], candidate["stated_in"]) == \
        ("stated", "already in CLAUDE.md", "CLAUDE.md")
    # CLAUDE.md no longer says it: the next SessionStart brings it back (a stat, no rescan)
    (app / "CLAUDE.md").write_text("# app\n\n- Run the tests with pytest.\n", encoding="utf-8")
    again = _start(app, session="s2")
    assert shown.names(again, money) and "left out" not in again


def test_memory_md_and_agents_md_are_read_as_claude_code_reads_them(app: Path) -> None:
    queue = _add(app, "decision", QUEUE, "Retries with exponential backoff, max 5.")
    money = _add(app, "decision", MONEY)
    folder = Path(os.environ["HOME"]) / ".claude" / "projects" / automemory.encode(app) / "memory"
    folder.mkdir(parents=True)
    (folder / "MEMORY.md").write_text(
        "# Memory\n\n- Background jobs run on Dramatiq with the Postgres broker (retries: "
        "exponential backoff, max 5).\n", encoding="utf-8")
    (app / "AGENTS.md").write_text(CLAUDE_MD, encoding="utf-8")  # read: there is no CLAUDE.md
    _consolidate(app)
    text = _start(app)
    assert not shown.names(text, queue) and not shown.names(text, money)
    assert "- 1 decision is left out: MEMORY.md already states it." in text
    assert "- 1 decision is left out: AGENTS.md already states it." in text
    # auto memory turned off for the session: MEMORY.md is not loaded, the record comes back
    off = _start(app, session="s2", env={"CLAUDE_CODE_DISABLE_AUTO_MEMORY": "1"})
    assert shown.names(off, queue) and not shown.names(off, money)
    # a CLAUDE.md appears: Claude Code reads it instead of AGENTS.md
    (app / "CLAUDE.md").write_text("# app\n", encoding="utf-8")
    assert shown.names(_start(app, session="s3"), money)


def test_a_folder_deleted_between_two_session_starts_marks_its_record(app: Path) -> None:
    (app / "harbor" / "billing").mkdir(parents=True)
    (app / "harbor" / "billing" / "__init__.py").write_text("", encoding="utf-8")
    queue = _add(app, "decision", QUEUE)
    billing = _add(app, "decision", BILLING, "Refunds are in harbor/billing/refunds.py.")
    _consolidate(app)
    first = _start(app)
    assert shown.line_of(first, billing).endswith(f"] {BILLING} — Refunds are in "
                                                  "harbor/billing/refunds.py.")
    assert _decisions(first)[0].endswith(BILLING + " — Refunds are in harbor/billing/refunds.py.")
    shutil.rmtree(app / "harbor" / "billing")
    second = _start(app, session="s2")
    line = shown.line_of(second, billing)
    assert "(harbor/billing/ and harbor/billing/refunds.py no longer exist)" in line
    order = _decisions(second)
    assert order.index(line) > order.index(shown.line_of(second, queue))  # ranked down
    # the per-prompt hook checks the paths of what it injects too
    asked = _prompt(app, "where does the billing code live?", session="p1")
    assert "no longer exist" in shown.line_of(asked, billing)
    # consolidation lists it as possibly stale; status says so
    _consolidate(app)
    status = json.loads(run_cli("status", "--json", cwd=app).stdout)
    [stale] = status["possibly_stale"]
    assert (stale["id"], stale["title"], stale["gone"]) == \
        (billing, BILLING, ["harbor/billing/", "harbor/billing/refunds.py"])
    assert billing.startswith(stale["short_id"])
    assert "possibly stale (1)" in run_cli("status", cwd=app).stdout


def test_a_fork_counts_the_copied_injections_as_seen(app: Path, tmp_path: Path) -> None:
    """Claude Code names no parent and writes the fork's transcript only later: the parent is the
    session beside it whose last prompt came just before the copied conversation's last
    response (``seconds_since_last_response``)."""
    money = _add(app, "decision", MONEY)
    found = _add(app, "discovery", "The checkout test flakes at midnight UTC",
                 "freezegun fixes it")
    question = "why does the checkout test flake at midnight?"
    folder = tmp_path / "transcripts"
    other = tmp_path / "elsewhere"

    def prompt(session: str, where: Path) -> str:
        payload = at(payloads("UserPromptSubmit")[0], app, prompt=question, session_id=session,
                     transcript_path=str(where / f"{session}.jsonl"))
        return run_hook("prompt", payload).context

    assert shown.names(prompt("older", folder), found)
    assert shown.names(prompt("elsewhere", other), found)
    assert shown.names(prompt("parent", folder), found)
    aside = _add(app, "discovery", "The staging database resets on Mondays")
    with Store.open() as db:  # the older session was given something else as well
        sessions.mark_seen(db, "older", [aside])
    text = _start(app, session="forked", source="fork", seconds_since_last_response=0,
                  transcript_path=str(folder / "forked.jsonl"))
    assert shown.names(text, money)  # the digest comes again (Claude Code drops a repeat)
    with Store.open() as db:
        seen = sessions.seen(db, "forked")
        assert {found, money} <= seen and aside not in seen  # the parent's, not the older's
        [receipt] = sessions.receipts(db, "forked")
        assert receipt.source == "fork"
    assert not shown.names(_prompt(app, question, session="forked"), found)
    # a fork whose copied conversation answered long before any of these prompts: no parent
    _start(app, session="late", source="fork", seconds_since_last_response=86_400,
           transcript_path=str(folder / "late.jsonl"))
    with Store.open() as db:
        assert found not in sessions.seen(db, "late")


def test_a_session_begun_after_the_copied_answer_is_not_the_forks_parent(
        app: Path, tmp_path: Path) -> None:
    """``seconds_since_last_response`` is whole seconds, so the fork looks a little past the
    moment it names; a session whose prompt falls only in that slack (begun just after the
    parent's answer) loses to the one whose prompt came before it."""
    found = _add(app, "discovery", "The checkout test flakes at midnight UTC",
                 "freezegun fixes it")
    other = _add(app, "discovery", "Invoices are generated nightly by the billing job")
    folder = tmp_path / "transcripts"

    def prompt(session: str, text: str, moment: str) -> str:
        payload = at(payloads("UserPromptSubmit")[0], app, prompt=text, session_id=session,
                     transcript_path=str(folder / f"{session}.jsonl"))
        return run_hook("prompt", payload, env={"AGENTCTX_NOW": moment}).context

    assert shown.names(prompt("parent", "why does the checkout test flake at midnight?",
                              "2026-12-01T10:00:00Z"), found)
    assert shown.names(prompt("next", "when are invoices generated by the billing job?",
                              "2026-12-01T10:00:11.500Z"), other)
    # the parent answered at 10:00:10 (whole seconds: 2, read at 10:00:12)
    _start(app, session="forked", source="fork", seconds_since_last_response=2,
           transcript_path=str(folder / "forked.jsonl"),
           env={"AGENTCTX_NOW": "2026-12-01T10:00:12Z"})
    with Store.open() as db:
        seen = sessions.seen(db, "forked")
    assert found in seen and other not in seen
    # the parent's prompt read a little after the named moment (rounded seconds): the first one
    # within the slack is the parent, not a later one there
    folder = tmp_path / "rounded"
    prompt("parent-2", "why does the checkout test flake at midnight?", "2026-12-01T11:00:00.600Z")
    prompt("next-2", "when are invoices generated by the billing job?", "2026-12-01T11:00:01.500Z")
    _start(app, session="forked-2", source="fork", seconds_since_last_response=3,
           transcript_path=str(folder / "forked-2.jsonl"),
           env={"AGENTCTX_NOW": "2026-12-01T11:00:03Z"})
    with Store.open() as db:
        seen = sessions.seen(db, "forked-2")
    assert found in seen and other not in seen


def test_no_injection_exceeds_claude_codes_cap_as_it_counts(app: Path) -> None:
    """Claude Code counts a hook value's length in UTF-16 units (an emoji is two): a record of
    emoji within every law of agentctx would still be cut to a preview; it never is."""
    body = "\U0001F680" * 7000
    rocket = _add(app, "decision", "Ship the rocket dashboard", body)
    text = _prompt(app, "ship the rocket dashboard?")
    assert shown.names(text, rocket) and len(text) <= 8000
    assert len(text.encode("utf-16-le")) // 2 <= 10_000
    assert "\ufffd" in text and text.endswith("</agentctx-context>")


def test_agentctx_sync_measures_what_its_folder_states(app: Path) -> None:
    money = _add(app, "decision", MONEY)
    (app / "CLAUDE.md").write_text(CLAUDE_MD, encoding="utf-8")
    assert shown.names(_start(app), money)  # nothing measured yet: nothing is left out
    assert run_cli("sync", cwd=app).returncode == 0
    assert not shown.names(_start(app, session="s2"), money)
