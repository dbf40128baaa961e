"""Search as of a date sees archived records; every other search and every write keeps them out
of (or consistent in) the archive's full-text index."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentctx.core.ids import now_iso
from agentctx.store import Store, graph, projects, records, upkeep
from agentctx.store.models import Draft, Record
from agentctx.store.search import Query, search
from agentctx.store.selection import Selection

P = "proj-a"
FILLER = ["Invoices are PDFs rendered by WeasyPrint", "Background jobs run on Dramatiq",
          "Logs are structlog key-value events", "Money is stored in integer cents",
          "Feature flags live in Unleash", "Tables are plural snake_case"]


def archive_superseded(db: Store) -> int:
    """Move every superseded record to the archive, as consolidation does once they are old."""
    return upkeep.archive(db, upkeep.archivable(db, superseded_before=now_iso()))


def check_indexes(db: Store) -> None:
    """Both full-text indexes hold exactly their tables' rows (raises otherwise)."""
    for index in ("records_fts", "records_archive_fts"):
        db.execute(f"INSERT INTO {index}({index}, rank) VALUES ('integrity-check', 1)")


def archive_count(db: Store, word: str) -> int:
    return int(db.scalar("SELECT count(*) FROM records_archive_fts "
                         "WHERE records_archive_fts MATCH ?", (word,)))


@pytest.fixture
def deploys(store: Store) -> tuple[Record, Record]:
    """Heroku (2025-01 to 2025-06), then Fly; Heroku archived."""
    for title in FILLER:
        records.add(store, Draft(type="decision", title=title, valid_from="2024-06-01"),
                    project_id=P)
    heroku = records.add(store, Draft(type="decision", title="Deploy with Heroku",
                                      body="git push heroku main", valid_from="2025-01-01"),
                         project_id=P)
    fly = records.supersede(store, heroku.id, Draft(type="", title="Deploy with Fly",
                                                    body="fly deploy from CI",
                                                    valid_from="2025-06-01"), "cost", actor="cli")
    assert archive_superseded(store) == 1
    assert records.get(store, heroku.id).archived
    return records.get(store, heroku.id), fly


def test_as_of_search_finds_an_archived_record_valid_then(store: Store,
                                                          deploys: tuple[Record, Record]) -> None:
    heroku, fly = deploys
    [hit] = search(store,
                   Query("how do we deploy to heroku?",
                         Selection(project_id=P, include_global=True, as_of="2025-03-01")))
    assert hit.record.id == heroku.id and hit.record.archived
    assert hit.record.title == "Deploy with Heroku" and hit.record.superseded_by == fly.id
    assert set(hit.matched) == {"deploy", "heroku"} and hit.relevance == 1.0
    # Outside its validity window it is not returned: before it, and once Fly replaced it.
    assert search(store,
                  Query("deploy heroku",
                        Selection(project_id=P, include_global=True, as_of="2024-12-01"))) == []
    later = search(store,
                   Query("deploy heroku",
                         Selection(project_id=P, include_global=True, as_of="2025-07-01")))
    assert [h.record.id for h in later] == [fly.id]
    # Every project, other filters: the same record, or nothing when a filter excludes it.
    assert [h.record.id for h in search(store, Query("heroku", Selection(as_of="2025-03-01")))] == \
        [heroku.id]
    assert search(store,
                  Query("heroku",
                        Selection(project_id="proj-b", include_global=False,
                                  as_of="2025-03-01"))) == []
    assert search(store,
                  Query("heroku",
                        Selection(project_id=P, include_global=True, types=("convention",),
                                  as_of="2025-03-01"))) == []


def test_a_search_without_as_of_never_returns_archived_records(
        store: Store, deploys: tuple[Record, Record]) -> None:
    heroku, fly = deploys
    for backend in ("fts", "like", "pinned"):
        for superseded in (False, True):
            hits = search(store,
                          Query("deploy heroku",
                                Selection(project_id=P, include_global=True,
                                          state=("all" if superseded else "current")),
                                backend=backend))
            assert heroku.id not in [h.record.id for h in hits]
            assert not any(h.record.archived for h in hits)
    assert [h.record.id for h in search(store,
                                        Query("deploy",
                                              Selection(project_id=P,
                                                        include_global=True)))] == [fly.id]


def test_an_archived_record_still_surfaces_the_record_now_in_force(
        store: Store, deploys: tuple[Record, Record]) -> None:
    """Consolidation archives what was superseded long ago; "are we still on heroku?" must still
    reach the record in force through the old one, as it did before the archive."""
    heroku, fly = deploys
    [hit] = search(store,
                   Query("are we still on heroku?", Selection(project_id=P, include_global=True)))
    assert hit.record.id == fly.id and hit.via == heroku.id
    assert hit.matched == ("heroku",) and hit.relevance > 0.5
    assert not hit.record.archived


def test_the_lift_walks_a_chain_of_archived_versions(store: Store) -> None:
    for title in FILLER:
        records.add(store, Draft(type="decision", title=title, valid_from="2024-06-01"),
                    project_id=P)
    nose = records.add(store, Draft(type="convention", title="Tests run with nose",
                                    valid_from="2024-01-01"), project_id=P)
    pytest_ = records.supersede(store, nose.id, Draft(type="", title="Tests run with pytest",
                                                      valid_from="2024-06-01"), "nose is dead",
                                actor="cli")
    xdist = records.supersede(store, pytest_.id, Draft(type="", title="Tests run in parallel "
                                                       "with pytest-xdist",
                                                       valid_from="2025-01-01"), "speed",
                              actor="cli")
    assert archive_superseded(store) == 2
    hits = search(store,
                  Query("which runner, still nose?", Selection(project_id=P, include_global=True)))
    assert [(h.record.id, h.via) for h in hits] == [(xdist.id, nose.id)]
    assert not search(store,
                      Query("nose", Selection(project_id=P, include_global=True, state="all")))[0] \
        .record.archived


@pytest.mark.parametrize("backend", ["like", "pinned"])
def test_the_fallback_backends_also_read_the_archive_as_of_a_date(store: Store,
                                                                  backend: str) -> None:
    old = records.add(store, Draft(type="convention", title="Branches are named feature/x",
                                   valid_from="2025-01-01", pinned=True), project_id=P)
    records.supersede(store, old.id, Draft(type="", title="Branches are named user/x",
                                           valid_from="2025-06-01"), "team rule", actor="cli")
    archive_superseded(store)
    hits = search(store,
                  Query("branches feature",
                        Selection(project_id=P, include_global=True, as_of="2025-03-01"),
                        backend=backend))
    assert [(h.record.id, h.record.archived) for h in hits] == [(old.id, True)]


def test_archived_and_live_records_rank_together_by_both_tables_frequencies(
        store: Store) -> None:
    # The archive holds three Heroku records: on its own it would score "heroku" and "deploy"
    # as worthless (in every archived row) and rank them below any live match.
    for title in FILLER:
        records.add(store, Draft(type="decision", title=title, valid_from="2024-06-01"),
                    project_id=P)
    chain = records.add(store, Draft(type="decision", title="Deploy with Heroku",
                                     body="Heroku review apps", valid_from="2024-07-01"),
                        project_id=P)
    for n, start in enumerate(("2024-09-01", "2025-01-01"), start=2):
        chain = records.supersede(store, chain.id, Draft(
            type="", title=f"Deploy with Heroku, take {n}", body="Heroku pipelines",
            valid_from=start), "revised", actor="cli")
    records.supersede(store, chain.id, Draft(type="", title="Run on Fly machines",
                                             valid_from="2025-06-01"), "cost", actor="cli")
    weak = records.add(store, Draft(type="decision", title="Staging runs docker compose",
                                    body="Run a deploy check first.", valid_from="2024-06-01"),
                       project_id=P)
    assert archive_superseded(store) == 3
    hits = search(store,
                  Query("deploy heroku",
                        Selection(project_id=P, include_global=True, as_of="2025-03-01")))
    assert [h.record.id for h in hits] == [chain.id, weak.id]
    assert hits[0].record.archived and hits[0].relevance > hits[1].relevance


def test_as_of_where_did_we_leave_off_brings_the_handover_of_that_time(store: Store) -> None:
    first = records.add(store, Draft(type="handover", title="Moving refunds to payments/",
                                     key="worktree:/w", valid_from="2025-01-01"), project_id=P)
    latest = records.add(store, Draft(type="handover", title="Billing export in progress",
                                      key="worktree:/w", valid_from="2025-02-01"), project_id=P)
    assert latest.id != first.id
    archive_superseded(store)
    [then] = search(store,
                    Query("where did we leave off?",
                          Selection(project_id=P, include_global=True, as_of="2025-01-15")))
    assert then.record.id == first.id and then.record.archived
    now = search(store,
                 Query("where did we leave off?", Selection(project_id=P, include_global=True)))
    assert [h.record.id for h in now] == [latest.id]


def test_the_file_filter_applies_to_archived_records(store: Store,
                                                     deploys: tuple[Record, Record]) -> None:
    heroku, _ = deploys
    node = graph.ensure_node(store, P, "file", "deploy/Procfile")
    graph.link_record(store, heroku.id, node)
    found = search(store,
                   Query("deploy",
                         Selection(project_id=P, include_global=True, as_of="2025-03-01",
                                   file="deploy/Procfile")))
    assert [h.record.id for h in found] == [heroku.id]
    assert search(store,
                  Query("deploy",
                        Selection(project_id=P, include_global=True, as_of="2025-03-01",
                                  file="src/app.py"))) == []


def test_forgetting_an_archived_record_removes_it_from_the_archive_index(
        store: Store, deploys: tuple[Record, Record]) -> None:
    heroku, _ = deploys
    assert archive_count(store, "heroku") == 1
    records.forget(store, heroku.id, actor="cli")
    assert archive_count(store, "heroku") == 0
    check_indexes(store)
    assert search(store,
                  Query("heroku",
                        Selection(project_id=P, include_global=True, as_of="2025-03-01"))) == []


def test_forgetting_the_successor_brings_an_archived_record_back_to_the_live_index(
        store: Store, deploys: tuple[Record, Record]) -> None:
    heroku, fly = deploys
    records.forget(store, fly.id,
                   actor="cli")  # Fly was a mistake: Heroku holds again, live and current
    assert archive_count(store, "heroku") == 0
    check_indexes(store)
    [hit] = search(store, Query("heroku", Selection(project_id=P, include_global=True)))
    assert hit.record.id == heroku.id and hit.record.current and not hit.record.archived
    [then] = search(store,
                    Query("heroku",
                          Selection(project_id=P, include_global=True, as_of="2025-03-01")))
    assert then.record.id == heroku.id and not then.record.archived


def test_merging_projects_re_homes_archived_records_in_the_index(store: Store, tmp_path: Path,
                                                                 project_dir: Path) -> None:
    old_dir = tmp_path / "old-location"
    old_dir.mkdir()
    old = projects.resolve(store, str(old_dir)).project
    new = projects.resolve(store, str(project_dir)).project
    first = records.add(store, Draft(type="decision", title="Queue on RabbitMQ",
                                     valid_from="2025-01-01"), project_id=old.id)
    records.supersede(store, first.id, Draft(type="", title="Queue on Kafka",
                                             valid_from="2025-06-01"), "throughput", actor="cli")
    archive_superseded(store)
    projects.merge(store, old.id, new.id)
    check_indexes(store)
    [hit] = search(store,
                   Query("rabbitmq",
                         Selection(project_id=new.id, include_global=True, as_of="2025-03-01")))
    assert hit.record.id == first.id and hit.record.archived and hit.record.project_id == new.id
    assert search(store,
                  Query("rabbitmq",
                        Selection(project_id=old.id, include_global=False,
                                  as_of="2025-03-01"))) == []
