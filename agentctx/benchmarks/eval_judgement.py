"""The per-prompt judgement benchmark: the hook's decision on the evaluation projects.

For every evaluation project (:mod:`agentctx.benchmarks.projects`) the history is loaded into a
fresh store and every prompt of the chosen split is judged twice, as a user meets the hook:

* **fresh** — straight after the records were written, before any consolidation (no vectors,
  nothing archived);
* **consolidated** — after a real consolidation run with the user's defaults (records superseded
  long ago archived, scores decayed; embeddings and the query side file when a model is given).

Each prompt comes from a new session, so nothing has been injected before. What the hook
injects is read as the keys of the records it shows **in full** and those it shows **as a
pointer** (id, type and title only). Metrics, each with its 95% Wilson interval:

* unanswerable prompts with no full record injected, with nothing at all injected, and the
  mean tokens injected on them;
* **recall@3**: answerable prompts where a labelled answer is injected, in full or as a pointer
  (and, beside it, in full only), per prompt kind;
* **supersession**: prompts about a changed fact where its record now in force is injected, and
  how many times an older version was injected at all (it must be never).
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable, Sequence
from datetime import datetime
from pathlib import Path
from typing import Any, NamedTuple

from agentctx.benchmarks import coding_data as data
from agentctx.benchmarks import eval_projects as projects
from agentctx.benchmarks import metrics, retrieval, tables
from agentctx.context import judgement
from agentctx.core import config
from agentctx.store.db import Store

PHASES = ("fresh", "consolidated")
# The kind of a prompt of a file written before prompts were labelled by kind.
UNLABELLED = "unlabelled"
# The targets, checked on the consolidated phase of the pooled held-out prompts.
TARGETS: tuple[tuple[str, str, float], ...] = (
    ("unanswerable_no_full", ">=", 0.90),
    ("unanswerable_nothing", ">=", 0.80),
    ("unanswerable_tokens", "<=", 40.0),
    ("recall_at_3", ">=", 0.90),
    ("recall_at_3_paraphrase", ">=", 0.60),
    ("recall_at_3_full", ">=", 0.80),
    ("supersession_current", ">=", 0.90),
    ("supersession_old_shown", "<=", 0.0),
    ("paraphrase_wrong_full", "<=", 0.10),
)


class Judged(NamedTuple):
    """The hook's decision on one prompt, as record keys."""

    project: str
    split: str
    phase: str
    query: data.BenchQuery
    full: tuple[str, ...]
    pointers: tuple[str, ...]
    tokens: int
    old_versions: tuple[str, ...]  # superseded keys among what was shown

    @property
    def shown(self) -> tuple[str, ...]:
        """Everything injected: full records, then pointers."""
        return self.full + self.pointers


class Share(NamedTuple):
    """A proportion with its 95% Wilson interval."""

    hits: int
    total: int

    @property
    def value(self) -> float | None:
        """The share, ``None`` when nothing was counted."""
        return self.hits / self.total if self.total else None

    def interval(self) -> tuple[float, float] | None:
        """The 95% Wilson interval, ``None`` when nothing was counted."""
        return metrics.wilson_interval(self.hits, self.total) if self.total else None

    def describe(self) -> str:
        """``hits/total = share (low-high)``, or the missing marker."""
        if not self.total:
            return tables.MISSING
        low, high = metrics.wilson_interval(self.hits, self.total)
        return f"{self.hits}/{self.total} = {self.hits / self.total:.3f} ({low:.2f}-{high:.2f})"


class Score(NamedTuple):
    """The metrics of one group of judged prompts."""

    unanswerable_no_full: Share
    unanswerable_nothing: Share
    unanswerable_tokens: float | None
    recall_at_3: Share
    recall_at_3_full: Share
    recall_by_kind: dict[str, Share]
    nothing_by_kind: dict[str, Share]
    supersession_current: Share
    supersession_old_shown: int
    tokens_per_prompt: float | None
    # Paraphrased prompts given a record that does not answer them in full.
    paraphrase_wrong_full: Share = Share(0, 0)
    # Prompts in a record's own words (every answerable kind but paraphrase) given it in full.
    own_words_full: Share = Share(0, 0)


def score(judged: Sequence[Judged], chains: dict[str, dict[str, frozenset[str]]]) -> Score:
    """Metrics over ``judged``; ``chains`` maps a project to each key's superseded versions."""
    unanswerable = [j for j in judged if not j.query.answerable]
    answerable = [j for j in judged if j.query.answerable]
    changed = [j for j in answerable if j.query.about_change]
    paraphrased = [j for j in answerable if j.query.kind == "paraphrase"]
    own_words = [j for j in answerable if j.query.kind not in ("paraphrase", UNLABELLED)]

    def found(j: Judged, keys: Sequence[str]) -> bool:
        return bool(set(j.query.answers) & set(keys[:3]))

    def current_found(j: Judged) -> bool:
        heads = [k for k in j.query.answers if chains[j.project].get(k)] or list(j.query.answers)
        return bool(set(heads) & set(j.shown[:3]))

    recall_kind = {kind: Share(sum(found(j, j.shown) for j in answerable if j.query.kind == kind),
                               sum(1 for j in answerable if j.query.kind == kind))
                   for kind in sorted({j.query.kind for j in answerable})}
    nothing_kind = {kind: Share(sum(not j.shown for j in unanswerable if j.query.kind == kind),
                                sum(1 for j in unanswerable if j.query.kind == kind))
                    for kind in sorted({j.query.kind for j in unanswerable})}
    return Score(
        unanswerable_no_full=Share(sum(not j.full for j in unanswerable), len(unanswerable)),
        unanswerable_nothing=Share(sum(not j.shown for j in unanswerable), len(unanswerable)),
        unanswerable_tokens=metrics.mean([float(j.tokens) for j in unanswerable])
        if unanswerable else None,
        recall_at_3=Share(sum(found(j, j.shown) for j in answerable), len(answerable)),
        recall_at_3_full=Share(sum(found(j, j.full) for j in answerable), len(answerable)),
        recall_by_kind=recall_kind, nothing_by_kind=nothing_kind,
        supersession_current=Share(sum(current_found(j) for j in changed), len(changed)),
        supersession_old_shown=sum(len(j.old_versions) for j in judged),
        tokens_per_prompt=metrics.mean([float(j.tokens) for j in judged]) if judged else None,
        paraphrase_wrong_full=Share(sum(bool(set(j.full) - set(j.query.answers))
                                        for j in paraphrased), len(paraphrased)),
        own_words_full=Share(sum(found(j, j.full) for j in own_words), len(own_words)))


class ProjectRun(NamedTuple):
    """One project's prompts judged in every phase."""

    name: str
    records: int
    chains: dict[str, frozenset[str]]
    consolidation: str
    judged: list[Judged]


class JudgementReport(NamedTuple):
    """Everything one run measured."""

    settings: judgement.Settings
    model: str | None
    model_reason: str | None
    split: str
    runs: list[ProjectRun]

    def chains(self) -> dict[str, dict[str, frozenset[str]]]:
        """Each project's key → superseded keys map."""
        return {run.name: run.chains for run in self.runs}

    def select(self, *, phase: str, project: str | None = None) -> list[Judged]:
        """The judged prompts of one phase (of one project, or pooled)."""
        return [j for run in self.runs for j in run.judged
                if j.phase == phase and (project is None or j.project == project)]


def user_config(model_path: str | None) -> config.Config:
    """The configuration users run with (``config.json`` and the environment; the default archive
    age, unlike the other benchmarks), with ``model_path`` as the embedding model."""
    environ = {k: v for k, v in os.environ.items() if k not in retrieval.OVERRIDES}
    if model_path:
        environ["AGENTCTX_EMBED_MODEL"] = str(Path(model_path).expanduser().resolve())
        environ["AGENTCTX_EMBEDDINGS"] = "on"
    return config.Config(config.read_file(), environ=environ)


def run(*, split: str = "tuning", names: Sequence[str] = (), model_path: str | None = None,
        now: datetime | None = None,
        progress: Callable[[str, int, int], None] | None = None) -> JudgementReport:
    """Build every selected project in a temporary folder and judge each prompt of ``split``."""
    if split not in projects.SPLITS:
        raise ValueError(f"unknown split {split!r}; expected one of {', '.join(projects.SPLITS)}")
    chosen = [p for p in sources() if not names or p.name in names]
    missing = set(names) - {p.name for p in chosen}
    if missing:
        raise data.DataError(f"no evaluation project named {', '.join(sorted(missing))}")
    users = user_config(model_path)
    embedder = retrieval.load_embedder(model_path, users) if model_path else \
        retrieval.Unavailable("no model given (--model PATH)")
    runs = []
    for project in chosen:
        runs.append(_run_project(project, split, users, embedder, now, progress))
    return JudgementReport(judgement.settings(users),
                           embedder.label if isinstance(embedder, retrieval.Embedder) else None,
                           embedder.reason if isinstance(embedder, retrieval.Unavailable)
                           else None, split, runs)


class Source(NamedTuple):
    """A project history and its prompt files per split."""

    name: str
    history: Path
    splits: dict[str, tuple[Path, ...]]
    kinds: bool  # whether its prompts are labelled by kind


def sources() -> list[Source]:
    """The coding benchmark's project (its five tuning files, its held-out file; prompts not
    labelled by kind) and every evaluation project."""
    found = [Source("ledgerline", data.HISTORY_PATH,
                    {"tuning": tuple(data.SPLIT_FILES[s] for s in data.TUNING_SPLITS),
                     "held-out": (data.HELD_OUT_PATH,)}, False)]
    found += [Source(p.name, p.history_path,
                     {split: (p.queries_path(split),) for split in projects.SPLITS}, True)
              for p in projects.eval_projects()]
    return found


def _run_project(project: Source, split: str, cfg: config.Config,
                 embedder: retrieval.Embedder | retrieval.Unavailable, now: datetime | None,
                 progress: Callable[[str, int, int], None] | None) -> ProjectRun:
    history = data.load_history(project.history)
    queries = [q for path in project.splits[split] for q in data.load_queries(path)]
    data.check_queries(history, queries)
    if project.kinds:
        projects.check_kinds(queries)
    else:
        queries = [q._replace(kind=UNLABELLED) for q in queries]
    chains = data.predecessors(history)
    judged: list[Judged] = []
    how = "not consolidated"
    with tempfile.TemporaryDirectory(prefix="agentctx-judgement-") as folder:
        db = Store.open(Path(folder) / "bench.db")
        try:
            built = data.build(db, history, Path(folder) / "projects", now)
            total = len(queries) * len(PHASES)
            for phase in PHASES:
                if phase == "consolidated":
                    model = embedder if isinstance(embedder, retrieval.Embedder) else None
                    how = retrieval.consolidate(db, model, cfg).describe()
                for query in queries:
                    judged.append(_judge(db, built, project.name, split, phase, query, cfg))
                    if progress:
                        progress(project.name, len(judged), total)
        finally:
            db.close()
    return ProjectRun(project.name, built.records, chains, how, judged)


def _judge(db: Store, built: data.Built, name: str, split: str, phase: str,
           query: data.BenchQuery, cfg: config.Config) -> Judged:
    injection = retrieval.hook_injection(db, query.prompt, built.project_id, built.project_name,
                                         cfg)
    full = tuple(built.keys.get(h.record.id, f"?{h.record.id}") for h in injection.hits)
    pointers = tuple(built.keys.get(h.record.id, f"?{h.record.id}")
                     for h in injection.pointers)
    old = tuple(k for k in full + pointers if k in built.superseded)
    return Judged(name, split, phase, query, full, pointers, injection.tokens, old)


# ---------------------------------------------------------------------------------- report


def _value(score: Score, metric: str) -> float | None:
    if metric == "recall_at_3_paraphrase":
        share = score.recall_by_kind.get("paraphrase")
        return share.value if share else None
    if metric == "supersession_old_shown":
        return float(score.supersession_old_shown)
    found = getattr(score, metric)
    return found.value if isinstance(found, Share) else found


def targets(report: JudgementReport, phase: str = "consolidated") -> list[dict[str, Any]]:
    """The issue's targets on the pooled prompts of ``phase``: value, goal and whether met."""
    pooled = score(report.select(phase=phase), report.chains())
    checks = []
    for metric, sense, goal in TARGETS:
        value = _value(pooled, metric)
        met = value is not None and (value >= goal - 1e-9 if sense == ">=" else
                                     value <= goal + 1e-9)
        checks.append({"metric": metric, "goal": f"{sense} {goal:g}", "value": value,
                       "met": met})
    return checks


def _rows(label: str, s: Score) -> list[list[str]]:
    return [[label, s.unanswerable_no_full.describe(), s.unanswerable_nothing.describe(),
             tables.number(s.unanswerable_tokens), s.recall_at_3.describe(),
             s.recall_at_3_full.describe(), s.supersession_current.describe(),
             str(s.supersession_old_shown)]]


def render(report: JudgementReport) -> str:
    """The report as fixed-width text."""
    chains = report.chains()
    lines = [f"Per-prompt judgement on the evaluation projects ({report.split} prompts)",
             f"hook knobs: {report.settings.describe()}",
             f"model: {report.model}" if report.model else
             f"model: none - {report.model_reason}"]
    for one in report.runs:
        lines.append(f"{one.name}: {one.records} records, "
                     f"{sum(1 for v in one.chains.values() if v)} superseding records; "
                     f"{one.consolidation}")
    headers = ["project / phase", "unans. no full", "unans. nothing", "tok", "recall@3",
               "recall@3 full", "supersession", "old"]
    for phase in PHASES:
        rows: list[list[str]] = []
        for one in report.runs:
            rows += _rows(one.name, score(report.select(phase=phase, project=one.name), chains))
        pooled = score(report.select(phase=phase), chains)
        rows += _rows("all projects", pooled)
        lines += ["", f"phase: {phase}", tables.table(headers, rows), "recall@3 by kind: " +
                  "; ".join(f"{k} {v.describe()}" for k, v in pooled.recall_by_kind.items()),
                  f"paraphrases with a wrong record in full: "
                  f"{pooled.paraphrase_wrong_full.describe()}; prompts in a record's own words "
                  f"given it in full: {pooled.own_words_full.describe()}",
                  "nothing injected by kind: " +
                  "; ".join(f"{k} {v.describe()}" for k, v in pooled.nothing_by_kind.items())]
    lines += ["", "targets (consolidated, all projects):"]
    lines += [f"  {c['metric']} {c['goal']}: {'met' if c['met'] else 'NOT met'} "
              f"({tables.ratio(c['value'])})" for c in targets(report)]
    return "\n".join(lines)


def misses(report: JudgementReport, phase: str = "consolidated") -> str:
    """Tuning prompts the hook got wrong in ``phase``; never lists held-out prompts."""
    if report.split != "tuning":
        raise ValueError("only tuning misses are listed; the held-out prompts are never studied")
    lines = []
    for j in report.select(phase=phase):
        wrong = (j.query.answerable and not set(j.query.answers) & set(j.shown[:3])) or \
            (not j.query.answerable and j.shown) or j.old_versions
        if wrong:
            lines.append(f"{j.project} {j.query.id} [{j.query.kind}] {j.query.prompt!r}\n"
                         f"    wanted: {', '.join(j.query.answers) or '-'}\n"
                         f"    full: {', '.join(j.full) or '-'}; pointers: "
                         f"{', '.join(j.pointers) or '-'}; {j.tokens} tokens")
    return "\n".join(lines) or "no misses"


def to_json(report: JudgementReport) -> dict[str, Any]:
    """The report for machines."""
    chains = report.chains()

    def share(s: Share) -> dict[str, Any]:
        return {"hits": s.hits, "total": s.total, "value": s.value, "ci95": s.interval()}

    def score_json(s: Score) -> dict[str, Any]:
        return {"unanswerable_no_full": share(s.unanswerable_no_full),
                "unanswerable_nothing": share(s.unanswerable_nothing),
                "unanswerable_tokens": s.unanswerable_tokens,
                "recall_at_3": share(s.recall_at_3),
                "recall_at_3_full": share(s.recall_at_3_full),
                "recall_by_kind": {k: share(v) for k, v in s.recall_by_kind.items()},
                "nothing_by_kind": {k: share(v) for k, v in s.nothing_by_kind.items()},
                "supersession_current": share(s.supersession_current),
                "supersession_old_shown": s.supersession_old_shown,
                "tokens_per_prompt": s.tokens_per_prompt,
                "paraphrase_wrong_full": share(s.paraphrase_wrong_full),
                "own_words_full": share(s.own_words_full)}

    return {"benchmark": "judgement", "split": report.split,
            "hook_settings": report.settings._asdict(), "model": report.model,
            "model_unavailable": report.model_reason,
            "projects": {one.name: {"records": one.records, "consolidation": one.consolidation,
                                    **{phase: score_json(score(
                                        report.select(phase=phase, project=one.name), chains))
                                       for phase in PHASES}}
                         for one in report.runs},
            "all": {phase: score_json(score(report.select(phase=phase), chains))
                    for phase in PHASES},
            "targets": targets(report)}
