"""The one status model (stats.overview) that agentctx status, the TUI and the web view show."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

from agentctx.core.ids import parse_time
from agentctx.store import SCHEMA_VERSION, Store, graph, ledger, projects, records, sessions, stats
from agentctx.store.models import Draft


def test_overview_counts_costs_sessions_and_candidates(store: Store, project_dir: Path) -> None:
    project = projects.resolve(store, str(project_dir)).project
    rest = records.add(store, Draft(type="decision", title="Use REST"), project_id=project.id)
    records.supersede(store, rest.id, Draft(type="", title="Use gRPC"), "speed", actor="cli")
    stale = records.add(store, Draft(type="handover", title="Left the importer half done"),
                        project_id=project.id)
    records.add(store, Draft(type="preference", title="Prefers tabs", scope="global"),
                project_id=project.id)
    twin_a = records.add(store, Draft(type="convention", title="Queue is RabbitMQ"),
                         project_id=project.id)
    twin_b = records.add(store, Draft(type="convention", title="Jobs use RabbitMQ"),
                         project_id=project.id)
    graph.add_edge(store, twin_a.id, twin_b.id, "near_duplicate", note="lexical overlap 0.50",
                   weight=0.97)
    store.execute("UPDATE records SET score = 0.01, low_score_since = ? WHERE id = ?",
                  ("2026-01-01T00:00:00.000Z", stale.id))
    sessions.ensure(store, "s-1", project.id, cwd=str(project_dir))
    sessions.add_receipt(store, session_id="s-1", project_id=project.id, event="SessionStart",
                         record_ids=[rest.id], scores=[], tokens=250, chars=800)
    ledger.record_call(store, model="claude-haiku-4-5", purpose="extract",
                       usage=ledger.Usage(input_tokens=1000, output_tokens=100), usd=0.0015,
                       session_id="s-1", project_id=project.id)

    now = parse_time("2026-01-01T00:00:00Z") + timedelta(days=61)
    view = stats.overview(store, project, prune_after_days=60, now=now)
    assert view.store.path == str(store.path) and view.store.schema == SCHEMA_VERSION
    assert view.store.bytes > 0 and view.project == project
    assert view.records["decision"] == {"current": 1, "superseded": 1, "archived": 0}
    assert view.record_totals == {"current": 4, "superseded": 1, "archived": 0}
    assert view.global_preferences["current"] == 1
    assert view.injections["tokens"] == 250 and view.injections["sessions"] == 1
    assert view.extraction.calls == 1 and view.extraction.usd == 0.0015
    [summary] = view.sessions
    assert summary.session_start_tokens == 250 and summary.extraction_calls == 1
    assert [(c.older_id, c.newer_id) for c in view.merge_candidates] == [(twin_a.id, twin_b.id)]
    assert [(c.id, c.days_low) for c in view.prune_candidates] == [(stale.id, 61)]
    assert stats.overview(store, project, prune_after_days=90, now=now).prune_candidates == []


def test_has_embeddings_tells_an_empty_vector_table(store: Store) -> None:
    import numpy as np

    from agentctx.store import vectors

    records.add(store, Draft(type="decision", title="Use gRPC"), project_id="p1")
    assert not stats.has_embeddings(store)
    waiting = vectors.pending(store)
    assert vectors.save(store, "m", [(waiting[0], np.full(8, 0.5, dtype=np.float32))]) == 1
    assert stats.has_embeddings(store)
