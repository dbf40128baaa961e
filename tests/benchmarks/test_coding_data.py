"""The coding benchmark's committed data: its size, labels and split, and loading it for real."""

from __future__ import annotations

import json
from collections import Counter
from datetime import UTC, datetime
from pathlib import Path

import pytest

from agentctx.benchmarks import coding_data as data
from agentctx.store import Store, graph, records
from agentctx.store.models import GLOBAL_PROJECT, RECORD_TYPES
from agentctx.store.selection import Selection

# The prompt files written after the split, one per round of tuning.
LATER_TUNING_FILES = [data.TUNING_2_PATH, data.TUNING_3_PATH, data.TUNING_4_PATH,
                      data.TUNING_5_PATH]


@pytest.fixture(scope="module")
def history() -> data.History:
    return data.load_history()


@pytest.fixture(scope="module")
def tuning() -> list[data.BenchQuery]:
    return data.load_queries(data.TUNING_PATH)


@pytest.fixture(scope="module")
def held_out() -> list[data.BenchQuery]:
    return data.load_queries(data.HELD_OUT_PATH)


def main_records(history: data.History) -> list[data.RecordSpec]:
    return [r for s in history.project.sessions for r in s.records]


class TestHistory:
    def test_at_least_150_records_of_every_type(self, history: data.History) -> None:
        found = main_records(history)
        assert len(found) >= 150
        assert set(Counter(r.type for r in found)) == set(RECORD_TYPES)

    def test_project_and_global_preferences(self, history: data.History) -> None:
        scopes = {r.scope for r in main_records(history) if r.type == "preference"}
        assert scopes == {"project", "global"}

    def test_at_least_20_supersession_chains_spread_over_months(
            self, history: data.History) -> None:
        chains = data.predecessors(history)
        heads = [k for k, old in chains.items() if old and k not in data.superseded_keys(history)]
        assert len(heads) >= 20
        assert any(len(chains[k]) >= 2 for k in heads)  # chains deeper than one change
        days = [s.day for s in history.project.sessions]
        assert max(days) - min(days) >= 180

    def test_a_sibling_project_with_overlapping_vocabulary(self, history: data.History) -> None:
        titles = " ".join(r.title for o in history.others for s in o.sessions for r in s.records)
        assert "Tests run with" in titles and "Redux" in titles

    def test_inconsistent_histories_are_refused(self, history: data.History) -> None:
        session = history.project.sessions[0]
        first = session.records[0]
        duplicate = session._replace(records=(*session.records, first))
        broken = history._replace(project=history.project._replace(sessions=(duplicate,)))
        with pytest.raises(data.DataError, match="used twice"):
            data.check_history(broken)
        dangling = first._replace(key="new-one", supersedes="no-such-record", why="because")
        broken = history._replace(project=history.project._replace(
            sessions=(session._replace(records=(dangling,)),)))
        with pytest.raises(data.DataError, match="not an earlier record"):
            data.check_history(broken)


class TestQueries:
    def test_sizes(self, tuning: list[data.BenchQuery], held_out: list[data.BenchQuery]) -> None:
        every = tuning + held_out
        assert sum(q.answerable for q in every) >= 100
        assert sum(not q.answerable for q in every) >= 20
        assert sum(q.about_change for q in every) >= 20

    def test_held_out_is_30_percent_and_disjoint(self, tuning: list[data.BenchQuery],
                                                 held_out: list[data.BenchQuery]) -> None:
        assert not {q.id for q in tuning} & {q.id for q in held_out}
        assert not {q.prompt for q in tuning} & {q.prompt for q in held_out}
        share = len(held_out) / (len(tuning) + len(held_out))
        assert 0.28 <= share <= 0.32
        for name in ("changed", "answerable", "unanswerable"):
            assert any(data.stratum(q) == name for q in held_out)

    def test_committed_files_are_exactly_the_documented_split(
            self, tuning: list[data.BenchQuery], held_out: list[data.BenchQuery]) -> None:
        again_tuning, again_held_out = data.split_queries(tuning + held_out)
        assert again_tuning == tuning
        assert again_held_out == held_out

    def test_every_label_names_a_current_record(self, history: data.History,
                                                tuning: list[data.BenchQuery],
                                                held_out: list[data.BenchQuery]) -> None:
        data.check_queries(history, tuning + held_out)

    @pytest.mark.parametrize("path", LATER_TUNING_FILES)
    def test_later_tuning_files_are_disjoint_and_labelled(
            self, path: Path, history: data.History, tuning: list[data.BenchQuery],
            held_out: list[data.BenchQuery]) -> None:
        later = data.load_queries(path)
        assert sum(not q.answerable for q in later) >= 30
        assert sum(q.answerable for q in later) >= 15
        others = tuning + held_out + [q for other in LATER_TUNING_FILES
                                      if other != path for q in data.load_queries(other)]
        assert not {q.id for q in later} & {q.id for q in others}
        # Compared without being shown: the held-out prompts are never printed.
        normalized = {" ".join(q.prompt.lower().split()) for q in others}
        assert sum(" ".join(q.prompt.lower().split()) in normalized for q in later) == 0
        data.check_queries(history, later)
        assert set(data.SPLIT_FILES) == {*data.TUNING_SPLITS, "held-out"}

    def test_bad_labels_are_refused(self, history: data.History) -> None:
        with pytest.raises(data.DataError, match="not a record"):
            data.check_queries(history, [data.BenchQuery("x1", "p", ("nope",), False)])
        with pytest.raises(data.DataError, match="superseded record"):
            data.check_queries(history, [data.BenchQuery("x2", "p", ("api-rest",), False)])
        with pytest.raises(data.DataError, match="no answer has a superseded version"):
            data.check_queries(history, [data.BenchQuery("x3", "p", ("rate-limit",), True)])

    def test_split_is_deterministic_and_stratified(self) -> None:
        made = [data.BenchQuery(f"q{i:02d}", f"prompt {i}", ("a",) if i % 3 else (),
                                i % 3 == 1) for i in range(30)]
        first = data.split_queries(made, seed=7)
        assert first == data.split_queries(made, seed=7)
        assert first != data.split_queries(made, seed=8)
        assert Counter(data.stratum(q) for q in first[1]) == {
            "changed": 3, "answerable": 3, "unanswerable": 3}

    def test_a_malformed_file_gets_a_clear_error(self, tmp_path: Path) -> None:
        path = tmp_path / "q.json"
        path.write_text(json.dumps({"queries": [{"id": "a", "prompt": 3, "answers": []}]}))
        with pytest.raises(data.DataError, match="prompt"):
            data.load_queries(path)
        path.write_text("{not json")
        with pytest.raises(data.DataError, match="cannot read"):
            data.load_queries(path)


class TestBuild:
    NOW = datetime(2026, 3, 10, 15, 0, tzinfo=UTC)

    def test_loads_through_the_store_api(self, store: Store, tmp_path: Path,
                                         history: data.History) -> None:
        built = data.build(store, history, tmp_path, now=self.NOW)
        assert built.records == len(main_records(history))
        assert built.project_name == "ledgerline"
        current = records.list_records(store,
                                       Selection(project_id=built.project_id, include_global=True))
        assert len(current) == built.records - len(built.superseded)

        chain = records.history(store, built.ids["tests-xdist"])
        assert [built.keys[r.id] for r in chain] == ["tests-nose", "tests-pytest", "tests-xdist"]
        assert chain[0].superseded_at == chain[1].valid_from
        rationale = records.supersession_note(store, built.ids["api-grpc"], built.ids["api-rest"])
        assert rationale and "streaming" in rationale

        profile = records.find_current_by_key(store, built.project_id, "profile", "command.test")
        assert profile is not None and built.keys[profile.id] == "profile-test-v3"
        prose = records.get(store, built.ids["gp-prose"])
        assert prose.project_id == GLOBAL_PROJECT and prose.current

        linked = [built.keys[r.id] for r, _ in graph.related_records(
            store, built.project_id, "ledgerline/invoicing/tax.py")]
        assert "bugfix-vat-rounding" in linked and "module-invoicing" in linked

    def test_ages_are_fixed_relative_to_the_run(self, store: Store, tmp_path: Path,
                                                history: data.History) -> None:
        built = data.build(store, history, tmp_path, now=self.NOW)
        moments = sorted(datetime.fromisoformat(r.valid_from.replace("Z", "+00:00"))
                         for r in records.list_records(store,
                                                       Selection(project_id=built.project_id,
                                                                 include_global=True, state="all")))
        assert (self.NOW - moments[0]).days == history.span_days + data.ANCHOR_DAYS - 1
        assert 1 <= (self.NOW - moments[-1]).total_seconds() / 86400 <= 2
        assert history.span_days == 262

    def test_a_reused_key_without_supersedes_is_refused(self, store: Store, tmp_path: Path,
                                                        history: data.History) -> None:
        session = history.project.sessions[0]
        profile = next(r for r in session.records if r.store_key == "name")
        again = profile._replace(key="name-again", title="Project name: ledgerline2")
        broken = history._replace(project=history.project._replace(
            sessions=(session._replace(records=(*session.records, again)),)), others=())
        with pytest.raises(data.DataError, match="reuses key"):
            data.build(store, broken, tmp_path, now=self.NOW)
