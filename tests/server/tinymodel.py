"""A tiny, deterministic model2vec model built in the test (no network): words map to topics.

Every word of a topic gets the same one-hot vector, so texts about the same topic are similar
(cosine 1 for pure texts) even when they share no word — which keyword search cannot see.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
from model2vec import StaticModel
from tokenizers import Tokenizer
from tokenizers.models import WordLevel
from tokenizers.normalizers import Lowercase
from tokenizers.pre_tokenizers import Whitespace

from agentctx.store.db import Store

TOPICS: dict[str, tuple[str, ...]] = {
    "storage": ("database", "sqlite", "postgres", "storage", "persistence", "wal", "schema"),
    "testing": ("test", "tests", "pytest", "unittest", "fixture", "coverage"),
    "deploy": ("deploy", "deployment", "kubernetes", "docker", "container", "release"),
    "style": ("naming", "formatting", "style", "lint", "ruff", "indentation"),
}
MODEL_NAME = "tiny-topics"


class TinyModel:
    """The embedding-model contract the server expects: ``name``, ``dim``, ``encode``."""

    def __init__(self, name: str = MODEL_NAME) -> None:
        words = ["[UNK]", "[PAD]"]
        topic_of: list[int] = [-1, -1]
        for index, members in enumerate(TOPICS.values()):
            words.extend(members)
            topic_of.extend([index] * len(members))
        tokenizer = Tokenizer(WordLevel(vocab={w: i for i, w in enumerate(words)},
                                        unk_token="[UNK]"))
        tokenizer.normalizer = Lowercase()
        tokenizer.pre_tokenizer = Whitespace()
        # One extra "noise" dimension so that no vector is all zeros for unknown words.
        vectors = np.zeros((len(words), len(TOPICS) + 1), dtype=np.float32)
        for row, topic in enumerate(topic_of):
            vectors[row, topic if topic >= 0 else len(TOPICS)] = 1.0
        vectors[1] = 0.0
        self.model = StaticModel(vectors=vectors, tokenizer=tokenizer, normalize=True)
        self.name = name
        self.dim = int(self.model.dim)

    def encode(self, texts: list[str]) -> Any:
        """L2-normalized float32 rows, one per text."""
        return self.model.encode(texts, use_multiprocessing=False).astype(np.float32)

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
