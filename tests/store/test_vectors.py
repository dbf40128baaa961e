"""Vector storage and nearest-neighbour search: the exact numpy scan and the sqlite-vec index.

The vec0 tests need an interpreter whose ``sqlite3`` can load extensions (Debian's
``/usr/bin/python3``); elsewhere they skip, unless ``AGENTCTX_TEST_VEC0=require`` makes a missing
vec0 a failure (CI sets it in the vec0 virtual environment so the path can't silently vanish).
"""

from __future__ import annotations

import math
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from agentctx.store import Store, vectors
from agentctx.store import projects as proj
from agentctx.store import records as rec
from agentctx.store.models import GLOBAL_PROJECT, Draft, Record

REQUIRE_VEC0 = os.environ.get("AGENTCTX_TEST_VEC0", "") == "require"
MODEL = "hand-made"
DIM = 16


def _vec0_loads() -> bool:
    import sqlite3

    if not vectors.can_load_extensions():
        return False
    try:
        import sqlite_vec

        conn = sqlite3.connect(":memory:")
        conn.enable_load_extension(True)
        sqlite_vec.load(conn)
        conn.close()
    except Exception:
        return False
    return True


HAS_VEC0 = _vec0_loads()
needs_vec0 = pytest.mark.skipif(not HAS_VEC0 and not REQUIRE_VEC0,
                                reason="this Python's sqlite3 cannot load sqlite-vec")


@pytest.fixture
def numpy_store(isolated_home: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Store]:
    """A store whose vector search is forced onto the numpy scan."""
    monkeypatch.setenv("AGENTCTX_VECTOR_BACKEND", "numpy")
    db = Store.open()
    try:
        yield db
    finally:
        db.close()


def _unit(rng: np.random.Generator, dim: int = DIM) -> np.ndarray:
    vector = rng.standard_normal(dim).astype(np.float32)
    return vector / np.linalg.norm(vector)


def _embed(db: Store, records: list[Record], rows: list[np.ndarray], model: str = MODEL) -> None:
    """Store hand-made vectors for ``records`` through the real write path."""
    wanted = {r.pk: v for r, v in zip(records, rows, strict=True)}
    items = [p for p in vectors.pending(db, limit=100_000) if p.pk in wanted]
    assert len(items) == len(records)
    assert vectors.save(db, model, [(p, wanted[p.pk]) for p in items]) == len(records)


def _corpus(db: Store, count: int, seed: int = 0) -> tuple[list[Record], list[np.ndarray]]:
    """``count`` records spread over two projects and the global profile, with random vectors."""
    rng = np.random.default_rng(seed)
    made: list[Record] = []
    for i in range(count):
        project = ("p-alpha", "p-beta", GLOBAL_PROJECT)[i % 3]
        draft = Draft(type="preference" if project == GLOBAL_PROJECT else "discovery",
                      title=f"note {i}", scope="global" if project == GLOBAL_PROJECT else "project")
        made.append(rec.add(db, draft, project_id=project))
    rows = [_unit(rng) for _ in made]
    _embed(db, made, rows)
    return made, rows


def _exact(records: list[Record], rows: list[np.ndarray], query: np.ndarray,
           projects: list[str] | None, limit: int, excluded: frozenset[int] = frozenset(),
           ) -> list[tuple[int, float]]:
    """The expected answer, computed independently (plain Python sums, one record at a time)."""
    scored = [(round(math.fsum(float(a) * float(b) for a, b in zip(v, query, strict=True)), 6),
               r.pk)
              for r, v in zip(records, rows, strict=True)
              if r.pk not in excluded and (projects is None or r.project_id in projects)]
    scored.sort(key=lambda item: (-item[0], item[1]))
    return [(pk, score) for score, pk in scored[:limit]]


def _assert_close(found: list[tuple[int, float]], expected: list[tuple[int, float]]) -> None:
    """Same records in the same order, cosines equal to the 6th place (rounding aside)."""
    assert [pk for pk, _ in found] == [pk for pk, _ in expected]
    assert all(abs(a - b) <= 1.01e-6 for (_, a), (_, b) in zip(found, expected, strict=True))


def test_numpy_scan_is_exact_and_filters_projects(numpy_store: Store) -> None:
    db = numpy_store
    made, rows = _corpus(db, 60)
    query = _unit(np.random.default_rng(7))
    assert vectors.backend(db)[0] == "numpy"
    for projects in (None, ["p-alpha"], ["p-beta", GLOBAL_PROJECT], ["nowhere"]):
        found = vectors.nearest(db, query, project_ids=projects, limit=7, model=MODEL)
        _assert_close(found, _exact(made, rows, query, projects, 7))
    # The query is normalized by nearest; a scaled query gives the same answer.
    assert vectors.nearest(db, query * 3, project_ids=None, limit=5, model=MODEL) == \
        vectors.nearest(db, query, project_ids=None, limit=5, model=MODEL)
    # Another model's vectors, an empty project list, a zero query or limit 0 find nothing.
    assert vectors.nearest(db, query, project_ids=None, limit=5, model="other") == []
    assert vectors.nearest(db, query, project_ids=[], limit=5, model=MODEL) == []
    assert vectors.nearest(db, np.zeros(DIM), project_ids=None, limit=5, model=MODEL) == []
    assert vectors.nearest(db, query, project_ids=None, limit=0, model=MODEL) == []


def test_only_current_records_are_returned(numpy_store: Store) -> None:
    db = numpy_store
    made, rows = _corpus(db, 12)
    target = made[0]
    query = rows[0]
    assert vectors.nearest(db, query, project_ids=None, limit=1, model=MODEL)[0][0] == target.pk
    rec.supersede(db, target.id, Draft(type="", title="note 0, revised"), "revised", actor="cli")
    found = vectors.nearest(db, query, project_ids=None, limit=20, model=MODEL)
    assert target.pk not in [pk for pk, _ in found]
    rec.forget(db, made[1].id, actor="cli")
    found = vectors.nearest(db, rows[1], project_ids=None, limit=20, model=MODEL)
    assert made[1].pk not in [pk for pk, _ in found]
    assert db.meta_get(vectors.META_DIRTY) == 1


def test_ties_go_to_the_lower_pk_and_zero_vectors_never_return(numpy_store: Store) -> None:
    db = numpy_store
    made = [rec.add(db, Draft(type="discovery", title=f"same {i}"), project_id="p")
            for i in range(4)]
    axis = np.zeros(DIM, dtype=np.float32)
    axis[0] = 1.0
    _embed(db, made, [axis, axis, np.zeros(DIM, dtype=np.float32), axis])
    found = vectors.nearest(db, axis, project_ids=["p"], limit=10, model=MODEL)
    assert found == [(made[0].pk, 1.0), (made[1].pk, 1.0), (made[3].pk, 1.0)]


def test_save_skips_records_changed_after_they_were_read(numpy_store: Store) -> None:
    db = numpy_store
    record = rec.add(db, Draft(type="decision", title="Use SQLite"), project_id="p")
    item = vectors.pending(db)[0]
    rec.update(db, record.id, title="Use SQLite in WAL mode", actor="cli")
    assert vectors.save(db, MODEL, [(item, _unit(np.random.default_rng(1)))]) == 0
    assert vectors.count_pending(db) == 1
    fresh = vectors.pending(db)[0]
    assert fresh.title == "Use SQLite in WAL mode"
    assert vectors.save(db, MODEL, [(fresh, _unit(np.random.default_rng(1)))]) == 1
    assert vectors.count_pending(db) == 0
    # Editing the text queues the record again.
    rec.update(db, record.id, body="Readers never block the writer.", actor="cli")
    assert vectors.count_pending(db) == 1


def test_model_change_requeues_every_record(numpy_store: Store) -> None:
    db = numpy_store
    made, _rows = _corpus(db, 6)
    assert vectors.count_pending(db) == 0
    with db.write():
        assert vectors.requeue_other_models(db, "new-model") == 6
    assert vectors.count_pending(db) == 6
    assert vectors.models(db) == [(MODEL, DIM, 6)]
    assert len(made) == 6


def test_backend_reports_why(numpy_store: Store, monkeypatch: pytest.MonkeyPatch) -> None:
    kind, reason = vectors.backend(numpy_store)
    assert kind == "none" and "no embeddings stored yet" in reason and "numpy" in reason
    _corpus(numpy_store, 3)
    kind, reason = vectors.backend(numpy_store)
    assert kind == "numpy" and "vector_backend = numpy" in reason
    # The default store (auto): vec0 where it loads, else numpy with the interpreter's reason.
    monkeypatch.delenv("AGENTCTX_VECTOR_BACKEND")
    with Store.open() as store:
        kind, reason = vectors.backend(store)
    if HAS_VEC0:
        assert kind == "vec0" and "sqlite-vec v" in reason
    else:
        assert kind == "numpy" and "cannot load extensions" in reason


def test_importing_the_store_and_vectors_never_loads_numpy() -> None:
    code = ("import sys, agentctx.store, agentctx.store.vectors, agentctx.store.upkeep; "
            "print(sorted(m for m in ('numpy', 'sqlite_vec', 'model2vec') if m in sys.modules))")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            check=True)
    assert result.stdout.strip() == "[]"


# ------------------------------------------------------------------------------------- vec0


@needs_vec0
def test_vec0_and_numpy_return_identical_results(store: Store, isolated_home: Path,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    made, rows = _corpus(store, 900, seed=3)
    assert vectors.backend(store)[0] == "vec0"
    monkeypatch.setenv("AGENTCTX_VECTOR_BACKEND", "numpy")
    with Store.open() as fallback:
        assert vectors.backend(fallback)[0] == "numpy"
        rng = np.random.default_rng(11)
        for trial in range(25):
            query = _unit(rng)
            projects = (None, ["p-alpha"], ["p-beta", GLOBAL_PROJECT])[trial % 3]
            limit = (1, 5, 20, 100)[trial % 4]
            via_vec0 = vectors.nearest(store, query, project_ids=projects, limit=limit,
                                       model=MODEL)
            via_numpy = vectors.nearest(fallback, query, project_ids=projects, limit=limit,
                                        model=MODEL)
            assert via_vec0 == via_numpy
            _assert_close(via_numpy, _exact(made, rows, query, projects, limit))
    assert store.scalar(f"SELECT count(*) FROM {vectors.INDEX_TABLE}") == 900


@needs_vec0
def test_forgotten_record_never_comes_back_from_vec0(store: Store) -> None:
    made, rows = _corpus(store, 30)
    victim = made[4]
    assert vectors.nearest(store, rows[4], project_ids=None, limit=1, model=MODEL)[0][0] == \
        victim.pk
    rec.forget(store, victim.id, actor="cli")
    found = vectors.nearest(store, rows[4], project_ids=None, limit=30, model=MODEL)
    assert victim.pk not in [pk for pk, _ in found]
    assert len(found) == 29
    # The dirty flag made the index rebuild without the forgotten row.
    assert store.meta_get(vectors.META_DIRTY) == 0
    assert store.scalar(f"SELECT count(*) FROM {vectors.INDEX_TABLE} WHERE record_pk = ?",
                        (victim.pk,)) == 0


@needs_vec0
def test_vec0_follows_supersede_and_project_merge(store: Store, tmp_path: Path) -> None:
    made, rows = _corpus(store, 30)
    query = rows[0]
    vectors.nearest(store, query, project_ids=None, limit=3, model=MODEL)  # builds the index
    rec.supersede(store, made[0].id, Draft(type="", title="note 0 again"), "restated", actor="cli")
    found = vectors.nearest(store, query, project_ids=["p-alpha"], limit=40, model=MODEL)
    assert made[0].pk not in [pk for pk, _ in found]
    # Re-home p-beta's records into p-alpha: the index's project column follows.
    for name in ("alpha", "beta"):
        (tmp_path / name / ".git").mkdir(parents=True)
    store.execute("INSERT INTO projects (id, name, root, created_at, last_seen) VALUES "
                  "('p-alpha', 'alpha', ?, 'x', 'x'), ('p-beta', 'beta', ?, 'x', 'x')",
                  (str(tmp_path / "alpha"), str(tmp_path / "beta")))
    proj.merge(store, "p-beta", "p-alpha")
    moved = [r for r in made if r.project_id == "p-beta"]
    found = vectors.nearest(store, rows[made.index(moved[0])], project_ids=["p-alpha"], limit=1,
                            model=MODEL)
    assert found[0][0] == moved[0].pk
    assert vectors.nearest(store, query, project_ids=["p-beta"], limit=5, model=MODEL) == []


@needs_vec0
def test_stale_index_metadata_is_caught_by_the_check_and_the_wider_knn(
        store: Store, monkeypatch: pytest.MonkeyPatch) -> None:
    made, rows = _corpus(store, 300, seed=5)
    query = rows[0]
    vectors.nearest(store, query, project_ids=None, limit=3, model=MODEL)
    # Supersede the 60 records nearest the query, then pretend the index was already checked:
    # its `current` column is now wrong for all of them.
    nearest = vectors.nearest(store, query, project_ids=None, limit=60, model=MODEL)
    for pk, _score in nearest:
        record = next(r for r in made if r.pk == pk)
        rec.supersede(store, record.id, Draft(type="", title=f"{record.title} (new)"), "redo",
                      actor="cli")
    store.meta_set(vectors.META_INDEX_STAMP, store.change_counter())
    gone = frozenset(pk for pk, _ in nearest)
    found = vectors.nearest(store, query, project_ids=None, limit=10, model=MODEL)
    _assert_close(found, _exact(made, rows, query, None, 10, excluded=gone))
    monkeypatch.setattr(vectors, "KNN_MAX_K", 16)  # past the cap the exact scan answers
    assert vectors.nearest(store, query, project_ids=None, limit=10, model=MODEL) == found


@needs_vec0
def test_writes_without_the_extension_mark_the_index_dirty(
        store: Store, monkeypatch: pytest.MonkeyPatch) -> None:
    made, rows = _corpus(store, 20)
    vectors.nearest(store, rows[0], project_ids=None, limit=3, model=MODEL)
    assert store.meta_get(vectors.META_DIRTY) == 0
    extra = rec.add(store, Draft(type="discovery", title="late note"), project_id="p-alpha")
    monkeypatch.setenv("AGENTCTX_VECTOR_BACKEND", "numpy")
    late = _unit(np.random.default_rng(99))
    with Store.open() as other:
        _embed(other, [extra], [late])
        assert other.meta_get(vectors.META_DIRTY) == 1
    found = vectors.nearest(store, late, project_ids=None, limit=1, model=MODEL)
    assert found == [(extra.pk, 1.0)]
    assert store.meta_get(vectors.META_DIRTY) == 0
    assert len(made) == 20
