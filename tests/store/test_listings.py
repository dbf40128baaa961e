"""Record listings for browsing: filters, orders, pages and the counts that go with them."""

from __future__ import annotations

import pytest

from agentctx.store import Store, records, upkeep
from agentctx.store.models import Draft, Record
from agentctx.store.selection import Selection

P = "proj-a"


def add(db: Store, title: str, type_: str = "decision", *, project: str = P,
        **kw: object) -> Record:
    draft = Draft(type=type_, title=title, **kw)  # type: ignore[arg-type]
    return records.add(db, draft, project_id=project)


@pytest.fixture
def mixed(store: Store) -> dict[str, Record]:
    """Seven records of one project (one superseded, one retired, one archived) and a global
    preference."""
    made = {
        "rest": add(store, "Use REST", valid_from="2026-01-01", confidence="explicit"),
        "lint": add(store, "Lint with flake8", "convention", valid_from="2026-01-10"),
        "cache": add(store, "cache keys carry the tenant", "discovery", valid_from="2026-02-01",
                     confidence="reinforced", pinned=True),
        "bug": add(store, "Refunds off by a cent", "bugfix", valid_from="2026-02-15"),
        "old": add(store, "Deploy by hand", valid_from="2025-06-01"),
        "tabs": add(store, "Prefers tabs", "preference", scope="global", project="x",
                    valid_from="2026-01-05", confidence="explicit"),
    }
    made["grpc"] = records.supersede(store, made["rest"].id,
                                     Draft(type="", title="Use gRPC", valid_from="2026-03-01"),
                                     "REST was too slow", actor="cli")
    made["ci"] = records.supersede(store, made["old"].id,
                                   Draft(type="", title="Deploy from CI",
                                         valid_from="2025-09-01"), "manual deploys broke",
                                   actor="cli")
    upkeep.archive(store, [made["old"].pk])
    upkeep.retire(store, made["bug"].id, "fixed upstream", actor="cli")
    return made


def titles(found: list[Record]) -> list[str]:
    return [r.title for r in found]


def test_every_filter_and_its_count_agree(store: Store, mixed: dict[str, Record]) -> None:
    cases = [
        Selection(project_id=P),
        Selection(project_id=P, include_global=True),
        Selection(project_id=P, types=("decision",)),
        Selection(project_id=P, confidences=("explicit", "reinforced")),
        Selection(project_id=P, confidences=("explicit",), include_global=True),
        Selection(project_id=P, pinned=True),
        Selection(project_id=P, state="all"),
        Selection(project_id=P, state="superseded"),
        Selection(project_id=P, as_of="2026-02-20"),
        Selection(project_id=P, as_of="2025-07-01"),
    ]
    for selection in cases:
        found = records.list_records(store, selection)
        assert records.count_records(store, selection) == len(found), selection
    assert titles(records.list_records(store, Selection(project_id=P))) == [
        "Use gRPC", "cache keys carry the tenant", "Lint with flake8", "Deploy from CI"]
    assert "Prefers tabs" in titles(records.list_records(store,
                                                         Selection(project_id=P,
                                                                   include_global=True)))
    assert titles(records.list_records(store,
                                       Selection(project_id=P, confidences=("reinforced",)))) == [
        "cache keys carry the tenant"]
    assert set(titles(records.list_records(store,
                                           Selection(project_id=P, state="superseded")))) == {
        "Use REST", "Refunds off by a cent"}


def test_as_of_reads_the_archive_and_marks_archived_records(store: Store,
                                                            mixed: dict[str, Record]) -> None:
    then = records.list_records(store, Selection(project_id=P, as_of="2025-07-01"))
    assert titles(then) == ["Deploy by hand"]
    assert then[0].archived and not then[0].current
    before_grpc = records.list_records(store, Selection(project_id=P, as_of="2026-02-20"))
    assert set(titles(before_grpc)) == {"Use REST", "Lint with flake8", "Refunds off by a cent",
                                        "cache keys carry the tenant", "Deploy from CI"}
    assert records.as_of(store, P, "2026-02-20", include_global=False) == before_grpc


def test_pages_cover_the_listing_once_in_every_order(store: Store,
                                                     mixed: dict[str, Record]) -> None:
    for order in records.ORDERS:
        everything = records.list_records(store,
                                          Selection(project_id=P, include_global=True, state="all"),
                                          order=order)
        total = records.count_records(store,
                                      Selection(project_id=P, include_global=True, state="all"))
        assert len(everything) == total == 7
        pages = [records.list_records(store,
                                      Selection(project_id=P, include_global=True, state="all"),
                                      order=order, limit=3, offset=start)
                 for start in range(0, total, 3)]
        assert [r.id for page in pages for r in page] == [r.id for r in everything], order
    by_title = records.list_records(store, Selection(project_id=P), order="title")
    assert titles(by_title) == sorted(titles(by_title), key=str.lower)
    by_confidence = records.list_records(store, Selection(project_id=P), order="confidence")
    assert [r.confidence for r in by_confidence] == ["reinforced", "inferred", "inferred",
                                                     "inferred"]
    assert titles(records.list_records(store, Selection(project_id=P),
                                       order="oldest"))[0] == "Deploy from CI"
    assert records.list_records(store, Selection(project_id=P), offset=10) == []


def test_an_unknown_order_is_refused(store: Store) -> None:
    with pytest.raises(ValueError, match="unknown order 'size'"):
        records.list_records(store, Selection(project_id=P), order="size")


def test_edits_are_typed_values(store: Store) -> None:
    made = add(store, "Use gRCP")
    records.update(store, made.id, title="Use gRPC", actor="tui")
    records.set_pinned(store, made.id, True, actor="tui")
    trail = records.edits_of(store, made.id[:10])
    assert [(e.field, e.old_value, e.new_value, e.actor) for e in trail] == [
        ("title", "Use gRCP", "Use gRPC", "tui"), ("pinned", "0", "1", "tui")]
    assert all(e.changed_at.endswith("Z") for e in trail)


def test_a_page_walks_the_date_index_and_a_type_keeps_its_own(store: Store) -> None:
    """A page of a project's records is read in date order, not sorted from the whole project;
    a listing of one type goes through records_current (a rare type would walk every date)."""
    statements: list[str] = []
    store.conn.set_trace_callback(statements.append)
    records.list_records(store, Selection(project_id=P, include_global=True), limit=50)
    records.list_records(store, Selection(project_id=P, types=("profile",)), limit=50)
    store.conn.set_trace_callback(None)
    page, typed = (s for s in statements if s.startswith("SELECT"))
    plan = " | ".join(str(row[3]) for row in store.rows("EXPLAIN QUERY PLAN " + page))
    assert "records_project_valid" in plan and "TEMP B-TREE" not in plan, plan  # no sort at all
    typed_plan = " | ".join(str(row[3]) for row in store.rows("EXPLAIN QUERY PLAN " + typed))
    assert "records_current" in typed_plan, typed_plan
