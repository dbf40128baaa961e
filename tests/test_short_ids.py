"""One short-id function on every surface: every record id the CLI, the MCP tools and the web
API show is the store's shortest unique prefix (or the full id) and resolves with ``agentctx
show``; a prefix that matches more than one record (or session) gets its candidates listed.

The demo store is built with frozen ids (``demo_store``): its ids share their first 24
characters, so any fixed-length cut (8, 10, 12 characters) would name several records."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from agentctx.mcpserver import service
from agentctx.store import Store, sessions, stats
from agentctx.store import projects as proj
from agentctx.store import records as rec
from agentctx.store.errors import AmbiguousId
from tests.support.cli import invoke
from tests.tui.conftest import Demo, demo_built, demo_store  # noqa: F401  (fixtures)

# A record id or a prefix of one as a surface prints it (Crockford base 32, upper case).
ID = re.compile(r"(?<![0-9A-Z])01[0-9A-HJKMNP-TV-Z]{6,24}(?![0-9A-Z])")


def open_db(demo: Demo) -> Store:
    return Store.open(demo.home / "agentctx.db")


def ids_in(text: str) -> set[str]:
    return set(ID.findall(text))


def assert_all_resolve(db: Store, shown: set[str], where: str) -> None:
    assert shown, f"no id found in {where}"
    for ref in shown:
        try:
            rec.resolve_id(db, ref)
        except AmbiguousId as exc:
            raise AssertionError(f"{where} shows {ref}, which {exc}") from None


def test_every_id_the_cli_shows_resolves(demo_store: Demo,  # noqa: F811
                                         monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(demo_store.folder)
    with open_db(demo_store) as db:
        session = stats.session_summaries(db, demo_store.project_id)[0].session_id
    runs = {
        "list": invoke("list", "--superseded"),
        "search": invoke("search", "feature flags"),
        "status": invoke("status"),
        "why": invoke("why", "--session", session),
        "preview": invoke("preview", "is the internal api still REST?", "-n", "10"),
        "history": invoke("history", "Internal API is gRPC"),
        "profile": invoke("profile", "show", "--all"),
        "sync": invoke("sync"),
    }
    with open_db(demo_store) as db:
        for name, ran in runs.items():
            if name != "history":  # history takes an id; a title is refused in one line
                assert ran.code in (0, 1), (name, ran)
            assert_all_resolve(db, ids_in(ran.out), name) if name != "history" else None
        [head] = [r for r in rec.list_records(db, project_id=demo_store.project_id)
                  if r.title.startswith("Internal API is gRPC")]
        short = rec.short_ids(db, [head.id])[head.id]
        history = invoke("history", short)
        assert history.code == 0, history
        assert_all_resolve(db, ids_in(history.out), "history")
        status = runs["status"].out
        assert "merge candidates (1)" in status  # the demo's near-duplicate pair, by short ids
    for ref in ids_in(runs["list"].out) | ids_in(runs["status"].out):
        shown = invoke("show", ref)
        assert shown.code == 0, (ref, shown.err)


def test_every_id_the_mcp_tools_and_the_web_api_show_resolves(demo_store: Demo,  # noqa: F811
                                                              ) -> None:
    from agentctx.web import api

    with open_db(demo_store) as db:
        project = proj.get(db, demo_store.project_id)
        where = service.Where(project, project.root)
        query = service.build_query(where, "internal api", limit=20)
        text = service.search(db, where, query._replace(include_superseded=True))
        assert_all_resolve(db, ids_in(text), "ctx_search")
        found = rec.list_records(db, project_id=project.id, include_superseded=True,
                                 limit=100)
        shown = {item["short_id"] for item in api._records_json(db, found)}
        assert_all_resolve(db, shown, "the web API's records")


def test_a_prefix_that_became_ambiguous_lists_its_candidates(demo_store: Demo,  # noqa: F811
                                                             ) -> None:
    with open_db(demo_store) as db:
        found = rec.list_records(db, project_id=demo_store.project_id, limit=3)
        common = found[0].id[:10]
        assert all(r.id.startswith(common) for r in found)
        project = proj.get(db, demo_store.project_id)
        text = service.get(db, service.Where(project, project.root), [common])
    unknown = text.split("Unknown or ambiguous: ")[1]
    assert f"id prefix '{common}' matches" in unknown
    assert re.search(common + r"[0-9A-Z]{16}, ", unknown)  # candidates, in full
    shown = invoke("show", common)
    assert shown.code == 1 and shown.err.count("\n") == 1, shown
    assert "matches" in shown.err and found[0].id[:12] in shown.err


def test_why_takes_a_session_by_its_first_characters(demo_store: Demo,  # noqa: F811
                                                     monkeypatch: pytest.MonkeyPatch,
                                                     tmp_path: Path) -> None:
    monkeypatch.chdir(demo_store.folder)
    with open_db(demo_store) as db:
        first = stats.session_summaries(db, demo_store.project_id)[0].session_id
        project_id = demo_store.project_id
        for twin in ("aaaaaaaa-0000-4000-8000-000000000001", "aaaaaaaa-0000-4000-8000-00000000002"):
            sessions.ensure(db, twin, project_id, cwd=str(demo_store.folder))
    ran = invoke("why", "--session", first[:8], "--json")
    assert ran.code == 0, ran
    assert json.loads(ran.out)["session"] == first
    ambiguous = invoke("why", "--session", "aaaaaaaa")
    assert ambiguous.code == 1 and ambiguous.err.count("\n") == 1, ambiguous
    assert "matches 2 sessions" in ambiguous.err
    assert "aaaaaaaa-0000-4000-8000-000000000001" in ambiguous.err
    unknown = invoke("why", "--session", "ffffffff")
    assert unknown.code == 1 and "no session" in unknown.err
