"""The one write path every face takes: record, edit, pin, confidence, supersede, retire, forget
and merge.

Each use case is one transaction with the caller's source and actor (:class:`Caller`; nothing is
defaulted), and once it commits, the written project's team file is brought in step exactly once
for the caller's folder (:func:`agentctx.ops.teamsync.keep_in_step`; a problem there is the
result's ``note``, never a failed write). Imports of team files and backups are in
:mod:`agentctx.ops.teamsync`.

A form or a page that read a record before writing it passes what it saw (``seen``, a
:func:`fingerprint`): a record changed elsewhere meanwhile is refused with
:class:`ChangedElsewhere` inside the transaction, and nothing is written.

Supersede carries the predecessor's file and entity links to its successor unless the caller
names the successor's files, and refuses a successor without a body. Forgetting a record that
superseded others makes them current again: :func:`forgetting` names them before, and
:class:`Forgotten` after.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import NamedTuple

from agentctx.ops.caller import Caller
from agentctx.ops.teamsync import keep_in_step, note_of
from agentctx.store import graph, upkeep
from agentctx.store import records as rec
from agentctx.store.db import Store
from agentctx.store.errors import InvalidRecord, NotFound, StoreError
from agentctx.store.models import Draft, Project, Record

# The confidence ladder a face climbs and descends one rung at a time.
CONFIDENCE_LADDER = ("inferred", "reinforced", "explicit")
_CONFIDENCE_RANK = {name: rank for rank, name in enumerate(CONFIDENCE_LADDER)}

Fingerprint = tuple[object, ...]


class ChangedElsewhere(StoreError):
    """The record changed (or went) since the caller read it: nothing was written."""

    def __init__(self) -> None:
        super().__init__("changed elsewhere — reload (escape, then open the record again)")


class Link(NamedTuple):
    """A file or folder a record applies to: a name relative to the project (or absolute inside
    it) and the entity kind (``file``, or ``module`` for a folder)."""

    name: str
    kind: str = "file"


class Written(NamedTuple):
    """A record as the write left it, and why the team file could not follow (if so)."""

    record: Record
    note: str | None = None


class Changed(NamedTuple):
    """An in-place change: the record before and after, and the team file's note."""

    before: Record
    record: Record
    note: str | None = None


class Superseded(NamedTuple):
    """A supersession: the record replaced, its successor, and the team file's note."""

    old: Record
    new: Record
    note: str | None = None


class Forgotten(NamedTuple):
    """A forgotten record as it was, the records current again because it went (those it had
    superseded, when it was the current one), and the team file's note."""

    record: Record
    current_again: tuple[Record, ...] = ()
    note: str | None = None


def fingerprint(record: Record) -> Fingerprint:
    """What a caller that read ``record`` checks before it writes: anything another writer
    would change."""
    return (record.title, record.body, record.pinned, record.confidence, record.superseded_at,
            record.archived, record.updated_at)


def fresh(db: Store, ref: str, seen: Fingerprint | None) -> Record:
    """The record as stored now; :class:`ChangedElsewhere` when it differs from ``seen`` (or is
    gone)."""
    try:
        record = rec.get(db, ref)
    except NotFound:
        if seen is None:
            raise
        raise ChangedElsewhere() from None
    if seen is not None and fingerprint(record) != seen:
        raise ChangedElsewhere()
    return record


def link_of(path: str, root: str | None) -> Link:
    """A file a person named (``--file``, a form's field): relative to ``root`` when inside it;
    a trailing ``/`` or a last part without a dot names a folder (a module entity)."""
    name = graph.relative_name(path, root)
    if name.endswith("/") or "." not in Path(name).name:
        return Link(name.rstrip("/"), "module")
    return Link(name, "file")


# ----------------------------------------------------------------------------- record


def record(db: Store, caller: Caller, project: Project, draft: Draft,
           files: Sequence[Link] = ()) -> Written:
    """A new record in ``project`` (the global profile for a global preference), stored with the
    caller's source, linked to ``files``, in one transaction. A keyed draft supersedes the
    current record of its type and key (the store's rule)."""
    with db.write():
        created = rec.add(db, draft._replace(source=caller.source), project_id=project.id)
        _link(db, created, files, project.id)
    return Written(created, note_of(keep_in_step(db, created.project_id, caller.cwd)))


# ------------------------------------------------------------------------ in-place changes


def change(db: Store, caller: Caller, ref: str, *, title: str | None = None,
           body: str | None = None, pinned: bool | None = None, confidence: str | None = None,
           seen: Fingerprint | None = None) -> Changed:
    """Correct a record in place (id kept; every old value audited with the caller's actor);
    the team file follows only when something changed. A superseded record's text is history:
    a new title or body for one is refused (its pin and confidence can still change)."""
    with db.write():
        before = fresh(db, ref, seen)
        if not before.current and (title is not None or body is not None):
            raise InvalidRecord(f"record {before.id} is superseded; its text is history: "
                                "edit the current version instead")
        after = rec.update(db, before.id, title=title, body=body, pinned=pinned,
                           confidence=confidence, actor=caller.actor)
    if fingerprint(after) == fingerprint(before):
        return Changed(before, after)
    return Changed(before, after, note_of(keep_in_step(db, after.project_id, caller.cwd)))


def edit(db: Store, caller: Caller, ref: str, *, title: str | None = None,
         body: str | None = None, seen: Fingerprint | None = None) -> Changed:
    """Correct a record's title and/or body in place."""
    return change(db, caller, ref, title=title, body=body, seen=seen)


def pin(db: Store, caller: Caller, ref: str, pinned: bool, *,
        seen: Fingerprint | None = None) -> Changed:
    """Pin (always ranked first, never pruned) or unpin a record."""
    return change(db, caller, ref, pinned=pinned, seen=seen)


def confidence(db: Store, caller: Caller, ref: str, level: str, *,
               seen: Fingerprint | None = None) -> Changed:
    """Set a record's confidence (inferred, reinforced, explicit)."""
    return change(db, caller, ref, confidence=level, seen=seen)


def next_confidence(record: Record, step: int) -> str | None:
    """The confidence one rung up (``step=1``) or down the ladder; ``None`` past its end."""
    rung = _CONFIDENCE_RANK.get(record.confidence, 0) + step
    return CONFIDENCE_LADDER[rung] if 0 <= rung < len(CONFIDENCE_LADDER) else None


# ------------------------------------------------------------------------------ supersede


def supersede(db: Store, caller: Caller, ref: str, successor: Draft | str, rationale: str, *,
              files: Sequence[Link] | None = None, seen: Fingerprint | None = None,
              ) -> Superseded:
    """Replace a current record by a new one (a :class:`Draft`: an empty type or title keeps
    the old one's; the body is required) or by an existing current record (its id), with a
    rationale, in one transaction. The successor gets the predecessor's file and entity links
    unless ``files`` names its own."""
    if isinstance(successor, Draft):
        successor = successor._replace(source=caller.source)
    with db.write():
        old = fresh(db, ref, seen)
        if isinstance(successor, Draft) and old.current and not successor.body.strip():
            # (a superseded record gets the store's own refusal first)
            raise InvalidRecord("the successor's body is required: say what holds now")
        new = rec.supersede(db, old.id, successor, rationale, actor=caller.actor)
        if files is None:
            _carry_links(db, old, new)
        else:
            _link(db, new, files, new.project_id)
    return Superseded(old, rec.get(db, new.id),
                      note_of(keep_in_step(db, new.project_id, caller.cwd)))


def retire(db: Store, caller: Caller, ref: str, reason: str) -> Written:
    """Retire a record: no longer in force and nothing replaces it (still in history)."""
    with db.write():
        retired = upkeep.retire(db, ref, reason, actor=caller.actor)
    return Written(retired, note_of(keep_in_step(db, retired.project_id, caller.cwd)))


# --------------------------------------------------------------------------------- forget


def forgetting(db: Store, ref: str) -> tuple[Record, tuple[Record, ...]]:
    """The record ``ref`` names and the records forgetting it would make current again (what a
    face says before it asks)."""
    record = rec.get(db, ref)
    return record, tuple(rec.current_again(db, record.id))


def forget(db: Store, caller: Caller, ref: str, *,
           seen: Fingerprint | None = None) -> Forgotten:
    """Delete a record everywhere (the one hard delete), audited with the caller's actor; its
    chain closes over it, and what it had superseded becomes current again when it was the
    current record."""
    with db.write():
        record = fresh(db, ref, seen)
        again = [r.id for r in rec.current_again(db, record.id)]
        gone = rec.forget(db, record.id, actor=caller.actor)
        restored = tuple(rec.get(db, rid) for rid in again)
    return Forgotten(gone, restored, note_of(keep_in_step(db, gone.project_id, caller.cwd)))


# ---------------------------------------------------------------------------------- merge


def merge_pair(db: Store, caller: Caller, pair: upkeep.NearDuplicate, reason: str) -> Record:
    """Merge a confirmed near-duplicate pair in one transaction, without the team file (a
    consolidation run brings it in step once, in its team step): the older record is superseded
    by the newer (the store's time rule), which inherits the pin, the strongest confidence, the
    summed reinforcement count and the older one's links; returns the survivor."""
    older, newer = pair.first, pair.second
    by = "consolidation" if caller.actor == "consolidate" else caller.actor
    rationale = (f"near-duplicate merged by {by} (cosine {pair.cosine:.3f}, lexical overlap "
                 f"{pair.overlap:.2f}): {reason}".strip())
    with db.write():
        survivor = rec.supersede(db, older.id, newer.id, rationale, actor=caller.actor)
        _carry_links(db, older, survivor)
        level = max((older.confidence, newer.confidence),
                    key=lambda c: _CONFIDENCE_RANK.get(c, 0))
        return rec.update(db, survivor.id, pinned=older.pinned or newer.pinned, confidence=level,
                          reinforce_count=older.reinforce_count + newer.reinforce_count,
                          actor=caller.actor)


def merge(db: Store, caller: Caller, pair: upkeep.NearDuplicate, reason: str) -> Superseded:
    """:func:`merge_pair` for a face (the TUI's merge candidates), then the team file once."""
    survivor = merge_pair(db, caller, pair, reason)
    return Superseded(rec.get(db, pair.first.id), survivor,
                      note_of(keep_in_step(db, survivor.project_id, caller.cwd)))


# ---------------------------------------------------------------------------------- links


def _link(db: Store, record_: Record, files: Sequence[Link], project_id: str) -> None:
    """Link a record to files of ``project_id`` (the project the caller works in, also for a
    global preference)."""
    for link in dict.fromkeys(files):
        graph.link_record(db, record_.id,
                          graph.ensure_node(db, project_id, link.kind, link.name))


def _carry_links(db: Store, old: Record, new: Record) -> None:
    """The successor is about the same code as the record it replaces."""
    for link in graph.entities_of(db, old.id):
        graph.link_record(db, new.id, link.node, link.rel)
