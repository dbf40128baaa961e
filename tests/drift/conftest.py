"""Drift test fixtures: fixture folders loaded into a real store, memory files in a project copy."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import NamedTuple

import pytest

from agentctx.benchmarks import eval_drift as bench_drift
from agentctx.store import Store, records
from agentctx.store import projects as proj
from agentctx.store.models import Project, Record

FIXTURES = Path(__file__).resolve().parent / "fixtures"


class Loaded(NamedTuple):
    """A fixture in the store, with its memory files copied into a project folder."""

    db: Store
    project: Project
    root: Path
    ids: dict[str, str]  # fixture id -> store id
    labels: dict[str, object]

    def record(self, fixture_id: str) -> Record:
        """The store record of a fixture id."""
        return records.get(self.db, self.ids[fixture_id])

    def name_of(self, store_id: str) -> str:
        """The fixture id of a store id."""
        return {v: k for k, v in self.ids.items()}[store_id]


def load(db: Store, name: str, folder: Path) -> Loaded:
    """Copy fixture ``name``'s memory files to ``folder`` and its records into ``db``."""
    fixture = bench_drift.load(FIXTURES / name)
    shutil.copytree(fixture.memory, folder)
    project_id, ids = bench_drift.populate(db, fixture, folder)
    return Loaded(db, proj.get(db, project_id), folder, ids, fixture.labels)


@pytest.fixture
def orders(store: Store, tmp_path: Path) -> Loaded:
    """The drifted orders-api fixture: a Python backend, imports with a cycle and a missing one."""
    return load(store, "orders-api", tmp_path / "orders-api")


@pytest.fixture
def tilekit(store: Store, tmp_path: Path) -> Loaded:
    """The all-present tilekit fixture: .claude/CLAUDE.md, rules files, CLAUDE.local.md."""
    return load(store, "tilekit", tmp_path / "tilekit")
