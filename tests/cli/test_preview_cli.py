"""``agentctx preview``, run in process: what the per-prompt hook would inject, and why."""

from __future__ import annotations

import json
from pathlib import Path

from tests.conftest import run_cli
from tests.support import shown


def _record(project_dir: Path, *args: str) -> str:
    made = run_cli("record", *args, "--json", cwd=project_dir)
    assert made.returncode == 0, made.stderr
    return str(json.loads(made.stdout)["id"])


def test_preview_reports_outcomes_and_changes_nothing(project_dir: Path) -> None:
    strong = _record(project_dir, "decision", "Internal API is gRPC",
                     "--body", "Protobuf definitions live in proto/.")
    weak = _record(project_dir, "convention", "Public API errors are problem+json")
    done = run_cli("preview", "which protocol does the internal api use, grpc?", "--json",
                   cwd=project_dir)
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    outcome = {c["id"]: c["outcome"] for c in report["candidates"]}
    assert outcome == {strong: "inject", weak: "weak"}
    assert report["injected"] == [strong] and report["pointers"] == []
    assert [c["probability"] for c in report["candidates"]] == sorted(
        (c["probability"] for c in report["candidates"]), reverse=True)
    assert report["semantic_check"] == "not ready (run 'agentctx consolidate')"
    assert shown.names(report["injected_text"], strong) and report["tokens"] > 0
    assert report["candidates"][0]["gone"] == ["proto/"]  # the project has no proto/ folder
    assert "(proto/ no longer exists)" in report["injected_text"]
    text = run_cli("preview", "which protocol does the internal api use, grpc?", "--text",
                   cwd=project_dir).stdout
    assert "would inject 1 record in full and 0 pointers" in text
    assert "matched: internal, api, grpc" in text and "<agentctx-context" in text
    assert "too unlikely to answer the prompt" in text
    # Nothing was injected for real: no access counted, no receipt.
    record = json.loads(run_cli("show", strong, "--json", cwd=project_dir).stdout)
    assert record["access_count"] == 0
    status = json.loads(run_cli("status", "--json", cwd=project_dir).stdout)
    assert status["injections"]["injections"] == 0 and status["injections"]["sessions"] == 0


def test_preview_of_an_opted_out_prompt_and_a_missing_project(project_dir: Path) -> None:
    _record(project_dir, "decision", "Internal API is gRPC")
    done = run_cli("preview", "#noctx internal api grpc", cwd=project_dir)
    assert done.returncode == 0 and done.stdout.strip() == \
        "nothing would be injected: the prompt starts with #noctx"
    unknown = run_cli("preview", "grpc", "--session", "nope", cwd=project_dir)
    assert unknown.returncode == 1 and "no session 'nope'" in unknown.stderr
    empty = run_cli("preview", "   ", cwd=project_dir)
    assert empty.returncode == 1 and empty.stderr.startswith("agentctx: the prompt is empty")
    missing = run_cli("preview", "grpc", "--project", "nope", cwd=project_dir)
    assert missing.returncode == 1 and missing.stdout == ""
    assert missing.stderr.startswith("agentctx: ") and "Traceback" not in missing.stderr
