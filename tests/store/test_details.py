"""A record in full as one typed value: chain links with rationales, entities, edits."""

from __future__ import annotations

from agentctx.store import Store, details, graph, records, upkeep
from agentctx.store.details import ChainLink
from agentctx.store.models import Draft

P = "proj-a"


def test_detail_carries_chain_links_entities_and_edits(store: Store) -> None:
    rest = records.add(store, Draft(type="decision", title="Use REST", body="JSON",
                                    valid_from="2026-01-01", source="mcp_tool",
                                    session_id="s-1"), project_id=P)
    grpc = records.supersede(store, rest.id, Draft(type="", title="Use gRPC",
                                                   valid_from="2026-03-01"),
                             "REST was too slow", actor="cli")
    api = graph.ensure_node(store, P, "file", "src/api.py")
    graph.link_record(store, grpc.id, api)
    graph.link_record(store, grpc.id, graph.ensure_node(store, P, "module", "src/proto"),
                      rel="touches")
    records.set_pinned(store, grpc.id, True, actor="tui")

    current = details.detail(store, grpc.id[:12])
    assert current.record == records.get(store, grpc.id)
    assert current.supersedes == (ChainLink(rest.id, "Use REST", rest.valid_from,
                                            "REST was too slow"),)
    assert current.superseded_by is None and current.retired_because is None
    assert current.files == ("src/api.py",)
    assert [(e.node.kind, e.node.name, e.rel) for e in current.entities] == [
        ("file", "src/api.py", "applies_to"), ("module", "src/proto", "touches")]
    assert [(e.field, e.new_value, e.actor) for e in current.edits] == [("pinned", "1", "tui")]

    old = details.detail(store, rest.id)
    assert old.record.source == "mcp_tool" and old.record.session_id == "s-1"
    assert old.superseded_by == ChainLink(grpc.id, "Use gRPC", grpc.valid_from,
                                          "REST was too slow")
    assert old.supersedes == ()
    assert [e.field for e in old.edits] == ["superseded_by"]


def test_a_retired_record_says_why_and_an_archived_one_is_flagged(store: Store) -> None:
    flaky = records.add(store, Draft(type="bugfix", title="Flaky login test"), project_id=P)
    upkeep.retire(store, flaky.id, "the test was deleted", actor="cli")
    retired = details.detail(store, flaky.id)
    assert retired.retired_because == "the test was deleted" and retired.superseded_by is None

    first = records.add(store, Draft(type="decision", title="Deploy by hand",
                                     valid_from="2025-01-01"), project_id=P)
    records.supersede(store, first.id, Draft(type="", title="Deploy from CI"), "it broke",
                      actor="cli")
    upkeep.archive(store, [first.pk])
    archived = details.detail(store, first.id)
    assert archived.record.archived and archived.superseded_by is not None
    assert archived.superseded_by.title == "Deploy from CI"


def test_a_forgotten_neighbour_keeps_its_id_without_a_title(store: Store) -> None:
    a = records.add(store, Draft(type="decision", title="A", valid_from="2026-01-01"),
                    project_id=P)
    b = records.supersede(store, a.id, Draft(type="", title="B", valid_from="2026-02-01"), "b",
                          actor="cli")
    c = records.supersede(store, b.id, Draft(type="", title="C", valid_from="2026-03-01"), "c",
                          actor="cli")
    graph.add_edge(store, c.id, "01" + "Z" * 24, "supersedes", note="imported")
    item = details.detail(store, c.id)
    assert [(link.id, link.title) for link in item.supersedes] == [
        (b.id, "B"), ("01" + "Z" * 24, None)]


def test_details_of_many_refs_keeps_order_drops_repeats_and_reports_problems(
        store: Store) -> None:
    a = records.add(store, Draft(type="decision", title="A"), project_id=P)
    b = records.add(store, Draft(type="convention", title="B"), project_id=P)
    found, problems = details.details(store, [b.id, "nope-nope", a.id, b.id[:12]])
    assert [item.record.id for item in found] == [b.id, a.id]
    assert len(problems) == 1 and problems[0].startswith("nope-nope: ")
