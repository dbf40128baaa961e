"""The evaluation projects' committed data: it loads, its labels hold, its split is fixed."""

from __future__ import annotations

import pytest

from agentctx.benchmarks import coding_data as data
from agentctx.benchmarks import eval_projects as projects


def test_there_are_at_least_three_evaluation_projects() -> None:
    assert len(projects.eval_projects()) >= 3


@pytest.mark.parametrize("project", projects.eval_projects(), ids=lambda p: p.name)
class TestCommittedProject:
    def test_history_and_prompts_are_consistent(self, project: projects.EvalProject) -> None:
        history = data.load_history(project.history_path)
        queries = [q for split in projects.SPLITS
                   for q in data.load_queries(project.queries_path(split))]
        data.check_queries(history, queries)
        projects.check_kinds(queries)
        assert history.others, "a sibling project whose records must never show"
        assert len(data.superseded_keys(history)) >= 20
        kinds = {q.kind for q in queries}
        assert kinds == set(projects.KINDS)

    def test_committed_files_are_exactly_the_documented_split(
            self, project: projects.EvalProject) -> None:
        tuning = data.load_queries(project.queries_path("tuning"))
        held_out = data.load_queries(project.queries_path("held-out"))
        assert projects.split_by_kind(tuning + held_out) == (tuning, held_out)


def test_split_holds_out_a_share_of_every_kind() -> None:
    made = [data.BenchQuery(f"q{i:03d}", f"prompt {i}", ("a",) if i % 2 else (), False,
                            "terse" if i % 2 else "ack") for i in range(40)]
    tuning, held = projects.split_by_kind(made, seed=3)
    assert (tuning, held) == projects.split_by_kind(made, seed=3)
    assert sum(q.kind == "terse" for q in held) == 6
    assert sum(q.kind == "ack" for q in held) == 6
    assert not {q.id for q in tuning} & {q.id for q in held}


def test_a_kind_that_disagrees_with_the_answers_is_refused() -> None:
    with pytest.raises(data.DataError, match="needs answers"):
        projects.check_kinds([data.BenchQuery("x", "p", (), False, "terse")])
    with pytest.raises(data.DataError, match="unknown kind"):
        projects.check_kinds([data.BenchQuery("y", "p", ("a",), False, "rambling")])
