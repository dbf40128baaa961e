"""Supersession chains of a project in one call: versions, rationales, order, pages."""

from __future__ import annotations

from agentctx.store import Store, chains, records, upkeep
from agentctx.store.models import Draft, Record

P = "proj-a"


def add(db: Store, title: str, when: str, type_: str = "decision", project: str = P,
        **kw: object) -> Record:
    return records.add(db, Draft(type=type_, title=title, valid_from=when, **kw),  # type: ignore[arg-type]
                       project_id=project)


def replace(db: Store, old: Record, title: str, when: str, why: str) -> Record:
    return records.supersede(db, old.id, Draft(type="", title=title, valid_from=when), why,
                             actor="cli")


def test_a_projects_chains_with_versions_rationales_and_the_archive(store: Store) -> None:
    rest = add(store, "Use REST", "2025-01-01")
    grpc = replace(store, rest, "Use gRPC", "2025-06-01", "REST was too slow")
    connect = replace(store, grpc, "Use connect-python", "2026-02-01", "browsers need JSON")
    nose = add(store, "Test with nose", "2025-03-01", "convention")
    pytest_ = replace(store, nose, "Test with pytest", "2025-04-01", "nose is dead")
    add(store, "Never superseded", "2025-02-01")
    add(store, "Other project", "2025-02-01", project="proj-b")
    upkeep.archive(store, [rest.pk])

    found = chains.chains(store, P)
    assert chains.count_chains(store, P) == 2
    assert [c.head.id for c in found] == [connect.id, pytest_.id]  # newest change first
    api = found[0]
    assert [v.record.title for v in api.versions] == ["Use REST", "Use gRPC",
                                                      "Use connect-python"]
    assert [v.rationale for v in api.versions] == ["REST was too slow", "browsers need JSON",
                                                   None]
    assert api.versions[0].record.archived and api.head.current
    assert api.changed_at == connect.valid_from
    assert chains.chains(store, "proj-b") == []


def test_pages_types_and_the_global_profile(store: Store) -> None:
    heads = []
    for n in range(5):
        first = add(store, f"fact {n}", f"2025-0{n + 1}-01")
        heads.append(replace(store, first, f"fact {n} revised", f"2025-0{n + 1}-15", "changed"))
    tabs = add(store, "Prefers tabs", "2025-01-01", "preference", project="x", scope="global")
    replace(store, tabs, "Prefers spaces", "2026-01-01", "team style")

    everything = chains.chains(store, P)
    pages = [chains.chains(store, P, limit=2, offset=start) for start in (0, 2, 4)]
    assert [c.head.id for page in pages for c in page] == [c.head.id for c in everything]
    assert [c.head.id for c in everything] == [h.id for h in reversed(heads)]
    with_global = chains.chains(store, P, include_global=True)
    assert with_global[0].head.title == "Prefers spaces"
    assert chains.count_chains(store, P, include_global=True) == 6
    assert chains.count_chains(store, P, include_global=True, types=("preference",)) == 1
    assert chains.chains(store, P, types=("convention",)) == []


def test_a_record_that_superseded_two_joins_both_chains(store: Store) -> None:
    a = add(store, "Lint with flake8", "2025-01-01", "convention")
    b = add(store, "Format with black", "2025-01-02", "convention")
    ruff = add(store, "Lint and format with ruff", "2025-05-01", "convention")
    records.supersede(store, a.id, ruff.id, "ruff does both", actor="cli")
    records.supersede(store, b.id, ruff.id, "ruff does both", actor="cli")
    [merged] = chains.chains(store, P)
    assert [v.record.id for v in merged.versions] == [a.id, b.id, ruff.id]
    assert chains.chain_of(store, b.id) == merged


def test_chain_of_a_record_never_superseded_is_itself(store: Store) -> None:
    alone = add(store, "Alone", "2025-01-01")
    assert chains.chain_of(store, alone.id).versions == (chains.Version(alone, None),)
