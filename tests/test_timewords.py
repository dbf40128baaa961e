"""Time words in prompts: the windows they name, and search ranking records dated inside them."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from agentctx.core.ids import NOW_ENV, to_iso
from agentctx.core.timewords import read
from agentctx.core.words import TIME_WORDS, tokens
from agentctx.store import Store, records
from agentctx.store.models import Draft
from agentctx.store.search import Query, search
from agentctx.store.selection import Selection

NOW = datetime(2026, 11, 18, 15, 0, tzinfo=UTC)  # a Wednesday


@pytest.mark.parametrize(("prompt", "start", "end"), [
    ("where did I leave off yesterday?", "2026-11-17", "2026-11-18"),
    ("the day before yesterday we changed the builds", "2026-11-16", "2026-11-17"),
    ("what did we change last week?", "2026-11-08", "2026-11-17"),
    ("about two weeks ago we fixed it", "2026-10-31", "2026-11-08"),
    ("what did I buy ten days ago?", "2026-11-05", "2026-11-11"),
    ("a couple weeks back we decided", "2026-10-31", "2026-11-08"),
    ("what did we decide in March?", "2026-03-01", "2026-04-01"),
    ("back in december 2025", "2025-12-01", "2026-01-01"),
    ("since last week the build is slow", "2026-11-08", "2026-11-18"),
    ("anything new this month", "2026-10-31", "2026-11-18"),
    ("the flaky test we saw recently", "2026-11-04", "2026-11-18"),
])
def test_phrases_name_windows(prompt: str, start: str, end: str) -> None:
    window = read(prompt, NOW)
    assert window is not None and (window.start[:10], window.end[:10]) == (start, end)


@pytest.mark.parametrize("prompt", ["we may want a cache here", "add a start script",
                                    "how do we deploy", "month-end close job is slow"])
def test_ordinary_words_name_no_time(prompt: str) -> None:
    window = read(prompt, NOW)
    assert window is None or not window.start, window


def test_relative_windows_wait_for_the_project_or_the_event() -> None:
    start = read("right at the start of the project, what did we pick?", NOW)
    assert start is not None and start.project_days == 30 and not start.start
    since = read("since the grpc migration, how do services call each other?", NOW)
    assert since is not None and since.since_event == "grpc migration"


@pytest.fixture
def dated(store: Store, monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    monkeypatch.setenv(NOW_ENV, to_iso(NOW))
    made = {}
    for key, days, type_, title in [
            ("kickoff", 300, "decision", "Lint Python with flake8"),
            ("old-bug", 40, "bugfix", "503 from the upstream proxy under load"),
            ("new-bug", 9, "bugfix", "503 from the upstream proxy after a deploy"),
            ("loadtest", 8, "discovery", "Load test: checkout holds 900 rps"),
            ("filler", 100, "decision", "Background jobs use RabbitMQ"),
            ("migration", 60, "decision", "Services moved to the gRPC migration plan")]:
        made[key] = records.add(store, Draft(type=type_, title=title,
                                             valid_from=to_iso(NOW - timedelta(days=days))),
                                project_id="p").id
    return made


def test_search_ranks_records_dated_in_the_window_first(store: Store,
                                                        dated: dict[str, str]) -> None:
    hits = search(store,
                  Query("that 503 thing we fixed last week, what was the cause",
                        Selection(project_id="p", include_global=True)))
    assert hits[0].record.id == dated["new-bug"] and hits[0].dated
    assert dated["old-bug"] in [h.record.id for h in hits]  # nothing is hidden
    plain = search(store,
                   Query("503 upstream proxy", Selection(project_id="p", include_global=True)))
    assert not any(h.dated for h in plain)


def test_a_prompt_with_only_a_time_finds_that_times_records(store: Store,
                                                            dated: dict[str, str]) -> None:
    hits = search(store,
                  Query("what did we change last week?",
                        Selection(project_id="p", include_global=True)))
    assert {h.record.id for h in hits} == {dated["new-bug"], dated["loadtest"]}
    assert all(h.dated and h.relevance == 0.5 for h in hits)
    start = search(store,
                   Query("at the start of the project what did we pick?",
                         Selection(project_id="p", include_global=True)))
    assert [h.record.id for h in start] == [dated["kickoff"]]


def test_since_an_event_needs_one_record_naming_it(store: Store, dated: dict[str, str]) -> None:
    hits = search(store,
                  Query("since the grpc migration, which bugs came up?",
                        Selection(project_id="p", include_global=True)))
    assert {h.record.id for h in hits if h.dated} == {dated["old-bug"], dated["new-bug"],
                                                      dated["loadtest"], dated["migration"]}
    vague = search(store,
                   Query("since the outage, which bugs came up?",
                         Selection(project_id="p", include_global=True)))
    assert not any(h.dated for h in vague)


def test_as_of_stays_explicit(store: Store, dated: dict[str, str]) -> None:
    hits = search(store,
                  Query("503 proxy last week",
                        Selection(project_id="p", include_global=True, as_of=to_iso(NOW))))
    assert hits and not any(h.dated for h in hits)


@pytest.mark.parametrize("prompt", ["what broke in the past few days?",
                                    "what did we do this afternoon?",
                                    "when we started, what did we pick?"])
def test_every_phrase_the_reader_knows_reaches_the_search(prompt: str) -> None:
    """The search reads a time phrase only when the prompt has a time word: every phrase the
    reader knows is made of them (one list, :data:`agentctx.core.words.TIME_WORDS`)."""
    assert read(prompt, NOW) is not None
    assert not TIME_WORDS.isdisjoint(tokens(prompt))


def test_a_time_named_by_words_the_old_hints_missed_is_searched(
        store: Store, dated: dict[str, str]) -> None:
    fresh = records.add(store, Draft(type="discovery", title="Checkout p99 doubled",
                                     valid_from=to_iso(NOW - timedelta(days=2))),
                        project_id="p").id
    hits = search(store,
                  Query("what changed in the past few days?",
                        Selection(project_id="p", include_global=True)))
    assert [h.record.id for h in hits] == [fresh] and hits[0].dated


def test_a_phrase_pattern_is_compiled_only_for_a_prompt_with_its_words(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Compiling every phrase pattern costs a prompt hook ~2 ms; a prompt compiles only the
    patterns whose words it holds, and finds the same window."""
    from agentctx.core import timewords

    monkeypatch.setattr(timewords, "_COMPILED", {})
    assert read("why did we move billing from REST to gRPC?", NOW) is None
    assert timewords._COMPILED == {}
    found = read("how should the cache read its settings at start-up", NOW)
    assert found is None and set(timewords._COMPILED) == {"start"}
    window = read("what did we decide two weeks ago about billing?", NOW)
    assert window is not None and window.phrase == "two weeks ago"
    assert set(timewords._COMPILED) == {"start", "ago"}
