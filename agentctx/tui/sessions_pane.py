"""Pane 5, Sessions: what agentctx cost each session — tokens injected at SessionStart and per
prompt, injections, extraction — with totals per day (and a chart) and per project; ``enter``
on a session lists its receipts: which records, why, how many tokens, the prompt's first words.
"""

from __future__ import annotations

from datetime import timedelta
from typing import TYPE_CHECKING, Any

from textual.app import ComposeResult
from textual.containers import Horizontal
from textual.widgets import DataTable, Sparkline, Static

from agentctx.store import projects as proj
from agentctx.store import records as rec
from agentctx.store import sessions as store_sessions
from agentctx.store import stats
from agentctx.store.models import GLOBAL_PROJECT, Receipt, ReceiptItem
from agentctx.tui.actions import Action
from agentctx.tui.cells import ellipsize, home_path, minute, tokens, usd
from agentctx.tui.pane import Pane, PaneTitle
from agentctx.tui.widgets.table import PlainTable

if TYPE_CHECKING:
    from agentctx.tui.appstate import AppState

PAGE = 200
CHART_DAYS = 30
RECEIPT_COLUMNS = (("at", "at", 11), ("event", "event", 6), ("tokens", "tok", 6),
                   ("prompt", "prompt", 16), ("record", "record", 22), ("why", "why", 16))
EVENT_NAMES = {"SessionStart": "start", "UserPromptSubmit": "prompt",
               "SubagentStart": "subagent", "PreCompact": "compact"}


def item_rows(receipt: Receipt, titles: dict[str, str]) -> list[tuple[str, ...]]:
    """A receipt as table rows: one per record injected (the first carries the tokens)."""
    rows: list[tuple[str, ...]] = []
    items: list[ReceiptItem | None] = list(receipt.items) or [None]
    if receipt.event == "SessionStart":
        return [(minute(receipt.created_at)[5:], "start", tokens(receipt.tokens), "",
                 f"the digest: {len(receipt.record_ids)} records", "")]
    for index, item in enumerate(items):
        if item is None:
            record, why = "(nothing)", ""
        else:
            record = titles.get(item.record_id, item.record_id[:10])
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

    def compose(self) -> ComposeResult:
        yield PaneTitle("Sessions", classes="pane-title")
        with Horizontal(id="chart-row"):
            yield Sparkline([], id="per-day")
            yield Static("", id="chart-caption", markup=False)
        yield Static("", id="per-project", markup=False)
        table: DataTable[Any] = PlainTable(cursor_type="row", zebra_stripes=True,
                                          id="sessions-table")
        for name, key, width in (("started", "started", 16), ("project", "project", 8),
                                 ("worktree", "worktree", 10), ("start", "ss", 7),
                                 ("prompts", "pt", 7), ("inj", "inj", 3),
                                 ("extract", "usd", 8)):
            table.add_column(name, key=key, width=width)
        yield table
        yield Static("", id="receipts-heading", markup=False)
        receipts: DataTable[Any] = PlainTable(cursor_type="row", zebra_stripes=True,
                                             id="receipts-table")
        for name, key, width in RECEIPT_COLUMNS:
            receipts.add_column(name, key=key, width=width)
        yield receipts

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
        table = self.query_one("#sessions-table", DataTable)
        keep = table.cursor_row
        table.clear()
        found = stats.session_summaries(db, scope, limit=PAGE)
        for s in found:
            table.add_row(minute(s.started_at), ellipsize(names.get(s.project_id, "?"), 8),
                          ellipsize(home_path(s.worktree or s.cwd or "-"), 10),
                          f"{tokens(s.session_start_tokens)}", f"{tokens(s.prompt_tokens)}",
                          str(s.session_start_injections + s.prompt_injections),
                          usd(s.extraction_usd), key=s.session_id)
        if found:
            table.move_cursor(row=min(keep, len(found) - 1), animate=False)
        total = store_sessions.count(db, scope)
        today = self.state.now().date()
        first = today - timedelta(days=CHART_DAYS - 1)
        days = {d.day: d for d in stats.tokens_per_day(db, scope, since=first.isoformat())}
        series = [days[key].tokens if (key := (first + timedelta(days=i)).isoformat()) in days
                  else 0 for i in range(CHART_DAYS)]
        self.query_one(Sparkline).data = series
        peak = max(days.values(), key=lambda d: d.tokens, default=None)
        self.query_one("#chart-caption", Static).update(
            f"tokens per day, last {CHART_DAYS} days: {tokens(sum(series))} in all"
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
            f"Sessions · {where} · {total} sessions · enter: receipts")
        if not found:
            table.add_row("no sessions yet — start Claude Code in a project after "
                          "`agentctx init`", "", "", "", "", "", "")

    def action_receipts(self) -> None:
        """List the highlighted session's receipts."""
        table = self.query_one("#sessions-table", DataTable)
        if not table.row_count:
            return
        session_id = table.coordinate_to_cell_key(table.cursor_coordinate).row_key.value
        if not session_id or store_sessions.get(self.state.db, session_id) is None:
            return
        self.show_receipts(session_id)

    def show_receipts(self, session_id: str) -> None:
        """Fill the receipts table for one session."""
        db = self.state.db
        found = store_sessions.receipts(db, session_id, limit=500)
        wanted = sorted({rid for r in found for rid in r.record_ids})
        records, _missing = rec.get_many(db, wanted)
        titles = {r.id: r.title for r in records}
        receipts = self.query_one("#receipts-table", DataTable)
        receipts.clear()
        for receipt in found:
            for index, row in enumerate(item_rows(receipt, titles)):
                receipts.add_row(*(ellipsize(cell, w) for cell, (_n, _k, w) in
                                   zip(row, RECEIPT_COLUMNS, strict=True)),
                                 key=f"{receipt.id}:{index}")
        heading = self.query_one("#receipts-heading", Static)
        heading.update(f"Receipts of session {session_id[:8]} · {len(found)} injections · "
                       "escape: close")
        heading.display = True
        receipts.display = True
        self.screen.set_focus(receipts)

    def action_close_receipts(self) -> None:
        """Hide the receipts, back to the sessions."""
        receipts = self.query_one("#receipts-table", DataTable)
        if receipts.display:
            receipts.display = False
            self.query_one("#receipts-heading").display = False
            self.screen.set_focus(self.query_one("#sessions-table"))
        else:
            self.focus_main()

    def action_toggle_projects(self) -> None:
        """Sessions of every project, or of the active one."""
        self.every_project = not self.every_project
        self.reload()
