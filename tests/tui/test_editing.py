"""Keyboard editing in the browser, driven by keys alone, checked against the store afterwards
(through the store API, and through a second process: ``agentctx show --json``)."""

from __future__ import annotations

import json
import sqlite3
from typing import Any

import pytest
from textual.pilot import Pilot
from textual.widgets import Input, TextArea, Tree

from agentctx.store import Store
from agentctx.store import chains as store_chains
from agentctx.store import records as rec
from agentctx.store.models import Record
from agentctx.tui.chains_pane import ChainsPane
from agentctx.tui.records_pane import RecordsPane
from agentctx.tui.widgets.confirm import ConfirmScreen
from agentctx.tui.widgets.record_form import RecordForm, SupersedeForm
from tests.conftest import run_cli
from tests.tui.conftest import Demo, app_on, run, settle

DB_NAME = "agentctx.db"


def stored(demo: Demo, ref: str) -> Record:
    with Store.open(demo.home / DB_NAME) as db:
        return rec.get(db, ref)


def current_titled(demo: Demo, title: str) -> list[Record]:
    with Store.open(demo.home / DB_NAME) as db:
        return [r for r in rec.list_records(db, project_id=demo.project_id, limit=500)
                if r.title == title]


def shown(ref: str) -> dict[str, Any]:
    result = run_cli("show", ref, "--json")
    assert result.returncode == 0, result.stderr
    value: dict[str, Any] = json.loads(result.stdout)
    return value


def screen(pilot: Pilot[None]) -> object:
    """The screen on top (a call, so each look is fresh to the type checker)."""
    return pilot.app.screen


async def find(pilot: Pilot[None], query: str) -> Record:
    """``/``, the query, ``enter``: the table's cursor on the first hit."""
    await pilot.press("slash", *query, "enter")
    await settle(pilot)
    pane = pilot.app.query_one(RecordsPane)
    record = pane.highlighted()
    assert record is not None
    return record


def test_the_correction_from_the_issue_shows_in_the_chains_pane(demo_store: Demo) -> None:
    """records `/` query `enter` `s` title tab body tab rationale ctrl+s → the chain link."""
    seen: dict[str, Record] = {}

    async def steps(pilot: Pilot[None]) -> None:
        old = await find(pilot, "Dramatiq")
        seen["old"] = old
        await pilot.press("s")
        await pilot.pause()
        assert isinstance(pilot.app.screen, SupersedeForm)
        await pilot.press(*"Background jobs run on Celery", "tab", *"Celery with Redis",
                          "tab", *"Dramatiq was dropped", "ctrl+s")
        await settle(pilot)
        assert not isinstance(screen(pilot), SupersedeForm)
        await pilot.press("3")
        await settle(pilot)
        tree = pilot.app.query_one(ChainsPane).query_one(Tree)
        labels = [str(node.label) for node in tree.root.children]
        assert any("Background jobs run on Celery" in label and "2 versions" in label
                   for label in labels), labels

    run(app_on(demo_store), steps)
    old = stored(demo_store, seen["old"].id)
    assert not old.current and old.superseded_by is not None
    new = stored(demo_store, old.superseded_by)
    assert (new.title, new.body, new.type) == ("Background jobs run on Celery",
                                               "Celery with Redis", "decision")
    with Store.open(demo_store.home / DB_NAME) as db:
        chain = store_chains.chain_of(db, new.id)
    assert [v.record.id for v in chain.versions] == [old.id, new.id]
    assert chain.versions[0].rationale == "Dramatiq was dropped"
    assert shown(old.id)["superseded_by"] == new.id


def test_supersede_without_a_rationale_writes_nothing(demo_store: Demo) -> None:
    async def steps(pilot: Pilot[None]) -> None:
        await find(pilot, "Dramatiq")
        await pilot.press("s", *"Jobs on Celery", "ctrl+s")
        await settle(pilot)
        form = pilot.app.screen
        assert isinstance(form, SupersedeForm)
        assert "rationale is required" in str(form.query_one("#rationale-error").render())
        await pilot.press("escape")
        await settle(pilot)
        assert not isinstance(screen(pilot), SupersedeForm)

    run(app_on(demo_store), steps)
    assert current_titled(demo_store, "Jobs on Celery") == []
    assert len(current_titled(demo_store,
                              "Background jobs run on Dramatiq with the Postgres broker")) == 1


def test_superseding_a_superseded_record_is_refused_with_the_stores_message(
        demo_store: Demo) -> None:
    async def steps(pilot: Pilot[None]) -> None:
        pane = pilot.app.query_one(RecordsPane)
        pane.filters = pane.filters._replace(state="superseded")
        pane.reload()
        await settle(pilot)
        record = pane.highlighted()
        assert record is not None and not record.current
        before = record
        await pilot.press("s")
        await settle(pilot)
        assert not isinstance(screen(pilot), SupersedeForm)
        assert any("already superseded" in str(n.message)
                   for n in pilot.app._notifications)
        assert stored(demo_store, before.id) == before

    run(app_on(demo_store), steps)


def test_new_record_form_validates_then_writes(demo_store: Demo) -> None:
    async def steps(pilot: Pilot[None]) -> None:
        await pilot.press("n")
        await pilot.pause()
        form = pilot.app.screen
        assert isinstance(form, RecordForm)
        assert form.focused is not None and form.focused.id == "type"
        # An empty title is refused beside the field; nothing is written.
        await pilot.press("ctrl+s")
        await pilot.pause()
        assert "title must not be empty" in str(form.query_one("#title-error").render())
        await pilot.press("tab", *"Deploys go out on Tuesdays", "tab", *"Never on Fridays",
                          "tab", "tab", *"deploy/schedule.yml", "ctrl+s")
        await settle(pilot)
        assert not isinstance(screen(pilot), RecordForm)

    run(app_on(demo_store), steps)
    [created] = current_titled(demo_store, "Deploys go out on Tuesdays")
    assert (created.type, created.body, created.confidence, created.scope) == (
        "decision", "Never on Fridays", "explicit", "project")
    assert shown(created.id)["files"] == ["deploy/schedule.yml"]


def test_global_scope_for_a_decision_is_refused_beside_the_scope(demo_store: Demo) -> None:
    async def steps(pilot: Pilot[None]) -> None:
        await pilot.press("n")
        await pilot.pause()
        form = pilot.app.screen
        assert isinstance(form, RecordForm)
        form.query_one("#scope").value = "global"  # type: ignore[attr-defined]
        await pilot.press("tab", *"Global decision", "ctrl+s")
        await pilot.pause()
        assert "global scope" in str(form.query_one("#scope-error").render())

    run(app_on(demo_store), steps)
    assert current_titled(demo_store, "Global decision") == []


def test_edit_keeps_the_id_is_audited_and_undo_puts_it_back(demo_store: Demo) -> None:
    seen: dict[str, Record] = {}

    async def steps(pilot: Pilot[None]) -> None:
        seen["old"] = await find(pilot, "advisory locks")
        await pilot.press("e")
        await pilot.pause()
        form = pilot.app.screen
        assert isinstance(form, RecordForm)
        assert form.focused is not None and form.focused.id == "title"  # type is kept
        await pilot.press("end", *" (and transaction-scoped ones exist)", "ctrl+s")
        await settle(pilot)
        assert not isinstance(screen(pilot), RecordForm)
        seen["edited"] = stored(demo_store, seen["old"].id)
        await pilot.press("u")
        await settle(pilot)

    run(app_on(demo_store), steps)
    old, edited = seen["old"], seen["edited"]
    assert edited.id == old.id
    assert edited.title == old.title + " (and transaction-scoped ones exist)"
    after = stored(demo_store, old.id)
    assert after.title == old.title
    edits = shown(old.id)["edits"]
    assert [(e["field"], e["actor"]) for e in edits] == [
        ("title", "tui"), ("title", "tui")]


def test_a_stale_form_refuses_to_save(demo_store: Demo) -> None:
    seen: dict[str, Record] = {}

    async def steps(pilot: Pilot[None]) -> None:
        record = await find(pilot, "advisory locks")
        await pilot.press("e")
        await pilot.pause()
        # Another process corrects the record while the form is open.
        result = run_cli("edit", record.id, "--title", "Changed by the CLI")
        assert result.returncode == 0, result.stderr
        await pilot.press("end", *" mine", "ctrl+s")
        await pilot.pause()
        form = pilot.app.screen
        assert isinstance(form, RecordForm)
        assert "changed elsewhere" in str(form.query_one("#form-error").render())
        seen["record"] = record

    run(app_on(demo_store), steps)
    assert stored(demo_store, seen["record"].id).title == "Changed by the CLI"


def test_pin_confidence_and_undo(demo_store: Demo) -> None:
    seen: dict[str, Record] = {}

    async def steps(pilot: Pilot[None]) -> None:
        record = await find(pilot, "advisory locks")
        seen["old"] = record
        await pilot.press("p")
        await settle(pilot)
        seen["pinned"] = stored(demo_store, record.id)
        await pilot.press("minus")
        await settle(pilot)
        seen["down"] = stored(demo_store, record.id)
        await pilot.press("u")
        await settle(pilot)
        seen["undone"] = stored(demo_store, record.id)
        await pilot.press("plus", "plus", "plus")
        await settle(pilot)

    run(app_on(demo_store), steps)
    old = seen["old"]
    assert seen["pinned"].pinned != old.pinned
    ladder = ("inferred", "reinforced", "explicit")
    assert ladder.index(seen["down"].confidence) == max(0, ladder.index(old.confidence) - 1)
    assert seen["undone"].confidence == old.confidence and seen["undone"].pinned != old.pinned
    assert stored(demo_store, old.id).confidence == "explicit"
    assert shown(old.id)["pinned"] is (not old.pinned)


def test_forget_asks_first_and_says_what_it_removes(demo_store: Demo) -> None:
    seen: dict[str, Record] = {}

    async def steps(pilot: Pilot[None]) -> None:
        record = await find(pilot, "advisory locks")
        seen["record"] = record
        await pilot.press("d")
        await pilot.pause()
        screen = pilot.app.screen
        assert isinstance(screen, ConfirmScreen)
        assert record.title in screen.question and "cannot be undone" in screen.question
        await pilot.press("n")
        await settle(pilot)
        assert stored(demo_store, record.id).id == record.id
        await pilot.press("d", "y")
        await settle(pilot)

    run(app_on(demo_store), steps)
    assert run_cli("show", seen["record"].id, "--json").returncode != 0


def test_a_locked_store_writes_nothing_and_says_why(demo_store: Demo,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AGENTCTX_BUSY_TIMEOUT_MS", "200")
    seen: dict[str, Record] = {}

    async def steps(pilot: Pilot[None]) -> None:
        record = await find(pilot, "advisory locks")
        seen["record"] = record
        blocker = sqlite3.connect(demo_store.home / DB_NAME, isolation_level=None)
        blocker.execute("BEGIN IMMEDIATE")
        try:
            await pilot.press("p")
            await settle(pilot)
            messages = [str(n.message) for n in pilot.app._notifications]
            assert any(m.startswith("nothing written:") and "\n" not in m for m in messages), \
                messages
        finally:
            blocker.execute("ROLLBACK")
            blocker.close()
        await pilot.press("u")  # nothing to undo: the pin never happened
        await settle(pilot)

    run(app_on(demo_store), steps)
    assert stored(demo_store, seen["record"].id) == seen["record"]


def test_supersede_from_the_detail_panel_shows_the_successor(demo_store: Demo) -> None:
    async def steps(pilot: Pilot[None]) -> None:
        await find(pilot, "Dramatiq")
        await pilot.press("enter")
        await settle(pilot)
        pane = pilot.app.query_one(RecordsPane)
        assert pane.detail_panel() is not None
        await pilot.press("s", *"Jobs on Celery", "tab", "tab", *"moved", "ctrl+s")
        await settle(pilot)
        panel = pane.detail_panel()
        assert panel is not None and panel.item is not None
        assert panel.item.record.title == "Jobs on Celery"
        assert [link.rationale for link in panel.item.supersedes] == ["moved"]

    run(app_on(demo_store), steps)
    [new] = current_titled(demo_store, "Jobs on Celery")
    assert shown(new.id)["supersedes"][0]["rationale"] == "moved"


def test_help_lists_the_editing_keys_and_what_undo_covers(demo_store: Demo) -> None:
    from agentctx.tui.actions import APP_ACTIONS
    from agentctx.tui.help import help_text

    async def steps(pilot: Pilot[None]) -> None:
        text = str(help_text(RecordsPane, APP_ACTIONS))
        for key in (" n ", " e ", " E ", " s ", " p ", " + ", " - ", " d ", " u ", " m ", " w "):
            assert key in text, key
        assert "supersede and forget ask first" in text

    run(app_on(demo_store), steps)


def test_a_write_makes_the_digest_stale_for_the_next_session(demo_store: Demo) -> None:
    from agentctx.store import digests

    with Store.open(demo_store.home / DB_NAME) as db:
        digests.save(db, demo_store.project_id, "digest", tokens=1, record_ids=[],
                     builder="test")
        assert digests.load_fresh(db, demo_store.project_id) is not None

    async def steps(pilot: Pilot[None]) -> None:
        await find(pilot, "advisory locks")
        await pilot.press("p")
        await settle(pilot)

    run(app_on(demo_store), steps)
    with Store.open(demo_store.home / DB_NAME) as db:
        assert digests.load_fresh(db, demo_store.project_id) is None


def test_undo_refuses_when_the_record_changed_elsewhere(demo_store: Demo) -> None:
    seen: dict[str, Record] = {}

    async def steps(pilot: Pilot[None]) -> None:
        record = await find(pilot, "advisory locks")
        await pilot.press("p")
        await settle(pilot)
        assert run_cli("edit", record.id, "--title", "Edited by the CLI").returncode == 0
        seen["before_undo"] = stored(demo_store, record.id)
        await pilot.press("u")
        await settle(pilot)
        assert any("changed elsewhere" in str(n.message) for n in pilot.app._notifications)

    run(app_on(demo_store), steps)
    assert stored(demo_store, seen["before_undo"].id) == seen["before_undo"]


def test_an_over_long_body_is_refused_beside_the_body(demo_store: Demo) -> None:
    async def steps(pilot: Pilot[None]) -> None:
        await pilot.press("n")
        await pilot.pause()
        form = pilot.app.screen
        assert isinstance(form, RecordForm)
        form.query_one("#body", TextArea).text = "x" * 8001
        await pilot.press("tab", *"Too long", "ctrl+s")
        await pilot.pause()
        assert "limit is 8000" in str(form.query_one("#body-error").render())

    run(app_on(demo_store), steps)
    assert current_titled(demo_store, "Too long") == []


def test_the_cursor_stays_on_its_record_after_n_then_s_acts_on_it(demo_store: Demo) -> None:
    """A new record sorts in above the cursor's row; the cursor stays on its record (by id),
    so the next ``s`` supersedes the record the user was on, the one its form names."""
    async def steps(pilot: Pilot[None]) -> None:
        pane = pilot.app.query_one(RecordsPane)
        await pilot.press("down", "down")
        await settle(pilot)
        before = pane.highlighted()
        assert before is not None
        await pilot.press("n")
        await settle(pilot)
        form = screen(pilot)
        assert isinstance(form, RecordForm)
        form.query_one("#title", Input).value = "Sorted in above"
        form.query_one("#body", TextArea).text = "A record newer than every other."
        await pilot.press("ctrl+s")
        await settle(pilot)
        assert [r.title for r in current_titled(demo_store, "Sorted in above")]
        under = pane.highlighted()
        assert under is not None and under.id == before.id
        await pilot.press("s")
        await settle(pilot)
        form = screen(pilot)
        assert isinstance(form, SupersedeForm)
        assert before.title in str(form.heading)
        form.query_one("#title", Input).value = before.title + " (revised)"
        form.query_one("#body", TextArea).text = "Revised."
        form.query_one("#rationale", Input).value = "revised"
        await pilot.press("ctrl+s")
        await settle(pilot)
        assert stored(demo_store, before.id).superseded_at is not None
        under = pane.highlighted()
        assert under is not None and under.title == before.title + " (revised)"

    run(app_on(demo_store), steps)

