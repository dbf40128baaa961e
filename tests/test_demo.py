"""The embedded demo: a realistic store built through the store API."""

from __future__ import annotations

import os
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from agentctx import demo
from agentctx.consolidate.run import consolidate
from agentctx.core.ids import to_iso
from agentctx.ml.embedder import forget_loaded, load_model
from agentctx.store import Store, records, sessions, stats, upkeep
from agentctx.store.models import RECORD_TYPES
from tests.conftest import SHARED, run_cli


def test_demo_store_has_every_part_a_newcomer_should_see(store: Store, tmp_path: Path) -> None:
    project_id = demo.build(store, tmp_path / "harbor")
    counts = stats.record_counts(store, project_id)
    glob = stats.record_counts(store, "global")
    total = sum(c["current"] + c["superseded"] for c in counts.values()) + \
        glob["preference"]["current"]
    assert 38 <= total <= 60
    assert set(counts) | set(glob) == set(RECORD_TYPES)
    chains = {tuple(r.id for r in records.history(store, rec.id))
              for rec in records.list_records(store, project_id=project_id,
                                              include_superseded=True)}
    deep = [c for c in chains if len(c) >= 3]
    assert len([c for c in chains if len(c) >= 2]) >= 3 and deep
    assert any(r.confidence == "reinforced" for r in records.list_records(
        store, project_id="global"))
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


NOW = datetime(2026, 3, 2, 12, 0, tzinfo=UTC)


def test_the_demos_receipts_are_dated_inside_their_sessions(store: Store, tmp_path: Path) -> None:
    """Each injection happened during its session, and each per-prompt one carries its prompt
    and the words each record matched (the judgement ran at the session's time)."""
    project_id = demo.build(store, tmp_path / "harbor", now=NOW)
    summaries = stats.session_summaries(store, project_id)
    assert len(summaries) == len(demo.SESSIONS)
    prompts = 0
    for summary in summaries:
        session = sessions.get(store, summary.session_id)
        assert session is not None and session.ended_at is not None
        found = sessions.receipts(store, summary.session_id)
        assert found[0].event == "SessionStart" and found[0].created_at == session.started_at
        for receipt in found:
            assert session.started_at <= receipt.created_at <= session.ended_at
        for receipt in found[1:]:
            prompts += 1
            assert receipt.event == "UserPromptSubmit" and receipt.prompt
            assert all(item.matched for item in receipt.items)
            words = receipt.prompt.lower()
            assert all(word in words for item in receipt.items for word in item.matched)
        typed = session.meta["prompts"]
        assert isinstance(typed, list) and len(typed) == 2
    assert 6 <= prompts < 2 * len(demo.SESSIONS)  # some prompts rightly get nothing
    days = stats.tokens_per_day(store, project_id)
    assert len(days) == len(demo.SESSIONS)
    assert max(d.day for d in days) < NOW.date().isoformat()
    latest = sessions.latest_receipts(store, limit=1)[0]
    assert latest.created_at < to_iso(NOW - timedelta(days=1))


def test_the_demo_leaves_the_clock_as_it_was(store: Store, tmp_path: Path,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    demo.build(store, tmp_path / "harbor", now=NOW)
    assert "AGENTCTX_NOW" not in os.environ
    monkeypatch.setenv("AGENTCTX_NOW", "2026-01-01")
    demo.build(store, tmp_path / "harbor2", now=NOW)
    assert os.environ["AGENTCTX_NOW"] == "2026-01-01"


def test_the_demo_has_a_near_duplicate_pair_to_merge(store: Store, tmp_path: Path) -> None:
    project_id = demo.build(store, tmp_path / "harbor", now=NOW)
    [pair] = upkeep.near_duplicates(store, project_id)
    assert {pair.first.title, pair.second.title} == {s.title for s in demo.DUPLICATE}
    assert pair.cosine == demo.DUPLICATE_COSINE and pair.overlap > 0.3


@pytest.mark.slow
def test_a_consolidation_with_the_real_model_finds_the_demos_pair(
        store: Store, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        request: pytest.FixtureRequest) -> None:
    """The pair and its cosine are what consolidation finds with minilm-static-256."""
    if "slow" not in str(request.config.getoption("markexpr") or "").replace("not slow", ""):
        pytest.skip("slow: run with -m slow")
    folder = SHARED / "models" / "minilm-static-256"
    if not (folder / "model.safetensors").exists():
        pytest.skip(f"{folder} is not present")
    monkeypatch.setenv("AGENTCTX_EMBED_MODEL", str(folder))
    forget_loaded()
    project_id = demo.build(store, tmp_path / "harbor", now=NOW)
    upkeep.save_near_duplicates(store, [r.id for r in records.list_records(
        store, project_id=project_id, limit=1000)], [])
    assert upkeep.near_duplicates(store, project_id) == []
    model = load_model()
    assert model is not None
    consolidate(store, model=model)
    [pair] = upkeep.near_duplicates(store, project_id)
    assert {pair.first.title, pair.second.title} == {s.title for s in demo.DUPLICATE}
    assert abs(pair.cosine - demo.DUPLICATE_COSINE) < 0.005
    forget_loaded()
