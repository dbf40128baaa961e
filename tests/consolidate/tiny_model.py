"""A tiny model2vec model with hand-made vectors, built in the test (no network, no torch).

Each vocabulary word points mostly along its topic's axis, so texts about one topic embed close
together and texts about different topics far apart — deterministically.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

TOPICS: dict[str, tuple[str, ...]] = {
    "storage": ("sqlite", "database", "storage", "wal", "schema", "migration", "index"),
    "python": ("python", "typing", "mypy", "pydantic", "module", "package"),
    "hooks": ("hook", "hooks", "claude", "session", "prompt", "digest"),
    "testing": ("test", "tests", "pytest", "fixture", "ci", "coverage"),
    "auth": ("auth", "login", "token", "oauth", "password", "jwt"),
    "deploy": ("deploy", "docker", "kubernetes", "release", "staging"),
    "frontend": ("react", "frontend", "css", "component", "browser"),
    "cache": ("cache", "redis", "ttl", "eviction", "memory"),
}
DIM = len(TOPICS)


def vocabulary() -> tuple[list[str], np.ndarray]:
    """The words and their vectors (row i belongs to word i)."""
    words = ["[UNK]", "[PAD]"]
    rows = [np.zeros(DIM), np.zeros(DIM)]
    for axis, members in enumerate(TOPICS.values()):
        for offset, word in enumerate(members):
            vector = np.zeros(DIM)
            vector[axis] = 1.0
            vector[(axis + 1 + offset) % DIM] = 0.05 * (offset + 1)
            words.append(word)
            rows.append(vector)
    return words, np.asarray(rows, dtype=np.float32)


def build(folder: Path) -> Path:
    """Save the tiny model into ``folder`` (model2vec layout) and return it."""
    from model2vec import StaticModel
    from tokenizers import Tokenizer
    from tokenizers.models import WordLevel
    from tokenizers.normalizers import Lowercase
    from tokenizers.pre_tokenizers import Whitespace

    words, vectors = vocabulary()
    tokenizer = Tokenizer(WordLevel(vocab={w: i for i, w in enumerate(words)}, unk_token="[UNK]"))
    tokenizer.normalizer = Lowercase()
    tokenizer.pre_tokenizer = Whitespace()
    model = StaticModel(vectors=vectors, tokenizer=tokenizer, normalize=True)
    model.save_pretrained(folder)
    return folder


def topic_vector(topic: str) -> np.ndarray:
    """The unit axis of one topic (what a one-topic text embeds close to)."""
    vector = np.zeros(DIM, dtype=np.float32)
    vector[list(TOPICS).index(topic)] = 1.0
    return vector


# A WordPiece vocabulary over the same topics: whole words, plus pieces that spell "sqlitedb"
# as "sqlite ##db" and "pytests" as "pytest ##s".
PIECES = ("##db", "##s")


def build_wordpiece(folder: Path) -> Path:
    """Save a tiny model with a BERT-style WordPiece tokenizer into ``folder`` and return it."""
    from model2vec import StaticModel
    from tokenizers import Tokenizer
    from tokenizers.models import WordPiece
    from tokenizers.normalizers import BertNormalizer
    from tokenizers.pre_tokenizers import BertPreTokenizer

    words, vectors = vocabulary()
    extra = np.zeros((len(PIECES), DIM), dtype=np.float32)
    extra[0, list(TOPICS).index("storage")] = 1.0
    extra[1, list(TOPICS).index("testing")] = 0.5
    vocab = {w: i for i, w in enumerate([*words, *PIECES])}
    tokenizer = Tokenizer(WordPiece(vocab=vocab, unk_token="[UNK]"))
    tokenizer.normalizer = BertNormalizer(lowercase=True)
    tokenizer.pre_tokenizer = BertPreTokenizer()
    model = StaticModel(vectors=np.vstack([vectors, extra]), tokenizer=tokenizer, normalize=True)
    model.save_pretrained(folder)
    return folder
