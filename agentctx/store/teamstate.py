"""The team file's side of the store: opt-in per project, record revisions, imported records,
and what was last written to each worktree's ``.agentctx/context.md``.

Standard library only and cheap: the SessionStart hook asks :func:`is_enabled` and
:func:`written` to decide whether a worktree's file needs catching up.
"""

from __future__ import annotations

from agentctx.core.ids import new_ulid, now_iso
from agentctx.core.lean import NamedTuple
from agentctx.store import records as rec
from agentctx.store.db import Store
from agentctx.store.models import Draft, Record
from agentctx.store.selection import Selection

# The record types the team file shares (never preferences, handovers, bugfixes or profiles).
TEAM_TYPES: tuple[str, ...] = ("decision", "convention", "discovery")

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence


class FileState(NamedTuple):
    """What agentctx last wrote to one worktree's team file."""

    path: str
    project_id: str
    sha256: str
    size: int
    mtime_ns: int
    change_counter: int  # the store's change counter when it was written (or found in step)
    written_at: str


# ------------------------------------------------------------------------------- opt-in


def enable(db: Store, project_id: str) -> bool:
    """Turn the team file on for a project; returns whether it was off before."""
    with db.write():
        cursor = db.execute("INSERT OR IGNORE INTO team_projects (project_id, enabled_at) "
                            "VALUES (?, ?)", (project_id, now_iso()))
    return cursor.rowcount > 0


def disable(db: Store, project_id: str) -> bool:
    """Turn the team file off for a project; returns whether it was on before."""
    with db.write():
        cursor = db.execute("DELETE FROM team_projects WHERE project_id = ?", (project_id,))
        db.execute("DELETE FROM team_files WHERE project_id = ?", (project_id,))
    return cursor.rowcount > 0


def is_enabled(db: Store, project_id: str) -> bool:
    """Whether the project keeps a team file."""
    return db.scalar("SELECT 1 FROM team_projects WHERE project_id = ?", (project_id,)) is not None


def enabled_projects(db: Store) -> list[str]:
    """Ids of every project that keeps a team file."""
    return [row[0] for row in db.rows("SELECT project_id FROM team_projects ORDER BY project_id")]


# ------------------------------------------------------------------------------- file state


def written(db: Store, path: str) -> FileState | None:
    """What was last written to (or found in step at) ``path``, if anything."""
    row = db.one("SELECT path, project_id, sha256, size, mtime_ns, change_counter, written_at "
                 "FROM team_files WHERE path = ?", (path,))
    return None if row is None else FileState(*row)


def record_written(db: Store, state: FileState) -> None:
    """Remember what is now at ``state.path``."""
    db.execute("INSERT INTO team_files (path, project_id, sha256, size, mtime_ns, change_counter, "
               "written_at) VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (path) DO UPDATE SET "
               "project_id = excluded.project_id, sha256 = excluded.sha256, size = excluded.size, "
               "mtime_ns = excluded.mtime_ns, change_counter = excluded.change_counter, "
               "written_at = excluded.written_at", tuple(state))


# ------------------------------------------------------------------------------- records


def shared_records(db: Store, project_id: str) -> list[Record]:
    """The project's current records the team file shares, by title then id."""
    found = rec.list_records(db, Selection(project_id=project_id, types=tuple(TEAM_TYPES)))
    return sorted((r for r in found if r.scope == "project"),
                  key=lambda r: (r.type, r.title, r.id))


def revisions(db: Store, ids: Sequence[str]) -> dict[str, int]:
    """The revision of each of ``ids`` that exists (current or archived)."""
    found: dict[str, int] = {}
    for table in rec.TABLES:
        for start in range(0, len(ids), 500):
            chunk = list(ids[start:start + 500])
            found.update((row[0], int(row[1])) for row in db.rows(
                f"SELECT id, revision FROM {table} WHERE id IN ({','.join('?' * len(chunk))})",
                chunk))
    return found


def has_predecessor(db: Store, record_id: str) -> bool:
    """Whether some record (current or archived) was superseded by ``record_id``."""
    return any(db.scalar(f"SELECT 1 FROM {table} WHERE superseded_by = ? LIMIT 1", (record_id,))
               for table in rec.TABLES)


def forgotten(db: Store, ids: Sequence[str]) -> set[str]:
    """Those of ``ids`` that were forgotten here (an import never brings them back)."""
    found: set[str] = set()
    for start in range(0, len(ids), 500):
        chunk = list(ids[start:start + 500])
        found.update(row[0] for row in db.rows(
            f"SELECT record_id FROM edits WHERE field = 'forgotten' AND record_id IN "
            f"({','.join('?' * len(chunk))})", chunk))
    return found


def set_revision(db: Store, record_id: str, revision: int) -> None:
    """Set a record's revision (an import taking a teammate's revision of the same content)."""
    db.execute("UPDATE records SET revision = ? WHERE id = ?", (revision, record_id))


def insert_imported(db: Store, draft: Draft, *, project_id: str, record_id: str, revision: int,
                    superseded_at: str | None = None, superseded_by: str | None = None,
                    rationale: str | None = None) -> Record:
    """Add a teammate's record under its own id (source ``import``), validated and redacted
    like any record. A superseded one gets its successor link and the ``supersedes`` edge with
    ``rationale``. Raises :class:`~agentctx.store.errors.InvalidRecord`."""
    draft = rec.validate(draft._replace(source="import"), exact=True)
    now = now_iso()
    with db.write():
        db.execute(
            "INSERT INTO records (id, project_id, type, key, title, body, scope, pinned, "
            "confidence, valid_from, recorded_at, superseded_at, superseded_by, source, "
            "revision) VALUES (?, ?, ?, ?, ?, ?, 'project', ?, ?, ?, ?, ?, ?, 'import', ?)",
            (record_id, project_id, draft.type, draft.key, draft.title, draft.body,
             int(draft.pinned), draft.confidence, draft.valid_from or now, now, superseded_at,
             superseded_by, revision))
        if superseded_by is not None:
            from agentctx.core.redact import redact

            db.execute("INSERT OR IGNORE INTO edges (id, from_id, to_id, rel_type, note, "
                       "created_at) VALUES (?, ?, ?, 'supersedes', ?, ?)",
                       (new_ulid(), superseded_by, record_id,
                        " ".join(redact(rationale).split()) if rationale else None, now))
    return rec.get(db, record_id)
