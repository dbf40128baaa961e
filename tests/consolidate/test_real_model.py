"""With the real small model (minilm-static-256): the near-duplicate calibration and vector search.

Slow (loads the 15 MB model): skipped unless slow tests are selected, ``pytest -m slow``.
"""

from __future__ import annotations

import random
from pathlib import Path

import numpy as np
import pytest

from agentctx.consolidate.run import consolidate
from agentctx.ml.embedder import EmbeddingModel, forget_loaded, load_model
from agentctx.store import Store, upkeep, vectors
from agentctx.store.models import Project
from tests.conftest import SHARED
from tests.consolidate.conftest import add

pytestmark = pytest.mark.slow
MODEL_DIR = SHARED / "models" / "minilm-static-256"
THRESHOLD = 0.85  # the near_duplicate_cosine default

TOOLS = ["PostgreSQL", "MySQL", "Redis", "Memcached", "pytest", "unittest", "Docker", "Podman",
         "FastAPI", "Flask", "Django", "SQLite", "React", "Vue", "Svelte", "Celery", "RQ", "ruff",
         "flake8", "mypy", "pyright", "Terraform", "Pulumi", "Kafka", "RabbitMQ", "gRPC",
         "GraphQL", "nginx", "Caddy", "uvicorn", "gunicorn", "poetry", "uv", "pip-tools", "black",
         "isort", "Sentry", "Prometheus", "Grafana", "OpenTelemetry"]
ROLES = ["the main database", "session caching", "unit tests", "local development",
         "the HTTP layer", "the local store", "the frontend", "background jobs", "linting",
         "type checking", "infrastructure", "the message bus", "service calls", "the public API",
         "the reverse proxy", "the ASGI server", "dependency locking", "formatting",
         "error tracking", "metrics"]
TEMPLATES = {
    "decision": [("Use {a} for {b}", "We decided to use {a} for {b} because it is fast, well "
                  "documented, widely used, and fits the team's existing tooling and deployment "
                  "pipeline."),
                 ("Adopt {a} as {b}", "After comparing options we adopt {a} as {b}; revisit if "
                  "maintenance cost grows or the team's needs change.")],
    "bugfix": [("Fix {a} crash when {b} is empty", "The {a} integration crashed when {b} was "
                "empty; added a guard clause, a regression test, and a clearer error message "
                "for users.")],
    "discovery": [("{a} needs extra config for {b}", "Found that {a} needs extra configuration "
                   "when used for {b}: set the timeout and the pool size explicitly, otherwise "
                   "it fails under load.")],
}
RESTATED = [
    ("decision", ("Use PostgreSQL for the main database", "We decided to use PostgreSQL for the "
                  "main database because it is fast, well documented, widely used, and fits the "
                  "team's existing tooling and deployment pipeline."),
     ("Main database is PostgreSQL", "PostgreSQL was chosen as the main database; it is fast, "
                                     "documented and fits our tooling.")),
    ("decision", ("Use Redis for session caching", "Sessions are cached in Redis."),
     ("Cache sessions in Redis", "We cache user sessions in Redis.")),
    ("convention", ("Run ruff before committing", "Always run ruff check before every commit."),
     ("Lint with ruff before each commit", "Every commit must pass ruff check first.")),
    ("bugfix", ("Fix parser crash when the config file is empty", "The parser crashed on an "
                "empty config file; added a guard."),
     ("Parser crashed on empty config file", "Guard added so an empty config file no longer "
                                             "crashes the parser.")),
    ("preference", ("Prefers tabs over spaces", "The developer prefers tabs for indentation."),
     ("Use tabs for indentation", "Indent with tabs, not spaces.")),
    ("discovery", ("The CI runner has only 2 cores", "CI machines have 2 CPU cores, so tests "
                   "run with -n 2."),
     ("CI has 2 CPU cores", "The CI runner only has two cores; use -n 2 for pytest.")),
    ("decision", ("Store timestamps in UTC", "All timestamps are stored in UTC ISO 8601."),
     ("Timestamps are UTC", "Store every timestamp as UTC in ISO 8601 format.")),
    ("decision", ("Use Kafka for the message bus", "We decided to use Kafka for the message bus "
                  "because it is fast, well documented, widely used, and fits the team's "
                  "existing tooling and deployment pipeline."),
     ("Use Kafka for the message bus", "We decided to use Kafka for the message bus because it "
                                       "is fast, well documented, widely used, and fits the "
                                       "team's existing tooling and deployment pipeline. "
                                       "Confirmed again.")),
    ("decision", ("Queue is RabbitMQ", "Background jobs go through RabbitMQ."),
     ("Jobs use RabbitMQ", "Background jobs go via RabbitMQ.")),
    ("convention", ("Cache is Redis", "Sessions and rate-limit counters are kept in Redis "
                    "with a one-hour TTL."),
     ("Sessions use Redis", "Sessions and rate-limit counters are kept in Redis with a one-hour "
                            "TTL.")),
    ("bugfix", ("Fix Sentry crash when metrics is empty", "The Sentry integration crashed when "
                "metrics was empty; added a guard clause, a regression test, and a clearer error "
                "message for users."),
     ("Sentry integration crashes on empty metrics", "Guard clause added: the Sentry integration "
                                                     "no longer crashes when metrics is empty; "
                                                     "regression test added.")),
]


@pytest.fixture
def real(monkeypatch: pytest.MonkeyPatch, request: pytest.FixtureRequest) -> EmbeddingModel:
    """The real model as the configured ``embed_model``."""
    selected = str(request.config.getoption("markexpr") or "").replace("not slow", "")
    if "slow" not in selected:
        pytest.skip("slow: run with -m slow")
    if not (MODEL_DIR / "model.safetensors").exists():
        pytest.skip(f"{MODEL_DIR} is not present")
    monkeypatch.setenv("AGENTCTX_EMBED_MODEL", str(MODEL_DIR))
    forget_loaded()
    model = load_model()
    assert model is not None and model.dim == 256
    return model


def _template_store(db: Store, project: Project) -> list[tuple[str, str]]:
    """360 template notes (3 types × 120) and the restated pairs; returns the pairs' ids."""
    rng = random.Random(1)
    seen: set[tuple[str, str, str]] = set()
    for type_, templates in TEMPLATES.items():
        for _ in range(120):
            title, body = rng.choice(templates)
            a, b = rng.choice(TOOLS), rng.choice(ROLES)
            key = (type_, title.format(a=a, b=b), body.format(a=a, b=b))
            if key not in seen:
                seen.add(key)
                add(db, project, type_, key[1], key[2])
    pairs = []
    for type_, older, newer in RESTATED:
        first = add(db, project, type_, *older, valid_from="2026-01-01")
        second = add(db, project, type_, *newer, valid_from="2026-02-01")
        pairs.append((first.id, second.id))
    return pairs


def test_near_duplicate_rule_separates_template_notes_from_restatements(
        store: Store, project: Project, real: EmbeddingModel) -> None:
    restated = _template_store(store, project)
    report = consolidate(store, model=real)
    assert report.embedded == store.scalar("SELECT count(*) FROM records")
    pks, types, matrix = vectors.current_matrix(store, real.name, project_ids=[project.id])
    ids: dict[int, str] = {row[0]: row[1] for row in store.rows("SELECT pk, id FROM records")}
    restated_ids = {i for pair in restated for i in pair}
    template = [i for i, pk in enumerate(pks) if ids[pk] not in restated_ids]
    close = 0
    for type_ in TEMPLATES:
        members = [i for i in template if types[i] == type_]
        sims = matrix[members] @ matrix[members].T
        close += int((np.triu(sims, 1) > THRESHOLD).sum())
    row = {ids[pk]: i for i, pk in enumerate(pks)}
    cosines = {pair: float(matrix[row[pair[0]]] @ matrix[row[pair[1]]]) for pair in restated}
    expected = {pair for pair, cosine in cosines.items() if cosine > THRESHOLD}
    found = {(c.older_id, c.newer_id) for c in upkeep.merge_candidates(store, project.id)}
    print(f"\ndistinct template pairs over {THRESHOLD}: {close}; restated pairs over it: "
          f"{len(expected)} of {len(restated)}; candidates: {len(found)}; restated cosines: "
          f"{sorted(round(c, 3) for c in cosines.values())}")
    titles = {pair: (older[0], newer[0]) for pair, (_type, older, newer)
              in zip(restated, RESTATED, strict=True)}
    assert close > 1500  # distinct notes from one template really are that close
    assert len(expected) >= 8
    assert found <= set(restated)  # no template pair
    assert len(found) >= len(expected) - 1  # (nearly) every restatement over the threshold
    # Restatements that differ in a phrasing word of the title, or by one word of the body.
    assert {("Queue is RabbitMQ", "Jobs use RabbitMQ"), ("Cache is Redis", "Sessions use Redis")} \
        <= {titles[pair] for pair in found}


def test_semantic_neighbours_with_the_real_model(store: Store, project: Project,
                                                 real: EmbeddingModel) -> None:
    notes = {
        "db": ("Store everything in SQLite", "One local database file in WAL mode."),
        "auth": ("Sign-in uses OAuth with short-lived tokens", "Refresh tokens rotate daily."),
        "ui": ("Dashboard built with React components", "Styling with CSS modules."),
        "ci": ("CI runs the test suite on every push", "GitHub Actions, two cores."),
    }
    made = {k: add(store, project, "decision", *v) for k, v in notes.items()}
    consolidate(store, model=real)
    for key, query in (("db", "which relational storage engine do we persist data in"),
                       ("auth", "how do users log in"),
                       ("ui", "frontend framework for the web interface")):
        found = vectors.nearest(store, real.encode([query])[0], project_ids=[project.id],
                                limit=1, model=real.name)
        assert found[0][0] == made[key].pk, query
    assert Path(real.name) == MODEL_DIR.resolve()
