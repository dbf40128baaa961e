"""Offline consolidation: embeddings, vector index, near-duplicates, decay scores, archive, digests.

Run it with :func:`agentctx.consolidate.run.consolidate` (``agentctx consolidate``). Importing this
package is cheap (no numpy, no model2vec); ``agentctx status`` lists what is left to decide:

* :func:`merge_candidates` ``(db, project_id)`` — near-duplicate pairs waiting for a merge;
* :func:`prune_candidates` ``(db, project_id)`` — records whose score stayed under
  ``prune_score`` for more than ``prune_after_days`` days (never deleted automatically).
"""

from __future__ import annotations

from agentctx.consolidate.candidates import (
    MergeCandidate,
    PruneCandidate,
    merge_candidates,
    prune_candidates,
)

__all__ = ["MergeCandidate", "PruneCandidate", "merge_candidates", "prune_candidates"]
