"""The embedded demo: a realistic store built through the store API."""

from __future__ import annotations

from pathlib import Path

from agentctx import demo
from agentctx.store import Store, records, sessions, stats
from agentctx.store.models import RECORD_TYPES
from agentctx.store.selection import Selection
from tests.conftest import run_cli


def test_demo_store_has_every_part_a_newcomer_should_see(store: Store, tmp_path: Path) -> None:
    project_id = demo.build(store, tmp_path / "harbor")
    counts = stats.record_counts(store, project_id)
    glob = stats.record_counts(store, "global")
    total = sum(c["current"] + c["superseded"] for c in counts.values()) + \
        glob["preference"]["current"]
    assert 38 <= total <= 60
    assert set(counts) | set(glob) == set(RECORD_TYPES)
    chains = {tuple(r.id for r in records.history(store, rec.id))
              for rec in records.list_records(store, Selection(project_id=project_id, state="all"))}
    deep = [c for c in chains if len(c) >= 3]
    assert len([c for c in chains if len(c) >= 2]) >= 3 and deep
    listed = records.list_records(store, Selection(project_id="global"))
    assert any(r.confidence == "reinforced" for r in listed)
    summaries = stats.session_summaries(store, project_id)
    assert len(summaries) == 6
    assert all(s.session_start_tokens > 0 and s.extraction_usd > 0 for s in summaries)
    assert sessions.receipts(store, summaries[0].session_id)
    claude_md = (tmp_path / "harbor" / "CLAUDE.md").read_text(encoding="utf-8")
    assert "REST" in claude_md and "nosetests" in claude_md  # drift material


def test_demo_command_prints_status_and_export(tmp_path: Path) -> None:
    result = run_cli("demo", "--no-tui", "--keep", str(tmp_path / "d"))
    assert result.returncode == 0, result.stderr
    assert "project  harbor" in result.stdout
    assert "## Decisions" in result.stdout and "History:" in result.stdout


def test_demo_without_a_terminal_prints_instead_of_opening_the_tui(tmp_path: Path) -> None:
    result = run_cli("demo", "--keep", str(tmp_path / "d"))
    assert result.returncode == 0, result.stderr
    assert "project  harbor" in result.stdout and "## Decisions" in result.stdout
    assert "agentctx tui" in result.stderr  # the hint to open it in a terminal
