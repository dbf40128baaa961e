"""Every write the browser makes, through the store API (no SQL here), with one level of undo.

A form remembers the :func:`fingerprint` of the record it opened on; :meth:`Writer.edit` and
:meth:`Writer.supersede` compare it with the record as stored, inside the write transaction, and
refuse with :class:`ChangedElsewhere` when another process changed it meanwhile. After every
write the project's team file is brought in step (:func:`agentctx.team.after_write`, which never
raises).
"""

from __future__ import annotations

from pathlib import Path
from typing import NamedTuple

from agentctx.store import graph
from agentctx.store import projects as proj
from agentctx.store import records as rec
from agentctx.store.db import Store
from agentctx.store.errors import NotFound, StoreError
from agentctx.store.models import Draft, Project, Record

ACTOR = "tui"
# The confidence ladder ``+`` climbs and ``-`` descends.
CONFIDENCE_LADDER = ("inferred", "reinforced", "explicit")


class ChangedElsewhere(StoreError):
    """The record changed (or went) since the form opened: nothing was written."""

    def __init__(self) -> None:
        super().__init__("changed elsewhere — reload (escape, then open the record again)")


Fingerprint = tuple[object, ...]


def fingerprint(record: Record) -> Fingerprint:
    """What a form checks before it saves: anything another writer would change."""
    return (record.title, record.body, record.pinned, record.confidence, record.superseded_at,
            record.archived, record.updated_at)


class Undo(NamedTuple):
    """The last in-place change: the record, its values before, and its fingerprint after."""

    record_id: str
    what: str
    title: str
    body: str
    pinned: bool
    confidence: str
    after: Fingerprint


class Writer:
    """The browser's writes on one :class:`Store` (the app's connection)."""

    def __init__(self, db: Store, cwd: str) -> None:
        self.db = db
        self.cwd = cwd
        self.undo_entry: Undo | None = None

    # ------------------------------------------------------------------ checks

    def fresh(self, record_id: str, seen: Fingerprint | None) -> Record:
        """The record as stored now; :class:`ChangedElsewhere` when it differs from ``seen``
        (or is gone)."""
        try:
            record = rec.get(self.db, record_id)
        except NotFound:
            raise ChangedElsewhere() from None
        if seen is not None and fingerprint(record) != seen:
            raise ChangedElsewhere()
        return record

    # ------------------------------------------------------------------ writes

    def add(self, draft: Draft, project: Project, files: list[str]) -> Record:
        """A new record (validated by the store) with its files linked, in one transaction."""
        with self.db.write():
            created = rec.add(self.db, draft, project_id=project.id)
            for name in files:
                kind = "module" if name.endswith("/") or "." not in Path(name).name else "file"
                node = graph.ensure_node(self.db, created.project_id, kind,
                                         graph.relative_name(name, project.root).rstrip("/"))
                graph.link_record(self.db, created.id, node)
        self.kept_in_step(created)
        return created

    def edit(self, record_id: str, seen: Fingerprint | None, *, title: str | None = None,
             body: str | None = None, pinned: bool | None = None,
             confidence: str | None = None, what: str = "edit") -> Record:
        """Change a record in place (id kept, audited as ``tui``); undoable."""
        with self.db.write():
            before = self.fresh(record_id, seen)
            updated = rec.update(self.db, record_id, title=title, body=body, pinned=pinned,
                                 confidence=confidence, actor=ACTOR)
        if fingerprint(updated) != fingerprint(before):
            self.undo_entry = Undo(before.id, what, before.title, before.body, before.pinned,
                                   before.confidence, fingerprint(updated))
            self.kept_in_step(updated)
        return updated

    def supersede(self, record_id: str, seen: Fingerprint | None, title: str, body: str,
                  rationale: str) -> Record:
        """Replace a current record by a new one (the store refuses a superseded one)."""
        with self.db.write():
            self.fresh(record_id, seen)
            new = rec.supersede(self.db, record_id,
                                Draft(type="", title=title, body=body, source="cli",
                                      confidence="explicit"), rationale, actor=ACTOR)
        self.kept_in_step(new)
        return new

    def forget(self, record_id: str) -> Record:
        """Delete a record everywhere (the one destructive action; asked first)."""
        gone = rec.forget(self.db, record_id, actor=ACTOR)
        if self.undo_entry is not None and self.undo_entry.record_id == gone.id:
            self.undo_entry = None
        self.kept_in_step(gone)
        return gone

    def step_confidence(self, record_id: str, step: int) -> Record | None:
        """One rung up (``step=1``) or down the confidence ladder; ``None`` at the end."""
        record = self.fresh(record_id, None)
        rung = CONFIDENCE_LADDER.index(record.confidence) + step
        if not 0 <= rung < len(CONFIDENCE_LADDER):
            return None
        return self.edit(record.id, fingerprint(record), confidence=CONFIDENCE_LADDER[rung],
                         what="confidence change")

    def undo(self) -> tuple[str, Record]:
        """Put back the last edit, pin or confidence change; returns what it undid."""
        entry = self.undo_entry
        if entry is None:
            raise StoreError("nothing to undo since the browser opened")
        with self.db.write():
            self.fresh(entry.record_id, entry.after)
            restored = rec.update(self.db, entry.record_id, title=entry.title, body=entry.body,
                                  pinned=entry.pinned, confidence=entry.confidence, actor=ACTOR)
        self.undo_entry = None
        self.kept_in_step(restored)
        return entry.what, restored

    def kept_in_step(self, record: Record) -> None:
        """Keep the record's project's team file in step (never raises)."""
        from agentctx import team  # late: 11 ms, off the TUI's open time

        try:
            project = proj.get(self.db, record.project_id)
        except NotFound:  # the global profile: no team file
            return
        team.after_write(self.db, project, self.cwd)
