"""A consolidation run for a caller: the pass (:mod:`agentctx.consolidate`) with the write path's
merge (each confirmed pair merged in one transaction, audited as ``consolidate``) and the team
files of the projects it covers brought in step once, for the caller's folder."""

from __future__ import annotations

from typing import Any

from agentctx.consolidate.run import Report
from agentctx.consolidate.run import consolidate as run_pass
from agentctx.ops import teamsync, write_path
from agentctx.ops.caller import Caller
from agentctx.store.db import Store
from agentctx.store.models import Record
from agentctx.store.upkeep import NearDuplicate
from agentctx.team import SyncResult

ACTOR = "consolidate"


def consolidate(db: Store, cwd: str, **options: Any) -> Report:
    """Run consolidation (``options``: :func:`agentctx.consolidate.run.consolidate`'s) with the
    write path's merges and team step, for a caller working in ``cwd``."""
    caller = Caller("cli", ACTOR, cwd)

    def merge(db: Store, pair: NearDuplicate, reason: str) -> Record:
        return write_path.merge_pair(db, caller, pair, reason)

    def team(db: Store, project_id: str) -> SyncResult | None:
        return teamsync.keep_in_step(db, project_id, caller.cwd)

    return run_pass(db, merge=merge, team=team, **options)
