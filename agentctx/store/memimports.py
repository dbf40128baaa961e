"""What was imported from Claude Code's auto memory: each file (or ``MEMORY.md`` line), the hash
of its text, its ``modified`` time and the record it became or reinforced.

An import (:mod:`agentctx.team.claude_memory`) reads this to be idempotent — a file whose text
is unchanged is not imported again — and to supersede, when a file's text changed, the record
its earlier text became.
"""

from __future__ import annotations

from agentctx.core.ids import now_iso
from agentctx.core.lean import NamedTuple
from agentctx.store.db import Store


class Imported(NamedTuple):
    """One imported file (or ``MEMORY.md`` line) of a project's auto memory."""

    project_id: str
    path: str  # the file's name in the memory folder, or MEMORY.md#<hash of the line>
    sha256: str
    modified: str | None
    record_id: str  # the record it became, or the existing one it reinforced (``merged``)
    merged: bool
    imported_at: str


def of_project(db: Store, project_id: str) -> dict[str, Imported]:
    """Every import of ``project_id``, by path."""
    rows = db.rows("SELECT project_id, path, sha256, modified, record_id, merged, imported_at "
                   "FROM memory_imports WHERE project_id = ?", (project_id,))
    return {str(row[1]): Imported(str(row[0]), str(row[1]), str(row[2]),
                                  None if row[3] is None else str(row[3]), str(row[4]),
                                  bool(row[5]), str(row[6])) for row in rows}


def put(db: Store, project_id: str, path: str, sha256: str, modified: str | None,
        record_id: str, *, merged: bool = False) -> None:
    """Remember that ``path`` (with this text) became, or reinforced, ``record_id``."""
    db.execute("INSERT INTO memory_imports (project_id, path, sha256, modified, record_id, merged, "
               "imported_at) VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (project_id, path) DO "
               "UPDATE SET sha256 = excluded.sha256, modified = excluded.modified, "
               "record_id = excluded.record_id, merged = excluded.merged, "
               "imported_at = excluded.imported_at",
               (project_id, path, sha256, modified, record_id, int(merged), now_iso()))


def count(db: Store, project_id: str) -> int:
    """How many files (and lines) of the project's auto memory were imported."""
    return int(db.scalar("SELECT count(*) FROM memory_imports WHERE project_id = ?",
                         (project_id,)) or 0)
