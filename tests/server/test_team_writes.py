"""MCP writes go through the write path and keep the team file of the server's worktree in
step."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentctx import team
from agentctx.store import Store, graph
from agentctx.store import projects as proj
from agentctx.store import records as rec
from tests.server.conftest import call, fail, make_client
from tests.support.gitrepo import repo  # noqa: F401  (a fixture)
from tests.support.teamsync_spy import count_team_syncs


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


@pytest.mark.anyio
async def test_ctx_supersede_keeps_the_files_is_stored_as_mcp_tool_and_syncs_once(
        repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:  # noqa: F811
    """Through the write path: the successor keeps the predecessor's files, source and actor
    are ``mcp_tool``, the worktree's team file is brought in step once; an empty body is
    refused and changes nothing."""
    monkeypatch.setenv("CLAUDE_PROJECT_DIR", str(repo))
    with Store.open() as db:
        team.turn_on(db, proj.resolve(db, str(repo)).project, repo)
    async with make_client() as client:
        text = await call(client, "ctx_record", type="decision", title="Use REST",
                          body="JSON over HTTP.", files=["src/api.py"])
        rid = text.split()[1]
        refused = await fail(client, "ctx_supersede", old_id=rid, new_body="  ",
                             rationale="speed")
        assert "new_body must not be empty" in refused
        syncs = count_team_syncs(monkeypatch)
        done = await call(client, "ctx_supersede", old_id=rid, new_body="protobuf in proto/",
                          rationale="speed", title="Use gRPC")
    assert syncs == [str(repo)]
    new_id = done.split("Current now: ")[1].split()[0]
    with Store.open() as db:
        assert [link.node.name for link in graph.entities_of(db, new_id)] == ["src/api.py"]
        assert rec.get(db, new_id).source == "mcp_tool"
        assert [(e.field, e.actor) for e in rec.edits_of(db, rid)] == [
            ("superseded_by", "mcp_tool")]
    assert "### Use gRPC" in (repo / team.TEAM_FILE).read_text(encoding="utf-8")
