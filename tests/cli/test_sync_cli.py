"""``agentctx sync``: proposal, --check, --json, --apply, dismissals (in process; a real process
where a terminal is needed)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from agentctx.store import Store, digests
from agentctx.store import projects as proj
from tests.conftest import run_cli

CLAUDE_MD = """# shop

Storefront backend 🛍️ — see @docs/testing.md.

## Stack

- The HTTP API is FastAPI with async handlers.
- Background jobs run on Celery workers with Redis as the broker.
"""
TESTING_MD = "# Testing\n\nRun `pytest -q` from the root; fixtures in `tests/conftest.py`.\n"


def record(cwd: Path, *args: str) -> str:
    done = run_cli("record", *args, "--json", cwd=cwd)
    assert done.returncode == 0, done.stderr
    return str(json.loads(done.stdout)["id"])


@pytest.fixture
def shop(project_dir: Path) -> dict[str, str]:
    """A project whose CLAUDE.md misses one decision and contradicts another."""
    (project_dir / "CLAUDE.md").write_text(CLAUDE_MD, encoding="utf-8")
    (project_dir / "docs").mkdir()
    (project_dir / "docs" / "testing.md").write_text(TESTING_MD, encoding="utf-8")
    ids = {"fastapi": record(project_dir, "decision", "Serve the HTTP API with FastAPI",
                             "--body", "async handlers"),
           "pytest": record(project_dir, "convention", "Run the tests with pytest",
                            "--body", "pytest -q from the repository root"),
           "celery": record(project_dir, "decision", "Background jobs run on Celery",
                            "--body", "Celery workers, Redis broker"),
           "uuid": record(project_dir, "decision", "Public ids are UUIDv7 strings",
                          "--body", "integer keys stay internal")}
    done = run_cli("supersede", ids["celery"], "--title", "Background jobs run on Dramatiq",
                   "--body", "Dramatiq actors with the Redis broker", "--why", "lighter",
                   cwd=project_dir)
    assert done.returncode == 0, done.stderr
    return ids


def files(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*"))
            if p.is_file() and ".git" not in p.parts}


def test_sync_prints_candidates_and_the_diff_and_writes_nothing(
        project_dir: Path, shop: dict[str, str]) -> None:
    before = files(project_dir)
    done = run_cli("sync", cwd=project_dir)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].startswith("2 drift candidates in CLAUDE.md, docs/testing.md")
    kind, short = lines[1].split()[:2]
    assert kind == "missing" and shop["uuid"].startswith(short) and len(short) >= 8
    assert lines[2].split()[0] == "contradicted" and "Background jobs run on Dramatiq" in lines[2]
    assert "--- a/CLAUDE.md" in done.stdout and "+- Public ids are UUIDv7 strings" in done.stdout
    assert "~~Background jobs run on Celery workers with Redis as the broker.~~ →" in done.stdout
    assert files(project_dir) == before
    with Store.open() as db:  # the scan stored its scores and made the digest stale
        project = proj.resolve(db, str(project_dir)).project
        assert digests.load_fresh(db, project.id) is None
        flagged = db.scalar("SELECT count(*) FROM records WHERE claudemd_drift_score > 0.5")
        assert flagged == 2


def test_check_fails_with_candidates_and_passes_once_applied(
        project_dir: Path, shop: dict[str, str]) -> None:
    assert run_cli("sync", "--check", cwd=project_dir).returncode == 1
    applied = run_cli("sync", "--apply", "--yes", cwd=project_dir)
    assert applied.returncode == 0, applied.stderr
    assert "Wrote CLAUDE.md (backup: " in applied.stdout
    after = files(project_dir)
    check = run_cli("sync", "--check", cwd=project_dir)
    assert check.returncode == 0 and check.stdout.startswith("In sync: CLAUDE.md")
    again = run_cli("sync", "--apply", "--yes", cwd=project_dir)
    assert again.returncode == 0 and "Nothing to apply." in again.stdout
    assert files(project_dir) == after
    claude = after["CLAUDE.md"].decode()
    assert claude.count("<!-- agentctx:begin -->") == 1 and shop["uuid"] in claude


def test_apply_without_a_terminal_needs_yes_and_writes_nothing(
        project_dir: Path, shop: dict[str, str]) -> None:
    before = files(project_dir)
    done = run_cli("sync", "--apply", cwd=project_dir, stdin="")
    assert done.returncode == 1
    assert done.stderr == ("agentctx: no terminal to confirm on: review the diff above, then run "
                           "'agentctx sync --apply --yes' to write it\n")
    assert "--- a/CLAUDE.md" in done.stdout  # the diff was shown first
    assert files(project_dir) == before


@pytest.mark.parametrize(("answer", "written"), [("n", False), ("y", True)])
def test_apply_asks_on_a_terminal(project_dir: Path, shop: dict[str, str], answer: str,
                                  written: bool) -> None:
    before = files(project_dir)
    leader, follower = os.openpty()
    try:
        proc = subprocess.Popen([sys.executable, "-m", "agentctx", "sync", "--apply"],
                                cwd=project_dir, stdin=follower, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True)
        os.write(leader, f"{answer}\n".encode())
        out, err = proc.communicate(timeout=120)
    finally:
        os.close(leader)
        os.close(follower)
    assert proc.returncode == 0, err
    assert "Apply these changes to CLAUDE.md? [y/N]" in out
    assert (files(project_dir) != before) is written
    assert ("Nothing written." in out) is not written


def test_json_output(project_dir: Path, shop: dict[str, str]) -> None:
    done = run_cli("sync", "--json", cwd=project_dir)
    assert done.returncode == 0, done.stderr
    document = json.loads(done.stdout)
    assert [(c["id"], c["class"]) for c in document["candidates"]] == [
        (shop["uuid"], "missing"),
        (document["candidates"][1]["id"], "contradicted")]
    assert all({"id", "class", "score", "file", "line", "stated"} <= set(c)
               for c in document["candidates"])
    assert document["candidates"][0]["stated"] is None
    assert document["candidates"][1]["stated"] == shop["celery"]
    assert document["diff"].startswith("--- a/CLAUDE.md\n")
    assert document["files"] == ["CLAUDE.md", "docs/testing.md"]
    refused = run_cli("sync", "--json", "--apply", cwd=project_dir)
    assert refused.returncode == 1 and "needs --yes" in refused.stderr
    applied = json.loads(run_cli("sync", "--json", "--apply", "--yes", cwd=project_dir).stdout)
    assert applied["applied"]["written"] == ["CLAUDE.md"]
    assert applied["applied"]["remaining"] == 0


def test_dismiss_and_undismiss(project_dir: Path, shop: dict[str, str]) -> None:
    done = run_cli("sync", "--dismiss", shop["uuid"][:10], cwd=project_dir)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith(f"dismissed {shop['uuid']}: Public ids are UUIDv7 strings")
    listing = run_cli("sync", "--json", cwd=project_dir)
    assert shop["uuid"] not in [c["id"] for c in json.loads(listing.stdout)["candidates"]]
    assert "dismissed (already)" in run_cli("sync", "--dismiss", shop["uuid"],
                                            cwd=project_dir).stdout
    undone = run_cli("sync", "--undismiss", shop["uuid"], "--json", cwd=project_dir)
    assert json.loads(undone.stdout)["dismissals"][0]["dismissed"] is False
    listing = run_cli("sync", "--json", cwd=project_dir)
    assert shop["uuid"] in [c["id"] for c in json.loads(listing.stdout)["candidates"]]


@pytest.mark.parametrize("args", [("--dismiss", "01ZZZZZZZZZZ"), ("--dismiss", "x", "--apply"),
                                  ("--check", "--apply")])
def test_bad_requests_get_one_line_and_change_nothing(project_dir: Path, shop: dict[str, str],
                                                      args: tuple[str, ...]) -> None:
    before = files(project_dir)
    done = run_cli("sync", *args, cwd=project_dir)
    assert done.returncode == 1
    assert done.stderr.startswith("agentctx: ") and done.stderr.count("\n") == 1
    assert "Traceback" not in done.stderr
    assert files(project_dir) == before


def test_agents_md_stale_text_keeps_check_at_1_until_struck(project_dir: Path) -> None:
    """No CLAUDE.md: AGENTS.md is the memory file. It states the new decision and still the
    old one beside it (stale): --check fails until --apply strikes the old text."""
    (project_dir / "AGENTS.md").write_text(
        "# Agents\n\n- Background jobs run on Dramatiq actors with the Redis broker.\n"
        "- Background jobs run on Celery workers with Redis as the broker.\n", encoding="utf-8")
    old = record(project_dir, "decision", "Background jobs run on Celery",
                 "--body", "Celery workers, Redis broker")
    done = run_cli("supersede", old, "--title", "Background jobs run on Dramatiq",
                   "--body", "Dramatiq actors with the Redis broker", "--why", "lighter",
                   cwd=project_dir)
    assert done.returncode == 0, done.stderr
    new = json.loads(run_cli("history", old, "--json", cwd=project_dir).stdout)
    check = run_cli("sync", "--check", "--json", cwd=project_dir)
    assert check.returncode == 1
    [stale] = json.loads(check.stdout)["candidates"]
    # id: the record in force; stated: the superseded one whose text is still there.
    assert (stale["class"], stale["stated"], stale["file"], stale["line"]) == (
        "stale", old, "AGENTS.md", 4)
    assert stale["id"] != old and stale["id"] in json.dumps(new)
    assert run_cli("sync", "--apply", "--yes", cwd=project_dir).returncode == 0
    assert not (project_dir / "CLAUDE.md").exists()
    text = (project_dir / "AGENTS.md").read_text(encoding="utf-8")
    assert "- ~~Background jobs run on Celery workers with Redis as the broker.~~ → " in text
    after = run_cli("sync", "--check", cwd=project_dir)
    assert after.returncode == 0 and after.stdout.startswith("In sync: AGENTS.md reflect")
