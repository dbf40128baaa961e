"""What consolidation leaves for a person to decide, as listed by ``agentctx status``.

* :func:`merge_candidates` — near-duplicate pairs waiting for a merge decision;
* :func:`prune_candidates` — records whose score stayed under ``prune_score`` for more than
  ``prune_after_days`` days (listed, never deleted automatically; ``agentctx forget`` deletes).

Both return flat NamedTuples (``_asdict()`` gives JSON-ready dicts; ``str()`` one display line).
Standard library and the store only: importing this module is cheap.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import NamedTuple

from agentctx import config
from agentctx.store import upkeep
from agentctx.store.db import Store
from agentctx.store.ids import now as clock_now
from agentctx.store.ids import parse_time, to_iso


class MergeCandidate(NamedTuple):
    """Two current records of one type that look like the same fact."""

    older_id: str  # a merge supersedes this one...
    newer_id: str  # ...by this one
    type: str
    older_title: str
    newer_title: str
    cosine: float
    overlap: float  # share of their terms in common (Jaccard)

    def __str__(self) -> str:
        return (f"{self.type} {self.older_id[:10]} ≈ {self.newer_id[:10]} "
                f"(cosine {self.cosine:.3f}): {self.older_title!r} / {self.newer_title!r}")


class PruneCandidate(NamedTuple):
    """A current record whose score stayed low long enough to be worth a look."""

    id: str
    type: str
    title: str
    score: float
    low_score_since: str
    days_low: int

    def __str__(self) -> str:
        return (f"{self.type} {self.id[:10]} score {self.score:.3f}, low for {self.days_low} "
                f"days: {self.title!r}")


def merge_candidates(db: Store, project_id: str | None) -> list[MergeCandidate]:
    """Near-duplicate pairs of current records in ``project_id`` (``None``: all), best first.

    Pairs already judged distinct are left out.
    """
    return [MergeCandidate(p.first.id, p.second.id, p.first.type, p.first.title, p.second.title,
                           p.cosine, p.overlap) for p in upkeep.near_duplicates(db, project_id)]


def prune_candidates(db: Store, project_id: str | None, *, cfg: config.Config | None = None,
                     now: datetime | None = None, limit: int = 100) -> list[PruneCandidate]:
    """Current, unpinned records under ``prune_score`` for more than ``prune_after_days`` days.

    Lowest score first. Scores are maintained by consolidation.
    """
    cfg = cfg or config.Config.load()
    moment = now or clock_now()
    before = to_iso(moment - timedelta(days=cfg.get_int("prune_after_days")))
    found = upkeep.prune_candidates(db, project_id, low_before=before, limit=limit)
    return [PruneCandidate(item.record.id, item.record.type, item.record.title,
                           round(item.score, 4), item.low_score_since,
                           int((moment - parse_time(item.low_score_since)).days))
            for item in found]
