"""Counting how often a write brings the team file in step: the real
``agentctx.team.after_write`` runs, and each call's working folder is noted."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from agentctx import team
from agentctx.store.db import Store
from agentctx.store.models import Project


def count_team_syncs(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The folders (``""`` for none) of every team-file sync from now on; each still runs."""
    calls: list[str] = []
    real = team.after_write

    def counted(db: Store, project: Project, cwd: str | os.PathLike[str] | None = None,
                ) -> team.SyncResult | None:
        calls.append("" if cwd is None else str(Path(cwd)))
        return real(db, project, cwd)

    monkeypatch.setattr(team, "after_write", counted)
    return calls
