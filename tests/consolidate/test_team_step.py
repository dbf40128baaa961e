"""Consolidation brings the team files of opted-in projects in step, through the use-case
layer's team step (for the caller's folder), and touches none without it."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentctx import team
from agentctx.consolidate import run
from agentctx.ops.consolidation import consolidate
from agentctx.store import Store, records
from agentctx.store import projects as proj
from agentctx.store.models import Draft
from tests.support.gitrepo import repo  # noqa: F401  (a fixture)


def test_consolidation_rewrites_a_team_file_only_when_it_changed(
        store: Store, repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:  # noqa: F811
    monkeypatch.chdir(repo)
    shop = proj.resolve(store, str(repo)).project
    team.turn_on(store, shop, repo)
    records.add(store, Draft(type="convention", title="Written by extraction"),
                project_id=shop.id)  # a write no surface followed with a sync
    before = (repo / team.TEAM_FILE).read_text(encoding="utf-8")
    alone = run.consolidate(store, project_ids=[shop.id], embeddings=False, judge=None)
    assert alone.team_files == 0  # the pass alone writes no team file
    assert (repo / team.TEAM_FILE).read_text(encoding="utf-8") == before
    report = consolidate(store, str(repo), project_ids=[shop.id], embeddings=False, judge=None)
    assert report.team_files == 1 and "team" in report.seconds
    assert "### Written by extraction" in (repo / team.TEAM_FILE).read_text(encoding="utf-8")
    assert consolidate(store, str(repo), project_ids=[shop.id], embeddings=False, judge=None
                       ).team_files == 0
