"""Projects: resolving a working folder to a project, listing, pausing and merging.

Resolution is on every hook's hot path, so a folder's identity is cached in ``project_paths`` and
re-read from the repository files only when the cache entry is older than :data:`RECHECK_SECONDS`.
"""

from __future__ import annotations

import os
import time

from agentctx.core.ids import now_iso
from agentctx.core.lean import NamedTuple
from agentctx.store import records as rec
from agentctx.store.db import Store
from agentctx.store.errors import AmbiguousId, NotFound, StoreError
from agentctx.store.models import GLOBAL_PROJECT, Project

RECHECK_SECONDS = 600


class Resolved(NamedTuple):
    """A working folder resolved to its project and worktree."""

    project: Project
    worktree: str


def resolve(db: Store, cwd: str) -> Resolved:
    """The project (created on first sight) and worktree root of the folder ``cwd``."""
    path = os.path.abspath(os.path.expanduser(cwd or "."))
    row = db.one("SELECT p.id, p.name, p.root, p.remote, p.paused, pp.worktree, pp.checked_at "
                 "FROM project_paths pp JOIN projects p ON p.id = pp.project_id "
                 "WHERE pp.path = ?", (path,))
    if row is not None and time.time() - float(row[6]) < RECHECK_SECONDS:
        return Resolved(Project(row[0], row[1], row[2], row[3], bool(row[4])), row[5])
    from agentctx.core.gitinfo import identify

    identity = identify(path)
    now = now_iso()
    with db.write():
        db.execute("INSERT INTO projects (id, name, root, remote, created_at, last_seen) "
                   "VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (id) DO UPDATE SET "
                   "last_seen = excluded.last_seen, remote = coalesce(excluded.remote, remote)",
                   (identity.id, identity.name, identity.root, identity.remote, now, now))
        db.execute("INSERT INTO project_paths (path, project_id, worktree, checked_at) "
                   "VALUES (?, ?, ?, ?) ON CONFLICT (path) DO UPDATE SET "
                   "project_id = excluded.project_id, worktree = excluded.worktree, "
                   "checked_at = excluded.checked_at",
                   (path, identity.id, identity.worktree, time.time()))
    project = get(db, identity.id)
    return Resolved(project, identity.worktree)


def worktrees(db: Store, project_id: str, *, limit: int = 10) -> list[str]:
    """The worktrees of ``project_id`` agentctx has seen, the most recently checked first."""
    return [str(row[0]) for row in db.rows(
        "SELECT worktree FROM project_paths WHERE project_id = ? GROUP BY worktree "
        "ORDER BY max(checked_at) DESC LIMIT ?", (project_id, limit))]


def of_folder(db: Store, cwd: str) -> Project | None:
    """The project a folder belongs to, as far as the store already knows, without resolving
    (nothing is written, no repository file is read): ``cwd`` or its nearest ancestor that a
    hook or command has resolved, else a project whose root holds ``cwd``; ``None`` otherwise.
    For read-only surfaces (the TUI) that must not create a project for wherever they start."""
    path = os.path.abspath(os.path.expanduser(cwd or "."))
    ancestors = [path]
    while (parent := os.path.dirname(ancestors[-1])) != ancestors[-1]:
        ancestors.append(parent)
    marks = ",".join("?" * len(ancestors))
    rows = db.rows("SELECT pp.path, p.id, p.name, p.root, p.remote, p.paused "
                   "FROM project_paths pp JOIN projects p ON p.id = pp.project_id "
                   f"WHERE pp.path IN ({marks})", ancestors)
    rows += db.rows(f"SELECT root, id, name, root, remote, paused FROM projects "
                    f"WHERE root IN ({marks}) AND id != ?", [*ancestors, GLOBAL_PROJECT])
    if not rows:
        return None
    nearest = max(rows, key=lambda row: len(str(row[0])))
    return Project(nearest[1], nearest[2], nearest[3], nearest[4], bool(nearest[5]))


def get(db: Store, ref: str) -> Project:
    """A project by id, unambiguous id prefix or unique name."""
    row = db.one("SELECT id, name, root, remote, paused FROM projects WHERE id = ?", (ref,))
    if row is None:
        rows = db.rows("SELECT id, name, root, remote, paused FROM projects "
                       "WHERE id LIKE ? OR name = ?", (ref.lower() + "%", ref))
        if not rows:
            raise NotFound(f"no project {ref!r} (see 'agentctx projects')")
        if len(rows) > 1:
            raise AmbiguousId(ref, [f"{r[0]} ({r[1]})" for r in rows], "projects")
        row = rows[0]
    return Project(row[0], row[1], row[2], row[3], bool(row[4]))


class ProjectSummary(NamedTuple):
    """A project with what it holds and what it has cost, for listings."""

    project: Project
    records: int  # current records
    by_type: dict[str, int]  # current records per type (types with none left out)
    last_seen: str | None  # when a hook or command last resolved one of its folders
    last_session: str | None  # when its latest session started
    sessions: int
    tokens_injected: int


def list_all(db: Store, *, limit: int | None = None, offset: int = 0) -> list[ProjectSummary]:
    """Every project (a page of them) with its current records by type, last activity, sessions
    and tokens injected, most recently seen first; :func:`count` counts them."""
    sql = ("SELECT id, name, root, remote, paused, last_seen FROM projects "
           "ORDER BY last_seen DESC, id")
    params: list[object] = []
    if limit is not None:
        sql += " LIMIT ? OFFSET ?"
        params.extend([limit, max(0, offset)])
    elif offset:
        sql += " LIMIT -1 OFFSET ?"
        params.append(offset)
    rows = db.rows(sql, params)
    if not rows:
        return []
    ids = [row[0] for row in rows]
    marks = ",".join("?" * len(ids))
    by_type: dict[str, dict[str, int]] = {pid: {} for pid in ids}
    for pid, type_, number in db.rows(
            f"SELECT project_id, type, count(*) FROM records WHERE project_id IN ({marks}) "
            "AND superseded_at IS NULL GROUP BY project_id, type", ids):
        by_type[pid][type_] = int(number)
    activity = {row[0]: (row[1], int(row[2])) for row in db.rows(
        f"SELECT project_id, max(started_at), count(*) FROM sessions WHERE project_id IN "
        f"({marks}) GROUP BY project_id", ids)}
    tokens = {row[0]: int(row[1]) for row in db.rows(
        f"SELECT project_id, coalesce(sum(tokens), 0) FROM injections WHERE project_id IN "
        f"({marks}) GROUP BY project_id", ids)}
    return [ProjectSummary(Project(r[0], r[1], r[2], r[3], bool(r[4])),
                           sum(by_type[r[0]].values()), by_type[r[0]], r[5],
                           activity.get(r[0], (None, 0))[0], activity.get(r[0], (None, 0))[1],
                           tokens.get(r[0], 0)) for r in rows]


def count(db: Store) -> int:
    """How many projects :func:`list_all` lists in all."""
    return int(db.scalar("SELECT count(*) FROM projects") or 0)


def set_paused(db: Store, ref: str, paused: bool) -> Project:
    """Pause (no injection, no capture) or resume a project."""
    project = get(db, ref)
    db.execute("UPDATE projects SET paused = ? WHERE id = ?", (int(paused), project.id))
    return project._replace(paused=paused)


def merge(db: Store, old_ref: str, new_ref: str) -> int:
    """Re-home everything of project ``old`` into ``new`` (after a move or a new remote).

    Records, archive, entities, sessions, receipts and the cost ledger move; the old project and
    its cached folders are removed; keyed values (the profile) that now collide are superseded by
    the newest. Returns the number of records moved.
    """
    old, new = get(db, old_ref), get(db, new_ref)
    if old.id == new.id:
        raise StoreError("the two projects are the same")
    if GLOBAL_PROJECT in (old.id, new.id):
        raise StoreError("the global profile cannot be merged")
    with db.write():
        moved = int(db.scalar("SELECT count(*) FROM records WHERE project_id = ?", (old.id,)))
        for table in ("records", "records_archive", "sessions", "injections", "llm_calls"):
            db.execute(f"UPDATE {table} SET project_id = ? WHERE project_id = ?",
                       (new.id, old.id))
        for node_id, kind, name in db.rows("SELECT id, kind, name FROM nodes WHERE project_id = ?",
                                           (old.id,)):
            twin = db.scalar("SELECT id FROM nodes WHERE project_id = ? AND kind = ? AND name = ?",
                             (new.id, kind, name))
            if twin is None:
                db.execute("UPDATE nodes SET project_id = ? WHERE id = ?", (new.id, node_id))
                continue
            db.execute("UPDATE OR IGNORE record_entities SET entity_id = ? WHERE entity_id = ?",
                       (twin, node_id))
            db.execute("UPDATE OR IGNORE edges SET to_id = ? WHERE to_id = ?", (twin, node_id))
            db.execute("DELETE FROM nodes WHERE id = ?", (node_id,))
        db.execute("DELETE FROM digests WHERE project_id IN (?, ?)", (old.id, new.id))
        db.execute("UPDATE project_paths SET project_id = ? WHERE project_id = ?",
                   (new.id, old.id))
        db.execute("DELETE FROM projects WHERE id = ?", (old.id,))
        for type_, key in db.rows("SELECT type, key FROM records WHERE project_id = ? AND key IS "
                                  "NOT NULL AND superseded_at IS NULL GROUP BY type, key "
                                  "HAVING count(*) > 1", (new.id,)):
            dupes = db.rows("SELECT id FROM records WHERE project_id = ? AND type = ? AND key = ? "
                            "AND superseded_at IS NULL ORDER BY valid_from DESC, pk DESC",
                            (new.id, type_, key))
            newest = dupes[0][0]
            for (older,) in dupes[1:]:
                rec.supersede(db, older, newest, "projects merged: newer value kept",
                              actor="merge")
    return moved
