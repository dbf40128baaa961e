"""The coding benchmark end to end on a real store, and its scoring on hand-made outcomes."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentctx.benchmarks import coding, retrieval
from agentctx.benchmarks import coding_data as data
from agentctx.context import judgement
from agentctx.core import config

EMPTY_BUILT = data.Built("p", "proj", {}, {}, frozenset({"other"}), frozenset({"rest"}), 0)
PREDECESSORS = {"grpc": frozenset({"rest"}), "rest": frozenset(), "uv": frozenset()}


def outcome(qid: str, answers: tuple[str, ...], shown: tuple[str, ...],
            history: tuple[str, ...] = (), *, change: bool = False, tokens: int = 0,
            seconds: float = 0.001) -> coding.Outcome:
    ranked = coding.Ranked(shown, history or shown, tuple(1.0 for _ in shown), tokens, seconds)
    return coding.Outcome(data.BenchQuery(qid, f"prompt {qid}", answers, change), "tuning",
                          {coding.HOOK: ranked, coding.KEYWORD: ranked})


class TestScoring:
    def test_recall_counts_only_what_was_shown(self) -> None:
        found = coding.score(coding.HOOK, [outcome("a", ("uv",), ("x", "uv")),
                                           outcome("b", ("grpc",), ())],
                             PREDECESSORS, EMPTY_BUILT)
        assert found.recall_at_3 == 0.5
        assert found.recall_at_10 is None  # the hook shows at most 3

    def test_a_superseded_record_ranked_first_fails_supersession(self) -> None:
        good = outcome("a", ("grpc",), ("grpc",), ("grpc", "rest"), change=True)
        bad = outcome("b", ("grpc",), ("grpc",), ("rest", "grpc"), change=True)
        found = coding.score(coding.KEYWORD, [good, bad], PREDECESSORS, EMPTY_BUILT)
        assert found.supersession == (1, 2)

    def test_a_superseded_record_shown_is_counted_and_fails(self) -> None:
        shown = outcome("a", ("grpc",), ("grpc", "rest"), ("grpc", "rest"), change=True)
        found = coding.score(coding.HOOK, [shown], PREDECESSORS, EMPTY_BUILT)
        assert found.supersession == (0, 1)
        assert found.superseded_shown == 1

    def test_precision_and_tokens_over_unanswerable_prompts(self) -> None:
        quiet = outcome("u1", (), ())
        noisy = outcome("u2", (), ("other",), tokens=90)
        answered = outcome("a", ("uv",), ("uv",), tokens=30)
        found = coding.score(coding.HOOK, [quiet, noisy, answered], PREDECESSORS, EMPTY_BUILT)
        assert found.injection_precision == 0.5
        assert found.tokens_per_prompt == 40.0
        assert found.foreign_shown == 1
        keyword = coding.score(coding.KEYWORD, [quiet, noisy], PREDECESSORS, EMPTY_BUILT)
        assert keyword.injection_precision is None and keyword.tokens_per_prompt is None


def test_precision_intervals_per_split_and_pooled() -> None:
    """Clean counts come from what the hook showed; the pooled line sums the splits."""
    def split_of(item: coding.Outcome, split: str) -> coding.Outcome:
        return item._replace(split=split)

    outcomes = [split_of(outcome("u1", (), ()), "tuning"),
                split_of(outcome("u2", (), ("x",)), "tuning"),
                split_of(outcome("a1", ("uv",), ()), "tuning"),
                split_of(outcome("u3", (), ()), "held-out")]
    report = coding.CodingReport(
        judgement.settings(config.Config({}, environ={})), "", None, "off",
        retrieval.Consolidated("none", 0), 0, 0, outcomes,
        {"tuning": {}, "held-out": {}})
    intervals = coding.precision_intervals(report)
    assert {k: (v["clean"], v["total"]) for k, v in intervals.items()} == {
        "tuning": (1, 2), "held-out": (1, 1), "all files": (2, 3)}
    low, high = intervals["all files"]["ci95"]
    assert 0.0 < low < 2 / 3 < high < 1.0


@pytest.fixture(scope="module")
def keyword_report() -> coding.CodingReport:
    return coding.run(hybrid=False, cfg=retrieval.bench_config())


class TestRun:
    def test_scores_both_splits_on_a_fresh_store(self,
                                                 keyword_report: coding.CodingReport) -> None:
        assert list(keyword_report.scores) == [*data.TUNING_SPLITS, "held-out"]
        assert keyword_report.records >= 150 and keyword_report.chains >= 20
        for by_config in keyword_report.scores.values():
            assert set(by_config) == {coding.HOOK, coding.KEYWORD}
            hook, keyword = by_config[coding.HOOK], by_config[coding.KEYWORD]
            assert hook.recall_at_3 is not None and keyword.recall_at_3 is not None
            assert keyword.recall_at_10 is not None and keyword.recall_at_10 >= keyword.recall_at_3
            # The hook weighs the search's first ten, so it can find more than its first three.
            assert 0.0 < hook.recall_at_3 <= keyword.recall_at_10 <= 1.0
            assert hook.superseded_shown == 0 and keyword.superseded_shown == 0
            assert hook.foreign_shown == 0 and keyword.foreign_shown == 0
            assert hook.p50_seconds is not None and hook.p50_seconds > 0

    def test_injected_text_is_measured_with_the_one_estimator(
            self, keyword_report: coding.CodingReport) -> None:
        limit = keyword_report.settings.max_tokens
        for item in keyword_report.outcomes:
            hook = item.ranked[coding.HOOK]
            assert (hook.tokens > 0) == bool(hook.shown)
            assert hook.tokens <= limit
            assert len(hook.shown) <= keyword_report.settings.max_records

    def test_report_text_and_json(self, keyword_report: coding.CodingReport) -> None:
        text = coding.render(keyword_report)
        assert "held-out: 45 prompts" in text and "tuning: 107 prompts" in text
        assert "tuning-2: 86 prompts" in text and "tuning-3: 53 prompts" in text
        assert "tuning-4: 100 prompts" in text and "tuning-5: 110 prompts" in text
        assert "hybrid ctx_search (unavailable)" in text
        assert "held-out targets (per-turn hook)" in text
        document = coding.to_json(keyword_report, with_misses=True)
        assert set(document["splits"]) == {*data.TUNING_SPLITS, "held-out"}
        assert {t["metric"] for t in document["targets"]} == {
            "supersession", "recall_at_3", "injection_precision"}
        assert "c0" in document["tuning_misses"] or document["tuning_misses"].startswith("no ")
        pooled = document["injection_precision_intervals"]["all files"]
        assert pooled["total"] == sum(1 for o in keyword_report.outcomes
                                      if not o.query.answerable)
        assert f"all files: {pooled['clean']}/{pooled['total']} = " in text

    def test_misses_never_list_held_out_prompts(self,
                                                keyword_report: coding.CodingReport) -> None:
        held = {o.query.prompt for o in keyword_report.outcomes if o.split == "held-out"}
        listed = coding.misses(keyword_report)
        assert not any(repr(prompt) in listed for prompt in held)
        with pytest.raises(ValueError):
            coding.misses(keyword_report, "held-out")

    def test_raising_the_confidences_to_one_injects_less(self) -> None:
        strict = config.Config({}, environ={"AGENTCTX_PROMPT_FULL_CONFIDENCE": "1.0",
                                           "AGENTCTX_PROMPT_POINTER_CONFIDENCE": "1.0",
                                           "AGENTCTX_ARCHIVE_AFTER_DAYS": "36500"})
        report = coding.run(splits=("held-out",), hybrid=False, cfg=strict)
        loose = config.Config({}, environ={"AGENTCTX_PROMPT_FULL_CONFIDENCE": "0.0",
                                          "AGENTCTX_PROMPT_POINTER_CONFIDENCE": "0.0",
                                          "AGENTCTX_ARCHIVE_AFTER_DAYS": "36500"})
        other = coding.run(splits=("held-out",), hybrid=False, cfg=loose)
        tight, wide = report.scores["held-out"][coding.HOOK], other.scores["held-out"][coding.HOOK]
        assert tight.recall_at_3 == 0.0 and tight.injection_precision == 1.0
        assert wide.recall_at_3 is not None and wide.recall_at_3 > 0.8
        assert wide.injection_precision is not None and wide.injection_precision < 0.5


def test_hybrid_runs_with_a_real_model_folder(tiny_model_dir: Path) -> None:
    report = coding.run(splits=("held-out",), model_path=str(tiny_model_dir))
    assert report.hybrid == tiny_model_dir.name
    # The tiny model's tokenizer is word-level, so the hook's semantic check cannot run on it.
    assert report.consolidation.how == ("consolidation ran; semantic check unavailable: its "
                                        "tokenizer is WordLevel, not WordPiece")
    history = data.load_history()
    current = sum(1 for _, _, r in history.all_records()) - len(data.superseded_keys(history))
    assert report.consolidation.embedded == current  # every current record of every project
    hybrid = report.scores["held-out"][coding.HYBRID]
    assert hybrid.recall_at_10 is not None and 0.0 < hybrid.recall_at_10 <= 1.0
    assert hybrid.superseded_shown == 0


def test_a_missing_model_folder_is_reported_unavailable(tmp_path: Path) -> None:
    report = coding.run(splits=("held-out",), model_path=str(tmp_path / "nope"))
    assert report.hybrid is None
    assert report.hybrid_reason is not None and "does not exist" in report.hybrid_reason
    assert coding.HYBRID not in report.scores["held-out"]
