"""The embedded demo: a realistic synthetic project history, built through the store API.

``agentctx demo`` builds it in a temporary home so a newcomer can look around before installing
anything. The project, "harbor" (an order-tracking service), is fictional; its history is played
in the order it happened, with agentctx's one clock (``AGENTCTX_NOW``) set to each moment:
records are written on the day they became true, a decision is superseded on the day it
changed, and each of the sessions gets its SessionStart digest and, for each prompt, what the
per-prompt judgement (:func:`agentctx.context.judgement.decide`, the hook's own) picks from the
store as it stood then — so receipts, the tokens-per-day chart, the live list and ``agentctx
why`` carry the sessions' dates, prompts and matched words. Token counts are measured with the
one estimator on the text that would have been injected.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from datetime import datetime, timedelta
from functools import partial
from itertools import pairwise
from pathlib import Path
from typing import NamedTuple

from agentctx.consolidate import truth
from agentctx.consolidate.duplicates import docs_for, document_frequency, lexical_overlap
from agentctx.context import already, digest, judgement, project_profile
from agentctx.core import config
from agentctx.core.budget import estimate_tokens
from agentctx.core.ids import clock_at, now_iso
from agentctx.core.ids import now as clock_now
from agentctx.core.redact import redact
from agentctx.store import graph, ledger, projects, records, sessions, upkeep
from agentctx.store.db import Store
from agentctx.store.models import Draft, Project, Record
from agentctx.store.selection import Selection

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

# The same fact written twice (the second time by extraction, in other words): the pair the
# near-duplicate scan of a consolidation finds (by the cosine of the default model's embeddings,
# which the demo cannot carry, and by the lexical rule, which it runs), so ``m`` has a pair.
DUPLICATE = (Spec(50, "decision", "Feature flags are environment variables, not a flag service",
                  "HARBOR_FLAG_<NAME>=1 turns a flag on; flags are read once at start-up."),
             Spec(21, "decision", "Feature flags are HARBOR_FLAG_ environment variables",
                  "A flag is on when HARBOR_FLAG_<NAME>=1; flags are read once at start-up, "
                  "there is no flag service.", confidence="inferred"))
# The cosine minilm-static-256 gives the pair (tests/test_demo.py measures it again).
DUPLICATE_COSINE = 0.9731
CONSOLIDATED_DAYS_AGO = 1  # when the consolidation that found the pair ran


class Session(NamedTuple):
    """One demo session: days before now it started, its worktree, and what the developer
    typed (a prompt's minutes after the start, and its text)."""

    days_ago: int
    worktree: str
    prompts: tuple[tuple[int, str], ...]
    touched: tuple[str, ...]


SESSIONS = (
    Session(28, "main", ((4, "How do refunds get rounded again?"),
                         (31, "thanks, that worked")), ("harbor/payments/refunds.py",)),
    Session(24, "main", ((6, "do postgres advisory locks survive giving the connection back to "
                             "the pool?"),
                         (40, "is the internal api still REST?")), ("harbor/db/locks.py",)),
    Session(19, "main", ((3, "alembic autogenerate didn't pick up my server_default change"),
                         (55, "rename this variable to order_total")),
            ("migrations/versions/0042_order_totals.py",)),
    Session(14, "webhooks", ((5, "webhook handler throws KeyError on a new event type"),
                             (22, "do the payment webhooks get retried?")),
            ("harbor/webhooks.py",)),
    Session(8, "main", ((8, "uvicorn doesn't reload when I edit a .sql file"),
                        (35, "checkout charged a customer twice after a retry, seen this?")),
            ("harbor/api/checkout.py", "harbor/db/queries/orders.sql")),
    Session(3, "main", ((2, "the fixture dump fails with no space left on device"),
                        (47, "how do I turn on a feature flag locally?")), ("Makefile",)),
)
SESSION_HOURS = 9  # sessions start at 09:00 UTC …
SESSION_LENGTH = timedelta(hours=1, minutes=50)  # … and end before 11:00


def _ago(now: datetime, days: int, hours: int = 10) -> datetime:
    """``hours`` past midnight (UTC), ``days`` days before ``now``'s day."""
    midnight = now.replace(hour=0, minute=0, second=0, microsecond=0)
    return midnight - timedelta(days=days) + timedelta(hours=hours)


def _draft(spec: Spec, session_id: str | None = None) -> Draft:
    return Draft(type=spec.type, title=spec.title, body=spec.body, scope=spec.scope,
                 confidence=spec.confidence,
                 source="cli" if spec.confidence == "explicit" else "llm_extraction",
                 pinned=spec.pinned, reinforce_count=spec.reinforce, session_id=session_id)


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


class _History:
    """The demo's events, played in time order with the clock at each one."""

    def __init__(self, db: Store, project: Project, worktrees: dict[str, str],
                 folders: dict[str, Path]) -> None:
        self.db = db
        self.project = project
        self.worktrees = worktrees
        self.folders = folders
        self.events: list[tuple[datetime, int, Callable[[], None]]] = []
        self.made: dict[str, Record] = {}  # by title
        # The judgement's settings as a fresh install has them (the demo's home has no config).
        self.cfg = config.Config({}, environ={})

    def at(self, moment: datetime, event: Callable[[], None]) -> None:
        self.events.append((moment, len(self.events), event))

    def play(self) -> None:
        for moment, _order, event in sorted(self.events, key=lambda e: (e[0], e[1])):
            with clock_at(moment):
                event()

    # ------------------------------------------------------------------ records

    def add(self, spec: Spec, key: str | None = None) -> None:
        draft = _draft(spec)._replace(key=key)
        record = records.add(self.db, draft, project_id=self.project.id)
        _link_files(self.db, self.project.id, record.id, spec.files)
        self.made[spec.title] = record

    def supersede(self, old: Spec, spec: Spec, why: str) -> None:
        successor = records.supersede(self.db, self.made[old.title].id, _draft(spec), why,
                                      actor="cli")
        _link_files(self.db, self.project.id, successor.id, spec.files)
        self.made[spec.title] = successor

    def near_duplicates(self) -> None:
        """What a consolidation's near-duplicate scan stores for the demo's pair: the lexical
        rule is run on the decisions as they are; the cosine is the model's (see above)."""
        current = records.list_records(self.db,
                                       Selection(project_id=self.project.id, types=("decision",)),
                                       limit=1000)
        docs = docs_for([(r.title, r.body) for r in current])
        index = {r.title: i for i, r in enumerate(current)}
        first, second = (index[spec.title] for spec in DUPLICATE)
        overlap = lexical_overlap(docs[first], docs[second], document_frequency(docs),
                                  len(current))
        if overlap is None:
            raise AssertionError("the demo's near-duplicate pair no longer passes the rule")
        upkeep.save_near_duplicates(self.db, [r.id for r in current],
                                    [(current[first].id, current[second].id, DUPLICATE_COSINE,
                                      overlap)])

    # ------------------------------------------------------------------ sessions

    def session(self, number: int, plan: Session, start: datetime) -> None:
        """Schedule a session: its SessionStart, its prompts, its end and its extraction."""
        session_id = str(uuid.uuid5(uuid.NAMESPACE_URL, f"agentctx-demo/session/{number}"))
        self.at(start, lambda: self.session_start(session_id, plan))
        for minutes, prompt in plan.prompts:
            self.at(start + timedelta(minutes=minutes),
                    partial(self.prompt, session_id, plan, prompt))
        self.at(start + SESSION_LENGTH, lambda: self.session_end(session_id, number, plan))

    def session_start(self, session_id: str, plan: Session) -> None:
        """What the SessionStart hook does: the digest, served and accounted."""
        db, project = self.db, self.project
        sessions.ensure(db, session_id, project.id, cwd=str(self.folders[plan.worktree]),
                        transcript_path=f"~/.claude/projects/-harbor/{session_id}.jsonl")
        served = digest.serve(db, project, self.worktrees[plan.worktree], cfg=self.cfg)
        if served.text:
            sessions.add_receipt(db, session_id=session_id, project_id=project.id,
                                 event="SessionStart", source="startup",
                                 record_ids=served.record_ids, scores=(), tokens=served.tokens,
                                 chars=len(served.text), left_out=served.left_out)
            sessions.mark_seen(db, session_id, served.record_ids)

    def prompt(self, session_id: str, plan: Session, prompt: str) -> None:
        """What the per-prompt hook does: the judgement on the store as it is now, and its
        receipt (the prompt, each record's relevance and matched words) when it injects."""
        db, project = self.db, self.project
        outcome = already.decide(db, project, prompt, judgement.settings(self.cfg),
                                 self.worktrees[plan.worktree],
                                 seen=sessions.seen(db, session_id))
        decision = outcome.decision
        redacted = redact(prompt)
        sessions.append_meta(db, session_id, "prompts",
                             {"at": now_iso(), "text": redacted},
                             self.cfg.get_int("recent_prompts"))
        if not decision.text:
            return
        shown = decision.shown
        sessions.add_receipt(db, session_id=session_id, project_id=project.id,
                             event="UserPromptSubmit", record_ids=[h.record.id for h in shown],
                             scores=[h.relevance for h in shown],
                             tokens=estimate_tokens(decision.text), chars=len(decision.text),
                             prompt=redacted, matched=[h.matched for h in shown],
                             pointers=[h.record.id for h in decision.pointers],
                             left_out=[(hit.record.id, where) for hit, where in outcome.left])
        full = [h.record.id for h in decision.injected]
        sessions.mark_seen(db, session_id, full)
        records.touch(db, full)

    def session_end(self, session_id: str, number: int, plan: Session) -> None:
        """The session ends; extraction reads its transcript (the ledger row of a Haiku 4.5
        call of the size such a session takes) and the files it touched are linked."""
        db, project = self.db, self.project
        sessions.end(db, session_id)
        sessions.update_meta(db, session_id, "tests", [{"command": "pytest -n auto",
                                                        "passed": number % 3 != 0}])
        # Haiku 4.5 prices: $1 in, $5 out, $1.25 cache write, $0.10 cache read per M tokens.
        usage = ledger.Usage(input_tokens=6000 + 900 * number, output_tokens=450 + 40 * number,
                             cache_write_tokens=4300 if number == 0 else 0,
                             cache_read_tokens=0 if number == 0 else 4300)
        usd = (usage.input_tokens * 1.0 + usage.output_tokens * 5.0
               + usage.cache_write_tokens * 1.25 + usage.cache_read_tokens * 0.10) / 1e6
        ledger.record_call(db, model="claude-haiku-4-5", purpose="extract", usage=usage, usd=usd,
                           session_id=session_id, project_id=project.id)
        for name in plan.touched:
            node = graph.ensure_node(db, project.id, "file", name)
            graph.add_edge(db, session_id, node.id, "touched")
        # the consolidation after it measures what the memory files state, and the paths
        truth.measure_stated(db, project)
        truth.check_paths(db, project)


def build(db: Store, folder: Path, *, now: datetime | None = None) -> str:
    """Build the demo history into ``db`` for the project at ``folder``; returns its project id.

    The history is played in time order with the clock (``AGENTCTX_NOW``) at each event, the
    last of them a day before ``now``; the clock is as it was when this returns.
    """
    moment = now or clock_now()
    write_project(folder)
    webhooks = folder.parent / "harbor-webhooks"
    webhooks.mkdir(exist_ok=True)
    (webhooks / ".git").write_text(f"gitdir: {folder}/.git/worktrees/webhooks\n", encoding="utf-8")
    gitdir = folder / ".git" / "worktrees" / "webhooks"
    gitdir.mkdir(parents=True, exist_ok=True)
    (gitdir / "commondir").write_text("../..\n", encoding="utf-8")

    first = _ago(moment, max(spec.days_ago for chain in CHAINS for spec, _ in chain) + 1)
    with clock_at(first):
        resolved = projects.resolve(db, str(folder))
        other = projects.resolve(db, str(webhooks))
        project = resolved.project
        with db.write():
            project_profile.refresh(db, project)
    history = _History(db, project, {"main": resolved.worktree, "webhooks": other.worktree},
                       {"main": folder, "webhooks": webhooks})
    for chain in CHAINS:
        head, _ = chain[0]
        history.at(_ago(moment, head.days_ago), partial(history.add, head))
        for (old, _), (spec, why) in pairwise(chain):
            history.at(_ago(moment, spec.days_ago), partial(history.supersede, old, spec, why))
    for spec in (*SINGLES, *DUPLICATE):
        history.at(_ago(moment, spec.days_ago), partial(history.add, spec))
    for days, tree, title, body in HANDOVERS:
        spec = Spec(days, "handover", title, body, confidence="inferred")
        history.at(_ago(moment, days, 17), partial(
            history.add, spec, key=digest.handover_key(history.worktrees[tree])))
    for number, plan in enumerate(SESSIONS):
        history.session(number, plan, _ago(moment, plan.days_ago, SESSION_HOURS))
    history.at(_ago(moment, CONSOLIDATED_DAYS_AGO, 3), history.near_duplicates)
    with db.write():
        history.play()
    return project.id
