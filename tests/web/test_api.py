"""The JSON API over real HTTP against the real server: every read route, every write, and what
bad input gets (a clear JSON error, nothing changed)."""

from __future__ import annotations

from pathlib import Path

from agentctx.store import Store
from agentctx.store import records as rec
from agentctx.web import api
from agentctx.web import server as web_server
from tests.web.conftest import Site


def test_status_names_the_default_project_and_the_vocabularies(site: Site) -> None:
    status = site.get("/api/status")
    assert status["project"]["id"] == site.data.project
    assert "decision" in status["types"] and "newest" in status["orders"]
    assert status["changes"] > 0 and status["last_receipt"] >= 1


def test_projects_list_what_each_holds(site: Site) -> None:
    found = {p["id"]: p for p in site.get("/api/projects")["items"]}
    assert found[site.data.project]["by_type"] == {"decision": 1, "convention": 1}
    assert found[site.data.project]["tokens_injected"] == 120
    assert found[site.data.other_project]["records"] == 1


def test_records_list_filters_and_pages(site: Site) -> None:
    page = site.get("/api/records")
    assert {r["id"] for r in page["items"]} == {site.data.connect, site.data.style}
    assert page["total"] == 2
    decisions = site.get("/api/records?type=decision&state=all")
    assert [r["id"] for r in decisions["items"]] == [site.data.connect, site.data.grpc]
    assert decisions["items"][1]["current"] is False
    assert site.get("/api/records?state=superseded")["total"] == 1
    first = site.get("/api/records?limit=1&order=title")
    second = site.get("/api/records?limit=1&offset=1&order=title")
    assert first["items"][0]["title"] < second["items"][0]["title"]
    other = site.get(f"/api/records?project={site.data.other_project}")
    assert [r["title"] for r in other["items"]] == ["Other project uses Kafka"]


def test_search_finds_the_current_record_through_its_old_version(site: Site) -> None:
    found = site.get("/api/records?q=Connect%20RPC")
    assert found["items"][0]["id"] == site.data.connect
    assert found["q"] == "Connect RPC" and found["matched_by"] == "words"
    typing = site.get("/api/records?q=Conn")  # half a word, as typed so far
    assert [r["id"] for r in typing["items"]] == [site.data.connect]
    assert typing["matched_by"] == "substring"
    assert site.get("/api/records?q=zebracorn")["total"] == 0


def test_record_detail_has_its_chain_files_and_audit_trail(site: Site) -> None:
    detail = site.get(f"/api/records/{site.data.grpc[:12]}")
    assert detail["record"]["id"] == site.data.grpc
    assert [v["id"] for v in detail["chain"]] == [site.data.grpc, site.data.connect]
    assert detail["chain"][0]["rationale"] == "browsers need to call the services"
    assert site.get(f"/api/records/{site.data.connect}")["files"] == ["src/api.py"]


def test_chains_graph_profile_sessions_and_drift(site: Site, project_dir: Path) -> None:
    chains = site.get("/api/chains")
    assert chains["total"] == 1
    assert [v["id"] for v in chains["items"][0]] == [site.data.grpc, site.data.connect]
    shape = site.get("/api/graph")
    assert {n["id"] for n in shape["nodes"]} == {site.data.grpc, site.data.connect,
                                                 "file:src/api.py"}
    assert {(e["from"], e["to"], e["rel"]) for e in shape["edges"]} == {
        (site.data.connect, site.data.grpc, "supersedes"),
        (site.data.connect, "file:src/api.py", "applies_to")}
    profile = site.get("/api/profile")
    assert [p["title"] for p in profile["preferences"]] == ["Prefers small pull requests"]
    assert profile["preferences"][0]["category"] == "workflow"
    used = site.get("/api/sessions")
    assert used["total"] == 1 and used["items"][0]["prompt_tokens"] == 120
    assert [d["tokens"] for d in used["days"]] == [120]
    (project_dir / "CLAUDE.md").write_text("# app\n\nNothing here yet.\n", encoding="utf-8")
    drift = site.get("/api/drift")
    assert drift["files"] == ["CLAUDE.md"]
    assert {c["id"] for c in drift["candidates"]} == {site.data.connect, site.data.style}
    assert "+" in drift["diff"]
    assert (project_dir / "CLAUDE.md").read_text(encoding="utf-8").endswith("yet.\n")


def test_pin_edit_and_supersede_go_through_the_core(site: Site, isolated_home: Path) -> None:
    ref = site.data.style
    pinned = site.request("POST", f"/api/records/{ref}/pin", {"pinned": True})
    assert pinned.status == 200 and pinned.json()["record"]["pinned"] is True
    edited = site.request("POST", f"/api/records/{ref}/edit", {"body": "Make needs tabs."})
    assert edited.json()["record"]["body"] == "Make needs tabs."
    new = site.request("POST", f"/api/records/{ref}/supersede",
                       {"body": "Recipes start with a tab.", "rationale": "clearer wording"})
    assert new.status == 200
    successor = new.json()["record"]
    with Store.open(isolated_home / "agentctx.db") as db:
        old = rec.get(db, ref)
        assert old.superseded_by == successor["id"] and old.pinned
        assert [(e.field, e.actor) for e in rec.edits_of(db, ref)] == [
            ("pinned", "web"), ("body", "web"), ("superseded_by", "web")]
        assert rec.get(db, successor["id"]).title == "Tabs never spaces in Makefiles"


def test_bad_input_gets_a_clear_error_and_changes_nothing(site: Site,
                                                          isolated_home: Path) -> None:
    with Store.open(isolated_home / "agentctx.db") as db:
        before = db.change_counter()
    cases = [
        ("GET", "/api/records?limit=lots", None, 400, "limit must be a whole number"),
        ("GET", "/api/records?type=essay", None, 400, "unknown type 'essay'"),
        ("GET", "/api/records?state=maybe", None, 400, "unknown state"),
        ("GET", "/api/records?project=nope", None, 404, "no project 'nope'"),
        ("GET", "/api/records/01ZZZZZZZZZZ", None, 404, "no record"),
        ("GET", "/api/nothing", None, 404, "no API route"),
        ("GET", f"/api/records/{site.data.style}/pin", None, 405, "use POST"),
        ("POST", f"/api/records/{site.data.style}/pin", {"pinned": "yes"}, 400, "true or false"),
        ("POST", f"/api/records/{site.data.style}/pin", b"{not json", 400, "not valid JSON"),
        ("POST", f"/api/records/{site.data.style}/pin", [1, 2], 400, "a JSON object"),
        ("POST", f"/api/records/{site.data.style}/edit", {}, 400, "give a title or a body"),
        ("POST", f"/api/records/{site.data.style}/edit", {"title": " "}, 400, "title"),
        ("POST", f"/api/records/{site.data.style}/supersede", {"body": "x"}, 400,
         "rationale is required"),
        ("POST", f"/api/records/{site.data.style}/supersede", {"body": "x", "rationale": " "},
         400, "a rationale is required"),
        ("POST", f"/api/records/{site.data.grpc}/supersede", {"body": "x", "rationale": "y"},
         409, "already superseded"),
    ]
    for method, path, body, status, words in cases:
        reply = site.request(method, path, body)
        assert reply.status == status, (path, body, reply.body)
        assert reply.headers["content-type"].startswith("application/json")
        error = reply.json()["error"]
        assert words in error, (path, error)
        assert "Traceback" not in error
    with Store.open(isolated_home / "agentctx.db") as db:
        assert db.change_counter() == before
        assert not rec.get(db, site.data.style).pinned


def test_the_page_and_its_assets_are_served_from_the_package(site: Site) -> None:
    page = site.request("GET", "/")
    assert page.status == 200 and page.headers["content-type"].startswith("text/html")
    assert site.server.token.encode() in page.body
    assert web_server.TOKEN_PLACEHOLDER.encode() not in page.body
    total = len(page.body)
    for name in web_server.STATIC_FILES:
        if name != "index.html":
            asset = site.request("GET", f"/static/{name}")
            assert asset.status == 200 and asset.body
            total += len(asset.body)
    assert total <= 200 * 1024  # the page weight budget of the first load
    assert b"http://" not in page.body and b"https://" not in page.body  # no CDN


def test_every_route_in_the_readme(site: Site) -> None:
    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text(encoding="utf-8")
    for method, pattern, _handler in api.ROUTES:
        shown = pattern.pattern.replace(api._ID, "{id}")
        assert f"{method} {shown}" in " ".join(readme.split()), shown


def test_possibly_stale_records_are_listed_and_marked(site: Site, project_dir: Path) -> None:
    """A record whose named paths are all gone (Connect's link to src/api.py, which this project
    lacks) is listed by ``state=stale`` and marked in listings and its detail."""
    from agentctx.consolidate.truth import check_paths
    from agentctx.store import projects

    with Store.open() as db:
        check_paths(db, projects.get(db, site.data.project))
    stale = site.get("/api/records?state=stale")
    assert [r["id"] for r in stale["items"]] == [site.data.connect] and stale["total"] == 1
    assert stale["items"][0]["possibly_stale"] == ["src/api.py"]
    listed = {r["id"]: r["possibly_stale"] for r in site.get("/api/records")["items"]}
    assert listed == {site.data.connect: ["src/api.py"], site.data.style: []}
    assert site.get(f"/api/records/{site.data.connect}")["possibly_stale"] == ["src/api.py"]
    (project_dir / "src" / "api.py").write_text("", encoding="utf-8")
    with Store.open() as db:
        check_paths(db, projects.get(db, site.data.project))
    assert site.get("/api/records?state=stale")["total"] == 0
    assert site.get(f"/api/records/{site.data.connect}")["possibly_stale"] == []
