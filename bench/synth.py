"""A synthetic but realistic agentctx store, built fast, for benchmarks.

:func:`build_store` creates (or extends) the store at a path with one project of ``n_records``
records — decisions, conventions, preferences, discoveries, bugfixes, handovers and the detected
profile — written in one transaction (FTS and change-counter triggers fire as in real use). The
text comes from a software-project vocabulary (components, technologies, commands, errors), with
skewed word use, bodies of 1-6 sentences, dates over two years, ~10% of decisions superseded with
``supersedes`` edges, one current handover per worktree, pinned and confidence mixes, global
developer preferences, sessions with receipts, and file entities linked to records.

The project is a git-looking folder ``<path's folder>/<db stem>-app`` (an ``origin`` remote and a
``pyproject.toml``), so a hook payload whose ``cwd`` is that folder resolves to the returned
project id; :func:`project_folder` gives its path. Usage::

    from bench.synth import build_store, project_folder
    project_id = build_store(Path("/tmp/b/agentctx.db"), 10_000)
    cwd = project_folder(Path("/tmp/b/agentctx.db"))
"""

from __future__ import annotations

import json
import random
import time
from pathlib import Path

from agentctx.store import Store, projects
from agentctx.store.ids import new_ulid, to_iso

COMPONENTS = [
    "auth", "billing", "search", "api gateway", "job queue", "scheduler", "cache layer",
    "web client", "cli", "database migrations", "logging", "metrics exporter", "payments webhook",
    "user profile service", "notification worker", "feature flags", "rate limiter",
    "report generator", "file uploads", "session store", "admin dashboard", "sync engine",
    "importer", "exporter", "config loader", "plugin loader", "event bus", "audit trail",
]
TECH = [
    "PostgreSQL", "SQLite", "Redis", "gRPC", "REST", "GraphQL", "Kafka", "RabbitMQ", "FastAPI",
    "Django", "Flask", "React", "Vue", "TypeScript", "Docker", "Kubernetes", "Terraform",
    "pytest", "mypy", "ruff", "Celery", "S3", "nginx", "OpenTelemetry", "protobuf", "JWT",
    "OAuth2", "websockets", "asyncio", "httpx", "SQLAlchemy", "alembic", "pydantic", "Textual",
]
FILES = [
    "src/{c}/service.py", "src/{c}/models.py", "src/{c}/api.py", "src/{c}/tasks.py",
    "tests/{c}/test_service.py", "tests/{c}/test_api.py", "web/src/{c}/index.ts",
    "web/src/{c}/View.tsx", "migrations/{n:04d}_{c}.sql", "docs/{c}.md",
]
ERRORS = [
    "TypeError: 'NoneType' object is not subscriptable", "KeyError: 'user_id'",
    "sqlite3.OperationalError: database is locked", "ConnectionRefusedError: [Errno 111]",
    "AssertionError: assert 200 == 500", "TimeoutError: request took longer than 30 s",
    "ImportError: cannot import name 'settings'", "ValueError: invalid literal for int()",
    "error: Cannot find module '@/lib/client'", "FAILED tests/test_api.py::test_login",
    "psycopg.errors.UniqueViolation: duplicate key value", "RecursionError: maximum depth",
]
COMMANDS = ["pytest -x", "npm test", "mypy src", "ruff check .", "alembic upgrade head",
            "docker compose up", "make build", "cargo test", "go test ./...", "npm run build"]
REASONS = [
    "it removes a network hop on the hot path", "the old approach leaked connections under load",
    "it keeps the contract typed end to end", "the team already runs it in production",
    "latency p99 dropped from 180 ms to 40 ms in the spike", "it is simpler to test locally",
    "the vendor SDK pins an old version of {t}", "it avoids a second source of truth",
    "migrations stay reversible", "it fits the no-daemon rule", "on-call asked for it",
    "the benchmark showed a 3x speed-up", "it unblocks the {c} rewrite",
]
PREFERENCES = [
    "Prefers small commits with imperative messages", "Prefers pytest fixtures over setUp",
    "Prefers type hints on every function", "Prefers f-strings over format()",
    "Prefers explicit errors over silent fallbacks", "Prefers pathlib over os.path",
    "Prefers reading the diff before running the tests", "Prefers short answers with code",
    "Prefers ruff format with a 100-column limit", "Prefers dataclasses for plain data",
    "Prefers British spelling in docs", "Prefers integration tests against real SQLite",
]
TYPE_SHARES = [("decision", 0.15), ("convention", 0.10), ("preference", 0.04),
               ("discovery", 0.30), ("bugfix", 0.33), ("handover", 0.08)]
DAY_MS = 86_400_000


def project_folder(path: Path) -> Path:
    """The project folder that :func:`build_store` creates next to the store at ``path``."""
    return path.parent / f"{path.stem}-app"


def _make_folder(folder: Path, seed: int) -> None:
    (folder / ".git").mkdir(parents=True, exist_ok=True)
    (folder / ".git" / "config").write_text(
        f'[remote "origin"]\n\turl = git@github.com:synth/app-{seed}.git\n', encoding="utf-8")
    (folder / "pyproject.toml").write_text(
        '[project]\nname = "synth-app"\ndependencies = ["fastapi", "pydantic", "sqlalchemy"]\n'
        '[project.optional-dependencies]\ndev = ["pytest", "ruff", "mypy"]\n', encoding="utf-8")
    (folder / "Makefile").write_text("test:\n\tpytest -q\nlint:\n\truff check .\n",
                                     encoding="utf-8")


def _sentence(rng: random.Random) -> str:
    c, c2 = rng.choice(COMPONENTS), rng.choice(COMPONENTS)
    t, t2 = rng.choice(TECH), rng.choice(TECH)
    reason = rng.choice(REASONS).format(t=t2, c=c2)
    return rng.choice([
        f"The {c} now uses {t} because {reason}.",
        f"We tried {t} for the {c} first, but {reason}.",
        f"Calls from the {c} to the {c2} go through {t}.",
        f"Keep the {c} free of {t} imports; {reason}.",
        f"Run `{rng.choice(COMMANDS)}` before touching the {c}.",
        f"The {c} reads its settings from {t} at start-up.",
        f"See {rng.choice(FILES).format(c=c.replace(' ', '_'), n=rng.randrange(500))} for the "
        f"entry point of the {c}.",
    ])


def _draft(rng: random.Random, type_: str) -> tuple[str, str]:
    c, c2 = rng.choice(COMPONENTS), rng.choice(COMPONENTS)
    t, t2 = rng.choice(TECH), rng.choice(TECH)
    if type_ == "decision":
        title = rng.choice([f"Use {t} for the {c}", f"Move the {c} from {t} to {t2}",
                            f"Split the {c} out of the {c2}", f"Put the {c} behind {t}",
                            f"Drop {t} from the {c}"])
    elif type_ == "convention":
        title = rng.choice([f"The {c} logs through {t}", f"Tests of the {c} use {t}",
                            f"Name {c} modules after their resource",
                            f"Every {c} change needs a {t} migration",
                            f"Errors in the {c} are raised as typed exceptions"])
    elif type_ == "preference":
        title = rng.choice(PREFERENCES)
    elif type_ == "discovery":
        title = rng.choice([f"The {c} retries {t} calls three times",
                            f"{t} in the {c} caches results for 5 minutes",
                            f"The {c} depends on the {c2} at import time",
                            f"The {c} breaks when {t} is restarted"])
    elif type_ == "bugfix":
        title = f"{rng.choice(COMMANDS)} failed in the {c}: {rng.choice(ERRORS)}"
    else:
        title = f"Working state before auto compaction: finish the {c} {t} change"
    body = " ".join(_sentence(rng) for _ in range(rng.choice((1, 2, 2, 3, 3, 4, 6))))
    return title[:300], body[:8000]


def build_store(path: Path, n_records: int, *, seed: int = 0) -> str:
    """Create the store at ``path`` with one synthetic project of ``n_records`` records.

    Returns the project id. One transaction; takes about a second per 20,000 records.
    """
    rng = random.Random(seed)
    path.parent.mkdir(parents=True, exist_ok=True)
    folder = project_folder(path)
    _make_folder(folder, seed)
    db = Store.open(path)
    try:
        project = projects.resolve(db, str(folder)).project
        from agentctx.project_profile import refresh

        refresh(db, project)
        now_ms = int(time.time() * 1000)
        weights = [share for _, share in TYPE_SHARES]
        types = rng.choices([t for t, _ in TYPE_SHARES], weights=weights, k=n_records)
        stamps = sorted(now_ms - rng.randrange(730 * DAY_MS) for _ in range(n_records))
        worktrees = [str(folder), str(folder) + "-wt-feature", str(folder) + "-wt-hotfix"]
        rows: list[tuple[object, ...]] = []
        ids: list[str] = []
        by_type: dict[str, list[int]] = {}
        for index, (type_, at_ms) in enumerate(zip(types, stamps, strict=True)):
            title, body = _draft(rng, type_)
            rid = new_ulid(at_ms)
            moment = to_iso_ms(at_ms)
            key = f"worktree:{rng.choice(worktrees)}" if type_ == "handover" else None
            confidence = rng.choices(("explicit", "inferred", "reinforced"), (3, 5, 2))[0]
            rows.append((rid, project.id, type_, key, title, body, int(rng.random() < 0.01),
                         confidence, moment, moment, "llm_extraction", 1.0))
            ids.append(rid)
            by_type.setdefault(type_, []).append(index)
        with db.write():
            db.conn.executemany(
                "INSERT INTO records (id, project_id, type, key, title, body, pinned, "
                "confidence, valid_from, recorded_at, source, score) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", rows)
            _supersede(db, rng, ids, rows, by_type)
            _global_preferences(db, rng, now_ms)
            _entities_and_sessions(db, rng, project.id, ids, now_ms)
    finally:
        db.close()
    return project.id


def to_iso_ms(at_ms: int) -> str:
    """Milliseconds since the epoch in the store's time format."""
    from datetime import UTC, datetime

    return to_iso(datetime.fromtimestamp(at_ms / 1000, tz=UTC))


def _supersede(db: Store, rng: random.Random, ids: list[str], rows: list[tuple[object, ...]],
               by_type: dict[str, list[int]]) -> None:
    """~10% of decisions superseded by a later decision; all but the last handover per key."""
    edges = []
    updates = []
    decisions = by_type.get("decision", [])
    replaced: set[int] = set()
    for position, index in enumerate(decisions[:-1]):
        if rng.random() < 0.10 and index not in replaced:
            replaced.add(index)
            later = decisions[rng.randrange(position + 1, len(decisions))]
            updates.append((rows[later][8], ids[later], ids[index]))
            edges.append((new_ulid(), ids[later], ids[index], "a later decision replaced it",
                          rows[later][8]))
    last_by_key: dict[object, int] = {}
    for index in by_type.get("handover", []):
        key = rows[index][3]
        if key in last_by_key:
            previous = last_by_key[key]
            updates.append((rows[index][8], ids[index], ids[previous]))
            edges.append((new_ulid(), ids[index], ids[previous], "new value for handover",
                          rows[index][8]))
        last_by_key[key] = index
    db.conn.executemany("UPDATE records SET superseded_at = ?, superseded_by = ? WHERE id = ? "
                        "AND superseded_at IS NULL", updates)
    db.conn.executemany("INSERT OR IGNORE INTO edges (id, from_id, to_id, rel_type, note, "
                        "created_at) VALUES (?, ?, ?, 'supersedes', ?, ?)", edges)


def _global_preferences(db: Store, rng: random.Random, now_ms: int) -> None:
    rows = []
    for title in PREFERENCES:
        at_ms = now_ms - rng.randrange(365 * DAY_MS)
        rows.append((new_ulid(at_ms), "global", "preference", title,
                     f"Seen in {rng.randrange(3, 30)} sessions.", "global",
                     rng.choice(("reinforced", "explicit", "inferred")), to_iso_ms(at_ms),
                     to_iso_ms(at_ms), "llm_extraction"))
    db.conn.executemany("INSERT INTO records (id, project_id, type, title, body, scope, "
                        "confidence, valid_from, recorded_at, source) "
                        "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", rows)


def _entities_and_sessions(db: Store, rng: random.Random, project_id: str, ids: list[str],
                           now_ms: int) -> None:
    n_files = max(10, len(ids) // 20)
    nodes = {}
    for n in range(n_files):
        component = rng.choice(COMPONENTS).replace(" ", "_")
        name = rng.choice(FILES).format(c=component, n=n)
        nodes[name] = new_ulid()
    created = to_iso_ms(now_ms)
    db.conn.executemany("INSERT OR IGNORE INTO nodes (id, project_id, kind, name, created_at) "
                        "VALUES (?, ?, 'file', ?, ?)",
                        [(nid, project_id, name, created) for name, nid in nodes.items()])
    node_ids = list(nodes.values())
    links = {(rid, rng.choice(node_ids)) for rid in ids if rng.random() < 0.3}
    db.conn.executemany("INSERT OR IGNORE INTO record_entities (record_id, entity_id, rel, "
                        "created_at) VALUES (?, ?, 'applies_to', ?)",
                        [(rid, nid, created) for rid, nid in links])
    sessions = []
    receipts = []
    for n in range(max(5, len(ids) // 50)):
        sid = f"synth-{n:06d}-{rng.getrandbits(32):08x}"
        started = to_iso_ms(now_ms - rng.randrange(730 * DAY_MS))
        prompts = [{"at": started, "text": f"look at the {rng.choice(COMPONENTS)}"}]
        sessions.append((sid, project_id, started, json.dumps({"prompts": prompts})))
        shown = rng.sample(ids, min(3, len(ids)))
        receipts.append((sid, project_id, "UserPromptSubmit", json.dumps(shown), "[]", 300,
                         1000, started))
    db.conn.executemany("INSERT INTO sessions (session_id, project_id, started_at, meta) "
                        "VALUES (?, ?, ?, ?)", sessions)
    db.conn.executemany("INSERT INTO injections (session_id, project_id, event, record_ids, "
                        "scores, tokens, chars, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                        receipts)
