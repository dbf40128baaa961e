"""The real ``agentctx mcp`` process over stdio, driven the way Claude Code drives it."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from mcp import Client, ClientSession, StdioServerParameters, stdio_client, types
from pydantic import FileUrl

from agentctx.store import Store, graph, projects, records
from agentctx.store.models import Draft
from agentctx.store.selection import Selection
from tests.support.tiny_model import TinyModel, embed_all

pytestmark = pytest.mark.anyio

TOOLS = {"ctx_search", "ctx_get", "ctx_record", "ctx_supersede", "ctx_project", "ctx_related",
         "ctx_sync_claudemd"}


def params(home: Path, project: Path, **env: str) -> StdioServerParameters:
    """The child gets only an allow-list of our environment: pass what it needs explicitly."""
    return StdioServerParameters(command=sys.executable, args=["-m", "agentctx", "mcp"],
                                 env={"AGENTCTX_HOME": str(home),
                                      "CLAUDE_PROJECT_DIR": str(project), **env},
                                 cwd=str(project))


async def text_of(session: ClientSession, tool: str, **arguments: Any) -> tuple[bool, str]:
    result = await session.call_tool(tool, arguments=arguments)
    block = result.content[0]
    assert isinstance(block, types.TextContent)
    return result.is_error, block.text


async def test_every_tool_over_stdio_after_initialize(isolated_home: Path, app_dir: Path) -> None:
    async with stdio_client(params(isolated_home, app_dir)) as (read, write), \
            ClientSession(read, write) as session:
        init = await session.initialize()
        assert init.server_info.name == "agentctx"
        assert init.protocol_version == "2025-11-25"
        assert init.instructions and "ctx_search" in init.instructions
        assert {tool.name for tool in (await session.list_tools()).tools} == TOOLS

        failed, text = await text_of(session, "ctx_record", type="decision",
                                     title="Use WAL mode", body="Readers never block writers.",
                                     files=["src/db.py"])
        assert not failed and text.startswith("Recorded ")
        record_id = text.split()[1]

        failed, text = await text_of(session, "ctx_search", query="wal readers")
        assert not failed and "Use WAL mode" in text and "keyword search" in text
        short = text.splitlines()[1].split()[0]
        assert record_id.startswith(short)

        failed, text = await text_of(session, "ctx_get", ids=[short, "nope-nope"])
        assert not failed and record_id in text and "source mcp_tool" in text
        assert "Unknown or ambiguous: nope-nope" in text

        failed, text = await text_of(session, "ctx_supersede", old_id=short,
                                     new_body="Rollback journal on the network share.",
                                     rationale="WAL needs shared memory")
        assert not failed and "Current now:" in text

        failed, text = await text_of(session, "ctx_related", file="src/db.py")
        assert not failed and text.startswith("1 record linked to src/db.py")  # the successor

        failed, text = await text_of(session, "ctx_project")
        assert not failed and "Project name: shop" in text and "make test" in text

        failed, text = await text_of(session, "ctx_sync_claudemd")
        assert not failed and text.startswith("CLAUDE.md drift for app: 1 candidates"), text
        assert "Nothing was written." in text and not (app_dir / "CLAUDE.md").exists()

        failed, text = await text_of(session, "ctx_record", type="decision", title="t", body="")
        assert failed and "body must not be empty" in text

    with Store.open(isolated_home / "agentctx.db") as db:
        pid = projects.resolve(db, str(app_dir)).project.id
        chain = records.history(db, record_id)
        assert [r.current for r in chain] == [False, True]
        assert {r.source for r in chain} == {"mcp_tool"}
        assert records.supersession_note(db, chain[1].id, record_id) == "WAL needs shared memory"
        assert [n.name for n, _ in graph.entities_of(db, chain[1].id)] == ["src/db.py"]
        assert all(r.project_id == pid for r in chain)


async def test_roots_from_the_client_win_over_the_environment(isolated_home: Path,
                                                              app_dir: Path,
                                                              tmp_path: Path) -> None:
    other = tmp_path / "other repo"
    other.mkdir()

    async def roots(context: Any) -> types.ListRootsResult:
        return types.ListRootsResult(roots=[types.Root(uri=FileUrl(other.as_uri()), name="other")])

    async with stdio_client(params(isolated_home, app_dir)) as (read, write), \
            ClientSession(read, write, list_roots_callback=roots) as session:
        await session.initialize()
        failed, text = await text_of(session, "ctx_record", type="convention",
                                     title="Rooted here", body="From roots/list.")
        assert not failed, text
        failed, text = await text_of(session, "ctx_project")
        assert not failed and "other repo" in text
    with Store.open(isolated_home / "agentctx.db") as db:
        other_id = projects.resolve(db, str(other)).project.id
        app_id = projects.resolve(db, str(app_dir)).project.id
        in_other = records.list_records(db, Selection(project_id=other_id, types=("convention",)))
        in_app = records.list_records(db, Selection(project_id=app_id))
    assert [r.title for r in in_other] == ["Rooted here"] and in_app == []


async def test_the_configured_local_model_adds_similarity(isolated_home: Path, app_dir: Path,
                                                         tmp_path: Path) -> None:
    model = TinyModel().save(tmp_path / "tiny-model")
    with Store.open(isolated_home / "agentctx.db") as db:
        pid = projects.resolve(db, str(app_dir)).project.id
        for title in ("Use sqlite with WAL for the local store", "Pytest fixtures in conftest"):
            records.add(db, Draft(type="decision", title=title, body="Agreed."), project_id=pid)
        assert embed_all(db, model) == 2
    async with stdio_client(params(isolated_home, app_dir, AGENTCTX_EMBED_MODEL=model.name,
                                   HF_HUB_OFFLINE="1")) as (read, write), \
            ClientSession(read, write) as session:
        await session.initialize()
        failed, text = await text_of(session, "ctx_search", query="database persistence")
    assert not failed and "keyword+semantic search" in text
    assert "Use sqlite with WAL" in text and "Pytest" not in text


async def test_the_modern_client_also_works(isolated_home: Path, app_dir: Path) -> None:
    async with Client(params(isolated_home, app_dir)) as client:
        result = await client.call_tool("ctx_search", {"query": "anything at all"})
        block = result.content[0]
        assert isinstance(block, types.TextContent)
        assert not result.is_error and block.text.startswith("No records match")


def test_stdout_carries_only_json_rpc(isolated_home: Path, app_dir: Path) -> None:
    requests: list[dict[str, Any]] = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize",
         "params": {"protocolVersion": "2025-11-25", "capabilities": {},
                    "clientInfo": {"name": "raw", "version": "0"}}},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
        {"jsonrpc": "2.0", "id": 3, "method": "tools/call",
         "params": {"name": "ctx_record", "arguments": {"type": "bugfix", "title": "Fix it",
                                                        "body": "Done."}}},
        {"jsonrpc": "2.0", "id": 4, "method": "tools/call",
         "params": {"name": "ctx_search", "arguments": {"query": "fix"}}},
        {"jsonrpc": "2.0", "id": 5, "method": "tools/call",
         "params": {"name": "ctx_record", "arguments": {"type": "nonsense", "title": "x",
                                                        "body": "y"}}},
        {"jsonrpc": "2.0", "id": 6, "method": "tools/call",
         "params": {"name": "ctx_project", "arguments": {}}},
    ]
    env = {"AGENTCTX_HOME": str(isolated_home), "CLAUDE_PROJECT_DIR": str(app_dir),
           "HOME": str(isolated_home.parent), "PATH": "/usr/bin:/bin"}
    child = subprocess.Popen([sys.executable, "-m", "agentctx", "mcp"], cwd=app_dir, env=env,
                             stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True)
    assert child.stdin is not None and child.stdout is not None
    replies = []
    try:
        for request in requests:
            child.stdin.write(json.dumps(request) + "\n")
            child.stdin.flush()
            if "id" in request:  # wait for each answer, reading stdout line by line
                replies.append(json.loads(child.stdout.readline()))
        child.stdin.close()  # end of input: the server exits cleanly
        child.wait(timeout=30)
        rest = child.stdout.read()
        errors = child.stderr.read() if child.stderr else ""
    finally:
        if child.poll() is None:
            child.kill()
    assert child.returncode == 0, errors
    assert rest == ""  # nothing after the last answer
    assert all(reply["jsonrpc"] == "2.0" for reply in replies)
    assert [reply["id"] for reply in replies] == [1, 2, 3, 4, 5, 6]
    assert len(replies[1]["result"]["tools"]) == 7
    assert not replies[2]["result"].get("isError")
    assert "Fix it" in replies[3]["result"]["content"][0]["text"]
    assert replies[4]["result"]["isError"] is True
    assert "Project name" in replies[5]["result"]["content"][0]["text"]
    assert "Traceback" not in errors
