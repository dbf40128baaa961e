"""The one tiny model2vec model of the tests: hand-made vectors, built in the test (no network).

Words belong to topics. Two flavours of the same vocabulary:

* **leaning** (the default of :func:`build`): each word points mostly along its topic's axis and
  a little towards a neighbour, so texts about one topic embed close together and texts about
  different topics far apart, deterministically, and no two words are identical;
* **exact** (:class:`TinyModel`, ``build(exact=True)``): every word of a topic is that topic's
  unit vector, so texts about the same topic have cosine 1 even when they share no word (what
  keyword search cannot see); an extra axis catches unknown words, so no text embeds to zero.

Either can get a BERT-style WordPiece tokenizer (``wordpiece=True``: what the query side file
needs), with the pieces "##db" and "##s" so that "sqlitedb" is "sqlite ##db" and "pytests" is
"pytest ##s".
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from agentctx.store.db import Store

TOPICS: dict[str, tuple[str, ...]] = {
    "storage": ("sqlite", "database", "storage", "wal", "schema", "migration", "index",
                "postgres", "persistence"),
    "python": ("python", "typing", "mypy", "pydantic", "module", "package"),
    "hooks": ("hook", "hooks", "claude", "session", "prompt", "digest"),
    "testing": ("test", "tests", "pytest", "fixture", "ci", "coverage", "unittest"),
    "auth": ("auth", "login", "token", "oauth", "password", "jwt"),
    "deploy": ("deploy", "docker", "kubernetes", "release", "staging", "deployment", "container"),
    "frontend": ("react", "frontend", "css", "component", "browser"),
    "cache": ("cache", "redis", "ttl", "eviction", "memory"),
    "style": ("naming", "formatting", "style", "lint", "ruff", "indentation"),
}
DIM = len(TOPICS)
MODEL_NAME = "tiny-topics"
PIECES = ("##db", "##s")

Matrix = npt.NDArray[np.float32]


def vocabulary(*, exact: bool = False) -> tuple[list[str], Matrix]:
    """The words and their vectors (row i belongs to word i); exact vectors have one more
    column, the axis of unknown words."""
    width = DIM + 1 if exact else DIM
    words = ["[UNK]", "[PAD]"]
    rows = [np.zeros(width), np.zeros(width)]
    if exact:
        rows[0][DIM] = 1.0
    for axis, members in enumerate(TOPICS.values()):
        for offset, word in enumerate(members):
            vector = np.zeros(width)
            vector[axis] = 1.0
            if not exact:
                vector[(axis + 1 + offset) % DIM] = 0.05 * (offset + 1)
            words.append(word)
            rows.append(vector)
    return words, np.asarray(rows, dtype=np.float32)


def static_model(*, exact: bool = False, wordpiece: bool = False) -> Any:
    """The tiny model as a model2vec ``StaticModel``."""
    from model2vec import StaticModel
    from tokenizers import Tokenizer
    from tokenizers.models import WordLevel, WordPiece
    from tokenizers.normalizers import BertNormalizer, Lowercase
    from tokenizers.pre_tokenizers import BertPreTokenizer, Whitespace

    words, vectors = vocabulary(exact=exact)
    if wordpiece:
        extra = np.zeros((len(PIECES), vectors.shape[1]), dtype=np.float32)
        extra[0, list(TOPICS).index("storage")] = 1.0
        extra[1, list(TOPICS).index("testing")] = 0.5
        vectors = np.vstack([vectors, extra])
        vocab = {w: i for i, w in enumerate([*words, *PIECES])}
        tokenizer = Tokenizer(WordPiece(vocab=vocab, unk_token="[UNK]"))
        tokenizer.normalizer = BertNormalizer(lowercase=True)
        tokenizer.pre_tokenizer = BertPreTokenizer()
    else:
        tokenizer = Tokenizer(WordLevel(vocab={w: i for i, w in enumerate(words)},
                                        unk_token="[UNK]"))
        tokenizer.normalizer = Lowercase()
        tokenizer.pre_tokenizer = Whitespace()
    return StaticModel(vectors=vectors, tokenizer=tokenizer, normalize=True)


def build(folder: Path, *, exact: bool = False, wordpiece: bool = False) -> Path:
    """Save the tiny model into ``folder`` (model2vec layout) and return the folder."""
    static_model(exact=exact, wordpiece=wordpiece).save_pretrained(folder)
    return folder


def build_wordpiece(folder: Path) -> Path:
    """:func:`build` with the WordPiece tokenizer."""
    return build(folder, wordpiece=True)


def topic_vector(topic: str) -> Matrix:
    """The unit axis of one topic (what a one-topic text embeds close to)."""
    vector = np.zeros(DIM, dtype=np.float32)
    vector[list(TOPICS).index(topic)] = 1.0
    return vector


class TinyModel:
    """The exact flavour in memory, with the contract agentctx's embedder has: ``name``,
    ``dim``, ``encode``."""

    def __init__(self, name: str = MODEL_NAME) -> None:
        self.model = static_model(exact=True)
        self.name = name
        self.dim = int(self.model.dim)

    def encode(self, texts: list[str]) -> Matrix:
        """L2-normalized float32 rows, one per text."""
        rows: Matrix = self.model.encode(texts, use_multiprocessing=False).astype(np.float32)
        return rows

    def save(self, folder: Path) -> TinyModel:
        """Write the model as a model2vec folder; the copy is named by the folder's path, as
        agentctx names a local model (so stored vectors match what the server loads)."""
        self.model.save_pretrained(folder)
        return TinyModel(str(folder.resolve()))


def embed_all(db: Store, model: TinyModel) -> int:
    """Store an embedding of every record that has none yet (title and body); returns how many."""
    rows = db.rows("SELECT pk, title, body FROM records WHERE pk NOT IN "
                   "(SELECT record_pk FROM embeddings)")
    if not rows:
        return 0
    vectors = model.encode([f"{row[1]} {row[2]}" for row in rows])
    with db.write():
        for row, vector in zip(rows, vectors, strict=True):
            db.execute("INSERT INTO embeddings (record_pk, model, dim, vector, embedded_at) "
                       "VALUES (?, ?, ?, ?, '2026-01-01T00:00:00.000Z')",
                       (row[0], model.name, model.dim, vector.astype(np.float32).tobytes()))
        db.execute("INSERT INTO meta (key, value) VALUES ('vectors_version', 1) "
                   "ON CONFLICT (key) DO UPDATE SET value = value + 1")
    return len(rows)
