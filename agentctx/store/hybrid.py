"""Hybrid retrieval: the store's keyword search fused with vector similarity (reciprocal rank).

The keyword side is always :func:`agentctx.store.search.search`; the vector side is the caller's
(:class:`VectorSide`: none, :class:`StoredVectors` — the query side file with the store's
vectors, for short-lived processes —, an :class:`IndexedVectors` over a long-lived process's
in-memory :class:`VectorIndex`, or the hook's own), so every caller fuses the same way and the
store never needs an embedding model. Without a vector side the result is exactly the keyword
search. Every side selects the same records by the same rule (the selection's projects and
types, current ones unless it reaches history) and scores them alike (cosines rounded to 6
places, ties to the lower pk), so one query gives the same hits whichever side a face brings.

Both sides are asked for a fixed candidate pool (:data:`POOL`) whatever the requested limit, then
fused with reciprocal-rank fusion and cut, so the top 5 of a 10-hit answer equal a 5-hit answer.
Vector candidates pass the whole selection, through the keyword search's own filter SQL.

numpy is imported lazily: this module is never on the hook path, and importing ``agentctx.store``
stays standard-library only.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, NamedTuple, Protocol

from agentctx.store import querymodel
from agentctx.store import records as rec
from agentctx.store.db import Store
from agentctx.store.models import RECORD_TYPES, Hit, Record
from agentctx.store.search import Query, search
from agentctx.store.selection import Selection
from agentctx.store.selection import where as selection_where

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


class VectorSide(Protocol):
    """Where a search's candidates by meaning come from. ``note`` says, after a call, why the
    text had no vector (``""`` when it had one)."""

    note: str

    def nearest(self, text: str, selection: Selection, limit: int) -> Sequence[tuple[int, float]]:
        """The records nearest in meaning to ``text``, ``(record pk, cosine)`` best first, at
        most ``limit``: live records of the selection's projects and types, current ones unless
        the selection reaches history; cosines rounded to 6 places, ties to the lower pk."""


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


def hybrid_search(db: Store, query: Query, side: VectorSide | None = None, *,
                  pool: int = POOL, min_cosine: float = 0.0) -> list[Hit]:
    """Search records by keywords fused with vector similarity; the best ``query.limit`` hits.

    ``side`` is asked once for ``pool`` candidates; those under ``min_cosine`` are ignored.
    With no vector side (or no vector candidates) the result is
    :func:`~agentctx.store.search.search`'s; fused answers hold at most ``pool`` hits, pinned
    records first. A hit's ``rank`` is its fused score; its ``relevance`` and ``matched`` terms
    come from the keyword side (0 and none for hits found by similarity alone).
    """
    if query.limit <= 0:
        return []
    found = side.nearest(query.text, query.selection, pool) if side is not None else ()
    candidates = [(int(pk), float(cos)) for pk, cos in found[:pool] if cos >= min_cosine]
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


Encoder = Callable[[str], tuple[Any, str]]
"""A search text's vector (``None`` when it has none) and why not (``""`` when it has one)."""


class StoredVectors:
    """The vector side of a short-lived process (the CLI, the TUI, the web view): the store's
    vectors (:func:`agentctx.store.vectors.nearest`: sqlite-vec or an exact numpy scan), the
    query embedded from the model's query side file (no model load) unless ``encode`` (with
    its ``model``'s name) is given."""

    def __init__(self, db: Store, encode: Encoder | None = None,
                 model: str | None = None) -> None:
        self.db = db
        self.encode = encode
        self.model = model
        self.note = ""

    def nearest(self, text: str, selection: Selection, limit: int) -> list[tuple[int, float]]:
        """See :meth:`VectorSide.nearest`."""
        if self.encode is None:
            query_vec, model, self.note = querymodel.embed_query(self.db, text)
        else:
            (query_vec, self.note), model = self.encode(text), self.model
        if query_vec is None or model is None:
            return []
        try:
            import numpy  # noqa: F401  (the stored vectors are scored with numpy)
        except ImportError:
            self.note = "numpy is not installed"
            return []
        from agentctx.store import vectors  # numpy's module: loaded once a query has a vector

        return vectors.nearest(self.db, query_vec, project_ids=selection.projects(),
                               limit=limit, model=model, types=selection.types,
                               include_superseded=selection.reaches_history())


class IndexedVectors:
    """The vector side of a long-lived process: its in-memory :class:`VectorIndex`, the query
    embedded by ``encode`` (text to vector, or ``None`` with why not)."""

    def __init__(self, index: VectorIndex, encode: Encoder) -> None:
        self.index = index
        self.encode = encode
        self.note = ""

    def nearest(self, text: str, selection: Selection, limit: int) -> list[tuple[int, float]]:
        """See :meth:`VectorSide.nearest`."""
        query_vec, self.note = self.encode(text)
        if query_vec is None:
            return []
        return self.index.nearest(query_vec, project_ids=selection.projects(), limit=limit,
                                  types=selection.types,
                                  include_superseded=selection.reaches_history())


def _admissible(db: Store, query: Query, pks: Sequence[int]) -> dict[int, Record]:
    """The records among ``pks`` that pass the query's selection, by pk."""
    if not pks:
        return {}
    where, params = selection_where(query.selection, "r")
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
    """Every stored embedding of one model as a float32 matrix, for exact search.

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

        ``vector`` is a float32 BLOB or an array of ``dim`` numbers, kept as given (scores are
        the store's: each row times the unit query).
        """
        import numpy as np  # numpy: loaded only when vectors are computed

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

        ``project_ids=None`` searches every project. The matrix product proposes candidates;
        they are scored exactly as :func:`agentctx.store.vectors.nearest` scores (rounded to 6
        places, ties to the lower pk), so both return the same list.
        """
        import numpy as np  # numpy: loaded only when vectors are computed

        from agentctx.store import vectors  # numpy's module: this one stays importable without

        query = vectors.unit(query_vec)
        if query is None or query.shape[0] != self.dim or limit <= 0 or len(self) == 0:
            return []
        if project_ids is None:
            slices = [(0, len(self))]
        else:
            slices = sorted(self.spans[p] for p in dict.fromkeys(project_ids) if p in self.spans)
        wanted_types = np.array([_TYPE_CODES[t] for t in types if t in _TYPE_CODES],
                                dtype=np.int8)
        rows: list[npt.NDArray[np.int64]] = []
        for start, end in slices:
            keep = np.ones(end - start, dtype=np.bool_)
            if not include_superseded:
                keep &= self.current[start:end]
            if types:
                keep &= np.isin(self.types[start:end], wanted_types)
            rows.append(np.flatnonzero(keep) + start)
        chosen = np.concatenate(rows) if rows else np.zeros(0, dtype=np.int64)
        if chosen.shape[0] == 0:
            return []
        wanted = min(chosen.shape[0], limit + vectors.KNN_MARGIN)
        if chosen.shape[0] > wanted:
            rough = self.matrix[chosen] @ query
            threshold = np.partition(-rough, wanted - 1)[wanted - 1]
            chosen = chosen[-rough <= threshold]  # ties at the cut all go on to the exact score
        return vectors.exact_best(self.pks[chosen].tolist(), self.matrix[chosen], query, limit)


_TYPE_CODES = {name: code for code, name in enumerate(RECORD_TYPES)}
