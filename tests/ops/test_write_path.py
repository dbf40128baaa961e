"""The one write path: each use case in one transaction with the caller's source and actor, the
team file in step once after it commits (real store, real git repository, real team file)."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentctx import team
from agentctx.ops import write_path
from agentctx.ops.caller import Caller
from agentctx.store import Store, graph, upkeep
from agentctx.store import projects as proj
from agentctx.store import records as rec
from agentctx.store.errors import InvalidRecord
from agentctx.store.models import Draft, Project
from agentctx.store.selection import Selection
from tests.support.gitrepo import repo  # noqa: F401  (a fixture)
from tests.support.teamsync_spy import count_team_syncs


@pytest.fixture
def shop(store: Store, repo: Path) -> Project:  # noqa: F811
    """The repository's project, keeping a team file."""
    project = proj.resolve(store, str(repo)).project
    team.turn_on(store, project, repo)
    return project


def tui(folder: Path) -> Caller:
    return Caller.face("tui", str(folder))


def files_of(db: Store, record_id: str) -> list[tuple[str, str]]:
    return [(link.node.kind, link.node.name) for link in graph.entities_of(db, record_id)]


def test_a_caller_names_a_face_the_store_knows() -> None:
    assert Caller.face("web", "/x") == Caller("web", "web", "/x")
    with pytest.raises(ValueError, match="unknown source"):
        Caller.face("gui", "/x")


def test_record_stores_the_callers_source_links_files_and_syncs_once(
        store: Store, shop: Project, repo: Path,  # noqa: F811
        monkeypatch: pytest.MonkeyPatch) -> None:
    syncs = count_team_syncs(monkeypatch)
    links = [write_path.link_of("src/api.py", shop.root), write_path.link_of("src/db/", shop.root)]
    written = write_path.record(store, tui(repo), shop,
                                Draft(type="decision", title="Use WAL", body="Readers never "
                                      "block.", source="cli"), links)
    assert written.record.source == "tui"  # the caller's, never the draft's default
    assert files_of(store, written.record.id) == [("file", "src/api.py"), ("module", "src/db")]
    assert syncs == [str(repo)]
    assert "### Use WAL" in (repo / team.TEAM_FILE).read_text(encoding="utf-8")


def test_supersede_carries_the_predecessors_links_and_audits_the_caller(
        store: Store, shop: Project, repo: Path,  # noqa: F811
        monkeypatch: pytest.MonkeyPatch) -> None:
    old = write_path.record(store, tui(repo), shop, Draft(type="decision", title="Use REST",
                                                          body="JSON over HTTP."),
                            [write_path.Link("src/api.py")]).record
    with store.write():
        graph.link_record(store, old.id, graph.ensure_node(store, shop.id, "symbol", "serve"),
                          "mentions")
    syncs = count_team_syncs(monkeypatch)
    done = write_path.supersede(store, Caller.face("web", str(repo)), old.id,
                                Draft(type="", title="Use gRPC", body="protobuf in proto/"),
                                "REST was too slow")
    assert done.old.id == old.id and done.new.source == "web"
    assert files_of(store, done.new.id) == files_of(store, old.id) == [
        ("file", "src/api.py"), ("symbol", "serve")]
    assert [(e.field, e.actor) for e in rec.edits_of(store, old.id)] == [("superseded_by", "web")]
    assert syncs == [str(repo)]
    assert "### Use gRPC" in (repo / team.TEAM_FILE).read_text(encoding="utf-8")
    # Files the caller names replace the predecessor's.
    again = write_path.supersede(store, tui(repo), done.new.id,
                                 Draft(type="", title="Use gRPC", body="Now with TLS."), "TLS",
                                 files=[write_path.Link("proto/api.proto")])
    assert files_of(store, again.new.id) == [("file", "proto/api.proto")]


def test_supersede_refuses_an_empty_body_and_writes_nothing(
        store: Store, shop: Project, repo: Path,  # noqa: F811
        monkeypatch: pytest.MonkeyPatch) -> None:
    old = write_path.record(store, tui(repo), shop, Draft(type="decision", title="Use REST",
                                                          body="JSON.")).record
    syncs = count_team_syncs(monkeypatch)
    before = rec.count_records(store, Selection(project_id=shop.id, state="all"))
    with pytest.raises(InvalidRecord, match="body is required"):
        write_path.supersede(store, tui(repo), old.id, Draft(type="", title="", body="  \n"),
                             "no reason")
    assert rec.get(store, old.id).current and syncs == []
    assert rec.count_records(store, Selection(project_id=shop.id, state="all")) == before


def test_a_stale_fingerprint_is_changed_elsewhere(store: Store, shop: Project,
                                                  repo: Path) -> None:  # noqa: F811
    record = write_path.record(store, tui(repo), shop, Draft(type="decision", title="Use REST",
                                                             body="JSON.")).record
    seen = write_path.fingerprint(record)
    write_path.edit(store, Caller.face("cli", str(repo)), record.id, body="JSON, gzip.")
    with pytest.raises(write_path.ChangedElsewhere):
        write_path.pin(store, tui(repo), record.id, True, seen=seen)
    assert not rec.get(store, record.id).pinned


def test_edit_pin_and_confidence_are_audited_with_the_callers_actor(
        store: Store, shop: Project, repo: Path,  # noqa: F811
        monkeypatch: pytest.MonkeyPatch) -> None:
    record = write_path.record(store, tui(repo), shop, Draft(type="decision", title="Use REST",
                                                             body="JSON.",
                                                             confidence="inferred")).record
    syncs = count_team_syncs(monkeypatch)
    web = Caller.face("web", str(repo))
    write_path.edit(store, web, record.id, title="Use REST/JSON")
    write_path.pin(store, web, record.id, True)
    write_path.confidence(store, web, record.id, "explicit")
    unchanged = write_path.pin(store, web, record.id, True)
    assert unchanged.before == unchanged.record
    assert {e.actor for e in rec.edits_of(store, record.id)} == {"web"}
    assert [e.field for e in rec.edits_of(store, record.id)] == ["title", "pinned", "confidence"]
    assert syncs == [str(repo)] * 3  # once per change; none for a change that changed nothing


def test_forgetting_a_successor_names_what_becomes_current_again(
        store: Store, shop: Project, repo: Path,  # noqa: F811
        monkeypatch: pytest.MonkeyPatch) -> None:
    old = write_path.record(store, tui(repo), shop, Draft(type="decision", title="Use REST",
                                                          body="JSON.")).record
    new = write_path.supersede(store, tui(repo), old.id,
                               Draft(type="", title="Use gRPC", body="protobuf"), "speed").new
    record, again = write_path.forgetting(store, new.id)
    assert record.id == new.id and [(r.id, r.title) for r in again] == [(old.id, "Use REST")]
    syncs = count_team_syncs(monkeypatch)
    gone = write_path.forget(store, tui(repo), new.id)
    assert gone.record.id == new.id
    assert [(r.id, r.title, r.current) for r in gone.current_again] == [(old.id, "Use REST", True)]
    assert rec.get(store, old.id).current and syncs == [str(repo)]
    # A record that was itself superseded hands nothing back: its chain closes over it.
    newer = write_path.supersede(store, tui(repo), old.id,
                                 Draft(type="", title="Use Connect", body="browsers"), "web").new
    assert write_path.forgetting(store, old.id)[1] == ()
    assert write_path.forget(store, tui(repo), old.id).current_again == ()
    assert rec.get(store, newer.id).current


def test_merge_keeps_the_newer_with_the_olders_pin_links_and_the_callers_actor(
        store: Store, shop: Project, repo: Path,  # noqa: F811
        monkeypatch: pytest.MonkeyPatch) -> None:
    older = write_path.record(store, tui(repo), shop,
                              Draft(type="discovery", title="Cache TTL is 5 minutes",
                                    body="settings.py", pinned=True, confidence="explicit",
                                    valid_from="2026-01-01"),
                              [write_path.Link("settings.py")]).record
    newer = write_path.record(store, tui(repo), shop,
                              Draft(type="discovery", title="The cache TTL is 5 minutes",
                                    body="settings.py sets it", confidence="inferred")).record
    upkeep.save_near_duplicates(store, [older.id, newer.id], [(older.id, newer.id, 0.93, 0.6)])
    [pair] = upkeep.near_duplicates(store, shop.id)
    syncs = count_team_syncs(monkeypatch)
    merged = write_path.merge(store, tui(repo), pair, "confirmed in agentctx tui")
    survivor = merged.new
    assert survivor.id == newer.id and survivor.pinned and survivor.confidence == "explicit"
    assert rec.get(store, older.id).superseded_by == newer.id
    assert files_of(store, newer.id) == [("file", "settings.py")]
    assert {e.actor for e in rec.edits_of(store, older.id)} == {"tui"}
    note = rec.supersession_note(store, newer.id, older.id)
    assert note is not None and note.startswith("near-duplicate merged by tui")
    assert syncs == [str(repo)]


def test_a_superseded_records_text_is_history_its_pin_is_not(
        store: Store, shop: Project, repo: Path,  # noqa: F811
        monkeypatch: pytest.MonkeyPatch) -> None:
    old = write_path.record(store, tui(repo), shop, Draft(type="decision", title="Use REST",
                                                          body="JSON.")).record
    write_path.supersede(store, tui(repo), old.id, Draft(type="", title="Use gRPC",
                                                         body="Protobuf."), "faster")
    syncs = count_team_syncs(monkeypatch)
    with pytest.raises(InvalidRecord, match="superseded; its text is history"):
        write_path.change(store, tui(repo), old.id, title="Use REST/JSON")
    with pytest.raises(InvalidRecord, match="superseded; its text is history"):
        write_path.edit(store, tui(repo), old.id, body="JSON, gzip.")
    kept = rec.get(store, old.id)
    assert (kept.title, kept.body) == ("Use REST", "JSON.") and syncs == []
    assert rec.edits_of(store, old.id)[-1].field == "superseded_by"
    assert write_path.pin(store, tui(repo), old.id, True).record.pinned
