"""The embedding model: model2vec static embeddings, loaded from a folder or fetched once.

Contract (used by consolidation, extraction's preference matching, the MCP server's hybrid
search, the benchmarks and ``agentctx init``):

* :func:`load_model` ``(cfg=None) -> EmbeddingModel | None`` — ``None`` when the ``embeddings``
  knob is off or the model cannot be had; it logs one line saying why, never raises and never
  hangs offline (the hub is probed with a short connect timeout before any download).
* :class:`EmbeddingModel` — ``name`` (the ``embed_model`` value: a hub id, or a folder's absolute
  path), ``dim``, and ``encode(texts) -> np.ndarray`` (float32, one L2-normalized row per text; a
  text made only of unknown tokens gives a zero row).
* :func:`download_model` ``(cfg) -> Path`` — the folder holding the model, downloading it first
  when needed (``agentctx init --download-model``); raises :class:`ModelUnavailable` with a
  one-line reason.
* :func:`embedding_text` — what is embedded for a record: ``[type] title`` then the body;
  :func:`query_text` — what is embedded for a search.

Where the model comes from (the ``embed_model`` knob, ``AGENTCTX_EMBED_MODEL``): an existing local
folder is loaded as is and nothing is downloaded. Anything else is a hub id: it is looked up in
``<home>/models`` (a Hugging Face cache layout) and, when missing, downloaded there once with a
one-line notice. The cache folder is passed to huggingface_hub explicitly — the equivalent of
pointing ``HF_HUB_CACHE`` at ``<home>/models``, which huggingface_hub reads only once, at import —
and ``HF_ENDPOINT`` is read at call time, so a loopback stand-in for the hub works in tests.
``HF_HUB_OFFLINE=1`` forbids downloads.
"""

from __future__ import annotations

import logging
import os
import re
import socket
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from agentctx.core import config
from agentctx.core.background import exclusive
from agentctx.store.textproc import query_terms

if TYPE_CHECKING:  # pragma: no cover - typing only
    import numpy as np  # late: numpy costs 80 ms at every CLI start
    import numpy.typing as npt

log = logging.getLogger("agentctx.embed")

DEFAULT_ENDPOINT = "https://huggingface.co"
PROBE_TIMEOUT_S = 3.0
DOWNLOAD_ETAG_TIMEOUT_S = 10.0
# The files model2vec reads (its three folder layouts) and the model card.
MODEL_FILES = ["config.json", "model.safetensors", "tokenizer.json",
               "config_sentence_transformers.json", "0_StaticEmbedding/model.safetensors",
               "0_StaticEmbedding/tokenizer.json", "README.md", "modules.json"]

_HUB_ID = re.compile(r"[A-Za-z0-9][\w.-]*/[A-Za-z0-9][\w.-]*")
_LOADED: dict[str, EmbeddingModel] = {}
_LOCK = threading.Lock()


class ModelUnavailable(Exception):
    """The embedding model cannot be loaded or fetched; the message says why, in one line."""


class EmbeddingModel:
    """A loaded static embedding model."""

    def __init__(self, name: str, model: Any, folder: Path) -> None:
        self.name = name
        self.folder = folder
        self._model = model
        self.dim = int(model.dim)

    @property
    def static(self) -> Any:
        """The underlying model2vec ``StaticModel`` (its tokenizer and embedding table)."""
        return self._model

    def encode(self, texts: list[str]) -> npt.NDArray[np.float32]:
        """Embed ``texts``: a float32 array with one L2-normalized row per text."""
        import numpy as np  # late: numpy costs 80 ms at every CLI start

        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        raw = self._model.encode(list(texts), normalize=False, use_multiprocessing=False)
        matrix = np.asarray(raw, dtype=np.float32).reshape(len(texts), self.dim)
        norms = np.linalg.norm(matrix, axis=1, keepdims=True)
        norms[norms == 0] = 1.0
        unit: npt.NDArray[np.float32] = (matrix / norms).astype(np.float32)
        return unit

    def __repr__(self) -> str:
        return f"EmbeddingModel({self.name!r}, dim={self.dim})"


# Bumped whenever embedding_text changes: stored vectors of another format are re-embedded.
EMBED_TEXT_FORMAT = 2


def embedding_text(type_: str, valid_from: str, project: str, title: str, body: str) -> str:
    """The text embedded for a record: ``[type] title`` and the body.

    The date and project name are left out (``valid_from`` and ``project`` are accepted for
    callers and future formats): a static model averages its token vectors, and those tokens
    pulled every record towards every other. Measured on LongMemEval, vector-only turn recall@10
    rose from 0.64 to 0.72 without them.
    """
    head = f"[{type_}] {title}".strip()
    body = body.strip()
    return f"{head}\n{body}" if body else head


def query_text(text: str) -> str:
    """What to embed for a search: the query's terms without stop words (the whole text if none).

    A static model averages token vectors, so "I was wondering what we decided about" would pull
    every query towards every other; the terms alone carry the topic.
    """
    terms = query_terms(text)
    return " ".join(terms) if terms else text


def models_dir() -> Path:
    """``<home>/models``: where hub models are cached."""
    return config.ensure_home() / "models"


def _local_folder(value: str) -> Path | None:
    path = Path(value).expanduser()
    if path.is_dir():
        return path.resolve()
    return None


def _looks_like_path(value: str) -> bool:
    """Whether ``value`` cannot be a hub id (``owner/name``)."""
    return _HUB_ID.fullmatch(value) is None


def model_name(cfg: config.Config | None = None) -> str:
    """The configured model's name, as stored beside each vector (folder paths made absolute)."""
    value = (cfg or config.Config.load()).get_str("embed_model")
    folder = _local_folder(value)
    return str(folder) if folder else value


def _cached_snapshot(repo_id: str) -> Path | None:
    """The complete cached snapshot of ``repo_id`` under ``<home>/models`` (no network)."""
    import huggingface_hub  # late: with its errors module, 40 ms at every CLI start
    from huggingface_hub.errors import LocalEntryNotFoundError  # late: 40 ms (httpx, ssl)

    try:
        folder = Path(huggingface_hub.snapshot_download(
            repo_id, repo_type="model", cache_dir=models_dir(), local_files_only=True,
            allow_patterns=MODEL_FILES))
    except (LocalEntryNotFoundError, OSError, ValueError):
        return None
    return folder if _has_model_files(folder) else None


def _has_model_files(folder: Path) -> bool:
    return ((folder / "model.safetensors").exists() or
            (folder / "0_StaticEmbedding" / "model.safetensors").exists())


def _endpoint() -> str:
    return (os.environ.get("HF_ENDPOINT") or DEFAULT_ENDPOINT).rstrip("/")


def _probe(endpoint: str) -> str | None:
    """``None`` when the hub's host accepts a TCP connection quickly, else the reason.

    Runs in a daemon thread with a deadline, so a stalled DNS resolver cannot hang us either.
    """
    parts = urlsplit(endpoint)
    host = parts.hostname or ""
    port = parts.port or (443 if parts.scheme == "https" else 80)
    outcome: list[str | None] = []

    def attempt() -> None:
        try:
            with socket.create_connection((host, port), timeout=PROBE_TIMEOUT_S):
                outcome.append(None)
        except OSError as exc:
            outcome.append(f"cannot reach {host}:{port} ({exc.strerror or exc})")

    worker = threading.Thread(target=attempt, daemon=True)
    worker.start()
    worker.join(PROBE_TIMEOUT_S + 1.0)
    if not outcome:
        return f"cannot reach {host}:{port} (no answer within {PROBE_TIMEOUT_S:g} s)"
    return outcome[0]


def download_model(cfg: config.Config | None = None) -> Path:
    """The folder holding the configured model, downloading a hub model first when needed.

    Prints a one-line notice before a download. Raises :class:`ModelUnavailable` (offline, hub
    unreachable, unknown model, another process downloading it) with a one-line reason.
    """
    cfg = cfg or config.Config.load()
    value = cfg.get_str("embed_model")
    folder = _local_folder(value)
    if folder is not None:
        tokenizer = ((folder / "tokenizer.json").exists()
                     or (folder / "0_StaticEmbedding" / "tokenizer.json").exists())
        if not (_has_model_files(folder) and tokenizer):
            raise ModelUnavailable(f"{folder} is not a model2vec model folder (no "
                                   "model.safetensors and tokenizer.json)")
        return folder
    if _looks_like_path(value):
        raise ModelUnavailable(f"embed_model {value!r} is neither an existing folder nor a hub id "
                               "like owner/name")
    try:
        cached = _cached_snapshot(value)
    except ImportError as exc:
        raise ModelUnavailable(f"huggingface_hub is not installed ({exc})") from None
    if cached is not None:
        return cached
    if os.environ.get("HF_HUB_OFFLINE", "").strip().lower() in ("1", "true", "yes", "on"):
        raise ModelUnavailable(f"{value} is not in {models_dir()} and HF_HUB_OFFLINE forbids "
                               "downloading it")
    endpoint = _endpoint()
    unreachable = _probe(endpoint)
    if unreachable:
        raise ModelUnavailable(f"{value} is not in {models_dir()} and the hub is unreachable: "
                               f"{unreachable}")

    with exclusive("model-download") as mine:
        if not mine:
            raise ModelUnavailable(f"{value} is being downloaded by another agentctx process; "
                                   "try again shortly")
        log.warning("agentctx: downloading embedding model %s (one-time) into %s",
                    value, models_dir())
        return _snapshot(value, endpoint)


def _snapshot(repo_id: str, endpoint: str) -> Path:
    import huggingface_hub  # late: 40 ms at every CLI start (httpx, ssl)

    try:
        from model2vec.persistence.utils import SilentTqdm  # late: model2vec costs 0.3 s

        tqdm_class: Any = SilentTqdm
    except ImportError:  # pragma: no cover - depends on model2vec internals
        tqdm_class = None
    try:
        folder = Path(huggingface_hub.snapshot_download(
            repo_id, repo_type="model", cache_dir=models_dir(), allow_patterns=MODEL_FILES,
            endpoint=endpoint, etag_timeout=DOWNLOAD_ETAG_TIMEOUT_S, tqdm_class=tqdm_class))
    except Exception as exc:  # the hub client raises many kinds; all mean "not available"
        message = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise ModelUnavailable(f"could not download {repo_id}: {message}") from None
    if not _has_model_files(folder):
        raise ModelUnavailable(f"{repo_id} has no model2vec files (model.safetensors)")
    return folder


def load_model(cfg: config.Config | None = None, *,
               allow_download: bool = True) -> EmbeddingModel | None:
    """The configured embedding model, or ``None`` (logged in one line) when unavailable.

    ``None`` when the ``embeddings`` knob is off, the model is neither a folder nor cached and
    cannot be downloaded (offline, ``allow_download=False``), or fails to load. Never raises.
    A model loaded once is reused for the life of the process.
    """
    try:
        cfg = cfg or config.Config.load()
        if not cfg.get_bool("embeddings"):
            log.info("embeddings are off (embeddings = off); using full-text search only")
            return None
        value = cfg.get_str("embed_model")
        name = model_name(cfg)
    except config.ConfigError as exc:
        log.warning("agentctx: embeddings unavailable: %s", exc)
        return None
    with _LOCK:
        if name in _LOADED:
            return _LOADED[name]
        try:
            if allow_download:
                folder = download_model(cfg)
            else:
                folder = _local_folder(value) or _cached_or_fail(value)
            from model2vec import StaticModel  # late: 0.2 s, paid only when a model loads

            static = StaticModel.from_pretrained(folder, force_download=False)
            model = EmbeddingModel(name, static, folder)
        except ModelUnavailable as exc:
            log.warning("agentctx: embeddings unavailable, using full-text search only: %s", exc)
            return None
        except Exception as exc:  # a broken model folder must not break consolidation
            log.warning("agentctx: embedding model %s failed to load (%s: %s); using full-text "
                        "search only", value, type(exc).__name__, exc)
            return None
        _LOADED[name] = model
        return model


def _cached_or_fail(value: str) -> Path:
    if _looks_like_path(value):
        raise ModelUnavailable(f"embed_model {value!r} is not an existing folder")
    cached = _cached_snapshot(value)
    if cached is None:
        raise ModelUnavailable(f"{value} is not downloaded yet (agentctx init --download-model)")
    return cached


def forget_loaded() -> None:
    """Drop models cached in this process (tests; a changed ``embed_model``)."""
    with _LOCK:
        _LOADED.clear()
