"""Re-redacting what a store already holds, for the upgrade that follows a redactor change.

Older versions of agentctx stored secrets whose format the redactor did not know yet. The upgrade
passes every stored text through today's :func:`agentctx.core.redact.redact`: record titles and
bodies (current and archived), the audit trail, edge notes, session meta (keys included), entity
names, digests and the cost ledger's errors; then the logs beside the store and the backups
earlier upgrades left. Full-text indexes are rebuilt and the file is vacuumed, so no copy of a
secret survives in a free page, an index segment or the write-ahead log. Each function returns how
many values it changed.
"""

from __future__ import annotations

import json
import os
import sqlite3
from collections.abc import Iterator
from pathlib import Path

from agentctx.core.redact import redact

# (table, column, kind): "text" is redacted as it is, "json" value by value (keys too).
_COLUMNS = (
    ("records", "title", "text"), ("records", "body", "text"),
    ("records_archive", "title", "text"), ("records_archive", "body", "text"),
    ("edits", "old_value", "text"), ("edits", "new_value", "text"),
    ("edges", "note", "text"), ("sessions", "meta", "json"), ("digests", "text", "text"),
    ("llm_calls", "error", "text"),
)
_FTS = (("records_fts", "records"), ("records_archive_fts", "records_archive"))
LOG_SUFFIXES = (".log",)


def redact_database(conn: sqlite3.Connection) -> int:
    """Re-redact every stored text of the open store ``conn`` (inside the caller's transaction).

    Tables or columns an older schema lacks are skipped. A record whose text changed loses its
    embedding (it is embedded again from the redacted text); the full-text indexes are rebuilt
    from the redacted rows.
    """
    changed = 0
    touched_records: set[int] = set()
    for table, column, kind in _COLUMNS:
        if column not in _columns(conn, table):
            continue
        rows = conn.execute(f"SELECT rowid, {column} FROM {table} WHERE {column} IS NOT NULL "
                            f"AND {column} != ''").fetchall()
        for rowid, value in rows:
            new = _redact_json(str(value)) if kind == "json" else redact(str(value))
            if new == value:
                continue
            conn.execute(f"UPDATE {table} SET {column} = ? WHERE rowid = ?", (new, rowid))
            changed += 1
            if table == "records":
                touched_records.add(int(rowid))
    changed += _redact_node_names(conn)
    if touched_records and "pending_embedding" in _columns(conn, "records"):
        marks = ",".join("?" * len(touched_records))
        conn.execute(f"UPDATE records SET pending_embedding = 1 WHERE pk IN ({marks})",
                     list(touched_records))
        if _columns(conn, "embeddings"):
            conn.execute(f"DELETE FROM embeddings WHERE record_pk IN ({marks})",
                         list(touched_records))
            conn.execute("INSERT INTO meta (key, value) VALUES ('vectors_dirty', 1) "
                         "ON CONFLICT (key) DO UPDATE SET value = 1")
    if changed:
        for index, _table in _FTS:
            if _columns(conn, index):
                conn.execute(f"INSERT INTO {index}({index}) VALUES ('rebuild')")
    return changed


def _columns(conn: sqlite3.Connection, table: str) -> set[str]:
    return {str(row[1]) for row in conn.execute(f"PRAGMA table_info({table})")}


def _redact_json(text: str) -> str:
    try:
        value = json.loads(text)
    except ValueError:
        return redact(text)
    cleaned = _redact_value(value)
    return text if cleaned == value else json.dumps(cleaned, ensure_ascii=False,
                                                    separators=(",", ":"))


def _redact_value(value: object) -> object:
    if isinstance(value, str):
        return redact(value)
    if isinstance(value, list):
        return [_redact_value(item) for item in value]
    if isinstance(value, dict):
        return {redact(str(key)): _redact_value(item) for key, item in value.items()}
    return value


def _redact_node_names(conn: sqlite3.Connection) -> int:
    """Redact entity names; a name that becomes another entity's merges into it."""
    if "name" not in _columns(conn, "nodes"):
        return 0
    changed = 0
    for node_id, project_id, kind, name in conn.execute(
            "SELECT id, project_id, kind, name FROM nodes").fetchall():
        new = redact(str(name))
        if new == name:
            continue
        changed += 1
        twin = conn.execute("SELECT id FROM nodes WHERE project_id = ? AND kind = ? AND name = ?",
                            (project_id, kind, new)).fetchone()
        if twin is None:
            conn.execute("UPDATE nodes SET name = ? WHERE id = ?", (new, node_id))
            continue
        conn.execute("UPDATE OR IGNORE record_entities SET entity_id = ? WHERE entity_id = ?",
                     (twin[0], node_id))
        conn.execute("DELETE FROM record_entities WHERE entity_id = ?", (node_id,))
        for end in ("from_id", "to_id"):
            conn.execute(f"UPDATE OR IGNORE edges SET {end} = ? WHERE {end} = ?",
                         (twin[0], node_id))
        conn.execute("DELETE FROM edges WHERE from_id = ? OR to_id = ?", (node_id, node_id))
        conn.execute("DELETE FROM nodes WHERE id = ?", (node_id,))
    return changed


def redact_backups(db_path: Path) -> int:
    """Re-redact the backups earlier upgrades left beside the store (``<db>.v<N>.bak``)."""
    changed = 0
    for backup in sorted(db_path.parent.glob(f"{db_path.name}.v*.bak")):
        if not backup.is_file():
            continue
        conn = sqlite3.connect(backup, isolation_level=None)
        try:
            conn.execute("PRAGMA secure_delete = ON")
            conn.execute("BEGIN IMMEDIATE")
            try:
                found = redact_database(conn)
            except BaseException:
                conn.execute("ROLLBACK")
                raise
            conn.execute("COMMIT")
            if found:
                conn.execute("VACUUM")
            changed += found
        finally:
            conn.close()
        os.chmod(backup, 0o600)
    return changed


def redact_logs(folder: Path) -> int:
    """Re-redact the log files in ``folder`` line by line; returns how many lines changed."""
    changed = 0
    for log in sorted(_logs(folder)):
        count = 0
        tmp = log.with_name(f".{log.name}.{os.getpid()}.tmp")
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        try:
            with open(fd, "w", encoding="utf-8", newline="") as out, \
                    open(log, encoding="utf-8", errors="replace", newline="") as source:
                for line in source:
                    new = redact(line)
                    count += new != line
                    out.write(new)
            if count:
                os.replace(tmp, log)
        finally:
            tmp.unlink(missing_ok=True)
        os.chmod(log, 0o600)
        changed += count
    return changed


def _logs(folder: Path) -> Iterator[Path]:
    if not folder.is_dir():
        return
    for path in folder.iterdir():
        name = path.name
        plain = name.split(".log", 1)
        if path.is_file() and not path.is_symlink() and len(plain) == 2 and \
                (plain[1] == "" or plain[1].lstrip(".").isdigit()):
            yield path
