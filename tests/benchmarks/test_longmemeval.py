"""LongMemEval scoring on a tiny hand-made haystack, the FTS5 baseline, and (slow) the subset."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from agentctx.benchmarks import fts_baseline, longmemeval, retrieval
from agentctx.core.ids import clock_at
from agentctx.store import Store
from tests.benchmarks.conftest import wants_slow
from tests.conftest import SHARED

LONG_TEXT = "filler words about nothing in particular " * 250  # about 10,500 characters


def session(*turns: tuple[str, str, bool]) -> list[dict[str, Any]]:
    return [{"role": role, "content": text, "has_answer": gold} for role, text, gold in turns]


HIKING = session(("user", "I went hiking in the Alps last summer with my brother.", False),
                 ("assistant", "The Alps are beautiful in summer.", False))
QUESTIONS: list[dict[str, Any]] = [
    {"question_id": "q_cat", "question_type": "single-session-user",
     "question": "What is the name of my cat?", "answer": "Luna",
     "question_date": "2023/06/01 (Thu) 10:00",
     "haystack_session_ids": ["answer_cat_1", "hike_1", "hike_1"],
     "haystack_dates": ["2023/05/01 (Mon) 09:00", "2023/05/02 (Tue) 09:00",
                        "2023/05/03 (Wed) 09:00"],
     "haystack_sessions": [
         session(("user", "My cat is called Luna and she sleeps all day.", True),
                 ("assistant", "Luna sounds like a lovely cat!", False)),
         HIKING, HIKING],
     "answer_session_ids": ["answer_cat_1"]},
    {"question_id": "q_move", "question_type": "single-session-user",
     "question": "Which city did I move to for my new job?", "answer": "Lisbon",
     "question_date": "2023/06/01 (Thu) 10:00",
     "haystack_session_ids": ["noise_1", "answer_move_1"],
     "haystack_dates": ["2023/05/01 (Mon) 09:00", "2023/05/20 (Sat) 18:30"],
     "haystack_sessions": [
         session(("user", LONG_TEXT, False), ("assistant", "Noted.", False)),
         session(("user", "Big news: I moved to Lisbon for my new job at a bakery.", True),
                 ("assistant", "Congratulations on the move to Lisbon!", False))],
     "answer_session_ids": ["answer_move_1"]},
    {"question_id": "q_cat_abs", "question_type": "single-session-user",
     "question": "What is the name of my hamster?", "answer": "not mentioned",
     "question_date": "2023/06/01 (Thu) 10:00",
     "haystack_session_ids": ["answer_cat_2", "hike_2"],
     "haystack_dates": ["2023/05/01 (Mon) 09:00", "2023/05/02 (Tue) 09:00"],
     "haystack_sessions": [
         session(("user", "My cat's name is Luna and she sleeps all day.", False)), HIKING],
     "answer_session_ids": ["answer_cat_2"]},
]


@pytest.fixture
def tiny_file(tmp_path: Path) -> Path:
    path = tmp_path / "tiny_lme.json"
    path.write_text(json.dumps(QUESTIONS), encoding="utf-8")
    return path


class TestData:
    def test_loads_turns_with_keys_dates_and_gold(self, tiny_file: Path) -> None:
        cat, move, abstain = longmemeval.load(tiny_file)
        assert [t.key for t in cat.turns] == ["answer_cat_1#0", "answer_cat_1#1", "hike_1#0",
                                              "hike_1#1"]
        assert cat.duplicate_sessions == 1
        assert cat.gold_turns == {"answer_cat_1#0"}
        assert move.turns[-1].date.isoformat() == "2023-05-20T18:30:01+00:00"
        assert abstain.abstention and not cat.abstention

    def test_dates(self) -> None:
        assert longmemeval.parse_date("2023/05/30 (Tue) 23:40").isoformat() == \
            "2023-05-30T23:40:00+00:00"
        with pytest.raises(longmemeval.BadData):
            longmemeval.parse_date("yesterday")

    def test_malformed_files_get_clear_errors(self, tmp_path: Path) -> None:
        path = tmp_path / "bad.json"
        path.write_text('{"question_id": "x"}')
        with pytest.raises(longmemeval.BadData, match="list"):
            longmemeval.load(path)
        path.write_text('[{"question_id": "x"}]')
        with pytest.raises(longmemeval.BadData, match="lacks the field"):
            longmemeval.load(path)

    def test_a_missing_file_says_how_to_get_one(self, tmp_path: Path) -> None:
        with pytest.raises(longmemeval.DataMissing, match=r"huggingface\.co/datasets"):
            longmemeval.find_data(str(tmp_path / "absent.json"))

    def test_turn_split_keeps_every_word_once(self) -> None:
        assert longmemeval.split_turn("First line\nsecond line") == ("First line", "second line")
        assert longmemeval.split_turn("   ") == ("(empty turn)", "")
        text = " ".join(f"word{i}" for i in range(60))
        title, body = longmemeval.split_turn(text)
        assert len(title) <= longmemeval.TITLE_CHARS
        assert (title + " " + body).split() == text.split()

    def test_long_turns_are_cut_to_the_record_limit(self) -> None:
        cut, was_cut = longmemeval.cut_text(LONG_TEXT)
        assert was_cut and len(cut) == 8000
        assert longmemeval.cut_text("short") == ("short", False)


class TestIngest:
    def test_session_ids_never_reach_the_index(self, store: Store, tmp_path: Path,
                                               tiny_file: Path) -> None:
        cat = longmemeval.load(tiny_file)[0]
        ingested = longmemeval.ingest(store, cat, tmp_path / "p")
        assert len(ingested.keys) == len(cat.turns) == 4
        # The gold-revealing session ids live in the key, which is not searchable text.
        assert retrieval.keyword_search(store, "answer", ingested.project_id) == []
        found = retrieval.keyword_search(store, "Luna cat", ingested.project_id)
        assert {ingested.keys[h.record.id] for h in found} == {"answer_cat_1#0",
                                                              "answer_cat_1#1"}
        assert {h.record.type for h in found} == {"discovery"}
        assert found[0].record.valid_from.startswith("2023-05-01T09:00:0")


class TestRun:
    def test_scores_each_configuration(self, tiny_file: Path) -> None:
        report = longmemeval.run(tiny_file, hybrid=False, cfg=retrieval.bench_config())
        assert report.hybrid is None
        for name in (longmemeval.KEYWORD, longmemeval.FTS5):
            found = longmemeval.score(report.results, name)
            assert found is not None
            assert found.questions == 2
            assert found.recall_any == {3: 1.0, 5: 1.0, 10: 1.0}
            assert found.turn_recall[10] == 1.0
            assert found.answered_at_3 == 2
        hook = longmemeval.score(report.results, longmemeval.HOOK)
        assert hook is not None and hook.recall_any[5] is None and hook.turn_recall[10] is None
        assert longmemeval.score(report.results, longmemeval.HYBRID) is None
        abstain = report.results[-1]
        assert abstain.question.abstention and abstain.rankings[longmemeval.HOOK] == ()
        assert abstain.top_relevance is not None and abstain.top_relevance < 0.5

    def test_report_says_what_was_cut_and_deduplicated(self, tiny_file: Path) -> None:
        report = longmemeval.run(tiny_file, hybrid=False, cfg=retrieval.bench_config())
        text = longmemeval.render(report)
        assert "1 turns longer than 8,000 characters were cut" in text
        assert "1 repeated sessions ingested once" in text
        assert "(b) hybrid ctx_search (unavailable)" in text
        assert "q_cat_abs" in text
        assert "targets (set on the 30-question subset):" in text
        document = longmemeval.to_json(report)
        assert document["cut_turns"] == 1 and document["duplicate_sessions"] == 1
        checks = {c["metric"]: c for c in document["targets"]}
        assert checks["hybrid recall_any@5"] == {"metric": "hybrid recall_any@5", "goal": 0.96,
                                                 "value": None, "met": False}
        hook = longmemeval.score(report.results, longmemeval.HOOK)
        assert hook is not None
        assert checks["hook recall_any@3"]["value"] == hook.recall_any[3]
        difference = checks["hook answered@3 minus FTS5 answered@3"]
        assert difference["value"] == hook.answered_at_3 - 2
        assert difference["met"] is (hook.answered_at_3 >= 2)
        assert document["configurations"]["fts5"]["recall_any"]["@5"] == 1.0

    def test_the_hook_against_fts5_at_equal_tokens(self, tiny_file: Path) -> None:
        """Tokens per question beside recall: the hook's, plain FTS5's top 3 composed the way
        the hook composes, and FTS5 cut to the hook's tokens (nothing when the hook spent none)."""
        report = longmemeval.run(tiny_file, hybrid=False, cfg=retrieval.bench_config())
        hook_tokens = longmemeval.tokens_per_question(report.results, longmemeval.HOOK)
        fts5_tokens = longmemeval.tokens_per_question(report.results, longmemeval.FTS5)
        assert hook_tokens is not None and fts5_tokens is not None and fts5_tokens > 0
        for result in report.results:
            assert result.tokens is not None
            within = result.rankings[longmemeval.FTS5_EQUAL]
            assert within == result.rankings[longmemeval.FTS5][:len(within)]
            if result.tokens[longmemeval.HOOK] == 0:
                assert within == ()
        assert "hook vs plain FTS5's top 3 at equal tokens" in longmemeval.render(report)
        document = longmemeval.to_json(report)
        assert document["tokens_per_question"] == {"hook": hook_tokens, "fts5": fts5_tokens}
        checks = {c["metric"]: c for c in document["targets"]}
        gap = checks["FTS5 top-3 tokens minus hook tokens per question"]
        assert gap["value"] == fts5_tokens - hook_tokens

    def test_hybrid_with_a_real_model_folder(self, tiny_file: Path,
                                             tiny_model_dir: Path) -> None:
        report = longmemeval.run(tiny_file, model_path=str(tiny_model_dir))
        found = longmemeval.score(report.results, longmemeval.HYBRID)
        assert found is not None and found.questions == 2
        assert all(r.consolidation.embedded == len(r.question.turns) for r in report.results)


class TestFts5Baseline:
    def test_query_words_drop_the_minimal_stop_list(self) -> None:
        assert fts_baseline.query_words("What is the name of my cat? The CAT!") == ["name", "cat"]
        assert fts_baseline.match_expression('say "hi"') == '"say" OR "hi"'
        assert fts_baseline.match_expression("what is it") == ""

    def test_ranks_by_bm25_over_its_own_table(self) -> None:
        baseline = fts_baseline.Fts5Baseline([("a", "my dog barks"), ("b", "my cat naps"),
                                              ("c", "cat cat cat food for the cat")])
        try:
            assert baseline.search("which cat?", 5) == ["c", "b"]
            assert baseline.search("which cat?", 1) == ["c"]
            assert baseline.search("the", 5) == []
            assert baseline.search('NEAR( "quotes" ) -minus *', 5) == []
        finally:
            baseline.close()


@pytest.mark.slow
def test_the_shared_subset_with_the_real_model(request: pytest.FixtureRequest) -> None:
    """The full 34-question subset with minilm-static-256 (about a minute on two cores)."""
    if not wants_slow(request.config):
        pytest.skip("slow: run with -m slow")
    data = SHARED / "data" / "longmemeval" / longmemeval.SUBSET_NAME
    model = SHARED / "models" / "minilm-static-256"
    if not data.is_file() or not model.is_dir():
        pytest.skip("the shared LongMemEval subset or model is not present")
    report = longmemeval.run(data, model_path=str(model))
    document = longmemeval.to_json(report)
    assert document["questions"] == 34 and document["cut_turns"] == 14
    assert document["duplicate_sessions"] == 2
    configurations = document["configurations"]
    assert all(configurations[name] is not None for name in ("hook", "keyword", "hybrid", "fts5"))
    # The baseline is not ours to tune: its published neighbourhood checks the wiring.
    assert configurations["fts5"]["recall_any"]["@5"] >= 0.8
    # The hook shows at most three of the keyword search's first ten, in full or as pointers.
    hook, full = configurations["hook"], configurations["hook_full"]
    assert full["answered_at_3"] <= hook["answered_at_3"]
    assert hook["recall_any"]["@3"] <= configurations["keyword"]["recall_any"]["@10"]
    # What the hook cannot lose to: plain FTS5's first three on the same turns.
    assert hook["answered_at_3"] >= configurations["fts5"]["answered_at_3"]


def test_each_question_is_scored_on_its_own_date(tiny_file: Path) -> None:
    """A question's time words read from the day it is asked (``question_date``)."""
    from agentctx.core.ids import NOW_ENV, now

    [first, *_] = longmemeval.load(tiny_file)
    assert first.date is not None
    with clock_at(first.date):
        assert now() == first.date
    assert NOW_ENV not in __import__("os").environ or now() != first.date
