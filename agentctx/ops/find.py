"""The one search entry every face calls: the store's search fused with the caller's vector side.

A face brings its own vector side (:class:`agentctx.store.hybrid.VectorSide`): none (keywords
only: ``agentctx search --keyword``), :func:`stored_vectors` (the query side file with the
store's vectors: the CLI, the TUI and the web view, which live for one command or one page),
or a long-lived process's in-memory index (the MCP server's
:class:`~agentctx.store.hybrid.IndexedVectors`). Every side selects and scores alike, so the same
query gives the same hits, in the same order, on every face over the same store. The hook's own
side, :func:`hook_vectors` (:class:`agentctx.store.vecside.LeanVectors`: the standard-library
vector lists, or vec0), is the one its per-prompt judgement asks for candidates by meaning;
``agentctx preview``, the TUI's preview pane and the benchmarks run that same judgement, and
this entry takes the side as it takes the others.

Faces that search as the user types (the TUI and the web view) pass ``substrings``: when no
record has a word of the text yet ("conn"), a substring scan finds "Connect".
"""

from __future__ import annotations

from typing import NamedTuple

from agentctx.store import search as store_search
from agentctx.store.db import Store
from agentctx.store.hybrid import MIN_COSINE, StoredVectors, VectorSide, hybrid_search
from agentctx.store.models import Hit
from agentctx.store.search import Query
from agentctx.store.vecside import LeanVectors


class Found(NamedTuple):
    """A search's hits, best first, and how they were found."""

    hits: list[Hit]
    mode: str  # hybrid (keywords and vectors), keyword, or substring (typing, nothing by words)
    note: str = ""  # why the search was keyword only ("" when there was no vector side to ask)

    def describe(self) -> str:
        """The mode with its reason, as one phrase: ``keyword (no query side file: …)``."""
        return f"{self.mode} ({self.note})" if self.note else self.mode


def search(db: Store, query: Query, side: VectorSide | None = None, *,
           substrings: bool = False) -> Found:
    """Search ``query`` with the caller's vector ``side`` (``None``: keywords only); at most
    ``query.limit`` hits, each passing the query's selection."""
    hits = hybrid_search(db, query, side, min_cosine=MIN_COSINE)
    if side is None:
        mode, note = "keyword", ""
    elif side.note:
        mode, note = "keyword", side.note
    else:
        mode, note = "hybrid", ""
    if not hits and substrings and query.backend == "fts":
        hits = store_search.search(db, query._replace(backend="like"))
        if hits:
            mode = "substring"
    return Found(hits, mode, note)


def stored_vectors(db: Store) -> VectorSide:
    """The vector side of a short-lived face: the query side file and the store's vectors."""
    return StoredVectors(db)


def hook_vectors(db: Store) -> VectorSide:
    """The hook's vector side: the prompt embedded by the query side file (standard library),
    its nearest records by the vector lists (:mod:`agentctx.store.vecside`)."""
    return LeanVectors(db)
