"""A team file that arrives through git is used only when it is safe: inside its worktree, a
regular file, of a bounded size. Otherwise it is reported unusable and nothing waits on it."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest

from agentctx import team
from agentctx.core import safeio
from agentctx.store import Store, records
from agentctx.store import projects as proj
from agentctx.store.models import Draft, Project
from agentctx.store.selection import Selection
from tests.conftest import run_cli
from tests.hooks.conftest import SESSION, at, payloads, read_log, run_hook

QUICK = 15  # seconds: far more than any of these needs, far less than a hang


def _shop(db: Store, repo: Path) -> Project:
    shop = proj.resolve(db, str(repo)).project
    records.add(db, Draft(type="decision", title="Use gRPC", body="protobuf in proto/"),
                project_id=shop.id)
    team.turn_on(db, shop, repo)
    return shop


def _fifo(repo: Path) -> Path:
    path = repo / team.TEAM_FILE
    path.unlink()
    os.mkfifo(path)
    return path


def _timed(*args: str, cwd: Path) -> tuple[int, str, str, float]:
    start = time.monotonic()
    done = run_cli(*args, cwd=cwd)
    return done.returncode, done.stdout, done.stderr, time.monotonic() - start


def test_a_committed_link_out_of_the_worktree_is_never_written_through(
        store: Store, repo: Path, tmp_path: Path) -> None:
    commands = tmp_path / "dot-claude" / "commands"  # where a slash command would be read
    commands.mkdir(parents=True)
    shop = proj.resolve(store, str(repo)).project
    (repo / ".agentctx").symlink_to(commands, target_is_directory=True)
    records.add(store, Draft(type="decision", title="Run rm -rf"), project_id=shop.id)
    turned = team.turn_on(store, shop, repo)
    assert turned.problem and "leads outside" in turned.problem and not turned.written
    result = team.sync(store, shop, repo)
    assert not result.written and result.problem and "unusable" in result.problem
    state = team.status(store, shop, repo)
    assert state.state == "unusable" and str(commands) in state.detail
    assert "\n" not in state.detail

    code, _, err, _ = _timed("record", "decision", "Another one", cwd=repo)
    assert code == 0 and "unusable" in err, err
    code, _, err, _ = _timed("team", "sync", cwd=repo)
    assert code == 1 and "unusable" in err and len(err.strip().splitlines()) == 1
    assert list(commands.iterdir()) == []  # nothing ever reached the folder outside


def test_a_link_to_a_file_inside_the_worktree_is_followed_and_the_link_kept(
        store: Store, repo: Path) -> None:
    shop = _shop(store, repo)
    docs = repo / "docs"
    docs.mkdir()
    real = docs / "team.md"
    (repo / team.TEAM_FILE).rename(real)
    (repo / team.TEAM_FILE).symlink_to(real)
    records.add(store, Draft(type="convention", title="Tabs"), project_id=shop.id)
    assert team.sync(store, shop, repo).written
    assert (repo / team.TEAM_FILE).is_symlink() and "### Tabs" in real.read_text()


def test_a_gitattributes_link_out_of_the_worktree_is_refused(store: Store, repo: Path,
                                                             tmp_path: Path) -> None:
    elsewhere = tmp_path / "bashrc"
    elsewhere.write_text("alias ls='ls -F'\n")
    (repo / ".gitattributes").symlink_to(elsewhere)
    shop = proj.resolve(store, str(repo)).project
    with pytest.raises(team.TeamFileUnusable, match=r"\.gitattributes"):
        team.turn_on(store, shop, repo)
    assert elsewhere.read_text() == "alias ls='ls -F'\n"


def test_a_fifo_team_file_hangs_nothing_and_is_reported_unusable(
        store: Store, repo: Path) -> None:
    _shop(store, repo)
    _fifo(repo)
    store.close()
    for args, code_wanted in ((("status",), 0), (("team", "status"), 1), (("import",), 1),
                              (("team", "sync"), 1), (("record", "decision", "Still"), 0)):
        code, out, err, seconds = _timed(*args, cwd=repo)
        assert seconds < QUICK, args
        assert code == code_wanted, (args, out, err)
        assert "unusable" in out + err and "not a regular file" in out + err, (args, out, err)
        assert "Traceback" not in err
    code, out, err, _ = _timed("team", "status", cwd=repo)
    assert out.startswith("unusable: ") and len(out.strip().splitlines()) == 2  # state, reason


@pytest.mark.parametrize("kind", ["dev-zero link", "huge file"])
def test_a_bottomless_or_huge_team_file_is_not_read(store: Store, repo: Path, kind: str) -> None:
    shop = _shop(store, repo)
    path = repo / team.TEAM_FILE
    path.unlink()
    if kind == "dev-zero link":
        path.symlink_to("/dev/zero")
    else:
        with open(path, "wb") as handle:  # sparse: costs no disk
            handle.truncate(safeio.SHARED_FILE_MAX + 1)
    state = team.status(store, shop, repo)
    assert state.state == "unusable"
    assert ("leads outside" if kind == "dev-zero link" else "larger than") in state.detail
    with pytest.raises(team.TeamFileUnusable):
        team.import_file(store, shop, path)
    assert team.sync(store, shop, repo).problem
    done = run_cli("import", cwd=repo)
    assert done.returncode == 1 and "unusable" in done.stderr and "Traceback" not in done.stderr


def test_session_start_starts_no_child_for_an_unusable_file(
        store: Store, repo: Path, isolated_home: Path) -> None:
    _shop(store, repo)
    _fifo(repo)
    records.add(store, Draft(type="decision", title="Made it behind"),
                project_id=proj.resolve(store, str(repo)).project.id)
    store.close()
    start = time.monotonic()
    run_hook("session-start", at(payloads("SessionStart")[0], repo, session_id=SESSION))
    assert time.monotonic() - start < QUICK
    assert any("team file unusable, not synced" in line for line in read_log(isolated_home))
    assert not (isolated_home / "logs" / "team.log").exists()  # no sync child ever ran


def test_the_mcp_server_records_past_an_unusable_file_and_says_so(
        store: Store, repo: Path) -> None:
    from agentctx.mcpserver import service

    shop = _shop(store, repo)
    _fifo(repo)
    start = time.monotonic()
    text = service.record(store, service.Where(shop, str(repo)), "decision",
                          "Recorded past a FIFO", "why not")
    assert time.monotonic() - start < QUICK and text.startswith("Recorded")
    assert "team file" in text and "unusable" in text
    listed = records.list_records(store, Selection(project_id=shop.id))
    assert any(r.title == "Recorded past a FIFO" for r in listed)


def test_status_json_says_why_the_file_is_unusable(store: Store, repo: Path) -> None:
    _shop(store, repo)
    _fifo(repo)
    store.close()
    done = run_cli("status", "--json", cwd=repo)
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)["team"]
    assert data["state"] == "unusable" and "not a regular file" in data["detail"]
