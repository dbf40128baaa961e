"""The one search function: hooks, the MCP server, the CLI and the TUI all call :func:`search`.

FTS5 BM25 (porter, unicode61) over title and body with OR semantics over the query's terms (stop
words dropped, every term quoted so no input is read as FTS syntax), a fixed candidate pool (so the
top 5 of a 10-hit search equal a 5-hit search), then a rerank: BM25 × type weight × recency ×
confidence, pinned first. Each hit carries a 0–1 relevance — the IDF-weighted share of the query's
terms it matches — which the per-prompt hook thresholds so an unrelated prompt injects nothing.

Degradation ladder: FTS5 → a LIKE scan (FTS5 missing, or ``search = like``) → pinned records only
(``search = pinned``, or when the scan itself fails).
"""

from __future__ import annotations

import math
import sqlite3
from datetime import UTC, datetime

from agentctx.lean import NamedTuple
from agentctx.store import records as rec
from agentctx.store.db import Store
from agentctx.store.ids import normalize_time
from agentctx.store.models import GLOBAL_PROJECT, Hit, Record
from agentctx.store.scoring import (
    BM25_WEIGHTS,
    CONFIDENCE_WEIGHT,
    SUPERSEDED_WEIGHT,
    TYPE_WEIGHT,
    age_days,
    recency,
)
from agentctx.store.textproc import fts_phrase, query_terms

CANDIDATE_POOL = 200
MAX_LIMIT = 100
# In a large store, a term found in more than this share of records is matched but not used to
# select candidates (it would pull in half the store for almost no BM25 weight).
COMMON_TERM_SHARE = 0.5
COMMON_TERM_MIN_RECORDS = 2000


class Query(NamedTuple):
    """What to search for and where. ``project_id=None`` searches every project."""

    text: str
    project_id: str | None = None
    include_global: bool = True
    types: tuple[str, ...] = ()
    scope: str | None = None
    file: str | None = None
    include_superseded: bool = False
    as_of: str | None = None
    limit: int = 10
    backend: str | None = None  # fts | like | pinned; None reads the ``search`` config knob
    # The caller keeps only hits at least this relevant (the per-prompt hook's threshold): a
    # full-text search whose best possible relevance is lower returns [] before its candidate
    # query. Everything else is unchanged; callers still filter.
    min_relevance: float = 0.0


def search(db: Store, query: Query) -> list[Hit]:
    """Search records; the best hits first, at most ``query.limit`` of them."""
    limit = max(0, min(query.limit, MAX_LIMIT))
    if limit == 0:
        return []
    backend = query.backend or _configured_backend()
    if backend == "fts" and not db.has_fts():
        backend = "like"
    try:
        if backend == "fts":
            return _search_fts(db, query, limit)
        if backend == "like":
            return _search_like(db, query, limit)
    except sqlite3.OperationalError:
        if backend == "fts":
            try:
                return _search_like(db, query, limit)
            except sqlite3.OperationalError:
                pass
    return _pinned_only(db, query, limit)


def _configured_backend() -> str:
    from agentctx.config import Config, ConfigError

    try:
        return Config.load().get_str("search")
    except ConfigError:
        return "fts"


def _projects(query: Query) -> list[str]:
    if query.project_id is None:
        return []
    if query.include_global and query.project_id != GLOBAL_PROJECT:
        return [query.project_id, GLOBAL_PROJECT]
    return [query.project_id]


def _filters(query: Query) -> tuple[str, list[object]]:
    """SQL conditions on ``records r`` for everything but the text."""
    where: list[str] = []
    params: list[object] = []
    projects = _projects(query)
    if projects:
        where.append(f"r.project_id IN ({','.join('?' * len(projects))})")
        params.extend(projects)
    if query.types:
        where.append(f"r.type IN ({','.join('?' * len(query.types))})")
        params.extend(query.types)
    if query.scope:
        where.append("r.scope = ?")
        params.append(query.scope)
    if query.as_of:
        moment = normalize_time(query.as_of)
        where.append("r.valid_from <= ? AND (r.superseded_at IS NULL OR r.superseded_at > ?)")
        params.extend([moment, moment])
    elif not query.include_superseded:
        where.append("r.superseded_at IS NULL")
    if query.file:
        name = query.file.strip().lstrip("./")
        where.append("r.id IN (SELECT re.record_id FROM record_entities re "
                     "JOIN nodes n ON n.id = re.entity_id "
                     "WHERE n.name = ? OR n.name LIKE ? ESCAPE '\\' OR ? LIKE '%' || n.name)")
        escaped = name.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
        params.extend([name, f"%/{escaped}", name])
    return (" AND ".join(where) or "1"), params


def _rank(record: Record, base: float, now: datetime) -> float:
    value = base * TYPE_WEIGHT.get(record.type, 1.0)
    value *= recency(record.type, age_days(record.valid_from, now))
    value *= CONFIDENCE_WEIGHT.get(record.confidence, 1.0)
    if not record.current:
        value *= SUPERSEDED_WEIGHT
    return value


def _order(hits: list[Hit], limit: int) -> list[Hit]:
    hits.sort(key=lambda h: (not h.record.pinned, -h.rank, h.record.id))
    return hits[:limit]


def _search_fts(db: Store, query: Query, limit: int) -> list[Hit]:
    terms = query_terms(query.text)
    if not terms:
        return []
    total = max(1, int(db.scalar("SELECT seq FROM sqlite_sequence WHERE name = 'records'") or 1))
    df = {term: int(db.scalar("SELECT count(*) FROM records_fts WHERE records_fts MATCH ?",
                              (f"{{title body}} : {fts_phrase(term)}",)))
          for term in terms}
    present = [t for t in terms if df[t] > 0]
    if not present:
        return []
    idf = {t: math.log(1.0 + (total - df[t] + 0.5) / (df[t] + 0.5)) for t in terms}
    if query.min_relevance > 0:
        # A hit's relevance is the idf share of the terms it matches, so at most that of the
        # terms found anywhere: when even that (rounded as relevances are) falls short, no hit
        # could be kept.
        reachable = sum(idf[t] for t in present) / sum(idf.values())
        if round(reachable, 4) < query.min_relevance:
            return []
    selective = present
    if total >= COMMON_TERM_MIN_RECORDS:
        selective = [t for t in present if df[t] <= COMMON_TERM_SHARE * total] or present
    match = "{title body} : (" + " OR ".join(fts_phrase(t) for t in selective) + ")"
    projects = _projects(query)
    if projects:
        match += " AND project_id : (" + " OR ".join(fts_phrase(p) for p in projects) + ")"
    where, params = _filters(query)
    weights = ", ".join(str(w) for w in BM25_WEIGHTS)
    rows = db.rows(
        f"""WITH pool AS (
                SELECT rowid AS pk, bm25(records_fts, {weights}) AS score FROM records_fts
                 WHERE records_fts MATCH ? ORDER BY score LIMIT {CANDIDATE_POOL})
            SELECT {_prefixed_columns()}, pool.score FROM pool JOIN records r ON r.pk = pool.pk
             WHERE {where}""",
        [match, *params])
    if not rows:
        return []
    now = datetime.now(UTC)
    ranked = [Hit(record, _rank(record, -float(row[-1]), now), 0.0, ())
              for row in rows for record in (rec.from_row(row),)]
    # The order does not depend on relevance, so only the hits returned need their matched
    # terms: each probe costs in proportion to the rowids it checks.
    top = _order(ranked, limit)
    matched = _matched_terms(db, terms, df, [hit.record.pk for hit in top])
    denominator = sum(idf.values())
    hits = []
    for hit in top:
        found = matched.get(hit.record.pk, ())
        relevance = sum(idf[t] for t in found) / denominator if denominator else 0.0
        hits.append(hit._replace(relevance=round(relevance, 4), matched=found))
    return hits


def _matched_terms(db: Store, terms: list[str], df: dict[str, int],
                   pks: list[int]) -> dict[int, tuple[str, ...]]:
    """Which query terms each candidate contains (one index probe per term)."""
    found: dict[int, list[str]] = {pk: [] for pk in pks}
    marks = ",".join("?" * len(pks))
    for term in terms:
        if df[term] == 0:
            continue
        for row in db.rows(f"SELECT rowid FROM records_fts WHERE records_fts MATCH ? "
                           f"AND rowid IN ({marks})",
                           [f"{{title body}} : {fts_phrase(term)}", *pks]):
            found[row[0]].append(term)
    return {pk: tuple(ts) for pk, ts in found.items()}


def _prefixed_columns() -> str:
    return ", ".join(f"r.{c.strip()}" for c in rec.COLUMNS.split(","))


def _search_like(db: Store, query: Query, limit: int) -> list[Hit]:
    terms = query_terms(query.text)
    if not terms:
        return []
    where, params = _filters(query)
    likes = []
    like_params: list[object] = []
    for term in terms:
        likes.append("(r.title LIKE ? OR r.body LIKE ?)")
        like_params.extend([f"%{term}%", f"%{term}%"])
    rows = db.rows(f"SELECT {_prefixed_columns()} FROM records r WHERE {where} AND "
                   f"({' OR '.join(likes)}) ORDER BY r.valid_from DESC LIMIT {CANDIDATE_POOL}",
                   [*params, *like_params])
    now = datetime.now(UTC)
    hits = []
    for row in rows:
        record = rec.from_row(row)
        title, body = record.title.lower(), record.body.lower()
        found = tuple(t for t in terms if t in title or t in body)
        base = sum(2.0 if t in title else 1.0 for t in found)
        hits.append(Hit(record, _rank(record, base, now), round(len(found) / len(terms), 4),
                        found))
    return _order(hits, limit)


def _pinned_only(db: Store, query: Query, limit: int) -> list[Hit]:
    where, params = _filters(query)
    rows = db.rows(f"SELECT {_prefixed_columns()} FROM records r WHERE {where} AND r.pinned = 1 "
                   f"ORDER BY r.valid_from DESC LIMIT ?", [*params, limit])
    return [Hit(rec.from_row(row), 1.0, 1.0, ()) for row in rows]
