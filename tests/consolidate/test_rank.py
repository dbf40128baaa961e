"""The digest ranker: keyword and vector relevance to recent prompts, fused by rank."""

from __future__ import annotations

from agentctx.consolidate.rank import PromptRanker
from agentctx.consolidate.run import consolidate
from agentctx.ml.embedder import EmbeddingModel
from agentctx.store import Store
from agentctx.store.models import Project
from tests.consolidate.conftest import add


def test_records_about_the_recent_prompts_come_first(store: Store, project: Project,
                                                     tiny: EmbeddingModel) -> None:
    auth = add(store, project, "decision", "Login uses oauth token", "Sessions expire.")
    cache = add(store, project, "decision", "Keep a ttl on every key", "Eviction is lru.")
    css = add(store, project, "decision", "React component css", "One file per component.")
    pinned = add(store, project, "decision", "Docker release to staging", "", pinned=True)
    consolidate(store, model=tiny)
    candidates = [pinned, auth, cache, css]
    # Only "eviction" matches words; the vector side also ranks `cache` first (cache topic).
    ranked = PromptRanker(store, project.id, ["redis eviction problems"], tiny)("decisions",
                                                                               candidates)
    assert [r.id for r in ranked] == [pinned.id, cache.id, auth.id, css.id]
    keyword_only = PromptRanker(store, project.id, ["oauth login broken"], None)(
        "decisions", candidates)
    assert [r.id for r in keyword_only] == [pinned.id, auth.id, cache.id, css.id]
    assert PromptRanker(store, project.id, [], tiny)("decisions", candidates) == candidates
