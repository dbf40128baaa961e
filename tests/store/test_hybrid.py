"""Hybrid retrieval: reciprocal-rank fusion of the store's search with real vectors (tiny model)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agentctx.store import Store, graph, records
from agentctx.store.hybrid import (
    MIN_COSINE,
    POOL,
    RRF_K,
    VECTOR_WEIGHT,
    IndexedVectors,
    StoredVectors,
    VectorIndex,
    fingerprint,
    fuse,
    hybrid_search,
)
from agentctx.store.models import Draft
from agentctx.store.search import Query, search
from agentctx.store.selection import Selection
from tests.support.tiny_model import TinyModel, embed_all

APP = "p-app"
OTHER = "p-other"

TITLES = [
    ("decision", "Use sqlite with WAL for the local store"),
    ("decision", "Postgres for the hosted service"),
    ("convention", "Every pytest fixture lives in conftest"),
    ("convention", "Unit test names start with test_"),
    ("discovery", "Docker images must pin the base release"),
    ("bugfix", "Kubernetes deployment lacked a readiness probe"),
    ("preference", "Ruff formatting with 100 columns"),
    ("discovery", "Schema migrations need a backup first"),
    ("handover", "Next: finish the persistence layer"),
    ("decision", "Container registry is the company one"),
]


@pytest.fixture
def model() -> TinyModel:
    return TinyModel()


@pytest.fixture
def db(store: Store, model: TinyModel) -> Iterator[Store]:
    """A store with two projects of records, every record embedded with the tiny model."""
    for index, (type_, title) in enumerate(TITLES):
        records.add(store, Draft(type=type_, title=title, body=f"Body {index}."), project_id=APP)
    records.add(store, Draft(type="decision", title="Sqlite database for the other project"),
                project_id=OTHER)
    embed_all(store, model)
    yield store


def _side(db: Store, model: TinyModel) -> IndexedVectors:
    """The in-memory index's side, the query embedded by the tiny model."""
    return IndexedVectors(VectorIndex.load(db, model.name, model.dim),
                          lambda text: (model.encode([text])[0], ""))


def _stored(db: Store, model: TinyModel) -> StoredVectors:
    """The store's vectors, the query embedded by the tiny model."""
    return StoredVectors(db, lambda text: (model.encode([text])[0], ""), model.name)


class _Nothing:
    note = "nothing"

    def nearest(self, text: str, selection: Selection, limit: int) -> list[tuple[int, float]]:
        return []


def _ids(hits: list) -> list[str]:  # type: ignore[type-arg]
    return [h.record.id for h in hits]


# ------------------------------------------------------------------------------------ fuse


def test_fuse_scores_are_reciprocal_ranks() -> None:
    fused = fuse([10, 20, 30], [30, 40])
    by_pk = {f.pk: f for f in fused}
    assert by_pk[30].score == pytest.approx(1 / (RRF_K + 3) + VECTOR_WEIGHT / (RRF_K + 1))
    assert by_pk[10].score == pytest.approx(1 / (RRF_K + 1))
    assert by_pk[40].score == pytest.approx(VECTOR_WEIGHT / (RRF_K + 2))
    assert (by_pk[30].keyword_rank, by_pk[30].vector_rank) == (3, 1)
    assert by_pk[20].vector_rank is None
    # Found by both sides beats first place on one side only.
    assert [f.pk for f in fused] == [30, 10, 20, 40]  # 20 and 40 tie: keyword side first


def test_fuse_ties_are_deterministic() -> None:
    # 10 is first by keywords, 99 first by vectors: with equal weights the scores tie and the
    # keyword side wins the tie.
    assert [f.pk for f in fuse([10], [99], vector_weight=1.0)] == [10, 99]
    assert [f.pk for f in fuse([], [5, 3])] == [5, 3]
    assert [f.pk for f in fuse([7, 7, 8], [])] == [7, 8]  # a repeated pk counts once


# ---------------------------------------------------------------------------- hybrid search


def test_without_vectors_it_is_exactly_the_store_search(db: Store) -> None:
    for text in ("sqlite store", "test fixture conftest", "readiness probe", "nothing here"):
        query = Query(text, Selection(project_id=APP, include_global=True), limit=5)
        assert _ids(hybrid_search(db, query)) == _ids(search(db, query))
        assert _ids(hybrid_search(db, query, _Nothing())) == _ids(search(db, query))


def test_similarity_finds_what_keywords_cannot(db: Store, model: TinyModel) -> None:
    text = "database persistence"  # no title shares a word with the sqlite/postgres decisions
    query = Query(text, Selection(project_id=APP, include_global=True), limit=5)
    keyword_titles = {h.record.title for h in search(db, query)}
    hits = hybrid_search(db, query, _side(db, model))
    titles = [h.record.title for h in hits]
    assert "Use sqlite with WAL for the local store" in titles
    assert "Use sqlite with WAL for the local store" not in keyword_titles
    # The record both sides agree on ranks first.
    assert titles[0] == "Next: finish the persistence layer"
    # Similarity-only hits carry no keyword relevance; ranks are the fused scores, descending.
    by_title = {h.record.title: h for h in hits}
    assert by_title["Use sqlite with WAL for the local store"].relevance == 0.0
    assert [h.rank for h in hits] == sorted((h.rank for h in hits), reverse=True)
    # Never another project's record, even with an identical vector.
    assert all(h.record.project_id == APP for h in hits)


def test_vector_candidates_pass_the_same_filters(db: Store, model: TinyModel) -> None:
    text = "sqlite database"
    query = Query(text, Selection(project_id=APP, include_global=True, types=("discovery",)),
                  limit=10)
    hits = hybrid_search(db, query, _side(db, model))
    assert hits and {h.record.type for h in hits} == {"discovery"}
    # A file filter keeps only records linked to the file, whichever side found them.
    target = records.list_records(db, Selection(project_id=APP, types=("handover",)))[0]
    graph.link_record(db, target.id, graph.ensure_node(db, APP, "file", "src/store.py"))
    query = Query(text, Selection(project_id=APP, include_global=True, file="src/store.py"),
                  limit=10)
    assert _ids(hybrid_search(db, query, _side(db, model))) == [target.id]


def test_superseded_records_return_only_as_of_their_time(db: Store, model: TinyModel) -> None:
    [old] = [r for r in records.list_records(db, Selection(project_id=APP, types=("decision",)))
             if r.title == "Use sqlite with WAL for the local store"]
    before = records.supersede(db, old.id, Draft(type="", title="", body="Rollback journal."),
                               "WAL is unsafe on the network share", actor="cli")
    embed_all(db, model)
    text = "database persistence"
    now = Query(text, Selection(project_id=APP, include_global=True), limit=10)
    found_now = _ids(hybrid_search(db, now, _side(db, model)))
    assert old.id not in found_now and before.id in found_now
    then = Query(text, Selection(project_id=APP, include_global=True, as_of=old.valid_from),
                 limit=10)
    found_then = _ids(hybrid_search(db, then, _side(db, model)))
    assert old.id in found_then and before.id not in found_then


def test_pinned_records_come_first_as_in_keyword_search(db: Store, model: TinyModel) -> None:
    text = "database persistence"
    query = Query(text, Selection(project_id=APP, include_global=True), limit=3)
    before = hybrid_search(db, query, _side(db, model))
    found_by_similarity_only = next(h for h in before if h.relevance == 0.0)
    assert before[0].record.id != found_by_similarity_only.record.id
    records.set_pinned(db, found_by_similarity_only.record.id, True, actor="cli")
    after = hybrid_search(db, query, _side(db, model))
    assert after[0].record.id == found_by_similarity_only.record.id
    longer = hybrid_search(db, query._replace(limit=6), _side(db, model))
    assert _ids(longer)[:3] == _ids(after)


def test_min_cosine_drops_weak_candidates(db: Store, model: TinyModel) -> None:
    text = "database"
    query = Query(text, Selection(project_id=APP, include_global=True), limit=10)
    side = _side(db, model)
    weak = [pk for pk, cosine in side.nearest(text, query.selection, POOL) if cosine < 0.5]
    assert weak
    pks = {h.record.pk for h in hybrid_search(db, query, side, min_cosine=0.5)}
    assert not pks & set(weak)


@settings(max_examples=25, deadline=None)
@given(small=st.integers(min_value=1, max_value=15), extra=st.integers(min_value=0, max_value=30),
       words=st.lists(st.sampled_from(["sqlite", "database", "test", "docker", "ruff", "probe",
                                       "release", "schema", "layer", "the", "company"]),
                      min_size=1, max_size=4))
def test_top_k_is_stable_whatever_the_limit(tmp_path_factory: pytest.TempPathFactory,
                                            small: int, extra: int, words: list[str]) -> None:
    db = _shared_store(tmp_path_factory)
    model = TinyModel()
    text = " ".join(words)
    short = Query(text, Selection(project_id=APP, include_global=True), limit=small)
    long = short._replace(limit=small + extra)
    assert (_ids(hybrid_search(db, short, _side(db, model)))
            == _ids(hybrid_search(db, long, _side(db, model)))[:small])


_SHARED: dict[str, Store] = {}


def _shared_store(factory: pytest.TempPathFactory) -> Store:
    """One larger store for the property test (hypothesis reruns the body many times)."""
    if "db" not in _SHARED:
        path = Path(factory.mktemp("hybrid")) / "agentctx.db"
        db = Store.open(path)
        rng = np.random.default_rng(3)
        vocabulary = ["sqlite", "database", "test", "pytest", "docker", "release", "ruff",
                      "schema", "probe", "layer", "company", "kubernetes", "naming", "wal"]
        for index in range(120):
            words = rng.choice(vocabulary, size=4)
            records.add(db, Draft(type=("decision", "convention", "discovery")[index % 3],
                                  title=" ".join(words), body=f"note {index}"), project_id=APP)
        embed_all(db, TinyModel())
        _SHARED["db"] = db
    return _SHARED["db"]


@pytest.fixture(scope="module", autouse=True)
def _close_shared() -> Iterator[None]:
    yield
    if "db" in _SHARED:
        _SHARED.pop("db").close()


# ------------------------------------------------------------------------------ the index


def test_index_matches_brute_force_and_the_store_vectors(db: Store, model: TinyModel) -> None:
    index = VectorIndex.load(db, model.name, model.dim)
    assert len(index) == len(TITLES) + 1
    query = model.encode(["sqlite test"])[0]
    got = index.nearest(query, project_ids=[APP], limit=4)
    rows = db.rows("SELECT e.record_pk, e.vector FROM embeddings e JOIN records r "
                   "ON r.pk = e.record_pk WHERE r.project_id = ?", (APP,))
    scored = sorted(((-float(np.frombuffer(v, dtype=np.float32) @ query), pk) for pk, v in rows))
    assert [pk for pk, _ in got] == [pk for _, pk in scored[:4]]
    assert [round(c, 5) for _, c in got] == [round(-s, 5) for s, _ in scored[:4]]
    vectors = pytest.importorskip("agentctx.store.vectors")
    theirs = vectors.nearest(db, query, project_ids=[APP], limit=4, model=model.name)
    assert [pk for pk, _ in theirs] == [pk for pk, _ in got]


@pytest.mark.parametrize("selection", [
    Selection(project_id=APP, include_global=True),
    Selection(project_id=APP, types=("decision", "discovery")),
    Selection(project_id=APP, state="all"),
    Selection(project_id=None),
])
def test_the_store_vectors_and_the_index_give_the_same_list(db: Store, model: TinyModel,
                                                            selection: Selection) -> None:
    """The two vector sides select and score alike, so a face's choice never changes hits."""
    pytest.importorskip("agentctx.store.vectors")
    old = records.list_records(db, Selection(project_id=APP, types=("decision",)))[0]
    records.supersede(db, old.id, Draft(type="", title="", body="Rollback journal."),
                      "WAL is unsafe on the network share", actor="cli")
    embed_all(db, model)
    for text in ("database persistence", "sqlite test", "docker release"):
        assert (_stored(db, model).nearest(text, selection, 6)
                == _side(db, model).nearest(text, selection, 6))
        query = Query(text, selection, limit=5)
        assert (_ids(hybrid_search(db, query, _stored(db, model)))
                == _ids(hybrid_search(db, query, _side(db, model))))


def test_index_edges(db: Store, model: TinyModel) -> None:
    index = VectorIndex.load(db, model.name, model.dim)
    assert index.nearest(np.zeros(model.dim), project_ids=[APP], limit=5) == []
    assert index.nearest(np.ones(model.dim + 1), project_ids=[APP], limit=5) == []
    assert index.nearest(np.ones(model.dim), project_ids=["nobody"], limit=5) == []
    assert len(index.nearest(np.ones(model.dim), project_ids=None, limit=100)) == len(index)
    assert len(VectorIndex.load(db, "another-model", model.dim)) == 0


def test_fingerprint_moves_with_records_and_embeddings(db: Store, model: TinyModel) -> None:
    first = fingerprint(db)
    records.add(db, Draft(type="discovery", title="Docker layer caching"), project_id=APP)
    second = fingerprint(db)
    assert second != first
    embed_all(db, model)
    assert fingerprint(db) != second
    records.touch(db, [records.list_records(db, Selection(project_id=APP))[0].id])
    assert fingerprint(db) == fingerprint(db)


def test_stored_vectors_embed_from_the_side_file_once_consolidated(
        store: Store, tmp_path_factory: pytest.TempPathFactory,
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The short-lived processes' side: the query is embedded from the query side file
    consolidation writes, the vectors read from the store; ``note`` says why not."""
    from agentctx.consolidate.run import consolidate
    from agentctx.ml.embedder import forget_loaded, load_model
    from tests.support import tiny_model

    folder = tiny_model.build_wordpiece(tmp_path_factory.mktemp("models") / "wordpiece")
    monkeypatch.setenv("AGENTCTX_EMBED_MODEL", str(folder))
    schema = records.add(store, Draft(type="decision", title="Database schema migrations run "
                                      "first"), project_id=APP)
    records.add(store, Draft(type="convention", title="Every pytest fixture lives in conftest"),
                project_id=APP)
    query = Query("sqlite postgres", Selection(project_id=APP, include_global=True))
    side = StoredVectors(store)
    assert hybrid_search(store, query, side) == []
    assert side.note == "no query side file: run agentctx consolidate"
    try:
        assert consolidate(store, model=load_model(), judge=None).query_model == "written"
    finally:
        forget_loaded()
    hits = hybrid_search(store, query, side, min_cosine=MIN_COSINE)
    assert side.note == ""
    assert [h.record.id for h in hits] == [schema.id]  # by meaning: no word in common
    assert hits[0].relevance == 0.0 and hits[0].matched == ()
    assert hybrid_search(store, Query("zzz qqq", query.selection), side) == []
    assert side.note == "no query word is in the model's vocabulary"
