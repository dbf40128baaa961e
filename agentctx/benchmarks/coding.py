"""The coding-memory benchmark: build the scripted history, ask every prompt, score each split.

Configurations (see :mod:`agentctx.benchmarks.retrieval`): the per-turn hook (what it would
inject), the keyword search (``ctx_search`` without vectors) and the hybrid ``ctx_search``.

Splits: ``tuning`` and ``held-out`` are the committed 70/30 split of the first prompt set;
``tuning-2`` to ``tuning-5`` hold prompts written after each later round of tuning (see
``coding_data``). Each split is reported separately; only the
held-out one carries the issue's targets.

Metrics, per split:

* **R@3 / R@10** — over answerable prompts, the share of a prompt's labelled records among the
  first 3 / 10 results, averaged. For the hook, R@3 is measured on what it injects (threshold,
  record cap and budget applied), so a record under the threshold counts as missed.
* **supersession** — over prompts about something that changed: the current record appears in
  the configuration's ranking *with history included* (first 10) above every superseded version
  of it, and nothing the configuration hands over by default (the hook's injection, the
  searches' first 10) is a superseded version.
* **inj.prec** — the share of unanswerable prompts for which the hook injects nothing; the
  report adds each split's count with its 95% Wilson interval, and all splits pooled.
* **tokens/prompt** — mean tokens the hook injects per prompt, all prompts of the split counted
  (0 when it injects nothing), with the one estimator on the exact injected text.
* **p50 ms** — median wall time of one prompt's retrieval in that configuration.
"""

from __future__ import annotations

import tempfile
from collections.abc import Sequence
from datetime import datetime
from pathlib import Path
from typing import Any, NamedTuple

from agentctx.benchmarks import coding_data as data
from agentctx.benchmarks import metrics, retrieval, tables
from agentctx.context import judgement
from agentctx.core import config
from agentctx.store.db import Store
from agentctx.store.models import Hit

TOP = 10
HOOK, KEYWORD, HYBRID = "hook", "keyword", "hybrid"
LABELS = {HOOK: "per-turn hook (injected)", KEYWORD: "keyword ctx_search",
          HYBRID: "hybrid ctx_search"}
# The targets for the held-out file, checked on the per-turn hook.
TARGETS = (("supersession", 1.0), ("recall_at_3", 0.85), ("injection_precision", 0.9))


class Ranked(NamedTuple):
    """One configuration's answer to one prompt."""

    shown: tuple[str, ...]  # what it hands over by default: injected, or the first 10
    history: tuple[str, ...]  # its ranking with superseded records included (first 10)
    relevance: tuple[float, ...]  # relevance of each shown record
    tokens: int
    seconds: float


class Outcome(NamedTuple):
    """Every configuration's answer to one prompt."""

    query: data.BenchQuery
    split: str
    ranked: dict[str, Ranked]


class Score(NamedTuple):
    """One configuration's metrics on one split (``None``: not applicable)."""

    recall_at_3: float | None
    recall_at_10: float | None
    supersession: tuple[int, int] | None
    injection_precision: float | None
    tokens_per_prompt: float | None
    p50_seconds: float | None
    superseded_shown: int
    foreign_shown: int


class CodingReport(NamedTuple):
    """Everything one run measured."""

    settings: judgement.Settings
    hook_note: str
    hybrid: str | None  # the model label, or None when unavailable
    hybrid_reason: str | None
    consolidation: retrieval.Consolidated
    records: int
    chains: int
    outcomes: list[Outcome]
    scores: dict[str, dict[str, Score]]  # split -> configuration -> score


def _keys(hits: Sequence[Hit], built: data.Built) -> tuple[str, ...]:
    return tuple(built.keys.get(h.record.id, f"?{h.record.id}") for h in hits)


def run(*, splits: Sequence[str] = tuple(data.SPLIT_FILES), model_path: str | None = None,
        hybrid: bool = True, cfg: config.Config | None = None,
        now: datetime | None = None) -> CodingReport:
    """Build a fresh store from the history in a temporary folder and score every prompt."""
    cfg = cfg or retrieval.bench_config(model_path)
    history = data.load_history()
    queries = {name: data.load_queries(data.SPLIT_FILES[name]) for name in splits}
    data.check_queries(history, [q for part in queries.values() for q in part])
    embedder: retrieval.Embedder | retrieval.Unavailable = retrieval.Unavailable(
        "not requested (--no-hybrid)")
    if hybrid:
        embedder = retrieval.load_embedder(model_path, cfg)
    settings = judgement.settings(cfg)
    with tempfile.TemporaryDirectory(prefix="agentctx-bench-") as folder:
        db = Store.open(Path(folder) / "bench.db")
        try:
            built = data.build(db, history, Path(folder) / "projects", now)
            model = embedder if isinstance(embedder, retrieval.Embedder) else None
            consolidation = retrieval.consolidate(db, model, cfg)
            searcher = retrieval.HybridSearcher(db, model) if model is not None else None
            outcomes = [_ask(db, built, query, name, cfg, searcher)
                        for name in splits for query in queries[name]]
        finally:
            db.close()
    predecessors = data.predecessors(history)
    scores = {name: {config_name: score(config_name, [o for o in outcomes if o.split == name],
                                        predecessors, built)
                     for config_name in (HOOK, KEYWORD, HYBRID)
                     if config_name != HYBRID or isinstance(embedder, retrieval.Embedder)}
              for name in splits}
    return CodingReport(
        settings, retrieval.hook_selection_note(),
        embedder.label if isinstance(embedder, retrieval.Embedder) else None,
        embedder.reason if isinstance(embedder, retrieval.Unavailable) else None,
        consolidation, built.records, sum(1 for key, old in predecessors.items()
                         if old and key not in built.superseded),
        outcomes, scores)


def _ask(db: Store, built: data.Built, query: data.BenchQuery, split: str, cfg: config.Config,
         searcher: retrieval.HybridSearcher | None) -> Outcome:
    pid, text = built.project_id, query.prompt
    injection, hook_s = retrieval.timed(
        lambda: retrieval.hook_injection(db, text, pid, built.project_name, cfg))
    keyword_history = retrieval.keyword_search(db, text, pid, include_superseded=True)
    shown = [*injection.hits, *injection.pointers]  # in full, then as pointers
    ranked = {HOOK: Ranked(_keys(shown, built), _keys(keyword_history, built),
                           tuple(h.relevance for h in shown), injection.tokens, hook_s)}
    keyword, keyword_s = retrieval.timed(lambda: retrieval.keyword_search(db, text, pid))
    ranked[KEYWORD] = Ranked(_keys(keyword, built), _keys(keyword_history, built),
                             tuple(h.relevance for h in keyword), 0, keyword_s)
    if searcher is not None:
        hybrid, hybrid_s = retrieval.timed(lambda: searcher.search(text, pid))
        hybrid_history = searcher.search(text, pid, include_superseded=True)
        ranked[HYBRID] = Ranked(_keys(hybrid, built), _keys(hybrid_history, built),
                                tuple(h.relevance for h in hybrid), 0, hybrid_s)
    return Outcome(query, split, ranked)


def score(name: str, outcomes: Sequence[Outcome], predecessors: dict[str, frozenset[str]],
          built: data.Built) -> Score:
    """Configuration ``name``'s metrics over ``outcomes`` (one split's prompts)."""
    answerable = [o for o in outcomes if o.query.answerable]
    changed = [o for o in outcomes if o.query.about_change]
    unanswerable = [o for o in outcomes if not o.query.answerable]

    def recall(k: int) -> float | None:
        if not answerable:
            return None
        return metrics.mean([metrics.recall_at(o.ranked[name].shown, o.query.answers, k)
                             for o in answerable])

    correct = sum(1 for o in changed if metrics.supersession_correct(
        o.ranked[name].history, o.ranked[name].shown,
        [metrics.Chain(key, predecessors[key]) for key in o.query.answers
         if predecessors.get(key)]))
    hook = name == HOOK
    return Score(
        recall_at_3=recall(3),
        recall_at_10=None if hook else recall(TOP),
        supersession=(correct, len(changed)) if changed else None,
        injection_precision=metrics.injection_precision(
            [len(o.ranked[name].shown) for o in unanswerable]) if hook and unanswerable else None,
        tokens_per_prompt=metrics.mean([float(o.ranked[name].tokens) for o in outcomes])
        if hook and outcomes else None,
        p50_seconds=metrics.median([o.ranked[name].seconds for o in outcomes])
        if outcomes else None,
        superseded_shown=sum(1 for o in outcomes for key in o.ranked[name].shown
                             if key in built.superseded),
        foreign_shown=sum(1 for o in outcomes for key in o.ranked[name].shown
                          if key in built.foreign))


# ---------------------------------------------------------------------------------- report


def targets(report: CodingReport, split: str = "held-out") -> list[dict[str, Any]]:
    """The issue's held-out targets on the per-turn hook: value, goal and whether each is met."""
    score = report.scores.get(split, {}).get(HOOK)
    if score is None:
        return []
    values: dict[str, float | None] = {
        "supersession": (score.supersession[0] / score.supersession[1]
                         if score.supersession else None),
        "recall_at_3": score.recall_at_3,
        "injection_precision": score.injection_precision}
    checks = []
    for metric, goal in TARGETS:
        value = values[metric]
        checks.append({"metric": metric, "goal": goal, "value": value,
                       "met": value is not None and value >= goal - 1e-9})
    return checks


def clean_prompts(report: CodingReport, splits: Sequence[str]) -> tuple[int, int]:
    """Unanswerable prompts of ``splits`` the per-turn hook injected nothing for, and how many
    unanswerable prompts those splits hold."""
    unanswerable = [o for o in report.outcomes
                    if o.split in splits and not o.query.answerable and HOOK in o.ranked]
    return sum(1 for o in unanswerable if not o.ranked[HOOK].shown), len(unanswerable)


def precision_intervals(report: CodingReport) -> dict[str, dict[str, Any]]:
    """Injection precision per split and over every split scored, with its 95% Wilson interval:
    a file of 8 unanswerable prompts moves 12.5 points per prompt."""
    groups = {split: [split] for split in report.scores}
    if len(groups) > 1:
        groups["all files"] = list(report.scores)
    intervals = {}
    for name, splits in groups.items():
        clean, total = clean_prompts(report, splits)
        if total:
            low, high = metrics.wilson_interval(clean, total)
            intervals[name] = {"clean": clean, "total": total, "ci95": [low, high]}
    return intervals


def _split_line(outcomes: Sequence[Outcome], split: str) -> str:
    mine = [o for o in outcomes if o.split == split]
    answerable = sum(1 for o in mine if o.query.answerable)
    changed = sum(1 for o in mine if o.query.about_change)
    return (f"{split}: {len(mine)} prompts ({answerable} answerable, {changed} of them about a "
            f"change; {len(mine) - answerable} unanswerable)")


def render(report: CodingReport) -> str:
    """The report as fixed-width text."""
    model = (f"hybrid model: {report.hybrid}" if report.hybrid
             else f"hybrid: unavailable - {report.hybrid_reason}")
    lines = ["Coding-memory benchmark (agentctx bench coding)",
             f"store: {report.records} records of the ledgerline history (every type, "
             f"{report.chains} supersession chains) + a sibling project; fresh store per run; "
             f"{report.consolidation.describe()}",
             f"hook knobs: {report.settings.describe()}",
             f"hook selection: {report.hook_note}", model]
    headers = ["configuration", "R@3", "R@10", "supersession", "inj.prec", "tokens/prompt",
               "p50 ms"]
    for split, by_config in report.scores.items():
        rows = []
        for name, score in by_config.items():
            rows.append([LABELS[name], tables.ratio(score.recall_at_3),
                         tables.ratio(score.recall_at_10),
                         tables.count_of(*score.supersession) if score.supersession
                         else tables.MISSING,
                         tables.ratio(score.injection_precision),
                         tables.number(score.tokens_per_prompt),
                         tables.millis(score.p50_seconds)])
        if report.hybrid is None:
            rows.append([LABELS[HYBRID] + " (unavailable)", *[tables.MISSING] * 6])
        lines += ["", _split_line(report.outcomes, split), tables.table(headers, rows)]
        leaks = [f"{LABELS[n]}: {s.superseded_shown} superseded, {s.foreign_shown} other-project"
                 for n, s in by_config.items()]
        lines.append("records shown that must never be: " + "; ".join(leaks))
    intervals = precision_intervals(report)
    if intervals:
        lines += ["", "per-turn hook, unanswerable prompts with no injection "
                      "(95% Wilson interval):"]
        lines.extend(f"  {name}: {v['clean']}/{v['total']} = {v['clean'] / v['total']:.3f} "
                     f"({v['ci95'][0]:.3f}-{v['ci95'][1]:.3f})" for name, v in intervals.items())
    checks = targets(report)
    if checks:
        lines.append("")
        lines.append("held-out targets (per-turn hook):")
        lines.extend(f"  {c['metric']} >= {c['goal']:g}: {'met' if c['met'] else 'NOT met'} "
                     f"({tables.ratio(c['value'])})" for c in checks)
    return "\n".join(lines)


def misses(report: CodingReport, splits: Sequence[str] = data.TUNING_SPLITS) -> str:
    """Tuning prompts the hook did not fully answer, with what it injected and what search found.

    Never lists held-out prompts: they are scored, not studied.
    """
    if any(split not in data.TUNING_SPLITS for split in splits):
        raise ValueError("only tuning misses are listed; the held-out file is never studied")
    lines = []
    for outcome in report.outcomes:
        if outcome.split not in splits:
            continue
        hook, keyword = outcome.ranked[HOOK], outcome.ranked[KEYWORD]
        query = outcome.query
        missed = query.answerable and metrics.recall_at(hook.shown, query.answers, 3) < 1.0
        noisy = not query.answerable and hook.shown
        if not (missed or noisy):
            continue
        found = ", ".join(f"{k} ({r:.2f})" for k, r in zip(keyword.shown[:5], keyword.relevance,
                                                          strict=False)) or "nothing"
        lines.append(f"{query.id} [{outcome.split}] {query.prompt!r}"
                     f"\n    wanted: {', '.join(query.answers) or '-'}"
                     f"\n    injected: {', '.join(hook.shown) or 'nothing'}\n    search: {found}")
    return "\n".join(lines) if lines else "no misses on the tuning file"


def to_json(report: CodingReport, *, with_misses: bool = False) -> dict[str, Any]:
    """The report for machines."""
    def score_json(score: Score) -> dict[str, Any]:
        value = score._asdict()
        if score.supersession is not None:
            value["supersession"] = {"correct": score.supersession[0],
                                     "total": score.supersession[1]}
        return value

    document: dict[str, Any] = {
        "benchmark": "coding", "records": report.records, "chains": report.chains,
        "hook_settings": report.settings._asdict(), "hook_selection": report.hook_note,
        "hybrid_model": report.hybrid, "hybrid_unavailable": report.hybrid_reason,
        "consolidation": report.consolidation._asdict(),
        "splits": {split: {"prompts": sum(1 for o in report.outcomes if o.split == split),
                           "configurations": {n: score_json(s) for n, s in by_config.items()}}
                   for split, by_config in report.scores.items()},
        "injection_precision_intervals": precision_intervals(report),
        "targets": targets(report)}
    if with_misses and any(split in report.scores for split in data.TUNING_SPLITS):
        document["tuning_misses"] = misses(report)
    return document

