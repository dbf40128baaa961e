"""The configurations under test, each calling the code the product runs — never a second search.

* **per-turn hook** — what ``UserPromptSubmit`` injects in a fresh session: the hook's own
  side-effect-free judgement, :func:`agentctx.context.judgement.decide` (the store's one search, the
  ``prompt_records`` cut, the ``prompt_min_relevance`` threshold, the semantic check and the
  per-prompt budget).
* **keyword search** — :func:`agentctx.store.search.search` as ``ctx_search`` calls it when no
  vectors are available.
* **hybrid** — :func:`agentctx.store.hybrid.hybrid_search` with the vector side the MCP server
  builds: the embedding model's query vector against a :class:`~agentctx.store.hybrid.VectorIndex`
  of the stored embeddings, after a real consolidation run embedded the records.

The optional parts (the hook module, the hybrid module, the embedding model) are imported
guardedly: a configuration whose parts are missing is reported as unavailable, with the reason.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple, TypeVar

from agentctx.consolidate.run import consolidate as run_consolidation
from agentctx.context import judgement
from agentctx.core import budget, config
from agentctx.ml.embedder import embedding_text, load_model, query_text
from agentctx.store import vectors
from agentctx.store.db import Store
from agentctx.store.hybrid import MIN_COSINE, IndexedVectors, VectorIndex, hybrid_search
from agentctx.store.models import Hit, project_scope
from agentctx.store.search import Query, search
from agentctx.store.selection import Selection

if TYPE_CHECKING:  # pragma: no cover - typing only
    from agentctx.store.hybrid import VectorIndex

T = TypeVar("T")

# Benchmark stores keep every superseded version (nothing ages into the archive).
OVERRIDES = {"AGENTCTX_ARCHIVE_AFTER_DAYS": "36500"}
CONSOLIDATE_TIME_LIMIT_S = 600
HOOK_SELECTION = ("agentctx.context.judgement.decide: the hook's own judgement and composition, "
                  "without its receipts")


class Injection(NamedTuple):
    """What the per-prompt hook would inject: the hits shown in full, the text, its token
    estimate, and the hits shown as pointers."""

    hits: list[Hit]
    text: str
    tokens: int
    pointers: list[Hit]


def hook_selection_note() -> str:
    """How the per-turn hook configuration selects and composes (for reports)."""
    return HOOK_SELECTION


def hook_injection(db: Store, prompt: str, project_id: str, project_name: str,
                   cfg: config.Config) -> Injection:
    """The records (and text) the per-prompt hook would inject for ``prompt`` in a new session:
    the hook's own side-effect-free judgement, :func:`agentctx.context.judgement.decide`."""
    decision = judgement.decide(db, project_id, project_name, prompt, judgement.settings(cfg))
    return Injection(list(decision.injected), decision.text,
                     budget.estimate_tokens(decision.text) if decision.text else 0,
                     list(decision.pointers))


def keyword_search(db: Store, text: str, project_id: str, *, limit: int = 10,
                   include_superseded: bool = False) -> list[Hit]:
    """The store's one search, as ``ctx_search`` runs it without vectors."""
    return search(db,
                  Query(text,
                        Selection(project_id=project_id, include_global=True,
                                  state=("all" if include_superseded else "current")),
                        limit=limit))


def timed(call: Callable[[], T]) -> tuple[T, float]:
    """``call()`` and how long it took, in seconds."""
    started = time.perf_counter()
    value = call()
    return value, time.perf_counter() - started


# ----------------------------------------------------------------------------- embeddings


class Embedder(NamedTuple):
    """A loaded embedding model (``agentctx.ml.embedder.EmbeddingModel``) and its label."""

    model: Any
    label: str


class Unavailable(NamedTuple):
    """Why a configuration cannot run."""

    reason: str


def bench_config(model_path: str | None = None) -> config.Config:
    """The configuration a benchmark runs with: ``config.json`` and the environment, plus
    :data:`OVERRIDES` and, with ``model_path``, that model folder as ``embed_model``."""
    environ = {**os.environ, **OVERRIDES}
    if model_path:
        environ["AGENTCTX_EMBED_MODEL"] = str(Path(model_path).expanduser().resolve())
        environ["AGENTCTX_EMBEDDINGS"] = "on"
    return config.Config(config.read_file(), environ=environ)


def load_embedder(model_path: str | None, cfg: config.Config) -> Embedder | Unavailable:
    """The embedding model named by ``cfg`` (``embed_model``; see :func:`bench_config`).

    Never downloads: a hub model that is not in ``<home>/models`` yet is reported unavailable
    with the command that fetches it.
    """
    if model_path and not Path(model_path).expanduser().is_dir():
        return Unavailable(f"model folder {model_path} does not exist")
    value = cfg.get_str("embed_model")
    if not cfg.get_bool("embeddings"):
        return Unavailable("embeddings are off (embeddings knob); pass --model PATH to measure")
    model = load_model(cfg, allow_download=False)
    if model is None:
        return Unavailable(f"embedding model {value!r} could not be loaded (not downloaded yet? "
                           "run 'agentctx init --download-model', or pass --model PATH to a "
                           "model2vec folder)")
    label = Path(value).name if Path(value).expanduser().is_dir() else value
    return Embedder(model, label)


class Consolidated(NamedTuple):
    """What preparing a benchmark store did: how consolidation went, and records embedded."""

    how: str
    embedded: int

    def describe(self) -> str:
        """One line for reports."""
        return f"{self.how}; {self.embedded} records embedded"


def consolidate(db: Store, embedder: Embedder | None, cfg: config.Config) -> Consolidated:
    """Run consolidation on a freshly built store, as the session-end child would.

    It embeds every pending record (when there is a model), scans near-duplicates (never merging:
    no judge), updates scores and rebuilds digests. ``archive_after_days`` is at its maximum in
    :func:`bench_config`, so every superseded version stays searchable for the supersession
    check. When consolidation cannot run (another run holds its lock), pending records are
    embedded the same way it would.
    """
    model = embedder.model if embedder is not None else None
    report = run_consolidation(db, cfg=cfg, embeddings=model is not None, model=model,
                               judge=None, time_limit_s=CONSOLIDATE_TIME_LIMIT_S)
    if report.skipped:
        return Consolidated(f"consolidation skipped ({report.skipped}), embedded directly",
                            embed_pending(db, model) if model is not None else 0)
    if report.stopped:
        return Consolidated(f"consolidation stopped early ({report.stopped})", report.embedded)
    return Consolidated(f"consolidation ran; {_semantic_note(report.query_model, cfg)}",
                        report.embedded)


def _semantic_note(query_model: str, cfg: config.Config) -> str:
    """Whether the hook's semantic check can run on the store consolidation prepared."""
    if not cfg.get_bool("prompt_semantic_check"):
        return "semantic check off (prompt_semantic_check = off)"
    if query_model in ("written", "current"):
        return "semantic check on"
    if query_model.startswith("unavailable"):
        return f"semantic check {query_model}"
    return "semantic check unavailable (no vectors)"


def embed_pending(db: Store, model: Any, *, batch: int = 1000) -> int:
    """Embed every record waiting for an embedding, as consolidation does; returns how many."""
    done = 0
    after = 0
    while True:
        waiting = vectors.pending(db, limit=batch, after_pk=after)
        if not waiting:
            return done
        matrix = model.encode([embedding_text(p.type, p.valid_from, p.project, p.title, p.body)
                               for p in waiting])
        done += vectors.save(db, model.name, list(zip(waiting, matrix, strict=True)))
        after = waiting[-1].pk


class HybridSearcher:
    """``ctx_search`` with vectors over one store: the MCP server's in-memory index and fusion.

    Build it after :func:`consolidate` has embedded the store's records.
    """

    def __init__(self, db: Store, embedder: Embedder) -> None:
        self.db = db
        self.model = embedder.model
        self.index: VectorIndex = VectorIndex.load(db, self.model.name, self.model.dim)

    def search(self, text: str, project_id: str, *, limit: int = 10,
               include_superseded: bool = False) -> list[Hit]:
        """Hybrid hits for ``text`` (the query is embedded on each call, as the server does)."""

        query = Query(text,
                      Selection(project_id=project_id, include_global=True,
                                state=("all" if include_superseded else "current")),
                      limit=limit)
        model = self.model
        side = IndexedVectors(self.index, lambda words: (model.encode([query_text(words)])[0], ""))
        # As the server: vector candidates under MIN_COSINE are noise, not meaning.
        return hybrid_search(self.db, query, side, min_cosine=MIN_COSINE)

    def top_cosine(self, text: str, project_id: str) -> float | None:
        """The best cosine between ``text`` and any record of the project (``None``: no vectors)."""
        vector = self.model.encode([query_text(text)])[0]
        found = self.index.nearest(vector, project_ids=project_scope(project_id, True), limit=1)
        return found[0][1] if found else None
