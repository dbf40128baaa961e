"""Pane 1, Projects: every project with its records by type, last activity and tokens injected;
``enter`` makes one the active project of every other pane."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.widgets import DataTable, Static

from agentctx.store import projects as proj
from agentctx.store.models import GLOBAL_PROJECT, RECORD_TYPES
from agentctx.tui.actions import Action
from agentctx.tui.cells import ago, ellipsize, home_path, tail, tokens
from agentctx.tui.messages import ProjectChosen
from agentctx.tui.pane import Pane, PaneTitle
from agentctx.tui.widgets.table import Column, PlainTable

TYPE_LETTERS = {t: t[:3] for t in RECORD_TYPES}
COLUMNS = (Column("", "active", 1), Column("project", "name", 12, grow=1),
           Column("records", "records", 7), Column("by type", "types", 16, grow=4),
           Column("last active", "active_at", 11), Column("tokens", "tokens", 7),
           Column("path", "path", 10, grow=3))


def by_type(counts: dict[str, int]) -> str:
    """``dec 4 · con 3 · bug 1``: current records per type, in the store's type order."""
    return " · ".join(f"{TYPE_LETTERS[t]} {counts[t]}" for t in RECORD_TYPES if counts.get(t))


class ProjectsPane(Pane):
    """Every project the store knows, most recently active first."""

    ACTIONS = (Action("enter", "choose", "Choose", "make the project the active one of every "
                      "pane", "Choose project", priority=True),)

    def compose(self) -> ComposeResult:
        yield PaneTitle("Projects", classes="pane-title")
        yield Static("", classes="empty", markup=False)
        yield PlainTable(cursor_type="row", zebra_stripes=True, id="projects-table")

    def reload(self) -> None:
        state = self.state
        table = self.query_one(PlainTable)
        summaries = [s for s in proj.list_all(state.db) if s.project.id != GLOBAL_PROJECT]
        keep = table.cursor_row
        widths = table.fit_columns(COLUMNS, self.layout_width())
        active = state.project.id if state.project else None
        now = state.now()
        for s in summaries:
            last = s.last_session or s.last_seen  # a session's start, else the last hook seen
            table.add_row("●" if s.project.id == active else "",
                          ellipsize(s.project.name, widths["name"]), f"{s.records:,}",
                          ellipsize(by_type(s.by_type), widths["types"]), ago(last, now),
                          tokens(s.tokens_injected),
                          tail(home_path(s.project.root), widths["path"]), key=s.project.id)
        if summaries:
            table.move_cursor(row=min(keep, len(summaries) - 1))
        self.query_one(PaneTitle).set_text(f"Projects · {len(summaries)} known · enter: choose")
        empty = self.query_one(".empty", Static)
        empty.display = not summaries
        empty.update("No projects yet — run `agentctx init`, then use Claude Code in a project.")

    def action_choose(self) -> None:
        """Make the highlighted project the active one."""
        table = self.query_one(DataTable)
        if not table.row_count:
            return
        key = table.coordinate_to_cell_key(table.cursor_coordinate).row_key.value
        if key:
            self.post_message(ProjectChosen(key))
            self.call_after_refresh(self.reload)

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        event.stop()
        self.action_choose()
