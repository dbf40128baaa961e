"""``agentctx bench`` through the real command, run in process."""

from __future__ import annotations

import json
from pathlib import Path

from tests.benchmarks.test_longmemeval import QUESTIONS
from tests.conftest import run_cli


def test_coding_held_out_as_json(isolated_home: Path) -> None:
    done = run_cli("bench", "coding", "--held-out-only", "--no-hybrid", "--json")
    assert done.returncode == 0, done.stderr
    document = json.loads(done.stdout)
    assert list(document["splits"]) == ["held-out"]
    assert document["splits"]["held-out"]["prompts"] == 45
    assert document["hybrid_unavailable"] == "not requested (--no-hybrid)"
    assert not (isolated_home / "agentctx.db").exists()  # the user's store is never touched


def test_coding_text_table_with_tuning_misses() -> None:
    done = run_cli("bench", "coding", "--tuning-only", "--no-hybrid", "--misses")
    assert done.returncode == 0, done.stderr
    assert "tuning: 107 prompts" in done.stdout and "held-out:" not in done.stdout
    assert "tuning misses (per-turn hook):" in done.stdout


def test_conflicting_options_get_one_line() -> None:
    for args in (("--held-out-only", "--misses"), ("--held-out-only", "--tuning-only")):
        done = run_cli("bench", "coding", *args)
        assert done.returncode == 1
        assert done.stderr.startswith("agentctx: ") and done.stderr.count("\n") == 1
        assert "Traceback" not in done.stderr


def test_longmemeval_on_a_given_file(tmp_path: Path) -> None:
    path = tmp_path / "lme.json"
    path.write_text(json.dumps(QUESTIONS), encoding="utf-8")
    done = run_cli("bench", "longmemeval", "--data", str(path), "--no-hybrid", "--json")
    assert done.returncode == 0, done.stderr
    document = json.loads(done.stdout)
    assert document["questions"] == 3 and document["cut_turns"] == 1
    assert document["configurations"]["fts5"]["answered_at_3"] == 2
    assert document["configurations"]["hybrid"] is None


def test_longmemeval_without_data_says_how_to_get_it(tmp_path: Path) -> None:
    done = run_cli("bench", "longmemeval", "--data", str(tmp_path / "absent.json"))
    assert done.returncode == 1
    assert "huggingface.co/datasets/xiaowu0162/longmemeval-cleaned" in done.stderr
    assert "Traceback" not in done.stderr


def test_longmemeval_rejects_a_malformed_file(tmp_path: Path) -> None:
    path = tmp_path / "bad.json"
    path.write_text("[1, 2, 3]", encoding="utf-8")
    done = run_cli("bench", "longmemeval", "--data", str(path))
    assert done.returncode == 1
    assert done.stderr.startswith("agentctx: ") and "JSON object" in done.stderr
