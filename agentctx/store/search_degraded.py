"""The degraded backends of :func:`agentctx.store.search.search`: a LIKE scan (no FTS5, or the
``search`` knob set to ``like``) and pinned records only (``pinned``, or when the scan fails).

Both cover the same :class:`~agentctx.store.selection.Selection` as the full-text search and
rank the same way; imported only when a search needs one of them.
"""

from __future__ import annotations

from agentctx.core.ids import now as clock_now
from agentctx.store.db import Store
from agentctx.store.models import Hit
from agentctx.store.search import CANDIDATE_POOL, Query, _filters, _order, _rank, _record, _source
from agentctx.store.textproc import query_terms


def search_like(db: Store, query: Query, limit: int) -> list[Hit]:
    """Records whose title or body contains any query term as a substring, newest first among
    the candidates, then ranked like full-text hits."""
    terms = query_terms(query.text)
    if not terms:
        return []
    where, params = _filters(query)
    columns, source = _source(query)
    likes = []
    like_params: list[object] = []
    for term in terms:
        likes.append("(r.title LIKE ? OR r.body LIKE ?)")
        like_params.extend([f"%{term}%", f"%{term}%"])
    rows = db.rows(f"SELECT {columns} FROM {source} WHERE {where} AND "
                   f"({' OR '.join(likes)}) ORDER BY r.valid_from DESC LIMIT {CANDIDATE_POOL}",
                   [*params, *like_params])
    now = clock_now()
    hits = []
    for row in rows:
        record = _record(row, query)
        title, body = record.title.lower(), record.body.lower()
        found = tuple(t for t in terms if t in title or t in body)
        base = sum(2.0 if t in title else 1.0 for t in found)
        hits.append(Hit(record, _rank(record, base, now), round(len(found) / len(terms), 4),
                        found))
    return _order(hits, limit)


def search_pinned(db: Store, query: Query, limit: int) -> list[Hit]:
    """The selection's pinned records, newest first: the last rung of the ladder."""
    where, params = _filters(query)
    columns, source = _source(query)
    rows = db.rows(f"SELECT {columns} FROM {source} WHERE {where} AND r.pinned = 1 "
                   f"ORDER BY r.valid_from DESC LIMIT ?", [*params, limit])
    return [Hit(_record(row, query), 1.0, 1.0, ()) for row in rows]
