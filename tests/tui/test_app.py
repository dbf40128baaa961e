"""Pilot tests of the browser: every pane by number key and by the palette, the records pane's
search, filters, as-of, sort and detail panel, the chain jump, the session receipts, the preview,
the status line, and the screens for a store that cannot be read."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from textual.coordinate import Coordinate
from textual.pilot import Pilot
from textual.widgets import DataTable, Input, Markdown, Static, Tree

from agentctx.context import judgement
from agentctx.core.config import Config
from agentctx.store import Store
from agentctx.store import chains as store_chains
from agentctx.store import records as rec
from agentctx.store.models import Draft
from agentctx.store.selection import Selection
from agentctx.tui.actions import APP_ACTIONS, help_rows
from agentctx.tui.app import AgentctxApp, StatusLine, make_app
from agentctx.tui.chains_pane import ChainsPane
from agentctx.tui.detail import DetailPanel
from agentctx.tui.help import HelpScreen, help_text
from agentctx.tui.pane import PaneTitle
from agentctx.tui.records_pane import RecordsPane
from agentctx.tui.registry import PANES
from agentctx.tui.widgets.problem import ProblemScreen
from tests.conftest import run_cli
from tests.tui.conftest import NOW, Demo, app_on, run, settle


def title_of(pilot: Pilot[None], pane_id: str) -> str:
    return pilot.app.query_one(f"#{pane_id} PaneTitle", PaneTitle)._text


def current(pilot: Pilot[None]) -> str:
    app = pilot.app
    assert isinstance(app, AgentctxApp)
    return app.current_pane


def rows(table: DataTable[str]) -> list[list[str]]:
    return [[str(cell) for cell in table.get_row_at(i)] for i in range(table.row_count)]


def test_number_keys_reach_every_pane(demo_store: Demo) -> None:
    async def steps(pilot: Pilot[None]) -> None:
        for spec in PANES:
            await pilot.press(spec.key)
            await settle(pilot)
            assert current(pilot) == spec.pane_id
            assert title_of(pilot, spec.pane_id).startswith(spec.name)
            assert pilot.app.query_one(f"#{spec.pane_id}").display
    run(app_on(demo_store), steps)


def test_the_pane_registry_is_the_only_copy_of_id_name_and_key() -> None:
    for spec in PANES:
        cls = spec.load()
        assert cls.spec() == spec
        for copy in ("PANE_ID", "PANE_NAME", "KEY", "HELP_KEYS", "PALETTE"):
            assert not hasattr(cls, copy), (cls, copy)
        assert (Path(__file__).parents[2] / "agentctx" / "tui" / f"{spec.module}.tcss").is_file()


def test_bindings_help_and_palette_come_from_one_action_table() -> None:
    for spec in PANES:
        cls = spec.load()
        assert [(b.key, b.action) for b in cls.BINDINGS  # type: ignore[union-attr]
                ] == [(a.key, a.action) for a in cls.ACTIONS if a.bound]
        rows = help_rows(cls.ACTIONS)
        text = str(help_text(cls, APP_ACTIONS))
        assert all(does in text for _, does in rows)


def test_the_palette_reaches_a_pane_and_a_pane_action(demo_store: Demo) -> None:
    async def steps(pilot: Pilot[None]) -> None:
        await pilot.press("ctrl+p")
        await pilot.press(*"go to chains")
        await pilot.pause(0.3)
        await pilot.press("enter")
        await settle(pilot)
        assert current(pilot) == "chains"
        await pilot.press("ctrl+p")
        await pilot.press(*"records: sort")  # another pane's action, named by its pane
        await pilot.pause(0.3)
        await pilot.press("enter")
        await settle(pilot)
        assert current(pilot) == "records"
        assert pilot.app.query_one(RecordsPane).order == "oldest"
    run(app_on(demo_store), steps)


def test_status_line_names_project_count_store_and_backend(demo_store: Demo) -> None:
    async def steps(pilot: Pilot[None]) -> None:
        await settle(pilot)
        text = str(pilot.app.query_one(StatusLine).render())
        with Store.open(demo_store.home / "agentctx.db") as db:
            count = rec.count_records(db, Selection(project_id=demo_store.project_id))
        assert f"harbor · {count} records" in text
        assert "~/.agentctx/agentctx.db" in text and "vectors: none" in text
    run(app_on(demo_store), steps)


def test_search_as_you_type_uses_the_store_search(demo_store: Demo) -> None:
    from agentctx.ops import find
    from agentctx.store.search import Query

    async def steps(pilot: Pilot[None]) -> None:
        pane = pilot.app.query_one(RecordsPane)
        listed = len(pane.records)
        await pilot.press("slash", *"refund")
        await settle(pilot)
        with Store.open(demo_store.home / "agentctx.db") as db:
            expected = find.search(db, Query("refund",
                                                   Selection(project_id=demo_store.project_id),
                                                   limit=100),
                                         find.stored_vectors(db)).hits
        assert list(pane.records) == [h.record.id for h in expected] and expected
        assert "hits for “refund”" in title_of(pilot, "records")
        await pilot.press("escape")
        assert pilot.app.query_one("#records-table", DataTable).has_focus
        pilot.app.query_one("#search", Input).value = ""
        await settle(pilot)
        assert len(pane.records) == listed
    run(app_on(demo_store), steps)


def test_filters_by_type_and_state(demo_store: Demo) -> None:
    async def steps(pilot: Pilot[None]) -> None:
        pane = pilot.app.query_one(RecordsPane)
        await pilot.press("f")
        await pilot.pause()
        await pilot.press("space")  # the first type: decision
        await pilot.press("ctrl+s")
        await settle(pilot)
        types = {r.type for r in pane.records.values()}
        assert types == {"decision"}
        assert all(r.current for r in pane.records.values())
        assert "filter: decision" in title_of(pilot, "records")
        pane.filters = pane.filters._replace(state="superseded")
        pane.reload()
        await settle(pilot)
        assert pane.records and not any(r.current for r in pane.records.values())
    run(app_on(demo_store), steps)


def test_as_of_lists_what_was_in_force(demo_store: Demo) -> None:
    moment = "2026-01-15"

    async def steps(pilot: Pilot[None]) -> None:
        pane = pilot.app.query_one(RecordsPane)
        await pilot.press("a")
        await pilot.pause()
        await pilot.press(*"not a date", "enter")
        await pilot.pause()
        error = pilot.app.screen.query_one("#error", Static)
        assert "not an ISO date" in str(error.render())
        pilot.app.screen.query_one(Input).value = moment
        await pilot.press("enter")
        await settle(pilot)
        with Store.open(demo_store.home / "agentctx.db") as db:
            expected = rec.as_of(db, demo_store.project_id, moment, include_global=False)
        assert set(pane.records) == {r.id for r in expected}
        assert f"as of {moment}" in title_of(pilot, "records")
    run(app_on(demo_store), steps)


def test_sort_and_global_scope(demo_store: Demo) -> None:
    async def steps(pilot: Pilot[None]) -> None:
        pane = pilot.app.query_one(RecordsPane)
        newest = list(pane.records.values())
        await pilot.press("o")
        await settle(pilot)
        oldest = list(pane.records.values())
        assert oldest[0].valid_from <= newest[0].valid_from and oldest[0] != newest[0]
        assert "sort: oldest" in title_of(pilot, "records")
        await pilot.press("g")
        await settle(pilot)
        assert any(r.project_id == "global" for r in pane.records.values())
    run(app_on(demo_store), steps)


def test_detail_panel_and_chain_jump(demo_store: Demo) -> None:
    with Store.open(demo_store.home / "agentctx.db") as db:
        chain = store_chains.chains(db, demo_store.project_id, limit=1)[0]
    head = chain.head

    async def steps(pilot: Pilot[None]) -> None:
        pane = pilot.app.query_one(RecordsPane)
        table = pilot.app.query_one("#records-table", DataTable)
        table.move_cursor(row=list(pane.records).index(head.id))
        await pilot.press("enter")
        await settle(pilot)
        panel = pilot.app.query_one(DetailPanel)
        assert panel.display and panel.item is not None and panel.item.record.id == head.id
        text = pilot.app.query_one("#detail-body", Markdown).source
        assert head.title in text and "replaced" in text
        await pilot.press("escape")
        assert not pilot.app.query_one(DetailPanel).display
        assert pilot.app.query_one("#records-table", DataTable).display
        await pilot.press("c")
        await settle(pilot)
        assert current(pilot) == "chains"
        chains_pane = pilot.app.query_one(ChainsPane)
        assert chains_pane.focus_id == head.id
        tree = pilot.app.query_one(Tree)
        versions = tree.root.children[0].children
        assert [n.data for n in versions] == [v.record.id for v in chain.versions]
        assert f"Chain of “{head.title}”" in title_of(pilot, "chains")
        await pilot.press("escape")
        await settle(pilot)
        assert pilot.app.query_one(ChainsPane).focus_id is None
        assert len(tree.root.children) >= 1
    run(app_on(demo_store), steps)


def test_copy_id_uses_the_clipboard(demo_store: Demo) -> None:
    async def steps(pilot: Pilot[None]) -> None:
        pane = pilot.app.query_one(RecordsPane)
        first = next(iter(pane.records))
        await pilot.press("y")
        assert pilot.app.clipboard == first
    run(app_on(demo_store), steps)


def test_session_receipts(demo_store: Demo) -> None:
    async def steps(pilot: Pilot[None]) -> None:
        await pilot.press("5")
        await settle(pilot)
        sessions = pilot.app.query_one("#sessions-table", DataTable)
        assert sessions.row_count == 6
        await pilot.press("enter")
        await settle(pilot)
        receipts = pilot.app.query_one("#receipts-table", DataTable)
        assert receipts.display
        table = rows(receipts)
        assert table[0][1] == "start" and "the digest" in table[0][4]
        assert any(row[1] == "prompt" and row[4] for row in table)
        await pilot.press("escape")
        assert not receipts.display
    run(app_on(demo_store), steps)


def test_preview_shows_the_hooks_judgement(demo_store: Demo) -> None:
    prompt = "how do refunds get rounded"

    async def steps(pilot: Pilot[None]) -> None:
        await pilot.press("8")
        await pilot.press(*prompt)
        await settle(pilot)
        with Store.open(demo_store.home / "agentctx.db") as db:
            decision = judgement.decide(db, demo_store.project_id, "harbor", prompt,
                                        judgement.settings(Config.load()))
        table = pilot.app.query_one("#verdicts", DataTable)
        assert [r[0] for r in rows(table)] == [v.outcome for v in decision.verdicts]
        assert any(v.outcome == "inject" for v in decision.verdicts)
        shown = str(pilot.app.query_one("#injected", Static).render())
        assert "injected (" in shown and decision.injected[0].record.title in shown
    run(app_on(demo_store), steps)


def test_new_records_appear_without_a_restart(demo_store: Demo) -> None:
    async def steps(pilot: Pilot[None]) -> None:
        pane = pilot.app.query_one(RecordsPane)
        with Store.open(demo_store.home / "agentctx.db") as db:
            added = rec.add(db, Draft(type="decision", title="Adopt uv for locking",
                                      valid_from="2026-03-02T11:00:00Z"),
                            project_id=demo_store.project_id)
        for _ in range(50):
            await pilot.pause(0.05)
            if added.id in pane.records:
                break
        assert added.id in pane.records
    run(app_on(demo_store, poll_ms=100), steps)


def test_choosing_a_project_sets_every_pane(demo_store: Demo, tmp_path: Path) -> None:
    from agentctx.store import projects as proj

    other = tmp_path / "other"
    other.mkdir()
    with Store.open(demo_store.home / "agentctx.db") as db:
        other_id = proj.resolve(db, str(other)).project.id
        rec.add(db, Draft(type="decision", title="Other project decision"), project_id=other_id)

    async def steps(pilot: Pilot[None]) -> None:
        await pilot.press("1")
        await settle(pilot)
        table = pilot.app.query_one("#projects-table", DataTable)
        keys = [table.coordinate_to_cell_key(Coordinate(i, 0)).row_key.value
                for i in range(table.row_count)]
        table.move_cursor(row=keys.index(other_id))
        await pilot.press("enter")
        await settle(pilot)
        await pilot.press("2")
        await settle(pilot)
        titles = [r.title for r in pilot.app.query_one(RecordsPane).records.values()]
        assert titles == ["Other project decision"]
        assert "other · 1 record ·" in str(pilot.app.query_one(StatusLine).render())
    run(app_on(demo_store), steps)


def test_a_write_seen_while_the_app_closes_is_no_crash(demo_store: Demo) -> None:
    """The poll can fire once the app has taken its panes down on the way out."""
    async def steps(pilot: Pilot[None]) -> None:
        app = pilot.app
        assert isinstance(app, AgentctxApp)
        await app.query_one("#panes").remove()
        with Store.open(demo_store.home / "agentctx.db") as db:
            rec.add(db, Draft(type="decision", title="Adopt uv for locking"),
                    project_id=demo_store.project_id)
        app.poll_store()
    run(app_on(demo_store, poll_ms=60_000), steps)


def test_help_lists_the_keys(demo_store: Demo) -> None:
    async def steps(pilot: Pilot[None]) -> None:
        await pilot.press("question_mark")
        await pilot.pause()
        text = str(pilot.app.screen.query_one("#help-text", Static).render())
        assert isinstance(pilot.app.screen, HelpScreen)
        assert text.startswith("2 Records\n")
        assert "search as you type" in text and "^p" in text and "\n7 Drift\n" in text
        await pilot.press("escape")
        await pilot.pause()
        assert not isinstance(pilot.app.screen, HelpScreen)
    run(app_on(demo_store), steps)


def _problem(home: Path) -> str:
    found: list[str] = []

    async def steps(pilot: Pilot[None]) -> None:
        screen = pilot.app.screen
        assert isinstance(screen, ProblemScreen)
        found.append(screen.message)
        await pilot.press("q")

    run(make_app(home=home, now=NOW), steps, size=(80, 24))
    return found[0]


def test_no_store_says_what_to_do(tmp_path: Path) -> None:
    message = _problem(tmp_path / "empty-home")
    assert "no agentctx store" in message and "agentctx init" in message
    assert not (tmp_path / "empty-home").exists()  # nothing created


def test_a_newer_or_damaged_store_gets_a_clear_screen(tmp_path: Path) -> None:
    newer = tmp_path / "newer"
    newer.mkdir()
    with Store.open(newer / "agentctx.db"):
        pass
    conn = sqlite3.connect(newer / "agentctx.db")
    conn.execute("PRAGMA user_version = 999")
    conn.close()
    assert "newer agentctx" in _problem(newer)
    damaged = tmp_path / "damaged"
    damaged.mkdir()
    (damaged / "agentctx.db").write_bytes(b"this is not a database" * 100)
    assert "damaged" in _problem(damaged) or "not an agentctx store" in _problem(damaged)


def test_tui_without_a_terminal_is_one_clear_line() -> None:
    result = run_cli("tui")
    assert result.returncode == 1
    assert result.stderr.strip() == ("agentctx: agentctx tui needs a terminal (stdin and "
                                     "stdout); try 'agentctx status'")


def test_a_store_damaged_while_open_is_a_notification_not_a_crash(demo_store: Demo) -> None:
    app = app_on(demo_store)

    async def steps(pilot: Pilot[None]) -> None:
        path = demo_store.home / "agentctx.db"
        with Store.open(path) as db:
            db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        size = path.stat().st_size
        path.write_bytes(b"\x00garbage" * (size // 8))
        await pilot.press("1")  # a pane not read yet: its first read meets the damage
        await pilot.pause()
        messages = [n.message for n in pilot.app._notifications]
        assert any(m.startswith("cannot read the store") for m in messages), messages
        assert pilot.app.is_running
    run(app, steps)


def test_titles_with_brackets_show_as_written(demo_store: Demo) -> None:
    title = "Keep [red]markup[/red] and [link=x]brackets[/link] literal"
    with Store.open(demo_store.home / "agentctx.db") as db:
        added = rec.add(db, Draft(type="decision", title=title,
                                  valid_from="2026-03-02T11:00:00Z"),
                        project_id=demo_store.project_id)

    async def steps(pilot: Pilot[None]) -> None:
        table = pilot.app.query_one("#records-table", DataTable)
        index = list(pilot.app.query_one(RecordsPane).records).index(added.id)
        assert str(table.get_row_at(index)[1]) == title
    run(app_on(demo_store), steps)


def test_every_id_in_a_record_detail_resolves_with_show(demo_store: Demo) -> None:
    import re

    shown: list[str] = []

    async def steps(pilot: Pilot[None]) -> None:
        await pilot.press("slash", *"grpc", "enter", "enter")
        await settle(pilot)
        panel = pilot.app.query_one(DetailPanel)
        assert panel.item is not None and panel.item.supersedes
        shown.append(panel.query_one(Markdown).source)

    run(app_on(demo_store), steps)
    ids = re.findall(r"`([0-9A-Z]{8,26})`", shown[0])
    assert len(ids) >= 2
    for ref in ids:
        result = run_cli("show", ref)
        assert result.returncode == 0, (ref, result.stderr)


def test_a_wide_terminal_shows_the_detail_beside_the_table(demo_store: Demo) -> None:
    async def steps(pilot: Pilot[None]) -> None:
        await pilot.press("enter")
        await settle(pilot)
        panel = pilot.app.query_one(DetailPanel)
        table = pilot.app.query_one("#records-table", DataTable)
        assert panel.display and table.display
        assert panel.region.x > table.region.x and panel.region.y == table.region.y
        await pilot.press("escape")
        await settle(pilot)
        assert not panel.display
    run(app_on(demo_store), steps, size=(120, 40))

    async def narrow(pilot: Pilot[None]) -> None:
        await pilot.press("enter")
        await settle(pilot)
        assert pilot.app.query_one(DetailPanel).display
        assert not pilot.app.query_one("#records-table", DataTable).display
    run(app_on(demo_store), narrow, size=(80, 24))


def test_possibly_stale_records_are_marked_in_the_table_and_the_detail(demo_store: Demo) -> None:
    """The demo's jobs folder is deleted: after a path check, its decision's row says "paths
    gone", the title counts it and the detail names what no longer exists."""
    import shutil

    from agentctx.consolidate.truth import check_paths
    from agentctx.store import projects

    shutil.rmtree(demo_store.folder / "harbor" / "jobs")
    with Store.open(demo_store.home / "agentctx.db") as db:
        project = projects.get(db, demo_store.project_id)
        assert check_paths(db, project).stale == 1
        [jobs] = [r for r in rec.list_records(db, Selection(project_id=project.id))
                  if r.title.startswith("Background jobs run on Dramatiq")]

    async def steps(pilot: Pilot[None]) -> None:
        pane = pilot.app.query_one(RecordsPane)
        table = pilot.app.query_one("#records-table", DataTable)
        row = list(pane.records).index(jobs.id)
        assert str(table.get_cell_at(Coordinate(row, 5))) == "paths gone"
        others = [str(table.get_cell_at(Coordinate(n, 5))) for n in range(table.row_count)
                  if n != row]
        assert "paths gone" not in others
        assert "1 possibly stale" in title_of(pilot, "records")
        table.move_cursor(row=row)
        await pilot.press("enter")
        await settle(pilot)
        text = pilot.app.query_one("#detail-body", Markdown).source
        assert "**possibly stale**: `harbor/jobs/` no longer exists" in text
    run(app_on(demo_store), steps)
