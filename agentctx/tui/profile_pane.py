"""Pane 4, Profile: the developer's global preferences and the active project's profile."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from textual.app import ComposeResult
from textual.widgets import DataTable, Static

from agentctx.store import profiles
from agentctx.store import records as rec
from agentctx.store.errors import NotFound
from agentctx.store.models import Record
from agentctx.tui.actions import Action
from agentctx.tui.cells import ellipsize, plural
from agentctx.tui.editing import EDIT_ACTIONS, RecordEditing
from agentctx.tui.pane import PaneTitle
from agentctx.tui.widgets.table import Column, PlainTable

if TYPE_CHECKING:
    from agentctx.tui.appstate import AppState

PREFERENCES_SHOWN = 500
PREFERENCE_COLUMNS = (Column("rule", "rule", 16, grow=4), Column("category", "category", 10),
                      Column("confidence", "confidence", 10), Column("seen", "seen", 4),
                      Column("learned in", "learned", 10, grow=1))
PROFILE_COLUMNS = (Column("what", "what", 16), Column("value", "value", 16, grow=1))


class ProfilePane(RecordEditing):
    """Preferences (rule, category, confidence, reinforcement, where learned) and the project's
    stack, commands and entry points."""

    ACTIONS = (
        Action("tab", "", "", "move between the preferences and the project profile",
               footer=False, palette=False, bound=False),
        *EDIT_ACTIONS,
    )

    def compose(self) -> ComposeResult:
        yield PaneTitle("Profile", classes="pane-title")
        yield Static("Developer preferences (global)", classes="section")
        prefs: DataTable[Any] = PlainTable(cursor_type="row", zebra_stripes=True, id="preferences")
        yield prefs
        yield Static("", classes="section", id="profile-heading", markup=False)
        profile: DataTable[Any] = PlainTable(cursor_type="row", zebra_stripes=True,
                                            id="project-profile")
        yield profile

    def edit_target(self) -> Record | None:
        """The preference or profile entry under the cursor of the focused table."""
        focused = self.screen.focused
        table = focused if isinstance(focused, DataTable) else self.query_one("#preferences",
                                                                             DataTable)
        if not table.row_count:
            return None
        key = table.coordinate_to_cell_key(table.cursor_coordinate).row_key.value
        if not key:
            return None
        try:
            return rec.get(self.state.db, key)
        except NotFound:
            return None

    def __init__(self, state: AppState, **kwargs: object) -> None:
        super().__init__(state, **kwargs)
        self._follow: dict[str, str | None] = {}  # table id -> the row the next reload shows

    def after_write(self, record: Record | None, *, follow: bool = True) -> None:
        """The cursor goes to the written record (a supersede's successor) in its table."""
        focused = self.screen.focused
        if record is not None and follow and isinstance(focused, PlainTable) and focused.id:
            self._follow[focused.id] = record.id
        super().after_write(record, follow=follow)

    def reload(self) -> None:
        db = self.state.db
        width = self.layout_width()
        prefs = self.query_one("#preferences", PlainTable)
        keep, under = prefs.cursor_row, self._follow.pop("preferences", prefs.cursor_key())
        widths = prefs.fit_columns(PREFERENCE_COLUMNS, width)
        found = profiles.preferences(db, limit=PREFERENCES_SHOWN)
        for p in found:
            prefs.add_row(ellipsize(p.record.title, widths["rule"]), p.category or "-",
                          p.record.confidence, f"{p.record.reinforce_count}×",
                          ellipsize(p.learned_in_name or "-", widths["learned"]),
                          key=p.record.id)
        prefs.cursor_to(under, keep)
        if not found:
            prefs.add_row("no preferences learned yet — they come from your sessions", "", "",
                          "", "")
        total = profiles.count_preferences(db)
        project = self.state.project
        profile = self.query_one("#project-profile", PlainTable)
        kept, held = profile.cursor_row, self._follow.pop("project-profile",
                                                         profile.cursor_key())
        value = profile.fit_columns(PROFILE_COLUMNS, width)["value"]
        rows = profiles.project_profile(db, project.id) if project else []
        for r in rows:
            profile.add_row(ellipsize(r.key or r.type, 16), ellipsize(r.title, value), key=r.id)
        profile.cursor_to(held, kept)
        if not rows:
            profile.add_row("-", "no profile detected yet (the SessionStart hook detects it)")
        name = project.name if project else "no project"
        self.query_one("#profile-heading", Static).update(f"Project profile: {name}")
        self.query_one(PaneTitle).set_text(
            f"Profile · {plural(total, 'preference')} · {name}: "
            f"{plural(len(rows), 'profile entry', 'profile entries')}")
