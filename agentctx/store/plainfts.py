"""A plain FTS5 table in memory: what a bare SQLite full-text index gives, nothing more.

FTS5's defaults — the ``unicode61`` tokenizer, no stemming, one column — in a throwaway in-memory
connection of its own, never in a store. It is the measuring stick of the benchmarks' plain-FTS5
baseline (:mod:`agentctx.benchmarks.fts_baseline` decides what goes in and what is asked); it
lives here because all of agentctx's SQL does.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence


class PlainFts:
    """A bare FTS5 table over ``texts``, searched by MATCH expressions."""

    def __init__(self, texts: Sequence[str]) -> None:
        """Index ``texts``; a hit is named by its position in them."""
        self._conn = sqlite3.connect(":memory:")
        self._conn.execute("CREATE VIRTUAL TABLE turns USING fts5(content)")
        self._conn.executemany("INSERT INTO turns (rowid, content) VALUES (?, ?)",
                               [(index + 1, text) for index, text in enumerate(texts)])

    def match(self, expression: str, limit: int) -> list[int]:
        """The positions of the best ``limit`` texts for an FTS5 MATCH ``expression``, best
        first (``rank``: FTS5's BM25)."""
        rows = self._conn.execute("SELECT rowid FROM turns WHERE turns MATCH ? ORDER BY rank "
                                  "LIMIT ?", (expression, limit)).fetchall()
        return [int(row[0]) - 1 for row in rows]

    def close(self) -> None:
        """Drop the in-memory table."""
        self._conn.close()
