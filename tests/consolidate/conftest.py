"""Fixtures for consolidation: a project, records (the tiny model is in tests/conftest.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentctx.store import Store
from agentctx.store import projects as proj
from agentctx.store import records as rec
from agentctx.store.models import Draft, Project, Record


@pytest.fixture
def project(store: Store, project_dir: Path) -> Project:
    """The project of ``project_dir`` in the test store."""
    return proj.resolve(store, str(project_dir)).project


def add(db: Store, project: Project | str, type_: str, title: str, body: str = "", *,
        valid_from: str | None = None, **fields: object) -> Record:
    """Add one record (a thin helper over the real records API)."""
    project_id = project if isinstance(project, str) else project.id
    return rec.add(db, Draft(type=type_, title=title, body=body, valid_from=valid_from,
                             **fields),  # type: ignore[arg-type]
                   project_id=project_id)
