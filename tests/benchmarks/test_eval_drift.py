"""The drift benchmark: fixture loading and checking, scoring, and bench/bench_drift.py itself."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from agentctx.benchmarks import eval_drift as bench
from tests.conftest import REPO

FIXTURES = REPO / "tests" / "drift" / "fixtures"


def copy_fixture(name: str, target: Path) -> Path:
    shutil.copytree(FIXTURES / name, target)
    return target


def rewrite(path: Path, change: object) -> None:
    document = json.loads(path.read_text(encoding="utf-8"))
    change(document)  # type: ignore[operator]
    path.write_text(json.dumps(document), encoding="utf-8")


def test_fixtures_load_and_checked_ids_follow_the_rules() -> None:
    fixture = bench.load(FIXTURES / "orders-api")
    assert fixture.kind == "drifted" and fixture.project == "orders-api"
    checked = bench.checked_ids(fixture.records)
    assert "web-flask" not in checked  # superseded
    assert "flags-unleash" not in checked and "bug-vat-rounding" not in checked
    assert len(checked) == 12
    assert [f.name for f in bench.load_split(FIXTURES)] == ["orders-api", "tilekit"]
    assert bench.load_split(FIXTURES / "nope") == []


@pytest.mark.parametrize(("change", "message"), [
    (lambda d: d["records"][11].update(supersedes="nope"), "not an earlier record"),
    (lambda d: d["records"].append(dict(d["records"][0])), "missing or repeated"),
    (lambda d: d["records"][0].update(title=""), "has no title"),
])
def test_broken_records_are_refused_with_the_rule(tmp_path: Path, change: object,
                                                  message: str) -> None:
    folder = copy_fixture("orders-api", tmp_path / "f")
    rewrite(folder / "records.json", change)
    with pytest.raises(bench.FixtureError, match=message):
        bench.load(folder)


def test_labels_must_cover_each_checked_record_once(tmp_path: Path) -> None:
    folder = copy_fixture("orders-api", tmp_path / "f")
    rewrite(folder / "labels.json", lambda d: d["missing"].append("web-fastapi"))
    with pytest.raises(bench.FixtureError, match=r"repeated \['web-fastapi'\]"):
        bench.load(folder)
    rewrite(folder / "labels.json", lambda d: d.update(kind="mostly"))
    with pytest.raises(bench.FixtureError, match="kind must be one of"):
        bench.load(folder)


def test_evaluate_and_summarize_pool_the_right_records() -> None:
    outcomes = [bench.evaluate(f) for f in bench.load_split(FIXTURES)]
    summary = bench.summarize(outcomes)
    assert summary.fixtures == 2
    assert (summary.false_positive.hits, summary.false_positive.total) == (0, 11)
    assert (summary.recall.hits, summary.recall.total) == (5, 5)
    assert (summary.class_exact.hits, summary.drifted_false_positive.total) == (5, 7)
    assert (summary.stale_recall.hits, summary.stale_recall.total) == (1, 1)
    assert bench.misses(outcomes) == []
    assert str(summary.recall) == "1.000 (5/5; 95% 0.57-1.00)"


def test_misses_name_every_wrong_verdict() -> None:
    outcome = bench.Outcome("f", "drifted", {"a": "present", "b": "missing", "c": "missing"},
                            {"a": "missing", "b": "contradicted", "c": "missing"},
                            frozenset({"x"}), frozenset({"y"}), 0.0)
    assert bench.misses([outcome]) == [
        "f: a labelled missing, scanned present", "f: b labelled contradicted, scanned missing",
        "f: y labelled stale, not flagged", "f: x flagged stale, not labelled"]
    summary = bench.summarize([outcome])
    assert (summary.recall.hits, summary.class_exact.hits) == (2, 1)
    assert bench.Rate(0, 0).interval == (0.0, 1.0) and bench.Rate(0, 0).value == 0.0


def test_the_bench_scores_one_split_when_asked(tmp_path: Path) -> None:
    data = tmp_path / "drift"
    copy_fixture("tilekit", data / "tuning" / "tilekit")
    copy_fixture("orders-api", data / "heldout" / "orders-api")
    done = subprocess.run([sys.executable, str(REPO / "bench" / "bench_drift.py"), "--data",
                           str(data), "--superseded", str(tmp_path / "none"), "--splits",
                           "tuning", "--no-vectors", "--decisions", "30", "--runs", "1"],
                          capture_output=True, text=True, timeout=300, cwd=REPO, check=False)
    assert "tuning: 1 fixtures" in done.stdout and "heldout" not in done.stdout
    bad = subprocess.run([sys.executable, str(REPO / "bench" / "bench_drift.py"), "--splits",
                          "train"], capture_output=True, text=True, timeout=60, cwd=REPO,
                         check=False)
    assert bad.returncode == 2 and "unknown split 'train'" in bad.stderr


def test_the_bench_scores_both_splits_and_times_the_scan(tmp_path: Path) -> None:
    data = tmp_path / "drift"
    copy_fixture("tilekit", data / "tuning" / "tilekit")
    copy_fixture("orders-api", data / "heldout" / "orders-api")
    case = {"current": "pytest", "stated": "nose", "class": "contradicted",
            "file": "AGENTS.md", "form": "backticks"}
    small_fixture(tmp_path / "superseded" / "tuning" / "tools", [case])
    done = subprocess.run([sys.executable, str(REPO / "bench" / "bench_drift.py"), "--data",
                           str(data), "--superseded", str(tmp_path / "superseded"),
                           "--no-vectors", "--decisions", "60", "--runs", "1", "--json"],
                          capture_output=True, text=True, timeout=300, cwd=REPO, check=False)
    assert done.returncode in (0, 1), done.stderr
    out = done.stdout
    assert "tuning: 1 fixtures (1 all_present, 0 drifted)" in out
    assert "heldout: 1 fixtures (0 all_present, 1 drifted)" in out
    assert "false positives (all_present)   0.000 (0/11; 95% 0.00-0.26)" in out
    assert "recall missing+contradicted     1.000 (5/5; 95% 0.57-1.00)" in out
    assert "superseded text, tuning: 1 fixtures, 1 statements of superseded text" in out
    assert "found (contradicted or stale)   1.000 (1/1; 95% 0.21-1.00)" in out
    assert "superseded heldout: no fixtures" in out
    assert "speed: 60 current decisions" in out
    document = json.loads(out[out.index("\n{") + 1:])
    assert set(document["quality"]) == {"tuning", "heldout"}
    assert document["superseded"]["tuning"]["keyword"]["by_form"]["backticks"]["found"][
        "hits"] == 1
    assert document["quality"]["heldout"]["keyword"]["recall"]["wilson95"] == [0.5655, 1.0]
    assert set(document["speed"]["median_ms"]) == {"baseline", "scan"}
    assert (done.returncode == 0) == (document["failures"] == [])


SUPERSEDED = REPO / "bench" / "data" / "drift-superseded"


def test_the_superseded_text_fixtures_load_with_their_cases() -> None:
    fixtures = [f for split in ("tuning", "heldout") for f in bench.load_split(SUPERSEDED / split)]
    assert len(fixtures) == 10
    cases = [c for f in fixtures for c in f.cases]
    assert len(cases) == 54 and {c["class"] for c in cases} == {"contradicted", "stale"}


def small_fixture(folder: Path, cases: list[dict[str, str]]) -> Path:
    (folder / "memory").mkdir(parents=True)
    (folder / "memory" / "AGENTS.md").write_text(
        "# Tools\n\n- Run the tests with `nosetests`.\n- Lint with ruff.\n", encoding="utf-8")
    records = [{"id": "nose", "type": "decision", "title": "Tests run with nose",
                "body": "Run nosetests from the root.", "confidence": "explicit"},
               {"id": "pytest", "type": "decision", "title": "Tests run with pytest",
                "body": "Run pytest -q.", "confidence": "explicit", "supersedes": "nose"},
               {"id": "ruff", "type": "convention", "title": "Lint with ruff", "body": "",
                "confidence": "explicit"}]
    (folder / "records.json").write_text(json.dumps({"project": "p", "records": records}),
                                         encoding="utf-8")
    (folder / "labels.json").write_text(json.dumps(
        {"kind": "drifted", "present": ["ruff"], "missing": [], "contradicted": ["pytest"],
         "stale": [], "cases": cases}), encoding="utf-8")
    return folder


def test_a_case_is_found_when_a_candidate_names_the_stated_record_in_its_file(
        tmp_path: Path) -> None:
    case = {"current": "pytest", "stated": "nose", "class": "contradicted", "file": "AGENTS.md",
            "form": "backticks"}
    outcome = bench.evaluate(bench.load(small_fixture(tmp_path / "f", [case])))
    assert outcome.cases == (bench.CaseOutcome("pytest", "nose", "contradicted", "backticks",
                                               "AGENTS.md", "contradicted"),)
    summary = bench.summarize([outcome])
    assert (summary.superseded_found.hits, summary.superseded_class.hits) == (1, 1)
    assert summary.by_form == (("backticks", bench.Rate(1, 1), bench.Rate(1, 1)),)
    wrong = outcome._replace(cases=(outcome.cases[0]._replace(found="stale"),))
    summary = bench.summarize([wrong])
    assert (summary.superseded_found.hits, summary.superseded_class.hits) == (1, 0)
    assert bench.misses([wrong]) == ["f: nose (backticks, AGENTS.md) for pytest labelled "
                                     "contradicted, found stale"]


@pytest.mark.parametrize(("case", "message"), [
    ({"current": "ruff", "stated": "nose", "class": "stale", "file": "AGENTS.md"},
     "not an older version"),
    ({"current": "pytest", "stated": "nose", "class": "gone", "file": "AGENTS.md"},
     "class must be one of"),
    ({"current": "pytest", "stated": "nose", "class": "stale", "file": "CLAUDE.md"},
     "not in memory/"),
])
def test_broken_cases_are_refused_with_the_rule(tmp_path: Path, case: dict[str, str],
                                                message: str) -> None:
    with pytest.raises(bench.FixtureError, match=message):
        bench.load(small_fixture(tmp_path / "f", [case]))
