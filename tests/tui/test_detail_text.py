"""A record's text in the detail panel and the chains pane's reader reads as written: a path
or a dunder is not turned into bold by Markdown (``harbor/billing/__init__.py`` once showed as
``harbor/billing/init.py`` in bold)."""

from __future__ import annotations

from textual.pilot import Pilot
from textual.widgets import Markdown

from agentctx.tui.cells import as_written
from tests.tui.conftest import Demo, app_on, run, settle


def test_paths_and_dunders_become_code_and_the_rest_stays_markdown() -> None:
    assert as_written("shim harbor/billing/__init__.py re-exports") == \
        "shim `harbor/billing/__init__.py` re-exports"
    assert as_written("run __main__ once") == "run `__main__` once"
    assert as_written("test_order_export flaked, *really*") == "test_order_export flaked, *really*"
    assert as_written("already `a/b_c.py` code") == "already `a/b_c.py` code"
    fenced = "see:\n```\nharbor/a_b.py\n```"
    assert as_written(fenced) == fenced


def test_the_detail_shows_a_dunder_path_as_written(demo_store: Demo) -> None:
    async def steps(pilot: Pilot[None]) -> None:
        await pilot.press("slash", *"shim kept", "enter", "enter")
        await settle(pilot)
        shown = pilot.app.query_one("#detail-body", Markdown)
        assert "`harbor/billing/__init__.py`" in shown.source
    run(app_on(demo_store), steps)
