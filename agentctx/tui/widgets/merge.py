"""Merge candidates (``m`` on the records pane): the near-duplicate pairs consolidation found,
side by side. ``enter`` merges (the older is superseded by the newer, as consolidation's merge
does), ``b`` keeps both (the pair is never asked about again), ``space`` skips, ``escape`` closes.
"""

from __future__ import annotations

import sqlite3
from typing import TYPE_CHECKING, ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Static

from agentctx.store import records as rec
from agentctx.store import upkeep
from agentctx.store.errors import StoreError
from agentctx.store.models import Record
from agentctx.tui.cells import day
from agentctx.tui.widgets.keybar import KeyBar

if TYPE_CHECKING:
    from agentctx.tui.appstate import AppState

MERGE_REASON = "confirmed in agentctx tui"


def side(label: str, record: Record, short_id: str) -> str:
    """One record of a pair as plain text."""
    pinned = " · pinned" if record.pinned else ""
    return (f"{record.title}\n\n{label}\n{short_id} · {record.confidence}{pinned} · from "
            f"{day(record.valid_from)}\n\n{record.body.strip() or '(no body)'}")


class MergeScreen(ModalScreen[bool]):
    """One candidate pair at a time; dismisses with whether anything was written."""

    DEFAULT_CSS = """
    MergeScreen { align: center middle; }
    MergeScreen > Vertical { width: 100%; height: 100%; border: thick $accent;
                             background: $surface; padding: 0 1; }
    MergeScreen #merge-heading { height: auto; text-style: bold; }
    MergeScreen #merge-pair { height: 1fr; }
    MergeScreen .merge-side { width: 1fr; height: 1fr; border: round $panel; padding: 0 1;
                              overflow-y: auto; }
    MergeScreen #merge-keys { height: 1; color: $text-muted; }
    """
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("enter", "merge", "Merge", priority=True), Binding("b", "keep_both", "Keep both"),
        Binding("space", "skip", "Skip"), Binding("escape", "close", "Close")]

    def __init__(self, state: AppState, project_id: str) -> None:
        super().__init__()
        self.state = state
        self.project_id = project_id
        self.pairs: list[upkeep.NearDuplicate] = []
        self.index = 0
        self.changed = False

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Static("", id="merge-heading", markup=False)
            with Horizontal(id="merge-pair"):
                yield Static("", id="merge-older", classes="merge-side", markup=False)
                yield Static("", id="merge-newer", classes="merge-side", markup=False)
            yield Static("enter merge · b keep both (never asked again) · space skip · "
                         "escape close", id="merge-keys", markup=False)
        yield KeyBar(tail=())  # the dialog's own keys

    def on_mount(self) -> None:
        self.pairs = upkeep.near_duplicates(self.state.db, self.project_id)
        self.show_pair()

    def show_pair(self) -> None:
        """The pair under review, or the end of the list."""
        heading = self.query_one("#merge-heading", Static)
        older = self.query_one("#merge-older", Static)
        newer = self.query_one("#merge-newer", Static)
        if self.index >= len(self.pairs):
            heading.update("No merge candidates left" if self.pairs else
                           "No merge candidates: consolidation found no near-duplicate pairs "
                           "(agentctx consolidate looks for them)")
            older.display = newer.display = False
            return
        pair = self.pairs[self.index]
        heading.update(f"Merge candidate {self.index + 1} of {len(self.pairs)} · {pair.first.type}"
                       f" · cosine {pair.cosine:.3f} · word overlap {pair.overlap:.2f}")
        shorts = rec.short_ids(self.state.db, [pair.first.id, pair.second.id])
        older.update(side("older: a merge supersedes it", pair.first, shorts[pair.first.id]))
        newer.update(side("newer: a merge keeps it", pair.second, shorts[pair.second.id]))

    def _current_pair(self) -> upkeep.NearDuplicate | None:
        if self.index >= len(self.pairs):
            return None
        pair = self.pairs[self.index]
        first, second = rec.get(self.state.db, pair.first.id), rec.get(self.state.db,
                                                                        pair.second.id)
        if not (first.current and second.current):
            self.app.notify("one of the pair is no longer current; skipped", timeout=3)
            self.action_skip()
            return None
        return pair._replace(first=first, second=second)

    def action_merge(self) -> None:
        """Supersede the older by the newer (the write path's merge, as consolidation's)."""
        try:
            pair = self._current_pair()
            if pair is None:
                return
            survivor = self.state.writer.merge(pair, MERGE_REASON)
        except (StoreError, sqlite3.Error) as exc:
            self.app.notify(f"nothing written: {exc}", severity="error", timeout=6)
            return
        self.changed = True
        shorts = rec.short_ids(self.state.db, [pair.first.id, survivor.id])
        self.app.notify(f"merged: {shorts[pair.first.id]} superseded by {shorts[survivor.id]}",
                        timeout=3)
        note = self.state.writer.take_note()
        if note:  # the merge holds; the team file could not follow it
            self.app.notify(f"team file not updated: {note}", severity="warning", timeout=8)
        self.action_skip()

    def action_keep_both(self) -> None:
        """Remember the pair as distinct (never asked again)."""
        try:
            pair = self._current_pair()
            if pair is None:
                return
            upkeep.mark_distinct(self.state.db, pair.first.id, pair.second.id,
                                 f"kept both: {MERGE_REASON}")
        except (StoreError, sqlite3.Error) as exc:
            self.app.notify(f"nothing written: {exc}", severity="error", timeout=6)
            return
        self.changed = True
        self.app.notify("kept both; this pair will not be asked about again", timeout=3)
        self.action_skip()

    def action_skip(self) -> None:
        """The next pair."""
        self.index += 1
        self.show_pair()

    def action_close(self) -> None:
        """Back to the records."""
        self.dismiss(self.changed)
