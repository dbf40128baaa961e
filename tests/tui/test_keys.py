"""The keys a new user meets: the key bar at 80 columns, escape out of every field, each dialog's
own keys, and the palette listing each action once with its key."""

from __future__ import annotations

from textual import events
from textual.pilot import Pilot
from textual.widgets import Input

from agentctx.tui.app import AgentctxApp
from agentctx.tui.commands import commands
from agentctx.tui.records_pane import RecordsPane
from agentctx.tui.registry import PANES
from agentctx.tui.widgets.keybar import KeyBar
from agentctx.tui.widgets.record_form import RecordForm
from tests.tui.conftest import Demo, app_on, run, settle


def bar(pilot: Pilot[None]) -> str:
    return str(pilot.app.screen.query_one(KeyBar).render())


def test_help_palette_and_quit_show_at_80_columns_on_every_pane(demo_store: Demo) -> None:
    async def steps(pilot: Pilot[None]) -> None:
        for spec in PANES:
            await pilot.press(spec.key)
            await settle(pilot)
            if isinstance(pilot.app.screen.focused, Input):
                await pilot.press("escape")
                await pilot.pause()
            text = bar(pilot)
            assert len(text) <= 80, text
            assert text.rstrip().endswith("? help ^p palette q quit"), (spec.name, text)
    run(app_on(demo_store), steps, size=(80, 24))


def test_escape_leaves_the_preview_prompt(demo_store: Demo) -> None:
    async def steps(pilot: Pilot[None]) -> None:
        await pilot.press("8", *"refunds")
        await settle(pilot)
        prompt = pilot.app.query_one("#prompt", Input)
        assert prompt.has_focus and prompt.value == "refunds"
        await pilot.press("escape")
        await pilot.pause()
        assert pilot.app.screen.focused is not prompt
        await pilot.press("2")
        await settle(pilot)
        app = pilot.app
        assert isinstance(app, AgentctxApp) and app.current_pane == "records"
        assert prompt.value == "refunds"
    run(app_on(demo_store), steps)


def test_escape_leaves_the_search_field(demo_store: Demo) -> None:
    async def steps(pilot: Pilot[None]) -> None:
        await pilot.press("slash", *"grpc")
        await settle(pilot)
        await pilot.press("escape", "3")
        await settle(pilot)
        app = pilot.app
        assert isinstance(app, AgentctxApp) and app.current_pane == "chains"
    run(app_on(demo_store), steps)


def test_a_form_shows_its_own_keys(demo_store: Demo) -> None:
    async def steps(pilot: Pilot[None]) -> None:
        await pilot.press("n")
        await settle(pilot)
        assert isinstance(pilot.app.screen, RecordForm)
        text = bar(pilot)
        assert "Save" in text and "Cancel" in text and "Supersede" not in text, text
        await pilot.press("escape")
        await pilot.pause()
        assert not isinstance(pilot.app.screen, RecordForm)
    run(app_on(demo_store), steps, size=(80, 24))


def test_the_palette_lists_each_action_once_with_its_key_the_panes_first(
        demo_store: Demo) -> None:
    async def steps(pilot: Pilot[None]) -> None:
        app = pilot.app
        assert isinstance(app, AgentctxApp)
        names = [c.name for c in commands(app)]
        assert len(names) == len(set(names))
        pane_first = [f"{a.title} ({a.keys})" for a in RecordsPane.ACTIONS if a.palette]
        assert names[:len(pane_first)] == pane_first
        assert sum("Pin / unpin record" in n for n in names) == 1
        assert "Sort (o)" in names and "Quit (q)" in names and "Go to Chains (3)" in names
        await pilot.press("3")
        await settle(pilot)
        names = [c.name for c in commands(app)]
        assert names[0] == "Open version (enter)"
        assert "Records: Sort (2 o)" in names
    run(app_on(demo_store), steps)


def test_a_key_right_after_a_pane_number_reaches_the_new_pane(demo_store: Demo) -> None:
    """``5`` then ``enter`` in one burst (as a fast typist or a terminal sends them): the
    receipts of the session open, and the projects pane left behind gets no ``enter``."""
    async def steps(pilot: Pilot[None]) -> None:
        await pilot.press("1")
        await settle(pilot)
        app = pilot.app
        app.post_message(events.Key("5", "5"))
        app.post_message(events.Key("enter", "\r"))
        await settle(pilot)
        assert isinstance(app, AgentctxApp) and app.current_pane == "sessions"
        assert app.query_one("#receipts-table").display
    run(app_on(demo_store), steps)


def test_number_keys_are_text_in_a_field(demo_store: Demo) -> None:
    async def steps(pilot: Pilot[None]) -> None:
        await pilot.press("slash", *"v2 3")
        await settle(pilot)
        assert pilot.app.query_one("#search", Input).value == "v2 3"
        app = pilot.app
        assert isinstance(app, AgentctxApp) and app.current_pane == "records"
        await pilot.press("8", *"port 8080")
        await settle(pilot)
        assert app.current_pane == "records"
        await pilot.press("escape", "8", "1")  # the prompt has focus when the pane opens
        await settle(pilot)
        assert app.current_pane == "preview"
        assert pilot.app.query_one("#prompt", Input).value == "1"
    run(app_on(demo_store), steps)
