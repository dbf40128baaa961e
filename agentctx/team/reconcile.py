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
import sqlite3
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path

from agentctx.core.ids import now, now_iso, parse_time
from agentctx.store import records as rec
from agentctx.store import teamstate
from agentctx.store.db import Store
from agentctx.store.errors import AlreadySuperseded, InvalidRecord, NotFound
from agentctx.store.models import Draft, Project, Record
from agentctx.store.teamstate import TEAM_TYPES
from agentctx.team import fileio
from agentctx.team.teamfile import Block, ParsedFile, PastVersion, TeamFileError, render

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
                            key=record.key, history=_history(db, record)))
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
    errors: list[TeamFileError] = field(default_factory=list)  # blocks left out, by line
    unchanged: int = 0

    @property
    def changes(self) -> int:
        """How many records an import would add or change."""
        return len(self.add) + len(self.update) + len(self.supersede)


# A teammate's clock may run a little ahead; a date further ahead is refused.
CLOCK_SKEW = timedelta(minutes=10)


def _future(block: Block) -> str | None:
    """The first date of ``block`` that lies in the future, if any."""
    limit = now() + CLOCK_SKEW
    for text in (block.valid_from, *(d for p in block.history
                                     for d in (p.valid_from, p.superseded_at))):
        if parse_time(text) > limit:
            return text
    return None


def _invalid(block: Block) -> str | None:
    """Why ``block`` (or one of its past versions) breaks a record rule, if it does."""
    try:
        rec.validate(_draft(block), exact=True)
        for past in block.history:
            rec.validate(Draft(type=block.type, title=past.title, valid_from=past.valid_from),
                         exact=True)
    except InvalidRecord as exc:
        return str(exc)
    return None


def _refused(block: Block, result: Plan) -> bool:
    """Whether ``block`` breaks a record rule (then an error of ``result``). Checked only for
    what an import writes: an unchanged block costs no redaction."""
    invalid = _invalid(block)
    if invalid is not None:
        result.errors.append(TeamFileError(block.line, f"record {block.id}: {invalid}"))
    return invalid is not None


def _not_ours(local: Record, block: Block, project: Project) -> str | None:
    """Why the local record of a block's id must not take the file's text, if it must not:
    only a shared record of the same type in the same project is a teammate's to change."""
    if local.project_id != project.id:
        return "belongs to another project"
    if local.type not in TEAM_TYPES or local.scope != "project":
        return f"is a personal {local.type} here; the file's block was not taken"
    if local.type != block.type:
        return f"is a {local.type} here, a {block.type} in the file; the block was not taken"
    return None


def plan(db: Store, project: Project, parsed: ParsedFile) -> Plan:
    """Compare the file with the store (reads only)."""
    result = Plan(errors=list(parsed.errors))
    for rid in parsed.disagreeing:
        result.conflicts.append(Conflict(rid, "", 0, 0, "the file holds two different versions "
                                         "at the same revision (after a merge); nothing read"))
    ids = [b.id for b in parsed.blocks] + [p.id for b in parsed.blocks for p in b.history]
    revs = teamstate.revisions(db, ids)
    in_file = {b.id for b in parsed.blocks}
    for block in parsed.blocks:
        ahead = _future(block)
        if ahead is not None:
            result.errors.append(TeamFileError(block.line, f"record {block.id}: {ahead} is in "
                                               "the future; the block was not read"))
            continue
        if block.id not in revs:
            if not _refused(block, result):
                result.add.append(block)
        else:
            local = rec.get(db, block.id)
            refused = _not_ours(local, block, project)
            if refused is not None:
                result.conflicts.append(Conflict(block.id, block.title, revs[block.id],
                                                 block.revision, refused))
                continue
            same = (local.title, local.body) == (block.title, block.body)
            if same and revs[block.id] >= block.revision:
                result.unchanged += 1
            elif revs[block.id] < block.revision:
                if local.archived or not local.current:
                    result.conflicts.append(Conflict(
                        block.id, block.title, revs[block.id], block.revision,
                        "superseded locally; the file's newer text was not taken"))
                elif not _refused(block, result):
                    result.update.append(block)
            else:
                why = ("edited locally at a higher revision" if revs[block.id] > block.revision
                       else "edited both here and in the file at the same revision")
                result.conflicts.append(Conflict(block.id, block.title, revs[block.id],
                                                 block.revision, why + "; the local text was kept"))
        for past in block.history:
            if past.id not in revs and past.id in in_file:
                # a union merge: the old version is a block of the file too; once added, it
                # is superseded like a local one
                result.supersede.append((past.id, block.id, past.rationale))
            elif past.id in revs:
                local_past = rec.get(db, past.id)
                refused = _not_ours(local_past, block, project)
                if refused is not None:
                    result.conflicts.append(Conflict(past.id, past.title, revs[past.id], 0,
                                                     f"named in the history of {block.id} but "
                                                     f"{refused.split(';')[0]}; not superseded"))
                elif local_past.current and not local_past.archived:
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
    errors: list[TeamFileError] = field(default_factory=list)
    unchanged: int = 0


def apply(db: Store, project: Project, parsed: ParsedFile, planned: Plan | None = None) -> Applied:
    """Import the file into the store in one transaction; each block on its own savepoint, so
    a block the store refuses is reported (by its line) and the others are still imported."""
    todo = planned or plan(db, project, parsed)
    done = Applied(conflicts=list(todo.conflicts), errors=list(todo.errors),
                   unchanged=todo.unchanged)
    with db.write():
        for block in todo.add:
            if teamstate.revisions(db, [block.id]):  # a past version of a block added before
                done.unchanged += 1
                continue
            try:
                with db.write():
                    _add(db, project, block)
            except (InvalidRecord, ValueError, sqlite3.IntegrityError) as exc:
                done.errors.append(TeamFileError(block.line, f"record {block.id}: {exc}"))
                continue
            done.added.append(block.id)
        for block in todo.update:
            try:
                with db.write():
                    rec.update(db, block.id, title=block.title, body=block.body, actor="import",
                               revision=block.revision, exact=True)
                    teamstate.set_revision(db, block.id, block.revision)
            except (InvalidRecord, ValueError, sqlite3.IntegrityError) as exc:
                done.errors.append(TeamFileError(block.line, f"record {block.id}: {exc}"))
                continue
            done.updated.append(block.id)
        for old, new, why in todo.supersede:
            try:
                with db.write():
                    rec.supersede(db, old, new, why or "superseded in the team file",
                                  actor="import")
            except (AlreadySuperseded, NotFound):
                continue  # superseded meanwhile: the chain is already closed locally
            except (InvalidRecord, ValueError, sqlite3.IntegrityError) as exc:
                done.conflicts.append(Conflict(old, "", 0, 0, f"cannot supersede: {exc}"))
                continue
            done.superseded.append(old)
    done.errors.sort(key=lambda e: e.line)
    return done


def _draft(block: Block) -> Draft:
    """The record a teammate's block becomes here: unpinned and ``inferred`` whatever the
    teammate holds (their confidence is not yours until you reinforce it)."""
    return Draft(type=block.type, title=block.title, body=block.body, key=block.key,
                 confidence="inferred", source="import", valid_from=block.valid_from,
                 pinned=False)


def _add(db: Store, project: Project, block: Block) -> None:
    known = teamstate.revisions(db, [p.id for p in block.history])
    teamstate.insert_imported(db, _draft(block), project_id=project.id, record_id=block.id,
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
