"""Pane 2, Records: the active project's records, searched as you type, filtered, sorted, as of
a date; ``enter`` opens the detail panel.

The table is paged: it reads :data:`PAGE` rows and the next page when the cursor nears the end,
so a 100K-record project opens as fast as a small one. Searches run on the app's reader thread
(one connection of its own, kept open); while one runs, further keystrokes are coalesced into
the next search, so stale searches never pile up and the table shows the newest text's hits.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from textual import work
from textual.app import ComposeResult
from textual.containers import Horizontal
from textual.message import Message
from textual.widgets import DataTable, Input, Static

from agentctx.core.ids import parse_time
from agentctx.store import details as store_details
from agentctx.store import pathstate
from agentctx.store import records as rec
from agentctx.store.db import Store
from agentctx.store.errors import NotFound
from agentctx.store.models import Hit, Record
from agentctx.store.search import Query
from agentctx.store.selection import Selection
from agentctx.tui.actions import Action
from agentctx.tui.cells import day, ellipsize, plural
from agentctx.tui.editing import EDIT_ACTIONS, RecordEditing
from agentctx.tui.listing import Filters
from agentctx.tui.messages import ShowChain
from agentctx.tui.pane import PaneTitle
from agentctx.tui.widgets.table import Column, PlainTable

if TYPE_CHECKING:
    from agentctx.tui.appstate import AppState
    from agentctx.tui.detail import DetailPanel

PAGE = 100
STALE_CELL = "paths gone"  # the superseded column of a possibly stale record
BESIDE_WIDTH = 100  # from this many columns the detail panel sits beside the table
DETAIL_SHARE = 45  # the detail panel's share of the width then (records_pane.tcss)
FOLLOW_PAGES = 10  # how far a reload reads on to keep the cursor on its record
SEARCH_LIMIT = 100
ORDER_NAMES = tuple(rec.ORDERS)


def check_date(text: str) -> str | None:
    """Why ``text`` is not a date the store understands (``None`` when it is)."""
    try:
        parse_time(text)
    except ValueError as exc:
        return str(exc)
    return None


class RecordsPane(RecordEditing):
    """The active project's records."""

    ACTIONS = (
        Action("enter", "open", "Open", "open the record's detail panel (beside the table when "
               "the terminal is wide)", "Open record", priority=True),
        Action("slash", "search", "Search", "search as you type (the store's one search); "
               "escape leaves the field"),
        Action("f", "filter", "Filter", "filter by type, confidence, pinned, superseded"),
        Action("a", "as_of", "As of", "as of a date: what was in force then", "As of a date"),
        Action("o", "sort", "Sort", "sort: newest, oldest, title, type, confidence"),
        Action("g", "toggle_global", "Global", "include the global profile (developer "
               "preferences)", "Toggle global scope"),
        Action("c", "chain", "Chain", "the record's supersession chain", "Chain of the record",
               footer=False),
        Action("y", "copy_id", "Copy id", "copy the record's id", "Copy record id",
               footer=False),
        *EDIT_ACTIONS,
        Action("m", "merge", "Merge", "merge candidates: near-duplicate pairs consolidation "
               "found", "Merge candidates", footer=False),
    )

    def __init__(self, state: AppState, **kwargs: object) -> None:
        super().__init__(state, **kwargs)
        self.filters = Filters()
        self.stale: set[str] = set()
        self.as_of: str | None = None
        self.order = "newest"
        self.include_global = False
        self.query_text = ""
        self.search_mode = ""
        self.total = 0
        self._more = False
        self.loaded = 0
        self.records: dict[str, Record] = {}
        self._search_busy = False
        self._next_search: str | None = None
        self._follow: str | None = None  # the record the cursor goes to on the next reload
        self._width = 16
        self._superseded_column = False
        self._laid_out: tuple[tuple[Column, ...], int] = ((), 0)

    def compose(self) -> ComposeResult:
        yield PaneTitle("Records", classes="pane-title")
        yield Input(placeholder="/ search records (escape: back to the table)", id="search")
        yield Static("", classes="empty", markup=False)
        table: DataTable[Any] = PlainTable(cursor_type="row", zebra_stripes=True,
                                          id="records-table")
        with Horizontal(id="records-body"):
            yield table

    def on_mount(self) -> None:
        self._columns()

    TABLE_ACTIONS = frozenset({"filter", "as_of", "sort", "toggle_global", "open", "chain",
                               "copy_id"})

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """While the detail panel is open its own keys show in the footer, not the table's."""
        panel = self.detail_panel()
        return (action not in self.TABLE_ACTIONS or panel is None
                or (self.has_class("beside") and not panel.has_focus_within))

    def detail_panel(self) -> DetailPanel | None:
        """The detail panel when it is open (it is mounted on first use)."""
        found = self.query("#detail")
        panel = found.first() if found else None
        return panel if panel is not None and panel.display else None  # type: ignore[return-value]

    def on_resize(self) -> None:
        if self.records and self._layout() != self._laid_out:
            self.guarded(self.reload)

    def _layout(self) -> tuple[tuple[Column, ...], int]:
        """The table's columns (``superseded`` only when the listing can hold superseded
        records, else ``paths`` when some are possibly stale) and the width they share (less the
        detail panel's beside it)."""
        columns = [Column("type", "type", 10), Column("title", "title", 16, grow=1),
                   Column("confidence", "confidence", 10), Column("valid from", "valid", 10),
                   Column("p", "pinned", 1)]
        if self.filters.state != "current" or self.as_of:
            columns.append(Column("superseded", "superseded", 10))
        elif self.stale:
            columns.append(Column("paths", "superseded", 10))
        width = self.size.width or 80
        if self.has_class("beside"):
            width -= width * DETAIL_SHARE // 100
        return tuple(columns), width

    def _columns(self) -> None:
        table = self.query_one(PlainTable)
        self._laid_out = self._layout()
        columns, width = self._laid_out
        self._width = table.fit_columns(columns, width)["title"]
        self._superseded_column = len(columns) > 5

    # ------------------------------------------------------------------ reading

    def selection(self) -> Selection:
        """What the pane lists and searches: the project, the filters, the date."""
        project = self.state.project
        f = self.filters
        return Selection(project_id=project.id if project else "",
                         include_global=self.include_global, types=tuple(f.types),
                         confidences=tuple(f.confidences), state=f.state,
                         pinned=f.pinned_only, as_of=self.as_of)

    def reload(self) -> None:
        """Read the listing (or run the search) again, the cursor on the record it was on (by
        id: rows move when records are written), else on the row it was at."""
        under = self.highlighted()
        self._follow = self._follow or (under.id if under is not None else None)
        if self.query_text:
            self._start_search(self.query_text)
            return
        table = self.query_one(DataTable)
        keep = table.cursor_row
        follow, self._follow = self._follow, None
        self._read_stale()
        self._columns()
        self.records = {}
        self.loaded = 0
        self.total = -1  # counted after the first page is on screen
        self._more = True
        self._load_page()
        while self.loaded <= keep and self._more:
            self._load_page()
        while (follow is not None and follow not in self.records and self._more
               and self.loaded < FOLLOW_PAGES * PAGE):
            self._load_page()
        if follow in self.records:
            keep = table.get_row_index(follow)
        if table.row_count:
            table.move_cursor(row=min(keep, table.row_count - 1), animate=False)
        self.search_mode = ""
        self._update_title()
        self.call_after_refresh(self._count)

    def _count(self) -> None:
        """How many records the listing holds in all (for the title): counting a large project
        takes longer than reading a page, so it waits until the first page is painted."""
        if self.query_text:
            return
        selection = self.selection()
        self.total = (self.state.current_count()
                      if selection == Selection(project_id=selection.project_id)
                      else rec.count_records(self.state.db, selection))
        self._update_title()

    def _read_stale(self) -> None:
        """The project's possibly stale records (every path they name gone at the last check):
        their rows say so where a superseded one has its date."""
        project = self.state.project
        self.stale = {record.id for record, _ in pathstate.possibly_stale(
            self.state.db, project.id)} if project is not None else set()

    def _load_page(self) -> None:
        rows = rec.list_records(self.state.db, self.selection(), order=self.order, limit=PAGE,
                                offset=self.loaded)
        self._add_rows(rows)
        self.loaded += len(rows)
        self._more = len(rows) == PAGE

    def _add_rows(self, rows: list[Record]) -> None:
        table = self.query_one(DataTable)
        for r in rows:
            if r.id in self.records:
                continue
            self.records[r.id] = r
            cells = [r.type, ellipsize(r.title, self._width), r.confidence, day(r.valid_from),
                     "●" if r.pinned else ""]
            if self._superseded_column:
                cells.append(day(r.superseded_at) if r.superseded_at else
                             STALE_CELL if r.id in self.stale else "")
            table.add_row(*cells, key=r.id)

    def on_data_table_row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        if not self.query_text and event.cursor_row >= self.loaded - 10 and self._more:
            self._load_page()
        panel = self.detail_panel()
        record = self.highlighted()
        if (panel is not None and self.has_class("beside") and record is not None
                and (panel.item is None or panel.item.record.id != record.id)):
            self._show_detail(panel, record.id)  # beside the table, the detail follows the cursor

    def _update_title(self) -> None:
        project = self.state.project
        name = project.name if project else "no project"
        parts = [f"Records · {name}"]
        if self.query_text:
            parts.append(f"{plural(len(self.records), 'hit')} for “{self.query_text}” "
                         f"({self.search_mode})")
        else:
            parts.append("…" if self.total < 0 else f"{self.total:,} shown" if self.total
                         else "none")
        if self.filters.describe():
            parts.append(f"filter: {self.filters.describe()}")
        if self.stale and not self.query_text:
            parts.append(f"{len(self.stale)} possibly stale ({STALE_CELL}: agentctx verify)")
        if self.as_of:
            parts.append(f"as of {self.as_of}")
        if self.include_global:
            parts.append("+global")
        if not self.query_text:
            parts.append(f"sort: {self.order}")
        self.query_one(PaneTitle).set_text(" · ".join(parts))
        empty = self.query_one(".empty", Static)
        table_empty = not self.records
        empty.display = table_empty
        if project is None:
            empty.update("No records yet — run `agentctx init`, then use Claude Code.")
        elif self.query_text:
            empty.update(f"No record matches “{self.query_text}”.")
        elif self.filters != Filters() or self.as_of:
            empty.update("No record matches these filters (f to change them, a for the date).")
        else:
            empty.update(f"No records in {name} yet — use Claude Code in it, or "
                         "`agentctx add` one.")

    # ------------------------------------------------------------------ search

    def on_input_changed(self, event: Input.Changed) -> None:
        if event.input.id != "search":
            return
        event.stop()
        text = event.value.strip()
        if not text:
            self.query_text = ""
            self._next_search = None
            self.reload()
            return
        if self._search_busy:
            self._next_search = text
        else:
            self._start_search(text)

    def _query(self, text: str) -> Query:
        return Query(text, self.selection(), limit=SEARCH_LIMIT,
                     backend=self.state.cfg.get_str("search"))

    def _start_search(self, text: str) -> None:
        self._search_busy = True
        self._next_search = None
        self.run_search(text, self._query(text))

    @work(exclusive=True, group="records-search")
    async def run_search(self, text: str, query: Query) -> None:
        """Search on the reader thread's connection (the one search entry, with the query
        side file's vectors, as the CLI and the web view search); show the hits here."""
        from agentctx.ops import find  # late: the search entry (hybrid, vectors) on first use

        def look(db: Store) -> find.Found:
            return find.search(db, query, find.stored_vectors(db), substrings=True)

        try:
            found = await self.state.read(look)
            hits, mode = found.hits, found.mode
        except Exception as exc:  # a locked or damaged store: say so in the title
            hits, mode = [], f"search failed: {exc}"
        self.show_hits(text, hits, mode)

    def show_hits(self, text: str, hits: list[Hit], mode: str) -> None:
        """Fill the table with a search's hits (unless a newer text is waiting)."""
        self._search_busy = False
        if self._next_search is not None and self._next_search != text:
            self._start_search(self._next_search)
            return
        current = self.query_one("#search", Input).value.strip()
        if current != text:
            if current:
                self._start_search(current)
            return
        self.query_text = text
        self.search_mode = mode.split(" ")[0]
        table = self.query_one(DataTable)
        self._columns()
        self.records = {}
        self._add_rows([h.record for h in hits])
        self.loaded = self.total = len(self.records)
        self._more = False
        follow, self._follow = self._follow, None
        if table.row_count:
            table.move_cursor(row=table.get_row_index(follow) if follow in self.records else 0,
                              animate=False)
        self._update_title()

    # ------------------------------------------------------------------ actions

    def highlighted(self) -> Record | None:
        """The record under the cursor."""
        table = self.query_one(DataTable)
        if not table.row_count:
            return None
        key = table.coordinate_to_cell_key(table.cursor_coordinate).row_key.value
        return self.records.get(key or "")

    def action_search(self) -> None:
        """Focus the search field."""
        self.close_detail()
        self.screen.set_focus(self.query_one("#search", Input))

    async def action_open(self) -> None:
        """``enter``: from the search field, go to the table; on the table, open the detail."""
        if self.query_one("#search", Input).has_focus:
            self.screen.set_focus(self.query_one(DataTable))
            return
        record = self.highlighted()
        if record is None:
            return
        from agentctx.tui.detail import DetailPanel  # late: markdown, 35 ms

        if not self.query(DetailPanel):
            await self.query_one("#records-body").mount(DetailPanel(id="detail"))
        panel = self.query_one(DetailPanel)
        self._show_detail(panel, record.id)
        panel.display = True
        wide = self.beside()
        self.set_class(wide, "beside")
        self.query_one(DataTable).display = wide
        if wide:
            self.reload()
        self.refresh_bindings()
        self.screen.set_focus(panel)

    def _show_detail(self, panel: DetailPanel, record_id: str) -> None:
        from agentctx.tui.detail import linked_ids  # late: markdown, 35 ms

        db = self.state.db
        item = store_details.detail(db, record_id)
        panel.show(item, rec.short_ids(db, linked_ids(item)))

    def beside(self) -> bool:
        """Whether the detail panel sits beside the table (a wide terminal) or replaces it."""
        return (self.size.width or 80) >= BESIDE_WIDTH

    def close_detail(self) -> None:
        """Back from the detail panel to the table."""
        panel = self.detail_panel()
        if panel is not None:
            panel.display = False
            self.set_class(False, "beside")
            self.refresh_bindings()
            table = self.query_one(DataTable)
            table.display = True
            self.screen.set_focus(table)

    def on_detail_panel_closed(self, event: Message) -> None:
        event.stop()
        self.close_detail()

    def on_detail_panel_chain_wanted(self, event: Message) -> None:
        event.stop()
        from agentctx.tui.detail import DetailPanel  # late: markdown, 35 ms

        assert isinstance(event, DetailPanel.ChainWanted)

        self.post_message(ShowChain(event.record_id))

    def focus_main(self) -> None:
        panel = self.detail_panel()
        if panel is not None:
            self.screen.set_focus(panel)
        else:
            self.screen.set_focus(self.query_one(DataTable))

    def action_filter(self) -> None:
        """Open the filter form."""
        from agentctx.tui.widgets.filters import FilterScreen  # late: 4 ms, on f

        def done(chosen: Filters | None) -> None:
            if chosen is not None:
                self.filters = chosen
                self.reload()
        self.app.push_screen(FilterScreen(self.filters), done)

    def action_as_of(self) -> None:
        """Ask for a date; the table then lists what was in force at it (empty: now)."""
        from agentctx.tui.widgets.ask import AskScreen  # late: on first use

        def done(answer: str | None) -> None:
            if answer is not None:
                self.as_of = answer or None
                self.reload()
        self.app.push_screen(AskScreen("Show records as of (a date; empty for now):",
                                       self.as_of or "", "2026-01-31 or 2026-01-31T09:00Z",
                                       check_date), done)

    def action_sort(self) -> None:
        """Next sort order."""
        self.order = ORDER_NAMES[(ORDER_NAMES.index(self.order) + 1) % len(ORDER_NAMES)]
        if self.query_text:
            self.notify("search hits are ranked by relevance; the sort applies to the listing",
                        timeout=3)
        self.reload()

    def action_toggle_global(self) -> None:
        """Include or leave out the global profile (developer preferences)."""
        self.include_global = not self.include_global
        self.reload()

    def action_chain(self) -> None:
        """Open the chains pane on the highlighted record's chain."""
        record = self.highlighted()
        if record is not None:
            self.post_message(ShowChain(record.id))

    def action_copy_id(self) -> None:
        """Copy the highlighted record's id (OSC 52)."""
        record = self.highlighted()
        if record is not None:
            self.app.copy_to_clipboard(record.id)
            self.notify(f"copied {record.id}", timeout=2)

    def edit_target(self) -> Record | None:
        """The record open in the detail panel, else the highlighted one."""
        panel = self.detail_panel()
        if panel is not None and panel.item is not None:
            return panel.item.record
        return self.highlighted()

    def after_write(self, record: Record | None, *, follow: bool = True) -> None:
        """Read the listing again with the cursor on the written record (``follow``) or on the
        one it was on; the detail panel shows that record (or closes when it is gone)."""
        panel = self.detail_panel()
        shown = panel.item.record.id if panel is not None and panel.item is not None else None
        target = record.id if record is not None and follow else shown
        if panel is not None:
            if record is None or target is None:
                self.close_detail()
            else:
                try:
                    self._show_detail(panel, target)
                except NotFound:
                    self.close_detail()
        if target is not None:
            self._follow = target
        super().after_write(record, follow=follow)

    def action_merge(self) -> None:
        """``m``: the near-duplicate pairs consolidation found, side by side."""
        from agentctx.tui.widgets.merge import MergeScreen  # late: on first use

        project = self.state.project
        if project is None:
            return
        self.app.push_screen(MergeScreen(self.state, project.id),
                             lambda changed: self.after_write(None) if changed else None)

    def store_changed(self) -> None:
        """New records from hooks or extraction show without a restart (the listing, or the
        search, is read again when the pane is on screen; otherwise on the next switch)."""
        if self.is_active and self.detail_panel() is None:
            self.reload()
