"""The one schema: versioned migrations, applied with sqlite-utils under a lock after a backup.

Imported only when ``PRAGMA user_version`` says the store is older than the code, so the hook hot
path never pays for sqlite-utils (and numpy, which it pulls in).

Relations, in one place:

* ``records`` — typed bi-temporal records. ``pk`` (INTEGER PRIMARY KEY) is what the FTS5 index and
  the embeddings key on; ``id`` (ULID) is the public identity. ``superseded_by`` is kept consistent
  by the records API rather than a foreign key, because superseded records move to
  ``records_archive`` while their successors stay.
* ``records_archive`` — records superseded long ago (same columns and pk, plus ``archived_at``),
  with an FTS5 index of its own, ``records_archive_fts``, that searches as of a date read.
* ``edges`` — links between records (``supersedes``, with the rationale in ``note``;
  ``derives_from``) and between sessions and entities (``touched``).
* ``record_entities`` — records ↔ code entities (``nodes``): ``applies_to``, ``touches``, ``tests``.
"""

from __future__ import annotations

import fcntl
import os
import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from sqlite_utils import Database, Migrations
from sqlite_utils.db import Table

from agentctx.store.db import SCHEMA_VERSION, create_private

MIGRATIONS = Migrations("agentctx")

_TYPES = "'decision','convention','preference','discovery','bugfix','handover','profile'"

_RECORD_COLUMNS = f"""
    pk INTEGER PRIMARY KEY AUTOINCREMENT,
    id TEXT NOT NULL UNIQUE,
    project_id TEXT NOT NULL,
    type TEXT NOT NULL CHECK (type IN ({_TYPES})),
    key TEXT,
    title TEXT NOT NULL,
    body TEXT NOT NULL DEFAULT '',
    scope TEXT NOT NULL DEFAULT 'project' CHECK (scope IN ('project','global')),
    pinned INTEGER NOT NULL DEFAULT 0,
    confidence TEXT NOT NULL DEFAULT 'inferred'
        CHECK (confidence IN ('explicit','inferred','reinforced')),
    reinforce_count INTEGER NOT NULL DEFAULT 0,
    valid_from TEXT NOT NULL,
    recorded_at TEXT NOT NULL,
    superseded_at TEXT,
    superseded_by TEXT,
    access_count INTEGER NOT NULL DEFAULT 0,
    last_accessed TEXT,
    score REAL NOT NULL DEFAULT 1.0,
    claudemd_drift_score REAL NOT NULL DEFAULT 0.0,
    source TEXT NOT NULL,
    session_id TEXT,
    pending_embedding INTEGER NOT NULL DEFAULT 1,
    updated_at TEXT,
    low_score_since TEXT
"""

# Columns whose change means "the context changed" (digest freshness); access counters,
# scores and embedding flags are deliberately absent.
_MEANINGFUL = ("project_id, type, key, title, body, scope, pinned, confidence, valid_from, "
               "superseded_at, superseded_by")


@MIGRATIONS()
def m001_initial(db: Database) -> None:
    """The first schema: records, FTS5, graph, sessions, receipts, audit, embeddings, digests."""
    db.execute(f"CREATE TABLE records ({_RECORD_COLUMNS})")
    db.execute(f"CREATE TABLE records_archive ({_RECORD_COLUMNS}, archived_at TEXT NOT NULL)")
    for name, columns in {
        "records_current": "project_id, type, superseded_at",
        "records_key": "project_id, type, key",
        "records_superseded_by": "superseded_by",
        "records_session": "session_id",
        "records_archive_project": "project_id, type",
        "records_archive_superseded_by": "superseded_by",
    }.items():
        table = "records_archive" if name.startswith("records_archive") else "records"
        db.execute(f"CREATE INDEX {name} ON {table} ({columns})")

    # Full-text index: sqlite-utils creates the external-content table; the triggers are written
    # here because sqlite-utils' update trigger fires on any column, and bumping access counters
    # must never re-index a row.
    records_table = db["records"]
    assert isinstance(records_table, Table)
    records_table.enable_fts(["title", "body", "project_id"], tokenize="porter unicode61",
                             create_triggers=False)
    db.execute("INSERT INTO records_fts(records_fts, rank) VALUES ('rank', 'bm25(2.0, 1.0, 0.0)')")
    db.execute("""CREATE TRIGGER records_fts_ai AFTER INSERT ON records BEGIN
        INSERT INTO records_fts(rowid, title, body, project_id)
        VALUES (new.pk, new.title, new.body, new.project_id); END""")
    db.execute("""CREATE TRIGGER records_fts_ad AFTER DELETE ON records BEGIN
        INSERT INTO records_fts(records_fts, rowid, title, body, project_id)
        VALUES ('delete', old.pk, old.title, old.body, old.project_id); END""")
    db.execute("""CREATE TRIGGER records_fts_au AFTER UPDATE OF title, body, project_id ON records
        BEGIN
        INSERT INTO records_fts(records_fts, rowid, title, body, project_id)
        VALUES ('delete', old.pk, old.title, old.body, old.project_id);
        INSERT INTO records_fts(rowid, title, body, project_id)
        VALUES (new.pk, new.title, new.body, new.project_id); END""")

    # Store-wide change counter (digest freshness).
    db.execute("CREATE TABLE meta (key TEXT PRIMARY KEY, value)")
    db.execute("INSERT INTO meta (key, value) VALUES ('changes', 0)")
    bump = "UPDATE meta SET value = value + 1 WHERE key = 'changes';"
    db.execute(f"CREATE TRIGGER records_changes_ai AFTER INSERT ON records BEGIN {bump} END")
    db.execute(f"CREATE TRIGGER records_changes_ad AFTER DELETE ON records BEGIN {bump} END")
    db.execute(f"CREATE TRIGGER records_changes_au AFTER UPDATE OF {_MEANINGFUL} ON records "
               f"BEGIN {bump} END")

    db.execute("""CREATE TABLE projects (
        id TEXT PRIMARY KEY, name TEXT NOT NULL, root TEXT NOT NULL, remote TEXT,
        created_at TEXT NOT NULL, last_seen TEXT NOT NULL, paused INTEGER NOT NULL DEFAULT 0)""")
    db.execute("""CREATE TABLE project_paths (
        path TEXT PRIMARY KEY, project_id TEXT NOT NULL, worktree TEXT NOT NULL,
        checked_at REAL NOT NULL)""")
    db.execute("""CREATE TABLE nodes (
        id TEXT PRIMARY KEY, project_id TEXT NOT NULL, kind TEXT NOT NULL, name TEXT NOT NULL,
        created_at TEXT NOT NULL, UNIQUE (project_id, kind, name))""")
    db.execute("""CREATE TABLE edges (
        id TEXT PRIMARY KEY, from_id TEXT NOT NULL, to_id TEXT NOT NULL, rel_type TEXT NOT NULL,
        weight REAL NOT NULL DEFAULT 1.0, note TEXT, created_at TEXT NOT NULL,
        UNIQUE (from_id, to_id, rel_type))""")
    db.execute("CREATE INDEX edges_from ON edges (from_id)")
    db.execute("CREATE INDEX edges_to ON edges (to_id)")
    db.execute("""CREATE TABLE record_entities (
        record_id TEXT NOT NULL, entity_id TEXT NOT NULL REFERENCES nodes (id) ON DELETE CASCADE,
        rel TEXT NOT NULL DEFAULT 'applies_to', created_at TEXT NOT NULL,
        PRIMARY KEY (record_id, entity_id, rel)) WITHOUT ROWID""")
    db.execute("CREATE INDEX record_entities_entity ON record_entities (entity_id)")

    db.execute("""CREATE TABLE sessions (
        session_id TEXT PRIMARY KEY, project_id TEXT NOT NULL, cwd TEXT, transcript_path TEXT,
        started_at TEXT NOT NULL, ended_at TEXT,
        tokens_injected INTEGER NOT NULL DEFAULT 0,
        extraction_cost_usd REAL NOT NULL DEFAULT 0,
        extract_offset INTEGER NOT NULL DEFAULT 0, extract_state TEXT,
        meta TEXT NOT NULL DEFAULT '{}')""")
    db.execute("CREATE INDEX sessions_project ON sessions (project_id, started_at)")
    db.execute("""CREATE TABLE session_seen (
        session_id TEXT NOT NULL, record_id TEXT NOT NULL,
        PRIMARY KEY (session_id, record_id)) WITHOUT ROWID""")
    db.execute("""CREATE TABLE injections (
        id INTEGER PRIMARY KEY, session_id TEXT NOT NULL, project_id TEXT NOT NULL,
        event TEXT NOT NULL, source TEXT, record_ids TEXT NOT NULL DEFAULT '[]',
        scores TEXT NOT NULL DEFAULT '[]', tokens INTEGER NOT NULL, chars INTEGER NOT NULL,
        created_at TEXT NOT NULL)""")
    db.execute("CREATE INDEX injections_session ON injections (session_id, event)")

    db.execute("""CREATE TABLE edits (
        id INTEGER PRIMARY KEY, record_id TEXT NOT NULL, field TEXT NOT NULL, old_value TEXT,
        new_value TEXT, actor TEXT NOT NULL, changed_at TEXT NOT NULL)""")
    db.execute("CREATE INDEX edits_record ON edits (record_id)")
    db.execute("""CREATE TABLE embeddings (
        record_pk INTEGER PRIMARY KEY, model TEXT NOT NULL, dim INTEGER NOT NULL,
        vector BLOB NOT NULL, embedded_at TEXT NOT NULL)""")
    db.execute("""CREATE TABLE digests (
        project_id TEXT PRIMARY KEY, change_counter INTEGER NOT NULL, built_at TEXT NOT NULL,
        text TEXT NOT NULL, tokens INTEGER NOT NULL, chars INTEGER NOT NULL,
        record_ids TEXT NOT NULL DEFAULT '[]', builder TEXT NOT NULL)""")
    db.execute("""CREATE TABLE llm_calls (
        id INTEGER PRIMARY KEY, session_id TEXT, project_id TEXT, model TEXT NOT NULL,
        purpose TEXT NOT NULL, input_tokens INTEGER NOT NULL DEFAULT 0,
        output_tokens INTEGER NOT NULL DEFAULT 0, cache_write_tokens INTEGER NOT NULL DEFAULT 0,
        cache_read_tokens INTEGER NOT NULL DEFAULT 0, usd REAL NOT NULL DEFAULT 0,
        ok INTEGER NOT NULL DEFAULT 1, error TEXT, created_at TEXT NOT NULL)""")
    db.execute("CREATE INDEX llm_calls_session ON llm_calls (session_id)")


@MIGRATIONS()
def m002_archive_fts(db: Database) -> None:
    """A full-text index over ``records_archive``, so that a search as of a date finds facts in
    force then that consolidation has since archived. Built from the rows already archived."""
    archive_table = db["records_archive"]
    assert isinstance(archive_table, Table)
    archive_table.enable_fts(["title", "body", "project_id"], tokenize="porter unicode61",
                             create_triggers=False)
    db.execute("INSERT INTO records_archive_fts(records_archive_fts, rank) "
               "VALUES ('rank', 'bm25(2.0, 1.0, 0.0)')")
    # Written by hand as for records_fts: archived rows are read-only, but an update of any other
    # column (the archive's pending_embedding flag) must still never re-index a row.
    db.execute("""CREATE TRIGGER records_archive_fts_ai AFTER INSERT ON records_archive BEGIN
        INSERT INTO records_archive_fts(rowid, title, body, project_id)
        VALUES (new.pk, new.title, new.body, new.project_id); END""")
    db.execute("""CREATE TRIGGER records_archive_fts_ad AFTER DELETE ON records_archive BEGIN
        INSERT INTO records_archive_fts(records_archive_fts, rowid, title, body, project_id)
        VALUES ('delete', old.pk, old.title, old.body, old.project_id); END""")
    db.execute("""CREATE TRIGGER records_archive_fts_au
        AFTER UPDATE OF title, body, project_id ON records_archive BEGIN
        INSERT INTO records_archive_fts(records_archive_fts, rowid, title, body, project_id)
        VALUES ('delete', old.pk, old.title, old.body, old.project_id);
        INSERT INTO records_archive_fts(rowid, title, body, project_id)
        VALUES (new.pk, new.title, new.body, new.project_id); END""")


@MIGRATIONS(transactional=False)  # it ends with a VACUUM, which no transaction may hold
def m003_redact_stored_secrets(db: Database) -> None:
    """Secrets an older redactor let through are redacted in place (see
    :mod:`agentctx.store.scrub`): every stored text, the logs beside the store and the backups of
    earlier upgrades. The count goes to ``meta.secrets_redacted_on_upgrade`` (``agentctx
    doctor`` shows it) and ``logs/upgrade.log``; the store files become private (0600).
    Idempotent: a run killed half-way is done again on the next open."""
    import json
    import time

    from agentctx.store import scrub

    conn = db.conn
    path = Path(next(str(row[2]) for row in conn.execute("PRAGMA database_list")
                     if row[1] == "main"))
    if conn.in_transaction:
        conn.commit()
    conn.execute("PRAGMA secure_delete = ON")  # freed pages are zeroed, not left readable
    conn.execute("BEGIN IMMEDIATE")
    try:
        count = scrub.redact_database(conn)
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    conn.execute("COMMIT")
    count += scrub.redact_backups(path) + scrub.redact_logs(path.parent / "logs")
    earlier = conn.execute("SELECT value FROM meta WHERE key = 'secrets_redacted_on_upgrade'")
    row = earlier.fetchone()  # a run killed before it was recorded as applied counted these
    count += int(json.loads(row[0]).get("count", 0)) if row else 0
    stamp = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    conn.execute("INSERT INTO meta (key, value) VALUES ('secrets_redacted_on_upgrade', ?) "
                 "ON CONFLICT (key) DO UPDATE SET value = excluded.value",
                 (json.dumps({"count": count, "at": stamp}),))
    conn.commit()
    if count:
        conn.execute("VACUUM")  # no copy of a secret left in a free page
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    for suffix in ("", "-wal", "-shm", ".lock"):
        if os.path.exists(f"{path}{suffix}"):
            os.chmod(f"{path}{suffix}", 0o600)
    logs = path.parent / "logs"
    if count and logs.is_dir():
        from agentctx.core import logfile  # late: the store imports no configuration at its top

        logfile.append("upgrade.log", f"{stamp} {path.name}: re-redacted {count} stored values, "
                       "log lines and backup values that held a secret", where=logs)


@MIGRATIONS()
def m004_receipts_and_listings(db: Database) -> None:
    """Receipts say why, and listings page by date.

    * Receipts: the start of the prompt that led to an injection (redacted, at most
      :data:`agentctx.store.sessions.RECEIPT_PROMPT_CHARS` characters) and, per injected record,
      the prompt words it matched (a JSON list of lists, in ``record_ids`` order; its relevance is
      already in ``scores``). Receipts written before have neither.
    * ``records_project_valid``: a project's records in date order, so a page of a listing (the
      TUI's records table) reads its rows instead of sorting the whole project. Lookups of a type
      keep ``records_current`` (they name it: ``INDEXED BY``), or a rare type would walk every
      date.
    """
    db.execute("ALTER TABLE injections ADD COLUMN prompt TEXT")
    db.execute("ALTER TABLE injections ADD COLUMN matched TEXT NOT NULL DEFAULT '[]'")
    db.execute("CREATE INDEX records_project_valid ON records (project_id, valid_from)")


@MIGRATIONS()
def m005_drift_dismissals(db: Database) -> None:
    """Records dismissed from CLAUDE.md drift checks (``agentctx sync --dismiss``), and a partial
    index for the digest's count of flagged records (few rows: a score is 0 unless flagged)."""
    db.execute("""CREATE TABLE drift_dismissals (
        record_id TEXT PRIMARY KEY, project_id TEXT NOT NULL, dismissed_at TEXT NOT NULL,
        actor TEXT NOT NULL DEFAULT 'cli')""")
    db.execute("CREATE INDEX drift_dismissals_project ON drift_dismissals (project_id)")
    db.execute("CREATE INDEX records_drift ON records (project_id, claudemd_drift_score) "
               "WHERE superseded_at IS NULL AND claudemd_drift_score > 0")


@MIGRATIONS()
def m006_receipt_pointers(db: Database) -> None:
    """Per-prompt receipts name the records shown as one-line pointers (a JSON list of ids, a
    subset of ``record_ids``); the others were injected in full. Older receipts have none."""
    db.execute("ALTER TABLE injections ADD COLUMN pointers TEXT NOT NULL DEFAULT '[]'")


@MIGRATIONS()
def m007_team_file_state(db: Database) -> None:
    """The team file (``.agentctx/context.md``): a revision per record that every edit of what the
    file shows bumps (an import compares it), the projects that opted in, and what was last
    written to each worktree's file (so a SessionStart can tell cheaply whether it is behind)."""
    db.execute("ALTER TABLE records ADD COLUMN revision INTEGER NOT NULL DEFAULT 1")
    db.execute("ALTER TABLE records_archive ADD COLUMN revision INTEGER NOT NULL DEFAULT 1")
    db.execute("""CREATE TABLE team_projects (
        project_id TEXT PRIMARY KEY, enabled_at TEXT NOT NULL)""")
    db.execute("""CREATE TABLE team_files (
        path TEXT PRIMARY KEY, project_id TEXT NOT NULL, sha256 TEXT NOT NULL,
        size INTEGER NOT NULL, mtime_ns INTEGER NOT NULL, change_counter INTEGER NOT NULL,
        written_at TEXT NOT NULL)""")


@MIGRATIONS()
def m008_digest_truth(db: Database) -> None:
    """What Claude sees stays true and is not repeated.

    * ``memory_imports`` — each file of Claude Code's auto memory imported (source
      ``claude-memory``): its path, the hash of its text, its ``modified`` time and the record it
      became (or reinforced), so a re-import is idempotent and a changed file supersedes it.
    * ``stated_coverage`` — per project folder, which current records the memory files Claude Code
      loads (CLAUDE.md and its imports, AGENTS.md where it is the one read, MEMORY.md's head)
      already state, with each file's size and mtime, so SessionStart checks it with a ``stat``.
    * ``record_paths`` — the files and folders each current record names, which of them were gone
      at the last check, and what ``agentctx verify`` was told to keep.
    * receipts name the records left out because a memory file already states them, and a
      digest keeps what it was built on (``basis``: the folder, the coverage it left out by, the
      paths it checked), so SessionStart can tell with a few ``stat`` calls that it still holds.
    """
    db.execute("""CREATE TABLE memory_imports (
        project_id TEXT NOT NULL, path TEXT NOT NULL, sha256 TEXT NOT NULL,
        modified TEXT, record_id TEXT NOT NULL, merged INTEGER NOT NULL DEFAULT 0,
        imported_at TEXT NOT NULL, PRIMARY KEY (project_id, path))""")
    db.execute("""CREATE TABLE stated_coverage (
        project_id TEXT NOT NULL, folder TEXT NOT NULL, files TEXT NOT NULL,
        stated TEXT NOT NULL, computed_at TEXT NOT NULL, PRIMARY KEY (project_id, folder))""")
    db.execute("""CREATE TABLE record_paths (
        record_id TEXT PRIMARY KEY, project_id TEXT NOT NULL, paths TEXT NOT NULL,
        gone TEXT NOT NULL DEFAULT '[]', kept TEXT, checked_at TEXT NOT NULL)""")
    db.execute("CREATE INDEX record_paths_project ON record_paths (project_id)")
    db.execute("ALTER TABLE injections ADD COLUMN left_out TEXT NOT NULL DEFAULT '[]'")
    db.execute("ALTER TABLE digests ADD COLUMN basis TEXT NOT NULL DEFAULT '{}'")


@MIGRATIONS()
def m009_face_sources(db: Database) -> None:
    """``tui`` and ``web`` join the record sources (a record says which face wrote it; an older
    agentctx refuses a store that may hold them). The successors the browser or the web view
    wrote before were stored as ``cli``; the audit trail's supersede entry names the face, so
    those recorded in the same moment as their supersede are relabelled (an existing record
    named as a successor keeps its source). Records they created outright cannot be told apart
    and stay ``cli``."""
    for table in ("records", "records_archive"):
        db.execute(f"""UPDATE {table} SET source = (
                SELECT e.actor FROM edits e WHERE e.field = 'superseded_by'
                   AND e.new_value = {table}.id AND e.actor IN ('tui', 'web') LIMIT 1)
             WHERE source = 'cli' AND EXISTS (
                SELECT 1 FROM edits e WHERE e.field = 'superseded_by'
                   AND e.new_value = {table}.id AND e.actor IN ('tui', 'web')
                   AND abs(julianday(e.changed_at) - julianday({table}.recorded_at)) * 86400
                       < 5)""")


@contextmanager
def _file_lock(path: Path) -> Iterator[None]:
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
    with open(fd, "a+b") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def upgrade(path: Path) -> int:
    """Bring the store at ``path`` up to :data:`SCHEMA_VERSION`; returns the version found.

    Runs under an exclusive file lock so that concurrent hooks upgrade once. An existing store is
    copied to ``<db>.v<old>.bak`` (SQLite's online backup) before the first migration runs.
    """
    lock = path.with_name(path.name + ".lock")
    with _file_lock(lock):
        conn = sqlite3.connect(path)
        try:
            found = int(conn.execute("PRAGMA user_version").fetchone()[0])
            if found >= SCHEMA_VERSION:
                return found
            if found > 0:
                backup = path.with_name(f"{path.name}.v{found}.bak")
                create_private(str(backup))
                with sqlite3.connect(backup) as target:
                    conn.backup(target)
                target.close()
            conn.execute("PRAGMA journal_mode=WAL")
        finally:
            conn.close()
        db = Database(path)
        try:
            MIGRATIONS.apply(db)
            db.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
            db.conn.commit()
        finally:
            db.close()
        return found
