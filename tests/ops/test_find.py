"""The one search entry: over one consolidated store, the same query gives the same ids in the
same order from ``agentctx search --json``, MCP ``ctx_search``, the web API and the TUI (each
bringing its own vector side: the query side file with the store's vectors, or the server's
in-memory index)."""

from __future__ import annotations

import asyncio
import http.client
import json
import threading
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import quote

import pytest
from mcp import Client
from textual.pilot import Pilot

from agentctx.mcpserver.app import ServerState, create_server
from agentctx.mcpserver.semantic import default_model_loader
from agentctx.ops import find
from agentctx.store import Store
from agentctx.store import projects as proj
from agentctx.store import records as rec
from agentctx.store.models import Draft
from agentctx.store.search import Query
from agentctx.store.selection import Selection
from agentctx.tui.records_pane import RecordsPane
from agentctx.web import server as web_server
from tests.conftest import run_cli
from tests.support import tiny_model
from tests.tui.conftest import Demo, run, settle
from tests.tui.conftest import app_on as tui_on

LIMIT = 8
RECORDS = [
    ("decision", "Sessions are cached in redis", "ttl of one hour; eviction is lru"),
    ("decision", "Deploy with docker to staging", "the release goes out on tuesdays"),
    ("convention", "Every pytest fixture lives in conftest", "coverage runs in ci"),
    ("decision", "Login goes through oauth", "jwt token in a cookie"),
    ("discovery", "The sqlite database needs wal", "readers never block the writer"),
    ("convention", "Formatting with ruff", "line length 100, lint on commit"),
    ("decision", "The frontend is react", "css modules per component"),
    ("bugfix", "Cache eviction dropped the session", "memory pressure in redis"),
    ("discovery", "Schema migration runs before the hook", "the prompt digest reads it"),
    ("decision", "Postgres for the hosted service", "persistence of the index"),
    ("convention", "Naming of pytest tests", "test_ prefix, one module per package"),
    ("handover", "Next: the docker release", "kubernetes deployment of the container"),
]
QUERIES = ["redis cache", "memory", "sqlite database storage", "release", "pytest naming",
           "what do we use for login"]


@pytest.fixture
def consolidated(project_dir: Path, isolated_home: Path,
                 tmp_path_factory: pytest.TempPathFactory,
                 monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """A store of one project, consolidated with the tiny WordPiece model (vectors and the
    query side file); yields the project's id."""
    folder = tiny_model.build_wordpiece(tmp_path_factory.mktemp("models") / "wordpiece")
    monkeypatch.setenv("AGENTCTX_EMBED_MODEL", str(folder))
    monkeypatch.setenv("CLAUDE_PROJECT_DIR", str(project_dir))
    monkeypatch.chdir(project_dir)
    with Store.open() as db:
        project = proj.resolve(db, str(project_dir)).project
        for type_, title, body in RECORDS:
            rec.add(db, Draft(type=type_, title=title, body=body), project_id=project.id)
    done = run_cli("consolidate", cwd=project_dir)
    assert done.returncode == 0, done.stderr
    yield project.id


def by_cli(project_dir: Path, text: str) -> list[str]:
    done = run_cli("search", text, "--json", "-n", str(LIMIT), cwd=project_dir)
    assert done.returncode == 0, done.stderr
    hits = json.loads(done.stdout)
    assert all(hit["mode"] == "hybrid" for hit in hits)
    return [hit["id"] for hit in hits]


def by_mcp(texts: list[str]) -> list[list[str]]:
    """Each text's ids as ``ctx_search`` lists them: one hit per line, its id first."""
    async def main() -> list[list[str]]:
        found = []
        server = create_server(ServerState(model_loader=default_model_loader()))
        async with Client(server) as client:
            for text in texts:
                result = await client.call_tool("ctx_search", {"query": text, "limit": LIMIT})
                answer = result.content[0].text  # type: ignore[union-attr]
                assert not result.is_error, answer
                lines = answer.splitlines()
                assert "(keyword+semantic search)" in lines[0] or "No records" in lines[0], lines
                found.append([line.split()[0] for line in lines[1:] if line.strip()])
        return found

    return asyncio.run(main())


def by_web(home: Path, project_id: str, texts: list[str]) -> list[list[str]]:
    server, _ = web_server.bind(0, db_path=home / "agentctx.db", project=project_id,
                                log_path=home / "logs" / "web.log")
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.02},
                              daemon=True)
    thread.start()
    try:
        found = []
        for text in texts:
            conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=10)
            conn.request("GET", f"/api/records?q={quote(text)}&limit={LIMIT}",
                         headers={"Host": f"127.0.0.1:{server.port}"})
            reply = conn.getresponse()
            assert reply.status == 200
            body = json.loads(reply.read())
            conn.close()
            assert body.get("matched_by") in (None, "words"), body
            found.append([item["id"] for item in body["items"]])
        return found
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)


def by_tui(home: Path, project_id: str, folder: Path, texts: list[str]) -> list[list[str]]:
    found: list[list[str]] = []

    async def steps(pilot: Pilot[None]) -> None:
        pane = pilot.app.query_one(RecordsPane)
        for text in texts:
            await pilot.press("slash", *text, "enter")
            await settle(pilot)
            assert pane.search_mode == "hybrid", pane.search_mode
            found.append(list(pane.records)[:LIMIT])
            pane.query_one("#search").value = ""  # type: ignore[attr-defined]
            await settle(pilot)

    run(tui_on(Demo(home, project_id, folder)), steps)
    return found


def test_every_face_gives_the_same_ids_in_the_same_order(
        consolidated: str, project_dir: Path, isolated_home: Path) -> None:
    cli = [by_cli(project_dir, text) for text in QUERIES]
    assert all(cli) and any(len(ids) > 3 for ids in cli)
    with Store.open() as db:
        shorts = rec.short_ids(db, [rid for ids in cli for rid in ids])
        entry = [[h.record.id for h in find.search(
            db, Query(text, Selection(project_id=consolidated, include_global=True),
                      limit=LIMIT), find.stored_vectors(db)).hits] for text in QUERIES]
    assert entry == cli
    assert by_mcp(QUERIES) == [[shorts[rid] for rid in ids] for ids in cli]
    assert by_web(isolated_home, consolidated, QUERIES) == cli
    assert by_tui(isolated_home, consolidated, project_dir, QUERIES) == cli
