"""The one search function: safe on any input, ranked, filtered, degrading cleanly."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agentctx.store import Store, graph, records
from agentctx.store.models import Draft
from agentctx.store.search import Query, search
from agentctx.store.selection import Selection
from agentctx.store.textproc import query_terms

P = "proj-a"


@pytest.fixture
def seeded(store: Store) -> Store:
    def add(title: str, body: str = "", type_: str = "decision", **kw: object) -> str:
        return records.add(store, Draft(type=type_, title=title, body=body, **kw),  # type: ignore[arg-type]
                           project_id=str(kw.pop("project", P)) if "project" in kw else P).id

    add("Internal API uses gRPC", "Services talk protobuf over gRPC; REST was too slow.")
    add("Tests run with pytest -n auto", "xdist parallelism; no shared state across workers.")
    add("Money is integer cents", "Never floats for amounts.", pinned=True)
    add("Postgres advisory locks are session scoped", "Release before returning to the pool.",
        "discovery")
    add("Webhook handler crashed on unknown event types", "KeyError on new types.", "bugfix")
    add("useAuthStore holds the session token", "The React store in web/auth.ts.", "discovery")
    for i in range(30):
        add(f"Filler decision {i} about logging format", f"structlog key value pairs {i}",
            "convention")
    records.add(store, Draft(type="decision", title="Other project uses gRPC too"),
                project_id="proj-b")
    return store


def titles(db: Store, text: str, limit: int = 10, backend: str = "fts",
           **where: object) -> list[str]:
    selection = Selection(project_id=P, include_global=True)._replace(**where)  # type: ignore[arg-type]
    return [h.record.title for h in search(db, Query(text, selection, limit=limit,
                                                     backend=backend))]


def test_finds_by_words_with_stop_words_dropped(seeded: Store) -> None:
    assert titles(seeded, "what do we use for the internal API?")[0] == "Internal API uses gRPC"
    assert titles(seeded, "where is useAuthStore")[0] == "useAuthStore holds the session token"


def test_or_semantics_and_relevance(seeded: Store) -> None:
    hits = search(seeded,
                  Query("grpc protobuf kubernetes", Selection(project_id=P, include_global=True)))
    assert hits[0].record.title == "Internal API uses gRPC"
    assert set(hits[0].matched) == {"grpc", "protobuf"}
    assert 0 < hits[0].relevance < 1  # 'kubernetes' matched nothing and weighs in
    full = search(seeded, Query("grpc protobuf", Selection(project_id=P, include_global=True)))[0]
    assert full.relevance == pytest.approx(1.0)


def test_project_scoping(seeded: Store) -> None:
    assert "Other project uses gRPC too" not in titles(seeded, "grpc")
    everywhere = [h.record.title for h in search(seeded, Query("grpc"))]
    assert "Other project uses gRPC too" in everywhere


def test_pinned_records_come_first(seeded: Store) -> None:
    hits = titles(seeded, "integer cents grpc")
    assert hits[0] == "Money is integer cents"


def test_superseded_records_are_hidden_unless_asked(seeded: Store) -> None:
    old = search(seeded, Query("grpc", Selection(project_id=P, include_global=True)))[0].record
    records.supersede(seeded, old.id, Draft(type="", title="Internal API uses connect-rpc",
                                            body="grpc plus http json"), "browser clients",
                      actor="cli")
    current = titles(seeded, "grpc")
    assert "Internal API uses gRPC" not in current
    assert current[0] == "Internal API uses connect-rpc"
    both = titles(seeded, "grpc", state="all")
    assert both.index("Internal API uses connect-rpc") < both.index("Internal API uses gRPC")


def test_type_and_file_filters(seeded: Store) -> None:
    assert set(titles(seeded, "session", types=("discovery",))) == {
        "Postgres advisory locks are session scoped", "useAuthStore holds the session token"}
    target = search(seeded,
                    Query("webhook", Selection(project_id=P, include_global=True)))[0].record
    node = graph.ensure_node(seeded, P, "file", "harbor/webhooks.py")
    graph.link_record(seeded, target.id, node)
    assert titles(seeded, "handler types", file="harbor/webhooks.py") == [target.title]
    assert titles(seeded, "handler types", file="webhooks.py") == [target.title]
    assert titles(seeded, "handler types", file="other.py") == []


def test_fixed_candidate_pool_keeps_top_k_stable(seeded: Store) -> None:
    ten = titles(seeded, "logging format structlog decision", limit=10)
    five = titles(seeded, "logging format structlog decision", limit=5)
    assert ten[:5] == five


@pytest.mark.parametrize("text", [
    '"', "NEAR(a b)", "a*", "-grpc", "title:grpc", "(((", "AND OR NOT", "ünïcödé ✓ 日本語",
    "", "   ", "'; DROP TABLE records; --", "{title}: x", "^start", "a\x00b",
])
def test_hostile_queries_never_raise(seeded: Store, text: str) -> None:
    search(seeded, Query(text, Selection(project_id=P, include_global=True)))


@settings(max_examples=150, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.text(max_size=80))
def test_any_text_is_a_valid_query(seeded: Store, text: str) -> None:
    for hit in search(seeded, Query(text, Selection(project_id=P, include_global=True), limit=3)):
        assert 0.0 <= hit.relevance <= 1.0


@pytest.mark.parametrize("backend", ["like", "pinned"])
def test_degradation_ladder(seeded: Store, backend: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AGENTCTX_SEARCH", "fts")  # the store reads no knob: the caller decides
    found = titles(seeded, "grpc protobuf", backend=backend)
    if backend == "like":
        assert found[0] == "Internal API uses gRPC"
    else:
        assert found == ["Money is integer cents"]


def test_the_store_reads_no_configuration(seeded: Store, isolated_home: Path) -> None:
    (isolated_home / "config.json").write_text('{"search": "pinned"}', encoding="utf-8")
    assert titles(seeded, "grpc protobuf")[0] == "Internal API uses gRPC"  # fts: the default
    assert titles(seeded, "grpc protobuf", backend="pinned") == ["Money is integer cents"]


def test_missing_fts_falls_back_to_like(seeded: Store) -> None:
    seeded.execute("DROP TABLE records_fts")
    assert seeded.has_fts() is False
    for trigger in ("records_fts_ai", "records_fts_ad", "records_fts_au"):
        seeded.execute(f"DROP TRIGGER {trigger}")
    assert titles(seeded, "grpc")[0] == "Internal API uses gRPC"


def test_as_of_search_sees_the_past(seeded: Store) -> None:
    old = records.add(seeded, Draft(type="decision", title="Deploy with Heroku",
                                    valid_from="2026-01-01"), project_id=P)
    records.supersede(seeded, old.id, Draft(type="", title="Deploy with Fly",
                                            valid_from="2026-06-01"), "cost", actor="cli")
    assert titles(seeded, "deploy", as_of="2026-03-01") == ["Deploy with Heroku"]
    assert titles(seeded, "deploy") == ["Deploy with Fly"]


def test_a_superseded_match_surfaces_the_record_now_in_force(store: Store) -> None:
    old = records.add(store, Draft(type="decision", title="Tests run with nose",
                                   body="Run nosetests from the root.",
                                   valid_from="2026-01-01"), project_id=P)
    new = records.supersede(store, old.id, Draft(type="", title="Tests run with pytest -n auto",
                                                 body="xdist parallelism.",
                                                 valid_from="2026-03-01"), "nose is dead",
                            actor="cli")
    [hit] = search(store, Query("still on nose?", Selection(project_id=P, include_global=True)))
    assert hit.record.id == new.id and hit.via == old.id
    assert "nose" in hit.matched and hit.relevance > 0.5
    both = search(store, Query("nose", Selection(project_id=P, include_global=True, state="all")))
    assert [h.record.id for h in both] == [new.id, old.id]
    then = search(store,
                  Query("nose", Selection(project_id=P, include_global=True, as_of=old.valid_from)))
    assert [h.record.id for h in then] == [old.id]


def test_a_retired_record_surfaces_nothing(store: Store) -> None:
    old = records.add(store, Draft(type="preference", title="Prefers tabs"), project_id=P)
    store.execute("UPDATE records SET superseded_at = ? WHERE id = ?", (old.recorded_at, old.id))
    assert search(store, Query("tabs", Selection(project_id=P, include_global=True))) == []


def test_where_did_we_leave_off_brings_the_latest_handover(store: Store) -> None:
    records.add(store, Draft(type="decision", title="Tables are plural snake_case"), project_id=P)
    handover = records.add(store, Draft(type="handover", title="Moving refunds to payments/",
                                        body="Next: the API handler.", key="worktree:/w"),
                           project_id=P)
    hits = search(store,
                  Query("where did we leave off last time?",
                        Selection(project_id=P, include_global=True)))
    assert hits[0].record.id == handover.id and hits[0].relevance == 1.0


def test_an_intent_phrase_with_a_topic_needs_the_topic_matched(store: Store) -> None:
    _filler(store)
    records.add(store, Draft(type="discovery", title="Postgres sequences leave gaps"),
                project_id=P)
    handover = records.add(store, Draft(type="handover", title="Moving refunds to payments/",
                                        body="Next: the refund API handler.", key="worktree:/w"),
                           project_id=P)
    # The handover ranks first, but a prompt about something else gets no relevance from it.
    other = search(store,
                   Query("last time we deployed the mobile app it crashed",
                         Selection(project_id=P, include_global=True)))
    assert other[0].record.id == handover.id and other[0].relevance < 0.25
    about = search(store,
                   Query("what are the next steps for the refunds",
                         Selection(project_id=P, include_global=True)))
    assert about[0].record.id == handover.id and about[0].relevance > 0.8
    # The words of the phrase are phrasing: "leave" does not find the sequences discovery.
    pure = search(store,
                  Query("where did we leave off?", Selection(project_id=P, include_global=True)))
    assert [(h.record.id, h.relevance) for h in pure] == [(handover.id, 1.0)]


FILLER = ["Deploy with Helm to the staging cluster", "Invoices are PDFs rendered by WeasyPrint",
          "Background jobs run on Dramatiq", "Logs are structlog key-value events",
          "Money is stored in integer cents", "Feature flags live in Unleash"]


def _filler(store: Store) -> None:
    """A few unrelated records, so that a matched word is rare in the store, as in real use."""
    for title in FILLER:
        records.add(store, Draft(type="decision", title=title), project_id=P)


def test_an_unknown_rare_word_weighs_more_than_an_unknown_common_one(store: Store) -> None:
    _filler(store)
    records.add(store, Draft(type="decision", title="Tests use pytest",
                             body="make test runs the suite"), project_id=P)
    phrasing = search(store,
                      Query("how do i run tests, they seem stuck",
                            Selection(project_id=P, include_global=True)))
    topic = search(store,
                   Query("run storybook tests", Selection(project_id=P, include_global=True)))
    assert phrasing[0].relevance > 0.5 > topic[0].relevance


def test_an_unknown_word_weighs_more_the_rarer_it_is_in_english(store: Store) -> None:
    _filler(store)
    records.add(store, Draft(type="decision", title="Invoices are sent by email",
                             body="Postmark delivers them."), project_id=P)
    relevance = {word: search(store,
                              Query(f"invoices {word}",
                                    Selection(project_id=P, include_global=True)))[0].relevance
                 for word in ("today", "weekend", "quarterly", "storybook")}
    # "today" is very frequent, "weekend" less so, "quarterly" rare, "storybook" not listed.
    assert relevance["today"] > relevance["weekend"] > relevance["quarterly"] > \
        relevance["storybook"]


def test_words_of_software_work_count_as_phrasing(store: Store) -> None:
    _filler(store)
    records.add(store, Draft(type="decision", title="Dependencies are managed with uv",
                             body="uv sync installs them."), project_id=P)
    # "deps" and "repo" are not English dictionary words, but they are not topics either.
    hit = search(store,
                 Query("uv deps in this repo", Selection(project_id=P, include_global=True)))[0]
    assert hit.relevance > 0.7  # as rare topic words they would leave it under 0.2


def test_contractions_typed_without_apostrophes_are_stop_words() -> None:
    assert query_terms("whats the deal, dont we use uv? it isnt working") == [
        "deal", "use", "uv", "working"]


def test_a_type_filter_applies_before_the_candidate_pool_is_cut(store: Store) -> None:
    with store.write():
        for n in range(250):
            records.add(store, Draft(type="decision", title=f"Cache layer decision {n}",
                                     body="cache cache cache"), project_id=P)
        wanted = records.add(store, Draft(type="bugfix", title="Stale entries after deploy",
                                          body="The cache kept old entries. " + "x " * 300),
                             project_id=P)
    hits = search(store,
                  Query("cache", Selection(project_id=P, include_global=True, types=("bugfix",))))
    assert [h.record.id for h in hits] == [wanted.id]
    assert hits[0].relevance == 1.0
