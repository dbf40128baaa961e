"""Record operations on a real store: add, update, supersede, history, as-of, forget."""

from __future__ import annotations

import pytest

from agentctx.store import (
    AlreadySuperseded,
    AmbiguousId,
    InvalidRecord,
    NotFound,
    Store,
    graph,
    records,
    sessions,
)
from agentctx.store.models import Draft, Record

P = "proj-a"


def add(db: Store, title: str, type_: str = "decision", **kw: object) -> Record:
    return records.add(db, Draft(type=type_, title=title, **kw), project_id=P)  # type: ignore[arg-type]


def test_add_fills_provenance_and_bitemporal_fields(store: Store) -> None:
    r = add(store, "Use gRPC", body="protobuf", valid_from="2026-03-01", source="mcp_tool",
            confidence="explicit")
    assert len(r.id) == 26 and r.pk > 0
    assert r.valid_from == "2026-03-01T00:00:00.000Z"
    assert r.recorded_at > r.valid_from
    assert r.current and r.superseded_by is None
    assert r.source == "mcp_tool" and r.confidence == "explicit" and r.pending_embedding
    assert records.get(store, r.id) == r


@pytest.mark.parametrize(("draft", "message"), [
    (Draft(type="idea", title="x"), "unknown type"),
    (Draft(type="decision", title="   "), "title must not be empty"),
    (Draft(type="decision", title="x", body="y" * 8001), "limit is 8000"),
    (Draft(type="decision", title="x", scope="global"), "only preferences"),
    (Draft(type="decision", title="x", confidence="sure"), "unknown confidence"),
    (Draft(type="decision", title="x", valid_from="last tuesday"), "not an ISO date"),
])
def test_invalid_drafts_are_refused_and_change_nothing(store: Store, draft: Draft,
                                                       message: str) -> None:
    before = store.change_counter()
    with pytest.raises((InvalidRecord, ValueError), match=message):
        records.add(store, draft, project_id=P)
    assert store.change_counter() == before
    assert store.scalar("SELECT count(*) FROM records") == 0


def test_body_of_exactly_8000_characters_is_accepted(store: Store) -> None:
    assert len(add(store, "big", body="z" * 8000).body) == 8000


def _with_secrets(length: int) -> str:
    """A text of exactly ``length`` characters holding secrets whose markers are longer."""
    secret = "mysql -pS3cr3t7 db; "  # 7 characters become [REDACTED:cli-password] (23)
    text = secret * (length // len(secret))
    return text + "x" * (length - len(text))


def test_redaction_never_makes_a_valid_record_invalid(store: Store) -> None:
    body = _with_secrets(7979)
    title = _with_secrets(300).strip()
    record = add(store, title, body=body)
    assert "S3cr3t7" not in record.body + record.title
    assert len(record.body) > 8000 and len(record.title) > 300  # longer only by the markers
    assert record.body.replace("[REDACTED:cli-password]", "S3cr3t7") == body.strip()
    # Edits and supersession of such a record keep working.
    renamed = records.update(store, record.id, title="Use gRPC", actor="test")
    assert renamed.body == record.body
    successor = records.supersede(store, record.id, Draft(type="", title="", body=body), "why",
                                  actor="cli")
    assert successor.body == record.body
    with pytest.raises(InvalidRecord, match="limit is 8000"):
        add(store, "too long", body=_with_secrets(8001))


def test_secrets_are_redacted_before_storing(store: Store) -> None:
    r = add(store, "deploy key", body="token: ghp_" + "x" * 36)
    assert "ghp_" not in r.body and "[REDACTED:github-token]" in r.body


def test_global_preferences_live_under_the_global_project(store: Store) -> None:
    r = add(store, "Prefers tabs", "preference", scope="global")
    assert r.project_id == "global" and r.scope == "global"


def test_update_keeps_id_and_audits_old_values(store: Store) -> None:
    r = add(store, "Use gRCP", body="typo")
    updated = records.update(store, r.id, title="Use gRPC", actor="tui")
    assert updated.id == r.id and updated.title == "Use gRPC" and updated.pending_embedding
    trail = records.edits_of(store, r.id)
    assert [(e.field, e.old_value, e.new_value, e.actor) for e in trail] == [
        ("title", "Use gRCP", "Use gRPC", "tui")]
    assert trail[0].changed_at >= r.recorded_at


def test_access_counters_never_reindex_fts(store: Store) -> None:
    r = add(store, "Use gRPC", body="protobuf")
    fts_pages = store.scalar("SELECT count(*) FROM records_fts_data")
    counter = store.change_counter()
    records.touch(store, [r.id, r.id])
    assert store.scalar("SELECT count(*) FROM records_fts_data") == fts_pages
    assert store.change_counter() == counter
    assert records.get(store, r.id).access_count == 1


def test_supersede_is_atomic_and_links_with_rationale(store: Store) -> None:
    old = add(store, "Use REST", body="JSON", valid_from="2026-01-01")
    new = records.supersede(store, old.id, Draft(type="", title="", body="gRPC now",
                                                 valid_from="2026-03-01"), "latency", actor="cli")
    old = records.get(store, old.id)
    assert new.title == "Use REST" and new.type == "decision"  # defaults to the old record's
    assert old.superseded_at == new.valid_from and old.superseded_by == new.id
    assert records.supersession_note(store, new.id, old.id) == "latency"
    assert [e.rel_type for e in graph.edges_of(store, old.id)] == ["supersedes"]


def test_superseding_twice_is_refused(store: Store) -> None:
    old = add(store, "Use REST")
    records.supersede(store, old.id, Draft(type="", title="Use gRPC"), "latency", actor="cli")
    with pytest.raises(AlreadySuperseded, match="already superseded"):
        records.supersede(store, old.id, Draft(type="", title="Use GraphQL"), "fashion",
                          actor="cli")


def test_a_failed_supersede_changes_nothing(store: Store) -> None:
    old = add(store, "Use REST", valid_from="2026-05-01")
    before = store.change_counter()
    with pytest.raises(InvalidRecord, match="earlier"):
        records.supersede(store, old.id, Draft(type="", title="x", valid_from="2026-01-01"), "y",
                          actor="cli")
    with pytest.raises(InvalidRecord, match="rationale"):
        records.supersede(store, old.id, Draft(type="", title="x"), "  ", actor="cli")
    assert store.change_counter() == before
    assert records.get(store, old.id).current
    assert store.scalar("SELECT count(*) FROM records") == 1


def test_supersede_with_an_existing_record(store: Store) -> None:
    old, new = add(store, "nose"), add(store, "pytest")
    records.supersede(store, old.id, new.id, "nose is unmaintained", actor="cli")
    assert records.get(store, old.id).superseded_by == new.id
    with pytest.raises(InvalidRecord, match="itself"):
        records.supersede(store, new.id, new.id, "x", actor="cli")


def test_history_walks_the_chain_both_ways(store: Store) -> None:
    a = add(store, "REST", valid_from="2026-01-01")
    b = records.supersede(store, a.id, Draft(type="", title="gRPC", valid_from="2026-02-01"), "1",
                          actor="cli")
    c = records.supersede(store, b.id, Draft(type="", title="connect", valid_from="2026-03-01"),
                          "2", actor="cli")
    for member in (a, b, c):
        assert [r.title for r in records.history(store, member.id)] == ["REST", "gRPC", "connect"]


def test_as_of_answers_what_held_at_a_date(store: Store) -> None:
    a = add(store, "REST", valid_from="2026-01-01")
    records.supersede(store, a.id, Draft(type="", title="gRPC", valid_from="2026-04-01"), "x",
                      actor="cli")
    assert [r.title for r in records.as_of(store, P, "2026-02-15")] == ["REST"]
    assert [r.title for r in records.as_of(store, P, "2026-05-01")] == ["gRPC"]
    assert records.as_of(store, P, "2025-12-31") == []


def test_keyed_records_supersede_by_key(store: Store) -> None:
    first = add(store, "Test command: pytest", "profile", key="command.test")
    same = add(store, "Test command: pytest", "profile", key="command.test")
    assert same.id == first.id
    second = add(store, "Test command: make test", "profile", key="command.test")
    assert records.get(store, first.id).superseded_by == second.id
    assert records.find_current_by_key(store, P, "profile", "command.test") == second


def test_prefixes_resolve_like_git(store: Store) -> None:
    r = add(store, "one")
    assert records.get(store, r.id[:12].lower()).id == r.id
    with pytest.raises(NotFound, match="too short"):
        records.get(store, "01")
    with pytest.raises(NotFound):
        records.get(store, "ZZZZZZZZZZZZ")
    twins = [add(store, f"r{i}") for i in range(40)]
    common = twins[0].id[:4]
    if sum(t.id.startswith(common) for t in twins) > 1:
        with pytest.raises(AmbiguousId):
            records.resolve_id(store, common)
    shorts = records.short_ids(store, [t.id for t in twins])
    assert len(set(shorts.values())) == len(twins)
    for full, short in shorts.items():
        assert len(short) >= 8 and records.resolve_id(store, short) == full


def test_forget_removes_everywhere_and_closes_the_chain(store: Store) -> None:
    a = add(store, "REST", valid_from="2026-01-01")
    b = records.supersede(store, a.id, Draft(type="", title="secret gRPC", valid_from="2026-02-01"),
                          "x", actor="cli")
    c = records.supersede(store, b.id, Draft(type="", title="connect", valid_from="2026-03-01"),
                          "y", actor="cli")
    node = graph.ensure_node(store, P, "file", "api.py")
    graph.link_record(store, b.id, node)
    sessions.ensure(store, "s1", P)
    sessions.mark_seen(store, "s1", [b.id])
    records.forget(store, b.id, actor="cli")
    with pytest.raises(NotFound):
        records.get(store, b.id)
    assert store.scalar("SELECT count(*) FROM records_fts WHERE records_fts MATCH 'secret'") == 0
    assert store.scalar("SELECT count(*) FROM edges WHERE from_id = ? OR to_id = ?",
                        (b.id, b.id)) == 0
    assert store.scalar("SELECT count(*) FROM record_entities WHERE record_id = ?", (b.id,)) == 0
    assert sessions.seen(store, "s1") == set()
    assert records.get(store, a.id).superseded_by == c.id
    assert [r.title for r in records.history(store, c.id)] == ["REST", "connect"]


def test_forgetting_the_current_record_restores_its_predecessor(store: Store) -> None:
    a = add(store, "REST")
    b = records.supersede(store, a.id, Draft(type="", title="mistake"), "oops", actor="cli")
    records.forget(store, b.id, actor="cli")
    assert records.get(store, a.id).current


def test_change_counter_moves_on_meaningful_writes_only(store: Store) -> None:
    start = store.change_counter()
    r = add(store, "one")
    assert store.change_counter() == start + 1
    records.update(store, r.id, body="two", actor="cli")
    assert store.change_counter() == start + 2
    store.execute("UPDATE records SET score = 0.5, pending_embedding = 0 WHERE id = ?", (r.id,))
    assert store.change_counter() == start + 2


def test_get_many_keeps_order_and_names_what_it_could_not_find(store: Store) -> None:
    a, b = add(store, "A"), add(store, "B")
    found, problems = records.get_many(store, [b.id, "0000", a.id[:12]])
    assert [r.id for r in found] == [b.id, a.id]
    assert len(problems) == 1 and problems[0].startswith("0000: ")
