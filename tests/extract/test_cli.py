"""End to end: the real ``agentctx extract`` process against the loopback Messages API."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from agentctx.core import config
from agentctx.store import Store, ledger, records, sessions
from agentctx.store import projects as proj
from agentctx.store.selection import Selection
from tests.extract.builders import TranscriptWriter, extraction
from tests.support.messages_standin import MessagesStandIn, StandInRequest, json_reply

RESULT = extraction(
    decisions=[{"what": "Use gRPC instead of REST for the internal API",
                "rationale": "Streaming.", "supersedes": None, "confidence": "explicit"}],
    preferences=[{"category": "process", "rule": "Write notes for every decision",
                  "confidence": "explicit", "scope": "global"}],
    active_work={"current_task": "Writing the notes", "blockers": [], "next_steps": [],
                 "open_questions": []})


def _reply(request: StandInRequest) -> Any:
    return json_reply(RESULT, usage={"input_tokens": 800, "output_tokens": 300,
                                     "cache_creation_input_tokens": 0,
                                     "cache_read_input_tokens": 6000})


def _agentctx(args: list[str], *, cwd: Path | None = None, input_text: str | None = None,
              **env: str) -> subprocess.CompletedProcess[str]:
    environ = {k: v for k, v in os.environ.items() if not k.startswith("ANTHROPIC_")}
    environ.update(env)
    return subprocess.run([sys.executable, "-m", "agentctx", *args], env=environ, cwd=cwd,
                          input=input_text, capture_output=True, text=True, timeout=120)


def _log() -> str:
    path = config.home() / "logs" / "extract.log"
    return path.read_text(encoding="utf-8") if path.exists() else ""


@pytest.fixture
def transcript(tmp_path: Path, project_dir: Path) -> TranscriptWriter:
    writer = TranscriptWriter(tmp_path / "session.jsonl", cwd=str(project_dir))
    writer.user("We decided to use gRPC instead of REST for the internal API. Write notes.")
    writer.assistant("Writing notes.", tools=[("Write", {"file_path": "notes.txt"})],
                     results=["ok"])
    writer.save()
    return writer


def test_the_process_extracts_through_anthropic_base_url(transcript: TranscriptWriter,
                                                         project_dir: Path) -> None:
    with MessagesStandIn(_reply) as standin:
        done = _agentctx(["extract", "--session-id", transcript.session_id, "--transcript",
                          str(transcript.path)], ANTHROPIC_BASE_URL=standin.base_url,
                         ANTHROPIC_API_KEY="sk-test-not-real")
        assert done.returncode == 0, done.stderr
        assert done.stdout == ""  # a detached child reports in extract.log only
        (request,) = standin.message_requests()
    assert request.body["model"] == "claude-haiku-4-5"
    assert request.body["system"][0]["cache_control"] == {"type": "ephemeral", "ttl": "1h"}
    assert "We decided to use gRPC" in request.latest_prompt()
    assert request.body["output_config"]["format"]["type"] == "json_schema"
    with Store.open() as db:
        pid = proj.resolve(db, str(project_dir)).project.id
        assert {r.type for r in records.list_records(db, Selection(project_id=pid))} == {"decision",
                                                                              "handover"}
        (preference,) = records.list_records(db, Selection(project_id="global"))
        assert (preference.title, preference.confidence) == ("Write notes for every decision",
                                                             "explicit")
        totals = ledger.totals(db, session_id=transcript.session_id)
        assert totals.calls == 1 and totals.cache_read_tokens == 6000
        assert totals.usd == pytest.approx((800 * 1 + 300 * 5 + 6000 * 0.1) / 1e6)
    assert "extracted: 1 new decision, 1 new preference, 1 handover" in _log()


def test_without_a_key_one_log_line_and_exit_0(transcript: TranscriptWriter) -> None:
    with MessagesStandIn(_reply) as standin:
        done = _agentctx(["extract", "--session-id", transcript.session_id, "--transcript",
                          str(transcript.path)], ANTHROPIC_BASE_URL=standin.base_url)
        assert standin.requests == []
    assert (done.returncode, done.stdout, done.stderr) == (0, "", "")
    lines = _log().splitlines()
    assert len(lines) == 1 and "no ANTHROPIC_API_KEY" in lines[0]


def test_dry_run_prints_what_would_be_recorded(transcript: TranscriptWriter) -> None:
    with MessagesStandIn(_reply) as standin:
        done = _agentctx(["extract", "--transcript", str(transcript.path), "--dry-run"],
                         ANTHROPIC_BASE_URL=standin.base_url, ANTHROPIC_API_KEY="sk-test")
        as_json = _agentctx(["extract", "--transcript", str(transcript.path), "--dry-run",
                             "--json"], ANTHROPIC_BASE_URL=standin.base_url,
                            ANTHROPIC_API_KEY="sk-test")
    assert done.returncode == 0, done.stderr
    assert "would record:" in done.stdout
    assert "+ decision   Use gRPC instead of REST for the internal API" in done.stdout
    assert "+ preference Write notes for every decision [global]" in done.stdout
    assert "nothing written" in done.stdout
    report = json.loads(as_json.stdout)
    assert report["status"] == "planned" and report["written"] == []
    assert [a["action"] for a in report["actions"]] == ["add", "add", "handover"]
    assert not config.db_path().exists()


def test_usage_errors_are_one_line(tmp_path: Path) -> None:
    done = _agentctx(["extract"])
    assert done.returncode != 0 and "give --session-id" in done.stderr
    missing = _agentctx(["extract", "--transcript", str(tmp_path / "nope.jsonl")])
    assert missing.returncode != 0 and "no transcript at" in missing.stderr
    for result in (done, missing):
        assert "Traceback" not in result.stderr and len(result.stderr.splitlines()) == 1


def test_the_time_limit_bounds_a_hanging_api(transcript: TranscriptWriter) -> None:
    def slow(request: StandInRequest) -> Any:
        reply = _reply(request)
        reply.delay_s = 30
        return reply

    with MessagesStandIn(slow) as standin:
        started = time.monotonic()
        done = _agentctx(["extract", "--transcript", str(transcript.path)],
                         ANTHROPIC_BASE_URL=standin.base_url, ANTHROPIC_API_KEY="sk-test",
                         AGENTCTX_LLM_TIME_LIMIT_S="5")
        elapsed = time.monotonic() - started
    assert elapsed < 20
    assert done.returncode == 1 and "Traceback" not in done.stderr
    assert "extraction failed" in done.stderr
    with Store.open() as db:
        assert sessions.extract_offset(db, transcript.session_id) == 0


def _claude_home(base: Path, project_dir: Path, other: Path) -> dict[str, TranscriptWriter]:
    """Old sessions: three of the project (one in a worktree folder since deleted), one not."""
    folder = base / "projects" / str(project_dir).replace("/", "-")
    made = {}
    for name, day, cwd in (("newer", 20, project_dir), ("older", 3, project_dir / "src"),
                           ("foreign", 10, other), ("gone", 12, project_dir / "gone-tree")):
        writer = TranscriptWriter(
            (folder if cwd != other else base / "projects" / "-other") / f"{name}.jsonl",
            cwd=str(cwd), start=datetime(2026, 1, day, 10, 0, tzinfo=UTC))
        writer.user(f"In the {name} session we decided something about {name} things.")
        writer.assistant(f"Done with {name}.")
        writer.save()
        made[name] = writer
    sub = folder / made["newer"].session_id / "subagents"
    sub.mkdir(parents=True)
    (sub / "agent-1.jsonl").write_text(made["newer"].text(), encoding="utf-8")
    return made


def _titles_by_prompt(request: StandInRequest) -> Any:
    prompt_text = request.latest_prompt()
    which = next(n for n in ("newer", "older", "foreign", "gone")
                 if f"In the {n} session" in prompt_text)
    return json_reply(extraction(decisions=[{
        "what": f"Decision of the {which} session", "rationale": "r", "supersedes": None,
        "confidence": "explicit"}], active_work={"current_task": f"{which} work",
                                                 "blockers": [], "next_steps": [],
                                                 "open_questions": []}))


def test_backfill_extracts_oldest_first_with_real_dates(project_dir: Path,
                                                        tmp_path: Path) -> None:
    made = _claude_home(Path.home() / ".claude", project_dir, tmp_path / "other")
    with MessagesStandIn(_titles_by_prompt) as standin:
        done = _agentctx(["extract", "--backfill", "--yes"], cwd=project_dir,
                         ANTHROPIC_BASE_URL=standin.base_url, ANTHROPIC_API_KEY="sk-test",
                         HOME=str(Path.home()))
        prompts = [r.latest_prompt() for r in standin.message_requests()]
    assert done.returncode == 0, done.stderr
    assert "3 transcript(s) of app" in done.stdout
    assert "tokens" in done.stdout and "estimated $" in done.stdout
    assert "[1/3] 2026-01-03" in done.stdout and "[3/3] 2026-01-20" in done.stdout
    # oldest first; the foreign session and the subagent file are not extracted
    assert [next(n for n in ("older", "gone", "newer") if n in p) for p in prompts] == [
        "older", "gone", "newer"]
    with Store.open() as db:
        pid = proj.resolve(db, str(project_dir)).project.id
        decisions = {r.title: r for r in records.list_records(db,
                                                              Selection(project_id=pid,
                                                                        types=("decision",)))}
        assert set(decisions) == {f"Decision of the {n} session"
                                  for n in ("older", "gone", "newer")}
        assert decisions["Decision of the older session"].valid_from.startswith("2026-01-03")
        assert decisions["Decision of the newer session"].valid_from.startswith("2026-01-20")
        handovers = records.list_records(db,
                                         Selection(project_id=pid, types=("handover",),
                                                   state="all"))
        current = [h for h in handovers if h.current]
        assert len(handovers) == 3 and [h.title for h in current] == [
            "Handover: newer work", "Handover: gone work"]  # two worktrees, one each
        assert [item.project.root for item in proj.list_all(db)] == [str(project_dir)]
        started = sessions.get(db, made["older"].session_id)
        assert started is not None and started.started_at.startswith("2026-01-03")
    again = _agentctx(["extract", "--backfill", "--yes"], cwd=project_dir,
                      ANTHROPIC_API_KEY="sk-test", HOME=str(Path.home()))
    assert again.returncode == 0 and "nothing to backfill" in again.stdout


def test_backfill_asks_first_and_honours_claude_config_dir(project_dir: Path,
                                                           tmp_path: Path) -> None:
    custom = tmp_path / "claude-config"
    _claude_home(custom, project_dir, tmp_path / "other")
    with MessagesStandIn(_titles_by_prompt) as standin:
        env = {"ANTHROPIC_BASE_URL": standin.base_url, "ANTHROPIC_API_KEY": "sk-test",
               "HOME": str(Path.home()), "CLAUDE_CONFIG_DIR": str(custom)}
        declined = _agentctx(["extract", "--backfill"], cwd=project_dir, input_text="n\n", **env)
        assert declined.returncode == 0 and "nothing extracted" in declined.stdout
        assert "Extract 3 transcript(s) for about $" in declined.stdout
        assert standin.requests == []
        no_answer = _agentctx(["extract", "--backfill"], cwd=project_dir, input_text="", **env)
        assert no_answer.returncode == 1 and "add --yes" in no_answer.stderr
        since = _agentctx(["extract", "--backfill", "--since", "2026-01-15"], cwd=project_dir,
                          input_text="y\n", **env)
        assert since.returncode == 0, since.stderr
        assert "1 transcript(s) of app" in since.stdout
        assert len(standin.message_requests()) == 1
    bad = _agentctx(["extract", "--backfill", "--since", "last week"], cwd=project_dir, **env)
    assert bad.returncode == 1 and "not an ISO date" in bad.stderr
