"""``kill -9`` during a consolidation run: the store stays consistent, the next run ends it."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from agentctx.core.ids import to_iso
from agentctx.store import Store, digests
from agentctx.store import records as rec
from agentctx.store.models import Draft

RECORDS = 1200
CHAINS = 700
WORDS = ["sqlite", "redis", "pytest", "docker", "react", "oauth", "python", "hook"]


def _fill(db: Store, project_id: str) -> None:
    old = datetime.now(UTC) - timedelta(days=400)
    with db.write():
        for i in range(RECORDS):
            rec.add(db, Draft(type=("decision", "discovery", "bugfix")[i % 3],
                              title=f"Note {i} on {WORDS[i % 8]} and {WORDS[(i * 3) % 8]}",
                              body=f"Details {i}: {WORDS[(i * 5) % 8]} matters."),
                    project_id=project_id)
        for i in range(CHAINS):
            first = rec.add(db, Draft(type="decision", title=f"Old choice {i} {WORDS[i % 8]}",
                                      valid_from=to_iso(old)), project_id=project_id)
            rec.supersede(db, first.id, Draft(type="", title=f"Newer choice {i}",
                                              valid_from=to_iso(old + timedelta(days=10))),
                          "changed our mind", actor="cli")


def _start(args: list[str], env: dict[str, str], cwd: Path) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, "-m", "agentctx", "consolidate", *args],
                            cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, bufsize=1)


def _kill_when(process: subprocess.Popen[str], marker: str) -> str:
    """Read the run's progress until a line contains ``marker``, then SIGKILL it."""
    assert process.stderr is not None
    deadline = time.monotonic() + 60
    seen = ""
    while time.monotonic() < deadline:
        line = process.stderr.readline()
        if not line:
            break
        seen += line
        if marker in line:
            os.kill(process.pid, signal.SIGKILL)
            process.wait(timeout=30)
            return seen
    process.kill()
    pytest.fail(f"the run never printed {marker!r}; output so far:\n{seen}")


def _check_consistent(db_path: Path) -> dict[str, int]:
    with Store.open(db_path) as db:
        assert db.scalar("PRAGMA integrity_check") == "ok"
        db.execute("INSERT INTO records_fts(records_fts) VALUES ('integrity-check')")
        live = db.scalar("SELECT count(*) FROM records")
        cold = db.scalar("SELECT count(*) FROM records_archive")
        assert live + cold == RECORDS + 2 * CHAINS
        assert db.scalar("SELECT count(*) FROM records r JOIN records_archive a ON a.id = r.id") \
            == 0
        # A record marked embedded has its vector, and every vector belongs to a live record.
        assert db.scalar("SELECT count(*) FROM records WHERE pending_embedding = 0 AND pk NOT IN "
                         "(SELECT record_pk FROM embeddings)") == 0
        assert db.scalar("SELECT count(*) FROM embeddings WHERE record_pk NOT IN "
                         "(SELECT pk FROM records)") == 0
        # Every supersession is intact across both tables.
        assert db.scalar("SELECT count(*) FROM edges WHERE rel_type = 'supersedes'") == CHAINS
        assert db.scalar("SELECT count(*) FROM records WHERE superseded_at IS NULL") == \
            RECORDS + CHAINS
        return {"pending": int(db.scalar("SELECT count(*) FROM records WHERE pending_embedding "
                                         "= 1 AND superseded_at IS NULL")),
                "archived": int(cold)}


@pytest.mark.parametrize(("args", "marker"), [
    (["--batch-size", "5"], "embedded "),
    (["--no-embeddings", "--batch-size", "10"], "archived "),
])
def test_a_killed_run_leaves_the_store_consistent_and_the_next_run_finishes(
        args: list[str], marker: str, project_dir: Path, tiny_model_dir: Path,
        isolated_home: Path) -> None:
    from agentctx.store import projects as proj

    db_path = isolated_home / "agentctx.db"
    with Store.open(db_path) as db:
        project_id = proj.resolve(db, str(project_dir)).project.id
        _fill(db, project_id)
    env = {**os.environ, "AGENTCTX_EMBED_MODEL": str(tiny_model_dir)}
    _kill_when(_start([*args, "--time-limit", "600"], env, project_dir), marker)
    interrupted = _check_consistent(db_path)
    if marker.startswith("embedded"):
        assert 0 < interrupted["pending"] < RECORDS + CHAINS
    else:
        assert 0 < interrupted["archived"] < CHAINS
    finished = subprocess.run([sys.executable, "-m", "agentctx", "consolidate", *args],
                              cwd=project_dir, env=env, capture_output=True, text=True,
                              timeout=300)
    assert finished.returncode == 0, finished.stderr
    assert "stopped early" not in finished.stdout
    done = _check_consistent(db_path)
    assert done["archived"] == CHAINS
    assert done["pending"] == (0 if marker.startswith("embedded") else RECORDS + CHAINS)
    with Store.open(db_path) as db:
        assert digests.load_fresh(db, project_id) is not None


@pytest.mark.parametrize("kills", [pytest.param(4, id="4-kills"),
                                   pytest.param(30, id="30-kills", marks=[
                                       pytest.mark.slow, pytest.mark.timeout(3600)])])
def test_repeated_kills_at_random_moments_never_corrupt(kills: int, project_dir: Path,
                                                        tiny_model_dir: Path,
                                                        isolated_home: Path) -> None:
    from agentctx.store import projects as proj

    db_path = isolated_home / "agentctx.db"
    with Store.open(db_path) as db:
        _fill(db, proj.resolve(db, str(project_dir)).project.id)
    env = {**os.environ, "AGENTCTX_EMBED_MODEL": str(tiny_model_dir)}
    draw = random.Random(kills)
    for _ in range(kills):
        process = _start(["--batch-size", "3", "--quiet"], env, project_dir)
        time.sleep(draw.uniform(0.3, 1.8))
        process.send_signal(signal.SIGKILL)
        process.communicate(timeout=30)
        _check_consistent(db_path)
    finished = subprocess.run([sys.executable, "-m", "agentctx", "consolidate"], cwd=project_dir,
                              env=env, capture_output=True, text=True, timeout=300)
    assert finished.returncode == 0, finished.stderr
    assert _check_consistent(db_path) == {"pending": 0, "archived": CHAINS}
