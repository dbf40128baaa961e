"""The time half of :func:`agentctx.store.search.search`: records dated where a prompt points.

A prompt's time phrase (:mod:`agentctx.core.timewords`) becomes a window of ``valid_from``
dates. The search ranks the records dated inside it :data:`TIME_BOOST` times higher and adds the
newest of them as candidates, so "what did we change last week?" finds last week's records even
when no other word of the prompt matches them. Windows relative to the project ("at the start of
the project") are resolved from its first record; "since <event>" only when exactly one current
record's title names the event.

Imported by a search only when its prompt has a time phrase.
"""

from __future__ import annotations

from datetime import datetime

from agentctx.core.timewords import TimeWindow, read, resolve_start
from agentctx.store import records as rec
from agentctx.store.db import Store
from agentctx.store.models import Record
from agentctx.store.textproc import fts_phrase, query_terms

# Rank multiplier of a record dated inside the prompt's window.
TIME_BOOST = 2.0
# Newest records of the window added as candidates (beyond those the words found).
TIME_RECORDS = 12
# Relevance of a dated record when the prompt has no other search term ("what changed
# yesterday?"): the time is all the prompt asks by.
TIME_RELEVANCE = 0.5


def window(db: Store, text: str, project_ids: list[str], now: datetime) -> TimeWindow | None:
    """The concrete window ``text`` points at in the given projects (``None``: no time, or one
    that cannot be resolved)."""
    found = read(text, now)
    if found is None:
        return None
    if found.project_days:
        if not project_ids:
            return None
        marks = ",".join("?" * len(project_ids))
        first = db.scalar(f"SELECT min(valid_from) FROM records WHERE project_id IN ({marks})",
                          project_ids)
        return resolve_start(found, str(first) if first else None)
    if found.since_event:
        return _since_event(db, found, project_ids, now)
    return found


def _since_event(db: Store, found: TimeWindow, project_ids: list[str],
                 now: datetime) -> TimeWindow | None:
    terms = query_terms(found.since_event)
    if not terms:
        return None
    match = "title : (" + " AND ".join(fts_phrase(t) for t in terms) + ")"
    where = "r.superseded_at IS NULL"
    params: list[object] = [match]
    if project_ids:
        where += f" AND r.project_id IN ({','.join('?' * len(project_ids))})"
        params.extend(project_ids)
    rows = db.rows(f"SELECT r.valid_from FROM records_fts JOIN records r "
                   f"ON r.pk = records_fts.rowid WHERE records_fts MATCH ? AND {where} LIMIT 2",
                   params)
    if len(rows) != 1:
        return None  # no record, or several: the event is not clear enough to date
    from agentctx.core.timewords import _iso

    return found._replace(start=str(rows[0][0]), end=_iso(now))


def dated(db: Store, where: str, params: list[object], span: TimeWindow,
          limit: int = TIME_RECORDS) -> list[Record]:
    """The newest records passing ``where`` (conditions on ``r``) dated inside ``span``."""
    rows = db.rows(f"SELECT {rec.COLUMNS} FROM records r WHERE {where} AND r.valid_from >= ? "
                   f"AND r.valid_from < ? ORDER BY r.valid_from DESC LIMIT {int(limit)}",
                   [*params, span.start, span.end])
    return [rec.from_row(row) for row in rows]
