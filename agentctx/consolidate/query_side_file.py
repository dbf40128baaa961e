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

from agentctx.core import config
from agentctx.ml.embedder import EmbeddingModel
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

    Never raises: a model without a usable side file, or any failure, leaves the store with no
    registered side file (the semantic check unavailable) and says why.
    """
    try:
        spec, why = _supported(model.static)
        if spec is not None:
            return _write_and_register(db, model, spec, home)
        outcome = f"unavailable: {why}"
    except (OSError, ValueError, TypeError, AttributeError) as exc:
        outcome = f"unavailable ({type(exc).__name__}: {exc})"
    querymodel.unregister(db)
    return outcome


def _supported(static: Any) -> tuple[dict[str, Any] | None, str]:
    """The tokenizer's WordPiece settings when the side file can reproduce the model, else
    ``None`` and why not."""
    spec, why = _tokenizer_spec(static)
    if spec is None:
        return None, why
    if getattr(static, "weights", None) is not None or \
            getattr(static, "token_mapping", None) is not None:
        return None, "the model weights or remaps its tokens"
    kind, dims = getattr(static.embedding, "dtype", None), getattr(static.embedding, "ndim", 0)
    if kind is None or kind.kind != "f" or dims != 2:
        return None, f"its vectors are {kind} (quantized)"
    return spec, ""


def _write_and_register(db: Store, model: EmbeddingModel, spec: dict[str, Any],
                        home: Path | None) -> str:
    path = side_file_path(model.name, home)
    source = source_fingerprint(model)
    meta = querymodel.side_file_meta(path)
    fresh = (meta.get("source") == source and meta.get("format") == str(querymodel.FORMAT)
             and meta.get("complete") == "1")
    if not fresh:
        import numpy as np  # late: numpy costs 80 ms at every CLI start

        half = np.asarray(model.static.embedding).astype("<f2")
        vocab: dict[str, int] = model.static.tokenizer.get_vocab()
        rows = ((token, half[index].tobytes()) for token, index in vocab.items()
                if 0 <= index < half.shape[0])
        querymodel.write(path, model=model.name, source=source, dim=int(half.shape[1]),
                         unk=spec.get("unk_token"),
                         prefix=str(spec.get("continuing_subword_prefix") or "##"),
                         max_chars=int(spec.get("max_input_chars_per_word") or 100), rows=rows)
    if querymodel.registered(db) != (model.name, os.fspath(path)):
        querymodel.register(db, model.name, path)
    return "written" if not fresh else "current"
