"""Near-duplicates: the cosine-and-words rule, candidate links, merging on a judge's word."""

from __future__ import annotations

import numpy as np

from agentctx.consolidate import duplicates, run
from agentctx.consolidate.duplicates import Verdict
from agentctx.ml.embedder import EmbeddingModel
from agentctx.ops import consolidation
from agentctx.store import Store, graph, upkeep
from agentctx.store import records as rec
from agentctx.store.models import Project, Record
from tests.consolidate.conftest import add

FILLER = ["pytest fixture coverage", "docker release staging", "react css browser",
          "oauth token login", "redis ttl eviction", "python typing mypy", "hook prompt session"]


def consolidate(db: Store, **options: object) -> run.Report:
    """A run as the CLI makes it: the pass with the write path's merge and team step."""
    return consolidation.consolidate(db, "/", **options)


def _fill(db: Store, project: Project) -> None:
    """Unrelated decisions, so document frequencies look like a real project's."""
    for i, words in enumerate(FILLER * 2):
        add(db, project, "decision", f"Decision {i} about {words}", f"Notes on {words}.")


def test_stem_folds_plural_and_tense() -> None:
    assert {duplicates.stem(w) for w in ("session", "sessions")} == {"session"}
    assert duplicates.stem("crashed") == duplicates.stem("crash") == "crash"
    assert duplicates.stem("committing") == "commit"
    assert duplicates.terms_of("The sessions are cached") == {"session", "cach"}


def test_rule_needs_distinctive_title_words_in_both(store: Store, project: Project,
                                                    tiny: EmbeddingModel) -> None:
    _fill(store, project)
    body = "Schema migrations run at startup from the migration folder."
    first = add(store, project, "decision", "Use sqlite for the database", body,
                valid_from="2026-01-01")
    restated = add(store, project, "decision", "Use sqlite for the database",
                   body + " Restated later.", valid_from="2026-02-01")
    template = add(store, project, "decision", "Use wal for the database", body,
                   valid_from="2026-01-15")
    add(store, project, "convention", "Use sqlite for the database", body)  # another type
    add(store, "other-project", "decision", "Use sqlite for the database", body)
    texts = [f"{r.title} {r.body}" for r in (first, restated, template)]
    vecs = tiny.encode(texts)
    assert float(vecs[0] @ vecs[2]) > 0.92  # the template note is as close as the restatement
    consolidate(store, model=tiny)
    pairs = upkeep.merge_candidates(store, project.id)
    assert [(p.older_id, p.newer_id) for p in pairs] == [(first.id, restated.id)]
    assert pairs[0].cosine > 0.99 and pairs[0].overlap >= 0.8
    assert upkeep.merge_candidates(store, "other-project") == []


def test_similar_pairs_finds_every_pair_over_the_threshold_across_blocks() -> None:
    rng = np.random.default_rng(0)
    base = rng.standard_normal((5, 8)).astype(np.float32)
    rows = np.repeat(base, 3, axis=0) + rng.standard_normal((15, 8)).astype(np.float32) * 1e-3
    rows /= np.linalg.norm(rows, axis=1, keepdims=True)
    previous = duplicates.BLOCK_ROWS
    try:
        duplicates.BLOCK_ROWS = 4
        found = duplicates.similar_pairs(rows, 0.99)
    finally:
        duplicates.BLOCK_ROWS = previous
    expected = {(i, j) for i in range(15) for j in range(i + 1, 15) if i // 3 == j // 3}
    assert {(i, j) for i, j, _ in found} == expected


def _pair(db: Store, project: Project, **older: object) -> tuple[Record, Record]:
    body = "Every hook reads the session digest before the prompt."
    first = add(db, project, "decision", "Hook reads the session digest", body,
                valid_from="2026-01-01", **older)
    second = add(db, project, "decision", "Hook reads the session digest", body + " Again.",
                 valid_from="2026-03-01")
    return first, second


def test_confirmed_duplicates_merge_into_the_newer_record(store: Store, project: Project,
                                                          tiny: EmbeddingModel) -> None:
    first, second = _pair(store, project, pinned=True, confidence="explicit", reinforce_count=2)
    asked: list[tuple[str, str]] = []

    def judge(a: Record, b: Record) -> Verdict:
        asked.append((a.id, b.id))
        return Verdict(True, "same fact, restated")

    graph.link_record(store, first.id, graph.ensure_node(store, project.id, "file", "hook.py"))
    alone = run.consolidate(store, model=tiny, judge=judge)  # no merge without the write path
    assert alone.merged == 0 and asked == [] and rec.get(store, first.id).current
    report = consolidate(store, model=tiny, judge=judge)
    assert report.merged == 1 and asked == [(first.id, second.id)]
    old, survivor = rec.get(store, first.id), rec.get(store, second.id)
    assert old.superseded_by == survivor.id and survivor.current
    assert survivor.pinned and survivor.confidence == "explicit"
    assert survivor.reinforce_count == 2
    note = rec.supersession_note(store, survivor.id, old.id)
    assert note is not None and "near-duplicate merged by consolidation" in note
    assert "same fact" in note
    assert {e.actor for e in rec.edits_of(store, old.id)} == {"consolidate"}
    assert {e.actor for e in rec.edits_of(store, survivor.id)} == {"consolidate"}
    assert [link.node.name for link in graph.entities_of(store, survivor.id)] == ["hook.py"]
    assert [r.id for r in rec.history(store, survivor.id)] == [first.id, second.id]
    assert upkeep.merge_candidates(store, project.id) == []


def test_pairs_judged_distinct_are_not_asked_again(store: Store, project: Project,
                                                   tiny: EmbeddingModel) -> None:
    first, second = _pair(store, project)
    asked: list[str] = []

    def judge(a: Record, b: Record) -> Verdict:
        asked.append(a.id)
        return Verdict(False, "different hooks")

    consolidate(store, model=tiny, judge=judge)
    consolidate(store, model=tiny, judge=judge)
    assert asked == [first.id]
    assert upkeep.merge_candidates(store, project.id) == []
    assert rec.get(store, first.id).current and rec.get(store, second.id).current


def test_undecided_pairs_stay_candidates_and_links_follow_edits(
        store: Store, project: Project, tiny: EmbeddingModel) -> None:
    first, second = _pair(store, project)
    report = consolidate(store, model=tiny, judge=lambda a, b: None)
    assert report.near_duplicates == 1 and report.merged == 0
    assert len(upkeep.merge_candidates(store, project.id)) == 1
    again = consolidate(store, model=tiny)
    assert again.near_duplicates == 1 and again.new_candidates == 0
    rec.update(store, second.id, title="Hook reads the react css component", actor="cli")
    consolidate(store, model=tiny)
    assert upkeep.merge_candidates(store, project.id) == []
    assert store.scalar("SELECT count(*) FROM edges WHERE rel_type = 'near_duplicate'") == 0
    assert first.current


def test_restatements_over_one_body_pair_and_two_subjects_do_not() -> None:
    """The words of the rule alone: a title may phrase the same fact differently ("is" / "use",
    "Queue" / "Jobs"); titles naming two subjects never pair, however alike the bodies."""
    group = [("Queue is RabbitMQ", "Background jobs go through RabbitMQ."),
             ("Jobs use RabbitMQ", "Background jobs go via RabbitMQ."),
             ("Use sqlite for the database", "Schema migrations run at startup."),
             ("Use wal for the database", "Schema migrations run at startup."),
             ("Use ruff for linting", "We decided to use ruff for linting because it is fast."),
             ("Use ruff for formatting", "We decided to use ruff for formatting because it is "
                                         "fast.")]
    docs = duplicates.docs_for(group)
    df = duplicates.document_frequency(docs)

    def pairs(i: int, j: int) -> bool:
        return duplicates.lexical_overlap(docs[i], docs[j], df, len(group)) is not None

    assert pairs(0, 1)
    assert not pairs(2, 3) and not pairs(4, 5)
    assert not pairs(0, 2) and not pairs(1, 4)
