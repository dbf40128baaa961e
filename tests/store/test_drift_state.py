"""The drift scan's store functions on a real store: checked records, chains, scores, dismissals."""

from __future__ import annotations

import pytest

from agentctx.store import Store, digests, records, stats, upkeep
from agentctx.store import drift_state as store_drift
from agentctx.store.errors import InvalidRecord
from agentctx.store.models import Draft, Record
from agentctx.store.selection import Selection
from agentctx.store.stems import stems

P, Q = "p1", "p2"


def add(db: Store, title: str, type_: str = "decision", confidence: str = "explicit",
        project: str = P, when: str | None = None) -> Record:
    return records.add(db, Draft(type=type_, title=title, confidence=confidence,
                                 valid_from=when), project_id=project)


def test_checked_are_current_decisions_and_conventions_of_trusted_confidence(
        store: Store) -> None:
    kept = [add(store, "Use gRPC", when="2026-01-01"),
            add(store, "Tests mirror the package", "convention", "reinforced", when="2026-02-01")]
    add(store, "Maybe GraphQL", confidence="inferred")
    add(store, "VAT off by a cent", "bugfix")
    add(store, "Use gRPC too", project=Q)
    old = add(store, "Use REST", when="2025-01-01")
    records.supersede(store, old.id, kept[0].id, "speed", actor="cli")
    assert [r.id for r in store_drift.checked(store, P)] == [r.id for r in kept]


def test_superseded_reads_live_and_archived_records(store: Store) -> None:
    first = add(store, "Run tests with nose", when="2024-01-01")
    second = records.supersede(store, first.id, Draft(type="", title="Run tests with pytest 7",
                                                      confidence="explicit"), "nose is dead",
                               actor="cli")
    records.supersede(store, second.id, Draft(type="", title="Run tests with pytest 8",
                                              confidence="explicit"), "upgrade", actor="cli")
    upkeep.archive(store, [first.pk])
    found = store_drift.superseded(store, P)
    assert [(r.id, r.archived) for r in found] == [(first.id, True), (second.id, False)]
    current = store_drift.current_by_ids(store, [second.id, found[1].superseded_by or ""])
    assert list(current) == [found[1].superseded_by]


def test_save_scores_sets_named_records_and_clears_the_rest(store: Store) -> None:
    a, b, c = (add(store, t) for t in ("Use gRPC", "Use Helm", "Use Redis"))
    other = add(store, "Elsewhere", project=Q)
    counter = store.change_counter()
    assert store_drift.save_scores(store, P, {a.id: 0.9, b.id: 0.75}) == 2
    assert stats.drift_count(store, P, store_drift.FLAGGED) == 2
    assert store_drift.save_scores(store, P, {a.id: 0.9, c.id: 0.2}) == 2  # b cleared, c set
    scores = {r.id: r.claudemd_drift_score for r in records.list_records(store,
                                                                         Selection(project_id=P))}
    assert scores == {a.id: 0.9, b.id: 0.0, c.id: 0.2}
    assert store_drift.save_scores(store, P, {other.id: 1.0}) == 2  # another project's id: no
    assert records.get(store, other.id).claudemd_drift_score == 0.0
    assert store.change_counter() == counter  # never a "meaningful" change


def test_dismissals_zero_the_score_and_can_be_undone(store: Store) -> None:
    record = add(store, "Use gRPC")
    store_drift.save_scores(store, P, {record.id: 0.9})
    found, added = store_drift.dismiss(store, P, record.id[:10], actor="tui")
    assert (found.id, added) == (record.id, True)
    assert store_drift.dismiss(store, P, record.id, actor="cli")[1] is False
    assert store_drift.dismissed(store, P) == {record.id}
    assert store_drift.dismissed(store, Q) == set()
    assert records.get(store, record.id).claudemd_drift_score == 0.0
    assert store_drift.undismiss(store, P, record.id)[1] is True
    assert store_drift.undismiss(store, P, record.id)[1] is False
    assert store_drift.dismissed(store, P) == set()


def test_dismissing_the_wrong_record_is_refused(store: Store) -> None:
    fix = add(store, "VAT off by a cent", "bugfix")
    elsewhere = add(store, "Use Helm", project=Q)
    with pytest.raises(InvalidRecord, match="bugfix"):
        store_drift.dismiss(store, P, fix.id, actor="cli")
    with pytest.raises(InvalidRecord, match="another project"):
        store_drift.dismiss(store, P, elsewhere.id, actor="cli")
    assert store_drift.dismissed(store, P) == set()


def test_forgetting_a_record_forgets_its_dismissal(store: Store) -> None:
    record = add(store, "Use gRPC")
    store_drift.dismiss(store, P, record.id, actor="cli")
    records.forget(store, record.id, actor="cli")
    assert store.scalar("SELECT count(*) FROM drift_dismissals") == 0


def test_the_digest_count_uses_the_partial_index(store: Store) -> None:
    plan = " ".join(str(row[3]) for row in store.rows(
        "EXPLAIN QUERY PLAN SELECT count(*) FROM records WHERE project_id = ? AND type IN "
        "('decision', 'convention') AND superseded_at IS NULL AND claudemd_drift_score > 0 "
        "AND claudemd_drift_score > ?", (P, 0.5)))
    assert "records_drift" in plan


def test_mark_stale_makes_a_fresh_digest_stale(store: Store) -> None:
    digests.save(store, P, "text", tokens=1, record_ids=[], builder="test")
    assert digests.load_fresh(store, P) is not None
    digests.mark_stale(store, P)
    assert digests.load_fresh(store, P) is None
    assert digests.load(store, P) is not None  # the text stays until it is rebuilt


def test_stems_are_the_full_text_index_stems(store: Store) -> None:
    found = stems(["migrations", "migrate", "running", "ünïcode", "databases", "v16", "16"])
    assert found["migrations"] == found["migrate"] == "migrat"
    assert found["running"] == "run" and found["ünïcode"] == "unicod"
    assert found["v16"] == "v16" and found["16"] == "16"
    add(store, "Databases: ünïcode migrations running")
    store.execute("CREATE VIRTUAL TABLE temp.indexed USING fts5vocab(main, records_fts, row)")
    indexed = {row[0] for row in store.rows("SELECT term FROM temp.indexed")}
    assert {found["databases"], found["ünïcode"], found["migrations"], found["running"]} <= indexed
