"""Hybrid retrieval: the store's keyword search fused with vector similarity (reciprocal rank).

The keyword side is always :func:`agentctx.store.search.search`; the vector side is passed in by
the caller (a callable returning ``(record pk, cosine)`` pairs, best first), so every caller — the
MCP server with its in-memory :class:`VectorIndex`, the CLI or a benchmark with
``agentctx.store.vectors.nearest`` — fuses the same way, and the store never needs an embedding
model. Without a vector side the result is exactly the keyword search.

Both sides are asked for a fixed candidate pool (:data:`POOL`) whatever the requested limit, then
fused with reciprocal-rank fusion and cut, so the top 5 of a 10-hit answer equal a 5-hit answer.
Vector candidates pass the same filters as the keyword side (project, type, scope, file, as-of,
superseded), using the keyword search's own filter SQL.

:class:`VectorIndex` is an exact in-memory index over the ``embeddings`` table (a float32 matrix,
one contiguous block per project), for long-lived processes that search many times. numpy is
imported lazily: this module is never on the hook path, and importing ``agentctx.store`` stays
standard-library only.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, NamedTuple

from agentctx.store import records as rec
from agentctx.store.db import Store
from agentctx.store.models import RECORD_TYPES, Hit, Record, project_scope
from agentctx.store.search import Query, _filters, search

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

# Candidates taken from each side before fusion, whatever the requested limit.
POOL = 50
# Weighted reciprocal-rank fusion: a candidate at rank r contributes 1 / (RRF_K + r) from the
# keyword side and VECTOR_WEIGHT / (RRF_K + r) from the vector side. A small constant keeps each
# side's first hits on top (the textbook 60 lets records in the middle of both lists push a
# keyword side's exact first hit out of the top five); the vector side weighs a little less
# because a small static model is the weaker judge. Tuned on the coding benchmark's tuning prompts
# and the LongMemEval subset (bench/bench_retrieval.py).
RRF_K = 2
VECTOR_WEIGHT = 0.85
# Vector candidates less similar than this are noise, not meaning: with the static models agentctx
# uses, unrelated texts score about -0.1 to 0.2 and related ones 0.3 and up (minilm-static-256).
MIN_COSINE = 0.2

VectorSide = Callable[[int], Sequence[tuple[int, float]]]
"""Given a pool size, the ``(record pk, cosine)`` pairs nearest to the query, best first."""


class Fused(NamedTuple):
    """One fused candidate: its reciprocal-rank score and its 1-based rank on each side."""

    pk: int
    score: float
    keyword_rank: int | None
    vector_rank: int | None


def fuse(keyword: Sequence[int], vector: Sequence[int], *, k: int = RRF_K,
         vector_weight: float = VECTOR_WEIGHT) -> list[Fused]:
    """Reciprocal-rank fusion of two ranked lists of record pks, best first.

    Ties are broken by the better of the two ranks, then by the keyword rank, then by pk, so the
    order is total and deterministic. A pk listed twice on one side counts at its first rank.
    """
    keyword_rank: dict[int, int] = {}
    for position, pk in enumerate(keyword, start=1):
        keyword_rank.setdefault(pk, position)
    vector_rank: dict[int, int] = {}
    for position, pk in enumerate(vector, start=1):
        vector_rank.setdefault(pk, position)
    fused = []
    for pk in keyword_rank.keys() | vector_rank.keys():
        kr, vr = keyword_rank.get(pk), vector_rank.get(pk)
        score = (1.0 / (k + kr) if kr else 0.0) + (vector_weight / (k + vr) if vr else 0.0)
        fused.append(Fused(pk, score, kr, vr))
    unranked = 1 << 30
    fused.sort(key=lambda f: (-f.score, min(f.keyword_rank or unranked, f.vector_rank or unranked),
                              f.keyword_rank or unranked, f.pk))
    return fused


def hybrid_search(db: Store, query: Query, vector: VectorSide | None = None, *,
                  pool: int = POOL, min_cosine: float = 0.0) -> list[Hit]:
    """Search records by keywords fused with vector similarity; the best ``query.limit`` hits.

    ``vector`` is called once with ``pool`` and returns ``(pk, cosine)`` pairs, best first;
    candidates under ``min_cosine`` are ignored. With no vector side (or no vector candidates)
    the result is :func:`~agentctx.store.search.search`'s; fused answers hold at most ``pool``
    hits, pinned records first. A hit's ``rank`` is its fused score; its ``relevance`` and
    ``matched`` terms come from the keyword side (0 and none for hits found by similarity alone).
    """
    if query.limit <= 0:
        return []
    candidates = [(int(pk), float(cos)) for pk, cos in (vector(pool) if vector else ())[:pool]
                  if cos >= min_cosine]
    if not candidates:
        # The store's search has a fixed pool of its own, so asking it for ``limit`` hits gives
        # the first ``limit`` of a longer answer (and checks matched terms on fewer rows).
        return search(db, query)
    limit = min(query.limit, pool)
    keyword_hits = search(db, query._replace(limit=pool))
    by_pk: dict[int, Hit] = {hit.record.pk: hit for hit in keyword_hits}
    admitted = _admissible(db, query, [pk for pk, _ in candidates if pk not in by_pk])
    vector_pks = [pk for pk, _ in candidates if pk in by_pk or pk in admitted]
    hits = []
    for fused in fuse([hit.record.pk for hit in keyword_hits], vector_pks):
        keyword_hit = by_pk.get(fused.pk)
        if keyword_hit is not None:
            hits.append(keyword_hit._replace(rank=round(fused.score, 6)))
        else:
            hits.append(Hit(admitted[fused.pk], round(fused.score, 6), 0.0, ()))
    # Pinned records first, as in the keyword search (a stable sort keeps the fused order).
    hits.sort(key=lambda hit: not hit.record.pinned)
    return hits[:limit]


def store_vector_side(db: Store, query_vec: Any, query: Query, model: str) -> VectorSide:
    """A vector side read from the store (``agentctx.store.vectors.nearest``) for one search.

    For short-lived callers (the CLI, benchmarks); it covers current records only, so an
    as-of search fuses with current records' similarity. A long-lived process keeps a
    :class:`VectorIndex` instead.
    """
    from agentctx.store import vectors

    projects = project_scope(query.project_id, query.include_global)

    def nearest(pool: int) -> list[tuple[int, float]]:
        return vectors.nearest(db, query_vec, project_ids=projects, limit=pool, model=model)

    return nearest


def search_stored(db: Store, query: Query) -> tuple[list[Hit], str]:
    """Hybrid search for one-shot callers (the CLI, the TUI): the query is embedded from the
    model's query side file (no model load), the vectors read from the store; returns the hits
    and ``"hybrid"``, or the keyword search's hits and why it was keyword only."""
    from agentctx.store import querymodel
    from agentctx.store.textproc import query_terms

    side = querymodel.open_registered(db)
    if side is None:
        return search(db, query), "keyword (no query side file: run agentctx consolidate)"
    try:
        query_vec = side.encode(query_terms(query.text))
    finally:
        side.close()
    if query_vec is None:
        return search(db, query), "keyword (no query word is in the model's vocabulary)"
    try:
        import numpy  # noqa: F401  (the stored vectors are scored with numpy)
    except ImportError:
        return search(db, query), "keyword (numpy is not installed)"
    return hybrid_search(db, query, store_vector_side(db, query_vec, query, side.model),
                         min_cosine=MIN_COSINE), "hybrid"


def _admissible(db: Store, query: Query, pks: Sequence[int]) -> dict[int, Record]:
    """The records among ``pks`` that pass the query's filters, by pk."""
    if not pks:
        return {}
    where, params = _filters(query)
    marks = ",".join("?" * len(pks))
    columns = ", ".join(f"r.{c.strip()}" for c in rec.COLUMNS.split(","))
    # NOT INDEXED: look the few pks up by rowid; left alone, the planner may walk the project's
    # whole index (records_current) to apply the project filter — 20 ms instead of 0.1 at 100K.
    rows = db.rows(f"SELECT {columns} FROM records AS r NOT INDEXED WHERE r.pk IN ({marks}) "
                   f"AND {where}", [*pks, *params])
    return {row[0]: rec.from_row(row) for row in rows}


# ----------------------------------------------------------------------- in-memory vectors


def fingerprint(db: Store) -> tuple[int, int, str]:
    """What tells a loaded :class:`VectorIndex` that the store moved on (three index lookups).

    The record change counter, the highest embedded pk and the ``vectors_version`` meta value
    that ``agentctx.store.vectors`` bumps on every write to the embeddings.
    """
    highest = db.scalar("SELECT max(record_pk) FROM embeddings")
    version = db.meta_get("vectors_version")
    return (db.change_counter(), int(highest or 0), "" if version is None else str(version))


class VectorIndex:
    """Every stored embedding of one model as a normalized float32 matrix, for exact search.

    Rows are grouped by project, so a search over a project (and the global profile) reads two
    contiguous slices. Superseded records are kept (as-of searches need them) and masked out
    unless asked for. Archived records are not loaded.
    """

    def __init__(self, model: str, dim: int, pks: npt.NDArray[np.int64],
                 types: npt.NDArray[np.int8], current: npt.NDArray[np.bool_],
                 matrix: npt.NDArray[np.float32], spans: dict[str, tuple[int, int]]) -> None:
        self.model = model
        self.dim = dim
        self.pks = pks
        self.types = types
        self.current = current
        self.matrix = matrix
        self.spans = spans

    def __len__(self) -> int:
        return int(self.pks.shape[0])

    @classmethod
    def load(cls, db: Store, model: str, dim: int) -> VectorIndex:
        """Read every ``model`` embedding of ``dim`` dimensions for the records in the store."""
        rows = db.rows(
            "SELECT e.record_pk, e.vector, r.project_id, r.type, r.superseded_at IS NULL "
            "FROM embeddings e JOIN records r ON r.pk = e.record_pk "
            "WHERE e.model = ? AND e.dim = ? AND length(e.vector) = ? "
            "ORDER BY r.project_id, e.record_pk", (model, dim, 4 * dim))
        return cls.from_rows(model, dim, [(row[0], bytes(row[1]), row[2], row[3], bool(row[4]))
                                          for row in rows])

    @classmethod
    def from_rows(cls, model: str, dim: int,
                  rows: Sequence[tuple[int, bytes | Any, str, str, bool]]) -> VectorIndex:
        """Build an index from ``(pk, vector, project_id, type, current)`` rows.

        ``vector`` is a float32 BLOB or an array of ``dim`` numbers; rows are re-normalized.
        """
        import numpy as np

        ordered = sorted(rows, key=lambda r: (r[2], r[0]))
        count = len(ordered)
        if all(isinstance(row[1], bytes) for row in ordered):
            joined = b"".join(row[1] for row in ordered)
            matrix = np.frombuffer(joined, dtype=np.float32).reshape(count, dim).copy()
        else:
            matrix = np.zeros((count, dim), dtype=np.float32)
            for i, row in enumerate(ordered):
                value = row[1]
                matrix[i] = (np.frombuffer(value, dtype=np.float32) if isinstance(value, bytes)
                             else np.asarray(value, dtype=np.float32))
        norms = np.linalg.norm(matrix, axis=1, keepdims=True)
        np.divide(matrix, norms, out=matrix, where=norms > 0)
        spans: dict[str, tuple[int, int]] = {}
        for i, row in enumerate(ordered):
            start, _ = spans.get(row[2], (i, i))
            spans[row[2]] = (start, i + 1)
        type_codes = np.array([_TYPE_CODES.get(r[3], -1) for r in ordered], dtype=np.int8)
        return cls(model, dim, np.array([r[0] for r in ordered], dtype=np.int64), type_codes,
                   np.array([r[4] for r in ordered], dtype=np.bool_), matrix, spans)

    def nearest(self, query_vec: npt.ArrayLike, *, project_ids: Sequence[str] | None,
                limit: int, types: Sequence[str] = (), include_superseded: bool = False,
                ) -> list[tuple[int, float]]:
        """The ``limit`` records most similar to ``query_vec``: ``(pk, cosine)``, best first.

        ``project_ids=None`` searches every project. Ties are broken by pk.
        """
        import numpy as np

        query = np.asarray(query_vec, dtype=np.float32).reshape(-1)
        if query.shape[0] != self.dim or limit <= 0 or len(self) == 0:
            return []
        norm = float(np.linalg.norm(query))
        if norm == 0.0:
            return []
        query = query / norm
        if project_ids is None:
            slices = [(0, len(self))]
        else:
            slices = sorted(self.spans[p] for p in dict.fromkeys(project_ids) if p in self.spans)
        found_pks: list[npt.NDArray[np.int64]] = []
        found_scores: list[npt.NDArray[np.float32]] = []
        wanted_types = np.array([_TYPE_CODES[t] for t in types if t in _TYPE_CODES],
                                dtype=np.int8)
        for start, end in slices:
            scores = self.matrix[start:end] @ query
            keep = np.ones(end - start, dtype=np.bool_)
            if not include_superseded:
                keep &= self.current[start:end]
            if types:
                keep &= np.isin(self.types[start:end], wanted_types)
            found_pks.append(self.pks[start:end][keep])
            found_scores.append(scores[keep])
        if not found_pks:
            return []
        pks = np.concatenate(found_pks)
        scores = np.concatenate(found_scores)
        if pks.shape[0] > limit:
            top = np.argpartition(-scores, limit - 1)[:limit]
            # Everything tied with the weakest kept score competes on pk, so the cut is stable.
            threshold = scores[top].min()
            top = np.flatnonzero(scores >= threshold)
            pks, scores = pks[top], scores[top]
        order = np.lexsort((pks, -scores))[:limit]
        return [(int(pks[i]), float(scores[i])) for i in order]


_TYPE_CODES = {name: code for code, name in enumerate(RECORD_TYPES)}
