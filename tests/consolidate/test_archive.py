"""The archive: long-superseded records move to the cold table; history and as-of read it."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from agentctx.consolidate.run import consolidate
from agentctx.core.ids import to_iso
from agentctx.ml.embedder import EmbeddingModel
from agentctx.store import Store, vectors
from agentctx.store import records as rec
from agentctx.store import search as srch
from agentctx.store.models import Draft, Project
from agentctx.store.selection import Selection
from tests.consolidate.conftest import add

NOW = datetime(2026, 6, 1, tzinfo=UTC)


def _chain(db: Store, project: Project, start_days_ago: int, step_days: int, length: int,
           topic: str) -> list[str]:
    first = add(db, project, "decision", f"{topic} v1", "sqlite database",
                valid_from=to_iso(NOW - timedelta(days=start_days_ago)))
    ids = [first.id]
    for n in range(2, length + 1):
        successor = rec.supersede(db, ids[-1], Draft(
            type="", title=f"{topic} v{n}", body="sqlite database",
            valid_from=to_iso(NOW - timedelta(days=start_days_ago - step_days * (n - 1)))),
            f"revision {n}", actor="cli")
        ids.append(successor.id)
    return ids


def test_long_superseded_records_move_to_the_archive(store: Store, project: Project,
                                                     tiny: EmbeddingModel) -> None:
    old_chain = _chain(store, project, 400, 100, 3, "Storage engine")  # superseded 300, 200 ago
    young_chain = _chain(store, project, 60, 30, 2, "Cache policy")  # superseded 30 days ago
    archived_pks = [rec.get(store, rid).pk for rid in old_chain[:2]]
    report = consolidate(store, model=tiny, now=NOW)
    assert report.archived == 2
    archived = {row[0] for row in store.rows("SELECT id FROM records_archive")}
    assert archived == set(old_chain[:2])
    assert store.scalar("SELECT count(*) FROM records WHERE id IN (?, ?)",
                        old_chain[:2]) == 0
    assert rec.get(store, young_chain[0]).superseded_at is not None
    assert not rec.get(store, young_chain[0]).archived
    # History and as-of read the cold table.
    chain = rec.history(store, old_chain[-1])
    assert [r.id for r in chain] == old_chain and chain[0].archived and not chain[-1].archived
    past = rec.as_of(store, project.id, to_iso(NOW - timedelta(days=350)))
    assert [r.id for r in past] == [old_chain[0]]
    # Same columns plus archived_at, nothing lost.
    row = store.one("SELECT title, body, archived_at, pending_embedding FROM records_archive "
                    "WHERE id = ?", (old_chain[0],))
    assert row is not None and row[0] == "Storage engine v1" and row[1] == "sqlite database"
    assert row[2] and row[3] == 1
    # The full-text index and the vectors no longer hold archived rows.
    store.execute("INSERT INTO records_fts(records_fts) VALUES ('integrity-check')")
    hits = srch.search(store,
                       srch.Query("storage engine",
                                  Selection(project_id=project.id, include_global=True,
                                            state="all")))
    assert old_chain[0] not in [h.record.id for h in hits]
    assert vectors.vectors_for(store, archived_pks, tiny.name) == {}
    assert store.scalar("SELECT count(*) FROM embeddings") == 2  # the two current records
    # Nothing left to archive: a second run moves nothing.
    assert consolidate(store, model=tiny, now=NOW).archived == 0


def test_archived_predecessor_comes_back_and_is_embedded_again(
        store: Store, project: Project, tiny: EmbeddingModel) -> None:
    chain = _chain(store, project, 400, 200, 2, "Storage engine")
    consolidate(store, model=tiny, now=NOW)
    assert rec.get(store, chain[0]).archived
    rec.forget(store, chain[1],
               actor="cli")  # the current record was a mistake: its predecessor holds again
    restored = rec.get(store, chain[0])
    assert restored.current and not restored.archived and restored.pending_embedding
    consolidate(store, model=tiny, now=NOW)
    axis = tiny.encode(["sqlite database"])[0]
    found = vectors.nearest(store, axis, project_ids=[project.id], limit=3, model=tiny.name)
    assert [pk for pk, _ in found] == [restored.pk]
