"""What the CLAUDE.md drift scan reads and keeps: checked records, chains, scores, dismissals.

* The **checked** records of a project are its current decisions and conventions of confidence
  ``reinforced`` or ``explicit`` (:func:`checked`); the **superseded** ones, live or archived, are
  what stale text in a memory file may still say (:func:`superseded`).
* A scan stores its verdict in ``records.claudemd_drift_score`` (:func:`save_scores`): above
  :data:`FLAGGED` means "flagged"; the SessionStart digest counts those
  (:func:`agentctx.store.stats.drift_count`) without running a scan.
* A **dismissal** (``drift_dismissals``) marks a record as intentionally absent from CLAUDE.md,
  so it stops being flagged; :func:`undismiss` undoes it.
"""

from __future__ import annotations

from collections.abc import Mapping

from agentctx.core.ids import now_iso
from agentctx.store import records as rec
from agentctx.store.db import Store
from agentctx.store.errors import InvalidRecord
from agentctx.store.models import Record

CHECKED_TYPES = ("decision", "convention")
CHECKED_CONFIDENCES = ("reinforced", "explicit")
# A drift score above this means the record is flagged (missing or contradicted); the digest's
# DRIFT_THRESHOLD reads the same line.
FLAGGED = 0.5


def checked(db: Store, project_id: str) -> list[Record]:
    """The project's current decisions and conventions of confidence reinforced or explicit."""
    rows = db.rows(f"SELECT {rec.COLUMNS} FROM records WHERE project_id = ? AND type IN (?, ?) "
                   "AND superseded_at IS NULL AND confidence IN (?, ?) ORDER BY valid_from, pk",
                   (project_id, *CHECKED_TYPES, *CHECKED_CONFIDENCES))
    return [rec.from_row(row) for row in rows]


def superseded(db: Store, project_id: str) -> list[Record]:
    """The project's superseded decisions and conventions, live and archived, oldest first."""
    found: list[Record] = []
    for table in rec.TABLES:
        rows = db.rows(f"SELECT {rec.COLUMNS} FROM {table} WHERE project_id = ? "
                       "AND type IN (?, ?) AND superseded_at IS NOT NULL",
                       (project_id, *CHECKED_TYPES))
        found.extend(rec.from_row(row, archived=table == "records_archive") for row in rows)
    return sorted(found, key=lambda r: (r.valid_from, r.pk))


def current_by_ids(db: Store, ids: list[str]) -> dict[str, Record]:
    """Current records among ``ids`` (any type or confidence), by id."""
    found: dict[str, Record] = {}
    for start in range(0, len(ids), 500):
        chunk = ids[start:start + 500]
        marks = ",".join("?" * len(chunk))
        for row in db.rows(f"SELECT {rec.COLUMNS} FROM records WHERE id IN ({marks}) "
                           "AND superseded_at IS NULL", chunk):
            record = rec.from_row(row)
            found[record.id] = record
    return found


def save_scores(db: Store, project_id: str, scores: Mapping[str, float]) -> int:
    """Store a scan's drift scores: ``scores`` for the records it names, 0 for every other
    decision or convention of the project (current or superseded). One transaction; returns the
    rows changed.

    The score is not a "meaningful" column (it never bumps the change counter): callers mark the
    digest stale themselves (:func:`agentctx.store.digests.mark_stale`).
    """
    with db.write():
        stored = {str(row[0]): float(row[1]) for row in db.rows(
            "SELECT id, claudemd_drift_score FROM records WHERE project_id = ? "
            "AND type IN (?, ?)", (project_id, *CHECKED_TYPES))}
        wanted = {rid: round(float(score), 4) for rid, score in scores.items() if rid in stored}
        changes = [(wanted.get(rid, 0.0), rid) for rid, old in stored.items()
                   if old != wanted.get(rid, 0.0)]
        db.conn.executemany("UPDATE records SET claudemd_drift_score = ? WHERE id = ?", changes)
    return len(changes)


def dismissed(db: Store, project_id: str) -> set[str]:
    """Ids of the project's records dismissed from drift checks."""
    return {str(row[0]) for row in db.rows(
        "SELECT record_id FROM drift_dismissals WHERE project_id = ?", (project_id,))}


def dismiss(db: Store, project_id: str, ref: str, *, actor: str) -> tuple[Record, bool]:
    """Dismiss the record ``ref`` (id or prefix) of ``project_id``; returns it and whether it was
    not dismissed before. Its drift score drops to 0 at once."""
    record = _of_project(db, project_id, ref)
    with db.write():
        added = db.execute("INSERT OR IGNORE INTO drift_dismissals (record_id, project_id, "
                           "dismissed_at, actor) VALUES (?, ?, ?, ?)",
                           (record.id, project_id, now_iso(), actor)).rowcount
        db.execute("UPDATE records SET claudemd_drift_score = 0 WHERE id = ?", (record.id,))
    return record, bool(added)


def undismiss(db: Store, project_id: str, ref: str) -> tuple[Record, bool]:
    """Undo :func:`dismiss`; returns the record and whether it was dismissed."""
    record = _of_project(db, project_id, ref)
    with db.write():
        removed = db.execute("DELETE FROM drift_dismissals WHERE record_id = ?",
                             (record.id,)).rowcount
    return record, bool(removed)


def _of_project(db: Store, project_id: str, ref: str) -> Record:
    record = rec.get(db, ref)
    if record.project_id != project_id:
        raise InvalidRecord(f"record {record.id} belongs to another project ({record.project_id})")
    if record.type not in CHECKED_TYPES:
        raise InvalidRecord(f"record {record.id} is a {record.type}; only decisions and "
                            "conventions are checked against CLAUDE.md")
    return record
