"""The store side of consolidation: decay scores, the archive, near-duplicate links, retiring.

Everything here is batch work done by ``agentctx consolidate`` (and read by ``agentctx status``
and the TUI: :func:`merge_candidates`, :func:`prune_candidates`);
each function that writes runs in one transaction, so a run killed at any point leaves the store
consistent and the next run picks up where this one stopped.

Near-duplicate candidates are ``near_duplicate`` edges between two record ids (weight = cosine,
note = the lexical overlap); a pair a reviewer (the merge check) found distinct gets a
``distinct`` edge so it is not asked about again.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, timedelta
from typing import NamedTuple

from agentctx.core.ids import new_ulid, now_iso, parse_time, to_iso
from agentctx.core.ids import now as clock_now
from agentctx.store import records as rec
from agentctx.store.db import Store
from agentctx.store.errors import AlreadySuperseded, InvalidRecord
from agentctx.store.models import Record

NEAR_DUPLICATE = "near_duplicate"
DISTINCT = "distinct"


class ScoreInput(NamedTuple):
    """What the decay score of one current record is computed from."""

    pk: int
    type: str
    confidence: str
    valid_from: str
    last_accessed: str | None
    access_count: int
    score: float
    low_score_since: str | None
    # The newest current handover of its worktree: where the next session starts, never decayed.
    latest_handover: bool = False


def _in(column: str, values: Sequence[str] | None) -> tuple[str, list[object]]:
    if values is None:
        return "1", []
    return f"{column} IN ({','.join('?' * len(values))})", list(values)


# ----------------------------------------------------------------------------------- scores


def score_inputs(db: Store, project_ids: Sequence[str] | None = None) -> list[ScoreInput]:
    """Score inputs of every current record (of ``project_ids``, or all)."""
    where, params = _in("project_id", project_ids)
    rows = db.rows("SELECT pk, type, confidence, valid_from, last_accessed, access_count, score, "
                   f"low_score_since FROM records WHERE superseded_at IS NULL AND {where} "
                   "ORDER BY pk", params)
    latest = latest_handovers(db, project_ids)
    return [ScoreInput(pk=row[0], type=row[1], confidence=row[2], valid_from=row[3],
                       last_accessed=row[4], access_count=row[5], score=row[6],
                       low_score_since=row[7], latest_handover=row[0] in latest)
            for row in rows]


def latest_handovers(db: Store, project_ids: Sequence[str] | None = None) -> set[int]:
    """The pks of each worktree's newest current handover (of ``project_ids``, or all).

    A handover's worktree is the one its key names (``worktree:<path>``, as PreCompact writes
    them), else that of the folder its session ran in; handovers with neither share one
    project-wide group.
    """
    where, params = _in("r.project_id", project_ids)
    rows = db.rows(
        f"""SELECT pk FROM (
                SELECT r.pk, row_number() OVER (
                    PARTITION BY r.project_id,
                        CASE WHEN r.key LIKE 'worktree:%' THEN substr(r.key, 10)
                             ELSE coalesce(pp.worktree, s.cwd, '') END
                    ORDER BY r.valid_from DESC, r.pk DESC) AS newest
                  FROM records r LEFT JOIN sessions s ON s.session_id = r.session_id
                  LEFT JOIN project_paths pp ON pp.path = s.cwd
                 WHERE r.type = 'handover' AND r.superseded_at IS NULL AND {where})
             WHERE newest = 1""", params)
    return {int(row[0]) for row in rows}


def save_scores(db: Store, updates: Sequence[tuple[int, float, str | None]]) -> None:
    """Write ``(pk, score, low_score_since)`` for many records in one transaction.

    Neither column is indexed by FTS nor counted as a change, so digests stay fresh.
    """
    if not updates:
        return
    with db.write():
        db.conn.executemany("UPDATE records SET score = ?, low_score_since = ? WHERE pk = ?",
                            [(score, since, pk) for pk, score, since in updates])


class PruneCandidate(NamedTuple):
    """A current record whose score stayed low long enough to be worth a look."""

    id: str
    type: str
    title: str
    score: float
    low_score_since: str
    days_low: int

    def __str__(self) -> str:
        return self.line(self.id)

    def line(self, short_id: str) -> str:
        """One line for people, the record named by ``short_id``."""
        return (f"{self.type} {short_id} score {self.score:.3f}, low for {self.days_low} "
                f"days: {self.title!r}")


def prune_candidates(db: Store, project_id: str | None, *, after_days: int,
                     now: datetime | None = None, limit: int = 100) -> list[PruneCandidate]:
    """Current, unpinned records whose score has stayed under the pruning threshold for more
    than ``after_days`` days (the ``prune_after_days`` knob), lowest score first.

    Consolidation maintains the scores and when each went low; nothing here deletes anything.
    """
    moment = now or clock_now()
    low_before = to_iso(moment - timedelta(days=after_days))
    where, params = _in("project_id", None if project_id is None else [project_id])
    rows = db.rows(f"SELECT id, type, title, score, low_score_since FROM records WHERE {where} "
                   "AND superseded_at IS NULL AND pinned = 0 AND low_score_since IS NOT NULL "
                   "AND low_score_since <= ? ORDER BY score, pk LIMIT ?",
                   [*params, low_before, limit])
    return [PruneCandidate(row[0], row[1], row[2], round(float(row[3]), 4), str(row[4]),
                           int((moment - parse_time(str(row[4]))).days)) for row in rows]


# ---------------------------------------------------------------------------------- archive


def archivable(db: Store, *, superseded_before: str, project_ids: Sequence[str] | None = None,
               limit: int = 500) -> list[int]:
    """Pks of records superseded before ``superseded_before`` (oldest first)."""
    where, params = _in("project_id", project_ids)
    return [row[0] for row in db.rows(
        f"SELECT pk FROM records WHERE superseded_at IS NOT NULL AND superseded_at < ? AND {where} "
        "ORDER BY superseded_at, pk LIMIT ?", [superseded_before, *params, limit])]


def archive(db: Store, pks: Sequence[int]) -> int:
    """Move records to ``records_archive`` (same columns plus ``archived_at``) atomically.

    Their embeddings are dropped (an archived record is never a vector hit, and a search hit only
    as of a date it was in force: triggers move it from the live to the archive's full-text index)
    and the archived copy is flagged ``pending_embedding`` so it is embedded again should it ever
    become current (``forget`` can restore a predecessor). Returns how many moved.
    """
    if not pks:
        return 0
    from agentctx.store import vectors

    columns = [row[1] for row in db.rows("PRAGMA table_info(records_archive)")
               if row[1] != "archived_at"]
    names = ", ".join(columns)
    now = now_iso()
    moved = 0
    with db.write():
        for start in range(0, len(pks), 500):
            chunk = list(pks[start:start + 500])
            marks = ",".join("?" * len(chunk))
            cursor = db.execute(
                f"INSERT INTO records_archive ({names}, archived_at) SELECT {names}, ? "
                f"FROM records WHERE pk IN ({marks}) AND superseded_at IS NOT NULL", [now, *chunk])
            moved += cursor.rowcount
            db.execute(f"UPDATE records_archive SET pending_embedding = 1 WHERE pk IN ({marks})",
                       chunk)
            db.execute(f"DELETE FROM records WHERE pk IN ({marks}) AND superseded_at IS NOT NULL",
                       chunk)
        vectors.delete(db, list(pks))
    return moved


# -------------------------------------------------------------------------- near-duplicates


def texts_of(db: Store, pks: Sequence[int]) -> dict[int, tuple[str, str, str]]:
    """``pk -> (id, title, body)`` of current-table records (what the lexical check reads)."""
    found: dict[int, tuple[str, str, str]] = {}
    for start in range(0, len(pks), 900):
        chunk = list(pks[start:start + 900])
        found.update((row[0], (row[1], row[2], row[3])) for row in db.rows(
            f"SELECT pk, id, title, body FROM records WHERE pk IN ({','.join('?' * len(chunk))})",
            chunk))
    return found


class NearDuplicate(NamedTuple):
    """Two current records of one type and project that may say the same thing."""

    first: Record  # the older of the two
    second: Record
    cosine: float
    overlap: float


def save_near_duplicates(db: Store, scanned_ids: Sequence[str],
                         pairs: Sequence[tuple[str, str, float, float]]) -> int:
    """Replace the near-duplicate links among ``scanned_ids`` by ``pairs`` (id, id, cos, overlap).

    Links touching records outside the scan are kept. Returns how many links are new.
    """
    scanned = set(scanned_ids)
    wanted = {(min(a, b), max(a, b)): (cos, overlap) for a, b, cos, overlap in pairs}
    now = now_iso()
    with db.write():
        existing = {(row[0], row[1]): row[2] for row in db.rows(
            "SELECT from_id, to_id, id FROM edges WHERE rel_type = ?", (NEAR_DUPLICATE,))}
        stale = [edge_id for (a, b), edge_id in existing.items()
                 if a in scanned and b in scanned and (a, b) not in wanted]
        for start in range(0, len(stale), 500):
            chunk = stale[start:start + 500]
            db.execute(f"DELETE FROM edges WHERE id IN ({','.join('?' * len(chunk))})", chunk)
        fresh = [(new_ulid(), a, b, NEAR_DUPLICATE, round(cos, 4), f"lexical overlap {ov:.2f}",
                  now) for (a, b), (cos, ov) in wanted.items() if (a, b) not in existing]
        db.conn.executemany("INSERT OR IGNORE INTO edges (id, from_id, to_id, rel_type, weight, "
                            "note, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)", fresh)
        db.conn.executemany("UPDATE edges SET weight = ?, note = ? WHERE from_id = ? AND "
                            "to_id = ? AND rel_type = ?",
                            [(round(cos, 4), f"lexical overlap {ov:.2f}", a, b, NEAR_DUPLICATE)
                             for (a, b), (cos, ov) in wanted.items() if (a, b) in existing])
    return len(fresh)


def near_duplicates(db: Store, project_id: str | None) -> list[NearDuplicate]:
    """Near-duplicate pairs whose records are both still current, most similar first.

    Pairs already judged distinct are left out.
    """
    where, params = _in("a.project_id", None if project_id is None else [project_id])
    width = len(rec.COLUMNS.split(","))
    columns = ", ".join(f"{t}.{c.strip()}" for t in ("a", "b") for c in rec.COLUMNS.split(","))
    rows = db.rows(
        f"SELECT e.weight, e.note, {columns} FROM edges e "
        "JOIN records a ON a.id = e.from_id JOIN records b ON b.id = e.to_id "
        f"WHERE e.rel_type = ? AND {where} AND a.superseded_at IS NULL "
        "AND b.superseded_at IS NULL AND NOT EXISTS (SELECT 1 FROM edges d WHERE "
        "d.rel_type = ? AND d.from_id = e.from_id AND d.to_id = e.to_id) "
        "ORDER BY e.weight DESC, e.from_id", [NEAR_DUPLICATE, *params, DISTINCT])
    found: list[NearDuplicate] = []
    for row in rows:
        values = list(row)
        first, second = rec.from_row(values[2:2 + width]), rec.from_row(values[2 + width:])
        older, newer = sorted((first, second), key=lambda r: (r.valid_from, r.pk))
        found.append(NearDuplicate(older, newer, float(row[0]), _overlap_of(row[1])))
    return found


class MergeCandidate(NamedTuple):
    """Two current records of one type that look like the same fact, waiting for a decision."""

    older_id: str  # a merge supersedes this one...
    newer_id: str  # ...by this one
    type: str
    older_title: str
    newer_title: str
    cosine: float
    overlap: float  # share of their terms in common (Jaccard)

    def __str__(self) -> str:
        return self.line(self.older_id, self.newer_id)

    def line(self, older: str, newer: str) -> str:
        """One line for people, the two records named by ``older`` and ``newer``."""
        return (f"{self.type} {older} ≈ {newer} (cosine {self.cosine:.3f}): "
                f"{self.older_title!r} / {self.newer_title!r}")


def merge_candidates(db: Store, project_id: str | None) -> list[MergeCandidate]:
    """:func:`near_duplicates` as flat values for listings (``agentctx status``, the TUI)."""
    return [MergeCandidate(p.first.id, p.second.id, p.first.type, p.first.title,
                           p.second.title, p.cosine, p.overlap)
            for p in near_duplicates(db, project_id)]


def _overlap_of(note: str | None) -> float:
    try:
        return float(str(note).rsplit(" ", 1)[-1])
    except (ValueError, IndexError):
        return 0.0


def mark_distinct(db: Store, first_id: str, second_id: str, note: str) -> None:
    """Remember that two near-duplicate records were judged distinct (never asked again)."""
    a, b = min(first_id, second_id), max(first_id, second_id)
    db.execute("INSERT OR IGNORE INTO edges (id, from_id, to_id, rel_type, note, created_at) "
               "VALUES (?, ?, ?, ?, ?, ?)", (new_ulid(), a, b, DISTINCT, note, now_iso()))


# ----------------------------------------------------------------------------------- retire


def retired(db: Store, project_id: str, type_: str, *, limit: int = 500) -> list[Record]:
    """Records of ``type_`` in ``project_id`` that were retired (validity ended without a
    successor, with a ``retired`` audit entry), most recently retired first."""
    rows = db.rows(f"SELECT {rec.COLUMNS} FROM records WHERE project_id = ? AND type = ? "
                   "AND superseded_at IS NOT NULL AND superseded_by IS NULL AND id IN "
                   "(SELECT record_id FROM edits WHERE field = 'retired') "
                   "ORDER BY superseded_at DESC LIMIT ?", (project_id, type_, limit))
    return [rec.from_row(row) for row in rows]


def retire(db: Store, ref: str, reason: str, *, actor: str = "cli") -> Record:
    """End a current record's validity now without a successor; returns it as it was.

    The record stays in history and as-of queries (valid until now) and its audit trail gains a
    ``retired`` entry with ``reason``; it is no longer injected or found by default search. Use
    :func:`agentctx.store.records.forget` for a hard delete instead.
    """
    if not reason.strip():
        raise InvalidRecord("a reason is required: say why the record no longer holds")
    with db.write():
        record = rec.get(db, ref)
        if record.archived or not record.current:
            raise AlreadySuperseded(f"record {record.id} is no longer current (superseded on "
                                    f"{(record.superseded_at or '')[:10]})")
        now = now_iso()
        db.execute("UPDATE records SET superseded_at = ?, updated_at = ? WHERE id = ?",
                   (max(now, record.valid_from), now, record.id))
        db.execute("INSERT INTO edits (record_id, field, old_value, new_value, actor, changed_at) "
                   "VALUES (?, 'retired', NULL, ?, ?, ?)",
                   (record.id, " ".join(reason.split()), actor, now))
    return record
