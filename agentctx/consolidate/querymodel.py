"""Write the embedding model's query side file, so hooks can embed a prompt without numpy.

See :mod:`agentctx.store.querymodel` for the reader. Consolidation calls :func:`ensure` once per
run with the loaded model: when the side file for this model (same name, same weights) exists it
is only registered in the store; otherwise it is written first (about a second for a
30,000-token vocabulary). A model whose tokenizer is not a lower-casing BERT WordPiece, or whose
vectors are quantized or weighted, gets no side file, and the reason is returned.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Any

from agentctx import config
from agentctx.consolidate.embed import EmbeddingModel
from agentctx.store import querymodel
from agentctx.store.db import Store

SIDE_DIR = "query"


def side_file_path(model_name: str, home: Path | None = None) -> Path:
    """Where ``model_name``'s side file lives: ``<home>/models/query/<hash>.db``."""
    digest = hashlib.sha256(model_name.encode("utf-8")).hexdigest()[:16]
    return (home or config.ensure_home()) / "models" / SIDE_DIR / f"{digest}.db"


def _weights_file(folder: Path) -> Path | None:
    for candidate in (folder / "model.safetensors",
                      folder / "0_StaticEmbedding" / "model.safetensors"):
        if candidate.is_file():
            return candidate
    return None


def source_fingerprint(model: EmbeddingModel) -> str:
    """The model's name and its weights file's size and modification time."""
    weights = _weights_file(model.folder)
    if weights is None:
        return f"{model.name}|no-weights-file"
    stat = weights.stat()
    return f"{model.name}|{stat.st_size}|{stat.st_mtime_ns}"


def _tokenizer_spec(static: Any) -> tuple[dict[str, Any] | None, str]:
    """The WordPiece settings of the model's tokenizer, or ``None`` and why not."""
    try:
        spec = json.loads(static.tokenizer.to_str())
    except Exception as exc:  # tokenizers raises its own exception types
        return None, f"cannot read the tokenizer ({type(exc).__name__})"
    model = spec.get("model") or {}
    if model.get("type") != "WordPiece":
        return None, f"its tokenizer is {model.get('type') or 'unknown'}, not WordPiece"
    normalizer = spec.get("normalizer") or {}
    if normalizer.get("type") != "BertNormalizer" or not normalizer.get("lowercase", False):
        return None, "its tokenizer does not lower-case text like BERT"
    pre = (spec.get("pre_tokenizer") or {}).get("type")
    if pre not in ("BertPreTokenizer", "Whitespace", "WhitespaceSplit"):
        return None, f"its tokenizer splits words with {pre or 'nothing'}"
    return model, ""


def ensure(db: Store, model: EmbeddingModel, home: Path | None = None) -> str:
    """Make the side file of ``model`` current and registered; returns what happened.

    Never raises: any failure leaves the semantic check unavailable and says why.
    """
    try:
        return _ensure(db, model, home)
    except (OSError, ValueError, TypeError, AttributeError) as exc:
        querymodel.unregister(db)
        return f"unavailable ({type(exc).__name__}: {exc})"


def _ensure(db: Store, model: EmbeddingModel, home: Path | None) -> str:
    static = model.static
    spec, why = _tokenizer_spec(static)
    if spec is None:
        querymodel.unregister(db)
        return f"unavailable: {why}"
    if getattr(static, "weights", None) is not None or \
            getattr(static, "token_mapping", None) is not None:
        querymodel.unregister(db)
        return "unavailable: the model weights or remaps its tokens"
    import numpy as np

    embedding = np.asarray(static.embedding)
    if embedding.dtype.kind != "f" or embedding.ndim != 2:
        querymodel.unregister(db)
        return f"unavailable: its vectors are {embedding.dtype} (quantized)"
    path = side_file_path(model.name, home)
    source = source_fingerprint(model)
    meta = querymodel.side_file_meta(path)
    fresh = (meta.get("source") == source and meta.get("format") == str(querymodel.FORMAT)
             and meta.get("complete") == "1")
    if not fresh:
        half = embedding.astype("<f2")
        vocab: dict[str, int] = static.tokenizer.get_vocab()
        rows = ((token, half[index].tobytes()) for token, index in vocab.items()
                if 0 <= index < half.shape[0])
        querymodel.write(path, model=model.name, source=source, dim=int(half.shape[1]),
                         unk=spec.get("unk_token"),
                         prefix=str(spec.get("continuing_subword_prefix") or "##"),
                         max_chars=int(spec.get("max_input_chars_per_word") or 100), rows=rows)
    if querymodel.registered(db) != (model.name, os.fspath(path)):
        querymodel.register(db, model.name, path)
    return "written" if not fresh else "current"
