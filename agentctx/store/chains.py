"""Supersession chains: what was believed when, and why it changed.

A chain is the set of records linked by ``supersedes`` edges (live and archived alike), oldest
version first, each with the rationale given when it was replaced. Usually a line, it can fork
backwards when one record superseded several. :func:`chains` returns a project's chains in one
call (three queries, whatever their number), most recently changed first, a page at a time;
:func:`count_chains` counts them; :func:`chain_of` is the chain through one record.
"""

from __future__ import annotations

from agentctx.lean import NamedTuple
from agentctx.store import records as rec
from agentctx.store.db import Store
from agentctx.store.models import GLOBAL_PROJECT, Record


class Version(NamedTuple):
    """One record of a chain, and why it was replaced (``None`` while it holds)."""

    record: Record
    rationale: str | None


class Chain(NamedTuple):
    """The versions of one fact, oldest first; the last is the one in force (if any is)."""

    versions: tuple[Version, ...]

    @property
    def head(self) -> Record:
        """The newest version."""
        return self.versions[-1].record

    @property
    def changed_at(self) -> str:
        """When the newest version became valid (the order of :func:`chains`)."""
        return self.head.valid_from


def chains(db: Store, project_id: str, *, include_global: bool = False,
           types: tuple[str, ...] = (), limit: int | None = None,
           offset: int = 0) -> list[Chain]:
    """The project's supersession chains (records that replaced or were replaced), newest change
    first; ``types`` keeps the chains whose newest version is of those types."""
    found = _all_chains(db, project_id, include_global, types)
    start = max(0, offset)
    return found[start:] if limit is None else found[start:start + max(0, limit)]


def count_chains(db: Store, project_id: str, *, include_global: bool = False,
                 types: tuple[str, ...] = ()) -> int:
    """How many chains :func:`chains` lists for the same arguments."""
    return len(_all_chains(db, project_id, include_global, types))


def chain_of(db: Store, ref: str) -> Chain:
    """The chain through the record ``ref`` (a chain of one when it was never superseded)."""
    members = rec.history(db, ref)
    notes = _notes(db, [r.id for r in members])
    return Chain(tuple(Version(r, notes.get(r.id)) for r in members))


def _projects(project_id: str, include_global: bool) -> list[str]:
    if include_global and project_id != GLOBAL_PROJECT:
        return [project_id, GLOBAL_PROJECT]
    return [project_id]


def _all_chains(db: Store, project_id: str, include_global: bool,
                types: tuple[str, ...]) -> list[Chain]:
    projects = _projects(project_id, include_global)
    marks = ",".join("?" * len(projects))
    members: dict[str, Record] = {}
    for table in rec.TABLES:
        for row in db.rows(
                f"SELECT {rec.COLUMNS} FROM {table} WHERE project_id IN ({marks}) AND id IN "
                "(SELECT from_id FROM edges WHERE rel_type = 'supersedes' "
                " UNION SELECT to_id FROM edges WHERE rel_type = 'supersedes')", projects):
            record = rec.from_row(row, archived=table == "records_archive")
            members[record.id] = record
    if not members:
        return []
    links = [(row[0], row[1], row[2]) for row in db.rows(
        f"SELECT e.from_id, e.to_id, e.note FROM edges e WHERE e.rel_type = 'supersedes' AND "
        f"e.to_id IN (SELECT id FROM records WHERE project_id IN ({marks}) "
        f"UNION ALL SELECT id FROM records_archive WHERE project_id IN ({marks}))",
        [*projects, *projects])]
    parent = {rid: rid for rid in members}

    def root(rid: str) -> str:
        while parent[rid] != rid:
            parent[rid] = parent[parent[rid]]
            rid = parent[rid]
        return rid

    notes: dict[str, str | None] = {}
    for newer, older, note in links:
        if newer in members and older in members:
            parent[root(newer)] = root(older)
            notes[older] = note
    groups: dict[str, list[Record]] = {}
    for rid, record in members.items():
        groups.setdefault(root(rid), []).append(record)
    found = []
    for group in groups.values():
        if len(group) < 2:
            continue
        group.sort(key=lambda r: (r.valid_from, r.recorded_at, r.pk))
        chain = Chain(tuple(Version(r, notes.get(r.id)) for r in group))
        if not types or chain.head.type in types:
            found.append(chain)
    found.sort(key=lambda c: (c.changed_at, c.head.pk), reverse=True)
    return found


def _notes(db: Store, ids: list[str]) -> dict[str, str | None]:
    """The rationale on the ``supersedes`` edge into each of ``ids`` that was replaced."""
    if not ids:
        return {}
    marks = ",".join("?" * len(ids))
    return {row[0]: row[1] for row in db.rows(
        f"SELECT to_id, note FROM edges WHERE rel_type = 'supersedes' AND to_id IN ({marks}) "
        "ORDER BY created_at", ids)}
