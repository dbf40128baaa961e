"""The plain-SQLite-FTS5 baseline: what a bare FTS5 table gives, computed in the same run.

Exactly this, and nothing more:

* an in-memory SQLite database with ``CREATE VIRTUAL TABLE turns USING fts5(content)`` — FTS5's
  defaults: the ``unicode61`` tokenizer, no stemming, one column;
* one row per turn holding the same (cut) text the store ingests;
* the query: the question's distinct words (``unicode61``-style: runs of letters and digits,
  lower-cased), minus :data:`STOP_WORDS`, each double-quoted, joined with ``OR``;
* ``SELECT rowid FROM turns WHERE turns MATCH ? ORDER BY rank LIMIT k`` (``rank`` is FTS5's BM25).

It is a measuring stick, not a search agentctx uses: it lives in its own throwaway connection,
never in a store. It sits in ``agentctx.store`` because that is where all of agentctx's SQL is.
"""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Sequence

# A deliberately minimal stop list: the function words of a question.
STOP_WORDS = frozenset("""
a an and are as at be but by can could did do does for from had has have how i if in is it me my
of on or our so than that the their them then there these they this to was we were what when
where which who whom why will with would you your
""".split())

_WORD = re.compile(r"[^\W_]+")


def query_words(text: str) -> list[str]:
    """The question's distinct words in order, stop words dropped."""
    seen: dict[str, None] = {}
    for word in _WORD.findall(text.lower()):
        if word not in STOP_WORDS:
            seen.setdefault(word, None)
    return list(seen)


def match_expression(text: str) -> str:
    """The FTS5 MATCH expression for ``text`` (empty when no word is left)."""
    return " OR ".join('"' + word.replace('"', '""') + '"' for word in query_words(text))


class Fts5Baseline:
    """A bare FTS5 table over a list of documents, searched by keys."""

    def __init__(self, documents: Sequence[tuple[str, str]]) -> None:
        """``documents`` are ``(key, text)`` pairs; rows are numbered in this order."""
        self._keys = [key for key, _ in documents]
        self._conn = sqlite3.connect(":memory:")
        self._conn.execute("CREATE VIRTUAL TABLE turns USING fts5(content)")
        self._conn.executemany("INSERT INTO turns (rowid, content) VALUES (?, ?)",
                               [(index + 1, text) for index, (_, text) in enumerate(documents)])

    def search(self, text: str, limit: int) -> list[str]:
        """The keys of the best ``limit`` documents for ``text``, best first."""
        expression = match_expression(text)
        if not expression or limit <= 0:
            return []
        rows = self._conn.execute("SELECT rowid FROM turns WHERE turns MATCH ? ORDER BY rank "
                                  "LIMIT ?", (expression, limit)).fetchall()
        return [self._keys[row[0] - 1] for row in rows]

    def close(self) -> None:
        """Drop the in-memory table."""
        self._conn.close()
