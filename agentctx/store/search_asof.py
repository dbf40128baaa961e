"""The archive's half of :func:`agentctx.store.search.search`: the archive-aware and as-of
strategies (:class:`ArchiveAware`, :class:`AsOf`), and live and archived records scored together.

A search as of a date must find every record in force then, including those consolidation has
since moved to ``records_archive`` (indexed by ``records_archive_fts``). FTS5 computes BM25's IDF
from its own index, so the scores of two indexes cannot simply be merged: in a small archive,
where most records share their words, every IDF is floored at 1e-6 and an archived record that
matches well would rank below any live one. Each query term is therefore scored on its own in each
index and its contribution rescaled from that index's IDF to the IDF over both tables; the sum is
the score one index over both tables would give (only the length normalisation, the average
record length, stays per index). Candidates pass the query's filters before the pool is cut, so
records created after the date cannot crowd out those in force at it.

Imported only when a search has a moment or the store an archive: other searches read the live
index alone (:class:`agentctx.store.search.LiveRecords`).
"""

from __future__ import annotations

import math

from agentctx.store import records as rec
from agentctx.store import search as srch
from agentctx.store.db import Store
from agentctx.store.models import Hit, Record
from agentctx.store.scoring import BM25_WEIGHTS, selective_terms
from agentctx.store.selection import where as selection_where
from agentctx.store.textproc import fts_phrase

# Each table with its full-text index. Archiving keeps a record's pk, so a pk names one record
# across both.
INDEXES = (("records", "records_fts"), ("records_archive", "records_archive_fts"))
ARCHIVE = 1

# Live and archived records as one relation (for ``FROM … r``), the last column flagging the
# archived ones.
SOURCE = (f"(SELECT {rec.COLUMNS}, 0 AS archived FROM records "
          f"UNION ALL SELECT {rec.COLUMNS}, 1 AS archived FROM records_archive)")

# FTS5's BM25 replaces a non-positive IDF (a term in more than half of the rows) by this.
FTS5_MIN_IDF = 1e-6


def term_match(term: str) -> str:
    """The FTS5 expression for one query term in title or body."""
    return f"{{title body}} : {fts_phrase(term)}"


def archive_frequencies(db: Store, terms: list[str]) -> dict[str, int]:
    """How many archived records contain each term in their title or body."""
    return {term: int(db.scalar("SELECT count(*) FROM records_archive_fts "
                                "WHERE records_archive_fts MATCH ?", (term_match(term),)))
            for term in terms}


def bm25_idf(rows: int, hits: int) -> float:
    """The IDF FTS5's ``bm25()`` uses for a term found in ``hits`` of ``rows`` rows."""
    ratio = (rows - hits + 0.5) / (hits + 0.5)
    return math.log(ratio) if ratio > 1.0 else FTS5_MIN_IDF


def candidates(db: Store, terms: list[str], frequencies: tuple[dict[str, int], dict[str, int]],
               project_match: str, where: str, params: list[object],
               pool: int, archived_only: bool = False) -> list[tuple[Record, float]]:
    """The best ``pool`` records, live or archived, that contain any of ``terms`` and pass
    ``where`` (conditions on ``r``), with their BM25 scores (higher is better), best first.

    ``frequencies`` holds each term's document frequency in the live and in the archive index;
    ``project_match`` is the FTS5 project clause appended to each term's expression (or "").
    With ``archived_only``, only archived records are returned (scored as over both tables):
    the superseded matches a search without a date follows to their successors.
    """
    sizes = [int(db.scalar(f"SELECT count(*) FROM {table}")) for table, _ in INDEXES]
    weights = ", ".join(str(w) for w in BM25_WEIGHTS)
    scores: dict[tuple[int, int], float] = {}
    for term in terms:
        overall = bm25_idf(sum(sizes), sum(df[term] for df in frequencies))
        for index, ((table, fts), df, size) in enumerate(zip(INDEXES, frequencies, sizes,
                                                             strict=True)):
            if not df[term] or (archived_only and index != ARCHIVE):
                continue
            scale = overall / bm25_idf(size, df[term])
            for pk, score in db.rows(
                    f"SELECT {fts}.rowid, bm25({fts}, {weights}) FROM {fts} "
                    f"CROSS JOIN {table} AS r ON r.pk = {fts}.rowid "
                    f"WHERE {fts} MATCH ? AND {where}",
                    [term_match(term) + project_match, *params]):
                scores[(index, pk)] = scores.get((index, pk), 0.0) - float(score) * scale
    best = sorted(scores.items(), key=lambda item: (-item[1], item[0]))[:pool]
    found: list[tuple[Record, float]] = []
    for index, (table, _) in enumerate(INDEXES):
        chosen = {pk: score for (where_from, pk), score in best if where_from == index}
        if not chosen:
            continue
        rows = db.rows(f"SELECT {rec.COLUMNS} FROM {table} "
                       f"WHERE pk IN ({','.join('?' * len(chosen))})", list(chosen))
        found.extend((rec.from_row(row, archived=index == ARCHIVE), chosen[row[0]])
                     for row in rows)
    found.sort(key=lambda item: (-item[1], item[0].pk))
    return found


class ArchiveAware(srch.LiveRecords):
    """Live records as hits, with the archive's words: records archived long after they were
    superseded still name what a prompt may ask about ("still on nose?"), so they count in the
    frequencies and surface their successors, but are never hits themselves."""

    through_archive = True

    def __init__(self) -> None:
        super().__init__()
        self.archived: dict[str, int] = {}

    def frequencies(self, db: Store, terms: list[str]) -> dict[str, int]:
        live = super().frequencies(db, terms)
        self.archived = archive_frequencies(db, terms)
        return {term: live[term] + self.archived[term] for term in terms}

    def pool(self, db: Store, query: srch.Query, present: list[str], df: dict[str, int],
             total: int) -> list[tuple[Record, float]]:
        found = super().pool(db, query, present, df, total)
        in_archive = [t for t in present if self.archived[t]]
        if in_archive:
            where, params = selection_where(query.selection, "r",
                                                 state=srch.pool_state(query))
            found += candidates(db, selective_terms(in_archive, df, total),
                                (self.live, self.archived), srch.project_match(query), where,
                                params, srch.LIFT_POOL, archived_only=True)
        return found

    def matched(self, db: Store, terms: list[str], probe: list[int],
                pool: list[tuple[Record, float]], top: list[Hit]) -> dict[int, tuple[str, ...]]:
        archived = {record.pk for record, _base in pool if record.archived}
        found = srch._matched_terms(db, terms, self.live, [pk for pk in probe
                                                          if pk not in archived])
        if archived:
            found.update(srch._matched_terms(db, terms, self.archived,
                                            sorted(pk for pk in probe if pk in archived),
                                            "records_archive_fts"))
        return found


class AsOf:
    """Every record in force at the query's moment, live or archived, scored as one index over
    both tables; no chains (a record superseded since was current then)."""

    follows_chains = False
    through_archive = True

    def __init__(self) -> None:
        self.live: dict[str, int] = {}
        self.archived: dict[str, int] = {}

    def frequencies(self, db: Store, terms: list[str]) -> dict[str, int]:
        self.live = srch.LiveRecords().frequencies(db, terms)
        self.archived = archive_frequencies(db, terms)
        return {term: self.live[term] + self.archived[term] for term in terms}

    def pool(self, db: Store, query: srch.Query, present: list[str], df: dict[str, int],
             total: int) -> list[tuple[Record, float]]:
        where, params = selection_where(query.selection, "r")
        return candidates(db, selective_terms(present, df, total), (self.live, self.archived),
                          srch.project_match(query), where, params, srch.CANDIDATE_POOL)

    def matched(self, db: Store, terms: list[str], probe: list[int],
                pool: list[tuple[Record, float]], top: list[Hit]) -> dict[int, tuple[str, ...]]:
        archived = {hit.record.pk for hit in top if hit.record.archived}
        found = srch._matched_terms(db, terms, self.live, [pk for pk in probe
                                                          if pk not in archived])
        found.update(srch._matched_terms(db, terms, self.archived, sorted(archived),
                                        "records_archive_fts"))
        return found
