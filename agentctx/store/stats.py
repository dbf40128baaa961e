"""Counts and sums for ``agentctx status``, the TUI and the web view."""

from __future__ import annotations

import json
import os
from typing import Any, NamedTuple

from agentctx.store.db import Store


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


def store_size(db: Store) -> int:
    """Bytes on disk of the store, WAL included."""
    total = 0
    for suffix in ("", "-wal"):
        try:
            total += os.path.getsize(str(db.path) + suffix)
        except OSError:
            pass
    return total


def session_summaries(db: Store, project_id: str | None = None,
                      limit: int = 10) -> list[SessionSummary]:
    """The latest sessions with their injection receipts and extraction cost, newest first."""
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
              s.meta
            FROM sessions s {where} ORDER BY s.started_at DESC LIMIT ?""",
        [*params, limit])
    summaries = []
    for row in rows:
        try:
            meta = json.loads(row[12] or "{}")
        except ValueError:
            meta = {}
        summaries.append(SessionSummary(row[0], row[1], row[2], row[3], int(row[4]), int(row[5]),
                                        int(row[6]), int(row[7]), int(row[8]), int(row[9]),
                                        float(row[10]), int(row[11]),
                                        meta if isinstance(meta, dict) else {}))
    return summaries


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
