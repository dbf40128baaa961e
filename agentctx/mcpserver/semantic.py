"""The vector side of a long-lived server: the embedding model and the store's vectors in memory.

Loading never blocks the event loop: the model and a :class:`~agentctx.store.hybrid.VectorIndex`
are loaded on a worker thread with its own store connection (no SQLite connection crosses
threads), and a search waits for them only a bounded time — the first load up to
:data:`FIRST_WAIT_S`, a reload up to :data:`RELOAD_WAIT_S` — before answering from what is ready
(the previous vectors, or keyword search alone). The vectors are reloaded when the store's
fingerprint moves (record changes or new embeddings). When embeddings are off, the model is
unavailable or no record has a vector yet, there is no vector side and search is keyword-only.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, Protocol

import anyio

from agentctx.core.config import Config
from agentctx.ml.embedder import load_model, query_text
from agentctx.store.db import Store
from agentctx.store.hybrid import (
    MIN_COSINE,
    VectorIndex,
    VectorSide,
    fingerprint,
)
from agentctx.store.models import project_scope
from agentctx.store.search import Query

FIRST_WAIT_S = 5.0
RELOAD_WAIT_S = 2.0
RETRY_AFTER_S = 60.0

log = logging.getLogger("agentctx.mcp")


class EmbeddingModel(Protocol):
    """What the server needs of an embedding model (``agentctx.ml.embedder``'s contract)."""

    @property
    def name(self) -> str:
        """The model name embeddings are stored under."""

    @property
    def dim(self) -> int:
        """Vector dimensions."""

    def encode(self, texts: list[str]) -> Any:
        """A float32 array of L2-normalized rows, one per text."""


ModelLoader = Callable[[], EmbeddingModel | None]


def default_model_loader(cfg: Config | None = None) -> ModelLoader:
    """A loader of the configured model; ``None`` when embeddings are off or it is not on disk."""

    def load() -> EmbeddingModel | None:
        # Never from the network here: a search must not wait on a download (consolidation and
        # ``agentctx init --download-model`` fetch the model; the next server start uses it).
        model: EmbeddingModel | None = load_model(cfg, allow_download=False)
        return model

    return load


class Semantic:
    """The model and vectors of one server, loaded off the event loop and reloaded when stale."""

    def __init__(self, db_path: Path, loader: ModelLoader, *,
                 busy_timeout_ms: int = 3000) -> None:
        self._db_path = db_path
        self._loader = loader
        self._busy_timeout_ms = busy_timeout_ms
        self._lock = threading.Lock()
        self._model: EmbeddingModel | None = None
        self._model_missing = False
        self._index: VectorIndex | None = None
        self._index_print: tuple[int, int, str] | None = None
        self._job: threading.Thread | None = None
        self._failed_at: float | None = None

    @property
    def status(self) -> str:
        """One line on the vector side's state (for logs and diagnostics)."""
        if self._model_missing:
            return "keyword only: embeddings are off or the model is unavailable"
        if self._model is None:
            return "model not loaded yet"
        count = 0 if self._index is None else len(self._index)
        return f"model {self._model.name} ({self._model.dim} dims), {count} vectors in memory"

    async def vector_side(self, db: Store, query: Query) -> VectorSide | None:
        """The vector side of a search for ``query``, or ``None`` when there is none (yet).

        ``db`` is the caller's connection (used only on the caller's thread, for the cheap
        freshness check).
        """
        if self._model_missing:
            return None
        model = self._model
        if model is None:
            await self._refresh(FIRST_WAIT_S)
        else:
            current = fingerprint(db)
            if current != self._index_print:
                await self._refresh(RELOAD_WAIT_S)
        with self._lock:
            model, index = self._model, self._index
        if model is None or index is None or len(index) == 0:
            return None
        vector = model.encode([query_text(query.text)])[0]
        projects = project_scope(query.project_id, query.include_global)
        history = query.include_superseded or query.as_of is not None

        def nearest(pool: int) -> list[tuple[int, float]]:
            found = index.nearest(vector, project_ids=projects, limit=pool, types=query.types,
                                  include_superseded=history)
            return [(pk, cosine) for pk, cosine in found if cosine >= MIN_COSINE]

        return nearest

    async def model(self) -> EmbeddingModel | None:
        """The embedding model once loaded (waiting as a first search does), else ``None``."""
        if self._model_missing:
            return None
        if self._model is None:
            await self._refresh(FIRST_WAIT_S)
        with self._lock:
            return self._model

    async def _refresh(self, wait_s: float) -> None:
        """Start a (re)load unless one is running or one failed recently; wait for it a while."""
        with self._lock:
            job = self._job
            if job is None or not job.is_alive():
                if self._failed_at is not None and time.monotonic() - self._failed_at < \
                        RETRY_AFTER_S:
                    return
                job = threading.Thread(target=self._load, name="agentctx-vectors", daemon=True)
                self._job = job
                job.start()
        await anyio.to_thread.run_sync(job.join, wait_s)

    def _load(self) -> None:
        """Worker thread: load the model (once) and every vector, with a connection of its own."""
        started = time.monotonic()
        try:
            model = self._model
            if model is None:
                model = self._loader()
                if model is None:
                    self._model_missing = True
                    log.info("vector search off: embeddings are disabled or no model is available")
                    return
                with self._lock:
                    self._model = model
            db = Store.open(self._db_path, busy_timeout_ms=self._busy_timeout_ms)
            try:
                stamp = fingerprint(db)
                index = VectorIndex.load(db, model.name, model.dim)
            finally:
                db.close()
            with self._lock:
                self._index, self._index_print, self._failed_at = index, stamp, None
            log.info("loaded %d vectors of %s in %.2f s", len(index), model.name,
                     time.monotonic() - started)
        except Exception:  # the vector side is optional: log it and search by keywords
            self._failed_at = time.monotonic()
            log.exception("loading the vector side failed; searching by keywords")
