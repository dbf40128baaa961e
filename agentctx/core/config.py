"""The one configuration module: the home folder, ``config.json`` and every knob.

Every knob agentctx has is declared in :data:`KNOBS`, with its type, default and a one-line
description; this table is the documentation (``agentctx config list`` prints it). A value is
resolved in this order: the environment variable ``AGENTCTX_<KEY>`` (upper case), then
``<home>/config.json``, then the default. A value that does not fit its knob (out of range, the
wrong type) is never clamped: the knob takes its default, as it does for a ``config.json`` that is
not valid JSON, and :meth:`Config.problems` says why (``config list`` and ``doctor`` show it).

This module is on the hook hot path, so it imports only the standard library and the laws
(:mod:`agentctx.core.laws`, the ceilings every knob is held under).
"""

from __future__ import annotations

import json
import os

# The laws, re-exported: every knob below is held under them.
from agentctx.core.laws import BODY_MAX_CHARS as BODY_MAX_CHARS
from agentctx.core.laws import INJECTION_MAX_CHARS as INJECTION_MAX_CHARS
from agentctx.core.laws import PROMPT_MAX_RECORDS as PROMPT_MAX_RECORDS
from agentctx.core.laws import PROMPT_MAX_TOKENS as PROMPT_MAX_TOKENS
from agentctx.core.laws import SESSION_START_MAX_TOKENS as SESSION_START_MAX_TOKENS
from agentctx.core.lean import NamedTuple

TYPE_CHECKING = False
if TYPE_CHECKING:
    from pathlib import Path

HOME_ENV = "AGENTCTX_HOME"
DB_NAME = "agentctx.db"
CONFIG_NAME = "config.json"



class ConfigError(ValueError):
    """A configuration key or value that cannot be used."""


class Knob(NamedTuple):
    """One configuration setting."""

    key: str
    kind: str  # "bool" | "int" | "float" | "str" | "choice"
    default: str | int | float | bool
    doc: str
    choices: tuple[str, ...] = ()
    minimum: float | None = None
    maximum: float | None = None
    # Read from the environment only (AGENTCTX_<KEY>): never written to config.json.
    env_only: bool = False


KNOBS: dict[str, Knob] = {
    k.key: k
    for k in (
        # Injection budgets (ceilings are law; values above them are refused).
        Knob("session_start_tokens", "int", SESSION_START_MAX_TOKENS,
             "Token budget of the SessionStart digest.", minimum=100,
             maximum=SESSION_START_MAX_TOKENS),
        Knob("prompt_tokens", "int", PROMPT_MAX_TOKENS,
             "Token budget of one per-prompt injection.", minimum=100, maximum=PROMPT_MAX_TOKENS),
        Knob("prompt_records", "int", PROMPT_MAX_RECORDS,
             "Most records injected for one prompt.", minimum=0, maximum=PROMPT_MAX_RECORDS),
        Knob("injection_chars", "int", INJECTION_MAX_CHARS,
             "Most characters in any one injected string.", minimum=500,
             maximum=INJECTION_MAX_CHARS),
        Knob("prompt_full_confidence", "float", 0.3,
             "Probability (0-1, the evidence model's) a record must reach to be injected in full "
             "for a prompt.", minimum=0.0, maximum=1.0),
        Knob("prompt_pointer_confidence", "float", 0.15,
             "Probability the likeliest record must reach for a prompt to get anything; below "
             "the full confidence a record comes as a one-line pointer.", minimum=0.0,
             maximum=1.0),
        Knob("prompt_pointers", "bool", True,
             "Inject plausible records as one-line pointers (id, type, title; ctx_get opens "
             "them) rather than leave them out."),
        Knob("prompt_semantic_check", "bool", True,
             "Weigh a record's meaning against the prompt's in the per-prompt judgement (needs "
             "the model's query side file: see consolidate)."),
        Knob("subagent_inject", "bool", True,
             "Inject active decisions and conventions into subagents at SubagentStart."),
        Knob("subagent_tokens", "int", 500, "Token budget of the SubagentStart slice.",
             minimum=50, maximum=SESSION_START_MAX_TOKENS),
        Knob("profile_tokens", "int", 200,
             "Token slice of the digest for reinforced developer preferences.", minimum=0,
             maximum=SESSION_START_MAX_TOKENS),
        Knob("recent_prompts", "int", 20,
             "How many redacted prompts a session keeps for ranking.", minimum=0, maximum=200),
        Knob("resume_dedup_seconds", "int", 10,
             "A second SessionStart with the same session and source within this many seconds "
             "records no second receipt.", minimum=0, maximum=3600),
        # Search.
        Knob("search", "choice", "fts",
             "Search backend: fts (FTS5 BM25), like (LIKE scan) or pinned (pinned records only).",
             choices=("fts", "like", "pinned")),
        # Hooks and the store.
        Knob("disable", "bool", False, "Turn every hook off (AGENTCTX_DISABLE=1 per process)."),
        Knob("busy_timeout_ms", "int", 3000,
             "How long a writer waits for a locked store before giving up.", minimum=0,
             maximum=600000),
        Knob("hook_busy_timeout_ms", "int", 1500,
             "How long a hook waits for a locked store before giving up (it then fails open).",
             minimum=0, maximum=30000),
        Knob("log_max_bytes", "int", 1_000_000,
             "Size at which each log under logs/ is rotated (one .1 copy kept).",
             minimum=10_000, maximum=100_000_000),
        # LLM extraction.
        Knob("llm", "bool", True, "LLM extraction at the end of turns and sessions."),
        Knob("llm_model", "str", "claude-haiku-4-5", "Model used for extraction and merges."),
        Knob("llm_cost_cap_usd", "float", 0.25,
             "Most USD spent on extraction for one session.", minimum=0.0, maximum=100.0),
        Knob("llm_time_limit_s", "int", 120, "Time limit of one extraction process, seconds.",
             minimum=5, maximum=3600),
        Knob("extract_min_new_tokens", "int", 3000,
             "Stop-hook extraction skips transcripts with fewer new tokens than this.",
             minimum=0, maximum=1_000_000),
        Knob("reinforce_sessions", "int", 3,
             "Sessions in which an inferred preference must recur to become reinforced.",
             minimum=1, maximum=100),
        # Embeddings and consolidation.
        Knob("embeddings", "bool", True, "Embed records during consolidation (model2vec)."),
        Knob("embed_model", "str", "minishlab/potion-base-8M",
             "Embedding model: a local model2vec folder, or a hub id downloaded into "
             "<home>/models."),
        Knob("vector_backend", "choice", "auto",
             "Vector search: auto (sqlite-vec vec0 when this Python can load it, else an exact "
             "numpy scan) or numpy.", choices=("auto", "numpy")),
        Knob("consolidate_time_limit_s", "int", 60, "Time box of one consolidation run, seconds.",
             minimum=1, maximum=3600),
        Knob("near_duplicate_cosine", "float", 0.85,
             "Cosine above which two same-type records may be near-duplicates.", minimum=0.5,
             maximum=1.0),
        Knob("archive_after_days", "int", 90,
             "Records superseded longer ago than this move to the archive.", minimum=1,
             maximum=36500),
        Knob("prune_score", "float", 0.1, "Score under which a record may be a pruning candidate.",
             minimum=0.0, maximum=1.0),
        Knob("prune_after_days", "int", 60,
             "Days a record must stay under prune_score before it is listed for pruning.",
             minimum=1, maximum=36500),
        # Terminal UI.
        Knob("tui_poll_ms", "int", 1000,
             "How often the TUI checks the store for new records and injections, milliseconds.",
             minimum=100, maximum=60000),
        # The clock.
        Knob("now", "time", "",
             "A fixed current time (ISO 8601) for hooks, preview, search, consolidation and the "
             "TUI — for benchmarks and reproducible runs; empty: the real clock. Environment "
             "only: AGENTCTX_NOW.", env_only=True),
        # Local web view.
        Knob("web_port", "int", 7327, "Port of the optional local web view (127.0.0.1 only).",
             minimum=1024, maximum=65535),
    )
}

_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off", ""}


def home_dir() -> str:
    """The agentctx home folder as a string (no pathlib: this is on the hook hot path)."""
    raw = os.environ.get(HOME_ENV)
    return os.path.expanduser(raw) if raw else os.path.join(os.path.expanduser("~"), ".agentctx")


def home() -> Path:
    """The agentctx home folder (``AGENTCTX_HOME``, default ``~/.agentctx``)."""
    from pathlib import Path

    return Path(home_dir())


def ensure_home_dir(path: str | None = None) -> str:
    """Create the home folder (mode 0700) with its ``models/`` and ``logs/`` folders."""
    root = path or home_dir()
    os.makedirs(root, mode=0o700, exist_ok=True)
    for sub in ("models", "logs"):
        try:
            os.mkdir(os.path.join(root, sub), mode=0o700)
        except OSError:  # there already, or a read-only home (whose store opens read-only)
            pass
    return root


def ensure_home(path: Path | None = None) -> Path:
    """Create the home folder (mode 0700) with its ``models/`` and ``logs/`` folders."""
    from pathlib import Path

    return Path(ensure_home_dir(None if path is None else os.fspath(path)))


def db_file() -> str:
    """Path of the store inside the home, as a string."""
    return os.path.join(home_dir(), DB_NAME)


def db_path() -> Path:
    """Path of the store inside the home."""
    from pathlib import Path

    return Path(db_file())


def config_path() -> Path:
    """Path of ``config.json`` inside the home."""
    from pathlib import Path

    return Path(home_dir(), CONFIG_NAME)


def parse_value(knob: Knob, raw: object) -> str | int | float | bool:
    """Convert ``raw`` (a string from the CLI or env, or a JSON value) to the knob's type.

    Raises :class:`ConfigError` with a one-line reason when the value does not fit.
    """
    try:
        if knob.kind == "bool":
            if isinstance(raw, bool):
                return raw
            text = str(raw).strip().lower()
            if text in _TRUE:
                return True
            if text in _FALSE:
                return False
            raise ConfigError(f"{knob.key} takes on/off, not {raw!r}")
        if knob.kind in ("int", "float"):
            if isinstance(raw, bool):
                raise ConfigError(f"{knob.key} takes a number, not {raw!r}")
            number: int | float = int(str(raw)) if knob.kind == "int" else float(str(raw))
            if knob.minimum is not None and number < knob.minimum:
                raise ConfigError(f"{knob.key} must be at least {knob.minimum:g}, not {raw}")
            if knob.maximum is not None and number > knob.maximum:
                raise ConfigError(f"{knob.key} must be at most {knob.maximum:g}, not {raw}")
            return number
        text = str(raw).strip()
        if knob.kind == "time":
            from agentctx.core.ids import normalize_time

            return normalize_time(text)
        if knob.kind == "choice" and text not in knob.choices:
            raise ConfigError(f"{knob.key} takes one of {', '.join(knob.choices)}, not {raw!r}")
        if not text:
            raise ConfigError(f"{knob.key} must not be empty")
        return text
    except ValueError as exc:
        if isinstance(exc, ConfigError):
            raise
        raise ConfigError(f"{knob.key} takes a {knob.kind}, not {raw!r}") from None


def _knob(key: str) -> Knob:
    normalized = key.strip().lower().replace("-", "_")
    knob = KNOBS.get(normalized)
    if knob is None:
        raise ConfigError(f"unknown config key {key!r} (see 'agentctx config list')")
    return knob


def read_file(path: Path | None = None) -> dict[str, object]:
    """The raw contents of ``config.json`` (empty when it does not exist).

    A malformed file raises :class:`ConfigError`; callers on the hook path treat that as
    "use the defaults" and log it.
    """
    from agentctx.core.safeio import read_small_text

    target = os.path.join(home_dir(), CONFIG_NAME) if path is None else os.fspath(path)
    try:
        text = read_small_text(target)
    except FileNotFoundError:
        return {}
    except OSError as exc:
        raise ConfigError(f"cannot read {target}: {exc.strerror}") from None
    try:
        data = json.loads(text) if text.strip() else {}
    except json.JSONDecodeError as exc:
        raise ConfigError(
            f"{target} is not valid JSON (line {exc.lineno}): fix or delete it") from None
    except RecursionError:
        raise ConfigError(f"{target} is nested too deeply: fix or delete it") from None
    if not isinstance(data, dict):
        raise ConfigError(f"{target} must hold a JSON object")
    return data


class Config:
    """Resolved configuration: environment over ``config.json`` over defaults."""

    def __init__(self, file_values: dict[str, object] | None = None,
                 environ: dict[str, str] | None = None) -> None:
        self._file = dict(file_values or {})
        self._env = dict(os.environ if environ is None else environ)
        self._invalid: dict[str, str] = {}

    @classmethod
    def load(cls) -> Config:
        """Read the home's ``config.json`` and the process environment."""
        return cls(read_file())

    def source(self, key: str) -> str:
        """Where the value of ``key`` comes from: ``env``, ``file`` or ``default``."""
        knob = _knob(key)
        if f"AGENTCTX_{knob.key.upper()}" in self._env:
            return "env"
        if knob.key in self._file:
            return "file"
        return "default"

    def get(self, key: str) -> str | int | float | bool:
        """The resolved value of ``key``.

        An env or file value that does not fit the knob gives the knob's default (see
        :meth:`invalid`); only an unknown ``key`` raises :class:`ConfigError`.
        """
        knob = _knob(key)
        env_key = f"AGENTCTX_{knob.key.upper()}"
        try:
            if env_key in self._env:
                try:
                    return parse_value(knob, self._env[env_key])
                except ConfigError as exc:
                    raise ConfigError(f"{env_key}: {exc}") from None
            if knob.key in self._file:
                return parse_value(knob, self._file[knob.key])
        except ConfigError as exc:
            self._invalid[knob.key] = str(exc)
        return knob.default

    def invalid(self, key: str) -> str | None:
        """Why the value set for ``key`` is not used (its default is), or ``None``."""
        knob = _knob(key)
        self.get(knob.key)
        return self._invalid.get(knob.key)

    def problems(self) -> dict[str, str]:
        """Every knob whose set value is not used, with the reason."""
        return {key: reason for key in KNOBS if (reason := self.invalid(key)) is not None}

    def unknown_keys(self) -> list[str]:
        """Keys in ``config.json`` that are no knob (a typo: they change nothing)."""
        return sorted(key for key in self._file if key not in KNOBS)

    def get_int(self, key: str) -> int:
        """The value of an int knob."""
        return int(self.get(key))

    def get_float(self, key: str) -> float:
        """The value of a float knob."""
        return float(self.get(key))

    def get_bool(self, key: str) -> bool:
        """The value of a bool knob."""
        return bool(self.get(key))

    def get_str(self, key: str) -> str:
        """The value of a str or choice knob."""
        return str(self.get(key))


def set_value(key: str, raw: str, path: Path | None = None) -> str | int | float | bool:
    """Validate and write one knob to ``config.json`` atomically; returns the stored value.

    A malformed existing file is refused (left untouched) rather than overwritten.
    """
    knob = _knob(key)
    if knob.env_only:
        raise ConfigError(f"{knob.key} is read from the environment only: set "
                          f"AGENTCTX_{knob.key.upper()}")
    value = parse_value(knob, raw)
    target = path or config_path()
    data = read_file(target)
    data[knob.key] = value
    _write_atomic(target, data)
    return value


def unset_value(key: str, path: Path | None = None) -> bool:
    """Remove a knob from ``config.json`` (back to its default); returns whether it was set."""
    knob = _knob(key)
    target = path or config_path()
    data = read_file(target)
    if knob.key not in data:
        return False
    del data[knob.key]
    _write_atomic(target, data)
    return True


def _write_atomic(target: Path, data: dict[str, object]) -> None:
    ensure_home(target.parent)
    tmp = target.with_name(f".{target.name}.{os.getpid()}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with open(fd, "w", encoding="utf-8") as handle:
        handle.write(json.dumps(data, indent=2, sort_keys=True) + "\n")
    os.replace(tmp, target)
