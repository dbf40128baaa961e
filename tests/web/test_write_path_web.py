"""The web view's writes and searches go through the use-case layer: a supersede keeps the
predecessor's files, refuses an empty body, is stored and audited as ``web`` and brings the team
file in step once; forgetting a successor answers with the record current again; a filtered
search returns a full page when that many records match."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentctx import team
from agentctx.store import Store, graph
from agentctx.store import projects as proj
from agentctx.store import records as rec
from agentctx.store.models import Draft
from tests.support.teamsync_spy import count_team_syncs
from tests.web.conftest import Site


def test_supersede_keeps_the_files_is_stored_as_web_and_syncs_the_team_file_once(
        site: Site, isolated_home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with Store.open(isolated_home / "agentctx.db") as db:
        project = proj.get(db, site.data.project)
        team.turn_on(db, project, project.root)
    syncs = count_team_syncs(monkeypatch)
    reply = site.request("POST", f"/api/records/{site.data.connect}/supersede",
                         {"rationale": "one protocol for all", "title": "Use HTTP/JSON",
                          "body": "Plain JSON over HTTP."})
    assert reply.status == 200, reply.body
    new_id = reply.json()["record"]["id"]
    assert syncs == [site.server.cwd]
    with Store.open(isolated_home / "agentctx.db") as db:
        assert [link.node.name for link in graph.entities_of(db, new_id)] == ["src/api.py"]
        assert rec.get(db, new_id).source == "web"
        assert [(e.field, e.actor) for e in rec.edits_of(db, site.data.connect)] == [
            ("superseded_by", "web")]
    text = (Path(project.root) / team.TEAM_FILE).read_text(encoding="utf-8")
    assert "### Use HTTP/JSON" in text


def test_supersede_refuses_an_empty_body(site: Site, isolated_home: Path) -> None:
    reply = site.request("POST", f"/api/records/{site.data.connect}/supersede",
                         {"rationale": "why not", "body": " "})
    assert reply.status == 400
    assert reply.json() == {"error": "the successor's body is required: say what holds now"}
    with Store.open(isolated_home / "agentctx.db") as db:
        assert rec.get(db, site.data.connect).current


def test_forgetting_a_successor_answers_with_the_record_current_again(
        site: Site, isolated_home: Path) -> None:
    reply = site.request("POST", f"/api/records/{site.data.connect}/forget", {})
    assert reply.status == 200, reply.body
    answer = reply.json()
    assert answer["forgotten"]["id"] == site.data.connect
    assert [(r["id"], r["title"], r["current"]) for r in answer["current_again"]] == [
        (site.data.grpc, "Use gRPC between the services", True)]
    again = site.request("POST", f"/api/records/{site.data.style}/forget", {})
    assert again.status == 200 and again.json()["current_again"] == []
    with Store.open(isolated_home / "agentctx.db") as db:
        assert rec.get(db, site.data.grpc).current


def test_a_filtered_search_returns_a_full_page_of_matching_hits(
        site: Site, isolated_home: Path) -> None:
    """120 explicit records outrank 10 inferred ones for "cache": a search cut at its limit
    before the filter would find none of the inferred."""
    with Store.open(isolated_home / "agentctx.db") as db, db.write():
        for n in range(120):
            rec.add(db, Draft(type="discovery", title=f"Cache layer note {n}",
                              body="the cache keeps entries", confidence="explicit"),
                    project_id=site.data.project)
        inferred = {rec.add(db, Draft(type="discovery", title=f"Cache layer guess {n}",
                                      body="the cache keeps entries", confidence="inferred"),
                            project_id=site.data.project).id for n in range(10)}
    page = site.get("/api/records?q=cache&confidence=inferred&limit=5")
    assert len(page["items"]) == 5 and page["total"] == 10
    assert {item["id"] for item in page["items"]} <= inferred
    rest = site.get("/api/records?q=cache&confidence=inferred&limit=5&offset=5")
    assert {item["id"] for item in page["items"] + rest["items"]} == inferred
