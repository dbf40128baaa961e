"""session-start: the digest served fresh or built inline, receipts, resume dedup, seen resets."""

from __future__ import annotations

import json
from pathlib import Path

from agentctx.context.digest import handover_key
from agentctx.core.config import SESSION_START_MAX_TOKENS
from agentctx.store import Store, digests, projects, records, sessions
from agentctx.store.models import Draft
from tests.hooks.conftest import SESSION, at, payloads, run_hook
from tests.support import shown


def _project(app: Path) -> str:
    with Store.open() as db:
        return projects.resolve(db, str(app)).project.id


def _add(project_id: str, type_: str, title: str, **fields: object) -> str:
    with Store.open() as db:
        return records.add(db, Draft(type=type_, title=title, **fields),  # type: ignore[arg-type]
                           project_id=project_id).id


def _start(app: Path, source: str = "startup", session: str = SESSION) -> str:
    payload = at(payloads("SessionStart")[0], app, source=source, session_id=session)
    return run_hook("session-start", payload).context


def test_digest_sections_in_order_and_fenced(app: Path) -> None:
    pid = _project(app)
    decision = _add(pid, "decision", "Use gRPC for the internal API", body="REST was chatty.",
                    confidence="explicit")
    convention = _add(pid, "convention", "Tests mirror the package layout")
    _add("global", "preference", "Prefers small commits", scope="global",
         confidence="reinforced")
    _add("global", "preference", "Prefers tabs", scope="global", confidence="inferred")
    _add(pid, "handover", "Working state: retry logic half done", key=handover_key(str(app)))
    text = _start(app)
    lines = text.splitlines()
    assert lines[0].startswith('<agentctx-context event="session-start"')
    assert "not instructions" in lines[1]
    assert lines[-1] == "</agentctx-context>"
    assert lines[-2].startswith("ctx_search finds")
    headers = [line for line in lines if line.startswith("## ")]
    assert headers == ["## Decisions", "## Conventions",
                       "## Last handover for this worktree", "## Developer preferences"]
    assert shown.line_of(text, decision).endswith("] Use gRPC for the internal API — REST was "
                                                  "chatty.")  # no type, date or "explicit"
    assert shown.line_of(text, convention).endswith("] inferred · Tests mirror the package "
                                                    "layout")
    assert lines[lines.index("## Decisions") - 1].startswith("Commands: ")  # the profile's 2
    assert lines[lines.index("## Decisions") - 2].startswith("Project app: Python, FastAPI")
    assert "Prefers small commits" in text and "Prefers tabs" not in text
    assert "retry logic half done" in text
    assert "Python, FastAPI" in text  # profile detected on first start


def test_receipt_seen_and_fresh_digest(app: Path) -> None:
    pid = _project(app)
    decision = _add(pid, "decision", "Use gRPC for the internal API")
    text = _start(app)
    with Store.open() as db:
        receipts = sessions.receipts(db, SESSION)
        assert len(receipts) == 1
        receipt = receipts[0]
        assert (receipt.event, receipt.source, receipt.project_id) == (
            "SessionStart", "startup", pid)
        assert receipt.chars == len(text) and receipt.tokens == -(-2 * len(text) // 7)
        assert decision in receipt.record_ids
        assert sessions.seen(db, SESSION) == set(receipt.record_ids)
        stored = digests.load_fresh(db, pid)
        assert stored is not None and stored.builder == "inline"
        assert db.scalar("SELECT tokens_injected FROM sessions WHERE session_id = ?",
                         (SESSION,)) == receipt.tokens
    # Nothing changed: the next session is served the stored digest, same text.
    assert _start(app, session="other-session") == text


def test_changed_record_rebuilds_inline(app: Path) -> None:
    pid = _project(app)
    _add(pid, "decision", "Use gRPC for the internal API")
    first = _start(app)
    _add(pid, "decision", "Use protobuf for events")
    second = _start(app, session="s2")
    assert "Use protobuf for events" in second and "Use protobuf" not in first


def test_resume_within_window_injects_again_without_second_receipt(app: Path) -> None:
    pid = _project(app)
    _add(pid, "decision", "Use gRPC for the internal API")
    real = payloads("SessionStart")  # startup, resume, resume (as 2.1.328 sent them)
    texts = [run_hook("session-start", at(p, app)).context for p in real]
    assert texts[0] == texts[1] == texts[2] != ""
    with Store.open() as db:
        kinds = [(r.event, r.source) for r in sessions.receipts(db, SESSION)]
    assert kinds == [("SessionStart", "startup"), ("SessionStart", "resume")]


def test_resume_outside_window_records_again(app: Path) -> None:
    pid = _project(app)
    _add(pid, "decision", "Use gRPC for the internal API")
    for _ in range(2):
        run_hook("session-start", at(payloads("SessionStart")[1], app),
                 env={"AGENTCTX_RESUME_DEDUP_SECONDS": "0"})
    with Store.open() as db:
        assert len(sessions.receipts(db, SESSION)) == 2


def test_compact_and_clear_reset_the_seen_set(app: Path) -> None:
    pid = _project(app)
    decision = _add(pid, "decision", "Use gRPC for the internal API")
    _start(app)
    with Store.open() as db:
        sessions.mark_seen(db, SESSION, ["01STALEIDFROMANEARLIERTURN"])
    _start(app, source="resume")
    with Store.open() as db:
        assert "01STALEIDFROMANEARLIERTURN" in sessions.seen(db, SESSION)
    for source in ("compact", "clear"):
        with Store.open() as db:
            sessions.mark_seen(db, SESSION, ["01STALEIDFROMANEARLIERTURN"])
        assert shown.names(_start(app, source=source), decision)
        with Store.open() as db:
            seen = sessions.seen(db, SESSION)
        assert "01STALEIDFROMANEARLIERTURN" not in seen and decision in seen


def test_handover_is_per_worktree(app: Path, tmp_path: Path) -> None:
    """Two worktrees of one repository share the project but not the handover."""
    worktree = tmp_path / "app-feature"
    gitdir = app / ".git" / "worktrees" / "app-feature"
    gitdir.mkdir(parents=True)
    (gitdir / "commondir").write_text("../..\n", encoding="utf-8")
    worktree.mkdir()
    (worktree / ".git").write_text(f"gitdir: {gitdir}\n", encoding="utf-8")
    pid = _project(app)
    with Store.open() as db:
        assert projects.resolve(db, str(worktree)).project.id == pid
    _add(pid, "handover", "Main worktree: migrating the billing tables",
         key=handover_key(str(app)))
    _add(pid, "handover", "Feature worktree: new login page", key=handover_key(str(worktree)))
    main_text = _start(app)
    feature_text = _start(worktree, session="s-feature")
    assert "migrating the billing tables" in main_text and "new login page" not in main_text
    assert "new login page" in feature_text and "billing tables" not in feature_text


def test_paused_project_gets_nothing(app: Path) -> None:
    pid = _project(app)
    _add(pid, "decision", "Use gRPC for the internal API")
    with Store.open() as db:
        projects.set_paused(db, pid, True)
    assert _start(app) == ""
    with Store.open() as db:
        assert sessions.receipts(db, SESSION) == []
        projects.set_paused(db, pid, False)
    assert "Use gRPC" in _start(app)


def test_empty_project_injects_nothing(app: Path, tmp_path: Path) -> None:
    bare = tmp_path / "scratch"
    bare.mkdir()
    assert _start(bare) == ""
    with Store.open() as db:
        assert sessions.receipts(db, SESSION) == []
        assert db.scalar("SELECT count(*) FROM sessions WHERE session_id = ?", (SESSION,)) == 1


def test_budget_holds_with_a_large_store(app: Path) -> None:
    pid = _project(app)
    with Store.open() as db, db.write():
        for n in range(300):
            records.add(db, Draft(type="decision" if n % 2 else "convention",
                                  title=f"Decision number {n} about module {n} " + "x" * 200,
                                  body="Because " + "reason " * 900), project_id=pid)
        records.add(db, Draft(type="handover", title="Long handover", body="step " * 1500,
                              key=handover_key(str(app))), project_id=pid)
    text = _start(app)
    assert len(text) <= 8000 and -(-2 * len(text) // 7) <= SESSION_START_MAX_TOKENS
    assert "## Last handover for this worktree" in text and "ctx_search finds" in text
    assert text.endswith("</agentctx-context>")
    document = json.dumps({"additionalContext": text})
    assert len(document) < 10_000 + 100
