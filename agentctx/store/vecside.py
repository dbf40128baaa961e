"""The hook's vector side: a prompt's nearest records by meaning, with the standard library.

One narrow interface, :func:`nearest` ``(db, vector, project_ids, limit) -> [(record pk,
cosine)]``, best first, over current records only; :class:`LeanVectors` is the same side as a
search's vector side (:class:`agentctx.store.hybrid.VectorSide`: a text in, the prompt embedded
by the query side file), which the hook's judgement asks and the one search entry
(:mod:`agentctx.ops.find`) takes like any other. Its backend is chosen once per process
(:func:`backend_name`):

* ``vec0`` — where this interpreter's ``sqlite3`` can load sqlite-vec, the ``records_vec`` index
  proposes candidates (a KNN inside SQLite) when it is in step with the stored vectors;
* ``stdlib`` — everywhere else (pyenv and macOS system Pythons), and whenever the vec0 index is
  missing or marked dirty: an inverted-file index kept in :data:`LISTS`. Consolidation (which has
  numpy) clusters each project's vectors into lists of about :data:`LIST_SIZE` records around
  unit centroids and stores, per list, its centroid and each member's pk and *sign code*: for
  each of :data:`ROTATIONS` seeded rotations (random signs, then a Walsh-Hadamard transform) of
  the vector centred on the store's mean, one bit per component that is positive, all in one
  integer. A query scores the centroids, reads the best lists until :data:`SCAN` members,
  compares codes with ``int.bit_count()`` and re-scores the best :data:`RESCORE` exactly from
  the stored float32 vectors. A scope of at most :data:`EXACT` vectors is scored exactly.

Both backends re-score their candidates the same way (the exact cosine of the stored vectors,
rounded to 6 places, ties to the lower pk) and check them against ``records`` (current, in the
scope), so a stale index entry never comes back. No numpy, no model: this module is on the hook
path. Records written after the last consolidation get a vector at write time (:func:`add`):
the side file's embedding of their text, appended to their nearest list (and to ``records_vec``
when this connection has vec0), so a record is findable by meaning from the moment it is stored.

The build lives in :mod:`agentctx.store.vecside_build` (numpy, consolidation only).
"""

from __future__ import annotations

import json
import math
import operator
import struct
from collections import Counter
from collections.abc import Callable, Sequence

from agentctx.store.db import Store
from agentctx.store.selection import Selection

FORMAT = 3
META_KEY = "vectors_lean"  # JSON: format, model, dim, seed, built (the change counter)
LISTS = "records_vec_lists"  # (project_id, list_no, centroid f32 BLOB, members BLOB)
MEAN_LIST = -1  # the row of LISTS whose centroid is the store's mean vector
# Each project's directory row: every list's centroid in one BLOB (list 0 first), and each
# list's member count (uint32) as its members; one read and one unpack per project and prompt.
DIRECTORY = -2
LIST_SIZE = 256  # members per list the build aims at
# At most this many lists per project (a prompt scores every centroid of its scope, so past
# ~50K records lists grow instead: 100K records make 160 lists of ~570).
MAX_LISTS = 160
SCAN = 2000  # sign codes compared per query (lists are read best first until this many)
RESCORE = 64  # candidates re-scored exactly from the stored vectors
ROTATIONS = 4  # independent rotations: a code has ROTATIONS bits per (padded) dimension
EXACT = 768  # a scope of at most this many vectors is scored exactly, every one
DECIMALS = 6
_ZERO = 1e-6
_MASK = (1 << 64) - 1


def _dot_python(a: Sequence[float], b: Sequence[float]) -> float:
    total: float = sum(map(operator.mul, a, b))  # map(operator.mul) runs in C
    return total


# math.sumprod (Python 3.12+) is a dot product in C, several times faster.
_dot: Callable[[Sequence[float], Sequence[float]], float] = getattr(math, "sumprod", _dot_python)

_BACKEND: list[str] = []  # chosen once per process


def backend_name() -> str:
    """``vec0`` when this process can load sqlite-vec (and ``vector_backend`` allows it), else
    ``stdlib``; decided once per process."""
    if not _BACKEND:
        import sqlite3

        chosen = "stdlib"
        # Checked before importing the vectors module: on an interpreter that cannot load
        # extensions (pyenv, macOS) the hook never pays for its imports (logging, typing).
        if hasattr(sqlite3.Connection, "enable_load_extension"):
            from agentctx.store import vectors

            try:
                import sqlite_vec  # noqa: F401  (only whether it is installed)
            except ImportError:
                pass
            else:
                if vectors._configured_backend() != "numpy":
                    chosen = "vec0"
        _BACKEND.append(chosen)
    return _BACKEND[0]


class Built:
    """What the store's lean index holds: its model, dimension and rotation seed."""

    def __init__(self, model: str, dim: int, seed: int) -> None:
        self.model, self.dim, self.seed = model, dim, seed
        self._signs: list[tuple[float, ...]] | None = None

    def signs(self) -> list[tuple[float, ...]]:
        """The seeded ±1 vector of each rotation (of the padded dimension)."""
        if self._signs is None:
            size = padded(self.dim)
            self._signs = [rotation_signs(self.seed + j, size) for j in range(ROTATIONS)]
        return self._signs

    @property
    def code_bytes(self) -> int:
        """Bytes of one sign code."""
        return padded(self.dim) * ROTATIONS // 8


def rotation_signs(seed: int, size: int) -> tuple[float, ...]:
    """``size`` pseudo-random ±1.0 from ``seed`` (splitmix64: the same on every platform, and
    cheaper to import than :mod:`random`)."""
    out: list[float] = []
    state = seed & _MASK
    while len(out) < size:
        state = (state + 0x9E3779B97F4A7C15) & _MASK
        z = state
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & _MASK
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _MASK
        z ^= z >> 31
        out.extend(-1.0 if (z >> i) & 1 else 1.0 for i in range(64))
    return tuple(out[:size])


def built(db: Store) -> Built | None:
    """The lean index's description, ``None`` when consolidation has not built one."""
    raw = db.meta_get(META_KEY)
    if not raw:
        return None
    try:
        entry = json.loads(raw) if isinstance(raw, str) else raw
        if int(entry["format"]) != FORMAT:
            return None
        return Built(str(entry["model"]), int(entry["dim"]), int(entry["seed"]))
    except (ValueError, KeyError, TypeError):
        return None


def padded(dim: int) -> int:
    """The power of two the rotations work in."""
    return 1 << max(0, (dim - 1).bit_length())


def _mix(values: list[float]) -> list[float]:
    """A Walsh-Hadamard transform in constant geometry (each of log2(n) rounds maps the pairs
    ``(v[2k], v[2k+1])`` to ``v[k] = sum`` and ``v[k + n/2] = difference``): unnormalised, and
    only the signs of its output are kept. The build computes the same rounds with numpy."""
    size = len(values)
    rounds = size.bit_length() - 1
    for _ in range(rounds):
        even, odd = values[0::2], values[1::2]
        values = list(map(operator.add, even, odd)) + list(map(operator.sub, even, odd))
    return values


def sign_code(vector: Sequence[float], mean: Sequence[float],
              signs: Sequence[Sequence[float]]) -> int:
    """The sign code of ``vector``: for each rotation j (``vector - mean`` times its seeded
    signs, then :func:`_mix`), bit ``j * n + i`` is set when component i is positive."""
    centred = list(map(operator.sub, vector, mean))
    size = len(signs[0])
    centred += [0.0] * (size - len(centred))
    code = 0
    for j, flips in enumerate(signs):
        rotated = _mix(list(map(operator.mul, centred, flips)))
        code |= int("".join("1" if value > 0 else "0" for value in reversed(rotated)), 2) \
            << (j * size)
    return code


def unit(vector: Sequence[float]) -> tuple[float, ...] | None:
    """``vector`` at length 1 (``None`` for a zero vector)."""
    norm = math.sqrt(sum(map(operator.mul, vector, vector)))
    if norm < _ZERO:
        return None
    return tuple(v / norm for v in vector)


def _floats(blob: bytes) -> tuple[float, ...]:
    return struct.unpack(f"<{len(blob) // 4}f", blob)


def _scope_sql(projects: Sequence[object]) -> str:
    return ",".join("?" * len(projects))


# ------------------------------------------------------------------------------------- reads


def ready(db: Store) -> tuple[bool, str]:
    """Whether the hook can find records by meaning on this store, and why not."""
    from agentctx.store import querymodel

    entry = querymodel.registered(db)
    if entry is None:
        return False, "no query side file yet (the first consolidation with a model writes it)"
    info = built(db)
    if info is None or info.model != entry[0]:
        return False, "the vector lists are not built yet (run 'agentctx consolidate')"
    return True, backend_name()


class LeanVectors:
    """The hook's vector side for a search (:class:`agentctx.store.hybrid.VectorSide`): the text
    embedded as the hook embeds a prompt (its query terms, by the store's query side file), its
    nearest current records by :func:`nearest`. After a call, ``vector`` and ``model`` hold the
    text's vector and the side file's model (``None`` without one) and ``note`` why not."""

    def __init__(self, db: Store) -> None:
        self.db = db
        self.note = ""
        self.vector: tuple[float, ...] | None = None
        self.model: str | None = None

    def nearest(self, text: str, selection: Selection, limit: int) -> list[tuple[int, float]]:
        """The current records of the selection's projects nearest in meaning to ``text``
        (every project with vector lists when the selection names none)."""
        from agentctx.store import querymodel  # late: only a search with a vector side asks

        self.vector, self.model, self.note = querymodel.embed_query(self.db, text)
        if self.vector is None:
            return []
        scope = selection.projects()
        if scope is None:
            scope = [str(row[0]) for row in self.db.rows(
                f"SELECT DISTINCT project_id FROM {LISTS} WHERE list_no = ?", (DIRECTORY,))]
        return nearest(self.db, self.vector, project_ids=scope, limit=limit)


def nearest(db: Store, vector: Sequence[float], *, project_ids: Sequence[str],
            limit: int) -> list[tuple[int, float]]:
    """The current records of ``project_ids`` nearest to ``vector``: ``(pk, cosine)``, best
    first, at most ``limit`` (``[]`` when the store has no lean index for the vector)."""
    info = built(db)
    query = unit(vector)
    projects = list(dict.fromkeys(project_ids))
    if info is None or query is None or limit <= 0 or not projects or len(query) != info.dim:
        return []
    if backend_name() == "vec0":
        found = _nearest_vec0(db, info, query, projects, limit)
        if found is not None:
            return found
    return _nearest_stdlib(db, info, query, projects, limit)


def _nearest_stdlib(db: Store, info: Built, query: tuple[float, ...], projects: list[str],
                    limit: int) -> list[tuple[int, float]]:
    mean_blob = db.scalar(f"SELECT centroid FROM {LISTS} WHERE project_id = '' AND "
                          "list_no = ?", (MEAN_LIST,))
    rows = db.rows(f"SELECT project_id, centroid, members FROM {LISTS} WHERE project_id IN "
                   f"({_scope_sql(projects)}) AND list_no = ?", [*projects, DIRECTORY])
    if not mean_blob or not rows:
        return []
    layout = struct.Struct(f"<q{info.code_bytes}s")
    directory = [(project_id, struct.unpack(f"<{len(counts) // 4}I", counts), centroids)
                 for project_id, centroids, counts in rows]
    if sum(sum(counts) for _p, counts, _c in directory) <= EXACT:
        return exact(db, info.model, query, projects, limit)
    shape = struct.Struct(f"<{info.dim}f")
    scored = sorted((-_dot(query, centroid), project_id, number, counts[number])
                    for project_id, counts, centroids in directory
                    for number, centroid in enumerate(shape.iter_unpack(centroids))
                    if counts[number])
    wanted: dict[str, list[int]] = {}
    total = 0
    for _score, project_id, list_no, count in scored:
        wanted.setdefault(project_id, []).append(list_no)
        total += count
        if total >= SCAN:
            break
    members: list[tuple[int, bytes]] = []
    for project_id, numbers in wanted.items():
        for (blob,) in db.rows(f"SELECT members FROM {LISTS} WHERE project_id = ? AND list_no "
                               f"IN ({_scope_sql(numbers)})", [project_id, *numbers]):
            members.extend(layout.iter_unpack(blob))
    code = sign_code(query, _floats(mean_blob), info.signs())
    return rescore(db, info.model, query, closest(members, code, RESCORE), projects, limit)


def closest(members: Sequence[tuple[int, bytes]], code: int, count: int) -> list[int]:
    """The pks of the ``count`` members whose sign codes differ from ``code`` in the fewest bits
    (all those tied at the cut come along), each pk once."""
    from_bytes = int.from_bytes
    distance = [(from_bytes(c, "little") ^ code).bit_count() for _pk, c in members]
    if len(distance) > count:
        histogram = Counter(distance)
        kept = cut = 0
        for cut in sorted(histogram):
            kept += histogram[cut]
            if kept >= count:
                break
        chosen = [pk for (pk, _c), d in zip(members, distance, strict=True) if d <= cut]
    else:
        chosen = [pk for pk, _c in members]
    return list(dict.fromkeys(chosen))


def exact(db: Store, model: str, query: Sequence[float], projects: Sequence[str],
          limit: int) -> list[tuple[int, float]]:
    """Every current record of ``projects`` scored exactly (a small scope)."""
    return _best(db.rows(
        "SELECT e.record_pk, e.vector FROM records r JOIN embeddings e ON e.record_pk = r.pk "
        f"WHERE r.project_id IN ({_scope_sql(projects)}) AND r.superseded_at IS NULL AND "
        "e.model = ?", [*projects, model]), query, limit)


def _best(rows: Sequence[Sequence[object]], query: Sequence[float],
          limit: int) -> list[tuple[int, float]]:
    """``(pk, cosine)`` of the best ``limit`` of ``(pk, float32 unit vector)`` rows.

    Stored vectors are unit length (the model's rows, and :meth:`QueryModel.embed_text`'s), so
    the dot product is the cosine; a zero vector scores 0 and is left out.
    """
    size = len(query) * 4
    unpack = struct.Struct(f"<{len(query)}f").unpack
    found = []
    for pk, blob in rows:
        if not isinstance(blob, bytes) or len(blob) != size:
            continue
        score = round(_dot(query, unpack(blob)), DECIMALS)
        if score != 0.0:
            found.append((-score, int(pk)))  # type: ignore[call-overload]
    found.sort()
    return [(pk, -score) for score, pk in found[:limit]]


def rescore(db: Store, model: str, query: Sequence[float], pks: Sequence[int],
            projects: Sequence[str], limit: int) -> list[tuple[int, float]]:
    """The exact cosine of each of ``pks`` that is current and in ``projects``, best first."""
    if not pks:
        return []
    rows: list[Sequence[object]] = []
    for start in range(0, len(pks), 500):
        chunk = list(pks[start:start + 500])
        rows += db.rows(
            # NOT INDEXED: look the few pks up by rowid; left alone, the planner walks the
            # project's whole index (records_current), 10x slower at 10K records.
            "SELECT e.record_pk, e.vector FROM embeddings e JOIN records r NOT INDEXED ON "
            f"r.pk = e.record_pk WHERE e.record_pk IN ({_scope_sql(chunk)}) AND e.model = ? AND "
            f"r.superseded_at IS NULL AND r.project_id IN ({_scope_sql(projects)})",
            [*chunk, model, *projects])
    return _best(rows, query, limit)


def _nearest_vec0(db: Store, info: Built, query: tuple[float, ...], projects: list[str],
                  limit: int) -> list[tuple[int, float]] | None:
    """Candidates from ``records_vec`` re-scored exactly; ``None`` when the index cannot answer
    (vec0 not loaded, the index missing, dirty or of another model)."""
    import sqlite3

    from agentctx.store import vectors

    if vectors._load_vec0(db) is not None or not vectors._index_exists(db):
        return None
    if db.meta_get(vectors.META_INDEX) != f"{info.model}|{info.dim}" or \
            db.meta_get(vectors.META_DIRTY):
        return None
    k = min(vectors.KNN_MAX_K, max(RESCORE, limit * 4))
    try:
        rows = db.rows(f"SELECT record_pk FROM {vectors.INDEX_TABLE} WHERE embedding MATCH ? "
                       f"AND k = ? AND current = 1 AND project_id IN ({_scope_sql(projects)}) "
                       "ORDER BY distance", [struct.pack(f"<{info.dim}f", *query), k, *projects])
    except sqlite3.Error:
        return None
    found = rescore(db, info.model, query, [row[0] for row in rows], projects, limit)
    if len(found) < limit and len(rows) >= k:
        return None  # stale entries crowded the KNN: the lists answer instead
    return found


# ------------------------------------------------------------------------------------ writes


def add(db: Store, pk: int) -> bool:
    """Give record ``pk`` a vector now, from the query side file (the standard-library
    embedding of its text); returns whether it got one.

    Called by the store's writers inside their transaction. Never raises: no side file, no
    lean index, an unknown vocabulary or any error means no vector (consolidation embeds the
    record later, as it always did). The record stays ``pending_embedding`` so consolidation
    refreshes the vector with the model itself.
    """
    try:
        return _add(db, pk)
    except Exception as exc:  # a write must never fail because of its vector
        import logging

        logging.getLogger("agentctx.vectors").warning("no write-time vector for %s: %s", pk, exc)
        return False


def _add(db: Store, pk: int) -> bool:
    from agentctx.store import querymodel

    info = built(db)
    if info is None:
        return False
    row = db.rows("SELECT project_id, type, title, body, superseded_at IS NULL FROM records "
                  "WHERE pk = ?", (pk,))
    if not row or not row[0][4]:
        return False
    project_id, type_, title, body, _current = row[0]
    side = querymodel.open_registered(db)
    if side is None or side.model != info.model:
        if side is not None:
            side.close()
        return False
    try:
        vector = side.embed_text(record_text(type_, title, body))
    finally:
        side.close()
    if vector is None or len(vector) != info.dim:
        return False
    from agentctx.core.ids import now_iso

    blob = struct.pack(f"<{info.dim}f", *vector)
    db.execute("INSERT INTO embeddings (record_pk, model, dim, vector, embedded_at) "
               "VALUES (?, ?, ?, ?, ?) ON CONFLICT (record_pk) DO UPDATE SET model = "
               "excluded.model, dim = excluded.dim, vector = excluded.vector, "
               "embedded_at = excluded.embedded_at", (pk, info.model, info.dim, blob, now_iso()))
    _list_add(db, info, project_id, pk, vector)
    _vec0_add(db, info, pk, project_id, blob)
    return True


def record_text(type_: str, title: str, body: str) -> str:
    """What is embedded for a record (the embedding model's ``embedding_text``, format 2)."""
    head = f"[{type_}] {title}".strip()
    body = body.strip()
    return f"{head}\n{body}" if body else head


def _list_add(db: Store, info: Built, project_id: str, pk: int,
              vector: Sequence[float]) -> None:
    """Append ``pk``'s code to the nearest list of its project (a first list when it has
    none), keeping the directory's counts."""
    mean = db.scalar(f"SELECT centroid FROM {LISTS} WHERE project_id = '' AND list_no = ?",
                     (MEAN_LIST,))
    if not mean:
        return
    code = sign_code(vector, _floats(mean), info.signs()).to_bytes(info.code_bytes, "little")
    entry = struct.pack("<q", pk) + code
    found = db.rows(f"SELECT centroid, members FROM {LISTS} WHERE project_id = ? AND "
                    "list_no = ?", (project_id, DIRECTORY))
    if not found:
        db.execute(f"INSERT INTO {LISTS} (project_id, list_no, centroid, members) VALUES "
                   "(?, ?, ?, ?), (?, 0, ?, ?)",
                   (project_id, DIRECTORY, struct.pack(f"<{info.dim}f", *vector),
                    struct.pack("<I", 1), project_id, struct.pack(f"<{info.dim}f", *vector),
                    entry))
        return
    centroids, packed = found[0]
    counts = list(struct.unpack(f"<{len(packed) // 4}I", packed))
    shape = struct.Struct(f"<{info.dim}f")
    best = max(range(len(counts)),
               key=lambda n: _dot(vector, shape.unpack_from(centroids, n * shape.size)))
    counts[best] += 1
    db.execute(f"UPDATE {LISTS} SET members = ? WHERE project_id = ? AND list_no = ?",
               (struct.pack(f"<{len(counts)}I", *counts), project_id, DIRECTORY))
    # || makes text of two blobs: cast back, or every later read of the list fails to decode
    if db.execute(f"UPDATE {LISTS} SET members = CAST(members || ? AS BLOB) WHERE "
                  "project_id = ? AND list_no = ?", (entry, project_id, best)).rowcount == 0:
        db.execute(f"INSERT INTO {LISTS} (project_id, list_no, centroid, members) VALUES "
                   "(?, ?, ?, ?)", (project_id, best,
                                    centroids[best * shape.size:(best + 1) * shape.size], entry))


def _vec0_add(db: Store, info: Built, pk: int, project_id: str, blob: bytes) -> None:
    if db.scalar("SELECT 1 FROM sqlite_master WHERE name = 'records_vec'") is None:
        return
    from agentctx.store import vectors

    if db.meta_get(vectors.META_INDEX) != f"{info.model}|{info.dim}" or \
            vectors._load_vec0(db) is not None:
        db.meta_set(vectors.META_DIRTY, 1)
        return
    db.execute(f"DELETE FROM {vectors.INDEX_TABLE} WHERE record_pk = ?", (pk,))
    db.execute(f"INSERT INTO {vectors.INDEX_TABLE} (record_pk, embedding, project_id, current) "
               "VALUES (?, ?, ?, 1)", (pk, blob, project_id))
