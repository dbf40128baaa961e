"""A data table whose string cells are plain text: a record title with ``[brackets]`` shows as
written (``DataTable`` reads a string cell as Rich markup), and no cell pays for markup parsing."""

from __future__ import annotations

from typing import Any

from rich.text import Text
from textual.widgets import DataTable
from textual.widgets.data_table import RowKey


class PlainTable(DataTable[Any]):
    """``DataTable`` with string cells taken literally."""

    def add_row(self, *cells: Any, height: int | None = 1, key: str | None = None,
                label: Any = None) -> RowKey:
        return super().add_row(*(Text(c, no_wrap=True, overflow="ellipsis")
                                 if isinstance(c, str) else c for c in cells),
                               height=height, key=key, label=label)



