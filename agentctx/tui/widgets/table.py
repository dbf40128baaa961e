"""A data table whose string cells are plain text: a record title with ``[brackets]`` shows as
written (``DataTable`` reads a string cell as Rich markup), and no cell pays for markup parsing.

Its columns size to the width the table has (:meth:`PlainTable.fit_columns`): each column has
the least it takes, and the columns that grow share what is left by their weights, so a wide
terminal shows more of a title, a prompt or a path instead of the same cut.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, NamedTuple

from rich.text import Text
from textual.widget import Widget
from textual.widgets import DataTable
from textual.widgets.data_table import RowKey

SCROLLBAR = 1  # the vertical scrollbar's column (agentctx.tcss)


class Column(NamedTuple):
    """One column: its heading, key, the least width it takes (all it takes when ``grow`` is 0)
    and its share of the width left over."""

    name: str
    key: str
    width: int
    grow: int = 0


def fit(columns: Sequence[Column], width: int, padding: int = 1) -> list[int]:
    """Each column's width in a table ``width`` cells wide (``padding`` cells each side of a
    column, and the scrollbar): fixed columns as given, the growing ones at least their width and
    sharing the rest by weight (the last growing column takes what rounding leaves)."""
    spare = width - SCROLLBAR - sum(c.width + 2 * padding for c in columns)
    weights = sum(c.grow for c in columns)
    widths = [c.width for c in columns]
    if spare <= 0 or not weights:
        return widths
    growing = [i for i, c in enumerate(columns) if c.grow]
    given = 0
    for i in growing:
        extra = spare * columns[i].grow // weights
        widths[i] += extra
        given += extra
    widths[growing[-1]] += spare - given
    return widths


class PlainTable(DataTable[Any]):
    """``DataTable`` with string cells taken literally and columns fitted to its width."""

    def add_row(self, *cells: Any, height: int | None = 1, key: str | None = None,
                label: Any = None) -> RowKey:
        return super().add_row(*(Text(c, no_wrap=True, overflow="ellipsis")
                                 if isinstance(c, str) else c for c in cells),
                               height=height, key=key, label=label)

    def fit_columns(self, columns: Sequence[Column], width: int | None = None) -> dict[str, int]:
        """Clear the table (rows and columns) and add ``columns`` sized to ``width`` (default:
        the table's own width, else its container's); returns each column's width by key."""
        parent = self.parent
        room = (width or self.size.width
                or (parent.size.width if isinstance(parent, Widget) else 0) or 80)
        self.clear(columns=True)
        widths = fit(columns, room, self.cell_padding)
        for column, size in zip(columns, widths, strict=True):
            self.add_column(column.name, key=column.key, width=size)
        return {c.key: size for c, size in zip(columns, widths, strict=True)}

    def cursor_key(self) -> str | None:
        """The key of the row under the cursor (``None`` on an empty table)."""
        if not self.row_count:
            return None
        return self.coordinate_to_cell_key(self.cursor_coordinate).row_key.value

    def cursor_to(self, key: str | None, row: int = 0) -> None:
        """The cursor on the row ``key`` when the table has it, else on ``row`` (or the last)."""
        if not self.row_count:
            return
        if key is not None and key in self.rows:
            row = self.get_row_index(key)
        self.move_cursor(row=min(row, self.row_count - 1), animate=False)
