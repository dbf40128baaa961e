"""The one search function: hooks, the MCP server, the CLI and the TUI all call :func:`search`.

FTS5 BM25 (porter, unicode61) over title and body with OR semantics over the query's terms (stop
words dropped, every term quoted so no input is read as FTS syntax), a fixed candidate pool (so the
top 5 of a 10-hit search equal a 5-hit search), then a rerank: BM25 × type weight × recency ×
confidence, pinned first. Each hit carries a 0–1 relevance — the IDF-weighted share of the query's
terms it matches — which the per-prompt hook thresholds so an unrelated prompt injects nothing. A
query word no record contains still weighs in: little when it is a very frequent English word
(likely phrasing: "need", "work"), more the rarer it is ("weekend", "incidents"), and a lot when it
is not a frequent word at all (likely a topic the store knows nothing about: "storybook", "gdpr").

Changed facts are ranked by their chains: a superseded record that matches surfaces the record now
in force in its place (the hit's ``via``), and when superseded records are shown on request they
rank just below their successor. A prompt phrased as "where did we leave off" brings the latest
handovers (an intent prior); the phrase's words are not search terms, and when the prompt says more
("next steps for the refunds") the handovers must match the rest like any hit.

A search as of a date reads the archive too: it finds every record in force then, live or
archived (:mod:`agentctx.store.search_asof`, imported only for such searches), with document
frequencies and relevance counted over both tables.

Degradation ladder: FTS5 → a LIKE scan (FTS5 missing, or ``backend="like"``) → pinned records only
(``backend="pinned"``, or when the scan itself fails). The backend is the caller's to choose
(from the ``search`` knob): the store reads no configuration, so a search per keystroke costs
only the search.
"""

from __future__ import annotations

import math
import sqlite3
from datetime import datetime

from agentctx.core.ids import normalize_time
from agentctx.core.ids import now as clock_now
from agentctx.core.lean import NamedTuple
from agentctx.core.words import TIME_WORDS, tokens, word_rank
from agentctx.store import records as rec
from agentctx.store.db import Store
from agentctx.store.models import Hit, Record, project_scope
from agentctx.store.scoring import (
    BM25_WEIGHTS,
    CONFIDENCE_WEIGHT,
    PRESENT_COMMON_WEIGHT,
    SUPERSEDED_WEIGHT,
    TYPE_WEIGHT,
    VIA_WEIGHT,
    absent_word_weight,
    age_days,
    recency,
)
from agentctx.store.textproc import fts_phrase, query_terms

TYPE_CHECKING = False
if TYPE_CHECKING:  # pragma: no cover - typing only
    from agentctx.core.timewords import TimeWindow

CANDIDATE_POOL = 200
MAX_LIMIT = 100
# Superseded matches followed to their successors (the strongest ones; the rest rank too low).
LIFT_POOL = 40
# In a large store (COMMON_TERM_MIN_RECORDS and more), candidates are selected by the query's
# rarest terms whose postings together stay under this share of the store; the other terms still
# count in relevance. A term in a fifth of all records adds almost no BM25 weight but costs reading
# a fifth of the index.
POSTINGS_SHARE = 0.2
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
    # fts | like | pinned: the caller passes the ``search`` knob (the store reads no config).
    backend: str = "fts"
    # The caller keeps only hits at least this relevant (the per-prompt hook's threshold): a
    # full-text search whose best possible relevance is lower returns [] before its candidate
    # query. Everything else is unchanged; callers still filter.
    min_relevance: float = 0.0


def search(db: Store, query: Query) -> list[Hit]:
    """Search records; the best hits first, at most ``query.limit`` of them."""
    limit = max(0, min(query.limit, MAX_LIMIT))
    if limit == 0:
        return []
    backend = query.backend
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


def _projects(query: Query) -> list[str]:
    return project_scope(query.project_id, query.include_global) or []


def _filters(query: Query, *, superseded: bool | None = None) -> tuple[str, list[object]]:
    """SQL conditions on ``records r`` for everything but the text.

    ``superseded`` overrides whether superseded records pass (default: the query's choice).
    """
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
    elif not (query.include_superseded if superseded is None else superseded):
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
    intent, phrasing = _intent(query.text)
    now = clock_now()
    span = _time_window(db, query, now)
    if span is not None:
        from agentctx.core.timewords import phrase_words

        phrasing = phrasing | phrase_words(span)
    # The words of an intent or time phrase ("last time", "next steps", "two weeks ago") are
    # phrasing, not topic: the rest of the prompt is what the intended records must match.
    terms = [t for t in query_terms(query.text) if t not in phrasing]
    if not terms and not intent and span is None:
        return []
    total = max(1, int(db.scalar("SELECT seq FROM sqlite_sequence WHERE name = 'records'") or 1))
    df = {term: int(db.scalar("SELECT count(*) FROM records_fts WHERE records_fts MATCH ?",
                              (f"{{title body}} : {fts_phrase(term)}",)))
          for term in terms}
    # As of a date, archived records count too: (live, archived) frequencies, and df their sum.
    split: tuple[dict[str, int], dict[str, int]] | None = None
    if query.as_of:
        from agentctx.store import search_asof

        split = (df, search_asof.archive_frequencies(db, terms))
        df = {term: split[0][term] + split[1][term] for term in terms}
    # Without a date, records archived long after they were superseded still name what a
    # prompt may ask about ("still on nose?"): they count in the frequencies and surface their
    # successors, but are never hits themselves.
    archived_df = (_archive_frequencies(db, terms)
                   if split is None and terms and _has_archive(db) else None)
    live_df = df
    if archived_df is not None:
        df = {term: live_df[term] + archived_df[term] for term in terms}
    present = [t for t in terms if df[t] > 0]
    if not present and not intent and span is None:
        return []
    weight = _term_weights(terms, df, total)
    denominator = sum(weight.values())
    if query.min_relevance > 0 and span is None and (terms or not intent):
        # A hit's relevance is the weighted share of the terms it matches, so at most that of
        # the terms found anywhere: when even that (rounded as relevances are) falls short, no
        # hit could be kept.
        reachable = sum(weight[t] for t in present) / denominator
        if round(reachable, 4) < query.min_relevance:
            return []
    live_present = [t for t in present if live_df[t] > 0]
    if not present:
        pool: list[tuple[Record, float]] = []
    elif split is None:
        pool = _candidates(db, query, live_present, live_df, total) if live_present else []
        if archived_df is not None and any(archived_df[t] for t in present):
            from agentctx.store import search_asof

            where, params = _filters(query, superseded=True)
            pool += search_asof.candidates(
                db, _selective_terms([t for t in present if archived_df[t]], df, total),
                (live_df, archived_df), _project_match(query), where, params, LIFT_POOL,
                archived_only=True)
    else:
        where, params = _filters(query)
        pool = search_asof.candidates(db, _selective_terms(present, df, total), split,
                                      _project_match(query), where, params, CANDIDATE_POOL)
    chains = not query.as_of
    scored: dict[int, tuple[Record, float]] = {}
    superseded: list[tuple[Record, float]] = []
    for record, base in pool:
        if chains and not record.current:
            superseded.append((record, base))
            if not query.include_superseded or record.archived:
                continue
        scored[record.pk] = (record, base)
    via = (_lift_successors(db, query, superseded, scored, through_archive=archived_df is not None)
           if chains and superseded else {})
    boosted = _intent_candidates(db, query, intent, scored) if intent else set()
    dated = _dated_candidates(db, query, span, scored) if span is not None else set()
    boost = search_time_boost() if dated else 1.0
    ranked = [Hit(record, _rank(record, base, now) * (boost if record.pk in dated else 1.0),
                  0.0, (), via.get(record.pk, (None, 0))[0], record.pk in dated)
              for record, base in scored.values()]
    if boosted:
        best = max(hit.rank for hit in ranked)
        ranked = [hit._replace(rank=best * 1.01) if hit.record.pk in boosted else hit
                  for hit in ranked]
    _keep_successors_first(ranked)
    top = _order(ranked, limit)
    # The order does not depend on relevance, so only the hits returned (and the superseded
    # records that surfaced them) need their matched terms: each probe costs in proportion to
    # the rowids it checks.
    probe = [hit.record.pk for hit in top]
    probe += [via[pk][1] for pk in probe if pk in via]
    if not present:
        matched: dict[int, tuple[str, ...]] = {}
    elif split is None:
        archived_pks = {pk for pk, (record, _base) in _archived(pool)}
        matched = _matched_terms(db, terms, live_df, [pk for pk in probe
                                                       if pk not in archived_pks])
        if archived_df is not None and archived_pks:
            matched.update(_matched_terms(db, terms, archived_df,
                                          sorted(pk for pk in probe if pk in archived_pks),
                                          "records_archive_fts"))
    else:
        archived = {hit.record.pk for hit in top if hit.record.archived}
        matched = _matched_terms(db, terms, split[0], [pk for pk in probe if pk not in archived])
        matched.update(_matched_terms(db, terms, split[1], sorted(archived),
                                      "records_archive_fts"))
    # Strength in units of a term found in a single record: comparable across stores of any
    # size (in a store of two records, one word of one of them is as telling as in a thousand).
    unit = math.log(1.0 + (max(total, 2) - 0.5) / 1.5)
    # A prompt whose other words are all frequent ones ("what did we change last week?") asks
    # by its time alone.
    time_only = span is not None and all(word_rank(t) is not None for t in terms)
    hits = []
    for hit in top:
        pk = hit.record.pk
        found = matched.get(pk, ())
        strength = sum(weight[t] for t in found)
        if pk in via:
            lifted = matched.get(via[pk][1], ())
            strength = max(strength, VIA_WEIGHT * sum(weight[t] for t in lifted))
            found = tuple(dict.fromkeys(found + lifted))
        relevance = strength / denominator if denominator else 0.0
        if pk in boosted and not terms:
            relevance = INTENT_RELEVANCE
        elif hit.dated and time_only:
            from agentctx.store.search_time import TIME_RELEVANCE

            relevance = max(relevance, TIME_RELEVANCE)
        hits.append(hit._replace(relevance=round(min(relevance, 1.0), 4), matched=found,
                                 strength=round(strength / unit, 4)))
    return hits


def search_time_boost() -> float:
    """The rank multiplier of a record dated inside the prompt's window."""
    from agentctx.store.search_time import TIME_BOOST

    return TIME_BOOST


def _time_window(db: Store, query: Query, now: datetime) -> TimeWindow | None:
    """The window of ``valid_from`` dates the query's words point at ("last week"); never for an
    as-of search (its date is explicit) nor one without words that could name a time."""
    if query.as_of or (TIME_WORDS.isdisjoint(tokens(query.text))
                       and " may" not in query.text.lower()):
        return None
    from agentctx.store import search_time

    return search_time.window(db, query.text, _projects(query), now)


def _dated_candidates(db: Store, query: Query, span: TimeWindow,
                      scored: dict[int, tuple[Record, float]]) -> set[int]:
    """Mark the scored records dated inside ``span`` and add the newest others; returns the
    pks of every dated candidate."""
    from agentctx.store import search_time

    dated = {pk for pk, (record, _base) in scored.items() if span.contains(record.valid_from)}
    where, params = _filters(query._replace(include_superseded=False))
    floor = min((base for _record, base in scored.values()), default=1.0)
    for record in search_time.dated(db, where, params, span):
        if record.pk not in scored:
            scored[record.pk] = (record, floor * 0.5)
        dated.add(record.pk)
    return dated


def _has_archive(db: Store) -> bool:
    """Whether consolidation has archived any record (most stores: not yet, and one cheap probe
    spares every search the archive's frequency queries)."""
    return db.scalar("SELECT 1 FROM records_archive LIMIT 1") is not None


def _archive_frequencies(db: Store, terms: list[str]) -> dict[str, int]:
    from agentctx.store import search_asof

    return search_asof.archive_frequencies(db, terms)


def _archived(pool: list[tuple[Record, float]]) -> list[tuple[int, tuple[Record, float]]]:
    return [(record.pk, (record, base)) for record, base in pool if record.archived]


def _term_weights(terms: list[str], df: dict[str, int], total: int) -> dict[str, float]:
    """Each query term's weight in relevance: its IDF (less for a frequent English word), or,
    when no record contains it, a multiple of the rarest IDF that grows with its rarity."""
    rarest = math.log(1.0 + (total + 0.5) / 0.5)
    weights = {}
    for t in terms:
        rank = word_rank(t)
        if df[t]:
            weights[t] = math.log(1.0 + (total - df[t] + 0.5) / (df[t] + 0.5))
            if rank is not None:
                weights[t] *= PRESENT_COMMON_WEIGHT
        else:
            weights[t] = absent_word_weight(rank) * rarest
    return weights


def _selective_terms(present: list[str], df: dict[str, int], total: int) -> list[str]:
    """The terms candidates are selected by: all of them, or in a large store the rarest."""
    if total < COMMON_TERM_MIN_RECORDS:
        return present
    # Rarest terms first, while their postings stay within budget (always at least one):
    # common terms would make the query read a large part of the index for little weight.
    budget = POSTINGS_SHARE * total
    selective: list[str] = []
    postings = 0
    for term in sorted(present, key=lambda t: df[t]):
        if selective and postings + df[term] > budget:
            break
        selective.append(term)
        postings += df[term]
    return selective


def _project_match(query: Query) -> str:
    """The FTS5 clause that keeps the query's projects ("" for every project)."""
    projects = _projects(query)
    if not projects:
        return ""
    return " AND project_id : (" + " OR ".join(fts_phrase(p) for p in projects) + ")"


def _candidates(db: Store, query: Query, present: list[str], df: dict[str, int],
                total: int) -> list[tuple[Record, float]]:
    """The fixed pool of best BM25 matches of the live records that pass the filters, with
    their scores (superseded ones included, so that they can surface their successors)."""
    selective = _selective_terms(present, df, total)
    match = "{title body} : (" + " OR ".join(fts_phrase(t) for t in selective) + ")"
    match += _project_match(query)
    where, params = _filters(query, superseded=True)
    weights = ", ".join(str(w) for w in BM25_WEIGHTS)
    if query.types or query.scope or query.file:
        # A narrowing filter applies before the pool is cut, or 200 better matches of other
        # types could hide every match of the wanted one. (The per-prompt hook never narrows:
        # its path keeps the cheaper pool-then-filter form below.)
        rows = db.rows(
            f"""SELECT {_prefixed_columns()}, bm25(records_fts, {weights}) AS score
                  FROM records_fts JOIN records r ON r.pk = records_fts.rowid
                 WHERE records_fts MATCH ? AND {where} ORDER BY score LIMIT {CANDIDATE_POOL}""",
            [match, *params])
        return [(rec.from_row(row), -float(row[-1])) for row in rows]
    rows = db.rows(
        f"""WITH pool AS (
                SELECT rowid AS pk, bm25(records_fts, {weights}) AS score FROM records_fts
                 WHERE records_fts MATCH ? ORDER BY score LIMIT {CANDIDATE_POOL})
            SELECT {_prefixed_columns()}, pool.score FROM pool JOIN records r ON r.pk = pool.pk
             WHERE {where}""",
        [match, *params])
    return [(rec.from_row(row), -float(row[-1])) for row in rows]


def _lift_successors(db: Store, query: Query, superseded: list[tuple[Record, float]],
                     scored: dict[int, tuple[Record, float]], *,
                     through_archive: bool = True) -> dict[int, tuple[str, int]]:
    """Give each matching superseded record's current successor at least ``VIA_WEIGHT`` of its
    score; returns, per lifted successor pk, the superseded record's id and pk.

    Only the best :data:`LIFT_POOL` superseded matches are followed, in one recursive query,
    and never a handover's: the next session's handover is not the same fact restated, it is
    the next piece of work (and a worktree's handovers form one long chain). Without archived
    records (``through_archive=False``) the walk reads the live table only.
    """
    strongest = sorted(superseded, key=lambda item: -item[1])[:LIFT_POOL]
    sources = {record.id: (record, base) for record, base in strongest
               if record.superseded_by is not None and record.type != "handover"}
    if not sources:
        return {}
    marks = ",".join("?" * len(sources))
    walked = db.rows(
        f"""WITH RECURSIVE walk(start, id, depth) AS (
                SELECT id, superseded_by, 0 FROM records WHERE id IN ({marks})
                UNION ALL
                SELECT w.start, r.superseded_by, w.depth + 1
                  FROM walk w JOIN records r ON r.id = w.id
                 WHERE r.superseded_at IS NOT NULL AND w.depth < {rec.HISTORY_MAX_DEPTH})
            SELECT w.start, r.pk FROM walk w JOIN records r ON r.id = w.id
             WHERE r.superseded_at IS NULL""", [*sources]) if not through_archive else db.rows(
        # A step may pass through archived versions (consolidation archives old ones), so each
        # looks the id up in both tables, by their unique id indexes.
        f"""WITH RECURSIVE walk(start, id, depth) AS (
                SELECT id, superseded_by, 0 FROM records WHERE id IN ({marks})
                UNION ALL
                SELECT id, superseded_by, 0 FROM records_archive WHERE id IN ({marks})
                UNION ALL
                SELECT w.start, coalesce(r.superseded_by, a.superseded_by), w.depth + 1
                  FROM walk w LEFT JOIN records r ON r.id = w.id
                  LEFT JOIN records_archive a ON a.id = w.id
                 WHERE coalesce(r.superseded_at, a.superseded_at) IS NOT NULL
                   AND w.depth < {rec.HISTORY_MAX_DEPTH})
            SELECT w.start, r.pk FROM walk w JOIN records r ON r.id = w.id
             WHERE r.superseded_at IS NULL""", [*sources, *sources])
    heads: dict[int, tuple[Record, float]] = {}
    for start, head_pk in walked:
        record, base = sources[start]
        if head_pk not in heads or base > heads[head_pk][1]:
            heads[head_pk] = (record, base)
    if not heads:
        return {}
    where, params = _filters(query._replace(include_superseded=False, as_of=None))
    marks = ",".join("?" * len(heads))
    # NOT INDEXED: look the few successors up by rowid rather than walking a project index.
    rows = db.rows(f"SELECT {_prefixed_columns()} FROM records AS r NOT INDEXED "
                   f"WHERE r.pk IN ({marks}) AND {where}", [*heads, *params])
    lifted: dict[int, tuple[str, int]] = {}
    for row in rows:
        head = rec.from_row(row)
        source, base = heads[head.pk]
        own = scored.get(head.pk, (head, 0.0))[1]
        if VIA_WEIGHT * base > own:
            scored[head.pk] = (head, VIA_WEIGHT * base)
            lifted[head.pk] = (source.id, source.pk)
    return lifted


def _keep_successors_first(hits: list[Hit]) -> None:
    """A superseded record shown on request ranks just below its current successor, if shown."""
    by_id = {hit.record.id: hit for hit in hits}
    for index, hit in enumerate(hits):
        if hit.record.current:
            continue
        successor = hit.record.superseded_by
        for _ in range(rec.HISTORY_MAX_DEPTH):
            found = by_id.get(successor) if successor else None
            if found is None:
                break
            if found.record.current:
                if hit.rank >= found.rank:
                    hits[index] = hit._replace(rank=found.rank * 0.99)
                break
            successor = found.record.superseded_by


_INTENTS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("handover", ("left off", "leave off", "where were we", "where are we", "last time",
                  "last session", "pick up where", "picking up", "carry on", "next steps",
                  "what's next", "whats next", "what is next", "handover", "hand over",
                  "continue where", "resume work", "where did we stop", "what was i doing",
                  "what were we doing")),
)
# A prompt that is only an intent ("where did we leave off?") is as good as a full keyword match
# for the per-prompt threshold; with other words ("next steps for the payouts spike"), the
# intended records rank first but must match those words like any hit.
INTENT_RELEVANCE = 1.0
INTENT_RECORDS = 2


def _intent(text: str) -> tuple[tuple[str, ...], frozenset[str]]:
    """Record types a prompt asks for by its phrasing ("where did we leave off" → handover), and
    the words of the phrases that said so."""
    lowered = " ".join(text.lower().replace("\u2019", "'").split())
    types: list[str] = []
    words: set[str] = set()
    for type_, phrases in _INTENTS:
        said = [phrase for phrase in phrases if phrase in lowered]
        if said:
            types.append(type_)
            words.update(word for phrase in said for word in tokens(phrase))
    return tuple(types), frozenset(words)


def _intent_candidates(db: Store, query: Query, intent: tuple[str, ...],
                       scored: dict[int, tuple[Record, float]]) -> set[int]:
    """Add the latest records of the intended types, ranked with the best candidate: current
    ones, or as of a date those in force then."""
    wanted = [t for t in intent if not query.types or t in query.types]
    if not wanted:
        return set()
    if query.as_of:
        where, params = _filters(query)
    else:
        where, params = _filters(query._replace(include_superseded=False))
    marks = ",".join("?" * len(wanted))
    columns, source = _source(query)
    if not query.as_of and _projects(query):
        # The type's newest rows through records_current: walking the date index would read the
        # whole project when it has none of that type.
        source += " INDEXED BY records_current"
    rows = db.rows(f"SELECT {columns} FROM {source} WHERE r.type IN ({marks}) AND "
                   f"{where} ORDER BY r.valid_from DESC LIMIT {INTENT_RECORDS}",
                   [*wanted, *params])
    boosted = set()
    for row in rows:
        record = _record(row, query)
        scored.setdefault(record.pk, (record, 1.0))
        boosted.add(record.pk)
    return boosted


def matched_terms(db: Store, text: str, pks: list[int]) -> dict[int, tuple[str, ...]]:
    """Which of ``text``'s search terms each record of ``pks`` contains, as the index reads
    them (the same probes as a search's matched words: stemmed, title and body)."""
    terms = query_terms(text)
    return _matched_terms(db, terms, dict.fromkeys(terms, 1), pks)


def _matched_terms(db: Store, terms: list[str], df: dict[str, int], pks: list[int],
                   index: str = "records_fts") -> dict[int, tuple[str, ...]]:
    """Which query terms each candidate contains (one probe of ``index`` per term)."""
    if not pks:
        return {}
    found: dict[int, list[str]] = {pk: [] for pk in pks}
    marks = ",".join("?" * len(pks))
    for term in terms:
        if df[term] == 0:
            continue
        for row in db.rows(f"SELECT rowid FROM {index} WHERE {index} MATCH ? "
                           f"AND rowid IN ({marks})",
                           [f"{{title body}} : {fts_phrase(term)}", *pks]):
            found[row[0]].append(term)
    return {pk: tuple(ts) for pk, ts in found.items()}


def _prefixed_columns() -> str:
    return ", ".join(f"r.{c.strip()}" for c in rec.COLUMNS.split(","))


def _source(query: Query) -> tuple[str, str]:
    """What a search selects, as ``(columns, FROM clause)`` of records ``r``: the live records,
    or as of a date the live and the archived ones (the last column flagging the archived)."""
    if not query.as_of:
        return _prefixed_columns(), "records r"
    from agentctx.store.search_asof import SOURCE

    return f"{_prefixed_columns()}, r.archived", f"{SOURCE} r"


def _record(row: sqlite3.Row, query: Query) -> Record:
    """The record of a row selected with :func:`_source`'s columns."""
    return rec.from_row(row, archived=bool(query.as_of) and bool(row[-1]))


def _search_like(db: Store, query: Query, limit: int) -> list[Hit]:
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


def _pinned_only(db: Store, query: Query, limit: int) -> list[Hit]:
    where, params = _filters(query)
    columns, source = _source(query)
    rows = db.rows(f"SELECT {columns} FROM {source} WHERE {where} AND r.pinned = 1 "
                   f"ORDER BY r.valid_from DESC LIMIT ?", [*params, limit])
    return [Hit(_record(row, query), 1.0, 1.0, ()) for row in rows]
