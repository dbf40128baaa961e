"""The scorers on tiny hand-made cases: a broken metric must not pass silently."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from agentctx.benchmarks.metrics import (
    Chain,
    group_recall_any,
    hit_at,
    injection_precision,
    mean,
    median,
    percentile,
    recall_at,
    supersession_correct,
    wilson_interval,
)


class TestRecall:
    def test_a_ranking_that_misses_scores_zero(self) -> None:
        assert recall_at(["b", "c", "d"], {"a"}, 3) == 0.0

    def test_an_empty_ranking_scores_zero(self) -> None:
        assert recall_at([], {"a"}, 3) == 0.0

    def test_only_the_first_k_count(self) -> None:
        ranking = ["x", "y", "z", "a"]
        assert recall_at(ranking, {"a"}, 3) == 0.0
        assert recall_at(ranking, {"a"}, 4) == 1.0

    def test_partial_recall_is_the_share_of_gold_found(self) -> None:
        assert recall_at(["a", "x", "y"], {"a", "b"}, 3) == 0.5
        assert recall_at(["b", "a"], {"a", "b"}, 10) == 1.0

    def test_duplicates_in_the_ranking_do_not_inflate_recall(self) -> None:
        assert recall_at(["a", "a", "a"], {"a", "b"}, 3) == 0.5

    def test_refuses_what_it_cannot_score(self) -> None:
        with pytest.raises(ValueError):
            recall_at(["a"], set(), 3)
        with pytest.raises(ValueError):
            recall_at(["a"], {"a"}, 0)

    def test_hit_is_any_gold_in_the_first_k(self) -> None:
        assert hit_at(["x", "b"], {"a", "b"}, 2)
        assert not hit_at(["x", "b"], {"a", "b"}, 1)
        with pytest.raises(ValueError):
            hit_at(["a"], [], 1)


SESSION_OF = {"s1#0": "s1", "s1#1": "s1", "s2#0": "s2", "s3#4": "s3"}


class TestGroupRecallAny:
    SESSION_OF = SESSION_OF

    def test_any_key_of_a_gold_group_within_k(self) -> None:
        assert group_recall_any(["s2#0", "s1#1"], self.SESSION_OF, {"s1"}, 2)

    def test_a_gold_group_after_k_does_not_count(self) -> None:
        assert not group_recall_any(["s2#0", "s3#4", "s1#1"], self.SESSION_OF, {"s1"}, 2)

    def test_k_counts_keys_not_groups(self) -> None:
        ranking = ["s2#0", "s2#0", "s2#0", "s1#0"]
        assert not group_recall_any(ranking, self.SESSION_OF, {"s1"}, 3)

    def test_keys_without_a_group_never_count(self) -> None:
        assert not group_recall_any(["unknown#1"], self.SESSION_OF, {"s1"}, 5)

    def test_refuses_an_empty_gold_set(self) -> None:
        with pytest.raises(ValueError):
            group_recall_any(["s1#0"], self.SESSION_OF, set(), 5)


class TestSupersession:
    CHAIN = Chain("grpc", frozenset({"rest", "soap"}))

    def test_current_first_is_correct(self) -> None:
        assert supersession_correct(["grpc", "rest", "soap"], ["grpc"], [self.CHAIN])

    def test_a_superseded_record_ranked_first_fails(self) -> None:
        assert not supersession_correct(["rest", "grpc"], [], [self.CHAIN])

    def test_any_older_version_above_the_current_fails(self) -> None:
        assert not supersession_correct(["x", "soap", "y", "grpc", "rest"], [], [self.CHAIN])

    def test_a_superseded_record_injected_fails_even_when_ranked_right(self) -> None:
        assert not supersession_correct(["grpc", "rest"], ["grpc", "rest"], [self.CHAIN])

    def test_the_current_record_missing_fails(self) -> None:
        assert not supersession_correct(["x", "y"], [], [self.CHAIN])

    def test_superseded_versions_absent_from_the_ranking_are_fine(self) -> None:
        assert supersession_correct(["x", "grpc"], [], [self.CHAIN])

    def test_every_chain_must_hold(self) -> None:
        other = Chain("uv", frozenset({"poetry"}))
        assert supersession_correct(["grpc", "uv", "poetry"], [], [self.CHAIN, other])
        assert not supersession_correct(["grpc", "poetry", "uv"], [], [self.CHAIN, other])

    def test_refuses_no_chains(self) -> None:
        with pytest.raises(ValueError):
            supersession_correct(["a"], [], [])


class TestInjectionPrecision:
    def test_an_empty_injection_is_precise(self) -> None:
        assert injection_precision([0]) == 1.0

    def test_any_injected_record_makes_the_prompt_imprecise(self) -> None:
        assert injection_precision([1]) == 0.0
        assert injection_precision([0, 3, 0, 1]) == 0.5

    def test_refuses_no_prompts_and_negative_counts(self) -> None:
        with pytest.raises(ValueError):
            injection_precision([])
        with pytest.raises(ValueError):
            injection_precision([0, -1])


class TestSummaries:
    def test_median_and_percentiles(self) -> None:
        assert median([3.0, 1.0, 2.0]) == 2.0
        assert median([4.0, 1.0, 2.0, 3.0]) == 2.5
        assert percentile([1.0, 2.0, 3.0, 4.0, 5.0], 0.0) == 1.0
        assert percentile([1.0, 2.0, 3.0, 4.0, 5.0], 1.0) == 5.0
        assert percentile([10.0, 20.0], 0.25) == 12.5

    def test_mean(self) -> None:
        assert mean([1.0, 0.0, 0.5]) == 0.5

    def test_refuse_empty_input(self) -> None:
        calls: list[Callable[[], float]] = [lambda: mean([]), lambda: median([]),
                                             lambda: percentile([1.0], 1.5)]
        for call in calls:
            with pytest.raises(ValueError):
                call()


class TestWilsonInterval:
    def test_known_values(self) -> None:
        # Textbook values (Newcombe 1998, method 3): 81/263 -> 0.2553-0.3662; 7/8 -> 0.529-0.978.
        low, high = wilson_interval(81, 263)
        assert round(low, 4) == 0.2553 and round(high, 4) == 0.3662
        low, high = wilson_interval(7, 8)
        assert round(low, 3) == 0.529 and round(high, 3) == 0.978

    def test_all_or_nothing_keeps_a_width(self) -> None:
        low, high = wilson_interval(8, 8)
        assert 0.6 < low < 1.0 and high == 1.0
        low, high = wilson_interval(0, 8)
        assert low == 0.0 and 0.0 < high < 0.4

    def test_more_trials_narrow_the_interval(self) -> None:
        narrow = wilson_interval(90, 100)
        wide = wilson_interval(9, 10)
        assert narrow[1] - narrow[0] < wide[1] - wide[0]

    def test_refuses_impossible_counts(self) -> None:
        for successes, total in ((1, 0), (-1, 5), (6, 5)):
            with pytest.raises(ValueError):
                wilson_interval(successes, total)
