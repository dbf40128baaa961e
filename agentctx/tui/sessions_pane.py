"""Pane 5, Sessions: what agentctx cost each session — tokens injected at SessionStart and per
prompt, injections, extraction — with totals per day (and a chart) and per project; ``enter``
on a session lists its receipts: which records, why, how many tokens, the prompt's first words.
"""

from __future__ import annotations

from datetime import timedelta
from typing import TYPE_CHECKING

from textual.app import ComposeResult
from textual.containers import Horizontal
from textual.widgets import DataTable, Sparkline, Static

from agentctx.store import projects as proj
from agentctx.store import sessions as store_sessions
from agentctx.store import stats
from agentctx.store.models import GLOBAL_PROJECT, Receipt, ReceiptItem
from agentctx.tui.actions import Action
from agentctx.tui.cells import (
    ellipsize,
    home_path,
    minute,
    plural,
    record_names,
    tail,
    tokens,
    usd,
)
from agentctx.tui.pane import Pane, PaneTitle
from agentctx.tui.widgets.table import Column, PlainTable

if TYPE_CHECKING:
    from agentctx.tui.appstate import AppState

PAGE = 200
CHART_DAYS = 30
SESSION_COLUMNS = (Column("started", "started", 16), Column("project", "project", 8, grow=1),
                   Column("worktree", "worktree", 10, grow=4), Column("start tok", "ss", 9),
                   Column("prompt tok", "pt", 10), Column("inj", "inj", 3),
                   Column("extract", "usd", 8))
RECEIPT_COLUMNS = (Column("at", "at", 11), Column("event", "event", 6),
                   Column("tokens", "tok", 6), Column("prompt", "prompt", 14, grow=3),
                   Column("record", "record", 16, grow=3), Column("why", "why", 14, grow=2))
EVENT_NAMES = {"SessionStart": "start", "UserPromptSubmit": "prompt",
               "SubagentStart": "subagent", "PreCompact": "compact"}


def item_rows(receipt: Receipt, titles: dict[str, str]) -> list[tuple[str, ...]]:
    """A receipt as table rows: one per record injected (the first carries the tokens);
    ``titles`` names each record (a forgotten one by its short id)."""
    rows: list[tuple[str, ...]] = []
    items: list[ReceiptItem | None] = list(receipt.items) or [None]
    if receipt.event == "SessionStart":
        return [(minute(receipt.created_at)[5:], "start", tokens(receipt.tokens), "",
                 f"the digest: {plural(len(receipt.record_ids), 'record')}", "")]
    for index, item in enumerate(items):
        if item is None:
            record, why = "(nothing)", ""
        else:
            record = titles.get(item.record_id, item.record_id)
            why = "" if item.score is None else f"{item.score:.2f}"
            if item.matched:
                why += " " + ",".join(item.matched)
        first = index == 0
        rows.append((minute(receipt.created_at)[5:] if first else "",
                     EVENT_NAMES.get(receipt.event, receipt.event) if first else "",
                     tokens(receipt.tokens) if first else "",
                     (receipt.prompt or "") if first else "", record, why.strip()))
    return rows


class SessionsPane(Pane):
    """Sessions of the active project, newest first, with their receipts."""

    ACTIONS = (
        Action("enter", "receipts", "Receipts", "list the session's receipts (what was "
               "injected and why)", "Receipts of the session", priority=True),
        Action("escape", "close_receipts", "Close", "close the receipts", "Close receipts",
               footer=False),
        Action("p", "toggle_projects", "All projects", "every project or the active one",
               "Every project / the active one"),
    )

    def __init__(self, state: AppState, **kwargs: object) -> None:
        super().__init__(state, **kwargs)
        self.every_project = False
        self.receipts_of: str | None = None  # the session whose receipts are open

    def compose(self) -> ComposeResult:
        yield PaneTitle("Sessions", classes="pane-title")
        with Horizontal(id="chart-row"):
            yield Sparkline([], id="per-day")
            yield Static("", id="chart-caption", markup=False)
        yield Static("", id="per-project", markup=False)
        yield PlainTable(cursor_type="row", zebra_stripes=True, id="sessions-table")
        yield Static("", id="receipts-heading", markup=False)
        yield PlainTable(cursor_type="row", zebra_stripes=True, id="receipts-table")

    def on_mount(self) -> None:
        self.query_one("#receipts-table").display = False
        self.query_one("#receipts-heading").display = False

    def _scope(self) -> str | None:
        project = self.state.project
        return None if self.every_project or project is None else project.id

    def reload(self) -> None:
        db = self.state.db
        scope = self._scope()
        names = {s.project.id: s.project.name for s in proj.list_all(db)}
        table = self.query_one("#sessions-table", PlainTable)
        keep, under = table.cursor_row, table.cursor_key()
        widths = table.fit_columns(SESSION_COLUMNS, self.layout_width())
        found = stats.session_summaries(db, scope, limit=PAGE)
        for s in found:
            table.add_row(minute(s.started_at),
                          ellipsize(names.get(s.project_id, "?"), widths["project"]),
                          tail(home_path(s.worktree or s.cwd or "-"), widths["worktree"]),
                          f"{tokens(s.session_start_tokens)}", f"{tokens(s.prompt_tokens)}",
                          str(s.session_start_injections + s.prompt_injections),
                          usd(s.extraction_usd), key=s.session_id)
        table.cursor_to(under, keep)
        total = store_sessions.count(db, scope)
        today = self.state.now().date()
        first = today - timedelta(days=CHART_DAYS - 1)
        days = {d.day: d for d in stats.tokens_per_day(db, scope, since=first.isoformat())}
        series = [days[key].tokens if (key := (first + timedelta(days=i)).isoformat()) in days
                  else 0 for i in range(CHART_DAYS)]
        self.query_one(Sparkline).data = series
        peak = max(days.values(), key=lambda d: d.tokens, default=None)
        self.query_one("#chart-caption", Static).update(
            f"tokens per day, {CHART_DAYS} days: {tokens(sum(series))}"
            + (f"\npeak {tokens(peak.tokens)} on {peak.day}" if peak else ""))
        per_project = sorted(((s.tokens_injected, s.project.name) for s in proj.list_all(db)
                              if s.project.id != GLOBAL_PROJECT and s.tokens_injected),
                             reverse=True)
        self.query_one("#per-project", Static).update(
            "per project: " + (" · ".join(f"{name} {tokens(t)}" for t, name in per_project[:6])
                               or "nothing injected yet"))
        where = "every project" if scope is None else (self.state.project.name
                                                        if self.state.project else "")
        self.query_one(PaneTitle).set_text(
            f"Sessions · {where} · {plural(total, 'session')} · enter: receipts")
        if not found:
            table.add_row("no sessions yet — start Claude Code in a project after "
                          "`agentctx init`", "", "", "", "", "", "")
        if self.receipts_of is not None:
            self.show_receipts(self.receipts_of, focus=False)

    def action_receipts(self) -> None:
        """List the highlighted session's receipts."""
        table = self.query_one("#sessions-table", DataTable)
        if not table.row_count:
            return
        session_id = table.coordinate_to_cell_key(table.cursor_coordinate).row_key.value
        if not session_id or store_sessions.get(self.state.db, session_id) is None:
            return
        self.show_receipts(session_id)

    def show_receipts(self, session_id: str, *, focus: bool = True) -> None:
        """Fill the receipts table for one session (and focus it)."""
        self.receipts_of = session_id
        db = self.state.db
        found = store_sessions.receipts(db, session_id, limit=500)
        titles = record_names(db, {rid for r in found for rid in r.record_ids})
        receipts = self.query_one("#receipts-table", PlainTable)
        keep, under = receipts.cursor_row, receipts.cursor_key()
        widths = receipts.fit_columns(RECEIPT_COLUMNS, self.layout_width())
        for receipt in found:
            for index, row in enumerate(item_rows(receipt, titles)):
                receipts.add_row(*(ellipsize(cell, widths[c.key]) for cell, c in
                                   zip(row, RECEIPT_COLUMNS, strict=True)),
                                 key=f"{receipt.id}:{index}")
        heading = self.query_one("#receipts-heading", Static)
        heading.update(f"Receipts of session {session_id[:8]} · "
                       f"{plural(len(found), 'injection')} · escape: close")
        heading.display = True
        receipts.display = True
        if focus:
            self.screen.set_focus(receipts)
        else:
            receipts.cursor_to(under, keep)

    def action_close_receipts(self) -> None:
        """Hide the receipts, back to the sessions."""
        receipts = self.query_one("#receipts-table", DataTable)
        if receipts.display:
            receipts.display = False
            self.receipts_of = None
            self.query_one("#receipts-heading").display = False
            self.screen.set_focus(self.query_one("#sessions-table"))
        else:
            self.focus_main()

    def action_toggle_projects(self) -> None:
        """Sessions of every project, or of the active one."""
        self.every_project = not self.every_project
        self.reload()
