"""The browser's writes and searches go through the use-case layer: a supersede keeps the
predecessor's files, refuses an empty body, is stored and audited as ``tui`` and brings the team
file in step once; the forget question names the record current again; a filtered search fills
the table with matching hits."""

from __future__ import annotations

import os

import pytest
from textual.pilot import Pilot

from agentctx import team
from agentctx.store import Store, graph
from agentctx.store import projects as proj
from agentctx.store import records as rec
from agentctx.store.models import Draft, Record
from agentctx.store.selection import Selection
from agentctx.tui.records_pane import RecordsPane
from agentctx.tui.widgets.confirm import ConfirmScreen
from agentctx.tui.widgets.record_form import SupersedeForm
from tests.support.gitrepo import git
from tests.support.teamsync_spy import count_team_syncs
from tests.tui.conftest import Demo, app_on, run, settle

DB_NAME = "agentctx.db"
DRAMATIQ = "Background jobs run on Dramatiq with the Postgres broker"


def the(demo: Demo, title: str) -> Record:
    with Store.open(demo.home / DB_NAME) as db:
        [found] = [r for r in rec.list_records(db, Selection(project_id=demo.project_id))
                   if r.title == title]
        return found


async def find(pilot: Pilot[None], query: str) -> Record:
    await pilot.press("slash", *query, "enter")
    await settle(pilot)
    record = pilot.app.query_one(RecordsPane).highlighted()
    assert record is not None
    return record


def test_supersede_keeps_the_files_is_stored_as_tui_and_syncs_the_team_file_once(
        demo_store: Demo, monkeypatch: pytest.MonkeyPatch) -> None:
    git(demo_store.folder, "init", "-q", "-b", "main")
    monkeypatch.chdir(demo_store.folder)
    with Store.open(demo_store.home / DB_NAME) as db:
        old = the(demo_store, DRAMATIQ)
        with db.write():
            graph.link_record(db, old.id, graph.ensure_node(db, demo_store.project_id, "file",
                                                            "harbor/jobs/worker.py"))
        team.turn_on(db, proj.get(db, demo_store.project_id), demo_store.folder)
    syncs = count_team_syncs(monkeypatch)

    async def steps(pilot: Pilot[None]) -> None:
        await find(pilot, "Dramatiq")
        await pilot.press("s", *"Jobs run on Celery", "tab", "tab", *"Dramatiq was dropped",
                          "ctrl+s")
        await settle(pilot)
        form = pilot.app.screen
        assert isinstance(form, SupersedeForm)  # an empty body is refused beside the body
        assert "body is required" in str(form.query_one("#body-error").render())
        assert syncs == []
        await pilot.press("shift+tab", *"Celery with Redis", "ctrl+s")
        await settle(pilot)
        assert not isinstance(pilot.app.screen, SupersedeForm)

    run(app_on(demo_store), steps)
    assert syncs == [str(demo_store.folder)]
    with Store.open(demo_store.home / DB_NAME) as db:
        replaced = rec.get(db, old.id)
        assert replaced.superseded_by is not None
        new = rec.get(db, replaced.superseded_by)
        assert (new.title, new.body, new.source) == ("Jobs run on Celery", "Celery with Redis",
                                                      "tui")
        assert [link.node.name for link in graph.entities_of(db, new.id)] == [
            "harbor/jobs/worker.py"]
        assert [(e.field, e.actor) for e in rec.edits_of(db, old.id)] == [
            ("superseded_by", "tui")]
    text = (demo_store.folder / team.TEAM_FILE).read_text(encoding="utf-8")
    assert "### Jobs run on Celery" in text


def test_the_forget_question_names_the_record_current_again(demo_store: Demo) -> None:
    old = the(demo_store, DRAMATIQ)
    with Store.open(demo_store.home / DB_NAME) as db:
        new = rec.supersede(db, old.id, Draft(type="", title="Jobs run on Celery",
                                              body="Celery with Redis"), "dropped",
                            actor="cli")
        short = rec.short_ids(db, [old.id])[old.id]

    async def steps(pilot: Pilot[None]) -> None:
        await find(pilot, "Celery")
        await pilot.press("d")
        await pilot.pause()
        question = pilot.app.screen
        assert isinstance(question, ConfirmScreen)
        assert f"Current again: {short} “{DRAMATIQ}”" in question.question
        await pilot.press("y")
        await settle(pilot)
        assert any(f"Current again: {short}" in str(n.message)
                   for n in pilot.app._notifications)

    run(app_on(demo_store), steps)
    with Store.open(demo_store.home / DB_NAME) as db:
        assert rec.get(db, old.id).current
        assert rec.get_many(db, [new.id])[0] == []


def test_a_filtered_search_fills_the_table_with_matching_hits(demo_store: Demo) -> None:
    """120 explicit records outrank 10 inferred ones for "cache": a search cut at its limit
    before the filter would show none of the inferred."""
    with Store.open(demo_store.home / DB_NAME) as db, db.write():
        for n in range(120):
            rec.add(db, Draft(type="discovery", title=f"Cache layer note {n}",
                              body="the cache keeps entries", confidence="explicit"),
                    project_id=demo_store.project_id)
        inferred = {rec.add(db, Draft(type="discovery", title=f"Cache layer guess {n}",
                                      body="the cache keeps entries", confidence="inferred"),
                            project_id=demo_store.project_id).id for n in range(10)}

    async def steps(pilot: Pilot[None]) -> None:
        pane = pilot.app.query_one(RecordsPane)
        pane.filters = pane.filters._replace(confidences=("inferred",))
        pane.reload()
        await settle(pilot)
        await find(pilot, "cache")
        assert set(pane.records) == inferred

    run(app_on(demo_store), steps)


def test_a_write_whose_team_file_cannot_follow_says_so_and_holds(
        demo_store: Demo, monkeypatch: pytest.MonkeyPatch) -> None:
    git(demo_store.folder, "init", "-q", "-b", "main")
    monkeypatch.chdir(demo_store.folder)
    with Store.open(demo_store.home / DB_NAME) as db:
        team.turn_on(db, proj.get(db, demo_store.project_id), demo_store.folder)
    path = demo_store.folder / team.TEAM_FILE
    path.unlink()
    os.mkfifo(path)  # a file agentctx refuses to write through
    said: list[str] = []

    async def steps(pilot: Pilot[None]) -> None:
        record = await find(pilot, "Dramatiq")
        assert not record.pinned
        await pilot.press("p")
        await settle(pilot)
        said.extend(str(n.message) for n in pilot.app._notifications)

    run(app_on(demo_store), steps)
    assert any(m.startswith("pinned ") for m in said), said
    assert any(m.startswith("team file not updated: ") for m in said), said
    assert the(demo_store, DRAMATIQ).pinned
