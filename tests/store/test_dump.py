"""Whole-store backups: every table but the derived ones, loaded back losslessly."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from agentctx import demo
from agentctx.store import (
    Store,
    dump,
    graph,
    ledger,
    records,
    search,
    sessions,
    teamstate,
    upkeep,
)
from agentctx.store.drift_state import dismiss
from agentctx.store.errors import StoreError
from agentctx.store.models import RECORD_TYPES, Draft
from agentctx.store.selection import Selection
from agentctx.team import backupfile

VOLATILE_META = {"changes"}


def _full_store(path: Path, folder: Path) -> tuple[Store, str]:
    """A store with every record type, chains (one archived), entities, sessions, receipts,
    edits, LLM calls, a drift dismissal and the team-file state."""
    db = Store.open(path)
    project_id = demo.build(db, folder)
    kept = records.add(db, Draft(type="bugfix", title="Fixed the retry loop", body="Off by one."),
                       project_id=project_id)
    old = records.add(db, Draft(type="discovery", title="Cache warms at 9"),
                      project_id=project_id)
    records.supersede(db, old.id, Draft(type="", title="Cache warms at 8"), "clock change",
                      actor="cli")
    upkeep.archive(db, [records.get(db, old.id).pk])
    records.update(db, kept.id, body="Off by one, twice.", actor="cli")
    graph.link_record(db, kept.id, graph.ensure_node(db, project_id, "file", "src/retry.py"))
    ledger.record_call(db, model="claude-haiku", purpose="extract",
                       usage=ledger.Usage(10, 5, 0, 0), usd=0.001, project_id=project_id)
    decision = records.list_records(db, Selection(project_id=project_id, types=("decision",)),
                                    limit=1)[0]
    dismiss(db, project_id, decision.id, actor="cli")
    teamstate.enable(db, project_id)
    sessions.ensure(db, "sess-dump", project_id, cwd=str(folder))
    sessions.add_receipt(db, session_id="sess-dump", project_id=project_id,
                         event="UserPromptSubmit", record_ids=[kept.id], scores=[0.8], tokens=40,
                         chars=140, prompt="why does the retry loop fail", matched=[["retry"]])
    db.meta_set("consolidate_last_run", json.dumps({"merged": 0}))
    rows = list(dump.dump(db))
    assert {row["type"] for table, row in rows if table == "records"} == set(RECORD_TYPES)
    assert any(table == "injections" and row["prompt"] for table, row in rows)  # receipts
    assert {t for t, _ in rows} >= {
        "records", "records_archive", "edges", "record_entities", "nodes", "projects",
        "project_paths", "sessions", "session_seen", "injections", "edits", "llm_calls", "meta",
        "drift_dismissals", "team_projects"}
    return db, project_id


def _contents(db: Store) -> dict[str, list[str]]:
    """Every backed-up row as canonical JSON, per table, sorted (the keys of the row too)."""
    found: dict[str, list[str]] = {}
    for table, row in dump.dump(db):
        if table == "meta" and row["key"] in VOLATILE_META:
            continue
        if table in ("records", "records_archive"):
            row = {**row, "pending_embedding": None}  # vectors are rebuilt
        found.setdefault(table, []).append(json.dumps(row, sort_keys=True))
    return {table: sorted(rows) for table, rows in found.items()}


def test_jsonl_round_trip_restores_every_table(tmp_path: Path) -> None:
    source, project_id = _full_store(tmp_path / "a.db", tmp_path / "harbor")
    out = io.StringIO()
    count = backupfile.write_jsonl(source, out, None)
    text = out.getvalue()
    assert json.loads(text.splitlines()[0])["agentctx"] == "backup"
    assert count == len(text.splitlines()) - 1

    target = Store.open(tmp_path / "b.db")
    report = backupfile.load(target, backupfile.read_jsonl(text))
    assert report.added["records"] > 10 and report.added["records_archive"] == 1
    assert _contents(target) == _contents(source)
    # Derived state is rebuilt: the full-text index finds the restored records.
    hits = search.search(target,
                         search.Query("retry loop",
                                      Selection(project_id=project_id, include_global=True)))
    assert hits and hits[0].record.title == "Fixed the retry loop"

    again = backupfile.load(target, backupfile.read_jsonl(text))
    assert sum(again.added.values()) == 0  # idempotent
    assert _contents(target) == _contents(source)

    out2 = io.StringIO()
    backupfile.write_json(source, out2, None)
    third = Store.open(tmp_path / "c.db")
    backupfile.load(third, backupfile.read_json(out2.getvalue()))
    assert _contents(third) == _contents(source)
    for db in (source, target, third):
        db.close()


def test_a_project_backup_holds_only_that_project(tmp_path: Path) -> None:
    db, project_id = _full_store(tmp_path / "a.db", tmp_path / "harbor")
    other = records.add(db, Draft(type="decision", title="Elsewhere"), project_id="other-project")
    rows = list(dump.dump(db, project_id))
    assert all(row.get("project_id", project_id) == project_id for _, row in rows
               if "project_id" in row)
    assert other.id not in json.dumps([row for _, row in rows])
    assert not any(table == "meta" for table, _ in rows)
    db.close()


def test_a_bad_row_names_its_line_and_loads_nothing(tmp_path: Path) -> None:
    source, _ = _full_store(tmp_path / "a.db", tmp_path / "harbor")
    out = io.StringIO()
    backupfile.write_jsonl(source, out, None)
    lines = out.getvalue().splitlines()
    target = Store.open(tmp_path / "b.db")
    bad = [*lines, json.dumps({"table": "records", "row": {"nope": 1}})]
    with pytest.raises(StoreError, match=f"row {len(lines)}"):
        backupfile.load(target, backupfile.read_jsonl("\n".join(bad)))
    assert records.count_records(target, Selection()) == 0
    with pytest.raises(backupfile.BackupError, match="line 3"):
        backupfile.read_jsonl("\n".join([lines[0], lines[1], "{broken"]))
    with pytest.raises(backupfile.BackupError, match="newer agentctx"):
        backupfile.read_jsonl(json.dumps({"agentctx": "backup", "schema": 999}))
    with pytest.raises(StoreError, match="not a table"):
        backupfile.load(target, [("records_fts", {"title": "x"})])
    source.close()
    target.close()
