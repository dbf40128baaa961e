"""Build the hook's vector lists (:mod:`agentctx.store.vecside`) from stored vectors, with numpy.

Consolidation calls :func:`build` after embedding. Per project, the current records' vectors
are clustered (spherical k-means, a fixed seed, trained on a sample) into lists of about
:data:`~agentctx.store.vecside.LIST_SIZE`; each list row keeps its unit centroid and its members'
pks and sign codes. The store-wide mean (the codes are centred on it) is the row
:data:`~agentctx.store.vecside.MEAN_LIST`; each project's centroids and list sizes are its
:data:`~agentctx.store.vecside.DIRECTORY` row. Nothing is rewritten while the stored vectors are
unchanged (count, newest vector, sum of pks). numpy is imported inside functions: the store
package must stay importable on the hook path.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from agentctx.store import vecside
from agentctx.store.db import Store

if TYPE_CHECKING:  # pragma: no cover - typing only
    import numpy as np
    import numpy.typing as npt

SEED = 20270101
ITERATIONS = 8
TRAIN_PER_LIST = 40  # training sample: this many vectors per list at most


def _create(db: Store) -> None:
    db.execute(f"CREATE TABLE IF NOT EXISTS {vecside.LISTS} (project_id TEXT NOT NULL, "
               "list_no INTEGER NOT NULL, centroid BLOB NOT NULL, members BLOB NOT NULL, "
               "PRIMARY KEY (project_id, list_no)) WITHOUT ROWID")


def signature(db: Store, model: str) -> list[Any]:
    """What tells a build that the current records' vectors changed since it ran."""
    row = db.rows("SELECT count(*), max(e.embedded_at), total(e.record_pk) FROM embeddings e "
                  "JOIN records r ON r.pk = e.record_pk WHERE e.model = ? AND "
                  "r.superseded_at IS NULL", (model,))[0]
    return [int(row[0]), row[1], float(row[2])]


def build(db: Store, model: str, *, force: bool = False) -> str:
    """Rebuild the lists for ``model`` when the stored vectors changed; returns what it did."""
    import numpy as np

    mark = signature(db, model)
    raw = db.meta_get(vecside.META_KEY)
    if not force and raw:
        try:
            entry = json.loads(raw)
            if entry.get("model") == model and entry.get("signature") == mark and \
                    int(entry.get("format", 0)) == vecside.FORMAT:
                return "current"
        except ValueError:
            pass
    rows = db.rows("SELECT e.record_pk, r.project_id, e.dim, e.vector FROM embeddings e JOIN "
                   "records r ON r.pk = e.record_pk WHERE e.model = ? AND r.superseded_at IS "
                   "NULL ORDER BY r.project_id, e.record_pk", (model,))
    dims = {int(row[2]) for row in rows}
    if len(dims) != 1:
        with db.write():
            _create(db)
            db.execute(f"DELETE FROM {vecside.LISTS}")
            db.execute("DELETE FROM meta WHERE key = ?", (vecside.META_KEY,))
        return "no vectors" if not dims else "vectors of several dimensions: not built"
    dim = dims.pop()
    pks = np.array([row[0] for row in rows], dtype=np.int64)
    projects = [str(row[1]) for row in rows]
    matrix = np.frombuffer(b"".join(row[3] for row in rows), dtype=np.float32).reshape(-1, dim)
    norms = np.linalg.norm(matrix.astype(np.float64), axis=1)
    keep = norms >= 1e-6
    unit = (matrix[keep] / norms[keep, None]).astype(np.float32)
    pks, projects = pks[keep], [p for p, k in zip(projects, keep, strict=True) if k]
    mean = unit.mean(axis=0) if len(unit) else np.zeros(dim, dtype=np.float32)
    info = vecside.Built(model, dim, SEED)
    codes = sign_codes(unit, mean, info)
    out: list[tuple[str, int, bytes, bytes]] = [("", vecside.MEAN_LIST,
                                                 mean.astype("<f4").tobytes(), b"")]
    start = 0
    while start < len(projects):
        end = start
        while end < len(projects) and projects[end] == projects[start]:
            end += 1
        out += _project_lists(projects[start], pks[start:end], unit[start:end],
                              codes[start:end])
        start = end
    with db.write():
        _create(db)
        db.execute(f"DELETE FROM {vecside.LISTS}")
        db.conn.executemany(f"INSERT INTO {vecside.LISTS} (project_id, list_no, centroid, "
                            "members) VALUES (?, ?, ?, ?)", out)
        db.meta_set(vecside.META_KEY, json.dumps({"format": vecside.FORMAT, "model": model,
                                                  "dim": dim, "seed": SEED,
                                                  "signature": mark}))
    lists = sum(1 for row in out if row[1] >= 0)
    return f"{lists} lists over {len(pks)} records"


def sign_codes(unit: npt.NDArray[np.float32], mean: npt.NDArray[np.float32],
               info: vecside.Built) -> npt.NDArray[np.uint8]:
    """Each row's sign code as little-endian bytes (what :func:`vecside.sign_code` computes)."""
    import numpy as np

    size = vecside.padded(info.dim)
    centred = np.zeros((len(unit), size), dtype=np.float64)
    centred[:, :info.dim] = unit.astype(np.float64) - mean.astype(np.float64)
    bits = [_mix(centred * np.array(flips)) > 0 for flips in info.signs()]
    packed: npt.NDArray[np.uint8] = np.packbits(np.concatenate(bits, axis=1), axis=1,
                                                bitorder="little")
    return packed


def _mix(values: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
    """:func:`agentctx.store.vecside._mix` on every row at once."""
    import numpy as np

    for _ in range(values.shape[1].bit_length() - 1):
        even, odd = values[:, 0::2], values[:, 1::2]
        values = np.concatenate([even + odd, even - odd], axis=1)
    return values


def _project_lists(project_id: str, pks: npt.NDArray[np.int64], unit: npt.NDArray[np.float32],
                   codes: npt.NDArray[np.uint8]) -> list[tuple[str, int, bytes, bytes]]:
    import numpy as np

    count = len(pks)
    lists = max(1, min(vecside.MAX_LISTS, round(count / vecside.LIST_SIZE)))
    centroids = _kmeans(unit, lists)
    assigned = np.argmax(unit @ centroids.T, axis=1) if lists > 1 else np.zeros(count, int)
    sizes = np.bincount(assigned, minlength=lists).astype("<u4")
    out = [(project_id, vecside.DIRECTORY, centroids.astype("<f4").tobytes(), sizes.tobytes())]
    for number in range(lists):
        members = np.flatnonzero(assigned == number)
        if not len(members):
            continue
        entries = b"".join(int(pks[i]).to_bytes(8, "little", signed=True) + codes[i].tobytes()
                           for i in members)
        out.append((project_id, number, centroids[number].astype("<f4").tobytes(), entries))
    return out


def _kmeans(unit: npt.NDArray[np.float32], lists: int) -> npt.NDArray[np.float32]:
    """Spherical k-means with a fixed seed; unit centroids."""
    import numpy as np

    rng = np.random.default_rng(SEED)
    if lists <= 1:
        centre = unit.mean(axis=0)
        norm = float(np.linalg.norm(centre)) or 1.0
        result: npt.NDArray[np.float32] = (centre / norm)[None, :].astype(np.float32)
        return result
    sample = unit
    if len(unit) > lists * TRAIN_PER_LIST:
        sample = unit[rng.choice(len(unit), lists * TRAIN_PER_LIST, replace=False)]
    centroids = sample[rng.choice(len(sample), lists, replace=False)].copy()
    for _ in range(ITERATIONS):
        assigned = np.argmax(sample @ centroids.T, axis=1)
        sums = np.zeros_like(centroids)
        np.add.at(sums, assigned, sample)
        norms = np.linalg.norm(sums, axis=1)
        empty = norms < 1e-9
        sums[empty] = centroids[empty]
        norms[empty] = np.linalg.norm(centroids[empty], axis=1)
        centroids = (sums / norms[:, None]).astype(np.float32)
    return centroids
