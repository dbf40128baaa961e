"""Sessions and receipts for browsing: pages and counts, receipts that say why, live polling."""

from __future__ import annotations

from pathlib import Path

from agentctx.store import Store, projects, sessions, stats
from agentctx.store.models import ReceiptItem


def _sessions(db: Store, project: str, count: int, day: int = 1) -> list[str]:
    made = []
    for n in range(count):
        sid = f"{project}-s{n}"
        sessions.ensure(db, sid, project, started_at=f"2026-03-{day + n:02d}T09:00:00.000Z")
        made.append(sid)
    return made


def test_sessions_are_listed_newest_first_a_page_at_a_time(store: Store) -> None:
    _sessions(store, "a", 5)
    _sessions(store, "b", 2, day=20)
    assert sessions.count(store) == 7 and sessions.count(store, "a") == 5
    everything = [s.session_id for s in sessions.recent(store, "a", limit=10)]
    assert everything == ["a-s4", "a-s3", "a-s2", "a-s1", "a-s0"]
    pages = [sessions.recent(store, "a", limit=2, offset=start) for start in (0, 2, 4)]
    assert [s.session_id for page in pages for s in page] == everything
    summaries = stats.session_summaries(store, "a", limit=2, offset=2)
    assert [s.session_id for s in summaries] == ["a-s2", "a-s1"]
    assert [s.session_id for s in stats.session_summaries(store, limit=1)] == ["b-s1"]


def test_receipts_keep_the_prompt_start_and_each_records_reasons(store: Store) -> None:
    sessions.ensure(store, "s", "p")
    rid = sessions.add_receipt(
        store, session_id="s", project_id="p", event="UserPromptSubmit",
        record_ids=["A", "B"], scores=[0.91234, 0.5], tokens=120, chars=400,
        prompt="  why   did we move\nthe billing service " + "x" * 200,
        matched=[("billing", "service"), ("move",)])
    start = sessions.add_receipt(store, session_id="s", project_id="p", event="SessionStart",
                                 source="startup", record_ids=["A"], scores=[], tokens=300,
                                 chars=900)
    receipt, digest = sessions.receipts(store, "s")
    assert receipt.id == rid and digest.id == start
    assert receipt.prompt == ("why did we move the billing service " + "x" * 200)[:80]
    assert receipt.items == (ReceiptItem("A", 0.9123, ("billing", "service")),
                             ReceiptItem("B", 0.5, ("move",)))
    assert digest.prompt is None and digest.items == (ReceiptItem("A", None, ()),)
    assert sessions.get(store, "s").tokens_injected == 420  # type: ignore[union-attr]


def test_receipts_pages_counts_and_what_is_new_since_an_id(store: Store) -> None:
    for project in ("p", "q"):
        sessions.ensure(store, f"{project}-s", project)
    ids = []
    for n in range(6):
        project = "p" if n % 3 else "q"
        ids.append(sessions.add_receipt(store, session_id=f"{project}-s", project_id=project,
                                        event="UserPromptSubmit", record_ids=[f"R{n}"],
                                        scores=[0.5], tokens=10 + n, chars=40,
                                        prompt=f"prompt {n}", matched=[("prompt",)]))
    assert sessions.count_receipts(store) == 6
    assert sessions.count_receipts(store, project_id="p") == 4
    assert sessions.count_receipts(store, session_id="q-s") == 2
    assert sessions.last_receipt_id(store) == ids[-1]
    paged = [r.id for start in (0, 2) for r in sessions.receipts(store, "p-s", limit=2,
                                                                  offset=start)]
    assert paged == [r.id for r in sessions.receipts(store, "p-s")] == [ids[n] for n in
                                                                         (1, 2, 4, 5)]
    assert [r.id for r in sessions.latest_receipts(store, limit=3)] == ids[:2:-1]
    assert [r.id for r in sessions.latest_receipts(store, project_id="q")] == [ids[3], ids[0]]
    assert [r.id for r in sessions.receipts_since(store, ids[2])] == ids[3:]
    assert [r.prompt for r in sessions.receipts_since(store, ids[2], project_id="p")] == [
        "prompt 4", "prompt 5"]
    assert sessions.receipts_since(store, ids[-1]) == []


def test_data_version_moves_when_another_process_commits(tmp_path: Path) -> None:
    path = tmp_path / "agentctx.db"
    with Store.open(path) as watcher, Store.open(path) as writer:
        before = watcher.data_version()
        assert watcher.data_version() == before  # nothing changed: polling is free
        sessions.ensure(writer, "s", "p")
        assert watcher.data_version() != before
        seen = watcher.data_version()
        sessions.ensure(watcher, "t", "p")  # its own writes do not count
        assert watcher.data_version() == seen


def test_summaries_name_the_worktree_and_days_add_up(store: Store, project_dir: Path) -> None:
    resolved = projects.resolve(store, str(project_dir / "src"))
    pid = resolved.project.id
    sessions.ensure(store, "s1", pid, cwd=str(project_dir / "src"))
    sessions.ensure(store, "s2", pid, cwd="/somewhere/else")
    for sid, event, tokens in (("s1", "SessionStart", 300), ("s1", "UserPromptSubmit", 40),
                               ("s2", "UserPromptSubmit", 60), ("s2", "SubagentStart", 7)):
        sessions.add_receipt(store, session_id=sid, project_id=pid, event=event,
                             record_ids=[], scores=[], tokens=tokens, chars=tokens * 3)
    by_id = {s.session_id: s for s in stats.session_summaries(store, pid)}
    assert by_id["s1"].worktree == str(project_dir) and by_id["s1"].cwd == str(project_dir / "src")
    assert by_id["s2"].worktree is None
    assert (by_id["s1"].session_start_tokens, by_id["s1"].prompt_tokens) == (300, 40)
    store.execute("UPDATE injections SET created_at = '2026-03-01T23:59:59.999Z' "
                  "WHERE session_id = 's1'")
    store.execute("UPDATE injections SET created_at = '2026-03-02T00:00:00.000Z' "
                  "WHERE session_id = 's2'")
    days = stats.tokens_per_day(store, pid)
    assert [(d.day, d.injections, d.session_start_tokens, d.prompt_tokens, d.other_tokens)
            for d in days] == [("2026-03-01", 2, 300, 40, 0), ("2026-03-02", 2, 0, 60, 7)]
    assert [d.tokens for d in days] == [340, 67]
    assert [d.day for d in stats.tokens_per_day(store, pid, since="2026-03-02")] == [
        "2026-03-02"]
    assert [d.day for d in stats.tokens_per_day(store, pid, until="2026-03-01")] == [
        "2026-03-01"]
    assert stats.tokens_per_day(store, "other") == []
