"""Pane 4, Profile: the developer's global preferences and the active project's profile."""

from __future__ import annotations

from typing import Any

from textual.app import ComposeResult
from textual.widgets import DataTable, Static

from agentctx.store import profiles
from agentctx.store import records as rec
from agentctx.store.errors import NotFound
from agentctx.store.models import Record
from agentctx.tui.actions import Action
from agentctx.tui.cells import ellipsize
from agentctx.tui.editing import EDIT_ACTIONS, RecordEditing
from agentctx.tui.pane import PaneTitle
from agentctx.tui.widgets.table import PlainTable

PREFERENCES_SHOWN = 500


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

    def reload(self) -> None:
        db = self.state.db
        width = self.size.width or 80
        prefs = self.query_one("#preferences", DataTable)
        prefs.clear(columns=True)
        rule_width = max(16, width - 10 - 10 - 6 - 14 - 10 - 2)
        for name, key, size in (("rule", "rule", rule_width), ("category", "category", 10),
                                ("confidence", "confidence", 10), ("seen", "seen", 4),
                                ("learned in", "learned", 14)):
            prefs.add_column(name, key=key, width=size)
        found = profiles.preferences(db, limit=PREFERENCES_SHOWN)
        for p in found:
            prefs.add_row(ellipsize(p.record.title, rule_width), p.category or "-",
                          p.record.confidence, f"{p.record.reinforce_count}×",
                          ellipsize(p.learned_in_name or "-", 14), key=p.record.id)
        if not found:
            prefs.add_row("no preferences learned yet — they come from your sessions", "", "",
                          "", "")
        total = profiles.count_preferences(db)
        project = self.state.project
        profile = self.query_one("#project-profile", DataTable)
        profile.clear(columns=True)
        profile.add_column("what", key="what", width=16)
        profile.add_column("value", key="value", width=max(16, width - 22))
        rows = profiles.project_profile(db, project.id) if project else []
        for r in rows:
            profile.add_row(ellipsize(r.key or r.type, 16),
                            ellipsize(r.title, max(16, width - 22)), key=r.id)
        if not rows:
            profile.add_row("-", "no profile detected yet (the SessionStart hook detects it)")
        name = project.name if project else "no project"
        self.query_one("#profile-heading", Static).update(f"Project profile: {name}")
        self.query_one(PaneTitle).set_text(
            f"Profile · {total} preferences · {name}: {len(rows)} profile entries")
