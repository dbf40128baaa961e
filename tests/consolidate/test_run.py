"""A whole consolidation run: embeddings, the lock, the time box, model changes, digests."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentctx.consolidate import run as run_module
from agentctx.consolidate.run import consolidate, last_run
from agentctx.core.background import exclusive
from agentctx.ml.embedder import EmbeddingModel, forget_loaded
from agentctx.store import Store, digests, sessions, vectors
from agentctx.store import records as rec
from agentctx.store.models import Draft, Project
from agentctx.store.selection import Selection
from tests.consolidate.conftest import add
from tests.support import tiny_model

TOPIC_TITLES = {
    "storage": "Use sqlite with wal for the database",
    "cache": "Redis cache with ttl eviction",
    "auth": "Login uses oauth token",
    "frontend": "React component css",
    "deploy": "Docker release to staging",
}


def _project_records(db: Store, project: Project) -> dict[str, str]:
    return {topic: add(db, project, "decision", title, f"About {topic}.").id
            for topic, title in TOPIC_TITLES.items()}


def test_pending_records_are_embedded_once_and_searchable(store: Store, project: Project,
                                                           tiny: EmbeddingModel) -> None:
    ids = _project_records(store, project)
    lines: list[str] = []
    report = consolidate(store, model=tiny, batch_size=2, progress=lines.append)
    assert report.embedded == 5 and report.pending_left == 0 and report.stopped is None
    assert [line for line in lines if line.startswith("embedded")] == [
        "embedded 2/5", "embedded 4/5", "embedded 5/5"]
    assert vectors.count_pending(store) == 0
    assert vectors.models(store) == [(tiny.name, tiny_model.DIM, 5)]
    query = tiny.encode(["redis ttl"])[0]
    best = vectors.nearest(store, query, project_ids=[project.id], limit=1, model=tiny.name)
    assert rec.by_pks(store, [best[0][0]])[best[0][0]].id == ids["cache"]
    assert consolidate(store, model=tiny).embedded == 0
    summary = last_run(store)
    assert summary is not None and summary["embedded"] == 0 and summary["model"] == tiny.name


def test_changing_the_model_re_embeds_everything(store: Store, project: Project,
                                                 tiny: EmbeddingModel, tmp_path: Path,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    ids = _project_records(store, project)
    consolidate(store, model=tiny)
    rec.supersede(store, ids["deploy"], Draft(type="", title="Docker release to production"),
                  "no more staging", actor="cli")
    other = tiny_model.build(tmp_path / "other-tiny")
    monkeypatch.setenv("AGENTCTX_EMBED_MODEL", str(other))
    forget_loaded()
    report = consolidate(store)  # loads the configured model itself
    assert report.model == str(other.resolve()) and report.embedded == 5
    # Every current record is re-embedded; the superseded one's old vector is dropped.
    assert vectors.models(store) == [(str(other.resolve()), tiny_model.DIM, 5)]


def test_without_embeddings_everything_else_still_runs(store: Store, project: Project,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    _project_records(store, project)
    report = consolidate(store, embeddings=False)
    assert report.model is None and report.embedded == 0 and report.scored == 5
    assert report.digests == 1 and "--no-embeddings" in report.embeddings
    monkeypatch.setenv("AGENTCTX_EMBED_MODEL", "/no/such/model")
    report = consolidate(store)
    assert report.model is None and "unavailable" in report.embeddings and report.digests == 1
    assert vectors.count_pending(store) == 5


def test_only_one_run_at_a_time(store: Store, project: Project, tiny: EmbeddingModel) -> None:
    _project_records(store, project)
    with exclusive(run_module.LOCK_NAME) as held:
        assert held
        report = consolidate(store, model=tiny)
    assert report.skipped == "another consolidation is running" and report.embedded == 0
    assert vectors.count_pending(store) == 5
    assert consolidate(store, model=tiny).embedded == 5


def test_the_time_box_stops_between_batches_and_the_next_run_finishes(
        store: Store, project: Project, tiny: EmbeddingModel,
        monkeypatch: pytest.MonkeyPatch) -> None:
    _project_records(store, project)
    ticks = iter(range(1000))
    over = run_module._Clock.over
    monkeypatch.setattr(run_module._Clock, "over", lambda self: next(ticks) >= 3)
    report = consolidate(store, model=tiny, batch_size=1)
    assert report.stopped is not None and "during embed" in report.stopped
    assert 0 < report.embedded < 5 and report.pending_left == 5 - report.embedded
    # (not monkeypatch.undo(): that would also undo the isolated home, and the next run would
    # take its lock in the real ~/.agentctx, where another run of the suite may hold it)
    monkeypatch.setattr(run_module._Clock, "over", over)
    finished = consolidate(store, model=tiny, batch_size=1)
    assert finished.stopped is None and finished.embedded == 5 - report.embedded


def test_digest_is_precomputed_fresh_and_ranked_by_recent_prompts(
        store: Store, project: Project, tiny: EmbeddingModel) -> None:
    from agentctx.context import injection

    ids = _project_records(store, project)
    sessions.ensure(store, "s1", project.id)
    for text in ("why does the redis cache evict so early", "tune the ttl of the redis cache"):
        sessions.append_meta(store, "s1", "prompts", {"text": text}, keep=20)
    report = consolidate(store, model=tiny)
    assert report.digests == 1
    stored = digests.load_fresh(store, project.id)
    assert stored is not None and stored.builder == "consolidate"
    assert stored.tokens <= 1500 and len(stored.text) <= 8000
    shown = injection.resolve(injection.ids_in(stored.text), ids.values())
    assert shown[0] == ids["cache"]
    assert set(shown) == set(ids.values())
    # A record change makes it stale; the next run refreshes it.
    add(store, project, "decision", "Pytest fixture for every test", "About testing.")
    assert digests.load_fresh(store, project.id) is None
    consolidate(store, model=tiny)
    assert digests.load_fresh(store, project.id) is not None


def test_consolidation_scans_claude_md_for_drift_and_the_digest_says_so(
        store: Store, project: Project, project_dir: Path, tiny: EmbeddingModel) -> None:
    text = "# App\n\n- We use sqlite with wal for the database.\n"
    (project_dir / "CLAUDE.md").write_text(text, encoding="utf-8")
    ids = _project_records(store, project)
    store.execute("UPDATE records SET confidence = 'explicit'")
    lines: list[str] = []
    report = consolidate(store, model=tiny, progress=lines.append)
    assert report.drift_scanned == 1 and report.drift_flagged == 4
    assert "CLAUDE.md drift: 4 records flagged in 1 projects" in lines
    assert list(report.seconds)[:-1] == [s for s in run_module.STEPS if s in report.seconds]
    flagged = {r.id for r in rec.list_records(store, Selection(project_id=project.id))
               if r.claudemd_drift_score > 0.5}
    assert flagged == {ids[t] for t in ("cache", "auth", "frontend", "deploy")}
    stored = digests.load_fresh(store, project.id)
    assert stored is not None
    assert ("4 decisions in the context store are not reflected in CLAUDE.md — suggest "
            "`agentctx sync` to the user.") in stored.text
    assert (project_dir / "CLAUDE.md").read_text(encoding="utf-8") == text
