"""ctx_search's vector side: a real (tiny) model2vec model, real stored vectors, reloads."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentctx.store import Store, projects, records
from agentctx.store.models import Draft
from tests.server.conftest import call, make_client
from tests.support.tiny_model import TinyModel, embed_all

pytestmark = pytest.mark.anyio


def seed(root: Path) -> None:
    with Store.open() as db:
        pid = projects.resolve(db, str(root)).project.id
        for title in ("Use sqlite with WAL for the local store", "Pytest fixtures in conftest",
                      "Docker images pin their base release"):
            records.add(db, Draft(type="decision", title=title, body="Agreed."), project_id=pid)
        embed_all(db, TinyModel())


async def test_similarity_joins_keywords_when_a_model_is_available(app_dir: Path) -> None:
    seed(app_dir)
    async with make_client(TinyModel) as client:
        text = await call(client, "ctx_search", query="database persistence")
        assert "keyword+semantic search" in text.splitlines()[0]
        assert "Use sqlite with WAL" in text  # shares no word with the query
        assert "Docker" not in text and "Pytest" not in text  # unrelated: under MIN_COSINE
    async with make_client() as client:  # no model: keywords only, and no keyword matches
        text = await call(client, "ctx_search", query="database persistence")
        assert text.startswith("No records match")


async def test_new_vectors_are_picked_up_without_a_restart(app_dir: Path) -> None:
    seed(app_dir)
    async with make_client(TinyModel) as client:
        before = await call(client, "ctx_search", query="kubernetes container")
        assert "Docker images" in before and "Helm" not in before
        await call(client, "ctx_record", type="decision", title="Helm charts for deployment",
                   body="One chart per service.")
        with Store.open() as db:
            assert embed_all(db, TinyModel()) == 1
        after = await call(client, "ctx_search", query="kubernetes container")
        assert "Helm charts for deployment" in after


async def test_no_vectors_or_a_broken_model_fall_back_to_keywords(app_dir: Path) -> None:
    with Store.open() as db:
        pid = projects.resolve(db, str(app_dir)).project.id
        records.add(db, Draft(type="decision", title="Sqlite store", body="x"), project_id=pid)
    async with make_client(TinyModel) as client:  # a model, but nothing embedded yet
        text = await call(client, "ctx_search", query="sqlite")
        assert "(keyword search)" in text and "Sqlite store" in text

    def broken() -> TinyModel:
        raise OSError("model files are damaged")

    async with make_client(broken) as client:
        text = await call(client, "ctx_search", query="sqlite")
        assert "(keyword search)" in text and "Sqlite store" in text
