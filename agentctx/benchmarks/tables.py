"""Fixed-width text tables and number formats shared by every benchmark report."""

from __future__ import annotations

from collections.abc import Sequence

MISSING = "-"


def table(headers: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    """A fixed-width table: the first column left-aligned, the others right-aligned."""
    widths = [len(h) for h in headers]
    for row in rows:
        if len(row) != len(headers):
            raise ValueError(f"row has {len(row)} cells, the table {len(headers)} columns")
        widths = [max(w, len(cell)) for w, cell in zip(widths, row, strict=True)]

    def line(cells: Sequence[str]) -> str:
        parts = [cells[0].ljust(widths[0])]
        parts.extend(cell.rjust(width) for cell, width in zip(cells[1:], widths[1:], strict=True))
        return "  ".join(parts).rstrip()

    rule = "  ".join("-" * w for w in widths)
    return "\n".join([line(headers), rule, *(line(row) for row in rows)])


def ratio(value: float | None, digits: int = 3) -> str:
    """A 0-1 score with fixed decimals, or the missing marker."""
    return MISSING if value is None else f"{value:.{digits}f}"


def count_of(hits: int | None, total: int | None) -> str:
    """``hits/total`` with the percentage, or the missing marker."""
    if hits is None or not total:
        return MISSING
    return f"{hits}/{total} {100.0 * hits / total:.0f}%"


def millis(seconds: float | None) -> str:
    """Seconds shown as milliseconds with one decimal, or the missing marker."""
    return MISSING if seconds is None else f"{seconds * 1000.0:.1f}"


def number(value: float | None, digits: int = 1) -> str:
    """A plain number with fixed decimals, or the missing marker."""
    return MISSING if value is None else f"{value:.{digits}f}"
