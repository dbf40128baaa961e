"""``agentctx doctor``: is everything agentctx needs in place, and what to do when it is not.

Each check gives one line — ``ok``, ``warn`` or ``fail`` — with what was found and, when
something is off, the fix. Nothing here changes the user's files or the store: the hook latency
is measured against a copy of the store in a temporary home, and the MCP server is probed with
a real ``initialize`` handshake over stdio, the way Claude Code starts it.
"""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any, NamedTuple

from agentctx.core import config
from agentctx.core.ids import NOW_ENV, normalize_time
from agentctx.drift import memfiles
from agentctx.install import entries, jsonfile, paths
from agentctx.install.jsonfile import InstallError
from agentctx.install.plugin import INSTALL_HINT, EnabledPlugin, enabled_plugins, mcp_document
from agentctx.ops.mcp_probe import probe_server
from agentctx.store import Store, StoreError, querymodel, stats, vecside, vectors
from agentctx.store.db import sqlite_features

OK, WARN, FAIL = "ok", "warn", "fail"
LATENCY_RUNS = 5
LATENCY_WARN_MS = 500.0
STORE_COPY_MAX_BYTES = 200_000_000
TESTED_PYTHON = ((3, 11), (3, 13))


class Check(NamedTuple):
    """The outcome of one check."""

    name: str
    status: str  # ok | warn | fail
    detail: str
    fix: str = ""

    def as_dict(self) -> dict[str, str]:
        """For ``--json``."""
        return self._asdict()


def check_python(version: tuple[int, ...] | None = None) -> Check:
    """3.11 to 3.13 are supported; older is refused; newer is untested."""
    running = tuple(version or sys.version_info[:3])
    shown = ".".join(str(part) for part in running)
    if running[:2] < TESTED_PYTHON[0]:
        return Check("python", FAIL, f"Python {shown} is too old",
                     "reinstall agentctx with Python 3.11 or newer")
    if running[:2] > TESTED_PYTHON[1]:
        return Check("python", WARN, f"Python {shown} ({sys.executable}) is newer than the "
                     "tested 3.11-3.13", "report any problem; 3.13 is the newest tested")
    return Check("python", OK, f"Python {shown} ({sys.executable})")


def check_sqlite() -> Check:
    """SQLite version, FTS5 and JSON functions of this interpreter's sqlite3."""
    version, fts5, json1 = sqlite_features()
    if not json1:
        return Check("sqlite", FAIL, f"SQLite {version} has no JSON functions",
                     "use a Python built against SQLite 3.38 or newer")
    if not fts5:
        return Check("sqlite", WARN, f"SQLite {version} without FTS5: search falls back to a "
                     "slower LIKE scan without ranking",
                     "use a Python whose SQLite has FTS5 (python.org, Debian and pyenv builds do)")
    return Check("sqlite", OK, f"SQLite {version} with FTS5")


def check_config(cfg: config.Config) -> Check:
    """Knobs whose value is not used (out of range, the wrong type) and keys that are no knob."""
    problems = cfg.problems()
    unknown = cfg.unknown_keys()
    if not problems and not unknown:
        return Check("config", OK, "every knob set is in range")
    parts = [f"{key} uses its default ({reason})" for key, reason in problems.items()]
    parts += [f"{key} is no knob" for key in unknown]
    if problems:
        first = next(iter(problems))
        fix = (f"'agentctx config set {first} <value>' or 'agentctx config unset {first}' "
               "('agentctx config list' shows every knob)")
    else:
        fix = (f"remove {unknown[0]!r} from {jsonfile.display(config.config_path())} "
               "('agentctx config list' shows every knob)")
    return Check("config", WARN, "; ".join(parts), fix)


def check_home() -> Check:
    """The home is agentctx's alone: no one else may write in it or read the store."""
    home = config.home()
    if not home.is_dir():
        return Check("home", OK, f"{jsonfile.display(home)} not created yet")
    mode = home.stat().st_mode & 0o777
    if mode & 0o022:
        who = {0o022: "group and others", 0o020: "group", 0o002: "others"}[mode & 0o022]
        return Check("home", WARN, f"{jsonfile.display(home)} is writable by {who} (mode "
                     f"{mode:o}): they could replace the store or the config",
                     f"chmod 700 {home}")
    exposed = [path.name for path in sorted(home.glob(config.DB_NAME + "*"))
               if path.is_file() and path.stat().st_mode & 0o077]
    if exposed:
        return Check("home", WARN, f"{', '.join(exposed)} can be read by others",
                     f"chmod 600 {home / config.DB_NAME}*")
    return Check("home", OK, f"{jsonfile.display(home)} is private (mode {mode:o})")


def check_store() -> Check:
    """The home and the store in it."""
    home = config.home()
    if not config.db_path().exists():
        return Check("store", WARN, f"no store yet in {jsonfile.display(home)}",
                     "run 'agentctx init'")

    try:
        with Store.open(busy_timeout_ms=1000) as db:
            counts = stats.record_counts(db)
            current = sum(entry.get("current", 0) for entry in counts.values())
            fts = db.has_fts()
            scrubbed = _redacted_on_upgrade(db.meta_get("secrets_redacted_on_upgrade"))
            damage = db.quick_check()
    except (StoreError, sqlite3.Error) as exc:
        where = jsonfile.display(config.db_path())
        said = str(exc).replace(str(config.db_path()), where)
        return Check("store", FAIL, said if where in said else f"{where}: {said}",
                     "see the message; 'agentctx export' before any repair")
    if damage:
        return Check("store", FAIL, f"{jsonfile.display(config.db_path())} is damaged "
                     f"(quick_check: {'; '.join(damage)[:300]})",
                     "copy the file aside, then 'agentctx export' what still reads, or restore "
                     "a backup from the home's backups folder")
    suffix = "" if fts else " (its full-text index is unusable with this SQLite)"
    suffix += scrubbed
    return Check("store", OK if fts else WARN,
                 f"{jsonfile.display(config.db_path())}: {current} current records{suffix}")


def _redacted_on_upgrade(raw: object) -> str:
    """What the upgrade that re-redacted the store found (``""`` when nothing)."""
    try:
        report = json.loads(str(raw)) if raw else {}
        count = int(report.get("count", 0))
    except (ValueError, TypeError, AttributeError):
        return ""
    if count <= 0:
        return ""
    return (f"; the upgrade of {str(report.get('at', ''))[:10]} re-redacted {count} stored "
            "values that held a secret (see logs/upgrade.log)")


def check_vectors(cfg: config.Config) -> Check:
    """The vector backend (sqlite-vec ``vec0`` or the exact numpy fallback) and why."""
    if not cfg.get_bool("embeddings"):
        return Check("vectors", OK, "off (embeddings disabled; FTS5 search only)")

    if not config.db_path().exists():
        return Check("vectors", WARN, "no store yet", "run 'agentctx init'")

    try:
        with Store.open(busy_timeout_ms=1000) as db:
            name, reason = vectors.backend(db)
    except Exception as exc:  # a broken optional backend must not break doctor

        fix = ("see the store line" if isinstance(exc, StoreError | sqlite3.Error) else
               "run 'agentctx doctor' again; report it if it persists")
        return Check("vectors", WARN, f"cannot determine the vector backend: {exc}", fix)
    if name == "vec0":
        return Check("vectors", OK, f"sqlite-vec vec0 ({reason})")
    if name == "numpy":
        return Check("vectors", OK, f"numpy exact search ({reason})",
                     "optional: a Python whose sqlite3 can load extensions uses the vec0 index")
    if name == "none" and "not installed" not in reason:
        return Check("vectors", OK, f"none yet: {reason}")
    return Check("vectors", WARN, f"{name}: {reason}",
                 "reinstall agentctx (numpy comes with model2vec)")


def check_embedding_model(cfg: config.Config) -> Check:
    """Whether the embedding model is available locally."""
    if not cfg.get_bool("embeddings"):
        return Check("embedding model", OK, "off (embeddings disabled)")
    name = cfg.get_str("embed_model")
    local = Path(name).expanduser()
    if local.is_dir():
        return Check("embedding model", OK, f"local folder {jsonfile.display(local.absolute())}")
    if name.startswith((".", "/", "~")):
        return Check("embedding model", FAIL, f"folder {name} does not exist",
                     "fix it with 'agentctx config set embed_model <folder>'")
    # the Hugging Face hub cache layout agentctx downloads into: models--owner--name/snapshots/*
    snapshots = config.home() / "models" / f"models--{name.replace('/', '--')}" / "snapshots"
    for folder in sorted(snapshots.glob("*")) if snapshots.is_dir() else []:
        if (folder / "model.safetensors").exists() or \
                (folder / "0_StaticEmbedding" / "model.safetensors").exists():
            return Check("embedding model", OK, f"{name} in {jsonfile.display(folder)}")
    return Check("embedding model", WARN, f"{name} is not downloaded yet (consolidation fetches "
                 "it on first use)", "run 'agentctx init --download-model' now, or "
                 "'agentctx config set embeddings off'")


def check_semantic_check(cfg: config.Config) -> Check:
    """Whether the per-prompt hook can compare meanings (the model's query side file)."""
    if not cfg.get_bool("prompt_semantic_check"):
        return Check("semantic check", OK, "off (prompt_semantic_check = off)")
    if not cfg.get_bool("embeddings"):
        return Check("semantic check", OK, "off (embeddings disabled; keyword relevance only)")
    if not config.db_path().exists():
        return Check("semantic check", WARN, "no store yet", "run 'agentctx init'")

    try:
        with Store.open(busy_timeout_ms=1000) as db:
            entry = querymodel.registered(db)
            side = querymodel.open_registered(db)
            vectors_ready, why = vecside.ready(db)
    except (OSError, sqlite3.Error, StoreError) as exc:
        return Check("semantic check", WARN, f"cannot read the store: {exc}",
                     "see the store line")
    if side is None:
        where = f" ({jsonfile.display(Path(entry[1]))} is missing or stale)" if entry else ""
        return Check("semantic check", WARN, f"not ready{where}: prompts are matched by "
                     "keywords only, and the hook finds no record by meaning", "run 'agentctx "
                     "consolidate' (it writes the query side file of a WordPiece model)")
    side.close()
    if not vectors_ready:
        return Check("semantic check", WARN, f"on ({side.model}); the hook's candidates by "
                     f"meaning are not ready: {why}", "run 'agentctx consolidate'")
    return Check("semantic check", OK, f"on ({side.model}); the hook also finds records by "
                 f"meaning ({why} vector side)")


def check_clock() -> Check | None:
    """A line when ``AGENTCTX_NOW`` fixes the clock (or tries to and cannot)."""
    raw = os.environ.get(NOW_ENV)
    if not raw:
        return None
    try:
        fixed = normalize_time(raw)
    except ValueError:
        return Check("clock", WARN, f"{NOW_ENV}={raw!r} is not an ISO 8601 time: ignored, the "
                                    "real clock is used", f"unset {NOW_ENV} or fix its value")
    return Check("clock", WARN, f"fixed at {fixed} by {NOW_ENV}: recency, as-of and time words "
                                "in prompts read that time", f"unset {NOW_ENV} for the real clock")


def check_api_key(cfg: config.Config) -> Check:
    """Extraction needs ANTHROPIC_API_KEY in Claude Code's environment."""
    if not cfg.get_bool("llm"):
        return Check("api key", OK, "not needed (LLM extraction is off)")
    if os.environ.get("ANTHROPIC_API_KEY", "").strip():
        return Check("api key", OK, "ANTHROPIC_API_KEY is set (LLM extraction on)")
    return Check("api key", WARN, "ANTHROPIC_API_KEY is not set here: LLM extraction is skipped; "
                 "capture, injection and the MCP tools still work",
                 "export ANTHROPIC_API_KEY where Claude Code runs, or "
                 "'agentctx config set llm off'")


def _settings_files(cwd: Path | None) -> list[Path]:
    root = paths.project_root(cwd)
    files = [paths.user_settings(), root / ".claude" / "settings.json",
             root / ".claude" / "settings.local.json"]
    return list(dict.fromkeys(files))  # the project may be the home folder itself


def _resolvable(argv0: str) -> bool:
    if "/" in argv0:
        return Path(argv0).is_file() and os.access(argv0, os.X_OK)
    return shutil.which(argv0) is not None


def _plugin_launcher(plugins: list[EnabledPlugin]) -> tuple[str | None, Check | None]:
    """The ``agentctx`` the plugin's hooks and server run (from PATH), or the failed check."""
    found = shutil.which("agentctx")
    if found is None:
        return None, Check("hooks", FAIL, f"the plugin {plugins[0].describe()} runs agentctx "
                           "from PATH, and agentctx is not on PATH: its hooks do nothing",
                           f"{INSTALL_HINT}, then start a new Claude Code session")
    return os.path.abspath(found), None


def check_hooks(cwd: Path | None = None,
                plugins: list[EnabledPlugin] | None = None) -> tuple[Check, list[str] | None]:
    """Our hooks in the user's and the project's settings (or the agentctx plugin's), and
    whether their command runs; two registrations at once are flagged.

    Also returns the argv of a registered session-start hook (for the latency check).
    """
    plugins = plugins or []
    found: dict[str, list[dict[str, Any]]] = {}
    problems: list[str] = []
    disabled: list[str] = []
    homes: set[str] = set()
    where_found: list[str] = []
    for path in _settings_files(cwd):
        try:
            doc = jsonfile.load(path)
        except InstallError as exc:
            return Check("hooks", FAIL, str(exc), "fix the file, then 'agentctx init'"), None
        if doc.data.get("disableAllHooks") is True:
            disabled.append(jsonfile.display(path))
        ours = entries.our_handlers(doc.data)
        if ours:
            where_found.append(jsonfile.display(path))
        for event, handlers in ours.items():
            for matcher, handler in handlers:
                found.setdefault(event, []).append(handler)
                if event == "SessionStart" and matcher and "resume" not in matcher:
                    problems.append(f"SessionStart matcher {matcher!r} skips resume")
    if plugins:
        launcher, failed = _plugin_launcher(plugins)
        if failed is not None:
            return failed, None
        argv = [str(launcher), "hook", "session-start"]
        if found:
            return Check("hooks", WARN, f"registered twice: by the plugin {plugins[0].describe()}"
                         f" and by 'agentctx init' in {', '.join(where_found)}; every hook runs "
                         "twice", "run 'agentctx uninstall' to keep the plugin only"), argv
        if disabled:
            return Check("hooks", FAIL, f"disableAllHooks is true in {', '.join(disabled)}",
                         "remove disableAllHooks from that file"), argv
        return Check("hooks", OK, f"{len(entries.HOOKS)} events registered by the plugin "
                     f"{plugins[0].describe()}; agentctx found at {launcher}"), argv
    if not found:
        return Check("hooks", FAIL, "no agentctx hooks registered",
                     "run 'agentctx init', or install the agentctx Claude Code plugin"), None
    session_argv: list[str] | None = None
    for registered in found.values():
        for handler in registered:
            parsed = entries.parse_command(str(handler.get("command", "")))
            if parsed is None or not parsed[1]:
                problems.append(f"cannot parse {handler.get('command')!r}")
                continue
            env, argv = parsed
            homes.add(env.get("AGENTCTX_HOME", str(paths.default_home())))
            if not _resolvable(argv[0]):
                return Check("hooks", FAIL, f"hook command {argv[0]} does not exist",
                             "run 'agentctx init' to register the current launcher"), None
            if entries.is_legacy(argv) and "the agentctx script" not in " ".join(problems):
                problems.append("registered as the agentctx script, which lets project code "
                                "on PYTHONPATH run in every hook")
            if argv[-1] == "session-start":
                session_argv = argv
    missing = [spec.event for spec in entries.HOOKS if spec.event not in found]
    if disabled:
        return Check("hooks", FAIL, f"disableAllHooks is true in {', '.join(disabled)}",
                     "remove disableAllHooks from that file"), session_argv
    current_home = os.path.normpath(config.home().absolute())
    if homes and current_home not in {os.path.normpath(h) for h in homes}:
        problems.append(f"hooks use the home {', '.join(sorted(homes))}, this shell "
                        f"{current_home}")
    if missing:
        problems.append(f"missing events: {', '.join(missing)}")
    where = ", ".join(where_found)
    if problems:
        return Check("hooks", WARN, f"registered in {where}; " + "; ".join(problems),
                     "run 'agentctx init' again"), session_argv
    return Check("hooks", OK, f"{len(entries.HOOKS)} events registered in {where}; "
                 "command found"), session_argv


def _mcp_registrations(cwd: Path | None) -> tuple[list[tuple[str, dict[str, Any]]], str | None]:
    registrations: list[tuple[str, dict[str, Any]]] = []
    root = paths.project_root(cwd)
    files = dict.fromkeys([(paths.user_claude_json(), "user"), (root / ".mcp.json", "project")])
    for path, scope in files:
        try:
            doc = jsonfile.load(path)
            entry = entries.current_server(doc.data, jsonfile.display(path))
        except InstallError as exc:
            return registrations, str(exc)
        if isinstance(entry, dict):
            registrations.append((f"{scope} ({jsonfile.display(path)})", entry))
        if scope == "user":
            projects = doc.data.get("projects")
            local = projects.get(str(root)) if isinstance(projects, dict) else None
            servers = local.get("mcpServers") if isinstance(local, dict) else None
            if isinstance(servers, dict) and isinstance(servers.get(entries.SERVER_NAME), dict):
                registrations.append((f"local ({jsonfile.display(path)})",
                                      servers[entries.SERVER_NAME]))
    return registrations, None


def check_mcp(cwd: Path | None = None, probe: bool = True,
              plugins: list[EnabledPlugin] | None = None) -> Check:
    """Our MCP server registration (a file's or the plugin's), its command, and a real
    handshake with it; two registrations at once are flagged."""
    registrations, error = _mcp_registrations(cwd)
    if error:
        return Check("mcp", FAIL, error, "fix the file, then 'agentctx init'")
    if plugins:
        if registrations:
            return Check("mcp", WARN, f"registered twice: by the plugin {plugins[0].describe()} "
                         f"and in {registrations[0][0]}; Claude Code starts two servers",
                         "run 'agentctx uninstall' to keep the plugin only")
        server = mcp_document()["mcpServers"][entries.SERVER_NAME]
        found = shutil.which("agentctx")
        if found is None:
            return Check("mcp", FAIL, f"the plugin {plugins[0].describe()} starts agentctx from "
                         "PATH, and agentctx is not on PATH", INSTALL_HINT)
        # the plugin's launcher starts that agentctx's interpreter as init would: probe that
        launch = paths.launch_argv()
        registrations = [(f"the plugin {plugins[0].describe()}",
                          {**server, "command": launch[0], "args": [*launch[1:], "mcp"]})]
    if not registrations:
        return Check("mcp", FAIL, "the agentctx MCP server is not registered",
                     "run 'agentctx init', or install the agentctx Claude Code plugin")
    where, entry = registrations[0]
    command = str(entry.get("command", ""))
    args = [str(arg) for arg in entry.get("args", [])] if isinstance(entry.get("args"), list) \
        else []
    if not _resolvable(command):
        return Check("mcp", FAIL, f"server command {command or '(empty)'} does not exist",
                     "run 'agentctx init' to register the current launcher")
    detail = f"registered in {where}: {command} {' '.join(args)}".rstrip()
    if not probe:
        return Check("mcp", OK, detail)
    env = entry.get("env") if isinstance(entry.get("env"), dict) else {}
    ok, outcome = probe_server(command, args, {str(k): str(v) for k, v in (env or {}).items()})
    if not ok:
        return Check("mcp", FAIL, f"{detail}; {outcome}",
                     "run the command by hand to see its error; 'agentctx init' re-registers")
    return Check("mcp", OK, f"{detail}; {outcome}")


def _temporary_home(tmp: Path) -> None:
    """A copy of the config and store for measuring, so the real store is never written."""
    config.ensure_home(tmp)
    if config.config_path().exists():
        shutil.copy2(config.config_path(), tmp / config.CONFIG_NAME)
    source = config.db_path()
    if source.exists() and source.stat().st_size <= STORE_COPY_MAX_BYTES:
        with Store.open(busy_timeout_ms=1000) as db:
            db.backup_to(tmp / config.DB_NAME)


def measure_hook_latency(argv: list[str], cwd: Path | None = None,
                         runs: int = LATENCY_RUNS) -> tuple[list[float], str | None]:
    """Wall times (ms) of ``argv`` (``… hook session-start``) on a synthetic startup payload.

    Runs against a temporary copy of the home; returns the times and the first problem seen.
    """
    times: list[float] = []
    with tempfile.TemporaryDirectory(prefix="agentctx-doctor-") as raw_tmp:
        tmp = Path(raw_tmp)
        try:
            _temporary_home(tmp / "home")
        except Exception as exc:  # a copy failure only means we measure an empty store
            shutil.rmtree(tmp / "home", ignore_errors=True)
            config.ensure_home(tmp / "home")
            problem_note = f"(measured on an empty store: {exc})"
        else:
            problem_note = ""
        env = {key: value for key, value in os.environ.items()
               if not key.startswith("AGENTCTX_")}
        env["AGENTCTX_HOME"] = str(tmp / "home")
        folder = str((cwd or Path.cwd()).absolute())
        for _ in range(runs):
            session = f"doctor-{uuid.uuid4()}"
            payload = {"session_id": session, "cwd": folder, "hook_event_name": "SessionStart",
                       "source": "startup", "transcript_path": str(tmp / f"{session}.jsonl")}
            started = time.perf_counter()
            try:
                done = subprocess.run(argv, input=json.dumps(payload).encode(), cwd=folder,
                                      capture_output=True, env=env, timeout=30, check=False)
            except (OSError, subprocess.TimeoutExpired) as exc:
                return times, f"the hook did not run: {exc}"
            times.append((time.perf_counter() - started) * 1000)
            if done.returncode != 0:
                return times, f"the hook exited with status {done.returncode}"
            out = done.stdout.strip()
            if out:
                try:
                    parsed = json.loads(out)
                except ValueError:
                    return times, "the hook printed something other than one JSON object"
                if not isinstance(parsed, dict) or "hookSpecificOutput" not in parsed:
                    return times, "the hook printed JSON without hookSpecificOutput"
    return times, problem_note or None


def check_memory_file(cwd: Path | None = None) -> Check:
    """Which memory file the drift scan (``agentctx sync``) reads for the project, and why."""
    found = memfiles.primary(paths.project_root(cwd))
    return Check("memory file", OK, f"drift reads {found.name or 'no file yet'}: {found.reason}")


def check_latency(argv: list[str] | None, cwd: Path | None = None,
                  runs: int = LATENCY_RUNS) -> Check:
    """The median wall time of the real session-start hook."""
    if argv is None:
        try:
            argv = [paths.find_launcher(), "hook", "session-start"]
        except InstallError as exc:
            return Check("hook latency", FAIL, str(exc), "reinstall agentctx")
    times, problem = measure_hook_latency(argv, cwd, runs)
    if problem and problem.startswith("the hook"):
        return Check("hook latency", FAIL, problem,
                     "see <home>/logs/hooks.log; reinstall agentctx if the hook cannot start")
    median = statistics.median(times)
    detail = (f"session-start median {median:.0f} ms over {len(times)} runs "
              f"(max {max(times):.0f} ms)" + (f" {problem}" if problem else ""))
    if median > LATENCY_WARN_MS:
        return Check("hook latency", WARN, detail,
                     "a slow disk or a loaded machine; a very large store can be trimmed with "
                     "'agentctx forget'")
    return Check("hook latency", OK, detail)


def _guarded(name: str, check: Callable[..., Check], *args: Any) -> Check:
    """A check whose failure to run (a damaged or locked store, an unreadable file) is its own
    failing line, so every other check still reports."""
    try:
        return check(*args)
    except (StoreError, sqlite3.Error, OSError) as exc:
        return Check(name, FAIL, f"could not check: {exc}", "see the store line")


def run_checks(cwd: Path | None = None, *, probe: bool = True,
               latency_runs: int = LATENCY_RUNS) -> list[Check]:
    """Every check, in the order they are printed."""
    checks = [check_python(), check_sqlite()]
    try:
        cfg = config.Config.load()
    except config.ConfigError as exc:
        checks.append(Check("config", FAIL, str(exc), "fix it with 'agentctx config'"))
        cfg = config.Config({})
    else:
        checks.append(check_config(cfg))
    checks += [_guarded("home", check_home), _guarded("store", check_store),
               _guarded("vectors", check_vectors, cfg),
               _guarded("embedding model", check_embedding_model, cfg),
               _guarded("semantic check", check_semantic_check, cfg),
               _guarded("api key", check_api_key, cfg)]
    clock = check_clock()
    if clock is not None:
        checks.append(clock)
    from agentctx.ops.doctor_memory import check_auto_memory  # late: it imports this module

    checks.append(check_auto_memory(cwd))
    plugins = enabled_plugins(cwd)
    hooks, session_argv = check_hooks(cwd, plugins)
    checks.append(hooks)
    checks.append(check_mcp(cwd, probe=probe, plugins=plugins))
    checks.append(check_memory_file(cwd))
    if latency_runs > 0:
        checks.append(check_latency(session_argv, cwd, latency_runs))
    return checks
