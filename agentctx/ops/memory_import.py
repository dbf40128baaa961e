"""Importing Claude Code's auto memory (``~/.claude/projects/<folder>/memory/``) into a project,
for every face: how many memories the caller's folder has, and the import itself — each memory
its own transaction (:mod:`agentctx.team.claude_memory`), then the team file brought in step once
when anything changed."""

from __future__ import annotations

from typing import NamedTuple

from agentctx.core import gitinfo
from agentctx.drift import automemory
from agentctx.ops import teamsync
from agentctx.ops.caller import Caller
from agentctx.store.db import Store
from agentctx.store.models import Project
from agentctx.team import claude_memory
from agentctx.team.claude_memory import Report as Report


class MemoryImported(NamedTuple):
    """What an import of the auto memory did, the lines that say it, and the team file's note."""

    report: Report
    lines: list[str]
    note: str | None


def memories_here(cwd: str) -> int:
    """How many memories Claude Code's auto memory holds for the project of ``cwd``."""
    root = gitinfo.identify(cwd).root
    return len(claude_memory.items(automemory.state(root).folder))


def import_memory(db: Store, caller: Caller, project: Project) -> MemoryImported:
    """Import ``project``'s auto memory (read only; records keep the source ``claude-memory``),
    then bring its team file in step for the caller's folder when anything was written."""
    report = claude_memory.import_memory(db, project)
    note = None
    if report.added or report.superseded or report.reinforced:
        note = teamsync.note_of(teamsync.keep_in_step(db, project.id, caller.cwd))
    return MemoryImported(report, claude_memory.describe(report), note)
