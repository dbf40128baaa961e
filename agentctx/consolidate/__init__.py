"""Offline consolidation: embeddings, vector index, near-duplicates, decay scores, archive, digests.

Run it with :func:`agentctx.consolidate.run.consolidate` (``agentctx consolidate``). What it leaves
for a person to decide is read from the store: :func:`agentctx.store.upkeep.merge_candidates`
(near-duplicate pairs waiting for a merge) and :func:`agentctx.store.upkeep.prune_candidates`
(records whose score stayed under ``prune_score`` for more than ``prune_after_days`` days, never
deleted automatically).
"""
