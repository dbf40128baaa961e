"""Pane 6, Live: each injection as it happens, newest first — while Claude Code runs in another
terminal, its SessionStart digests and per-prompt records show here within ``tui_poll_ms``.

The App polls ``PRAGMA data_version`` (one cheap pragma per tick, nothing more on an idle store);
only when another connection committed does this pane read the receipts newer than the last one
it saw (:func:`agentctx.store.sessions.receipts_since`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from textual.app import ComposeResult
from textual.widgets import DataTable, Static

from agentctx.store import projects as proj
from agentctx.store import records as rec
from agentctx.store import sessions as store_sessions
from agentctx.store.models import Receipt, ReceiptItem
from agentctx.tui.actions import Action
from agentctx.tui.cells import ago, ellipsize, minute, tokens
from agentctx.tui.pane import Pane, PaneTitle
from agentctx.tui.widgets.table import PlainTable

if TYPE_CHECKING:
    from agentctx.tui.appstate import AppState

KEEP = 300
FIXED_WIDTH = 11 + 6 + 8 + 6 + 18 + 2 * 6 + 2  # every column but the records, with padding
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
        return f"digest: {len(receipt.record_ids)} records"
    if not receipt.record_ids:
        return "(nothing)"
    return " · ".join(item_label(i, titles.get(i.record_id, i.record_id[:10]))
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
        table: DataTable[Any] = PlainTable(cursor_type="row", zebra_stripes=True, id="live-table")
        yield table

    def _columns(self) -> int:
        """(Re)make the columns; the records column takes the width that is left."""
        table = self.query_one(DataTable)
        table.clear(columns=True)
        rest = max(20, (self.size.width or 80) - FIXED_WIDTH)
        for name, key, width in (("when", "when", 11), ("event", "event", 6),
                                 ("project", "project", 8), ("tokens", "tok", 6),
                                 ("prompt", "prompt", 18), ("records (why)", "records", rest)):
            table.add_column(name, key=key, width=width)
        return rest

    def on_mount(self) -> None:
        db = self.state.db
        self.receipts = store_sessions.latest_receipts(db, limit=100)
        self.last_id = self.receipts[0].id if self.receipts else 0
        self._learn(self.receipts)

    def _learn(self, found: list[Receipt]) -> None:
        wanted = sorted({rid for r in found for rid in r.record_ids} - set(self.titles))
        if wanted:
            records, _ = rec.get_many(self.state.db, wanted)
            self.titles.update({r.id: r.title for r in records})
        if any(r.project_id not in self.names for r in found):
            self.names = {s.project.id: s.project.name for s in proj.list_all(self.state.db)}

    def reload(self) -> None:
        table = self.query_one(DataTable)
        rest = self._columns()
        for r in self.receipts:
            table.add_row(minute(r.created_at)[5:], EVENT_NAMES.get(r.event, r.event),
                          ellipsize(self.names.get(r.project_id, "?"), 8), tokens(r.tokens),
                          ellipsize(r.prompt or "-", 18),
                          ellipsize(records_cell(r, self.titles), rest), key=str(r.id))
        latest = self.receipts[0] if self.receipts else None
        seen = f"last {ago(latest.created_at, self.state.now())}" if latest else "none yet"
        self.query_one(PaneTitle).set_text(
            f"Live · injections as they happen, newest first · {len(self.receipts)} shown · "
            f"{seen}")
        empty = self.query_one(".empty", Static)
        empty.display = not self.receipts
        empty.update("Nothing injected yet. Start Claude Code in a project after "
                     "`agentctx init`: each injection shows here as it happens.")

    def on_resize(self) -> None:
        if self.is_active:
            self.reload()

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
