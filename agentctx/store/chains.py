"""Supersession chains: what was believed when, and why it changed.

A chain is the set of records linked by ``supersedes`` edges (live and archived alike), oldest
version first, each with the rationale given when it was replaced. Usually a line, it can fork
backwards when one record superseded several. :func:`chains` returns a project's chains in one
call (a few queries, whatever their number), most recently changed first, a page at a time;
:func:`count_chains` counts them; :func:`chain_of` is the chain through one record.
"""

from __future__ import annotations

from agentctx.core.lean import NamedTuple
from agentctx.store import records as rec
from agentctx.store.db import Store
from agentctx.store.models import Record, project_scope


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
    groups, notes = _groups(db, project_id, include_global, types)
    start = max(0, offset)
    page = groups[start:] if limit is None else groups[start:start + max(0, limit)]
    wanted = [rid for group in page for rid in group]
    found: dict[str, Record] = {}
    for chunk in range(0, len(wanted), 500):
        ids = wanted[chunk:chunk + 500]
        marks = ",".join("?" * len(ids))
        for table in rec.TABLES:
            for row in db.rows(f"SELECT {rec.COLUMNS} FROM {table} WHERE id IN ({marks})", ids):
                record = rec.from_row(row, archived=table == "records_archive")
                found[record.id] = record
    return [Chain(tuple(Version(found[rid], notes.get(rid)) for rid in group if rid in found))
            for group in page]


def count_chains(db: Store, project_id: str, *, include_global: bool = False,
                 types: tuple[str, ...] = ()) -> int:
    """How many chains :func:`chains` lists for the same arguments."""
    return len(_groups(db, project_id, include_global, types)[0])


def chain_of(db: Store, ref: str) -> Chain:
    """The chain through the record ``ref`` (a chain of one when it was never superseded)."""
    members = rec.history(db, ref)
    notes = _notes(db, [r.id for r in members])
    return Chain(tuple(Version(r, notes.get(r.id)) for r in members))


def _groups(db: Store, project_id: str, include_global: bool,
            types: tuple[str, ...]) -> tuple[list[list[str]], dict[str, str | None]]:
    """Every chain of the projects as its members' ids, oldest first, the chains newest change
    first; and the rationale that replaced each replaced record.

    Only what ordering needs is read for every member (id, type, dates, pk); the full records
    are read for one page (:func:`chains`).
    """
    projects = project_scope(project_id, include_global) or []
    marks = ",".join("?" * len(projects))
    links = db.rows("SELECT from_id, to_id, note FROM edges WHERE rel_type = 'supersedes'")
    if not links:
        return [], {}
    # (valid_from, recorded_at, pk, type) of each member, looked up by id (+project_id keeps
    # SQLite on the id index rather than walking the projects' records).
    order: dict[str, tuple[str, str, int, str]] = {}
    for table in rec.TABLES:
        for row in db.rows(
                f"SELECT id, valid_from, recorded_at, pk, type FROM {table} "
                f"WHERE +project_id IN ({marks}) AND id IN "
                "(SELECT from_id FROM edges WHERE rel_type = 'supersedes' "
                " UNION SELECT to_id FROM edges WHERE rel_type = 'supersedes')", projects):
            order[row[0]] = (row[1], row[2], row[3], row[4])
    parent = {rid: rid for rid in order}

    def root(rid: str) -> str:
        while parent[rid] != rid:
            parent[rid] = parent[parent[rid]]
            rid = parent[rid]
        return rid

    notes: dict[str, str | None] = {}
    for newer, older, note in links:
        if newer in order and older in order:
            parent[root(newer)] = root(older)
            notes[older] = note
    grouped: dict[str, list[str]] = {}
    for rid in order:
        grouped.setdefault(root(rid), []).append(rid)
    groups = []
    for members in grouped.values():
        if len(members) < 2:
            continue
        members.sort(key=lambda rid: order[rid][:3])
        if not types or order[members[-1]][3] in types:
            groups.append(members)
    groups.sort(key=lambda members: (order[members[-1]][0], order[members[-1]][2]), reverse=True)
    return groups, notes


def _notes(db: Store, ids: list[str]) -> dict[str, str | None]:
    """The rationale on the ``supersedes`` edge into each of ``ids`` that was replaced."""
    if not ids:
        return {}
    marks = ",".join("?" * len(ids))
    return {row[0]: row[1] for row in db.rows(
        f"SELECT to_id, note FROM edges WHERE rel_type = 'supersedes' AND to_id IN ({marks}) "
        "ORDER BY created_at", ids)}
