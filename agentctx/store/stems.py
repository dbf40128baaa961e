"""Porter stems of words, from SQLite's own FTS5 ``porter unicode61`` tokenizer.

The store's full-text index stems with FTS5's porter tokenizer; comparing texts outside the index
(the drift scan matches records against CLAUDE.md) must stem the same way, so "migrations" and
"migrate" meet as they do in a search. The words go through an in-memory FTS5 table and come back
through an ``fts5vocab`` instance table: no stemmer is written by hand. Stems are cached for the
life of the process. Without FTS5 a word is its own stem.
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Iterable

_CACHE: dict[str, str] = {}
_LOCK = threading.Lock()
_CACHE_MAX = 200_000
_BATCH = 5000


def stems(words: Iterable[str]) -> dict[str, str]:
    """The porter stem of each word (already folded and split as unicode61 splits them)."""
    wanted = list(dict.fromkeys(words))
    with _LOCK:
        unknown = [w for w in wanted if w not in _CACHE]
    if unknown:
        found = _stem(unknown)
        with _LOCK:
            if len(_CACHE) + len(found) > _CACHE_MAX:
                _CACHE.clear()
            _CACHE.update(found)
    with _LOCK:
        return {w: _CACHE.get(w, w) for w in wanted}


def _stem(words: list[str]) -> dict[str, str]:
    try:
        conn = sqlite3.connect(":memory:")
    except sqlite3.Error:
        return {w: w for w in words}
    try:
        conn.execute("CREATE VIRTUAL TABLE words USING fts5(word, tokenize='porter unicode61')")
        conn.execute("CREATE VIRTUAL TABLE words_terms USING fts5vocab(words, instance)")
    except sqlite3.OperationalError:  # no FTS5 in this SQLite
        conn.close()
        return {w: w for w in words}
    result: dict[str, str] = {}
    try:
        for start in range(0, len(words), _BATCH):
            chunk = words[start:start + _BATCH]
            conn.execute("DELETE FROM words")
            conn.executemany("INSERT INTO words (rowid, word) VALUES (?, ?)",
                             [(i + 1, w) for i, w in enumerate(chunk)])
            first: dict[int, str] = {}
            for doc, term in conn.execute("SELECT doc, term FROM words_terms ORDER BY doc, offset"):
                first.setdefault(int(doc), str(term))
            for i, word in enumerate(chunk):
                result[word] = first.get(i + 1, word)
    finally:
        conn.close()
    return result
