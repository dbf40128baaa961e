"""MCP writes keep the team file of the server's worktree in step."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentctx import team
from agentctx.store import Store
from agentctx.store import projects as proj
from tests.server.conftest import call, make_client
from tests.support.gitrepo import repo  # noqa: F401  (a fixture)


@pytest.mark.anyio
async def test_ctx_record_and_ctx_supersede_rewrite_the_team_file(
        repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:  # noqa: F811
    monkeypatch.setenv("CLAUDE_PROJECT_DIR", str(repo))
    with Store.open() as db:
        team.turn_on(db, proj.resolve(db, str(repo)).project, repo)
    path = repo / team.TEAM_FILE
    async with make_client() as client:
        text = await call(client, "ctx_record", type="decision", title="Use WAL mode",
                          body="Readers never block the writer.")
        rid = text.split()[1]
        assert f"<!-- agentctx:end {rid} -->" in path.read_text(encoding="utf-8")
        await call(client, "ctx_record", type="preference", title="Prefers short answers",
                   body="Keep it brief.", scope="global")
        assert "short answers" not in path.read_text(encoding="utf-8")
        await call(client, "ctx_supersede", old_id=rid, new_body="WAL plus a busy timeout.",
                   rationale="lock errors under load")
    written = path.read_text(encoding="utf-8")
    assert f"- `{rid}` " in written and "because: lock errors under load" in written
    with Store.open() as db:
        assert team.status(db, proj.resolve(db, str(repo)).project, repo).in_step
