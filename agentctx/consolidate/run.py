"""One consolidation run: embed, index, near-duplicates, scores, archive, digests — time-boxed.

Run by the session-end child after the final extraction and by ``agentctx consolidate``. Only one
run at a time (the ``consolidate`` lock; a second run returns at once with ``skipped``). Every
step writes in batches of one transaction each, so a run killed at any point (even ``kill -9``)
leaves the store consistent, and the next run redoes whatever was left: records still flagged
``pending_embedding`` are embedded, scores are recomputed, the archive continues, digests are
rebuilt.

Steps, in order (each checks the time box before it starts and between batches):

1. **embed** — every pending record, batch by batch (one model load).
   **query-model** — write (or confirm) the model's query side file, which lets the per-prompt
   hook embed a prompt without numpy (:mod:`agentctx.consolidate.query_side_file`).
2. **duplicates** — near-duplicate scan per project and type; confirmed pairs are merged when a
   judge is available (through the caller's merge: the use-case layer's write path),
   otherwise they stay merge candidates.
3. **scores** — decay scores and ``low_score_since`` of every current record.
4. **archive** — records superseded more than ``archive_after_days`` ago move to the archive.
   **team** — each opted-in project's team file brought in step, through the caller's team step
   (:mod:`agentctx.ops.consolidation` passes the use-case layer's, for its folder).
5. **index** — bring the sqlite-vec index in line (when this Python can load it).
6. **drift** — each project's CLAUDE.md drift scan (:mod:`agentctx.drift`) against the memory
   files at its root, with the model's vectors when there are some; stores the drift scores the
   digest's note counts. Never writes a memory file.
   **verify** — the paths every current record names, checked at the project's root
   (:mod:`agentctx.consolidate.truth`): what ``status`` and ``agentctx verify`` call possibly
   stale. **stated** — which records the memory files Claude Code loads (CLAUDE.md, AGENTS.md,
   MEMORY.md's head) already state, at the root and recent worktrees: the digest and the
   per-prompt hook leave those out.
7. **digests** — each project's SessionStart digest, sections ranked against recent prompts.

Merges and the archive change records, so they run before the index check (which is stamped with
the store's change counter) and the digests (fresh only while no record changed since).
"""

from __future__ import annotations

import json
import logging
import os
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import asdict, dataclass, field
from datetime import datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agentctx import drift
from agentctx.consolidate import duplicates, scores, truth
from agentctx.consolidate.query_side_file import ensure
from agentctx.consolidate.rank import ranker
from agentctx.context import digest
from agentctx.core import config
from agentctx.core.background import exclusive
from agentctx.core.ids import now as clock_now
from agentctx.core.ids import to_iso
from agentctx.ml.embedder import EMBED_TEXT_FORMAT, embedding_text, load_model
from agentctx.store import projects as proj
from agentctx.store import teamstate, upkeep, vecside_build, vectors
from agentctx.store.db import Store
from agentctx.store.errors import NotFound
from agentctx.store.models import GLOBAL_PROJECT, Project

if TYPE_CHECKING:  # pragma: no cover - typing only
    from agentctx.consolidate.duplicates import Judge, Merge
    from agentctx.ml.embedder import EmbeddingModel
    from agentctx.team import SyncResult

TeamStep = Callable[[Store, str], "SyncResult | None"]
"""Brings one project's team file in step after the run's writes (the use-case layer's, for
its caller's folder); ``None`` when the project keeps none."""

log = logging.getLogger("agentctx.consolidate")

LOCK_NAME = "consolidate"
META_LAST_RUN = "consolidate_last_run"
DEFAULT_BATCH = 1024
MERGE_REVIEWS_PER_RUN = 20
CHECK_BUDGET = 2000  # stats a digest built here may spend on the paths its candidates name
STEPS = ("embed", "query-model", "duplicates", "scores", "archive", "team", "index", "drift",
         "verify", "stated", "digests")

Progress = Callable[[str], None]


@dataclass
class Report:
    """What a run did, step by step (``--json`` prints it; ``status`` reads the last one)."""

    started_at: str
    skipped: str | None = None  # why nothing ran (another run holds the lock)
    stopped: str | None = None  # why the run stopped early (time limit)
    model: str | None = None
    embeddings: str = ""  # why embeddings are off, or "on"
    backend: str = ""
    embedded: int = 0
    query_model: str = ""  # the hooks' query side file: written, current, or why unavailable
    pending_left: int = 0
    near_duplicates: int = 0
    new_candidates: int = 0
    merged: int = 0
    judged_distinct: int = 0
    scored: int = 0
    scores_changed: int = 0
    archived: int = 0
    drift_scanned: int = 0  # projects whose memory files were scanned
    drift_flagged: int = 0  # their records missing from or contradicted by the memory files
    possibly_stale: int = 0  # current records whose named paths are all gone
    stated: int = 0  # current records the memory files Claude Code loads already state
    digests: int = 0
    team_files: int = 0  # team files (.agentctx/context.md) rewritten
    seconds: dict[str, float] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        """A JSON-friendly copy."""
        return asdict(self)


class _Clock:
    def __init__(self, limit_s: float) -> None:
        self.start = time.monotonic()
        self.limit_s = limit_s

    def over(self) -> bool:
        return time.monotonic() - self.start >= self.limit_s


def consolidate(db: Store, *, project_ids: Sequence[str] | None = None,
                cfg: config.Config | None = None, embeddings: bool = True,
                model: EmbeddingModel | None = None, judge: Judge | str | None = "auto",
                merge: Merge | None = None, team: TeamStep | None = None,
                time_limit_s: float | None = None, batch_size: int = DEFAULT_BATCH,
                progress: Progress | None = None, now: datetime | None = None) -> Report:
    """Run consolidation under the ``consolidate`` lock; see the module docstring.

    ``project_ids`` limits the per-record steps to those projects (``global`` is always added);
    ``None`` means every project. ``embeddings=False`` skips every vector step (everything keeps
    working on full-text search). ``model`` overrides the configured model (tests, benchmarks);
    ``judge`` confirms merges: ``"auto"`` uses the configured model when the ``llm`` knob is on
    and an API key is set, ``None`` never merges (near-duplicates stay candidates). ``merge``
    and ``team`` are the caller's write path (:mod:`agentctx.ops.consolidation` passes them):
    without ``merge`` no pair is merged (the judge is not asked), without ``team`` no team file
    is touched.
    """
    with exclusive(LOCK_NAME) as mine:
        if not mine:
            return Report(started_at=to_iso(now or clock_now()),
                          skipped="another consolidation is running")
        cfg = cfg or config.Config.load()
        if judge == "auto":
            from agentctx.consolidate.judge import llm_judge  # late: pydantic, 40 ms at CLI start

            judge = llm_judge(db, cfg)
        return _run(db, project_ids=project_ids, cfg=cfg, embeddings=embeddings, model=model,
                    judge=judge if callable(judge) and merge is not None else None, merge=merge,
                    team=team, time_limit_s=time_limit_s,
                    batch_size=max(1, batch_size), progress=progress or (lambda _line: None),
                    now=now or clock_now())


def _run(db: Store, *, project_ids: Sequence[str] | None, cfg: config.Config, embeddings: bool,
         model: EmbeddingModel | None, judge: Judge | None, merge: Merge | None,
         team: TeamStep | None, time_limit_s: float | None, batch_size: int, progress: Progress,
         now: datetime) -> Report:
    clock = _Clock(time_limit_s if time_limit_s is not None
                   else cfg.get_int("consolidate_time_limit_s"))
    report = Report(started_at=to_iso(now))
    scope = None if project_ids is None else list(dict.fromkeys([*project_ids, GLOBAL_PROJECT]))

    def step(name: str, work: Callable[[], bool]) -> bool:
        if clock.over():
            report.stopped = (f"time limit ({clock.limit_s:g} s) reached before {name}; the rest "
                              "runs next time")
            return False
        began = time.monotonic()
        finished = work()
        report.seconds[name] = round(time.monotonic() - began, 3)
        if not finished and report.stopped is None:
            report.stopped = (f"time limit ({clock.limit_s:g} s) reached during {name}; the rest "
                              "runs next time")
        return finished

    if embeddings and cfg.get_bool("embeddings"):
        if model is None:
            model = load_model(cfg)
        report.embeddings = "on" if model else "the embedding model is unavailable (see the log)"
    else:
        model = None
        report.embeddings = "off (--no-embeddings)" if not embeddings else "off (embeddings = off)"
    report.model = model.name if model else None

    steps: list[tuple[str, Callable[[], bool]]] = []
    if model is not None:
        steps += [("embed", lambda: _embed(db, model, scope, batch_size, clock, report, progress)),
                  ("query-model", lambda: _query_model(db, model, report, progress)),
                  ("duplicates", lambda: _duplicates(db, model, scope, cfg, judge, merge, clock,
                                                     report, progress))]
    steps += [("scores", lambda: _scores(db, scope, cfg, now, clock, report, progress)),
              ("archive", lambda: _archive(db, scope, cfg, now, batch_size, clock, report,
                                           progress)),
              ("team", lambda: _team_files(db, scope, team, report, progress))]
    if model is not None:
        steps.append(("index", lambda: _index(db, model, progress)))
    steps.append(("drift", lambda: _drift(db, scope, model, clock, report, progress)))
    steps.append(("verify", lambda: _verify(db, scope, clock, report, progress)))
    steps.append(("stated", lambda: _stated(db, scope, model, clock, report, progress)))
    steps.append(("digests", lambda: _digests(db, scope, model, cfg, clock, report, progress)))
    for name, work in steps:
        if not step(name, work):
            break
    report.pending_left = vectors.count_pending(db, scope) if model else 0
    report.backend = vectors.backend(db)[0] if model else "none"
    report.seconds["total"] = round(time.monotonic() - clock.start, 3)
    _remember(db, report)
    return report


def _embed(db: Store, model: EmbeddingModel, scope: Sequence[str] | None, batch_size: int,
           clock: _Clock, report: Report, progress: Progress) -> bool:
    with db.write():
        requeued = vectors.requeue_other_format(db, EMBED_TEXT_FORMAT)
        requeued += vectors.requeue_other_models(db, model.name)
    if requeued:
        progress(f"re-embedding {requeued} records for model {model.name}")
    total = vectors.count_pending(db, scope)
    after = 0
    while True:
        if clock.over():
            return False
        batch = vectors.pending(db, project_ids=scope, limit=batch_size, after_pk=after)
        if not batch:
            return True
        after = batch[-1].pk
        texts = [embedding_text(p.type, p.valid_from, p.project, p.title, p.body) for p in batch]
        matrix = model.encode(texts)
        report.embedded += vectors.save(db, model.name, list(zip(batch, matrix, strict=True)))
        progress(f"embedded {report.embedded}/{total}")


def _query_model(db: Store, model: EmbeddingModel, report: Report, progress: Progress) -> bool:
    report.query_model = ensure(db, model)
    progress(f"query side file: {report.query_model}")
    return True


def _index(db: Store, model: EmbeddingModel, progress: Progress) -> bool:
    if vectors.sync_index(db, model.name):
        progress("vector index (vec0) up to date")
    progress(f"the hook's vector lists: {vecside_build.build(db, model.name)}")
    return True


def _scope_projects(db: Store, scope: Sequence[str] | None) -> list[str]:
    if scope is not None:
        return list(scope)
    return [item.project.id for item in proj.list_all(db)] + [GLOBAL_PROJECT]


def _projects(db: Store, scope: Sequence[str] | None) -> Iterator[Project]:
    """The real projects of ``scope`` (not the global pseudo-project; one deleted meanwhile is
    passed over)."""
    for project_id in _scope_projects(db, scope):
        if project_id == GLOBAL_PROJECT:
            continue
        try:
            project = proj.get(db, project_id)
        except NotFound:
            continue
        yield project


def _duplicates(db: Store, model: EmbeddingModel, scope: Sequence[str] | None,
                cfg: config.Config, judge: Judge | None, merge: Merge | None, clock: _Clock,
                report: Report, progress: Progress) -> bool:
    threshold = cfg.get_float("near_duplicate_cosine")
    for project_id in _scope_projects(db, scope):
        if clock.over():
            return False
        found = duplicates.scan(db, model.name, project_id, threshold)
        report.near_duplicates += found.candidates
        report.new_candidates += found.new
        if judge is not None and merge is not None and found.candidates:
            merged, distinct = duplicates.review(
                db, project_id, judge, merge, limit=MERGE_REVIEWS_PER_RUN - report.merged
                - report.judged_distinct, deadline=clock.over)
            report.merged += merged
            report.judged_distinct += distinct
    progress(f"near-duplicates: {report.near_duplicates} candidate pairs "
             f"({report.new_candidates} new, {report.merged} merged)")
    return True


def _scores(db: Store, scope: Sequence[str] | None, cfg: config.Config, now: datetime,
            clock: _Clock, report: Report, progress: Progress) -> bool:
    scored, changed, finished = scores.update(db, scope, threshold=cfg.get_float("prune_score"),
                                              now=now, deadline=clock.over)
    report.scored, report.scores_changed = scored, changed
    progress(f"scored {scored} records ({changed} changed)")
    return finished


def _archive(db: Store, scope: Sequence[str] | None, cfg: config.Config, now: datetime,
             batch_size: int, clock: _Clock, report: Report, progress: Progress) -> bool:
    before = to_iso(now - timedelta(days=cfg.get_int("archive_after_days")))
    while True:
        if clock.over():
            return False
        pks = upkeep.archivable(db, superseded_before=before, project_ids=scope,
                                limit=min(batch_size, 500))
        if not pks:
            return True
        report.archived += upkeep.archive(db, pks)
        progress(f"archived {report.archived} records")


def _drift(db: Store, scope: Sequence[str] | None, model: EmbeddingModel | None, clock: _Clock,
           report: Report, progress: Progress) -> bool:

    encoder = drift.encoder_for(db, model)
    for project in _projects(db, scope):
        if clock.over():
            return False
        if project.paused or not os.path.isdir(project.root):
            continue
        try:
            found = drift.scan_project(db, project, Path(project.root), encoder=encoder)
        except OSError as exc:  # an unreadable folder: the other projects still get scanned
            log.warning("drift scan of %s failed: %s", project.root, exc)
            continue
        report.drift_scanned += 1
        report.drift_flagged += found.flagged
    progress(f"CLAUDE.md drift: {report.drift_flagged} records flagged in "
             f"{report.drift_scanned} projects")
    return True


def _verify(db: Store, scope: Sequence[str] | None, clock: _Clock, report: Report,
            progress: Progress) -> bool:
    for project in _projects(db, scope):
        if clock.over():
            return False
        if project.paused:
            continue
        report.possibly_stale += truth.check_paths(db, project).stale
    progress(f"paths: {report.possibly_stale} records possibly stale")
    return True


def _stated(db: Store, scope: Sequence[str] | None, model: EmbeddingModel | None,
            clock: _Clock, report: Report, progress: Progress) -> bool:
    encoder = drift.encoder_for(db, model)
    for project in _projects(db, scope):
        if clock.over():
            return False
        if project.paused or not os.path.isdir(project.root):
            continue
        try:
            report.stated += truth.measure_stated(db, project, encoder=encoder)
        except OSError as exc:  # an unreadable folder: the other projects are still measured
            log.warning("memory files of %s not measured: %s", project.root, exc)
    progress(f"memory files: {report.stated} records already stated")
    return True


def _team_files(db: Store, scope: Sequence[str] | None, team: TeamStep | None, report: Report,
                progress: Progress) -> bool:
    """Bring the team file of each opted-in project in step, through the caller's ``team``."""

    if team is None:
        return True
    wanted = set(teamstate.enabled_projects(db))
    for project_id in _scope_projects(db, scope):
        if project_id not in wanted:
            continue
        result = team(db, project_id)
        if result is not None and result.written:
            report.team_files += 1
        if result is not None and result.problem:
            log.warning("%s", result.problem)
    progress(f"team files: {report.team_files} rewritten")
    return True


def _digests(db: Store, scope: Sequence[str] | None, model: EmbeddingModel | None,
             cfg: config.Config, clock: _Clock, report: Report, progress: Progress) -> bool:
    prompts = cfg.get_int("recent_prompts")
    for project in _projects(db, scope):
        if clock.over():
            return False
        digest.refresh(db, project, rank=ranker(db, project.id, model, prompts=prompts),
                       builder="consolidate", cfg=cfg, check_budget=CHECK_BUDGET)
        report.digests += 1
    progress(f"digests rebuilt for {report.digests} projects")
    return True


def _remember(db: Store, report: Report) -> None:
    try:
        db.meta_set(META_LAST_RUN, json.dumps(report.as_dict()))
    except Exception as exc:  # the summary is a convenience; never fail a finished run on it
        log.warning("could not record the consolidation summary: %s", exc)


def last_run(db: Store) -> dict[str, Any] | None:
    """The summary of the last finished run (``None`` if consolidation never ran)."""
    raw = db.meta_get(META_LAST_RUN)
    if not raw:
        return None
    try:
        value = json.loads(str(raw))
    except json.JSONDecodeError:
        return None
    return value if isinstance(value, dict) else None
