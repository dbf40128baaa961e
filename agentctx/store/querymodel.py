"""The query side of the embedding model, in the standard library: a prompt's vector in a hook.

A model2vec model is a table of token vectors: a text's embedding is the mean of its tokens'
rows. Consolidation (which loads the real model) writes that table, with the vocabulary, into a
side file under ``<home>/models/query`` and registers it in the store's ``meta``; the per-prompt
hook then embeds the prompt's terms with a few indexed lookups — no numpy, no tokenizers — and
compares it with the stored vectors of the records it is about to inject (the semantic check in
:func:`agentctx.context.judgement.judge`).

Only WordPiece vocabularies (BERT-style, lower-cased: what model2vec distils from most sentence
encoders) are written; for any other tokenizer the check is simply unavailable. Terms arrive
folded and split as the FTS index splits them (:func:`agentctx.store.textproc.query_terms`), which
for a lower-casing BERT tokenizer leaves only WordPiece to do; CJK ideographs are split one per
token, as BERT does.

The side file is a cache of the model folder: it is rebuilt when the model (its name, or its
weights' size and modification time) changes, and every reader treats a missing, partial or
foreign file as "no semantic check".
"""

from __future__ import annotations

import json
import math
import operator
import os
import re
import sqlite3
import struct
from collections import Counter
from collections.abc import Iterable, Sequence

from agentctx.store.db import Store

FORMAT = 1
META_KEY = "query_model"
# Longer words are left out of a query's vector (see QueryModel.tokens).
MAX_WORD_CHARS = 40
# Tokens of a text the model reads (model2vec's max_length); the rest is left out.
MAX_TOKENS = 512
# A text's words as BERT's basic tokenizer splits them: runs of letters and digits, and each
# punctuation mark or symbol on its own (the underscore too).
_TEXT_WORD = re.compile(r"[^\W_]+|[^\w\s]|_")
# Bytes per stored component: vectors are kept as float16 (half the size; cosine is unaffected
# at the precision the check uses).
_HALF = 2


class QueryModel:
    """An open side file: embeds query terms the way the model embeds text."""

    def __init__(self, conn: sqlite3.Connection, model: str, dim: int, unk: str | None,
                 prefix: str, max_chars: int, max_piece: int = MAX_WORD_CHARS) -> None:
        self._conn = conn
        self._max_piece = max(1, max_piece)
        self.model = model
        self.dim = dim
        self._unk = unk
        self._prefix = prefix
        self._max_chars = max_chars
        self._unpack = struct.Struct(f"<{dim}e").unpack

    @classmethod
    def open(cls, path: str | os.PathLike[str]) -> QueryModel | None:
        """The side file at ``path``, or ``None`` when it is missing or not a complete one."""
        if not os.path.isfile(path):
            return None
        try:
            conn = sqlite3.connect(_read_only_uri(path), uri=True)
            meta = dict(conn.execute("SELECT key, value FROM meta").fetchall())
            if int(meta.get("format", 0)) != FORMAT or meta.get("complete") != "1":
                conn.close()
                return None
            return cls(conn, str(meta["model"]), int(meta["dim"]), meta.get("unk") or None,
                       str(meta.get("prefix", "##")), int(meta.get("max_chars", 100)),
                       int(meta.get("max_piece", MAX_WORD_CHARS)))
        except (sqlite3.Error, KeyError, ValueError):
            return None

    def close(self) -> None:
        """Close the side file."""
        self._conn.close()

    def _lookup(self, pieces: Iterable[str]) -> dict[str, bytes]:
        wanted = list(dict.fromkeys(pieces))
        found: dict[str, bytes] = {}
        for start in range(0, len(wanted), 500):
            chunk = wanted[start:start + 500]
            found.update(self._conn.execute(
                f"SELECT token, vector FROM tokens WHERE token IN ({','.join('?' * len(chunk))})",
                chunk).fetchall())
        return found

    def tokens(self, terms: Sequence[str]) -> list[str]:
        """WordPiece tokens of ``terms`` (unknown words dropped, as model2vec drops ``[UNK]``).

        Words longer than :data:`MAX_WORD_CHARS` (hashes, encoded blobs pasted into a prompt)
        are left out: their pieces are noise, and they would cost most of the lookups.
        """
        words = [w for term in terms for w in _split_cjk(term)
                 if len(w) <= min(self._max_chars, MAX_WORD_CHARS)]
        known = self._lookup(words)
        split = self._wordpiece([w for w in dict.fromkeys(words) if w not in known])
        out: list[str] = []
        for word in words:
            out.extend([word] if word in known else split.get(word, []))
        return out

    def _wordpiece(self, words: Sequence[str]) -> dict[str, list[str]]:
        """Greedy longest-match-first over all ``words`` at once, one lookup per round (a round
        takes every word one piece further); a word with an unmatched piece is ``[UNK]``."""
        pieces: dict[str, list[str]] = {word: [] for word in words}
        position = dict.fromkeys(words, 0)
        while position:
            wanted = {word: [self._piece(word, at, end) for end in
                             range(min(len(word), at + self._max_piece), at, -1)]
                      for word, at in position.items()}
            found = self._lookup(p for candidates in wanted.values() for p in candidates)
            for word, candidates in wanted.items():
                match = next((c for c in candidates if c in found), None)
                if match is None:
                    pieces[word] = []
                    del position[word]
                    continue
                pieces[word].append(match)
                position[word] += len(match) - (len(self._prefix) if position[word] else 0)
                if position[word] >= len(word):
                    del position[word]
        return pieces

    def _piece(self, word: str, start: int, end: int) -> str:
        return word[start:end] if start == 0 else self._prefix + word[start:end]

    def encode(self, terms: Sequence[str]) -> tuple[float, ...] | None:
        """The unit vector of ``terms`` (mean of their token rows), ``None`` if none is known."""
        return self._mean(self.tokens(terms))

    def embed_text(self, text: str) -> tuple[float, ...] | None:
        """The unit vector of a whole text as the model embeds it: every word and punctuation
        mark (:func:`text_words`), WordPiece, the first :data:`MAX_TOKENS` tokens, their mean.
        What a record is given at write time, before consolidation embeds it with the model."""
        return self._mean(self.tokens(text_words(text))[:MAX_TOKENS])

    def _mean(self, tokens: Sequence[str]) -> tuple[float, ...] | None:
        if not tokens:
            return None
        rows = self._lookup(tokens)
        total: list[float] = [0.0] * self.dim
        count = 0
        for token, times in Counter(tokens).items():
            blob = rows.get(token)
            if blob is None or len(blob) != self.dim * _HALF:
                continue
            count += times
            row = self._unpack(blob)
            total = list(map(operator.add, total, row if times == 1 else
                             [times * value for value in row]))
        if not count:
            return None
        return unit(total)


def text_words(text: str) -> list[str]:
    """The words of ``text`` as a lower-casing BERT tokenizer splits them before WordPiece:
    folded (lower case, no accents), split at spaces and around each punctuation mark."""
    from agentctx.core.words import fold

    return _TEXT_WORD.findall(fold(text))


def _read_only_uri(path: str | os.PathLike[str]) -> str:
    """A read-only SQLite URI for ``path`` (the characters a URI reads specially escaped)."""
    escaped = os.fspath(path)
    for char, code in (("%", "%25"), ("?", "%3f"), ("#", "%23"), (" ", "%20")):
        escaped = escaped.replace(char, code)
    return f"file:{escaped}?mode=ro"


def _split_cjk(term: str) -> list[str]:
    """BERT splits CJK ideographs into one token each; everything else stays whole."""
    if term.isascii() or not any(_is_cjk(ch) for ch in term):
        return [term]
    parts: list[str] = []
    run = ""
    for ch in term:
        if _is_cjk(ch):
            if run:
                parts.append(run)
                run = ""
            parts.append(ch)
        else:
            run += ch
    if run:
        parts.append(run)
    return parts


def _is_cjk(ch: str) -> bool:
    code = ord(ch)
    return (0x4E00 <= code <= 0x9FFF or 0x3400 <= code <= 0x4DBF or 0x20000 <= code <= 0x2A6DF
            or 0x2A700 <= code <= 0x2B73F or 0x2B740 <= code <= 0x2B81F
            or 0x2B820 <= code <= 0x2CEAF or 0xF900 <= code <= 0xFAFF
            or 0x2F800 <= code <= 0x2FA1F)


def unit(vector: Sequence[float]) -> tuple[float, ...] | None:
    """``vector`` scaled to length 1 (``None`` for a zero vector)."""
    norm = math.sqrt(sum(map(operator.mul, vector, vector)))
    if norm == 0.0:
        return None
    scale = 1.0 / norm
    return tuple(v * scale for v in vector)


def cosine(a: Sequence[float], b: Sequence[float]) -> float:
    """The cosine of two vectors (0.0 when either is zero or they differ in length)."""
    if len(a) != len(b):
        return 0.0
    # map(operator.mul, …) runs in C: a few times faster than a generator on the hook's path.
    dot = sum(map(operator.mul, a, b))
    norm = math.sqrt(sum(map(operator.mul, a, a)) * sum(map(operator.mul, b, b)))
    return dot / norm if norm else 0.0


def record_vectors(db: Store, model: str, pks: Sequence[int]) -> dict[int, tuple[float, ...]]:
    """The stored vectors of ``pks`` for ``model``, read with the standard library."""
    if not pks:
        return {}
    rows = db.rows(f"SELECT record_pk, dim, vector FROM embeddings WHERE model = ? AND "
                   f"record_pk IN ({','.join('?' * len(pks))})", [model, *pks])
    out: dict[int, tuple[float, ...]] = {}
    for pk, dim, blob in rows:
        if len(blob) == dim * 4:
            out[pk] = struct.unpack(f"<{dim}f", blob)
    return out


def similarities(db: Store, terms: Sequence[str],
                 hits: Sequence[tuple[int, str | None]]) -> list[float | None] | None:
    """The cosine between ``terms`` and each hit, given as ``(pk, via id)``; ``None`` overall
    when the store has no usable side file or the terms embed to nothing.

    A hit surfaced through a superseded record (``via``) takes the better of its own cosine and
    that record's, since the prompt may name the old fact. A hit without a stored vector gets
    ``None``.
    """
    model = open_registered(db)
    if model is None:
        return None
    try:
        query = model.encode(terms)
    finally:
        model.close()
    if query is None:
        return None
    return similarities_to(db, model.model, query, hits)


def similarities_to(db: Store, model: str, query: Sequence[float],
                    hits: Sequence[tuple[int, str | None]]) -> list[float | None]:
    """:func:`similarities` for a query already embedded with ``model``'s side file."""
    via_pks: dict[str, int] = {}
    wanted_via = [via for _pk, via in hits if via]
    if wanted_via:
        via_pks = {str(row[0]): int(row[1]) for row in db.rows(
            f"SELECT id, pk FROM records WHERE id IN ({','.join('?' * len(wanted_via))})",
            wanted_via)}
    pks = [pk for pk, _via in hits] + list(via_pks.values())
    stored = record_vectors(db, model, pks)
    out: list[float | None] = []
    for pk, via in hits:
        found = [cosine(query, stored[p]) for p in (pk, via_pks.get(via or "", -1))
                 if p in stored]
        out.append(max(found) if found else None)
    return out


# ------------------------------------------------------------------------------ registration


def registered(db: Store) -> tuple[str, str] | None:
    """The registered side file of the store, as ``(model, path)``, or ``None``."""
    value = db.meta_get(META_KEY)
    if not value:
        return None
    try:
        entry = json.loads(value) if isinstance(value, str) else value
        return str(entry["model"]), str(entry["path"])
    except (ValueError, KeyError, TypeError):
        return None


def open_registered(db: Store) -> QueryModel | None:
    """The store's side file, open, when it is registered, present and for the same model."""
    entry = registered(db)
    if entry is None:
        return None
    model = QueryModel.open(entry[1])
    if model is not None and model.model != entry[0]:
        model.close()
        return None
    return model


def register(db: Store, model: str, path: str | os.PathLike[str]) -> None:
    """Record that ``model``'s side file is at ``path``."""
    with db.write():
        db.meta_set(META_KEY, json.dumps({"model": model, "path": os.fspath(path),
                                          "format": FORMAT}))


def unregister(db: Store) -> None:
    """Forget the store's side file (the semantic check is then unavailable)."""
    with db.write():
        db.execute("DELETE FROM meta WHERE key = ?", (META_KEY,))


# ---------------------------------------------------------------------------------- writing


def side_file_meta(path: str | os.PathLike[str]) -> dict[str, str]:
    """The ``meta`` of a side file (empty when it is missing or unreadable)."""
    if not os.path.isfile(path):
        return {}
    try:
        conn = sqlite3.connect(_read_only_uri(path), uri=True)
        try:
            return {str(k): str(v) for k, v in conn.execute("SELECT key, value FROM meta")}
        finally:
            conn.close()
    except sqlite3.Error:
        return {}


def write(path: str | os.PathLike[str], *, model: str, source: str, dim: int, unk: str | None,
          prefix: str, max_chars: int, rows: Iterable[tuple[str, bytes]]) -> None:
    """Write a side file atomically: ``rows`` are (token, float16 vector bytes) pairs.

    ``source`` fingerprints the model's weights; the file is complete only once renamed into
    place, so a crash leaves the old file (or none), never a partial one.
    """
    target = os.fspath(path)
    folder, name = os.path.split(target)
    os.makedirs(folder or ".", exist_ok=True)
    temporary = os.path.join(folder, f".{name}.{os.getpid()}.tmp")
    if os.path.exists(temporary):
        os.unlink(temporary)
    conn = sqlite3.connect(temporary)
    try:
        conn.execute("PRAGMA journal_mode = OFF")
        conn.execute("PRAGMA synchronous = OFF")
        conn.execute("CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT) WITHOUT ROWID")
        conn.execute("CREATE TABLE tokens (token TEXT PRIMARY KEY, vector BLOB NOT NULL) "
                     "WITHOUT ROWID")
        size = dim * _HALF
        conn.executemany("INSERT OR IGNORE INTO tokens VALUES (?, ?)",
                         ((token, blob) for token, blob in rows if len(blob) == size))
        # The longest piece, without its prefix: no lookup needs to try a longer one.
        longest = conn.execute("SELECT max(length(CASE WHEN substr(token, 1, ?) = ? THEN "
                               "substr(token, ? + 1) ELSE token END)) FROM tokens",
                               (len(prefix), prefix, len(prefix))).fetchone()[0] or 1
        meta = {"format": str(FORMAT), "model": model, "source": source, "dim": str(dim),
                "unk": unk or "", "prefix": prefix, "max_chars": str(max_chars),
                "max_piece": str(longest), "complete": "1"}
        conn.executemany("INSERT INTO meta VALUES (?, ?)", meta.items())
        conn.commit()
    finally:
        conn.close()
    with open(temporary, "rb") as handle:
        os.fsync(handle.fileno())
    os.replace(temporary, target)
