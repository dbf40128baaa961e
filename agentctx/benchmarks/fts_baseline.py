"""The plain-SQLite-FTS5 baseline: what a bare FTS5 table gives, computed in the same run.

Exactly this, and nothing more:

* an in-memory SQLite database with ``CREATE VIRTUAL TABLE turns USING fts5(content)`` — FTS5's
  defaults: the ``unicode61`` tokenizer, no stemming, one column
  (:class:`agentctx.store.plainfts.PlainFts`);
* one row per turn holding the same (cut) text the store ingests;
* the query: the question's distinct words (``unicode61``-style: runs of letters and digits,
  lower-cased), minus the function words of a question
  (:data:`agentctx.core.words.QUESTION_WORDS`, a deliberately minimal stop list), each
  double-quoted, joined with ``OR``;
* ``SELECT rowid FROM turns WHERE turns MATCH ? ORDER BY rank LIMIT k`` (``rank`` is FTS5's BM25).

It is a measuring stick, not a search agentctx uses.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from agentctx.core.words import QUESTION_WORDS
from agentctx.store.plainfts import PlainFts

_WORD = re.compile(r"[^\W_]+")


def query_words(text: str) -> list[str]:
    """The question's distinct words in order, the function words of a question dropped."""
    seen: dict[str, None] = {}
    for word in _WORD.findall(text.lower()):
        if word not in QUESTION_WORDS:
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
        self._table = PlainFts([text for _, text in documents])

    def search(self, text: str, limit: int) -> list[str]:
        """The keys of the best ``limit`` documents for ``text``, best first."""
        expression = match_expression(text)
        if not expression or limit <= 0:
            return []
        return [self._keys[row] for row in self._table.match(expression, limit)]

    def close(self) -> None:
        """Drop the in-memory table."""
        self._table.close()
