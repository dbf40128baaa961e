"""The digest ranker: reciprocal-rank fusion of keyword relevance and vector similarity.

Consolidation hands :func:`ranker` to :func:`agentctx.context.digest.refresh`; the digest calls it
once
per section with that section's candidates. Both signals are measured against the project's recent
prompts (kept, redacted, by the prompt hook):

* keyword — :func:`agentctx.store.search.search` run on each recent prompt; a record's keyword
  strength is the sum over prompts of ``1 / (RRF_K + its rank in that prompt's hits)``;
* vector — the best cosine between the record's stored embedding and any recent prompt.

Each signal orders the candidates it knows; the two orders are fused with reciprocal-rank fusion
(``1 / (RRF_K + rank)`` per list). Pinned records stay first, candidates neither signal knows keep
the digest's own order after the others, and without recent prompts the order is left untouched.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from agentctx.ml.embedder import query_text
from agentctx.store import search as store_search
from agentctx.store import sessions, vectors
from agentctx.store.db import Store
from agentctx.store.models import Record

if TYPE_CHECKING:  # pragma: no cover - typing only
    from agentctx.context.digest import Rank
    from agentctx.ml.embedder import EmbeddingModel

RRF_K = 60
PROMPT_HITS = 50


class PromptRanker:
    """Ranks digest sections of one project against its recent prompts."""

    def __init__(self, db: Store, project_id: str, prompts: Sequence[str],
                 model: EmbeddingModel | None) -> None:
        self.db = db
        self.project_id = project_id
        self.prompts = [p for p in prompts if p.strip()]
        self.model = model
        self.keyword = self._keyword_strength()
        self._prompt_vectors = (model.encode([query_text(p) for p in self.prompts])
                                if model is not None and self.prompts else None)

    def _keyword_strength(self) -> dict[int, float]:
        strength: dict[int, float] = {}
        for prompt in self.prompts:
            hits = store_search.search(self.db, store_search.Query(
                text=prompt, project_id=self.project_id, include_global=True,
                limit=PROMPT_HITS))
            for position, hit in enumerate(hits, start=1):
                strength[hit.record.pk] = strength.get(hit.record.pk, 0.0) + 1.0 / (
                    RRF_K + position)
        return strength

    def _vector_strength(self, candidates: Sequence[Record]) -> dict[int, float]:
        if self.model is None or self._prompt_vectors is None or not len(self._prompt_vectors):
            return {}
        stored = vectors.vectors_for(self.db, [r.pk for r in candidates], self.model.name)
        if not stored:
            return {}
        import numpy as np  # late: numpy costs 80 ms at every CLI start

        pks = list(stored)
        matrix = np.stack([stored[pk] for pk in pks]).astype(np.float64)
        best = (matrix @ self._prompt_vectors.astype(np.float64).T).max(axis=1)
        return {pk: round(float(value), 6) for pk, value in zip(pks, best, strict=True)}

    def __call__(self, section: str, candidates: list[Record]) -> list[Record]:
        """Reorder one section's candidates (never adds or drops any)."""
        if not self.prompts or len(candidates) < 2:
            return list(candidates)
        fused: dict[int, float] = {}
        for strength in (self.keyword, self._vector_strength(candidates)):
            known = [r for r in candidates if r.pk in strength]
            known.sort(key=lambda r: -strength[r.pk])  # stable: ties keep the digest's order
            for position, record in enumerate(known, start=1):
                fused[record.pk] = fused.get(record.pk, 0.0) + 1.0 / (RRF_K + position)
        order = {r.pk: index for index, r in enumerate(candidates)}
        return sorted(candidates, key=lambda r: (not r.pinned, r.pk not in fused,
                                                 -fused.get(r.pk, 0.0), order[r.pk]))


def ranker(db: Store, project_id: str, model: EmbeddingModel | None, *,
           prompts: int = 20) -> Rank:
    """The ranker for one project's digest (keyword only when ``model`` is ``None``)."""
    return PromptRanker(db, project_id, sessions.recent_prompts(db, project_id, limit=prompts),
                        model)
