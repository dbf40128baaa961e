"""Editing from the chains and profile panes, merge candidates, the palette's editing entries and
the web view key; each checked against the store (or the running server) afterwards."""

from __future__ import annotations

import urllib.request

from textual.pilot import Pilot
from textual.widgets import DataTable, Tree

from agentctx.store import Store, upkeep
from agentctx.store import records as rec
from agentctx.store.models import Draft, Record
from agentctx.tui.app import AgentctxApp, StatusLine
from agentctx.tui.chains_pane import ChainsPane
from agentctx.tui.records_pane import RecordsPane
from agentctx.tui.widgets.merge import MergeScreen
from agentctx.tui.widgets.record_form import SupersedeForm
from tests.tui.conftest import Demo, app_on, run, settle

DB_NAME = "agentctx.db"


def open_db(demo: Demo) -> Store:
    return Store.open(demo.home / DB_NAME)


def no_demo_pair(db: Store, demo: Demo) -> None:
    """The demo's own near-duplicate pair kept as distinct (it is not asked about)."""
    for pair in upkeep.near_duplicates(db, demo.project_id):
        upkeep.mark_distinct(db, pair.first.id, pair.second.id, "kept both")


def pairs(demo: Demo, count: int) -> list[tuple[Record, Record]]:
    """``count`` near-duplicate pairs saved as consolidation saves them (instead of the demo's
    own)."""
    made = []
    with open_db(demo) as db:
        no_demo_pair(db, demo)
        for n in range(count):
            a = rec.add(db, Draft(type="discovery", title=f"Cache TTL is {n} minutes",
                                  body="Set in settings.py"), project_id=demo.project_id)
            b = rec.add(db, Draft(type="discovery", title=f"The cache TTL is {n} minutes",
                                  body="settings.py sets it", pinned=True,
                                  confidence="explicit"), project_id=demo.project_id)
            upkeep.save_near_duplicates(db, [a.id, b.id], [(a.id, b.id, 0.93, 0.6)])
            made.append((a, b))
    return made


def test_supersede_from_the_chains_pane_extends_the_chain(demo_store: Demo) -> None:
    seen: dict[str, str] = {}

    async def steps(pilot: Pilot[None]) -> None:
        await pilot.press("3")
        await settle(pilot)
        pane = pilot.app.query_one(ChainsPane)
        head = pane.edit_target()
        assert head is not None and head.current
        seen["head"] = head.id
        await pilot.press("s")
        await pilot.pause()
        assert isinstance(pilot.app.screen, SupersedeForm)
        await pilot.press(*"Chained again", "tab", "tab", *"it changed", "ctrl+s")
        await settle(pilot)
        tree = pane.query_one(Tree)
        assert "Chained again" in str(tree.root.children[0].label)

    run(app_on(demo_store), steps)
    with open_db(demo_store) as db:
        old = rec.get(db, seen["head"])
        assert old.superseded_by is not None
        new = rec.get(db, old.superseded_by)
    assert (new.title, new.type) == ("Chained again", old.type)


def test_the_chains_cursor_stays_on_its_version_after_a_write(demo_store: Demo) -> None:
    """A pin on an older version of the second chain: the tree is read again with that chain
    still open and the cursor still on that version (it used to jump to the first line, every
    chain closed)."""
    async def steps(pilot: Pilot[None]) -> None:
        await pilot.press("3")
        await settle(pilot)
        pane = pilot.app.query_one(ChainsPane)
        tree = pane.query_one(Tree)
        second = tree.root.children[1]
        second.expand()
        await pilot.pause()
        version = second.children[0]
        tree.move_cursor(version)
        await pilot.pause()
        target = pane.edit_target()
        assert target is not None and target.id == version.data
        await pilot.press("p")
        await settle(pilot)
        assert tree.cursor_node is not None and tree.cursor_node.data == target.id
        assert tree.root.children[1].is_expanded
        with open_db(demo_store) as db:
            assert rec.get(db, target.id).pinned != target.pinned

    run(app_on(demo_store), steps)


def test_pin_from_the_profile_pane(demo_store: Demo) -> None:
    seen: dict[str, Record] = {}

    async def steps(pilot: Pilot[None]) -> None:
        await pilot.press("4")
        await settle(pilot)
        table = pilot.app.query_one("#preferences", DataTable)
        pilot.app.screen.set_focus(table)
        key = table.coordinate_to_cell_key(table.cursor_coordinate).row_key.value
        assert key
        with open_db(demo_store) as db:
            seen["before"] = rec.get(db, key)
        await pilot.press("p")
        await settle(pilot)

    run(app_on(demo_store), steps)
    with open_db(demo_store) as db:
        after = rec.get(db, seen["before"].id)
    assert after.pinned != seen["before"].pinned


def test_merge_candidates_merge_keep_both_and_skip(demo_store: Demo) -> None:
    (a1, b1), (a2, b2), (a3, b3) = pairs(demo_store, 3)

    async def steps(pilot: Pilot[None]) -> None:
        await pilot.press("m")
        await settle(pilot)
        screen = pilot.app.screen
        assert isinstance(screen, MergeScreen)
        assert len(screen.pairs) == 3
        order = [(p.first.id, p.second.id) for p in screen.pairs]
        assert set(order) == {(a1.id, b1.id), (a2.id, b2.id), (a3.id, b3.id)}
        await pilot.press("enter")   # merge the first
        await pilot.press("b")       # keep the second
        await pilot.press("space")   # skip the third
        await pilot.press("escape")
        await settle(pilot)
        assert isinstance(pilot.app.screen.query_one(RecordsPane), RecordsPane)
        seen.extend(order)

    seen: list[tuple[str, str]] = []
    run(app_on(demo_store), steps)
    merged, kept, skipped = seen
    with open_db(demo_store) as db:
        older, newer = rec.get(db, merged[0]), rec.get(db, merged[1])
        assert older.superseded_by == newer.id and newer.current and newer.pinned
        left = {(p.first.id, p.second.id) for p in upkeep.near_duplicates(db, None)}
    assert left == {skipped}  # the merged pair is gone, the kept pair is never asked again
    assert all(rec.get(open_db(demo_store), i).current for i in kept)


def test_merge_without_candidates_says_so(demo_store: Demo) -> None:
    with open_db(demo_store) as db:
        no_demo_pair(db, demo_store)

    async def steps(pilot: Pilot[None]) -> None:
        await pilot.press("m")
        await settle(pilot)
        screen = pilot.app.screen
        assert isinstance(screen, MergeScreen)
        assert "No merge candidates" in str(screen.query_one("#merge-heading").render())
        await pilot.press("enter", "escape")

    run(app_on(demo_store), steps)


def test_the_palette_offers_the_editing_actions(demo_store: Demo) -> None:
    async def steps(pilot: Pilot[None]) -> None:
        record = pilot.app.query_one(RecordsPane).highlighted()
        assert record is not None
        await pilot.press("ctrl+p", *"pin / unpin")
        await pilot.pause(0.3)
        await pilot.press("enter")
        await settle(pilot)
        with open_db(demo_store) as db:
            assert rec.get(db, record.id).pinned != record.pinned

    run(app_on(demo_store), steps)


def test_a_write_from_the_palette_on_another_pane_names_its_record(demo_store: Demo) -> None:
    """"Records: Pin" run from the sessions pane says which record it pinned."""
    async def steps(pilot: Pilot[None]) -> None:
        record = pilot.app.query_one(RecordsPane).highlighted()
        assert record is not None
        await pilot.press("5")
        await settle(pilot)
        await pilot.press("ctrl+p", *"pin / unpin")
        await pilot.pause(0.3)
        await pilot.press("enter")
        await settle(pilot)
        said = [n.message for n in pilot.app._notifications]
        assert any(m.startswith("pinned ") and record.title[:30] in m for m in said), said

    run(app_on(demo_store), steps)


def test_w_starts_the_web_view_and_quitting_stops_it(demo_store: Demo) -> None:
    seen: dict[str, str] = {}

    async def steps(pilot: Pilot[None]) -> None:
        await pilot.press("w")
        await settle(pilot)
        app = pilot.app
        assert isinstance(app, AgentctxApp) and app.web_url
        seen["url"] = app.web_url
        assert app.web_url in str(app.query_one(StatusLine).render())
        with urllib.request.urlopen(app.web_url, timeout=10) as page:
            assert page.status == 200

    run(app_on(demo_store), steps)
    try:
        urllib.request.urlopen(seen["url"], timeout=2)
    except OSError:
        return
    raise AssertionError("the web view still answers after the app quit")


def test_a_write_keeps_the_team_file_in_step(demo_store: Demo) -> None:
    from agentctx.store import teamstate

    with open_db(demo_store) as db:
        teamstate.enable(db, demo_store.project_id)

    async def steps(pilot: Pilot[None]) -> None:
        await pilot.press("n", "tab", *"Deploys go out on Tuesdays", "ctrl+s")
        await settle(pilot)

    run(app_on(demo_store), steps)
    team_file = demo_store.folder / ".agentctx" / "context.md"
    assert "Deploys go out on Tuesdays" in team_file.read_text(encoding="utf-8")


def test_enter_on_a_chain_version_opens_it_in_full_with_its_rationale(demo_store: Demo) -> None:
    from textual.widgets import Markdown, Tree

    from agentctx.tui.widgets.reader import ReaderScreen

    async def steps(pilot: Pilot[None]) -> None:
        await pilot.press("3")
        await settle(pilot)
        tree = pilot.app.query_one(Tree)
        await pilot.press("enter")  # the first chain expands
        await settle(pilot)
        assert tree.cursor_node is not None and tree.cursor_node.is_expanded
        await pilot.press("down", "enter")  # its oldest version, replaced with a reason
        await settle(pilot)
        dialog = pilot.app.screen
        assert isinstance(dialog, ReaderScreen)
        assert "Why it changed" in dialog.query_one(Markdown).source
        await pilot.press("escape")
        await pilot.pause()
        assert not isinstance(pilot.app.screen, ReaderScreen)

    run(app_on(demo_store), steps)
