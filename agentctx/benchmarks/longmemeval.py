"""LongMemEval_S retrieval: the public benchmark, scored on agentctx's own retrieval paths.

For each question a fresh store is built from its haystack. The mapping of a turn to a record:

* one record per turn, type ``discovery``, in one project per question (named ``longmemeval``);
* key ``<session_id>#<turn index>`` (the key is not searchable text, so the gold-revealing
  session ids never reach the index);
* ``valid_from`` = the session's date plus the turn index in seconds;
* the turn's text, cut to the 8,000-character record limit when longer (counted and reported),
  split into a title — its first line, at most :data:`TITLE_CHARS` characters, cut at a word — and
  a body holding the rest, so every word is indexed once;
* a session id repeated inside one haystack (the data has a few identical copies) is ingested
  once (counted and reported).

Configurations: (a) the per-turn hook (what it injects: at most 3 records over the relevance
threshold; no session dedup), the keyword search alone, (b) hybrid ``ctx_search`` with the
embedding model, (c) the plain FTS5 baseline of :mod:`agentctx.benchmarks.fts_baseline` over the
same cut turns. Metrics over answerable questions: session-level recall_any@k (any of the first k
records comes from an evidence session) and turn-level recall@k (share of the ``has_answer`` turns
among the first k; questions without such turns are left out of that mean). Abstention questions
(``_abs``) report the best keyword relevance, the best cosine and whether the hook would inject.
"""

from __future__ import annotations

import json
import tempfile
from collections.abc import Callable, Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, NamedTuple

from agentctx.benchmarks import metrics, retrieval, tables
from agentctx.benchmarks.fts_baseline import Fts5Baseline
from agentctx.context import judgement
from agentctx.core import config
from agentctx.core.budget import estimate_tokens
from agentctx.core.ids import clock_at, to_iso
from agentctx.store import projects, records
from agentctx.store.db import Store
from agentctx.store.errors import InvalidRecord
from agentctx.store.models import Draft, Hit

SUBSET_NAME = "longmemeval_s_subset.json"
TITLE_CHARS = 100
TOP = 10
PROJECT_NAME = "longmemeval"
HOOK, HOOK_FULL, KEYWORD, HYBRID, FTS5 = "hook", "hook_full", "keyword", "hybrid", "fts5"
FTS5_EQUAL = "fts5_equal_tokens"
LABELS = {HOOK: "(a) per-turn hook (full or pointer)", HOOK_FULL: "    per-turn hook, in full only",
          KEYWORD: "    keyword search, no threshold",
          HYBRID: "(b) hybrid ctx_search", FTS5: "(c) plain FTS5 baseline",
          FTS5_EQUAL: "    plain FTS5 within the hook's tokens"}
CONFIGURATIONS = (HOOK, HOOK_FULL, KEYWORD, HYBRID, FTS5, FTS5_EQUAL)
HOW_TO_GET = ("LongMemEval data not found. Pass --data PATH: either longmemeval_s_cleaned.json "
              "from https://huggingface.co/datasets/xiaowu0162/longmemeval-cleaned (the paper's "
              "repository: https://github.com/xiaowu0162/LongMemEval), or the 34-question subset "
              f"{SUBSET_NAME} found in ../shared/data/longmemeval/ of a development checkout.")


class DataMissing(FileNotFoundError):
    """No LongMemEval file was given or found; the message says how to get one."""


class BadData(ValueError):
    """The file is not LongMemEval-shaped; the message says what is wrong."""


class Turn(NamedTuple):
    """One turn of a haystack session."""

    key: str  # <session_id>#<turn index>
    session: str
    role: str
    text: str
    has_answer: bool
    date: datetime


class Question(NamedTuple):
    """One LongMemEval question with its haystack."""

    id: str
    type: str
    question: str
    turns: tuple[Turn, ...]
    answer_sessions: frozenset[str]
    duplicate_sessions: int
    # When the question is asked (``question_date``): "now" while it is scored, so its time
    # words ("ten days ago") read from that day.
    date: datetime | None = None

    @property
    def abstention(self) -> bool:
        """Whether the answer is absent from the history (``_abs`` ids)."""
        return self.id.endswith("_abs")

    @property
    def gold_turns(self) -> frozenset[str]:
        """Keys of the turns marked ``has_answer``."""
        return frozenset(t.key for t in self.turns if t.has_answer)


# ------------------------------------------------------------------------------------- data


def find_data(explicit: str | None = None) -> Path:
    """The data file: ``explicit``, else the shared subset next to a development checkout."""
    if explicit:
        path = Path(explicit).expanduser()
        if not path.is_file():
            raise DataMissing(f"{path} does not exist. {HOW_TO_GET}")
        return path
    package_root = Path(__file__).resolve().parents[2]
    for base in (Path.cwd(), package_root):
        candidate = base.parent / "shared" / "data" / "longmemeval" / SUBSET_NAME
        if candidate.is_file():
            return candidate
    raise DataMissing(HOW_TO_GET)


def parse_date(text: str) -> datetime:
    """A LongMemEval date such as ``2023/05/30 (Tue) 23:40``, as UTC."""
    day, _, rest = text.strip().partition(" ")
    clock = rest.split(")")[-1].strip() or "00:00"
    try:
        return datetime.strptime(f"{day} {clock}", "%Y/%m/%d %H:%M").replace(tzinfo=UTC)
    except ValueError:
        raise BadData(f"unreadable date {text!r}") from None


def _question(raw: Any) -> Question:
    if not isinstance(raw, dict):
        raise BadData("each question must be a JSON object")
    try:
        qid = str(raw["question_id"])
        ids, dates, sessions = (raw["haystack_session_ids"], raw["haystack_dates"],
                                raw["haystack_sessions"])
        question, kind, gold = str(raw["question"]), str(raw["question_type"]), \
            frozenset(str(s) for s in raw["answer_session_ids"])
    except (KeyError, TypeError) as exc:
        raise BadData(f"a question lacks the field {exc}") from None
    if not (len(ids) == len(dates) == len(sessions)):
        raise BadData(f"{qid}: haystack ids, dates and sessions differ in length")
    turns: list[Turn] = []
    seen: set[str] = set()
    duplicates = 0
    for session_id, date, session in zip(ids, dates, sessions, strict=True):
        if session_id in seen:
            duplicates += 1
            continue
        seen.add(session_id)
        when = parse_date(str(date))
        for index, turn in enumerate(session):
            turns.append(Turn(f"{session_id}#{index}", str(session_id), str(turn.get("role", "")),
                              str(turn.get("content", "")), bool(turn.get("has_answer")),
                              when + timedelta(seconds=index)))
    asked = raw.get("question_date")
    return Question(qid, kind, question, tuple(turns), gold, duplicates,
                    parse_date(str(asked)) if asked else None)


def load(path: Path) -> list[Question]:
    """Every question of a LongMemEval file (the subset or a full ``_s`` file)."""
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise BadData(f"cannot read {path}: {exc}") from None
    if not isinstance(raw, list) or not raw:
        raise BadData(f"{path} must hold a non-empty JSON list of questions")
    return [_question(item) for item in raw]


# ----------------------------------------------------------------------------------- ingest


def cut_text(text: str) -> tuple[str, bool]:
    """The turn's text within the record limit, and whether it had to be cut."""
    if len(text) <= config.BODY_MAX_CHARS:
        return text, False
    return text[:config.BODY_MAX_CHARS], True


def split_turn(text: str) -> tuple[str, str]:
    """A record's ``(title, body)`` for a turn: its first line (≤ 100 characters) and the rest."""
    stripped = text.strip()
    if not stripped:
        return "(empty turn)", ""
    first, _, rest = stripped.partition("\n")
    if len(first) > TITLE_CHARS:
        space = first.rfind(" ", 0, TITLE_CHARS + 1)
        cut = space if space > 0 else TITLE_CHARS
        first, rest = first[:cut], (first[cut:] + ("\n" + rest if rest else ""))
    return first.strip() or "(empty turn)", rest.strip()


class Ingested(NamedTuple):
    """A question's haystack in a store."""

    project_id: str
    keys: dict[str, str]  # record id -> turn key
    texts: list[tuple[str, str]]  # (turn key, cut text), for the baseline
    cut: int
    refused: int


def ingest(db: Store, question: Question, folder: Path) -> Ingested:
    """Ingest every turn of ``question`` as one record, in one transaction."""
    (folder / ".git").mkdir(parents=True, exist_ok=True)
    project_id = projects.resolve(db, str(folder)).project.id
    keys: dict[str, str] = {}
    texts: list[tuple[str, str]] = []
    cut = refused = 0
    with db.write():
        for turn in question.turns:
            text, was_cut = cut_text(turn.text)
            cut += was_cut
            title, body = split_turn(text)
            try:
                record = records.add(db, Draft(type="discovery", title=title, body=body,
                                               key=turn.key, source="import",
                                               confidence="explicit",
                                               valid_from=to_iso(turn.date)),
                                     project_id=project_id)
            except InvalidRecord:
                refused += 1
                continue
            keys[record.id] = turn.key
            texts.append((turn.key, text))
    return Ingested(project_id, keys, texts, cut, refused)


# -------------------------------------------------------------------------------------- run


class Result(NamedTuple):
    """Every configuration's ranking for one question."""

    question: Question
    rankings: dict[str, tuple[str, ...]]
    seconds: dict[str, float]
    top_relevance: float | None
    top_cosine: float | None
    cut: int
    refused: int
    consolidation: retrieval.Consolidated
    # Tokens injected for the question: the hook's, and plain FTS5's top 3 composed in full
    # the way the hook composes (same fence, same budget).
    tokens: dict[str, int] | None = None


class LmeReport(NamedTuple):
    """Everything one LongMemEval run measured."""

    path: str
    settings: judgement.Settings
    hook_note: str
    hybrid: str | None
    hybrid_reason: str | None
    results: list[Result]


def run(path: Path, *, limit: int | None = None, model_path: str | None = None,
        hybrid: bool = True, cfg: config.Config | None = None,
        progress: Callable[[int, int, str], None] | None = None) -> LmeReport:
    """Score every question of the file at ``path`` (the first ``limit`` when given)."""
    cfg = cfg or retrieval.bench_config(model_path)
    questions = load(path)[:limit] if limit else load(path)
    embedder: retrieval.Embedder | retrieval.Unavailable = retrieval.Unavailable(
        "not requested (--no-hybrid)")
    if hybrid:
        embedder = retrieval.load_embedder(model_path, cfg)
    results = []
    for number, question in enumerate(questions, start=1):
        if progress is not None:
            progress(number, len(questions), question.id)
        results.append(_one(question, cfg, embedder))
    return LmeReport(str(path), judgement.settings(cfg), retrieval.hook_selection_note(),
                     embedder.label if isinstance(embedder, retrieval.Embedder) else None,
                     embedder.reason if isinstance(embedder, retrieval.Unavailable) else None,
                     results)


def _one(question: Question, cfg: config.Config,
         embedder: retrieval.Embedder | retrieval.Unavailable) -> Result:
    with clock_at(question.date):
        return _scored(question, cfg, embedder)


def _scored(question: Question, cfg: config.Config,
            embedder: retrieval.Embedder | retrieval.Unavailable) -> Result:
    with tempfile.TemporaryDirectory(prefix="agentctx-lme-") as folder:
        db = Store.open(Path(folder) / "store.db")
        baseline: Fts5Baseline | None = None
        try:
            ingested = ingest(db, question, Path(folder) / PROJECT_NAME)
            pid, text = ingested.project_id, question.question

            def keys(hits: Sequence[Any]) -> tuple[str, ...]:
                return tuple(ingested.keys[h.record.id] for h in hits)

            rankings: dict[str, tuple[str, ...]] = {}
            seconds: dict[str, float] = {}
            keyword, seconds[KEYWORD] = retrieval.timed(
                lambda: retrieval.keyword_search(db, text, pid, limit=TOP))
            rankings[KEYWORD] = keys(keyword)
            top_cosine = None
            model = embedder if isinstance(embedder, retrieval.Embedder) else None
            consolidation = retrieval.consolidate(db, model, cfg)
            # The hook as users run it: after consolidation wrote the vectors and side file.
            injection, seconds[HOOK] = retrieval.timed(
                lambda: retrieval.hook_injection(db, text, pid, PROJECT_NAME, cfg))
            # A pointer line names the record (id, type, title) for the model to open: the
            # answer shown either way counts, as in the evaluation projects' recall@3.
            rankings[HOOK] = keys([*injection.hits, *injection.pointers])
            rankings[HOOK_FULL] = keys(injection.hits)
            seconds[HOOK_FULL] = seconds[HOOK]
            if model is not None:
                searcher = retrieval.HybridSearcher(db, model)
                found, seconds[HYBRID] = retrieval.timed(lambda: searcher.search(text, pid))
                rankings[HYBRID] = keys(found)
                top_cosine = searcher.top_cosine(text, pid)
            baseline = Fts5Baseline(ingested.texts)
            found_fts, seconds[FTS5] = retrieval.timed(lambda: baseline.search(text, TOP))
            rankings[FTS5] = tuple(found_fts)
            tokens = {HOOK: injection.tokens,
                      FTS5: _composed_tokens(db, ingested, found_fts[:3], cfg)}
            rankings[FTS5_EQUAL] = _within(db, ingested, found_fts, injection.tokens, cfg)
        finally:
            if baseline is not None:
                baseline.close()
            db.close()
    return Result(question, rankings, seconds, keyword[0].relevance if keyword else None,
                  top_cosine, ingested.cut, ingested.refused, consolidation, tokens)


def _composed_tokens(db: Store, ingested: Ingested, turn_keys: Sequence[str],
                     cfg: config.Config) -> int:
    """Tokens of ``turn_keys``' records injected in full as the hook composes them."""
    ids = {key: record_id for record_id, key in ingested.keys.items()}
    hits = [Hit(records.get(db, ids[key]), 1.0, 1.0, ()) for key in turn_keys if key in ids]
    text, _full, _pointers = judgement.compose(hits, PROJECT_NAME, judgement.settings(cfg))
    return estimate_tokens(text) if text else 0


def _within(db: Store, ingested: Ingested, turn_keys: Sequence[str], budget: int,
            cfg: config.Config) -> tuple[str, ...]:
    """Plain FTS5's first hits, as many as fit in ``budget`` tokens composed (at most 3): FTS5
    at the tokens the hook spent on the question."""
    kept: list[str] = []
    for key in turn_keys[:3]:
        if _composed_tokens(db, ingested, [*kept, key], cfg) > budget:
            break
        kept.append(key)
    return tuple(kept)


# ---------------------------------------------------------------------------------- scoring


class Score(NamedTuple):
    """One configuration's metrics over the answerable questions."""

    recall_any: dict[int, float | None]  # k -> session-level recall_any@k
    turn_recall: dict[int, float | None]  # k -> turn-level recall@k
    answered_at_3: int
    questions: int
    turn_questions: int
    p50_seconds: float | None


def score(results: Sequence[Result], name: str) -> Score | None:
    """Metrics of configuration ``name``; ``None`` when it did not run."""
    answerable = [r for r in results if not r.question.abstention and name in r.rankings]
    if not answerable:
        return None
    reach = 3 if name in (HOOK, HOOK_FULL, FTS5_EQUAL) else TOP
    session_of = {t.key: t.session for r in answerable for t in r.question.turns}
    recall_any: dict[int, float | None] = {}
    for k in (3, 5, 10):
        recall_any[k] = None if k > reach else metrics.mean([
            float(metrics.group_recall_any(r.rankings[name], session_of,
                                           r.question.answer_sessions, k)) for r in answerable])
    with_turns = [r for r in answerable if r.question.gold_turns]
    turn_recall: dict[int, float | None] = {
        k: (metrics.mean([metrics.recall_at(r.rankings[name], r.question.gold_turns, k)
                          for r in with_turns]) if with_turns and k <= reach else None)
        for k in (3, 10)}
    answered = sum(1 for r in answerable if metrics.group_recall_any(
        r.rankings[name], session_of, r.question.answer_sessions, 3))
    times = [r.seconds[name] for r in results if name in r.seconds]
    return Score(recall_any, turn_recall, answered, len(answerable), len(with_turns),
                 metrics.median(times) if times else None)


def tokens_per_question(results: Sequence[Result], name: str) -> float | None:
    """Mean tokens injected per answerable question by ``name`` (``hook`` or ``fts5``'s top
    3 composed in full)."""
    counted = [float(r.tokens[name]) for r in results
               if not r.question.abstention and r.tokens and name in r.tokens]
    return metrics.mean(counted) if counted else None


def equal_tokens_line(results: Sequence[Result]) -> str:
    """The hook against plain FTS5's top 3 at equal tokens, in one line."""
    hook, fts5, equal = (score(results, n) for n in (HOOK, FTS5, FTS5_EQUAL))
    if hook is None or fts5 is None or equal is None:
        return "hook vs FTS5 at equal tokens: not measured"
    hook_tokens = tables.number(tokens_per_question(results, HOOK), 1)
    return (f"hook vs plain FTS5's top 3 at equal tokens: hook recall_any@3 "
            f"{tables.ratio(hook.recall_any[3])} at {hook_tokens} tokens per question; "
            f"FTS5 top 3 {tables.ratio(fts5.recall_any[3])} at "
            f"{tables.number(tokens_per_question(results, FTS5), 1)}; FTS5 within the hook's "
            f"tokens {tables.ratio(equal.recall_any[3])}")


def targets(results: Sequence[Result]) -> list[dict[str, Any]]:
    """The issue's targets (set on the 30-answerable-question subset), checked on ``results``."""
    hook, hybrid, fts5 = (score(results, name) for name in (HOOK, HYBRID, FTS5))
    checks: list[tuple[str, float | None, float]] = [
        ("hybrid recall_any@5", hybrid.recall_any[5] if hybrid else None, 0.96),
        ("hybrid turn recall@10", hybrid.turn_recall[10] if hybrid else None, 0.80),
        ("hook recall_any@3", hook.recall_any[3] if hook else None, 0.90),
        ("hook answered@3 minus FTS5 answered@3",
         float(hook.answered_at_3 - fts5.answered_at_3) if hook and fts5 else None, 0.0)]
    hook_tokens, fts5_tokens = (tokens_per_question(results, n) for n in (HOOK, FTS5))
    if hook_tokens is not None and fts5_tokens is not None:
        checks.append(("FTS5 top-3 tokens minus hook tokens per question",
                       fts5_tokens - hook_tokens, 0.0))
    temporal = by_type(results, "temporal-reasoning", HYBRID, 5)
    if temporal[1]:
        checks.append(("temporal-reasoning questions answered in hybrid top 5 (share)",
                       temporal[0] / temporal[1], 1.0))
    return [{"metric": metric, "goal": goal, "value": value,
             "met": value is not None and value >= goal - 1e-9}
            for metric, value, goal in checks]


def _types(results: Sequence[Result]) -> list[str]:
    return sorted({r.question.type for r in results if not r.question.abstention})


def found_at(result: Result, name: str, k: int) -> bool | None:
    """Whether configuration ``name`` has an answer session in its first ``k`` (``None``: it
    did not run)."""
    if name not in result.rankings:
        return None
    session_of = {t.key: t.session for t in result.question.turns}
    return metrics.group_recall_any(result.rankings[name], session_of,
                                    result.question.answer_sessions, k)


def by_type(results: Sequence[Result], kind: str, name: str, k: int) -> tuple[int, int]:
    """``(found, asked)``: answerable questions of ``kind`` with an answer session in the first
    ``k`` of configuration ``name``."""
    outcomes = [found_at(r, name, k) for r in results
                if r.question.type == kind and not r.question.abstention]
    counted = [o for o in outcomes if o is not None]
    return sum(counted), len(counted)


def _type_row(results: Sequence[Result], kind: str) -> list[str]:
    cells = [kind]
    for name, k in ((HYBRID, 5), (HOOK, 3), (FTS5, 3)):
        found, asked = by_type(results, kind, name, k)
        if not asked:
            cells.append(tables.MISSING)
            continue
        low, high = metrics.wilson_interval(found, asked)
        cells.append(f"{found}/{asked} ({low:.2f}-{high:.2f})" if name == HYBRID
                     else f"{found}/{asked}")
    return cells


def _consolidation_line(results: Sequence[Result]) -> str:
    outcomes = sorted({r.consolidation.how for r in results})
    embedded = sum(r.consolidation.embedded for r in results)
    return f"{'; '.join(outcomes)} per store; {embedded:,} records embedded in all"


def render(report: LmeReport) -> str:
    """The report as fixed-width text."""
    results = report.results
    answerable = [r for r in results if not r.question.abstention]
    turns = sum(len(r.question.turns) for r in results)
    cut = sum(r.cut for r in results)
    duplicates = sum(r.question.duplicate_sessions for r in results)
    refused = sum(r.refused for r in results)
    lines = [f"LongMemEval_S retrieval (agentctx bench longmemeval) - {report.path}",
             f"{len(answerable)} answerable + {len(results) - len(answerable)} abstention "
             f"questions, {turns:,} turns ingested as records, one fresh store per question",
             f"{cut} turns longer than {config.BODY_MAX_CHARS:,} characters were cut to "
             f"{config.BODY_MAX_CHARS:,}; {duplicates} repeated sessions ingested once"
             + (f"; {refused} turns refused by the store" if refused else ""),
             f"after ingest: {_consolidation_line(results)}",
             f"hook knobs: {report.settings.describe()}",
             f"hook selection: {report.hook_note}",
             f"hybrid model: {report.hybrid}" if report.hybrid
             else f"hybrid: unavailable - {report.hybrid_reason}", ""]
    headers = ["configuration", "R_any@3", "R_any@5", "R_any@10", "turn R@3", "turn R@10",
               "answered@3", "p50 ms"]
    rows = []
    for name in CONFIGURATIONS:
        found = score(results, name)
        if found is None:
            rows.append([LABELS[name] + " (unavailable)", *[tables.MISSING] * 7])
            continue
        rows.append([LABELS[name], *(tables.ratio(found.recall_any[k]) for k in (3, 5, 10)),
                     *(tables.ratio(found.turn_recall[k]) for k in (3, 10)),
                     f"{found.answered_at_3}/{found.questions}",
                     tables.millis(found.p50_seconds)])
    lines.append(tables.table(headers, rows))
    with_turns = score(results, FTS5)
    if with_turns is not None:
        lines.append(f"turn-level recall over the {with_turns.turn_questions} answerable "
                     "questions that mark has_answer turns")
    lines.append(equal_tokens_line(results))
    lines.append("targets (set on the 30-question subset):")
    for check in targets(results):
        digits = 0 if "minus" in check["metric"] else 3
        lines.append(f"  {check['metric']} >= {check['goal']:g}: "
                     f"{'met' if check['met'] else 'NOT met'} "
                     f"({tables.number(check['value'], digits)})")
    lines += ["", "by question type: hybrid session recall_any@5 (95% Wilson interval), and "
                  "the hook's answered@3 against plain FTS5's"]
    lines.append(tables.table(["question type", "hybrid any@5", "hook @3", "FTS5 @3"],
                              [_type_row(results, kind) for kind in _types(results)]))
    abstentions = [r for r in results if r.question.abstention]
    if abstentions:
        lines += ["", "abstention questions (nothing in the history answers them):"]
        lines.append(tables.table(
            ["question", "top relevance", "top cosine", "hook injects"],
            [[r.question.id, tables.ratio(r.top_relevance), tables.ratio(r.top_cosine),
              f"{len(r.rankings[HOOK_FULL])} in full, "
              f"{len(r.rankings[HOOK]) - len(r.rankings[HOOK_FULL])} pointers"]
             for r in abstentions]))
    return "\n".join(lines)


def to_json(report: LmeReport) -> dict[str, Any]:
    """The report for machines."""
    configurations: dict[str, Any] = {}
    for name in CONFIGURATIONS:
        found = score(report.results, name)
        configurations[name] = None if found is None else {
            "recall_any": {f"@{k}": v for k, v in found.recall_any.items()},
            "turn_recall": {f"@{k}": v for k, v in found.turn_recall.items()},
            "answered_at_3": found.answered_at_3, "questions": found.questions,
            "turn_questions": found.turn_questions, "p50_seconds": found.p50_seconds}
    return {
        "benchmark": "longmemeval", "data": report.path,
        "questions": len(report.results),
        "turns": sum(len(r.question.turns) for r in report.results),
        "cut_turns": sum(r.cut for r in report.results),
        "duplicate_sessions": sum(r.question.duplicate_sessions for r in report.results),
        "refused_turns": sum(r.refused for r in report.results),
        "consolidation": {"outcomes": sorted({r.consolidation.how for r in report.results}),
                          "embedded": sum(r.consolidation.embedded for r in report.results)},
        "hook_settings": report.settings._asdict(), "hook_selection": report.hook_note,
        "hybrid_model": report.hybrid, "hybrid_unavailable": report.hybrid_reason,
        "configurations": configurations, "targets": targets(report.results),
        "tokens_per_question": {name: tokens_per_question(report.results, name)
                                for name in (HOOK, FTS5)},
        "abstention": [{"question_id": r.question.id, "top_relevance": r.top_relevance,
                        "top_cosine": r.top_cosine, "hook_injects": len(r.rankings[HOOK]),
                        "hook_injects_full": len(r.rankings.get(HOOK_FULL, ()))}
                       for r in report.results if r.question.abstention]}

