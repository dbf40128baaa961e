"""session-start: another worktree's team file catches up in the background."""

from __future__ import annotations

import time
from pathlib import Path

from agentctx import team
from agentctx.store import Store, records, teamstate
from agentctx.store import projects as proj
from agentctx.store.models import Draft
from tests.hooks.conftest import SESSION, at, payloads, run_hook
from tests.support.gitrepo import git, repo  # noqa: F401  (a fixture)


def _wait_for(path: Path, words: str, seconds: float = 30) -> str:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if path.exists() and words in (text := path.read_text(encoding="utf-8")):
            return text
        time.sleep(0.1)
    raise AssertionError(f"{words!r} never reached {path}")


def test_a_stale_worktree_file_is_synced_after_session_start(repo: Path,  # noqa: F811
                                                              tmp_path: Path) -> None:
    feature = tmp_path / "shop-feature"
    git(repo, "worktree", "add", "-q", "-b", "feature", str(feature))
    with Store.open() as db:
        shop = proj.resolve(db, str(repo)).project
        team.turn_on(db, shop, repo)
        records.add(db, Draft(type="decision", title="Written in main"), project_id=shop.id)
        team.after_write(db, shop, repo)
    target = feature / team.TEAM_FILE
    assert not target.exists()
    run_hook("session-start", at(payloads("SessionStart")[0], feature, session_id=SESSION))
    _wait_for(target, "### Written in main")
    with Store.open() as db:
        state = teamstate.written(db, str(target))
        assert state is not None and state.change_counter == db.change_counter()


def test_an_in_step_file_starts_nothing(repo: Path, isolated_home: Path) -> None:  # noqa: F811
    with Store.open() as db:
        shop = proj.resolve(db, str(repo)).project
        records.add(db, Draft(type="decision", title="Already there"), project_id=shop.id)
        team.turn_on(db, shop, repo)
    path = repo / team.TEAM_FILE
    stamp = path.stat().st_mtime_ns
    run_hook("session-start", at(payloads("SessionStart")[0], repo, session_id=SESSION))
    time.sleep(1.0)
    log = isolated_home / "logs" / "team.log"
    assert not log.exists() or "team sync" not in log.read_text(encoding="utf-8")
    assert path.stat().st_mtime_ns == stamp
