"""One extraction run: ``agentctx extract --session-id S --transcript T [--min-new-tokens N]``.

The Stop hook's detached child runs it after every turn (with a minimum of new tokens, so small
deltas wait), the session-end child runs it without a minimum. A run:

1. reads the transcript and takes what was written after ``sessions.extract_offset``;
2. holds ``background.exclusive("extract-<S>")`` — when another run holds it, it marks the session
   dirty and leaves; the holder goes round again while ``sessions.take_dirty`` says so, and checks
   the mark once more after releasing the lock (a Stop marks before it looks at the lock), so no
   turn is ever left for a later run;
3. makes no call (and leaves the offset where it is) when there is nothing new, too little new
   (``--min-new-tokens``), ``llm`` is off, ``ANTHROPIC_API_KEY`` is missing, the project is
   paused, or the session's cost cap (``llm_cost_cap_usd``) would be passed — which is noted in the
   session meta as ``extract_cap_reached`` for ``agentctx status``;
4. sends the new content by size tier (:mod:`agentctx.extract.tiers`) with the cached prompt
   prefix, prices every call into the cost ledger, and applies the result
   (:mod:`agentctx.extract.apply`) together with the new offset in one transaction.

Records go to the session's project: the one the hooks saw for the session id, else the
transcript's ``cwd``. Every outcome is one line in ``<home>/logs/extract.log``; nothing here ever
raises to the user. The whole run is bounded by ``llm_time_limit_s``.
"""

from __future__ import annotations

import contextlib
import logging
import os
import tempfile
import traceback
from collections.abc import Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

from agentctx.core import background, budget, config, logfile
from agentctx.core.gitinfo import identify
from agentctx.core.ids import now_iso
from agentctx.core.redact import redact
from agentctx.extract import tiers
from agentctx.extract.apply import Action, Applied, Embedder, Target, apply, plan
from agentctx.extract.request import (
    LIST_MAX,
    Extraction,
    Listed,
    output_schema,
    project_block,
    synthesis_message,
    system_blocks,
    system_prefix,
    transcript_message,
)
from agentctx.extract.transcript import Transcript, TranscriptError, read_transcript
from agentctx.ml import embedder
from agentctx.ml.llm import (
    Attempt,
    Deadline,
    LLMError,
    api_key_from_env,
    make_client,
    record,
    structured_call,
)
from agentctx.ml.pricing import CallUsage, load
from agentctx.store import Store, records, sessions
from agentctx.store import projects as proj
from agentctx.store.errors import StoreError
from agentctx.store.models import GLOBAL_PROJECT

if TYPE_CHECKING:
    import anthropic
    import httpx2

LOG_NAME = "extract.log"
MAX_OUTPUT_TOKENS = 4096
EXPECTED_OUTPUT_TOKENS = 900  # a typical extraction reply, for estimates
EXPECTED_SYNTHESIS_OUTPUT_TOKENS = 1500
MESSAGE_OVERHEAD_TOKENS = 80
LISTS_MAX_TOKENS = 3000  # the active records, preferences and stubs shown after the prefix
PARALLEL_CALLS = 4
MAX_ROUNDS = 20  # dirty-loop guard
CAP_META_KEY = "extract_cap_reached"
LAST_META_KEY = "extract_last"


class Request(NamedTuple):
    """What to extract."""

    session_id: str | None = None
    transcript: str | None = None
    min_new_tokens: int | None = None
    dry_run: bool = False
    valid_from: str | None = None  # backfill: records take the transcript's date
    project_id: str | None = None  # backfill: the project, when the session is unknown


class Outcome(NamedTuple):
    """What a run did."""

    status: str  # extracted | nothing-new | skipped | failed | busy | planned
    reason: str
    session_id: str | None = None
    project_id: str | None = None
    tier: tiers.TierPlan | None = None
    actions: tuple[Action, ...] = ()
    applied: Applied | None = None
    usd: float = 0.0
    estimated_usd: float = 0.0
    calls: int = 0

    @property
    def new_tokens(self) -> int:
        """Estimated tokens of the content that was (or would be) sent."""
        return self.tier.content_tokens if self.tier else 0


# ---------------------------------------------------------------------------------- logging


def log(message: str, session_id: str | None = None) -> None:
    """Append one redacted line to ``<home>/logs/extract.log`` (never raises)."""
    who = f" session={session_id}" if session_id else ""
    logfile.append(LOG_NAME, f"{now_iso()}{who} {' '.join(redact(message).split())}")


# ---------------------------------------------------------------------------------- the run


def run(request: Request, *, http_client: httpx2.Client | None = None,
        cfg: config.Config | None = None) -> Outcome:
    """Extract one session (see the module docstring). Never raises; the outcome says why."""
    try:
        cfg = cfg or config.Config.load()
        deadline = Deadline(cfg.get_int("llm_time_limit_s"))
        return _run(request, cfg, deadline, http_client)
    except (config.ConfigError, StoreError, TranscriptError) as exc:
        log(f"failed: {exc}", request.session_id)
        return Outcome("failed", str(exc), request.session_id)
    except Exception as exc:  # the last line of defence: one log line, never a traceback

        log(f"failed unexpectedly: {type(exc).__name__}: {exc} "
            f"{traceback.format_exc(limit=3)!r}", request.session_id)
        return Outcome("failed", f"unexpected error: {exc}", request.session_id)


def _run(request: Request, cfg: config.Config, deadline: Deadline,
         http_client: httpx2.Client | None) -> Outcome:
    with _store(cfg, request.dry_run) as db:
        transcript_path = request.transcript
        if transcript_path is None and request.session_id:
            known = sessions.get(db, request.session_id)
            transcript_path = known.transcript_path if known else None
        if not transcript_path:
            raise TranscriptError("no transcript given and none recorded for this session")
        transcript = read_transcript(transcript_path)
        session_id = request.session_id or transcript.session_id
        if not session_id:
            raise TranscriptError(f"{transcript_path} names no session; pass --session-id")
        target = _target(db, session_id, transcript, cfg, request)
        if request.dry_run:
            return _extract_once(db, cfg, transcript, target, request, deadline, http_client)
        lock = f"extract-{session_id}"
        outcome: Outcome | None = None
        rounds = 0
        # A Stop marks the session dirty before it looks at the lock, so a mark it left while
        # this run held the lock is seen by the checks inside it or by the one after release.
        while outcome is None or (_may_go_again(outcome, rounds, deadline)
                                  and sessions.is_dirty(db, session_id)):
            with background.exclusive(lock) as acquired:
                if not acquired:
                    if outcome is not None:
                        break  # another run holds it now and will see the mark
                    sessions.mark_dirty(db, session_id)
                    log("another extraction of this session is running: marked dirty",
                        session_id)
                    return Outcome("busy", "another extraction of this session is running",
                                   session_id, target.project_id)
                # A round clears the mark first: the transcript it reads covers what it asked for.
                if not sessions.take_dirty(db, session_id) and outcome is not None:
                    break  # another run took the mark
                while True:
                    fresh = transcript if outcome is None else read_transcript(transcript_path)
                    once = _extract_once(db, cfg, fresh, target, request, deadline, http_client)
                    outcome = once if outcome is None else _merge_outcomes(outcome, once)
                    rounds += 1
                    if not (_may_go_again(outcome, rounds, deadline)
                            and sessions.take_dirty(db, session_id)):
                        break
        assert outcome is not None
        return outcome


def _may_go_again(outcome: Outcome, rounds: int, deadline: Deadline) -> bool:
    """Whether a run may do another round: not failed, under MAX_ROUNDS, within its time."""
    return outcome.status != "failed" and rounds < MAX_ROUNDS and not deadline.expired()


@contextlib.contextmanager
def _store(cfg: config.Config, dry_run: bool) -> Iterator[Store]:
    """The store; a dry run without a store plans against an empty temporary one."""
    if dry_run and not config.db_path().exists():
        with tempfile.TemporaryDirectory(prefix="agentctx-dry-run-") as folder:
            db = Store.open(Path(folder) / "agentctx.db")
            try:
                yield db
            finally:
                db.close()
        return
    db = Store.open(busy_timeout_ms=cfg.get_int("busy_timeout_ms"))
    try:
        yield db
    finally:
        db.close()


def _target(db: Store, session_id: str, transcript: Transcript, cfg: config.Config,
            request: Request) -> Target:
    """Where the session's records go: the hooks' project for it, else the transcript's cwd."""
    known = sessions.get(db, session_id)
    cwd = (known.cwd if known and known.cwd else None) or transcript.cwd
    worktree: str | None = None
    root: str | None = None
    if request.dry_run:
        identity = identify(cwd) if cwd else None
        project_id = known.project_id if known else (identity.id if identity else None)
        worktree = identity.worktree if identity else None
        root = identity.root if identity else None
    else:
        # A backfilled transcript may come from a folder that no longer exists: its project is
        # given, and resolving the gone folder would only register a ghost project.
        backfilled = known is None and request.project_id is not None
        usable = bool(cwd) and (not backfilled or os.path.isdir(str(cwd)))
        resolved = proj.resolve(db, str(cwd)) if usable else None
        project_id = known.project_id if known else (
            request.project_id or (resolved.project.id if resolved else None))
        worktree = resolved.worktree if resolved else (cwd if backfilled else None)
        root = resolved.project.root if resolved and resolved.project.id == project_id else None
    if project_id is None:
        raise TranscriptError("cannot tell which project this session belongs to: the "
                              "transcript has no cwd and the session is unknown")
    if root is None:
        with contextlib.suppress(StoreError):
            root = proj.get(db, project_id).root
    if not request.dry_run:
        sessions.ensure(db, session_id, project_id, cwd=cwd, transcript_path=transcript.path,
                        started_at=transcript.first_timestamp)
    return Target(project_id, session_id, worktree, root, request.valid_from,
                  cfg.get_int("reinforce_sessions"))


def _merge_outcomes(first: Outcome, second: Outcome) -> Outcome:
    """A dirty-loop round's outcome folded into the first one's."""
    main = second if second.status in ("extracted", "failed") else first
    return main._replace(usd=first.usd + second.usd, calls=first.calls + second.calls,
                         actions=first.actions + second.actions)


def _extract_once(db: Store, cfg: config.Config, transcript: Transcript, target: Target,
                  request: Request, deadline: Deadline,
                  http_client: httpx2.Client | None) -> Outcome:
    session_id = target.session_id
    offset = sessions.extract_offset(db, session_id)
    if offset > transcript.end_offset:
        log(f"transcript shorter than the stored offset ({offset}); reading it from the start",
            session_id)
        offset = 0
    new = transcript.since(offset)
    texts = tiers.format_entries(new)
    tier = tiers.plan(texts)
    base = Outcome("skipped", "", session_id, target.project_id, tier)
    if not any(entry.role in ("user", "assistant", "summary") for entry in new):
        return _note(base._replace(status="nothing-new", reason="nothing new to extract"))
    if request.min_new_tokens and tier.content_tokens < request.min_new_tokens:
        return _note(base._replace(reason=f"only {tier.content_tokens:,} new tokens (waiting for "
                                          f"{request.min_new_tokens:,})"))
    model = cfg.get_str("llm_model")
    variable = variable_block(db, target)
    context = tiers.lead_in(tiers.format_entries(transcript.before(offset))) if offset else ""
    estimate = estimate_usd(tier, model, budget.estimate_tokens(variable),
                            budget.estimate_tokens(context))
    base = base._replace(estimated_usd=estimate)
    if not cfg.get_bool("llm"):
        return _note(base._replace(reason="llm is off (agentctx config set llm on)"), db, request)
    if api_key_from_env() is None:
        return _note(base._replace(reason="no ANTHROPIC_API_KEY in the environment: nothing "
                                          "sent"), db, request)
    if _paused(db, target.project_id):
        return _note(base._replace(reason="the project is paused"), db, request)
    cap = cfg.get_float("llm_cost_cap_usd")
    spent = _spent(db, session_id)
    if spent + estimate > cap and tier.tier == 3:
        # Too little budget left for a map-reduce: send the head and the tail instead, the
        # trade-off tier 2 makes anyway, rather than nothing at all.
        cheaper = tiers.plan(texts, map_reduce=False)
        cheaper_usd = estimate_usd(cheaper, model, budget.estimate_tokens(variable),
                                   budget.estimate_tokens(context))
        if spent + cheaper_usd <= cap:
            log(f"cost cap: map-reduce needs about ${estimate:.4f} but ${cap - spent:.4f} is "
                "left; sending the head and tail only", session_id)
            tier, estimate = cheaper, cheaper_usd
            base = base._replace(tier=tier, estimated_usd=estimate)
    if spent + estimate > cap:
        return _cap_reached(db, base, spent, estimate, cap, request)
    calls = _Calls(db, cfg, target, http_client, deadline, variable, request.dry_run, cap, spent)
    try:
        extraction = calls.extract(tier, context)
    except LLMError as exc:
        if calls.cap_hit:
            return _cap_reached(db, base._replace(usd=calls.usd, calls=calls.count), spent,
                                estimate, cap, request)
        outcome = base._replace(status="failed", reason=str(exc), usd=calls.usd,
                                calls=calls.count)
        return _note(outcome, db, request)
    extraction = sanitize(extraction)
    embedder = _embedder(cfg)
    if request.dry_run:
        actions = plan(db, extraction, target, embedder)
        return base._replace(status="planned", reason="dry run: nothing written",
                             actions=tuple(actions), usd=calls.usd, calls=calls.count)
    with db.write():
        actions = plan(db, extraction, target, embedder)
        applied = apply(db, actions, target)
        sessions.set_extract_offset(db, session_id, transcript.end_offset)
        sessions.update_meta(db, session_id, CAP_META_KEY, None)
    outcome = base._replace(status="extracted", reason=_summary(actions), actions=tuple(actions),
                            applied=applied, usd=calls.usd, calls=calls.count)
    return _note(outcome, db, request)


def _note(outcome: Outcome, db: Store | None = None, request: Request | None = None) -> Outcome:
    """Log the outcome; record it in the session meta (not on a dry run)."""
    tier = outcome.tier
    size = f"{tier.content_tokens:,} new tokens, {tier.tier_name}" if tier else ""
    money = f", {outcome.calls} call(s), ${outcome.usd:.4f}" if outcome.calls else ""
    log(f"{outcome.status}: {outcome.reason} ({size}{money})", outcome.session_id)
    if db is not None and request is not None and not request.dry_run and outcome.session_id:
        with contextlib.suppress(StoreError):
            sessions.update_meta(db, outcome.session_id, LAST_META_KEY, {
                "at": now_iso(), "status": outcome.status, "reason": outcome.reason,
                "new_tokens": outcome.new_tokens, "tier": tier.tier if tier else None,
                "calls": outcome.calls, "usd": round(outcome.usd, 6)})
    return outcome


def _cap_reached(db: Store, base: Outcome, spent: float, estimate: float, cap: float,
                 request: Request) -> Outcome:
    reason = (f"cost cap reached: ${spent + base.usd:.4f} spent on this session, the next "
              f"extraction needs about ${estimate:.4f}, the cap is ${cap:.2f} "
              "(agentctx config set llm_cost_cap_usd)")
    if not request.dry_run:
        with contextlib.suppress(StoreError):
            sessions.update_meta(db, base.session_id or "", CAP_META_KEY, {
                "at": now_iso(), "spent_usd": round(spent + base.usd, 6),
                "needed_usd": round(estimate, 6), "cap_usd": cap})
    return _note(base._replace(status="skipped", reason=reason), db, request)


def _spent(db: Store, session_id: str) -> float:
    known = sessions.get(db, session_id)
    return known.extraction_cost_usd if known else 0.0


def _paused(db: Store, project_id: str) -> bool:
    try:
        return proj.get(db, project_id).paused
    except StoreError:
        return False


def _project_name(db: Store, target: Target) -> str:
    try:
        return proj.get(db, target.project_id).name
    except StoreError:
        return Path(target.project_root or target.worktree or target.project_id).name


def variable_block(db: Store, target: Target) -> str:
    """The second system block for ``target``: its active records, preferences and stubs."""
    active, preferences, stubs = _lists(db, target)
    return project_block(project_name=_project_name(db, target), worktree=target.worktree,
                         active=active, preferences=preferences, stubs=stubs)


def _lists(db: Store, target: Target) -> tuple[list[Listed], list[Listed], list[Listed]]:
    """Active decisions and conventions, known preferences and this session's bugfix stubs."""
    active = records.list_records(db, project_id=target.project_id,
                                  types=["decision", "convention"], limit=200)
    preferences = records.list_records(db, project_id=target.project_id, types=["preference"],
                                       include_global=True, limit=200)
    stubs = [r for r in records.list_records(db, project_id=target.project_id, types=["bugfix"],
                                             session_id=target.session_id, limit=100)
             if r.source == "hook_observation" and not r.body.strip()]
    short = records.short_ids(db, [r.id for r in (*active, *preferences, *stubs)])
    share = LISTS_MAX_TOKENS // 3

    def fit(items: list[Listed]) -> list[Listed]:
        rendered = [f"{i.id} - {i.kind} - {i.text}" for i in items]
        kept = budget.pack(rendered, max_tokens=share, max_chars=share * 4).kept
        return items[:kept]

    return (fit([Listed(short[r.id], r.type, r.title) for r in active]),
            fit([Listed(short[r.id], "global" if r.project_id == GLOBAL_PROJECT else "project",
                        r.title) for r in preferences]),
            fit([Listed(short[r.id], "bugfix", r.title) for r in stubs]))


def _embedder(cfg: config.Config) -> Embedder | None:
    """The embedding model when consolidation provides one and it loads; else ``None``."""
    if not cfg.get_bool("embeddings"):
        return None

    # Never download here, and keep the model's "unavailable" warning out of extract.log's
    # one-line-per-run record: without a model, preferences are matched by text.
    quiet = logging.getLogger("agentctx.embed")
    level = quiet.level
    quiet.setLevel(logging.ERROR)
    try:
        model: Embedder | None = embedder.load_model(cfg, allow_download=False)
    except Exception:  # a missing or broken model only means: match preferences by text
        return None
    finally:
        quiet.setLevel(level)
    return model


def sanitize(extraction: Extraction) -> Extraction:
    """Drop empty items and keep at most :data:`LIST_MAX` per list."""
    return extraction.model_copy(update={
        "decisions": [d for d in extraction.decisions if d.what.strip()][:LIST_MAX],
        "preferences": [p for p in extraction.preferences if p.rule.strip()][:LIST_MAX],
        "conventions": [c for c in extraction.conventions if c.convention.strip()][:LIST_MAX],
        "gotchas": [g for g in extraction.gotchas if g.pattern.strip()][:LIST_MAX],
        "bugfixes": [b for b in extraction.bugfixes if b.stub_id.strip()][:LIST_MAX],
    })


def _summary(actions: Sequence[Action]) -> str:
    counts: dict[str, int] = {}
    for action in actions:
        if action.writes:
            label = {"add": f"new {action.type}", "supersede": f"superseding {action.type}",
                     "reinforce": "preference reinforced", "enrich": "bugfix enriched",
                     "handover": "handover"}[action.kind]
            counts[label] = counts.get(label, 0) + 1
    if not counts:
        return "nothing new worth recording"
    return ", ".join(f"{n} {label}" for label, n in counts.items())


# ---------------------------------------------------------------------------------- calls


class _Calls:
    """The model calls of one run: tiers, parallel map, synthesis, ledger and cap."""

    def __init__(self, db: Store, cfg: config.Config, target: Target,
                 http_client: httpx2.Client | None, deadline: Deadline, variable: str,
                 dry_run: bool, cap: float, spent: float) -> None:
        self.db = db
        self.model = cfg.get_str("llm_model")
        self.target = target
        self.http_client = http_client
        self.deadline = deadline
        self.system = system_blocks(variable)
        self.dry_run = dry_run
        self.cap = cap
        self.spent = spent
        self.usd = 0.0
        self.count = 0
        self.cap_hit = False
        self._client: anthropic.Anthropic | None = None

    def client(self) -> anthropic.Anthropic:
        if self._client is None:
            self._client = make_client(self.http_client)
        return self._client

    def extract(self, tier: tiers.TierPlan, context: str) -> Extraction:
        slices = tier.slices
        if len(slices) == 1:
            return self._one(transcript_message(slices[0].text, context=context), "extract")
        # The first chunk alone writes the prompt cache; the others then read it, in parallel.
        first = self._one(transcript_message(slices[0].text, context=context, part=1,
                                             parts=len(slices)), "extract-map")
        results: list[Extraction] = [first]
        with ThreadPoolExecutor(max_workers=PARALLEL_CALLS) as pool:
            futures = [pool.submit(self._call, transcript_message(s.text, part=s.part,
                                                                  parts=s.parts))
                       for s in slices[1:]]
            failures: list[LLMError] = []
            for future in futures:
                try:
                    value, attempts = future.result()
                except LLMError as exc:
                    self._account(exc.attempts, "extract-map")
                    failures.append(exc)
                    continue
                self._account(attempts, "extract-map")
                results.append(value)
        if failures:
            raise LLMError(f"{len(failures)} of {len(slices)} parts failed: {failures[0]}")
        self._check_cap(EXPECTED_SYNTHESIS_OUTPUT_TOKENS)
        return self._one(synthesis_message(results), "extract-synthesis")

    def _one(self, user: str, purpose: str) -> Extraction:
        try:
            value, attempts = self._call(user)
        except LLMError as exc:
            self._account(exc.attempts, purpose)
            raise
        self._account(attempts, purpose)
        return value

    def _call(self, user: str) -> tuple[Extraction, list[Attempt]]:
        result = structured_call(self.client(), output_type=Extraction, model=self.model,
                                 system=self.system, user=user, max_tokens=MAX_OUTPUT_TOKENS,
                                 deadline=self.deadline, schema=output_schema())
        return result.value, result.attempts

    def _account(self, attempts: list[Attempt], purpose: str) -> None:
        self.count += len(attempts)
        if self.dry_run:
            self.usd += sum(a.usd for a in attempts)
            return

        self.usd += record(self.db, attempts, purpose=purpose,
                           session_id=self.target.session_id, project_id=self.target.project_id)

    def _check_cap(self, expected_output: int) -> None:
        price_out = _price(self.model).output / 1_000_000
        if self.spent + self.usd + expected_output * price_out > self.cap:
            self.cap_hit = True
            raise LLMError("cost cap reached before the synthesis call")


# ---------------------------------------------------------------------------------- estimates


def _price(model: str) -> Any:
    return load().price(model)[0]


def estimate_usd(tier: tiers.TierPlan, model: str, variable_tokens: int,
                 context_tokens: int = 0, *, cache_warm: bool = False) -> float:
    """Expected USD of a plan's calls (the first call writes the prompt cache unless warm)."""
    table = load()
    prefix = budget.estimate_tokens(system_prefix())
    total = 0.0
    warm = cache_warm
    for number, piece in enumerate(tier.slices):
        extra = context_tokens if number == 0 else 0
        usage = CallUsage(input_tokens=variable_tokens + piece.tokens + extra
                          + MESSAGE_OVERHEAD_TOKENS, output_tokens=EXPECTED_OUTPUT_TOKENS,
                          cache_write_1h_tokens=0 if warm else prefix,
                          cache_read_tokens=prefix if warm else 0)
        total += table.cost(model, usage)
        warm = True
    if tier.synthesis:
        usage = CallUsage(input_tokens=variable_tokens + MESSAGE_OVERHEAD_TOKENS
                          + len(tier.slices) * EXPECTED_OUTPUT_TOKENS,
                          output_tokens=EXPECTED_SYNTHESIS_OUTPUT_TOKENS,
                          cache_read_tokens=prefix)
        total += table.cost(model, usage)
    return total


def describe(actions: Sequence[Action]) -> list[str]:
    """One line per planned action, for ``--dry-run`` and interactive runs."""
    marks = {"add": "+", "supersede": "↻", "reinforce": "↑", "enrich": "✎", "handover": "⇄",
             "duplicate": "=", "skip": "·"}
    lines = []
    for action in actions:
        detail = {
            "supersede": f" (supersedes {action.record_id})",
            "reinforce": f" ({action.note}; confidence {action.confidence})",
            "enrich": " (cause and fix added)",
            "duplicate": f" ({action.note})",
            "skip": f" ({action.note})",
        }.get(action.kind, "")
        scope = " [global]" if action.draft is not None and action.draft.scope == "global" else ""
        lines.append(f"  {marks[action.kind]} {action.type:<10} {action.title}{scope}{detail}")
    return lines

