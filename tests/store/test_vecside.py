"""The hook's vector side: the standard-library lists and the vec0 path against the exact scan.

Real stores in temporary folders, vectors written through the store's own write path, the lists
built by consolidation's build; answers compared with :func:`agentctx.store.vectors.nearest`
on its exact numpy scan. The vec0 tests run where sqlite-vec loads (``make test-vec0``), and fail
there rather than skip (``AGENTCTX_TEST_VEC0=require``).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from agentctx.store import Store, vecside, vecside_build, vectors
from agentctx.store import records as rec
from agentctx.store.models import GLOBAL_PROJECT, Draft, Record
from tests.store.test_vectors import HAS_VEC0, REQUIRE_VEC0, needs_vec0

MODEL = "hand-made"
DIM = 16


@pytest.fixture
def numpy_store(isolated_home: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Store]:
    """A store whose reference search is the exact numpy scan, and whose vector side is the
    standard-library one (as on an interpreter that cannot load extensions)."""
    monkeypatch.setenv("AGENTCTX_VECTOR_BACKEND", "numpy")
    monkeypatch.setattr(vecside, "_BACKEND", ["stdlib"])
    db = Store.open()
    try:
        yield db
    finally:
        db.close()


def _clustered(db: Store, count: int, seed: int = 0, projects: tuple[str, ...] = (
        "p-alpha", "p-beta", GLOBAL_PROJECT)) -> tuple[list[Record], list[np.ndarray]]:
    """``count`` records over ``projects`` with vectors around a few centres (as texts about a
    few topics embed), stored through the write path."""
    rng = np.random.default_rng(seed)
    centres = rng.standard_normal((12, DIM))
    made: list[Record] = []
    rows: list[np.ndarray] = []
    for i in range(count):
        project = projects[i % len(projects)]
        draft = Draft(type="preference" if project == GLOBAL_PROJECT else "discovery",
                      title=f"note {i}", scope="global" if project == GLOBAL_PROJECT else "project")
        made.append(rec.add(db, draft, project_id=project))
        vector = centres[i % 12] + 0.6 * rng.standard_normal(DIM)
        rows.append((vector / np.linalg.norm(vector)).astype(np.float32))
    wanted = {r.pk: v for r, v in zip(made, rows, strict=True)}
    items = [p for p in vectors.pending(db, limit=1_000_000) if p.pk in wanted]
    vectors.save(db, MODEL, [(p, wanted[p.pk]) for p in items])
    return made, rows


def _queries(count: int, seed: int = 99) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    return [(v / np.linalg.norm(v)).astype(np.float32)
            for v in rng.standard_normal((count, DIM))]


def _close(found: list[tuple[int, float]], expected: list[tuple[int, float]]) -> None:
    assert [pk for pk, _ in found] == [pk for pk, _ in expected]
    assert all(abs(a - b) <= 1.01e-6 for (_, a), (_, b) in zip(found, expected, strict=True))


def test_nothing_before_the_build(numpy_store: Store) -> None:
    _clustered(numpy_store, 10)
    assert vecside.built(numpy_store) is None
    assert vecside.nearest(numpy_store, [1.0] * DIM, project_ids=["p-alpha"], limit=5) == []
    assert not vecside.ready(numpy_store)[0]


def test_a_small_scope_is_scored_exactly(numpy_store: Store) -> None:
    db = numpy_store
    _clustered(db, 300)
    assert vecside_build.build(db, MODEL).endswith("records")
    assert vecside_build.build(db, MODEL) == "current"  # nothing changed: nothing rewritten
    for query in _queries(20):
        for scope in (["p-alpha", GLOBAL_PROJECT], ["p-beta"], ["nowhere"]):
            found = vecside.nearest(db, [float(x) for x in query], project_ids=scope, limit=10)
            _close(found, vectors.nearest(db, query, project_ids=scope, limit=10, model=MODEL))


def test_the_lists_find_the_exact_top_ten(numpy_store: Store,
                                          monkeypatch: pytest.MonkeyPatch) -> None:
    db = numpy_store
    _made, rows = _clustered(db, 2400, projects=("p-alpha", GLOBAL_PROJECT))
    vecside_build.build(db, MODEL)
    info = vecside.built(db)
    assert info is not None and info.dim == DIM
    lists = db.scalar(f"SELECT count(*) FROM {vecside.LISTS} WHERE project_id = 'p-alpha' "
                      "AND list_no >= 0")
    assert lists == round(1200 / vecside.LIST_SIZE)
    scope = ["p-alpha", GLOBAL_PROJECT]
    recalls = []
    rng = np.random.default_rng(5)
    # Prompts about what is recorded: near some record, not anywhere at all.
    near = [rows[i] + 0.5 * q for i, q in zip(rng.integers(0, len(rows), 40), _queries(40),
                                              strict=True)]
    for query in (v / np.linalg.norm(v) for v in near):
        found = vecside.nearest(db, [float(x) for x in query], project_ids=scope, limit=10)
        exact = vectors.nearest(db, query, project_ids=scope, limit=10, model=MODEL)
        truth = dict(exact)
        # Whatever it finds carries its exact cosine, best first.
        assert all(abs(cos - float(np.dot(query, _vector(db, pk)))) < 1e-5 for pk, cos in found)
        assert [c for _pk, c in found] == sorted((c for _pk, c in found), reverse=True)
        recalls.append(len(truth.keys() & {pk for pk, _ in found}) / len(truth))
    assert sum(recalls) / len(recalls) >= 0.8, recalls
    # Reading every list and re-scoring every member is the exact scan itself.
    monkeypatch.setattr(vecside, "SCAN", 10_000)
    monkeypatch.setattr(vecside, "RESCORE", 10_000)
    for query in _queries(5):
        _close(vecside.nearest(db, [float(x) for x in query], project_ids=scope, limit=10),
               vectors.nearest(db, query, project_ids=scope, limit=10, model=MODEL))


def _vector(db: Store, pk: int) -> np.ndarray:
    blob = db.scalar("SELECT vector FROM embeddings WHERE record_pk = ?", (pk,))
    return np.frombuffer(blob, dtype=np.float32)


def test_sign_codes_of_the_build_equal_the_hooks(numpy_store: Store) -> None:
    _made, rows = _clustered(numpy_store, 40)
    info = vecside.Built(MODEL, DIM, vecside_build.SEED)
    mean = np.mean(rows, axis=0).astype(np.float32)
    built = vecside_build.sign_codes(np.array(rows), mean, info)
    for row, code in zip(rows, built, strict=True):
        mine = vecside.sign_code([float(x) for x in row], [float(x) for x in mean], info.signs())
        assert mine == int.from_bytes(code.tobytes(), "little")


def test_superseded_and_forgotten_records_never_come_back(numpy_store: Store,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    db = numpy_store
    made, rows = _clustered(db, 1600, projects=("p-alpha",))
    vecside_build.build(db, MODEL)
    query = [float(x) for x in rows[0]]
    assert vecside.nearest(db, query, project_ids=["p-alpha"], limit=1)[0][0] == made[0].pk
    rec.supersede(db, made[0].id, Draft(type="discovery", title="replaced note"), "changed")
    rec.forget(db, made[12].id)
    for scan in (vecside.SCAN, 10_000):
        monkeypatch.setattr(vecside, "SCAN", scan)
        found = {pk for pk, _ in vecside.nearest(db, query, project_ids=["p-alpha"], limit=50)}
        assert made[0].pk not in found and made[12].pk not in found
        assert found <= {r.pk for r in made}


def test_a_store_without_a_side_file_writes_no_vector_and_never_fails(
        numpy_store: Store) -> None:
    db = numpy_store
    _clustered(db, 20, projects=("p-alpha",))
    vecside_build.build(db, MODEL)
    record = rec.add(db, Draft(type="discovery", title="a new note"), project_id="p-alpha")
    assert db.scalar("SELECT count(*) FROM embeddings WHERE record_pk = ?", (record.pk,)) == 0
    assert record.pending_embedding


@needs_vec0
def test_vec0_proposes_the_same_records(isolated_home: Path,
                                        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(vecside, "_BACKEND", [])
    with Store.open() as db:
        assert vecside.backend_name() == "vec0"
        _clustered(db, 900, projects=("p-alpha", GLOBAL_PROJECT))
        vecside_build.build(db, MODEL)
        assert vectors.sync_index(db, MODEL)
        scope = ["p-alpha", GLOBAL_PROJECT]
        for query in _queries(10):
            found = vecside.nearest(db, [float(x) for x in query], project_ids=scope, limit=10)
            assert vecside._nearest_vec0(db, vecside.built(db),  # type: ignore[arg-type]
                                         tuple(float(x) for x in query), scope, 10) == found
            _close(found, vectors.nearest(db, query, project_ids=scope, limit=10, model=MODEL))


def test_the_backend_is_chosen_once_per_process() -> None:
    first = vecside.backend_name()
    assert first in ("vec0", "stdlib")
    assert vecside.backend_name() == first
    if REQUIRE_VEC0 or HAS_VEC0:
        assert first == "vec0"


def test_rotation_signs_are_fixed() -> None:
    signs = vecside.rotation_signs(7, 16)
    assert signs == vecside.rotation_signs(7, 16) and set(signs) == {-1.0, 1.0}
    assert signs != vecside.rotation_signs(8, 16)
    assert vecside.Built("m", DIM, 1).code_bytes == DIM * vecside.ROTATIONS // 8


def test_records_written_after_the_build_join_its_lists_and_stay_readable(
        isolated_home: Path, tmp_path_factory: pytest.TempPathFactory,
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Write-time vectors are appended to the lists consolidation built; a list must stay a
    BLOB (SQLite's ``||`` makes text of two blobs, which no later read could decode), so a
    prompt after any write still finds by meaning — through the lists, not the exact scan."""
    from agentctx.consolidate.run import consolidate
    from agentctx.ml.embedder import forget_loaded, load_model
    from tests.support import tiny_model

    folder = tiny_model.build_wordpiece(tmp_path_factory.mktemp("models") / "wordpiece")
    monkeypatch.setenv("AGENTCTX_EMBED_MODEL", str(folder))
    monkeypatch.setenv("AGENTCTX_VECTOR_BACKEND", "numpy")
    monkeypatch.setattr(vecside, "_BACKEND", ["stdlib"])
    monkeypatch.setattr(vecside, "EXACT", 0)  # read the lists even for a small project
    topics = list(tiny_model.TOPICS.items())
    with Store.open() as db:
        for i in range(40):
            _name, words = topics[i % len(topics)]
            rec.add(db, Draft(type="discovery", title=f"{words[0]} note {i}",
                              body=" ".join(words)), project_id="p-alpha")
        try:
            consolidate(db, model=load_model(), judge=None)
        finally:
            forget_loaded()
        assert vecside.built(db) is not None
        added = [rec.add(db, Draft(type="discovery", title=f"pytest fixture coverage {i}",
                                   body="tests run under pytest with fixtures in ci"),
                         project_id="p-alpha") for i in range(3)]
        kinds = {kind for (kind,) in db.rows(f"SELECT DISTINCT typeof(members) FROM "
                                             f"{vecside.LISTS}")}
        assert kinds <= {"blob", "null"}, kinds
        query = db.scalar("SELECT vector FROM embeddings WHERE record_pk = ?", (added[0].pk,))
        assert query is not None  # the write gave it a vector at once
        vector = [float(x) for x in np.frombuffer(query, dtype=np.float32)]
        found = vecside.nearest(db, vector, project_ids=["p-alpha"], limit=10)
        assert {r.pk for r in added} <= {pk for pk, _cos in found}
