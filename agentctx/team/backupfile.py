"""Backups of the store as JSON or JSON Lines, and reading them back.

JSON Lines: a header line (``{"agentctx": "backup", "format": 1, "schema": N}``), then one line
per row, ``{"table": …, "row": {…}}``. JSON: one document with the header's fields and
``"tables": {name: [row, …]}``. Both hold every table except the derived ones (see
:mod:`agentctx.store.dump`), which are rebuilt after a load.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import IO

from agentctx.store import dump
from agentctx.store.db import SCHEMA_VERSION, Store

FORMATS = ("md", "json", "jsonl")


class BackupError(ValueError):
    """A backup file that cannot be read; the message names the line."""


def write_jsonl(db: Store, out: IO[str], project_id: str | None = None) -> int:
    """Write the store (or one project) as JSON Lines; returns the number of rows."""
    out.write(json.dumps(dump.header(project_id), sort_keys=True) + "\n")
    count = 0
    for table, row in dump.dump(db, project_id):
        out.write(json.dumps({"table": table, "row": row}, ensure_ascii=False) + "\n")
        count += 1
    return count


def write_json(db: Store, out: IO[str], project_id: str | None = None) -> int:
    """Write the store (or one project) as one JSON document; returns the number of rows."""
    tables: dict[str, list[dict[str, object]]] = {}
    count = 0
    for table, row in dump.dump(db, project_id):
        tables.setdefault(table, []).append(row)
        count += 1
    json.dump({**dump.header(project_id), "tables": tables}, out, ensure_ascii=False, indent=1)
    out.write("\n")
    return count


def _check_header(header: object, where: str) -> None:
    if not isinstance(header, dict) or header.get("agentctx") != "backup":
        raise BackupError(f"{where}: not an agentctx backup (no header "
                          "'{\"agentctx\": \"backup\", …}')")
    schema = header.get("schema")
    if not isinstance(schema, int) or schema > SCHEMA_VERSION:
        raise BackupError(f"{where}: written by a newer agentctx (schema {schema}; this version "
                          f"reads up to {SCHEMA_VERSION})")


def read_jsonl(text: str) -> list[tuple[str, dict[str, object]]]:
    """The rows of a JSON Lines backup. Raises :class:`BackupError` naming the line."""
    rows: list[tuple[str, dict[str, object]]] = []
    lines = text.splitlines()
    if not lines:
        raise BackupError("line 1: the file is empty")
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            item = json.loads(line)
        except ValueError as exc:
            raise BackupError(f"line {number}: not JSON ({exc})") from None
        if number == 1:
            _check_header(item, "line 1")
            continue
        rows.append(_row(item, f"line {number}"))
    return rows


def read_json(text: str) -> list[tuple[str, dict[str, object]]]:
    """The rows of a JSON backup. Raises :class:`BackupError`."""
    try:
        document = json.loads(text)
    except ValueError as exc:
        raise BackupError(f"line {getattr(exc, 'lineno', 1)}: not JSON ({exc})") from None
    _check_header(document, "line 1")
    tables = document.get("tables")
    if not isinstance(tables, dict):
        raise BackupError("the document has no 'tables' object")
    return list(_rows_of(tables))


def _rows_of(tables: dict[str, object]) -> Iterator[tuple[str, dict[str, object]]]:
    for table, rows in tables.items():
        if not isinstance(rows, list):
            raise BackupError(f"table {table!r}: expected a list of rows")
        for index, row in enumerate(rows):
            yield _row({"table": table, "row": row}, f"table {table!r} row {index + 1}")


def _row(item: object, where: str) -> tuple[str, dict[str, object]]:
    if not isinstance(item, dict) or not isinstance(item.get("table"), str) or \
            not isinstance(item.get("row"), dict):
        raise BackupError(f"{where}: expected {{\"table\": …, \"row\": {{…}}}}")
    row = item["row"]
    for name, value in row.items():
        if not isinstance(value, str | int | float | type(None)):
            raise BackupError(f"{where}: column {name!r} holds a {type(value).__name__}")
    return item["table"], row


def load(db: Store, rows: list[tuple[str, dict[str, object]]]) -> dump.LoadReport:
    """Load backup rows into the store (all or nothing; rows already there are skipped)."""
    return dump.load(db, rows)
