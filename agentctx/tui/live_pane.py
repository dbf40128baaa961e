"""Pane 6, Live: each injection as it happens, newest first — while Claude Code runs in another
terminal, its SessionStart digests and per-prompt records show here within ``tui_poll_ms``.

The App polls ``PRAGMA data_version`` (one cheap pragma per tick, nothing more on an idle store);
only when another connection committed does this pane read the receipts newer than the last one
it saw (:func:`agentctx.store.sessions.receipts_since`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from textual.app import ComposeResult
from textual.widgets import Static

from agentctx.store import projects as proj
from agentctx.store import sessions as store_sessions
from agentctx.store.models import Receipt, ReceiptItem
from agentctx.tui.actions import Action
from agentctx.tui.cells import ago, ellipsize, minute, plural, record_names, tokens
from agentctx.tui.pane import Pane, PaneTitle
from agentctx.tui.widgets.table import Column, PlainTable

if TYPE_CHECKING:
    from agentctx.tui.appstate import AppState

KEEP = 300
COLUMNS = (Column("when", "when", 11), Column("event", "event", 6),
           Column("project", "project", 8, grow=1), Column("tokens", "tok", 6),
           Column("prompt", "prompt", 16, grow=3), Column("records (why)", "records", 20, grow=8))
EVENT_NAMES = {"SessionStart": "start", "UserPromptSubmit": "prompt",
               "SubagentStart": "subagent", "PreCompact": "compact"}


def item_label(item: ReceiptItem, title: str) -> str:
    """One injected record: its title, whether it came as a one-line pointer, and why
    (relevance, matched words)."""
    label = f"{title} [pointer]" if item.pointer else title
    if item.score is not None and item.matched:
        label += f" ({item.score:.2f}: {', '.join(item.matched)})"
    return label


def records_cell(receipt: Receipt, titles: dict[str, str]) -> str:
    """What a receipt injected: the records of a prompt, a count for a digest."""
    if receipt.event == "SessionStart":
        return f"digest: {plural(len(receipt.record_ids), 'record')}"
    if not receipt.record_ids:
        return "(nothing)"
    return " · ".join(item_label(i, titles.get(i.record_id, i.record_id))
                      for i in receipt.items)


class LivePane(Pane):
    """Injections of every project as they happen."""

    ACTIONS = (Action("", "", "", "injections appear here as Claude Code runs (every "
                      "tui_poll_ms)", footer=False, palette=False, bound=False),)

    def __init__(self, state: AppState, **kwargs: object) -> None:
        super().__init__(state, **kwargs)
        self.receipts: list[Receipt] = []  # newest first
        self.last_id = 0
        self.titles: dict[str, str] = {}
        self.names: dict[str, str] = {}

    def compose(self) -> ComposeResult:
        yield PaneTitle("Live", classes="pane-title")
        yield Static("", classes="empty", markup=False)
        yield PlainTable(cursor_type="row", zebra_stripes=True, id="live-table")

    def on_mount(self) -> None:
        db = self.state.db
        self.receipts = store_sessions.latest_receipts(db, limit=100)
        self.last_id = self.receipts[0].id if self.receipts else 0
        self._learn(self.receipts)

    def _learn(self, found: list[Receipt]) -> None:
        wanted = {rid for r in found for rid in r.record_ids} - set(self.titles)
        if wanted:
            self.titles.update(record_names(self.state.db, wanted))
        if any(r.project_id not in self.names for r in found):
            self.names = {s.project.id: s.project.name for s in proj.list_all(self.state.db)}

    def reload(self) -> None:
        table = self.query_one(PlainTable)
        keep, under = table.cursor_row, table.cursor_key()
        widths = table.fit_columns(COLUMNS, self.layout_width())
        for r in self.receipts:
            table.add_row(minute(r.created_at)[5:], EVENT_NAMES.get(r.event, r.event),
                          ellipsize(self.names.get(r.project_id, "?"), widths["project"]),
                          tokens(r.tokens), ellipsize(r.prompt or "-", widths["prompt"]),
                          ellipsize(records_cell(r, self.titles), widths["records"]),
                          key=str(r.id))
        table.cursor_to(under, keep)
        latest = self.receipts[0] if self.receipts else None
        seen = f"last {ago(latest.created_at, self.state.now())}" if latest else "none yet"
        self.query_one(PaneTitle).set_text(
            f"Live · injections as they happen, newest first · {len(self.receipts):,} shown · "
            f"{seen}")
        empty = self.query_one(".empty", Static)
        empty.display = not self.receipts
        empty.update("Nothing injected yet. Start Claude Code in a project after "
                     "`agentctx init`: each injection shows here as it happens.")

    def store_changed(self) -> None:
        """Read the receipts written since the last one seen (on screen or not)."""
        found = store_sessions.receipts_since(self.state.db, self.last_id)
        if not found:
            return
        self.last_id = found[-1].id
        self._learn(found)
        self.receipts = (list(reversed(found)) + self.receipts)[:KEEP]
        if self.is_active:
            self.reload()
