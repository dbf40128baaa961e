"""The embedding model: local folders, the one-time download from a loopback hub, failures."""

from __future__ import annotations

import logging
import time
from pathlib import Path

import numpy as np
import pytest

from agentctx.core import config
from agentctx.ml import embedder
from agentctx.ml.embedder import EmbeddingModel, ModelUnavailable
from agentctx.store import Store
from tests.consolidate import hub
from tests.support import tiny_model

REPO_ID = "acme/tiny-static"


@pytest.fixture(autouse=True)
def _fresh_cache() -> None:
    embedder.forget_loaded()


def test_embedding_text_is_type_title_and_body() -> None:
    text = embedder.embedding_text("decision", "2026-03-01T10:00:00.000Z", "acme-app",
                                "Use SQLite", "WAL mode, one writer.")
    assert text == "[decision] Use SQLite\nWAL mode, one writer."
    assert embedder.embedding_text("bugfix", "2026-03-02", "x", "Fix crash", "  ") == \
        "[bugfix] Fix crash"


def test_query_text_keeps_the_topic_words() -> None:
    assert embedder.query_text("I was wondering what we decided about the internal API?") == \
        "decided internal api"
    assert embedder.query_text("the and of") == "the and of"


def test_a_new_embedding_text_format_re_embeds(store: Store) -> None:
    from agentctx.store import records, vectors
    from agentctx.store.models import Draft

    record = records.add(store, Draft(type="decision", title="Use SQLite"), project_id="p")
    store.execute("INSERT INTO embeddings (record_pk, model, dim, vector, embedded_at) "
                  "VALUES (?, 'm', 1, x'0000803f', 'now')", (record.pk,))
    store.execute("UPDATE records SET pending_embedding = 0")
    assert vectors.requeue_other_format(store, 1) == 1  # no format stored yet: re-embed
    store.execute("UPDATE records SET pending_embedding = 0")
    assert vectors.requeue_other_format(store, 1) == 0
    assert vectors.requeue_other_format(store, embedder.EMBED_TEXT_FORMAT) == 1


def test_local_folder_loads_and_encodes_unit_float32_rows(tiny: EmbeddingModel,
                                                          tiny_model_dir: Path) -> None:
    assert tiny.name == str(tiny_model_dir.resolve())
    assert tiny.dim == tiny_model.DIM
    rows = tiny.encode(["sqlite database schema", "React frontend component", "zzz qqq"])
    assert rows.dtype == np.float32 and rows.shape == (3, tiny_model.DIM)
    norms = np.linalg.norm(rows, axis=1)
    assert np.allclose(norms[:2], 1.0, atol=1e-6) and norms[2] == 0.0
    assert float(rows[0] @ tiny_model.topic_vector("storage")) > 0.95
    assert float(rows[0] @ rows[1]) < 0.2
    assert tiny.encode([]).shape == (0, tiny_model.DIM)
    # One load per process: the same object comes back.
    assert embedder.load_model() is tiny


def test_embeddings_off_or_broken_model_gives_none_with_one_log_line(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path, caplog: pytest.LogCaptureFixture,
        tiny_model_dir: Path) -> None:
    monkeypatch.setenv("AGENTCTX_EMBED_MODEL", str(tiny_model_dir))
    monkeypatch.setenv("AGENTCTX_EMBEDDINGS", "off")
    assert embedder.load_model() is None
    monkeypatch.delenv("AGENTCTX_EMBEDDINGS")
    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / "model.safetensors").write_bytes(b"not a tensor file")
    (broken / "tokenizer.json").write_text("{}", encoding="utf-8")
    (broken / "config.json").write_text("{}", encoding="utf-8")
    monkeypatch.setenv("AGENTCTX_EMBED_MODEL", str(broken))
    with caplog.at_level(logging.WARNING, logger="agentctx"):
        assert embedder.load_model() is None
    assert len(caplog.records) == 1 and "failed to load" in caplog.records[0].getMessage()
    empty = tmp_path / "empty"
    empty.mkdir()
    monkeypatch.setenv("AGENTCTX_EMBED_MODEL", str(empty))
    with pytest.raises(ModelUnavailable, match="not a model2vec model folder"):
        embedder.download_model()
    for value in ("/no/such/folder", "./relative/missing", "not a hub id"):
        monkeypatch.setenv("AGENTCTX_EMBED_MODEL", value)
        with pytest.raises(ModelUnavailable, match="neither an existing folder nor a hub id"):
            embedder.download_model()
        assert embedder.load_model() is None


def test_hub_model_is_downloaded_once_into_the_home(
        monkeypatch: pytest.MonkeyPatch, tiny_model_dir: Path, isolated_home: Path,
        caplog: pytest.LogCaptureFixture) -> None:
    monkeypatch.setenv("AGENTCTX_EMBED_MODEL", REPO_ID)
    with hub.serve(REPO_ID, tiny_model_dir) as fake:
        monkeypatch.setenv("HF_ENDPOINT", fake.endpoint)
        with caplog.at_level(logging.WARNING, logger="agentctx"):
            folder = embedder.download_model()
        notices = [r.getMessage() for r in caplog.records]
        assert len(notices) == 1 and "downloading embedding model acme/tiny-static" in notices[0]
        assert folder.is_relative_to(isolated_home / "models")
        assert (folder / "model.safetensors").read_bytes() == \
            (tiny_model_dir / "model.safetensors").read_bytes()
        paths = [path.split("?")[0] for _method, path in fake.requests]
        assert f"/api/models/{REPO_ID}/revision/main" in paths
        assert any(p.endswith("/model.safetensors") and p.startswith(f"/{REPO_ID}/resolve/")
                   for p in paths)
        asked = len(fake.requests)
        model = embedder.load_model()
        assert model is not None and model.name == REPO_ID and model.dim == tiny_model.DIM
        assert len(fake.requests) == asked  # loaded from <home>/models, no second download
    # The hub is gone: the cached copy still loads, with no network at all.
    embedder.forget_loaded()
    monkeypatch.setenv("HF_ENDPOINT", "http://127.0.0.1:9")
    cached = embedder.load_model()
    assert cached is not None and cached.name == REPO_ID
    vector = cached.encode(["redis cache"])[0]
    assert float(vector @ tiny_model.topic_vector("cache")) > 0.95


def test_offline_or_unreachable_hub_degrades_fast(monkeypatch: pytest.MonkeyPatch,
                                                  caplog: pytest.LogCaptureFixture) -> None:
    monkeypatch.setenv("AGENTCTX_EMBED_MODEL", "acme/never-downloaded")
    monkeypatch.setenv("HF_ENDPOINT", "http://127.0.0.1:9")  # nothing listens on port 9
    began = time.monotonic()
    with caplog.at_level(logging.WARNING, logger="agentctx"):
        assert embedder.load_model() is None
    assert time.monotonic() - began < 5
    assert "hub is unreachable" in caplog.text
    with pytest.raises(ModelUnavailable, match="unreachable"):
        embedder.download_model()
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    with pytest.raises(ModelUnavailable, match="HF_HUB_OFFLINE"):
        embedder.download_model()
    assert embedder.load_model(config.Config.load(), allow_download=False) is None


def test_unknown_repository_is_a_clear_error(monkeypatch: pytest.MonkeyPatch,
                                             tiny_model_dir: Path) -> None:
    monkeypatch.setenv("AGENTCTX_EMBED_MODEL", "acme/other-model")
    with hub.serve(REPO_ID, tiny_model_dir) as fake:
        monkeypatch.setenv("HF_ENDPOINT", fake.endpoint)
        with pytest.raises(ModelUnavailable, match="could not download acme/other-model"):
            embedder.download_model()
