"""The panes use the terminal's width: every table's columns fill the pane at 80 and at 160
columns, so a wide terminal shows more of a title, a prompt or a path (and no fixed cut wastes
the rest); resizing lays a pane out again."""

from __future__ import annotations

import pytest
from textual.pilot import Pilot
from textual.widgets import DataTable

from agentctx.tui.registry import PANES
from agentctx.tui.widgets.table import Column, fit
from tests.tui.conftest import Demo, app_on, run, settle

TABLES = {"projects": "#projects-table", "records": "#records-table", "profile": "#preferences",
          "sessions": "#sessions-table", "live": "#live-table", "drift": "#drift-table",
          "preview": "#verdicts"}


def used(table: DataTable[object]) -> int:
    """The columns' width with their padding, as drawn."""
    return sum(column.get_render_width(table) for column in table.columns.values())


@pytest.mark.parametrize("pane", list(TABLES))
def test_the_columns_fill_the_pane_at_80_and_160_columns(pane: str, demo_store: Demo) -> None:
    key = next(p.key for p in PANES if p.pane_id == pane)

    async def steps(pilot: Pilot[None]) -> None:
        await pilot.press(key)
        await settle(pilot)
        table = pilot.app.query_one(TABLES[pane], DataTable)
        narrow = used(table)
        assert 76 <= narrow <= 80, narrow
        await pilot.resize_terminal(160, 40)
        await settle(pilot)
        wide = used(table)
        assert 156 <= wide <= 160, wide
    run(app_on(demo_store), steps, size=(80, 24))


def test_a_wide_terminal_shows_what_a_narrow_one_cuts(demo_store: Demo) -> None:
    """The live pane's records column: at 160 columns each record's relevance and matched
    words show; at 80 they are cut."""
    async def steps(pilot: Pilot[None]) -> None:
        await pilot.press("6")
        await settle(pilot)
        table = pilot.app.query_one("#live-table", DataTable)

        def cells() -> list[str]:
            return [str(table.get_row_at(i)[-1]) for i in range(table.row_count)]

        assert not any(cell.endswith(")") for cell in cells() if "(" in cell)
        await pilot.resize_terminal(160, 40)
        await settle(pilot)
        assert any(cell.endswith(")") and ": " in cell for cell in cells())
    run(app_on(demo_store), steps, size=(80, 24))


def test_fit_shares_the_spare_width_by_weight() -> None:
    columns = [Column("a", "a", 10), Column("b", "b", 10, grow=1), Column("c", "c", 10, grow=3)]
    assert fit(columns, 6 + 30 + 1) == [10, 10, 10]  # no room to spare
    assert fit(columns, 6 + 30 + 1 + 40) == [10, 20, 40]
    assert fit(columns, 20) == [10, 10, 10]  # never under a column's least width
