"""Decay scores: score = base_relevance × access_decay × recency_decay × confidence_weight.

Only discoveries, bugfixes and handovers decay, and never a worktree's latest handover.

The formula and every constant live in :mod:`agentctx.store.scoring` (shared with search). This
module recomputes the score of every current record, keeps ``low_score_since`` (when the score
fell under the ``prune_score`` knob, read off the decay curve) and writes only what changed, in
batches of one transaction each.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import datetime

from agentctx.core.ids import to_iso
from agentctx.store import upkeep
from agentctx.store.db import Store
from agentctx.store.scoring import low_since, score_factors

BATCH = 2000
SCORE_DECIMALS = 4


def compute(item: upkeep.ScoreInput, threshold: float, now: datetime,
            ) -> tuple[float, str | None]:
    """The new ``(score, low_score_since)`` of one record."""
    factors = score_factors(item.type, item.confidence, item.valid_from, item.last_accessed,
                            item.access_count, now, kept_fresh=item.latest_handover)
    since = low_since(item.type, factors, threshold)
    return round(factors.score, SCORE_DECIMALS), None if since is None else to_iso(since)


def update(db: Store, project_ids: Sequence[str] | None, *, threshold: float, now: datetime,
           deadline: Callable[[], bool]) -> tuple[int, int, bool]:
    """Rescore current records; returns (scored, changed, finished before the deadline)."""
    inputs = upkeep.score_inputs(db, project_ids)
    changed: list[tuple[int, float, str | None]] = []
    for item in inputs:
        score, since = compute(item, threshold, now)
        if abs(score - item.score) > 1e-6 or since != item.low_score_since:
            changed.append((item.pk, score, since))
    written = 0
    for start in range(0, len(changed), BATCH):
        if deadline():
            return len(inputs), written, False
        batch = changed[start:start + BATCH]
        upkeep.save_scores(db, batch)
        written += len(batch)
    return len(inputs), written, True
