"""Who calls a use case: the face, as a record's source and the audit trail's actor, and the
folder it works in (the worktree whose team file follows its writes)."""

from __future__ import annotations

from typing import NamedTuple

from agentctx.store.models import SOURCES


class Caller(NamedTuple):
    """The face a write comes from. Every use case takes one; nothing is defaulted."""

    source: str  # a record's source: cli, tui, web, mcp_tool (the store's SOURCES)
    actor: str  # the audit trail's actor: usually the source; consolidate for its merges
    cwd: str  # the working folder: its worktree's team file is the one kept in step

    @classmethod
    def face(cls, name: str, cwd: str) -> Caller:
        """A face writing as itself (``cli``, ``tui``, ``web``, ``mcp_tool``) from ``cwd``."""
        if name not in SOURCES:
            raise ValueError(f"unknown source {name!r}")
        return cls(name, name, cwd)
