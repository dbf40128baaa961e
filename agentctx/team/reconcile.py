"""The store and the team file, each brought in step with the other.

* :func:`blocks_of` renders what the store shares (current decisions, conventions and
  discoveries with their predecessors in compact form);
* :func:`plan` compares a parsed file with the store and says, per record, what an import does;
  :func:`apply` does it: teammates' new records are added, a supersession the file shows is
  made locally, a newer revision replaces the local text; a local revision that is higher (or
  the same revision with other text) is kept and reported as a conflict. Nothing is deleted: a
  record absent from the file stays.
* :func:`write` writes the file atomically, only when its text changes.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from pathlib import Path

from agentctx.store import records as rec
from agentctx.store import teamstate
from agentctx.store.db import Store
from agentctx.store.errors import AlreadySuperseded, InvalidRecord, NotFound
from agentctx.store.ids import now_iso
from agentctx.store.models import Draft, Project, Record
from agentctx.team import fileio
from agentctx.team.teamfile import Block, ParsedFile, PastVersion, render

TEAM_FILE = Path(".agentctx") / "context.md"


# ----------------------------------------------------------------------------------- store → file


def blocks_of(db: Store, project_id: str) -> list[Block]:
    """The blocks of the project's shared records, with their history in compact form."""
    shared = teamstate.shared_records(db, project_id)
    revs = teamstate.revisions(db, [r.id for r in shared])
    blocks = []
    for record in shared:
        blocks.append(Block(id=record.id, type=record.type, title=record.title, body=record.body,
                            valid_from=record.valid_from, revision=revs.get(record.id, 1),
                            confidence=record.confidence, pinned=record.pinned, key=record.key,
                            history=_history(db, record)))
    return blocks


def _history(db: Store, record: Record) -> tuple[PastVersion, ...]:
    """The versions the record replaced, oldest first (a chain read backwards from it)."""
    if not teamstate.has_predecessor(db, record.id):
        return ()
    chain = rec.history(db, record.id)
    # Ordered by dates, then id: the same in every store (recording times and row numbers are
    # not, and two versions of one millisecond would otherwise swap places).
    past = sorted((item for item in chain if item.superseded_at is not None
                   and item.id != record.id and item.superseded_by is not None),
                  key=lambda item: (item.valid_from, str(item.superseded_at), item.id))
    return tuple(PastVersion(item.id, item.title, item.valid_from, str(item.superseded_at),
                             rec.supersession_note(db, str(item.superseded_by), item.id))
                 for item in past)


def render_project(db: Store, project: Project) -> str:
    """The team file's text for ``project`` as the store has it now."""
    return render(project.name, blocks_of(db, project.id))


# ----------------------------------------------------------------------------------- file → store


@dataclass(frozen=True)
class Conflict:
    """A record the file and the store disagree on; the local version was kept."""

    id: str
    title: str
    local_revision: int
    file_revision: int
    reason: str


@dataclass
class Plan:
    """What importing a parsed file into a project's store does (computed, not yet done)."""

    add: list[Block] = field(default_factory=list)  # records the store lacks
    update: list[Block] = field(default_factory=list)  # newer revisions of local records
    supersede: list[tuple[str, str, str | None]] = field(default_factory=list)  # old, new, why
    conflicts: list[Conflict] = field(default_factory=list)
    unchanged: int = 0

    @property
    def changes(self) -> int:
        """How many records an import would add or change."""
        return len(self.add) + len(self.update) + len(self.supersede)


def plan(db: Store, project: Project, parsed: ParsedFile) -> Plan:
    """Compare the file with the store (reads only)."""
    result = Plan()
    for rid in parsed.disagreeing:
        result.conflicts.append(Conflict(rid, "", 0, 0, "the file holds two different versions "
                                         "at the same revision (after a merge); nothing read"))
    ids = [b.id for b in parsed.blocks] + [p.id for b in parsed.blocks for p in b.history]
    revs = teamstate.revisions(db, ids)
    for block in parsed.blocks:
        if block.id not in revs:
            result.add.append(block)
        else:
            local = rec.get(db, block.id)
            if local.project_id != project.id:
                result.conflicts.append(Conflict(block.id, block.title, revs[block.id],
                                                 block.revision, "belongs to another project"))
                continue
            same = (local.title, local.body, local.pinned, local.confidence) == (
                block.title, block.body, block.pinned, block.confidence)
            if same and revs[block.id] >= block.revision:
                result.unchanged += 1
            elif revs[block.id] < block.revision:
                if local.archived or not local.current:
                    result.conflicts.append(Conflict(
                        block.id, block.title, revs[block.id], block.revision,
                        "superseded locally; the file's newer text was not taken"))
                else:
                    result.update.append(block)
            else:
                why = ("edited locally at a higher revision" if revs[block.id] > block.revision
                       else "edited both here and in the file at the same revision")
                result.conflicts.append(Conflict(block.id, block.title, revs[block.id],
                                                 block.revision, why + "; the local text was kept"))
        for past in block.history:
            if past.id in revs:
                local_past = rec.get(db, past.id)
                if local_past.current and not local_past.archived:
                    # By the record now in force: the versions between are superseded already.
                    result.supersede.append((past.id, block.id, past.rationale))
    return result


@dataclass
class Applied:
    """What an import did."""

    added: list[str] = field(default_factory=list)
    updated: list[str] = field(default_factory=list)
    superseded: list[str] = field(default_factory=list)
    conflicts: list[Conflict] = field(default_factory=list)
    unchanged: int = 0


def apply(db: Store, project: Project, parsed: ParsedFile, planned: Plan | None = None) -> Applied:
    """Import the file into the store in one transaction (all or nothing).

    Raises :class:`InvalidRecord` when a block breaks a record rule (its id named)."""
    todo = planned or plan(db, project, parsed)
    done = Applied(conflicts=list(todo.conflicts), unchanged=todo.unchanged)
    with db.write():
        for block in todo.add:
            _add(db, project, block)
            done.added.append(block.id)
        for block in todo.update:
            try:
                rec.update(db, block.id, title=block.title, body=block.body, pinned=block.pinned,
                           confidence=block.confidence, actor="import", revision=block.revision)
            except InvalidRecord as exc:
                raise InvalidRecord(f"record {block.id} (line {block.line}): {exc}") from None
            teamstate.set_revision(db, block.id, block.revision)
            done.updated.append(block.id)
        for old, new, why in todo.supersede:
            try:
                rec.supersede(db, old, new, why or "superseded in the team file", actor="import")
            except (AlreadySuperseded, NotFound):
                continue  # superseded meanwhile: the chain is already closed locally
            except InvalidRecord as exc:
                done.conflicts.append(Conflict(old, "", 0, 0, f"cannot supersede: {exc}"))
                continue
            done.superseded.append(old)
    return done


def _add(db: Store, project: Project, block: Block) -> None:
    draft = Draft(type=block.type, title=block.title, body=block.body, key=block.key,
                  confidence=block.confidence, source="import", valid_from=block.valid_from,
                  pinned=block.pinned)
    known = teamstate.revisions(db, [p.id for p in block.history])
    try:
        teamstate.insert_imported(db, draft, project_id=project.id, record_id=block.id,
                                  revision=block.revision)
        successor = block.id
        for past in reversed(block.history):
            if past.id not in known:
                teamstate.insert_imported(
                    db, Draft(type=block.type, title=past.title, valid_from=past.valid_from),
                    project_id=project.id, record_id=past.id, revision=1,
                    superseded_at=past.superseded_at, superseded_by=successor,
                    rationale=past.rationale)
            successor = past.id
    except (InvalidRecord, ValueError) as exc:
        raise InvalidRecord(f"record {block.id} (line {block.line}): {exc}") from None


# ----------------------------------------------------------------------------------- writing


def sha256(data: bytes) -> str:
    """The hex SHA-256 of ``data``."""
    return hashlib.sha256(data).hexdigest()


def write(db: Store, project: Project, path: Path, text: str, root: Path | None = None) -> bool:
    """Write ``text`` to ``path`` atomically when it differs from what is there; remember what
    the file now holds either way. Returns whether the file was written.

    ``root``: the worktree the file must stay inside (see :mod:`agentctx.team.fileio`, whose
    :class:`~agentctx.team.fileio.TeamFileUnusable` this raises)."""
    data = text.encode("utf-8")
    current = fileio.read(path, root)
    changed = current != data
    real = fileio.write(path, root, data) if changed else fileio.real_path(path, root)
    remember(db, project, path, data, real)
    return changed


def remember(db: Store, project: Project, path: Path, data: bytes,
             real: Path | None = None) -> None:
    """Record that ``path`` (really at ``real``) holds ``data`` and is in step with the store
    as of now."""
    stat = (real or path).stat()
    with db.write():
        teamstate.record_written(db, teamstate.FileState(
            str(path), project.id, sha256(data), stat.st_size, stat.st_mtime_ns,
            db.change_counter(), now_iso()))
