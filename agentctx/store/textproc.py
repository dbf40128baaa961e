"""Query processing: turning what a developer types into FTS5 terms.

A prompt's terms are its tokens as the index splits them (:func:`agentctx.core.words.tokens`),
without stop words (:data:`agentctx.core.words.STOP_WORDS`) or single letters, each quoted for a
MATCH expression so no input is read as FTS5 syntax.
"""

from __future__ import annotations

from agentctx.core.words import STOP_WORDS, tokens

MAX_TERMS = 32


def query_terms(text: str, max_terms: int = MAX_TERMS) -> list[str]:
    """The distinct searchable terms of a prompt or query, in order of first appearance.

    Stop words and single characters are dropped (single digits are kept: "python 3").
    """
    seen: dict[str, None] = {}
    for token in tokens(text):
        if token in STOP_WORDS or (len(token) < 2 and not token.isdigit()):
            continue
        seen.setdefault(token, None)
        if len(seen) >= max_terms:
            break
    return list(seen)


def fts_phrase(term: str) -> str:
    """Quote one term for an FTS5 query so no input can be read as syntax."""
    return '"' + term.replace('"', '""') + '"'
