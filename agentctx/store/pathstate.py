"""The paths each current record names, which were gone at the last check, and what to keep.

Consolidation (and ``agentctx verify``) checks every current record's paths
(:mod:`agentctx.context.pathcheck`) and saves the outcome here; ``status``, the TUI, the web view
and ``agentctx verify`` list the **possibly stale** records from it — those naming at least one path
where every one of them is gone — without touching the disk. ``kept`` is what ``agentctx verify
--keep`` accepted: a record is not flagged again while the same paths are gone.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence

from agentctx.core.ids import now_iso
from agentctx.core.lean import NamedTuple
from agentctx.store import digests
from agentctx.store import records as rec
from agentctx.store.db import Store
from agentctx.store.models import Record


class PathState(NamedTuple):
    """What a record names and what of it was gone at ``checked_at``."""

    record_id: str
    paths: tuple[str, ...]
    gone: tuple[str, ...]
    kept: tuple[str, ...] | None
    checked_at: str

    @property
    def stale(self) -> bool:
        """Every named path is gone, and that is not what was kept."""
        return bool(self.paths) and sorted(self.gone) == sorted(self.paths) and (
            self.kept is None or sorted(self.kept) != sorted(self.gone))


def _state(row: Sequence[object]) -> PathState:
    kept = json.loads(str(row[3])) if row[3] is not None else None
    return PathState(str(row[0]), tuple(json.loads(str(row[1]))), tuple(json.loads(str(row[2]))),
                     tuple(kept) if kept is not None else None, str(row[4]))


def save(db: Store, project_id: str, states: Iterable[tuple[str, Sequence[str],
                                                             Sequence[str]]]) -> int:
    """Store ``(record id, paths, gone)`` for records of ``project_id`` (what was kept stays); a
    record that names nothing loses its row. One transaction; returns the rows written."""
    now = now_iso()
    written = 0
    with db.write():
        for record_id, paths, gone in states:
            if not paths:
                db.execute("DELETE FROM record_paths WHERE record_id = ?", (record_id,))
                continue
            db.execute("INSERT INTO record_paths (record_id, project_id, paths, gone, checked_at) "
                       "VALUES (?, ?, ?, ?, ?) ON CONFLICT (record_id) DO UPDATE SET "
                       "paths = excluded.paths, gone = excluded.gone, "
                       "checked_at = excluded.checked_at",
                       (record_id, project_id, json.dumps(list(paths)), json.dumps(list(gone)),
                        now))
            written += 1
    return written


def replace_project(db: Store, project_id: str,
                    states: Sequence[tuple[str, Sequence[str], Sequence[str]]]) -> int:
    """Store ``(record id, paths, gone)`` of every record of ``project_id`` that names a path,
    and drop the rows of its other records (one transaction); returns the rows written."""
    named = [state for state in states if state[1]]
    with db.write():
        db.execute("DELETE FROM record_paths WHERE project_id = ? AND record_id NOT IN "
                   "(SELECT value FROM json_each(?))",
                   (project_id, json.dumps([state[0] for state in named])))
        return save(db, project_id, named)


def of_records(db: Store, record_ids: Sequence[str]) -> dict[str, PathState]:
    """The stored states of ``record_ids`` (records never checked, or naming nothing, are
    absent)."""
    found: dict[str, PathState] = {}
    ids = list(dict.fromkeys(record_ids))
    for start in range(0, len(ids), 500):
        chunk = ids[start:start + 500]
        for row in db.rows("SELECT record_id, paths, gone, kept, checked_at FROM record_paths "
                           f"WHERE record_id IN ({','.join('?' * len(chunk))})", chunk):
            state = _state(row)
            found[state.record_id] = state
    return found


def possibly_stale(db: Store, project_id: str) -> list[tuple[Record, PathState]]:
    """The project's current records whose named paths were all gone at the last check (and not
    kept), newest first."""
    rows = db.rows("SELECT record_id, paths, gone, kept, checked_at FROM record_paths "
                   "WHERE project_id = ? AND gone != '[]'", (project_id,))
    states = [s for s in (_state(row) for row in rows) if s.stale]
    if not states:
        return []
    by_id = {s.record_id: s for s in states}
    marks = ",".join("?" * len(by_id))
    found = [rec.from_row(row) for row in db.rows(
        f"SELECT {rec.COLUMNS} FROM records WHERE id IN ({marks}) AND superseded_at IS NULL",
        list(by_id))]
    found.sort(key=lambda r: (r.valid_from, r.pk), reverse=True)
    return [(record, by_id[record.id]) for record in found]


def count_possibly_stale(db: Store, project_id: str) -> int:
    """How many records :func:`possibly_stale` lists."""
    return len(possibly_stale(db, project_id))


def keep(db: Store, record_id: str) -> PathState | None:
    """Accept a record as still true although its paths are gone (``agentctx verify --keep``):
    it is not flagged again while the same paths are gone. Returns the new state (``None`` when
    the record names no path)."""
    with db.write():
        db.execute("UPDATE record_paths SET kept = gone WHERE record_id = ?", (record_id,))
        project = db.scalar("SELECT project_id FROM record_paths WHERE record_id = ?",
                            (record_id,))
        if project is not None:  # the digest marked it: built again without the mark
            digests.mark_stale(db, str(project))
        row = db.one("SELECT record_id, paths, gone, kept, checked_at FROM record_paths "
                     "WHERE record_id = ?", (record_id,))
    return _state(row) if row is not None else None


def file_links(db: Store, record_ids: Sequence[str]) -> dict[str, list[str]]:
    """The file entities each record is linked to (their stored names), by record id."""
    found: dict[str, list[str]] = {}
    ids = list(dict.fromkeys(record_ids))
    for start in range(0, len(ids), 500):
        chunk = ids[start:start + 500]
        for row in db.rows("SELECT re.record_id, n.name FROM record_entities re JOIN nodes n "
                           "ON n.id = re.entity_id WHERE n.kind = 'file' AND re.record_id IN "
                           f"({','.join('?' * len(chunk))}) ORDER BY n.name", chunk):
            found.setdefault(str(row[0]), []).append(str(row[1]))
    return found
