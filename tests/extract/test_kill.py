"""``kill -9`` at random moments of an extraction run: nothing half-applied, the next run redoes it.

The real ``agentctx extract`` process extracts a transcript against a loopback stand-in for the
Messages API that answers (after a short delay, so kills land during the call too) with new
decisions, supersessions of existing ones, a convention linked to files, a gotcha and a handover.
Each run is killed after a random delay. After every kill the store passes SQLite's and FTS5's
integrity checks, the extraction is applied entirely (and the transcript offset advanced) or not
at all, and no supersession is half-made. A last run, not killed, leaves every record exactly once.
"""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from agentctx.store import Store, projects, records, sessions
from agentctx.store.models import Draft
from tests.extract.builders import TranscriptWriter, conversation, extraction
from tests.support.messages_standin import MessagesStandIn, StandInRequest, json_reply

OLD = ["Internal API is REST", "Jobs run on cron", "Logs go to syslog"]
NEW = ["Internal API is gRPC", "Jobs run on the queue", "Logs go to Loki", "Use WAL mode",
       "Pin the Python version"]
SIZES = [pytest.param(6, id="6-kills"), pytest.param(40, id="40-kills", marks=pytest.mark.slow)]


def _reply_for(old_ids: list[str]) -> object:
    def reply(request: StandInRequest) -> object:
        return json_reply(extraction(
            decisions=[{"what": title, "rationale": "measured it", "confidence": "explicit",
                        "supersedes": old_ids[n] if n < len(old_ids) else None}
                       for n, title in enumerate(NEW)],
            conventions=[{"scope": "file", "convention": "Handlers stay thin",
                          "applies_to": ["src/api.py", "src/jobs.py"], "supersedes": None,
                          "confidence": "explicit"}],
            gotchas=[{"pattern": "The queue drops jobs on restart",
                      "why_it_matters": "Drain it first."}],
            active_work={"current_task": "Moving jobs to the queue", "blockers": [],
                         "next_steps": ["Drain cron"], "open_questions": []}), delay_s=0.25)
    return reply


def _state(db_path: Path, pid: str, session_id: str, old_ids: list[str]) -> tuple[bool, int]:
    """Check the invariants; returns (extraction applied, transcript offset)."""
    with Store.open(db_path) as db:
        assert db.scalar("PRAGMA integrity_check") == "ok"
        db.execute("INSERT INTO records_fts(records_fts, rank) VALUES ('integrity-check', 1)")
        titles = [r.title for r in records.list_records(db, project_id=pid,
                                                        include_superseded=True)]
        present = [t for t in [*NEW, "Handlers stay thin"] if t in titles]
        assert all(titles.count(t) <= 1 for t in present), titles
        applied = len(present) == len(NEW) + 1
        assert applied or present == [], present  # all of it or none of it
        offset = sessions.extract_offset(db, session_id)
        assert (offset > 0) == applied
        for old_id in old_ids:
            old = records.get(db, old_id)
            if applied:
                assert not old.current and old.superseded_by is not None
                new = records.get(db, old.superseded_by)
                assert new.current and new.title in NEW
                assert records.supersession_note(db, new.id, old.id) == "measured it"
            else:
                assert old.current and old.superseded_by is None
        assert db.scalar("SELECT count(*) FROM edges e WHERE rel_type = 'supersedes' AND NOT "
                         "EXISTS (SELECT 1 FROM records r WHERE r.id = e.to_id AND "
                         "r.superseded_by = e.from_id)") == 0
        return applied, offset


@pytest.mark.parametrize("kills", SIZES)
def test_a_killed_extraction_is_all_or_nothing_and_the_next_run_finishes(
        kills: int, project_dir: Path, tmp_path: Path, isolated_home: Path) -> None:
    db_path = isolated_home / "agentctx.db"
    with Store.open(db_path) as db:
        pid = projects.resolve(db, str(project_dir)).project.id
        old_ids = [records.add(db, Draft(type="decision", title=title, body="Agreed.",
                                         valid_from="2026-01-01"), project_id=pid).id
                   for title in OLD]
    writer = TranscriptWriter(tmp_path / "session.jsonl", cwd=str(project_dir))
    conversation(writer, 12)
    transcript = writer.save()
    draw = random.Random(13)
    outcomes: dict[str, int] = {"applied": 0, "not applied": 0}
    with MessagesStandIn(_reply_for(old_ids)) as standin:
        env = {**os.environ, "ANTHROPIC_API_KEY": "test-key",
               "ANTHROPIC_BASE_URL": standin.base_url, "AGENTCTX_EMBEDDINGS": "off"}
        argv = [sys.executable, "-P", "-m", "agentctx", "extract", "--session-id",
                writer.session_id, "--transcript", str(transcript)]
        # How long a whole run takes here (a dry run makes the same call and writes nothing):
        # the kills are spread over that time.
        started = time.monotonic()
        subprocess.run([*argv, "--dry-run"], cwd=project_dir, env=env, capture_output=True,
                       timeout=300, check=True)
        span = (time.monotonic() - started) * 1.1
        for _ in range(kills):
            process = subprocess.Popen(argv, cwd=project_dir, env=env,
                                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            time.sleep(draw.uniform(0.05, span))
            process.send_signal(signal.SIGKILL)
            process.wait(timeout=30)
            applied, _ = _state(db_path, pid, writer.session_id, old_ids)
            outcomes["applied" if applied else "not applied"] += 1
        finished = subprocess.run(argv, cwd=project_dir, env=env, capture_output=True,
                                  text=True, timeout=300, check=False)
    assert finished.returncode == 0, finished.stdout + finished.stderr
    applied, offset = _state(db_path, pid, writer.session_id, old_ids)
    assert applied and offset == transcript.stat().st_size
    print(f"kills: {outcomes}")
    assert outcomes["not applied"] > 0  # at least one kill landed before the commit
