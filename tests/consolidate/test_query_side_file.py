"""Consolidation writes the query side file; the stdlib reader embeds exactly as model2vec does."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from agentctx.consolidate import query_side_file as writer
from agentctx.consolidate.run import consolidate
from agentctx.ml.embedder import EmbeddingModel, forget_loaded, load_model, query_text
from agentctx.store import Store, querymodel
from agentctx.store.models import Project
from agentctx.store.textproc import query_terms
from tests.conftest import SHARED
from tests.consolidate.conftest import add
from tests.support import tiny_model

REAL_MODEL = SHARED / "models" / "minilm-static-256"
PROMPTS = [
    "how do I run the test suite", "SQLiteDB migrations with pytests",
    "TypeError: Cannot read properties of undefined (reading 'map') in InvoiceTable.tsx",
    "Crème brûlée for the café's naïve coördinator", "北京 is the capital 中文",
    "ModuleNotFoundError: No module named 'ledgerline.billing'", "what's our GDPR retention?",
    "x" * 150 + " database",
]


@pytest.fixture
def wordpiece(tmp_path_factory: pytest.TempPathFactory,
              monkeypatch: pytest.MonkeyPatch) -> Iterator[EmbeddingModel]:
    folder = tiny_model.build_wordpiece(tmp_path_factory.mktemp("models") / "wordpiece")
    monkeypatch.setenv("AGENTCTX_EMBED_MODEL", str(folder))
    model = load_model()
    assert model is not None
    yield model
    forget_loaded()


def assert_parity(store: Store, model: EmbeddingModel) -> None:
    side = querymodel.open_registered(store)
    assert side is not None
    try:
        checked = 0
        for text in PROMPTS:
            mine = side.encode(query_terms(text))
            reference = model.encode([query_text(text)])[0]
            if mine is None:
                assert not np.any(reference), text
                continue
            assert float(np.dot(np.asarray(mine), reference)) > 0.9999, text
            checked += 1
        assert checked >= 2
    finally:
        side.close()


class TestWrite:
    def test_written_once_then_current_and_registered(self, store: Store, project: Project,
                                                       wordpiece: EmbeddingModel,
                                                       isolated_home: Path) -> None:
        add(store, project, "decision", "Storage is SQLite")
        first = consolidate(store, model=wordpiece, judge=None)
        assert first.query_model == "written"
        entry = querymodel.registered(store)
        assert entry is not None and entry[0] == wordpiece.name
        assert Path(entry[1]).is_relative_to(isolated_home / "models" / "query")
        assert consolidate(store, model=wordpiece, judge=None).query_model == "current"
        assert_parity(store, wordpiece)

    def test_new_weights_rewrite_the_file(self, store: Store, wordpiece: EmbeddingModel) -> None:
        assert writer.ensure(store, wordpiece) == "written"
        weights = wordpiece.folder / "model.safetensors"
        stat = weights.stat()
        os.utime(weights, ns=(stat.st_atime_ns, stat.st_mtime_ns + 10_000_000_000))
        assert writer.ensure(store, wordpiece) == "written"
        assert writer.ensure(store, wordpiece) == "current"

    def test_a_non_wordpiece_tokenizer_gets_no_side_file(self, store: Store,
                                                          tiny: EmbeddingModel) -> None:
        outcome = writer.ensure(store, tiny)
        assert outcome.startswith("unavailable") and "WordLevel" in outcome
        assert querymodel.registered(store) is None
        assert not writer.side_file_path(tiny.name).exists()

    def test_a_model_switch_unregisters_the_old_file(self, store: Store,
                                                      wordpiece: EmbeddingModel,
                                                      tiny: EmbeddingModel) -> None:
        writer.ensure(store, wordpiece)
        assert querymodel.registered(store) is not None
        writer.ensure(store, tiny)
        assert querymodel.registered(store) is None


@pytest.mark.skipif(not REAL_MODEL.is_dir(), reason="the shared embedding model is not available")
def test_parity_with_the_real_model(store: Store, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AGENTCTX_EMBED_MODEL", str(REAL_MODEL))
    model = load_model()
    assert model is not None
    try:
        assert writer.ensure(store, model) == "written"
        assert_parity(store, model)
    finally:
        forget_loaded()
