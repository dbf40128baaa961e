"""Every write the browser makes, through the use-case layer (:mod:`agentctx.ops.write_path`,
as ``tui``), with one level of undo.

A form remembers the :func:`~agentctx.ops.write_path.fingerprint` of the record it opened on;
the write path compares it with the record as stored, inside the write transaction, and refuses
with :class:`~agentctx.ops.write_path.ChangedElsewhere` when another process changed it
meanwhile. After every write the project's team file is brought in step once, for the folder
the browser was started in.
"""

from __future__ import annotations

from typing import NamedTuple

from agentctx.ops import write_path
from agentctx.ops.caller import Caller
from agentctx.ops.write_path import CONFIDENCE_LADDER as CONFIDENCE_LADDER
from agentctx.ops.write_path import ChangedElsewhere as ChangedElsewhere
from agentctx.ops.write_path import Fingerprint, Forgotten, fingerprint
from agentctx.store.db import Store
from agentctx.store.errors import StoreError
from agentctx.store.models import Draft, Project, Record
from agentctx.store.upkeep import NearDuplicate

SOURCE = "tui"


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
        self.caller = Caller.face(SOURCE, cwd)
        self.undo_entry: Undo | None = None
        self.note: str | None = None  # why the last write's team file could not follow

    def take_note(self) -> str | None:
        """Why the last write's team file could not be brought in step (once; ``None``: it
        was, or the project keeps none)."""
        note, self.note = self.note, None
        return note

    def add(self, draft: Draft, project: Project, files: list[str]) -> Record:
        """A new record (validated by the store) with its files linked, in one transaction."""
        links = [write_path.link_of(name, project.root) for name in files]
        written = write_path.record(self.db, self.caller, project, draft, links)
        self.note = written.note
        return written.record

    def edit(self, record_id: str, seen: Fingerprint | None, *, title: str | None = None,
             body: str | None = None, pinned: bool | None = None,
             confidence: str | None = None, what: str = "edit") -> Record:
        """Change a record in place (id kept, audited as ``tui``); undoable."""
        changed = write_path.change(self.db, self.caller, record_id, title=title, body=body,
                                    pinned=pinned, confidence=confidence, seen=seen)
        self.note = changed.note
        before, updated = changed.before, changed.record
        if fingerprint(updated) != fingerprint(before):
            self.undo_entry = Undo(before.id, what, before.title, before.body, before.pinned,
                                   before.confidence, fingerprint(updated))
        return updated

    def supersede(self, record_id: str, seen: Fingerprint | None, title: str, body: str,
                  rationale: str) -> Record:
        """Replace a current record by a new one (the write path refuses a superseded one and
        an empty body); the successor keeps the old one's files."""
        done = write_path.supersede(
            self.db, self.caller, record_id,
            Draft(type="", title=title, body=body, confidence="explicit"), rationale,
            seen=seen)
        self.note = done.note
        return done.new

    def forgetting(self, record_id: str) -> tuple[Record, ...]:
        """The records forgetting ``record_id`` would make current again (the question names
        them)."""
        return write_path.forgetting(self.db, record_id)[1]

    def forget(self, record_id: str) -> Forgotten:
        """Delete a record everywhere (the one destructive action; asked first)."""
        gone = write_path.forget(self.db, self.caller, record_id)
        self.note = gone.note
        if self.undo_entry is not None and self.undo_entry.record_id == gone.record.id:
            self.undo_entry = None
        return gone

    def merge(self, pair: NearDuplicate, reason: str) -> Record:
        """Merge a near-duplicate pair: the older superseded by the newer."""
        done = write_path.merge(self.db, self.caller, pair, reason)
        self.note = done.note
        return done.new

    def step_confidence(self, record_id: str, step: int) -> Record | None:
        """One rung up (``step=1``) or down the confidence ladder; ``None`` at the end."""
        record = write_path.fresh(self.db, record_id, None)
        level = write_path.next_confidence(record, step)
        if level is None:
            return None
        return self.edit(record.id, fingerprint(record), confidence=level,
                         what="confidence change")

    def undo(self) -> tuple[str, Record]:
        """Put back the last edit, pin or confidence change; returns what it undid."""
        entry = self.undo_entry
        if entry is None:
            raise StoreError("nothing to undo since the browser opened")
        restored = write_path.change(self.db, self.caller, entry.record_id, title=entry.title,
                                     body=entry.body, pinned=entry.pinned,
                                     confidence=entry.confidence, seen=entry.after)
        self.note = restored.note
        self.undo_entry = None
        return entry.what, restored.record
