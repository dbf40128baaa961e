"""``kill -9`` at random moments of an extraction run: nothing half-applied, the next run redoes it.

The real ``agentctx extract`` process extracts a transcript against a loopback stand-in for the
Messages API that answers (after a short delay, so kills land during the call too) with new
decisions — the first superseding the one the previous round decided —, a convention linked to
files, a gotcha and a handover. Each run is killed after a random delay spread over the time a
whole run takes. When a round's work is in, the session goes on (new turns in the transcript, a new
answer), so every kill meets real work. After every kill the store passes SQLite's and FTS5's
integrity checks, the round is applied entirely (and the transcript offset advanced) or not at
all, and no supersession is half-made. A last run, not killed, finishes the round.
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
from tests.support.messages_standin import MessagesStandIn, Reply, StandInRequest, json_reply

SIZES = [pytest.param(6, id="6-kills"), pytest.param(40, id="40-kills",
                                                 marks=[pytest.mark.slow,
                                                        pytest.mark.timeout(3600)])]


def _titles(round_: int) -> list[str]:
    return [f"Internal API is gRPC, take {round_}", f"Jobs run on the queue, take {round_}",
            f"Handlers stay thin, take {round_}"]


class Session:
    """The session being extracted: its rounds, and the answer the stand-in gives for each."""

    def __init__(self, writer: TranscriptWriter, first_old: str) -> None:
        self.writer = writer
        self.round = 0
        self.superseded = first_old  # what this round's first decision replaces
        self.start = 0  # the transcript offset before this round

    def reply(self, request: StandInRequest) -> Reply:
        decided, queued, convention = _titles(self.round)
        return json_reply(extraction(
            decisions=[{"what": decided, "rationale": "measured it", "confidence": "explicit",
                        "supersedes": self.superseded},
                       {"what": queued, "rationale": "cron drifted", "confidence": "explicit",
                        "supersedes": None}],
            conventions=[{"scope": "file", "convention": convention,
                          "applies_to": ["src/api.py", "src/jobs.py"], "supersedes": None,
                          "confidence": "explicit"}],
            gotchas=[{"pattern": f"The queue drops jobs on restart ({self.round})",
                      "why_it_matters": "Drain it first."}],
            active_work={"current_task": f"Moving jobs, round {self.round}", "blockers": [],
                         "next_steps": ["Drain cron"], "open_questions": []}), delay_s=0.25)

    def next_round(self, db_path: Path, pid: str) -> None:
        with Store.open(db_path) as db:
            [current] = [r for r in records.list_records(db, project_id=pid, types=("decision",))
                         if r.title == _titles(self.round)[0]]
        self.superseded = current.id
        self.round += 1
        self.start = self.writer.path.stat().st_size
        count = len(self.writer.lines)
        conversation(self.writer, 3)
        self.writer.append_saved(count)


def _applied(db_path: Path, pid: str, session: Session) -> bool:
    """Check the invariants; whether the session's current round is in the store."""
    with Store.open(db_path) as db:
        assert db.scalar("PRAGMA integrity_check") == "ok"
        db.execute("INSERT INTO records_fts(records_fts, rank) VALUES ('integrity-check', 1)")
        titles = [r.title for r in records.list_records(db, project_id=pid,
                                                        include_superseded=True)]
        present = [t for t in _titles(session.round) if t in titles]
        assert all(titles.count(t) == 1 for t in present), titles
        applied = len(present) == len(_titles(session.round))
        assert applied or present == [], present  # all of it or none of it
        offset = sessions.extract_offset(db, session.writer.session_id)
        assert offset == (session.writer.path.stat().st_size if applied else session.start)
        old = records.get(db, session.superseded)
        if applied:
            new = records.get(db, old.superseded_by or "")
            assert not old.current and new.current and new.title == _titles(session.round)[0]
            assert records.supersession_note(db, new.id, old.id) == "measured it"
        else:
            assert old.current and old.superseded_by is None
        assert db.scalar("SELECT count(*) FROM edges e WHERE rel_type = 'supersedes' AND NOT "
                         "EXISTS (SELECT 1 FROM records r WHERE r.id = e.to_id AND "
                         "r.superseded_by = e.from_id)") == 0
        assert db.scalar("SELECT count(*) FROM records WHERE type = 'decision' AND "
                         "superseded_at IS NULL AND title LIKE 'Internal API%'") == 1
        return applied


@pytest.mark.parametrize("kills", SIZES)
def test_a_killed_extraction_is_all_or_nothing_and_the_next_run_finishes(
        kills: int, project_dir: Path, tmp_path: Path, isolated_home: Path) -> None:
    db_path = isolated_home / "agentctx.db"
    with Store.open(db_path) as db:
        pid = projects.resolve(db, str(project_dir)).project.id
        first_old = records.add(db, Draft(type="decision", title="Internal API is REST",
                                          body="Agreed.", valid_from="2026-01-01"),
                                project_id=pid).id
    writer = TranscriptWriter(tmp_path / "session.jsonl", cwd=str(project_dir))
    conversation(writer, 12)
    writer.save()
    session = Session(writer, first_old)
    draw = random.Random(kills)
    outcomes = {"applied": 0, "not applied": 0}
    with MessagesStandIn(session.reply) as standin:
        env = {**os.environ, "ANTHROPIC_API_KEY": "test-key",
               "ANTHROPIC_BASE_URL": standin.base_url, "AGENTCTX_EMBEDDINGS": "off"}
        argv = [sys.executable, "-P", "-m", "agentctx", "extract", "--session-id",
                writer.session_id, "--transcript", str(writer.path)]
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
            applied = _applied(db_path, pid, session)
            outcomes["applied" if applied else "not applied"] += 1
            if applied:
                session.next_round(db_path, pid)
        finished = subprocess.run(argv, cwd=project_dir, env=env, capture_output=True,
                                  text=True, timeout=300, check=False)
    assert finished.returncode == 0, finished.stdout + finished.stderr
    assert _applied(db_path, pid, session), (outcomes, finished.stdout + finished.stderr)
    print(f"extraction kills: {outcomes}")
    assert outcomes["not applied"] > 0  # some kills landed before the commit
