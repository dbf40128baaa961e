"""Counts and sums for ``agentctx status``, the TUI and the web view.

:func:`overview` is the one status model: a project's records, sessions, tokens injected,
extraction cost and what consolidation left to decide, as ``agentctx status`` prints it and the
TUI and web view show it.
"""

from __future__ import annotations

import json
import os

from agentctx.core.lean import NamedTuple
from agentctx.store.db import SCHEMA_VERSION, Store
from agentctx.store.models import GLOBAL_PROJECT, Project, Record

# The session-start hook counts records through this module when it builds a digest inline, so
# what only the status model needs (typing, datetime, the ledger, consolidation's candidates) is
# imported for type checking here and at call time in overview().
TYPE_CHECKING = False
if TYPE_CHECKING:
    from datetime import datetime
    from typing import Any

    from agentctx.store import ledger, pathstate, upkeep


class SessionSummary(NamedTuple):
    """What agentctx put into one session and what extraction cost."""

    session_id: str
    project_id: str
    started_at: str
    ended_at: str | None
    session_start_injections: int
    session_start_tokens: int
    prompt_injections: int
    prompt_tokens: int
    other_tokens: int
    records_injected: int
    extraction_usd: float
    extraction_calls: int
    meta: dict[str, Any]
    cwd: str | None = None
    worktree: str | None = None  # the worktree root of ``cwd``, as hooks resolved it


class DayTotals(NamedTuple):
    """Tokens injected on one day (UTC), by event."""

    day: str  # YYYY-MM-DD
    injections: int
    session_start_tokens: int
    prompt_tokens: int
    other_tokens: int

    @property
    def tokens(self) -> int:
        """Every token injected that day."""
        return self.session_start_tokens + self.prompt_tokens + self.other_tokens


def record_counts(db: Store, project_id: str | None = None) -> dict[str, dict[str, int]]:
    """Per type: current, superseded and archived record counts."""
    where, params = ("WHERE project_id = ?", [project_id]) if project_id else ("", [])
    counts: dict[str, dict[str, int]] = {}
    for type_, current, superseded in db.rows(
            "SELECT type, sum(superseded_at IS NULL), sum(superseded_at IS NOT NULL) "
            f"FROM records {where} GROUP BY type", params):
        counts.setdefault(type_, {"current": 0, "superseded": 0, "archived": 0})
        counts[type_]["current"] = int(current)
        counts[type_]["superseded"] = int(superseded)
    for type_, archived in db.rows(f"SELECT type, count(*) FROM records_archive {where} "
                                   "GROUP BY type", params):
        counts.setdefault(type_, {"current": 0, "superseded": 0, "archived": 0})
        counts[type_]["archived"] = int(archived)
    return counts


def has_embeddings(db: Store) -> bool:
    """Whether the store holds any record embedding (one index lookup: a status line can tell
    "no vectors yet" without loading the vector machinery)."""
    return db.scalar("SELECT 1 FROM embeddings LIMIT 1") is not None


def store_size(db: Store) -> int:
    """Bytes on disk of the store, WAL included."""
    total = 0
    for suffix in ("", "-wal"):
        try:
            total += os.path.getsize(str(db.path) + suffix)
        except OSError:
            pass
    return total


def session_summaries(db: Store, project_id: str | None = None, limit: int = 10,
                      offset: int = 0) -> list[SessionSummary]:
    """The latest sessions with their injection receipts and extraction cost, newest first, a
    page at a time (:func:`agentctx.store.sessions.count` counts them)."""
    where, params = ("WHERE s.project_id = ?", [project_id]) if project_id else ("", [])
    rows = db.rows(
        f"""SELECT s.session_id, s.project_id, s.started_at, s.ended_at,
              (SELECT count(*) FROM injections i WHERE i.session_id = s.session_id
                 AND i.event = 'SessionStart'),
              (SELECT coalesce(sum(tokens), 0) FROM injections i
                WHERE i.session_id = s.session_id AND i.event = 'SessionStart'),
              (SELECT count(*) FROM injections i WHERE i.session_id = s.session_id
                 AND i.event = 'UserPromptSubmit'),
              (SELECT coalesce(sum(tokens), 0) FROM injections i
                WHERE i.session_id = s.session_id AND i.event = 'UserPromptSubmit'),
              (SELECT coalesce(sum(tokens), 0) FROM injections i
                WHERE i.session_id = s.session_id
                  AND i.event NOT IN ('SessionStart', 'UserPromptSubmit')),
              (SELECT count(*) FROM session_seen ss WHERE ss.session_id = s.session_id),
              s.extraction_cost_usd,
              (SELECT count(*) FROM llm_calls c WHERE c.session_id = s.session_id),
              s.meta, s.cwd,
              (SELECT pp.worktree FROM project_paths pp WHERE pp.path = s.cwd)
            FROM sessions s {where} ORDER BY s.started_at DESC, s.session_id
            LIMIT ? OFFSET ?""",
        [*params, limit, max(0, offset)])
    summaries = []
    for row in rows:
        try:
            meta = json.loads(row[12] or "{}")
        except ValueError:
            meta = {}
        summaries.append(SessionSummary(row[0], row[1], row[2], row[3], int(row[4]), int(row[5]),
                                        int(row[6]), int(row[7]), int(row[8]), int(row[9]),
                                        float(row[10]), int(row[11]),
                                        meta if isinstance(meta, dict) else {}, row[13],
                                        row[14]))
    return summaries


def tokens_per_day(db: Store, project_id: str | None = None, *, since: str | None = None,
                   until: str | None = None) -> list[DayTotals]:
    """Tokens injected per day (of one project, or all), oldest day first; ``since`` and
    ``until`` (dates, inclusive) bound the days. Days without injections are left out."""
    where: list[str] = []
    params: list[object] = []
    if project_id:
        where.append("project_id = ?")
        params.append(project_id)
    if since:
        where.append("created_at >= ?")
        params.append(since[:10])
    if until:
        where.append("created_at < ?")
        params.append(until[:10] + "~")  # after every time of that day
    rows = db.rows(
        "SELECT substr(created_at, 1, 10) AS day, count(*), "
        "coalesce(sum(CASE WHEN event = 'SessionStart' THEN tokens END), 0), "
        "coalesce(sum(CASE WHEN event = 'UserPromptSubmit' THEN tokens END), 0), "
        "coalesce(sum(CASE WHEN event NOT IN ('SessionStart', 'UserPromptSubmit') "
        "THEN tokens END), 0) FROM injections"
        + (" WHERE " + " AND ".join(where) if where else "")
        + " GROUP BY day ORDER BY day", params)
    return [DayTotals(row[0], int(row[1]), int(row[2]), int(row[3]), int(row[4]))
            for row in rows]


def injection_totals(db: Store, project_id: str | None = None) -> dict[str, int]:
    """Sessions seen and tokens injected, in all and per event."""
    where, params = ("WHERE project_id = ?", [project_id]) if project_id else ("", [])
    totals: dict[str, int] = {
        "sessions": int(db.scalar(f"SELECT count(*) FROM sessions {where}", params) or 0),
        "injections": 0, "tokens": 0,
    }
    for event, count, tokens in db.rows(
            f"SELECT event, count(*), coalesce(sum(tokens), 0) FROM injections {where} "
            "GROUP BY event", params):
        totals["injections"] += int(count)
        totals["tokens"] += int(tokens)
        totals[f"tokens.{event}"] = int(tokens)
        totals[f"injections.{event}"] = int(count)
    return totals


def drift_count(db: Store, project_id: str, threshold: float) -> int:
    """How many current decisions and conventions of a project (the records CLAUDE.md is compared
    with) have a CLAUDE.md drift score above ``threshold`` (a non-negative number)."""
    # "> 0" spelled out lets SQLite use the partial index records_drift.
    return int(db.scalar("SELECT count(*) FROM records WHERE project_id = ? AND type IN "
                         "('decision', 'convention') AND superseded_at IS NULL "
                         "AND claudemd_drift_score > 0 AND claudemd_drift_score > ?",
                         (project_id, threshold)) or 0)


class StoreInfo(NamedTuple):
    """The store file: where, how big (WAL included) and its schema version."""

    path: str
    bytes: int
    schema: int


class Overview(NamedTuple):
    """Everything ``agentctx status`` reports about one project."""

    store: StoreInfo
    project: Project
    records: dict[str, dict[str, int]]  # per type: current, superseded and archived counts
    global_preferences: dict[str, int]  # current, superseded and archived
    injections: dict[str, int]  # see injection_totals
    extraction: ledger.Totals
    sessions: list[SessionSummary]  # the latest, newest first
    merge_candidates: list[upkeep.MergeCandidate]
    prune_candidates: list[upkeep.PruneCandidate]
    # current records whose named paths were all gone at the last check (agentctx verify)
    possibly_stale: list[tuple[Record, pathstate.PathState]] = []  # noqa: RUF012 - never mutated

    @property
    def record_totals(self) -> dict[str, int]:
        """Current, superseded and archived records over every type."""
        return {state: sum(counts.get(state, 0) for counts in self.records.values())
                for state in ("current", "superseded", "archived")}


def overview(db: Store, project: Project, *, prune_after_days: int, sessions: int = 10,
             now: datetime | None = None) -> Overview:
    """The status of ``project``: counts, costs, recent sessions and the merge and pruning
    candidates (``prune_after_days`` is the knob of that name)."""
    from agentctx.store import ledger, pathstate, upkeep

    return Overview(
        StoreInfo(str(db.path), store_size(db), SCHEMA_VERSION), project,
        record_counts(db, project.id),
        record_counts(db, GLOBAL_PROJECT).get("preference", {}),
        injection_totals(db, project.id), ledger.totals(db, project_id=project.id),
        session_summaries(db, project.id, limit=sessions),
        upkeep.merge_candidates(db, project.id),
        upkeep.prune_candidates(db, project.id, after_days=prune_after_days, now=now),
        pathstate.possibly_stale(db, project.id))
