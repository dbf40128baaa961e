"""The LLM cost ledger: one row per model call, totals per session.

Prices live in data (``agentctx/data/prices.json``), not code; the extraction module computes the
USD of a call and records it here.
"""

from __future__ import annotations

from typing import NamedTuple

from agentctx.core.ids import now_iso
from agentctx.store.db import Store


class Usage(NamedTuple):
    """Token counts of one call."""

    input_tokens: int = 0
    output_tokens: int = 0
    cache_write_tokens: int = 0
    cache_read_tokens: int = 0


class Totals(NamedTuple):
    """Sums over calls."""

    calls: int
    input_tokens: int
    output_tokens: int
    cache_write_tokens: int
    cache_read_tokens: int
    usd: float


def record_call(db: Store, *, model: str, purpose: str, usage: Usage, usd: float,
                session_id: str | None = None, project_id: str | None = None, ok: bool = True,
                error: str | None = None) -> None:
    """Log one model call and add its cost to the session's total."""
    with db.write():
        db.execute("INSERT INTO llm_calls (session_id, project_id, model, purpose, input_tokens, "
                   "output_tokens, cache_write_tokens, cache_read_tokens, usd, ok, error, "
                   "created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                   (session_id, project_id, model, purpose, usage.input_tokens,
                    usage.output_tokens, usage.cache_write_tokens, usage.cache_read_tokens, usd,
                    int(ok), error, now_iso()))
        if session_id:
            db.execute("UPDATE sessions SET extraction_cost_usd = extraction_cost_usd + ? "
                       "WHERE session_id = ?", (usd, session_id))


def totals(db: Store, *, session_id: str | None = None, project_id: str | None = None) -> Totals:
    """Sums over the ledger, optionally for one session or one project."""
    where, params = [], []
    if session_id is not None:
        where.append("session_id = ?")
        params.append(session_id)
    if project_id is not None:
        where.append("project_id = ?")
        params.append(project_id)
    row = db.one("SELECT count(*), coalesce(sum(input_tokens), 0), coalesce(sum(output_tokens), 0),"
                 " coalesce(sum(cache_write_tokens), 0), coalesce(sum(cache_read_tokens), 0), "
                 "coalesce(sum(usd), 0) FROM llm_calls"
                 + (" WHERE " + " AND ".join(where) if where else ""), params)
    assert row is not None
    return Totals(int(row[0]), int(row[1]), int(row[2]), int(row[3]), int(row[4]), float(row[5]))
