"""Fixtures for consolidation: the tiny hand-made model, a project, records."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from agentctx.consolidate.embed import EmbeddingModel, forget_loaded, load_model
from agentctx.store import Store
from agentctx.store import projects as proj
from agentctx.store import records as rec
from agentctx.store.models import Draft, Project, Record
from tests.consolidate import tiny_model


@pytest.fixture(scope="session")
def tiny_model_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The tiny model saved once per test session (model2vec folder layout)."""
    return tiny_model.build(tmp_path_factory.mktemp("models") / "tiny")


@pytest.fixture
def tiny(tiny_model_dir: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[EmbeddingModel]:
    """The tiny model, configured as ``embed_model`` and loaded through the real loader."""
    monkeypatch.setenv("AGENTCTX_EMBED_MODEL", str(tiny_model_dir))
    model = load_model()
    assert model is not None
    yield model
    forget_loaded()


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
