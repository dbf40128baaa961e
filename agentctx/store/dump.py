"""Whole-store backups as rows: every table except the derived ones, and loading them back.

Derived tables are left out and rebuilt after a load: the full-text indexes (their triggers fill
them as rows arrive), the vectors (``embeddings`` and ``records_vec``: loaded records are marked
for embedding), the digests (built again when next served) and what the memory files already
state (measured again by the next consolidation). Loading is idempotent: a row
whose key is already there is skipped, so loading one backup twice adds nothing.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Iterator

from agentctx.core.lean import NamedTuple
from agentctx.store.db import SCHEMA_VERSION, Store
from agentctx.store.errors import StoreError

# (_sqlite_migrations: the schema's own bookkeeping)
DERIVED_PREFIXES = ("records_fts", "records_archive_fts", "records_vec", "embeddings", "digests",
                    "stated_coverage", "sqlite_", "_sqlite_")
# Meta keys that describe derived or this store's own state (the change counter, the vector
# index, the query side file, what an upgrade of this file did): never copied between stores.
DERIVED_META_PREFIXES = ("changes", "vectors_", "query_model", "secrets_redacted_on_upgrade")
# Tables in the order a load needs them (nodes before the links that reference them); tables
# not named here follow in name order.
ORDER = ("meta", "projects", "project_paths", "nodes", "records", "records_archive", "edges",
         "record_entities", "sessions", "session_seen", "injections", "edits", "llm_calls")

# How a project's rows are chosen, per table (``?`` is the project id).
_RECORD_IDS = ("SELECT id FROM records WHERE project_id = ?1 UNION ALL "
               "SELECT id FROM records_archive WHERE project_id = ?1")
PROJECT_FILTERS: dict[str, str] = {
    "projects": "id = ?1",
    "project_paths": "project_id = ?1",
    "nodes": "project_id = ?1",
    "records": "project_id = ?1",
    "records_archive": "project_id = ?1",
    "edges": (f"from_id IN ({_RECORD_IDS}) OR to_id IN ({_RECORD_IDS}) OR from_id IN "
              "(SELECT session_id FROM sessions WHERE project_id = ?1) OR to_id IN "
              "(SELECT id FROM nodes WHERE project_id = ?1)"),
    "record_entities": f"record_id IN ({_RECORD_IDS})",
    "sessions": "project_id = ?1",
    "session_seen": "session_id IN (SELECT session_id FROM sessions WHERE project_id = ?1)",
    "injections": "project_id = ?1",
    "edits": f"record_id IN ({_RECORD_IDS})",
    "llm_calls": "project_id = ?1",
    "drift_dismissals": "project_id = ?1",
    "team_projects": "project_id = ?1",
    "team_files": "project_id = ?1",
    "memory_imports": "project_id = ?1",
    "record_paths": "project_id = ?1",
}


class LoadReport(NamedTuple):
    """What a load added and skipped, per table."""

    added: dict[str, int]
    skipped: dict[str, int]


def tables(db: Store) -> list[str]:
    """The tables a backup holds, in load order."""
    names = [row[0] for row in db.rows(
        "SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")]
    kept = [name for name in names if not name.startswith(DERIVED_PREFIXES)]
    return sorted(kept, key=lambda n: (ORDER.index(n) if n in ORDER else len(ORDER), n))


def columns(db: Store, table: str) -> list[str]:
    """The columns of ``table``, in order."""
    return [row[1] for row in db.rows(f"PRAGMA table_info({table})")]


def dump(db: Store, project_id: str | None = None) -> Iterator[tuple[str, dict[str, object]]]:
    """Every row of every backed-up table as ``(table, {column: value})``; with ``project_id``,
    only that project's rows (and no store-wide ``meta``)."""
    for table in tables(db):
        where: str = ""
        params: tuple[str, ...] = ()
        if project_id is not None:
            if table not in PROJECT_FILTERS:
                continue
            where, params = f" WHERE {PROJECT_FILTERS[table]}", (project_id,)
        names = columns(db, table)
        for row in db.rows(f"SELECT * FROM {table}{where} ORDER BY rowid"
                           if _has_rowid(db, table) else f"SELECT * FROM {table}{where}", params):
            item = dict(zip(names, row, strict=True))
            if table == "meta" and str(item["key"]).startswith(DERIVED_META_PREFIXES):
                continue
            yield table, item


def _has_rowid(db: Store, table: str) -> bool:
    sql = str(db.scalar("SELECT sql FROM sqlite_master WHERE name = ?", (table,)) or "")
    return "WITHOUT ROWID" not in sql.upper()


def _surrogate_key(db: Store, table: str) -> str | None:
    """The INTEGER PRIMARY KEY column of ``table`` (a rowid alias), if it has one."""
    keys = [row for row in db.rows(f"PRAGMA table_info({table})") if row[5]]
    if len(keys) == 1 and str(keys[0][2]).upper() == "INTEGER":
        return str(keys[0][1])
    return None


def load(db: Store, rows: Iterable[tuple[str, dict[str, object]]]) -> LoadReport:
    """Add the backed-up ``rows`` to the store in one transaction; all or nothing.

    A row whose key is already there is skipped: records by id (in either table), rows with a
    natural key by that key, rows with only a numeric key when an identical row exists (else they
    are added under a new number). Raises :class:`StoreError` naming the first bad row.
    """
    known = set(tables(db))
    shapes: dict[str, tuple[list[str], str | None]] = {}
    added: dict[str, int] = {}
    skipped: dict[str, int] = {}
    projects: set[str] = set()
    with db.write():
        for number, (table, row) in enumerate(rows, start=1):
            if table not in known:
                raise StoreError(f"row {number}: {table!r} is not a table a backup restores")
            if table not in shapes:
                shapes[table] = (columns(db, table), _surrogate_key(db, table))
            names, key = shapes[table]
            unknown = sorted(set(row) - set(names))
            if unknown:
                raise StoreError(f"row {number}: table {table} has no column "
                                 f"{', '.join(unknown)}")
            if table == "meta" and str(row.get("key")).startswith(DERIVED_META_PREFIXES):
                continue
            try:
                done = _load_row(db, table, dict(row), key)
            except sqlite3.Error as exc:
                raise StoreError(f"row {number} ({table}): {exc}") from None
            (added if done else skipped)[table] = (added if done else skipped).get(table, 0) + 1
            if done and table in ("records", "records_archive"):
                projects.add(str(row.get("project_id")))
        if added.get("records") or added.get("records_archive"):
            for project in projects:
                db.execute("DELETE FROM digests WHERE project_id = ?", (project,))
            db.meta_set("vectors_dirty", 1)
    return LoadReport(added, skipped)


def _load_row(db: Store, table: str, row: dict[str, object], key: str | None) -> bool:
    if table in ("records", "records_archive"):
        exists = any(db.scalar(f"SELECT 1 FROM {other} WHERE id = ?", (row.get("id"),))
                     for other in ("records", "records_archive"))
        if exists:
            return False
        row["pending_embedding"] = 1  # vectors are derived: embedded again
        if key and db.scalar(f"SELECT 1 FROM {table} WHERE {key} = ?", (row.get(key),)):
            row.pop(key)
        return _insert(db, table, row, ignore=True)
    if key is not None and key in row:
        others = {k: v for k, v in row.items() if k != key}
        same = " AND ".join(f"{k} IS ?" for k in others) or "1"
        if db.scalar(f"SELECT 1 FROM {table} WHERE {same} LIMIT 1", list(others.values())):
            return False
        if db.scalar(f"SELECT 1 FROM {table} WHERE {key} = ?", (row[key],)):
            row.pop(key)
        return _insert(db, table, row, ignore=True)
    return _insert(db, table, row, ignore=True)


def _insert(db: Store, table: str, row: dict[str, object], *, ignore: bool) -> bool:
    """Insert one row; ``ignore``: a row whose unique key is taken is skipped (not an error)."""
    names = ", ".join(row)
    marks = ", ".join("?" * len(row))
    verb = "INSERT OR IGNORE" if ignore else "INSERT"
    cursor = db.execute(f"{verb} INTO {table} ({names}) VALUES ({marks})", list(row.values()))
    return cursor.rowcount > 0


def header(project_id: str | None) -> dict[str, object]:
    """The first line of a backup: what it is and which schema wrote it."""
    return {"agentctx": "backup", "format": 1, "schema": SCHEMA_VERSION,
            **({"project": project_id} if project_id else {})}
