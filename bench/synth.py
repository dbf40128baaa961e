"""A synthetic but realistic agentctx store, built fast, for benchmarks.

:func:`build_store` creates (or extends) the store at a path with one project of ``n_records``
records — decisions, conventions, preferences, discoveries, bugfixes, handovers and the detected
profile — written in one transaction (FTS and change-counter triggers fire as in real use). The
text comes from a software-project vocabulary with a long tail (~3,000 components and ~5,000
function names built from domain nouns, 90 technologies, commands and error messages, each drawn
with Zipf weights so a few are common and most are rare), bodies of 1-6 sentences, dates over two
years, ~10% of decisions superseded with
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

from agentctx.core.ids import new_ulid, to_iso
from agentctx.store import Store, projects

# A project vocabulary with a long tail: a few components and libraries come up all the time,
# most only now and then (Zipf weights), as in a real project's history.
NOUNS = """
account invoice ledger cart checkout catalog inventory shipment warehouse tenant workspace document
thumbnail transcoder crawler indexer ranker tokenizer queue webhook session token permission role
audit report upload download preview comment thread notification email sms push subscription plan
coupon refund payout dispute customer vendor product variant price tax currency address geocoder
route driver vehicle trip booking calendar reminder timezone locale translation suggestion
autocomplete feed timeline follower bookmark tag category media image video audio transcript caption
storage bucket cdn proxy gateway router balancer cluster shard replica backup snapshot migration
schema cursor pagination filter metric trace alert dashboard incident deploy release rollout flag
experiment cohort segment funnel attribution billing pricing quota throttle circuit probe config
secret credential certificate domain user profile organization team project board card column
sprint ticket label milestone changelog payment receipt order basket wishlist review rating badge
achievement leaderboard chat message attachment reaction mention presence typing avatar banner
onboarding invite signup login password otp sso saml oidc scim webhook_delivery rate_card
""".split()
SUFFIXES = ["service", "worker", "client", "api", "store", "handler", "adapter", "module", "view",
            "parser", "job", "controller", "repository", "serializer", "middleware", "validator",
            "cache"]
VERBS = ["get", "set", "load", "save", "parse", "render", "sync", "fetch", "build", "apply",
         "compute", "validate", "resolve", "normalize", "flush", "retry", "enqueue", "dispatch",
         "merge", "split", "export", "import", "refresh", "reconcile", "schedule", "cancel",
         "archive", "restore", "encode", "decode"]
TECH = [
    "PostgreSQL", "SQLite", "Redis", "gRPC", "REST", "GraphQL", "Kafka", "RabbitMQ", "FastAPI",
    "Django", "Flask", "React", "Vue", "TypeScript", "Docker", "Kubernetes", "Terraform",
    "pytest", "mypy", "ruff", "Celery", "S3", "nginx", "OpenTelemetry", "protobuf", "JWT",
    "OAuth2", "websockets", "asyncio", "httpx", "SQLAlchemy", "alembic", "pydantic", "Textual",
    "Elasticsearch", "OpenSearch", "ClickHouse", "DuckDB", "MinIO", "Vault", "Consul", "Envoy",
    "Istio", "Prometheus", "Grafana", "Sentry", "Datadog", "Stripe", "Twilio", "SendGrid",
    "Auth0", "Keycloak", "Cloudflare", "Fastly", "Vite", "webpack", "esbuild", "Jest", "Vitest",
    "Playwright", "Cypress", "Storybook", "Tailwind", "Next.js", "Remix", "Svelte", "Go", "Rust",
    "tokio", "axum", "serde", "Node", "Deno", "Bun", "uvicorn", "gunicorn", "Pillow", "ffmpeg",
    "numpy", "pandas", "polars", "Arrow", "Parquet", "Avro", "msgpack", "orjson", "zstd", "gzip",
]
FILE_PATTERNS = ["src/{c}/{n}.py", "src/{c}/models.py", "src/{c}/api.py", "src/{c}/tasks.py",
                 "tests/{c}/test_{n}.py", "web/src/{c}/{N}.tsx", "web/src/{c}/index.ts",
                 "migrations/{i:04d}_{c}.sql", "docs/{c}.md", "services/{c}/main.go"]
ERRORS = [
    "TypeError: 'NoneType' object is not subscriptable in {f}",
    "KeyError: '{n}_id' in {f}", "sqlite3.OperationalError: database is locked",
    "ConnectionRefusedError: [Errno 111] connecting to {t}",
    "AssertionError: assert 200 == 500 in test_{f}", "TimeoutError: {t} took longer than 30 s",
    "ImportError: cannot import name '{f}'", "ValueError: invalid {n} in {f}",
    "error: Cannot find module '@/lib/{n}'", "FAILED tests/{n}/test_{n}.py::test_{f}",
    "UniqueViolation: duplicate key value violates {n}_pkey", "RecursionError in {f}",
    "panic: runtime error: index out of range in {f}", "{t} returned 429 Too Many Requests",
]
COMMANDS = ["pytest -x", "npm test", "mypy src", "ruff check .", "alembic upgrade head",
            "docker compose up", "make build", "cargo test", "go test ./...", "npm run build",
            "pnpm lint", "terraform plan", "kubectl apply -f deploy/", "make migrate"]
REASONS = [
    "it removes a network hop on the hot path", "the old approach leaked connections under load",
    "it keeps the contract typed end to end", "the team already runs it in production",
    "latency p99 dropped from {i} ms to {j} ms in the spike", "it is simpler to test locally",
    "the vendor SDK pins an old version of {t}", "it avoids a second source of truth",
    "migrations stay reversible", "it fits the no-daemon rule", "on-call asked for it",
    "the benchmark showed a {j}x speed-up", "it unblocks the {c} rewrite",
    "{f} was called twice per request", "the {c} owns that data", "{t} already does it for us",
    "it halves the memory of the {c}", "the audit found {f} writing outside a transaction",
]
PREFERENCES = [
    "Prefers small commits with imperative messages", "Prefers pytest fixtures over setUp",
    "Prefers type hints on every function", "Prefers f-strings over format()",
    "Prefers explicit errors over silent fallbacks", "Prefers pathlib over os.path",
    "Prefers reading the diff before running the tests", "Prefers short answers with code",
    "Prefers ruff format with a 100-column limit", "Prefers dataclasses for plain data",
    "Prefers British spelling in docs", "Prefers integration tests against real SQLite",
]


class _Zipf:
    """Draws from a list with weights 1/rank: a few items are common, most are rare."""

    def __init__(self, rng: random.Random, items: list[str]) -> None:
        self.items = list(items)
        rng.shuffle(self.items)
        total = 0.0
        self.cumulative = []
        for rank in range(1, len(self.items) + 1):
            total += 1.0 / rank
            self.cumulative.append(total)

    def __call__(self, rng: random.Random) -> str:
        return rng.choices(self.items, cum_weights=self.cumulative)[0]


class _Vocabulary:
    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.component = _Zipf(rng, [f"{n.replace('_', ' ')} {s}" for n in NOUNS
                                     for s in SUFFIXES])
        self.function = _Zipf(rng, [f"{v}_{n}" for v in VERBS for n in NOUNS])
        self.tech = _Zipf(rng, TECH)
        self.noun = _Zipf(rng, NOUNS)

    def fill(self, template: str) -> str:
        rng = self.rng
        c = self.component(rng)
        return template.format(
            c=c, c2=self.component(rng), t=self.tech(rng), t2=self.tech(rng),
            f=self.function(rng), n=self.noun(rng), N=self.noun(rng).title().replace("_", ""),
            i=rng.randrange(1, 2000), j=rng.randrange(2, 40), cmd=rng.choice(COMMANDS),
            path=self.path(c), r=rng.choice(REASONS).format(
                t=self.tech(rng), c=self.component(rng), f=self.function(rng),
                i=rng.randrange(100, 900), j=rng.randrange(2, 12)),
            e=rng.choice(ERRORS).format(n=self.noun(rng), f=self.function(rng),
                                        t=self.tech(rng)))

    def path(self, component: str) -> str:
        rng = self.rng
        return rng.choice(FILE_PATTERNS).format(
            c=component.replace(" ", "_"), n=self.noun(rng),
            N=self.noun(rng).title().replace("_", ""), i=rng.randrange(1, 900))


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


SENTENCES = [
    "The {c} now uses {t} because {r}.", "We tried {t} for the {c} first, but {r}.",
    "Calls from the {c} to the {c2} go through {f}().", "Keep the {c} free of {t} imports; {r}.",
    "Run `{cmd}` before touching the {c}.", "The {c} reads its settings from {t} at start-up.",
    "See {path} for the entry point of the {c}.", "{f}() in {path} must stay idempotent.",
    "The {c} retries {f}() three times with jittered backoff.",
    "Errors from {t} surface as {e}.", "The {n} table is owned by the {c}; {r}.",
    "{f}() is the only writer of {n} rows.", "Measured: {f}() takes {i} ms at p95.",
    "The {c} and the {c2} share the {n} cache, keyed by {n} id.",
]
TITLES = {
    "decision": ["Use {t} for the {c}", "Move the {c} from {t} to {t2}", "Split {f}() out of "
                 "the {c}", "Put the {c} behind {t}", "Drop {t} from the {c}",
                 "Make {f}() async in the {c}", "Store {n} rows in {t}"],
    "convention": ["The {c} logs through {t}", "Tests of the {c} use {t}",
                   "Name {c} modules after their resource", "Every {n} change needs a migration",
                   "{f}() raises typed errors", "The {c} validates input with {t}"],
    "discovery": ["The {c} retries {t} calls three times", "{t} in the {c} caches {n} for 5 "
                  "minutes", "The {c} depends on the {c2} at import time",
                  "The {c} breaks when {t} is restarted", "{f}() is called on every request",
                  "{path} holds the {n} state machine"],
    "bugfix": ["{cmd} failed in the {c}: {e}", "Fixed {e}", "{f}() crashed: {e}"],
    "handover": ["Working state before auto compaction: finish {f}() in the {c}"],
}


def _draft(vocab: _Vocabulary, type_: str) -> tuple[str, str]:
    rng = vocab.rng
    if type_ == "preference":
        title = rng.choice(PREFERENCES)
    else:
        title = vocab.fill(rng.choice(TITLES[type_]))
    count = rng.choice((1, 2, 2, 3, 3, 4, 6))
    body = " ".join(vocab.fill(rng.choice(SENTENCES)) for _ in range(count))
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
        from agentctx.context.project_profile import refresh

        refresh(db, project)
        now_ms = int(time.time() * 1000)
        weights = [share for _, share in TYPE_SHARES]
        types = rng.choices([t for t, _ in TYPE_SHARES], weights=weights, k=n_records)
        stamps = sorted(now_ms - rng.randrange(730 * DAY_MS) for _ in range(n_records))
        worktrees = [str(folder), str(folder) + "-wt-feature", str(folder) + "-wt-hotfix"]
        rows: list[tuple[object, ...]] = []
        ids: list[str] = []
        by_type: dict[str, list[int]] = {}
        vocab = _Vocabulary(rng)
        for index, (type_, at_ms) in enumerate(zip(types, stamps, strict=True)):
            title, body = _draft(vocab, type_)
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
    vocab = _Vocabulary(rng)
    nodes = {}
    for _ in range(n_files):
        nodes[vocab.path(vocab.component(rng))] = new_ulid()
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
        prompts = [{"at": started, "text": f"look at the {vocab.component(rng)}"}]
        sessions.append((sid, project_id, started, json.dumps({"prompts": prompts})))
        shown = rng.sample(ids, min(3, len(ids)))
        receipts.append((sid, project_id, "UserPromptSubmit", json.dumps(shown), "[]", 300,
                         1000, started))
    db.conn.executemany("INSERT INTO sessions (session_id, project_id, started_at, meta) "
                        "VALUES (?, ?, ?, ?)", sessions)
    db.conn.executemany("INSERT INTO injections (session_id, project_id, event, record_ids, "
                        "scores, tokens, chars, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                        receipts)
