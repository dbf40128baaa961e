"""The embedded demo: a realistic synthetic project history, built through the store API.

``agentctx demo`` builds it in a temporary home so a newcomer can look around before installing
anything. The project, "harbor" (an order-tracking service), is fictional; every record, chain,
receipt and ledger row is written by the same code paths real use takes, and token counts are
measured with the one estimator on the text that would have been injected.
"""

from __future__ import annotations

import uuid
from datetime import datetime, timedelta
from pathlib import Path
from typing import NamedTuple

from agentctx.context import project_profile
from agentctx.context.digest import build as build_digest
from agentctx.core.budget import estimate_tokens
from agentctx.core.ids import now as clock_now
from agentctx.core.ids import to_iso
from agentctx.store import graph, ledger, projects, records, sessions
from agentctx.store.db import Store
from agentctx.store.models import Draft, Record

PROJECT_FILES = {
    "pyproject.toml": """[project]
name = "harbor"
version = "2.4.0"
requires-python = ">=3.12"
dependencies = ["fastapi", "sqlalchemy", "dramatiq", "structlog", "connect-python"]

[project.optional-dependencies]
dev = ["pytest", "pytest-xdist", "mypy", "ruff"]

[project.scripts]
harbor = "harbor.cli:main"

[build-system]
requires = ["hatchling"]
build-backend = "hatchling.build"

[tool.ruff]
line-length = 100
""",
    "Makefile": """test:
\tpytest -n auto

lint:
\truff check . && mypy --strict harbor

run:
\tuvicorn harbor.app:app --reload --reload-include '*.sql'
""",
    "CLAUDE.md": """# harbor

Order-tracking service.

- The internal API is REST/JSON between services.
- Run the tests with `nosetests`.
- Billing code lives in `harbor/billing/`.
- Store money as integer cents.
""",
    "harbor/__init__.py": "",
    "harbor/payments/__init__.py": "",
    "harbor/payments/refunds.py": "",
    "harbor/payments/payouts.py": "",
    "harbor/billing/__init__.py": "from harbor.payments import *  # deprecated shim\n",
    "harbor/jobs/__init__.py": "",
    "proto/orders.proto": "syntax = \"proto3\";\n",
    "tests/migrations/test_roundtrip.py": "",
    "harbor/api/orders.py": "",
    "harbor/api/checkout.py": "",
    "harbor/webhooks.py": "",
    "tests/conftest.py": "",
    "harbor/db/queries/orders.sql": "",
    ".git/config": '[remote "origin"]\n\turl = git@github.com:harbor-labs/harbor.git\n',
    ".git/HEAD": "ref: refs/heads/main\n",
}


class Spec(NamedTuple):
    """One demo record: days before now it became true, and what it says."""

    days_ago: int
    type: str
    title: str
    body: str
    confidence: str = "explicit"
    files: tuple[str, ...] = ()
    pinned: bool = False
    scope: str = "project"
    reinforce: int = 0


# Chains: each list is oldest first; each successor carries the rationale of its change.
CHAINS: list[list[tuple[Spec, str]]] = [
    [(Spec(150, "decision", "Internal API is REST/JSON between services",
           "Services call each other over REST with JSON bodies; OpenAPI specs live in api/."), ""),
     (Spec(95, "decision", "Internal API moves to gRPC",
           "Service-to-service calls use gRPC with protobuf schemas in proto/. Streaming order "
           "updates replace polling."),
      "REST round trips were 40% of checkout latency; gRPC streaming cut p95 from 180 ms to 60 ms"),
     (Spec(30, "decision", "Internal API is gRPC served through connect-python",
           "connect-python serves the gRPC services and a plain HTTP/JSON mapping from one "
           "handler; proto/ stays the source of truth.", files=("proto/",)),
      "the admin UI needs to call the API from the browser, which plain gRPC cannot do")],
    [(Spec(160, "decision", "Tests run with nose", "Run `nosetests` from the repository root."),
      ""),
     (Spec(120, "decision", "Tests run with pytest", "Run `pytest`; fixtures live in conftest.py."),
      "nose is unmaintained and breaks on Python 3.12"),
     (Spec(45, "decision", "Tests run with pytest -n auto (pytest-xdist)",
           "`make test` runs `pytest -n auto`; tests must not share state across workers.",
           files=("tests/conftest.py",)),
      "the suite grew to 9 minutes; xdist brings it to 2.5 minutes on CI's 4 cores")],
    [(Spec(140, "convention", "Billing code lives in harbor/billing/",
           "Invoices, refunds and payouts go in harbor/billing/.", files=("harbor/billing/",)),
      ""),
     (Spec(60, "convention", "Payment code lives in harbor/payments/ (renamed from billing/)",
           "harbor/billing/ was renamed to harbor/payments/; refunds are in "
           "harbor/payments/refunds.py, payouts in harbor/payments/payouts.py.",
           files=("harbor/payments/",)),
      "billing/ also held refunds and payouts; payments/ matches the domain language")],
]

SINGLES: list[Spec] = [
    Spec(130, "decision", "PostgreSQL 16 is the only datastore; no Redis",
         "Queues, locks and caches use Postgres (advisory locks, SKIP LOCKED). One backup story."),
    Spec(110, "decision", "Money is stored as integer cents, never floats",
         "Amounts are `int` cents in Python and BIGINT in Postgres; formatting happens at the "
         "edges only.", pinned=True, files=("harbor/payments/",)),
    Spec(80, "decision", "Background jobs run on Dramatiq with the Postgres broker",
         "Jobs are defined in harbor/jobs/; retries with exponential backoff, max 5."),
    Spec(50, "decision", "Feature flags are environment variables, not a flag service",
         "HARBOR_FLAG_<NAME>=1 turns a flag on; flags are read once at start-up."),
    Spec(125, "convention", "API handlers stay thin: parse, call a service, map errors",
         "Handlers in harbor/api/ never touch the database directly.", files=("harbor/api/",)),
    Spec(100, "convention", "SQL lives in harbor/db/queries/*.sql and is loaded by name",
         "No inline SQL strings in Python; `queries.load('orders.by_customer')`.",
         files=("harbor/db/queries/",)),
    Spec(90, "convention", "Every migration is reversible and has a test",
         "Alembic downgrade must work; tests/migrations/ runs upgrade → downgrade → upgrade."),
    Spec(70, "convention", "Log with structlog key=value pairs; no f-strings in log calls",
         "`log.info('order.shipped', order_id=oid)` — messages stay greppable."),
    Spec(55, "convention", "Type hints on every public function; mypy --strict in CI", ""),
    Spec(85, "preference", "Prefer small pull requests (under 300 lines) with one concern each",
         "Reviewers asked for it after the gRPC migration PR.", confidence="explicit"),
    Spec(140, "preference", "Prefers pytest fixtures over setUp/tearDown methods", "",
         confidence="reinforced", scope="global", reinforce=3),
    Spec(120, "preference", "Writes a failing test before fixing a bug", "",
         confidence="reinforced", scope="global", reinforce=4),
    Spec(60, "preference", "Uses ruff format rather than black", "Said so directly.",
         confidence="explicit", scope="global"),
    Spec(20, "preference", "Commit messages in the imperative mood, at most 72 characters", "",
         confidence="inferred", scope="global", reinforce=1),
    Spec(12, "preference", "Prefers NamedTuples or dataclasses over dicts for structured data",
         "", confidence="inferred", scope="global", reinforce=2),
    Spec(115, "discovery", "Postgres advisory locks are session-scoped",
         "Release them before returning a connection to the pool, or the next user of the "
         "connection holds the lock.", confidence="inferred"),
    Spec(75, "discovery", "The payment provider's webhooks retry for 72 h with the same event id",
         "Deduplicate on event id; a 2xx within 10 s stops retries.",
         files=("harbor/webhooks.py",)),
    Spec(65, "discovery", "Alembic autogenerate misses changes to server defaults",
         "Write server_default changes by hand in the migration."),
    Spec(40, "discovery", "uvicorn --reload does not watch .sql files",
         "Add --reload-include '*.sql' (the Makefile run target does)."),
    Spec(25, "discovery", "CI runner /tmp is 1 GB; put the fixture database dump in $RUNNER_TEMP",
         ""),
    Spec(105, "bugfix", "Refund totals were off by one cent",
         "Rounding happened per line item before summing; now cents are summed, then rounded "
         "once.", files=("harbor/payments/refunds.py",)),
    Spec(70, "bugfix", "Checkout double-charged on client retry",
         "The idempotency key was generated per attempt; it is now generated once per cart and "
         "sent with every retry.", files=("harbor/api/checkout.py",)),
    Spec(35, "bugfix", "test_order_export flaked on the DST change",
         "It compared local times; everything is UTC now (freezegun in the test)."),
    Spec(15, "bugfix", "Webhook handler crashed on unknown event types",
         "KeyError 'charge.dispute.funds_withdrawn': unknown types are now logged and "
         "acknowledged.", files=("harbor/webhooks.py",)),
]

HANDOVERS = [
    (9, "main", "Handover: moving refunds into harbor/payments/refunds.py",
     "Done: models and service moved. Next: move the refund API handler and its tests. Open "
     "question: keep the old import path as a shim for one release?"),
    (2, "main", "Handover: refund handler moved; shim kept for one release",
     "Done: handler and tests moved, shim harbor/billing/__init__.py re-exports with a "
     "DeprecationWarning. Next: remove the shim after 2.5.0. Blocker: none."),
    (4, "webhooks", "Handover: webhook retry dedupe",
     "Working in the harbor-webhooks worktree: dedupe table added, handler uses it. Next: "
     "backfill event ids for the last 72 h."),
]


def _ago(now: datetime, days: int, hours: int = 10) -> str:
    return to_iso(now - timedelta(days=days) + timedelta(hours=hours))


def _add(db: Store, spec: Spec, project_id: str, root: str, now: datetime,
         session_id: str | None = None) -> Record:
    record = records.add(db, Draft(type=spec.type, title=spec.title, body=spec.body,
                                   scope=spec.scope, confidence=spec.confidence, source="cli"
                                   if spec.confidence == "explicit" else "llm_extraction",
                                   valid_from=_ago(now, spec.days_ago), pinned=spec.pinned,
                                   reinforce_count=spec.reinforce, session_id=session_id),
                         project_id=project_id)
    _link_files(db, project_id, record.id, spec.files)
    return record


def _link_files(db: Store, project_id: str, record_id: str, names: tuple[str, ...]) -> None:
    """Link a record to files, and to modules for names ending in ``/``."""
    for name in names:
        kind = "module" if name.endswith("/") else "file"
        graph.link_record(db, record_id, graph.ensure_node(db, project_id, kind,
                                                          name.rstrip("/")))


def write_project(folder: Path) -> Path:
    """Write the demo project's files (build files, CLAUDE.md, a git config) into ``folder``."""
    for name, text in PROJECT_FILES.items():
        path = folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return folder


def build(db: Store, folder: Path, *, now: datetime | None = None) -> str:
    """Build the demo history into ``db`` for the project at ``folder``; returns its project id."""
    moment = now or clock_now()
    write_project(folder)
    webhooks = folder.parent / "harbor-webhooks"
    webhooks.mkdir(exist_ok=True)
    (webhooks / ".git").write_text(f"gitdir: {folder}/.git/worktrees/webhooks\n", encoding="utf-8")
    gitdir = folder / ".git" / "worktrees" / "webhooks"
    gitdir.mkdir(parents=True, exist_ok=True)
    (gitdir / "commondir").write_text("../..\n", encoding="utf-8")

    resolved = projects.resolve(db, str(folder))
    project = resolved.project
    worktrees = {"main": resolved.worktree,
                 "webhooks": projects.resolve(db, str(webhooks)).worktree}
    with db.write():
        project_profile.refresh(db, project)
        made: list[Record] = []
        for chain in CHAINS:
            first, _ = chain[0]
            current = _add(db, first, project.id, project.root, moment)
            made.append(current)
            for spec, why in chain[1:]:
                successor = records.supersede(
                    db, current.id,
                    Draft(type=spec.type, title=spec.title, body=spec.body, source="cli",
                          confidence=spec.confidence, valid_from=_ago(moment, spec.days_ago)),
                    why)
                _link_files(db, project.id, successor.id, spec.files)
                current = successor
                made.append(current)
        made.extend(_add(db, spec, project.id, project.root, moment) for spec in SINGLES)
        for days, tree, title, body in HANDOVERS:
            made.append(records.add(db, Draft(type="handover", title=title, body=body,
                                              key=f"worktree:{worktrees[tree]}",
                                              source="llm_extraction",
                                              valid_from=_ago(moment, days)),
                                    project_id=project.id))
        _sessions(db, project.id, folder, moment, made)
    return project.id


def _sessions(db: Store, project_id: str, folder: Path, now: datetime,
              made: list[Record]) -> None:
    """Six past sessions: receipts of the digest the session-start hook builds (and of what the
    per-prompt hook would show), measured on the text, and an extraction ledger."""
    current = [r for r in (records.get(db, m.id) for m in made) if r.current]
    digest = build_digest(db, projects.get(db, project_id))
    prompts = [
        ("How do refunds get rounded again?", ["Refund totals were off by one cent"]),
        ("why is the admin UI able to call the API now", ["connect-python"]),
        ("tests are slow on my laptop, how do we run them", ["pytest -n auto"]),
        ("webhook handler throws KeyError on a new event type", ["unknown event types"]),
        ("where do payouts live now", ["harbor/payments/"]),
        ("the fixture dump fails with no space left on device", ["RUNNER_TEMP"]),
    ]
    for index, (prompt, wanted) in enumerate(prompts):
        days = 30 - index * 5
        session_id = str(uuid.uuid5(uuid.NAMESPACE_URL, f"agentctx-demo/{prompt}"))
        sessions.ensure(db, session_id, project_id, cwd=str(folder),
                        transcript_path=f"~/.claude/projects/-harbor/{session_id}.jsonl",
                        started_at=_ago(now, days, 9))
        sessions.end(db, session_id, at=_ago(now, days, 11))
        sessions.add_receipt(db, session_id=session_id, project_id=project_id,
                             event="SessionStart", source="startup",
                             record_ids=list(digest.record_ids),
                             scores=[1.0] * len(digest.record_ids),
                             tokens=digest.tokens, chars=len(digest.text))
        hits = [r for r in current if any(w in r.title or w in r.body for w in wanted)][:2]
        if hits:
            text = "\n".join(f"{r.title}: {r.body}" for r in hits)
            sessions.add_receipt(db, session_id=session_id, project_id=project_id,
                                 event="UserPromptSubmit", record_ids=[r.id for r in hits],
                                 scores=[0.8] * len(hits), tokens=estimate_tokens(text),
                                 chars=len(text))
            sessions.mark_seen(db, session_id, [r.id for r in hits])
        sessions.append_meta(db, session_id, "prompts", {"text": prompt}, keep=20)
        sessions.update_meta(db, session_id, "tests", [{"command": "pytest -n auto",
                                                        "passed": index % 3 != 0}])
        # Extraction ledger: Haiku 4.5 prices ($1 in, $5 out, $1.25 cache write, $0.10 cache
        # read per million tokens), on the token counts a session of this size produces.
        usage = ledger.Usage(input_tokens=6000 + 900 * index, output_tokens=450 + 40 * index,
                             cache_write_tokens=4300 if index == 0 else 0,
                             cache_read_tokens=0 if index == 0 else 4300)
        usd = (usage.input_tokens * 1.0 + usage.output_tokens * 5.0
               + usage.cache_write_tokens * 1.25 + usage.cache_read_tokens * 0.10) / 1e6
        ledger.record_call(db, model="claude-haiku-4-5", purpose="extract", usage=usage, usd=usd,
                           session_id=session_id, project_id=project_id)
        for name in ("harbor/payments/refunds.py", "tests/test_refunds.py")[: 1 + index % 2]:
            node = graph.ensure_node(db, project_id, "file", name)
            graph.add_edge(db, session_id, node.id, "touched")
