"""Record embeddings and nearest-neighbour search: sqlite-vec ``vec0``, or exact numpy over BLOBs.

The ``embeddings`` table (one float32 BLOB per record, with the model's name and dimension) is the
source of truth. ``records_vec``, a sqlite-vec ``vec0`` table (cosine), is a rebuildable index
created at run time when this interpreter's ``sqlite3`` can load extensions; it is never created
by a migration. Where it cannot load (pyenv and macOS system Pythons), :func:`nearest` scores the
BLOBs with numpy instead. Both backends return the same list: vec0 only proposes candidates, which
are re-scored exactly as the numpy path scores them (float64 dot products of the stored float32
unit vectors, rounded to 6 places, ties broken by record pk) and checked against ``records`` (so a
forgotten, superseded or moved record never comes back from a stale index).

Keeping the index honest:

* writers that load the extension update ``records_vec`` in the same transaction as
  ``embeddings``; writers that cannot (and :func:`agentctx.store.records.forget`) set the meta flag
  ``vectors_dirty``, and the next user rebuilds the index;
* the index's ``project_id`` and ``current`` columns (filters applied inside the KNN) are checked
  against ``records`` whenever the store's change counter moved since the last check;
* a KNN whose candidates were filtered away widens ``k`` (vec0's cap is 4096) and, past the cap,
  falls back to the exact numpy scan.

numpy and sqlite_vec are imported inside functions only: the store package is on the hook hot
path, which never loads numpy. Vectors with no direction (all zeros: text made only of unknown
tokens) are stored but never returned by either backend.
"""

from __future__ import annotations

import logging
import sqlite3
import weakref
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, NamedTuple

from agentctx.core.ids import now_iso
from agentctx.store.db import Store

if TYPE_CHECKING:  # pragma: no cover - typing only
    import numpy as np
    import numpy.typing as npt

    Vector = npt.NDArray[np.float32]
    Matrix = npt.NDArray[np.float32]

log = logging.getLogger("agentctx.vectors")

INDEX_TABLE = "records_vec"
META_DIRTY = "vectors_dirty"  # 1: records_vec may disagree with embeddings; rebuild before use
META_VERSION = "vectors_version"  # bumped by every write to embeddings made here
META_INDEX = "vectors_index"  # "<model>|<dim>": what records_vec holds
META_INDEX_STAMP = "vectors_index_stamp"  # change counter when records_vec was last checked
META_TEXT_FORMAT = "vectors_text_format"  # embedding-text format of the stored vectors
KNN_MAX_K = 4096  # sqlite-vec's hard limit on k
INDEX_CACHE_KIB = 32_768  # page cache of a connection that searches the vec0 index
KNN_MARGIN = 8  # extra candidates fetched so float32 near-ties at the cut cannot change results
SCORE_DECIMALS = 6
_ZERO_NORM = 1e-6


class _Wanted(NamedTuple):
    projects: list[str] | None
    types: tuple[str, ...]
    history: bool  # superseded records too


class Pending(NamedTuple):
    """A record waiting for an embedding, with what its embedding text is made of."""

    pk: int
    type: str
    valid_from: str
    project: str  # the project's name (``global`` for the developer profile)
    title: str
    body: str


class _State:
    """Per-open-store memory: whether vec0 loaded (and why not), and the numpy scan cache."""

    def __init__(self) -> None:
        self.vec_error: str | None = None
        self.vec_tried = False
        self.cache_key: tuple[object, ...] | None = None
        self.cache: tuple[list[int], list[str], Any] | None = None


_STATES: weakref.WeakKeyDictionary[Store, _State] = weakref.WeakKeyDictionary()


def _state(db: Store) -> _State:
    state = _STATES.get(db)
    if state is None:
        state = _STATES[db] = _State()
    return state


# ---------------------------------------------------------------------------------- backend


def can_load_extensions() -> bool:
    """Whether this interpreter's ``sqlite3`` module can load SQLite extensions at all."""
    return hasattr(sqlite3.Connection, "enable_load_extension")


def _configured_backend() -> str:
    from agentctx.core.config import Config, ConfigError

    try:
        return Config.load().get_str("vector_backend")
    except ConfigError:
        return "auto"


def _load_vec0(db: Store) -> str | None:
    """Load sqlite-vec into this connection once; ``None`` on success, else the reason it can't."""
    state = _state(db)
    if state.vec_tried:
        return state.vec_error
    state.vec_tried = True
    if _configured_backend() == "numpy":
        state.vec_error = "vector_backend = numpy in the configuration"
    elif not can_load_extensions():
        state.vec_error = "this Python's sqlite3 cannot load extensions"
    else:
        try:
            import sqlite_vec

            db.conn.enable_load_extension(True)
            try:
                sqlite_vec.load(db.conn)
            finally:
                db.conn.enable_load_extension(False)
        except (ImportError, sqlite3.Error, AttributeError, OSError) as exc:
            state.vec_error = f"sqlite-vec did not load: {exc}"
        else:
            # A KNN reads every vector chunk; with SQLite's default 2 MB page cache a 10K-record
            # index (10 MB) is re-read from the OS on each query, which doubles its latency.
            if int(db.scalar("PRAGMA cache_size") or 0) > -INDEX_CACHE_KIB:
                db.execute(f"PRAGMA cache_size = -{INDEX_CACHE_KIB}")
    return state.vec_error


def vec0_version(db: Store) -> str | None:
    """The loaded sqlite-vec version (``v0.1.9``), or ``None`` when vec0 is not available."""
    if _load_vec0(db) is not None:
        return None
    return str(db.scalar("SELECT vec_version()"))


def backend(db: Store) -> tuple[str, str]:
    """Which vector backend :func:`nearest` uses on this store, and a human reason.

    ``("vec0", …)`` when sqlite-vec loads; ``("numpy", why vec0 is unavailable)`` otherwise;
    ``("none", why)`` when the store holds no embeddings yet (the reason says which backend would
    be used) or numpy itself is missing. Meant for ``agentctx doctor``.
    """
    reason = _load_vec0(db)
    if reason is None:
        chosen, detail = "vec0", f"sqlite-vec {vec0_version(db)} loaded into SQLite"
    else:
        try:
            import numpy  # noqa: F401
        except ImportError:
            return "none", "numpy is not installed, so vector search is off"
        chosen, detail = "numpy", f"exact numpy scan over stored vectors: {reason}"
    if db.scalar("SELECT 1 FROM embeddings LIMIT 1") is None:
        return "none", f"no embeddings stored yet (agentctx consolidate builds them); {chosen} " \
                       f"would be used ({detail})"
    return chosen, detail


# ----------------------------------------------------------------------------------- writes


def _index_exists(db: Store) -> bool:
    return db.scalar("SELECT 1 FROM sqlite_master WHERE name = ?", (INDEX_TABLE,)) is not None


def _bump_version(db: Store) -> None:
    db.execute("INSERT INTO meta (key, value) VALUES (?, 1) ON CONFLICT (key) "
               "DO UPDATE SET value = value + 1", (META_VERSION,))


def pending(db: Store, *, project_ids: Sequence[str] | None = None, limit: int = 1000,
            after_pk: int = 0) -> list[Pending]:
    """Current records flagged ``pending_embedding``, lowest pk first, from ``after_pk`` on."""
    where = "r.pending_embedding = 1 AND r.superseded_at IS NULL AND r.pk > ?"
    params: list[object] = [after_pk]
    if project_ids is not None:
        where += f" AND r.project_id IN ({','.join('?' * len(project_ids))})"
        params.extend(project_ids)
    rows = db.rows(
        "SELECT r.pk, r.type, r.valid_from, coalesce(p.name, r.project_id), r.title, r.body "
        f"FROM records r LEFT JOIN projects p ON p.id = r.project_id WHERE {where} "
        "ORDER BY r.pk LIMIT ?", [*params, limit])
    return [Pending(*row) for row in rows]


def count_pending(db: Store, project_ids: Sequence[str] | None = None) -> int:
    """How many current records wait for an embedding."""
    sql = "SELECT count(*) FROM records WHERE pending_embedding = 1 AND superseded_at IS NULL"
    params: list[object] = []
    if project_ids is not None:
        sql += f" AND project_id IN ({','.join('?' * len(project_ids))})"
        params.extend(project_ids)
    return int(db.scalar(sql, params) or 0)


def save(db: Store, model: str, embedded: Sequence[tuple[Pending, Vector]]) -> int:
    """Store embeddings and clear ``pending_embedding``, in one transaction; returns how many.

    A record whose title or body changed after it was read (so ``embedded`` holds a stale
    vector) is skipped and stays pending. The vec0 index is updated in the same transaction when
    this connection has it; otherwise it is marked dirty.
    """
    if not embedded:
        return 0
    import numpy as np

    now = now_iso()
    with db.write():
        marks = ",".join("?" * len(embedded))
        live = {row[0]: (row[1], row[2], row[3]) for row in db.rows(
            f"SELECT pk, title, body, superseded_at IS NULL FROM records WHERE pk IN ({marks})",
            [item.pk for item, _ in embedded])}
        fresh = [(item, np.ascontiguousarray(vector, dtype=np.float32))
                 for item, vector in embedded
                 if live.get(item.pk, (None, None, 0)) == (item.title, item.body, 1)]
        if not fresh:
            return 0
        db.conn.executemany(
            "INSERT INTO embeddings (record_pk, model, dim, vector, embedded_at) "
            "VALUES (?, ?, ?, ?, ?) ON CONFLICT (record_pk) DO UPDATE SET model = excluded.model, "
            "dim = excluded.dim, vector = excluded.vector, embedded_at = excluded.embedded_at",
            [(item.pk, model, int(vector.shape[0]), vector.tobytes(), now)
             for item, vector in fresh])
        db.conn.executemany("UPDATE records SET pending_embedding = 0 WHERE pk = ?",
                            [(item.pk,) for item, _ in fresh])
        _bump_version(db)
        _index_write(db, model, [(item.pk, vector) for item, vector in fresh])
    return len(fresh)


def _index_write(db: Store, model: str, items: Sequence[tuple[int, Vector]]) -> None:
    """Mirror new vectors into records_vec (or mark it dirty when this connection can't)."""
    if not _index_exists(db):
        return
    if _load_vec0(db) is not None or db.meta_get(META_INDEX) != f"{model}|{_dim_of(items)}":
        db.meta_set(META_DIRTY, 1)
        return
    pks = [pk for pk, _ in items]
    _index_delete(db, pks)
    truth = _truth(db, model, pks)
    _index_insert(db, [(pk, vector, *truth[pk]) for pk, vector in items if pk in truth])


def _dim_of(items: Sequence[tuple[int, Vector]]) -> int:
    return int(items[0][1].shape[0]) if items else 0


def delete(db: Store, pks: Sequence[int]) -> None:
    """Delete the embeddings of ``pks`` (and their index rows)."""
    if not pks:
        return
    with db.write():
        for start in range(0, len(pks), 500):
            chunk = list(pks[start:start + 500])
            db.execute(f"DELETE FROM embeddings WHERE record_pk IN ({','.join('?' * len(chunk))})",
                       chunk)
            if _index_exists(db):
                if _load_vec0(db) is None:
                    _index_delete(db, chunk)
                else:
                    db.meta_set(META_DIRTY, 1)
        _bump_version(db)


def requeue_other_format(db: Store, text_format: int) -> int:
    """Flag every current record for re-embedding when the stored vectors were made from another
    embedding-text format than ``text_format``; returns how many were flagged."""
    found = db.meta_get(META_TEXT_FORMAT)
    if found is not None and int(found) == text_format:
        return 0
    flagged = 0
    if db.scalar("SELECT count(*) FROM embeddings"):
        flagged = db.execute("UPDATE records SET pending_embedding = 1 WHERE pending_embedding = 0 "
                             "AND superseded_at IS NULL").rowcount
    db.meta_set(META_TEXT_FORMAT, text_format)
    return flagged


def requeue_other_models(db: Store, model: str) -> int:
    """Flag for re-embedding every current record whose stored vector is from another model.

    Also drops other models' vectors of records that are no longer current (nothing re-embeds
    them, and no search returns them).
    """
    dropped = db.execute("DELETE FROM embeddings WHERE model != ? AND record_pk NOT IN "
                         "(SELECT pk FROM records WHERE superseded_at IS NULL)", (model,))
    if dropped.rowcount:
        _bump_version(db)
        if _index_exists(db):
            db.meta_set(META_DIRTY, 1)
    cursor = db.execute(
        "UPDATE records SET pending_embedding = 1 WHERE pending_embedding = 0 AND "
        "superseded_at IS NULL AND pk IN (SELECT record_pk FROM embeddings WHERE model != ?)",
        (model,))
    requeued = cursor.rowcount
    cursor = db.execute("UPDATE records SET pending_embedding = 1 WHERE pending_embedding = 0 AND "
                        "superseded_at IS NULL AND pk NOT IN (SELECT record_pk FROM embeddings)")
    return requeued + cursor.rowcount


def models(db: Store) -> list[tuple[str, int, int]]:
    """Each stored model with its dimension and how many vectors it holds."""
    return [(row[0], row[1], row[2]) for row in db.rows(
        "SELECT model, dim, count(*) FROM embeddings GROUP BY model, dim ORDER BY count(*) DESC")]


# ------------------------------------------------------------------------------------ reads


def _blob_matrix(rows: Sequence[Sequence[Any]], dim: int) -> Matrix:
    import numpy as np

    if not rows:
        return np.zeros((0, dim), dtype=np.float32)
    return np.frombuffer(b"".join(row[-1] for row in rows), dtype=np.float32).reshape(-1, dim)


def vectors_for(db: Store, pks: Iterable[int], model: str) -> dict[int, Vector]:
    """Stored vectors of ``pks`` for ``model`` (records without one are absent)."""
    wanted = list(pks)
    found: dict[int, Vector] = {}
    for start in range(0, len(wanted), 500):
        chunk = wanted[start:start + 500]
        rows = db.rows(f"SELECT record_pk, dim, vector FROM embeddings WHERE model = ? AND "
                       f"record_pk IN ({','.join('?' * len(chunk))})", [model, *chunk])
        for row in rows:
            found[row[0]] = _blob_matrix([row], row[1])[0]
    return found


def current_matrix(db: Store, model: str, *, project_ids: Sequence[str] | None = None,
                   include_superseded: bool = False) -> tuple[list[int], list[str], Matrix]:
    """Every current record's vector for ``model`` (superseded ones too with
    ``include_superseded``; never archived ones): (pks, types, matrix with one row each)."""
    where = "e.model = ?" + ("" if include_superseded else " AND r.superseded_at IS NULL")
    params: list[object] = [model]
    if project_ids is not None:
        where += f" AND r.project_id IN ({','.join('?' * len(project_ids))})"
        params.extend(project_ids)
    rows = db.rows("SELECT e.record_pk, r.type, e.dim, e.vector FROM embeddings e "
                   f"JOIN records r ON r.pk = e.record_pk WHERE {where} ORDER BY e.record_pk",
                   params)
    if not rows:
        return [], [], _blob_matrix([], 0)
    dim = int(rows[0][2])
    rows = [row for row in rows if row[2] == dim]
    return [row[0] for row in rows], [row[1] for row in rows], _blob_matrix(rows, dim)


def unit(query_vec: Any) -> Vector | None:
    """``query_vec`` as a float32 unit vector (``None`` when it has no direction)."""
    import numpy as np

    vector = np.asarray(query_vec, dtype=np.float32).reshape(-1)
    norm = float(np.linalg.norm(vector.astype(np.float64)))
    if not np.isfinite(norm) or norm < _ZERO_NORM:
        return None
    return (vector / norm).astype(np.float32)


def _exact_scores(matrix: Matrix, query: Vector) -> Any:
    """The one scoring rule both backends share (so their results are identical).

    A row-wise float64 multiply-and-sum rather than a BLAS product: BLAS may sum a row in a
    different order depending on how many rows it is given, and then a cosine sitting on a
    rounding boundary would differ between the full scan and vec0's short candidate list.
    """
    import numpy as np

    scores = (matrix.astype(np.float64) * query.astype(np.float64)).sum(axis=1)
    return np.round(scores, SCORE_DECIMALS)


def exact_best(pks: Sequence[int], matrix: Matrix, query: Vector,
               limit: int) -> list[tuple[int, float]]:
    """The ``limit`` best of ``pks`` (one stored row of ``matrix`` each) for the unit ``query``,
    scored by the one rule every vector search shares: ``(pk, cosine)`` best first, cosines
    rounded to 6 places, ties to the lower pk, rows without direction left out."""
    import numpy as np

    norms = np.linalg.norm(matrix.astype(np.float64), axis=1)
    scores = _exact_scores(matrix, query)
    ranked = sorted((-float(score), pk) for pk, score, norm in zip(pks, scores, norms, strict=True)
                    if norm >= _ZERO_NORM)
    return [(pk, -neg) for neg, pk in ranked[:limit]]


def nearest(db: Store, query_vec: Any, *, project_ids: Sequence[str] | None, limit: int,
            model: str, types: Sequence[str] = (),
            include_superseded: bool = False) -> list[tuple[int, float]]:
    """The records most similar to ``query_vec`` (one vector of ``model``, normalized here):
    ``(record pk, cosine)``, best first, at most ``limit``, cosines rounded to 6 places, ties to
    the lower pk. ``project_ids`` (``None``: every project; name ``"global"`` for the developer
    profile) and ``types`` restrict it; only current records (superseded ones too with
    ``include_superseded``; never archived or forgotten) with a ``model`` embedding are returned.
    vec0 and the numpy fallback return identical lists."""
    if limit <= 0:
        return []
    query = unit(query_vec)
    if query is None:
        return []
    projects = None if project_ids is None else list(dict.fromkeys(project_ids))
    if projects == []:
        return []
    wanted = _Wanted(projects, tuple(dict.fromkeys(types)), include_superseded)  # which records
    if _load_vec0(db) is None:
        try:
            found = _nearest_vec0(db, query, wanted, limit, model)
        except sqlite3.OperationalError as exc:
            log.warning("vec0 search failed (%s); using the exact numpy scan", exc)
            found = None
        if found is not None:
            return found
    return _nearest_numpy(db, query, wanted, limit, model)


def _nearest_numpy(db: Store, query: Vector, wanted: _Wanted, limit: int,
                   model: str) -> list[tuple[int, float]]:
    import numpy as np

    state = _state(db)
    key = (model, int(query.shape[0]), wanted.projects and tuple(wanted.projects),
           wanted.history, db.change_counter(), db.meta_get(META_VERSION))
    if state.cache_key == key and state.cache is not None:
        pks, types, matrix = state.cache
    else:
        pks, types, matrix = current_matrix(db, model, project_ids=wanted.projects,
                                            include_superseded=wanted.history)
        state.cache_key, state.cache = key, (pks, types, matrix)
    if not pks or matrix.shape[1] != query.shape[0]:
        return []
    if wanted.types:
        keep = [i for i, type_ in enumerate(types) if type_ in wanted.types]
        pks, matrix = [pks[i] for i in keep], matrix[np.array(keep, dtype=np.int64)]
        if not pks:
            return []
    return exact_best(pks, matrix, query, limit)


def _nearest_vec0(db: Store, query: Vector, wanted: _Wanted, limit: int,
                  model: str) -> list[tuple[int, float]] | None:
    """KNN through records_vec, re-scored exactly; ``None`` when only the full scan can answer."""
    import numpy as np

    if not sync_index(db, model, dim=int(query.shape[0])):
        return None
    where = "embedding MATCH ? AND k = ?" + ("" if wanted.history else " AND current = 1")
    params: list[object] = []
    if wanted.projects is not None:
        where += f" AND project_id IN ({','.join('?' * len(wanted.projects))})"
        params.extend(wanted.projects)
    k = min(KNN_MAX_K, limit + KNN_MARGIN)
    while True:
        rows = db.rows(f"SELECT record_pk FROM {INDEX_TABLE} WHERE {where} ORDER BY distance",
                       [query, k, *params])
        candidates = [row[0] for row in rows]
        checked = _checked_vectors(db, candidates, model, wanted)
        if len(rows) < k or len(checked) >= limit + KNN_MARGIN:
            break  # every indexed match was seen, or enough of them survived the check
        if k >= KNN_MAX_K:
            return None
        k = min(KNN_MAX_K, k * 4)
    if not checked:
        return []
    pks = list(checked)
    return exact_best(pks, np.stack([checked[pk] for pk in pks]), query, limit)


def _checked_vectors(db: Store, pks: Sequence[int], model: str,
                     wanted: _Wanted) -> dict[int, Vector]:
    """The stored vectors of those ``pks`` that really are ``wanted``."""
    if not pks:
        return {}
    where = f"e.record_pk IN ({','.join('?' * len(pks))}) AND e.model = ?"
    params: list[object] = [*pks, model]
    if not wanted.history:
        where += " AND r.superseded_at IS NULL"
    if wanted.projects is not None:
        where += f" AND r.project_id IN ({','.join('?' * len(wanted.projects))})"
        params.extend(wanted.projects)
    if wanted.types:
        where += f" AND r.type IN ({','.join('?' * len(wanted.types))})"
        params.extend(wanted.types)
    rows = db.rows("SELECT e.record_pk, e.dim, e.vector FROM embeddings e JOIN records r "
                   f"ON r.pk = e.record_pk WHERE {where}", params)
    return {row[0]: _blob_matrix([row], row[1])[0] for row in rows}


# ------------------------------------------------------------------------------- the index


def _truth(db: Store, model: str, pks: Sequence[int] | None = None,
           ) -> dict[int, tuple[str, int]]:
    """``pk -> (project_id, current)`` of records holding a vector of ``model``."""
    sql = ("SELECT e.record_pk, r.project_id, r.superseded_at IS NULL FROM embeddings e "
           "JOIN records r ON r.pk = e.record_pk WHERE e.model = ?")
    params: list[object] = [model]
    if pks is not None:
        if not pks:
            return {}
        sql += f" AND e.record_pk IN ({','.join('?' * len(pks))})"
        params.extend(pks)
    return {row[0]: (row[1], int(row[2])) for row in db.rows(sql, params)}


def _index_delete(db: Store, pks: Sequence[int]) -> None:
    for start in range(0, len(pks), 500):
        chunk = list(pks[start:start + 500])
        db.execute(f"DELETE FROM {INDEX_TABLE} WHERE record_pk IN ({','.join('?' * len(chunk))})",
                   chunk)


def _index_insert(db: Store, rows: Sequence[tuple[int, Vector, str, int]]) -> None:
    import numpy as np

    usable = [row for row in rows if float(np.linalg.norm(row[1])) >= _ZERO_NORM]
    db.conn.executemany(f"INSERT INTO {INDEX_TABLE} (record_pk, embedding, project_id, current) "
                        "VALUES (?, ?, ?, ?)", usable)


def sync_index(db: Store, model: str, *, dim: int | None = None) -> bool:
    """Bring records_vec in line with ``embeddings`` for ``model``; whether it can be used.

    Rebuilds it (creating it with the model's dimension) when it holds another model, is marked
    dirty or is missing; otherwise, when the store's change counter moved since the last check,
    fixes index rows whose record vanished, moved project or changed current state. Returns
    ``False`` when vec0 is unavailable, the store is busy, or there is nothing to index.
    """
    if _load_vec0(db) is not None:
        return False
    stored_dim = db.scalar("SELECT dim FROM embeddings WHERE model = ? LIMIT 1", (model,))
    if stored_dim is None or (dim is not None and int(stored_dim) != dim):
        return False
    signature = f"{model}|{int(stored_dim)}"
    counter = db.change_counter()
    if (_index_exists(db) and db.meta_get(META_INDEX) == signature
            and not db.meta_get(META_DIRTY) and db.meta_get(META_INDEX_STAMP) == counter):
        return True
    from agentctx.store.errors import StoreLocked

    try:
        with db.write():
            if (not _index_exists(db) or db.meta_get(META_INDEX) != signature
                    or db.meta_get(META_DIRTY)):
                _rebuild(db, model, int(stored_dim))
            else:
                _reconcile(db, model)
            db.meta_set(META_INDEX, signature)
            db.meta_set(META_DIRTY, 0)
            db.meta_set(META_INDEX_STAMP, db.change_counter())
    except StoreLocked:
        return False
    return True


def _rebuild(db: Store, model: str, dim: int) -> None:
    db.execute(f"DROP TABLE IF EXISTS {INDEX_TABLE}")
    db.execute(f"CREATE VIRTUAL TABLE {INDEX_TABLE} USING vec0(record_pk integer primary key, "
               f"embedding float[{dim}] distance_metric=cosine, project_id text, current integer)")
    rows = db.rows("SELECT e.record_pk, r.project_id, r.superseded_at IS NULL, e.vector "
                   "FROM embeddings e JOIN records r ON r.pk = e.record_pk "
                   "WHERE e.model = ? AND e.dim = ?", (model, dim))
    matrix = _blob_matrix(rows, dim)
    _index_insert(db, [(row[0], matrix[i], row[1], int(row[2])) for i, row in enumerate(rows)])


def _reconcile(db: Store, model: str) -> None:
    truth = _truth(db, model)
    index = {row[0]: (row[1], int(row[2])) for row in
             db.rows(f"SELECT record_pk, project_id, current FROM {INDEX_TABLE}")}
    _index_delete(db, [pk for pk in index if pk not in truth])
    missing = [pk for pk in truth if pk not in index]
    if missing:
        vectors = vectors_for(db, missing, model)
        _index_insert(db, [(pk, vectors[pk], *truth[pk]) for pk in missing if pk in vectors])
    changed = [(truth[pk][0], truth[pk][1], pk) for pk, meta in index.items()
               if pk in truth and truth[pk] != meta]
    db.conn.executemany(f"UPDATE {INDEX_TABLE} SET project_id = ?, current = ? "
                        "WHERE record_pk = ?", changed)


def stats(db: Store) -> Mapping[str, object]:
    """Counts for ``status`` and ``doctor``: vectors per model, pending records, index state."""
    return {
        "models": [{"model": m, "dim": d, "vectors": n} for m, d, n in models(db)],
        "pending": count_pending(db),
        "index": db.meta_get(META_INDEX) if _index_exists(db) else None,
        "index_dirty": bool(db.meta_get(META_DIRTY)),
    }
