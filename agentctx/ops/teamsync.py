"""The team file's use cases, for every face: keep a project's ``.agentctx/context.md`` in step
after a write, turn it on or off, its status, a sync, and imports (a team file or a backup).

Every one works for the caller's folder: the team file kept is the one of that folder's
worktree when it belongs to the project, else the one at the project's root
(:func:`agentctx.team.root_for`). :func:`keep_in_step` is what every write of the use-case layer
runs once after it commits; consolidation runs it for each opted-in project it touched. The
team package's values (:class:`SyncResult`, :class:`TeamStatus`, :class:`ImportReport`,
:class:`Conflict`) are handed out as they are; its refusals become :class:`TeamProblem`.
"""

from __future__ import annotations

from pathlib import Path
from typing import NamedTuple

from agentctx import team
from agentctx.core import safeio
from agentctx.ops.caller import Caller
from agentctx.store import dump, teamstate
from agentctx.store import projects as store_projects
from agentctx.store.db import Store
from agentctx.store.errors import InvalidRecord, NotFound, StoreError
from agentctx.store.models import Project
from agentctx.team import Conflict as Conflict
from agentctx.team import ImportReport as ImportReport
from agentctx.team import SyncResult as SyncResult
from agentctx.team import TeamStatus as TeamStatus
from agentctx.team import backupfile, fileio

TEAM_FILE_MAX = safeio.SHARED_FILE_MAX
BACKUP_MAX = 4_000_000_000  # a whole store as JSON: read only when it is a regular file
FORMATS = backupfile.FORMATS


class TeamProblem(Exception):
    """A team-file or backup request that cannot be served: one line, and nothing written."""


class Imported(NamedTuple):
    """What an import did: a team file's report, or a backup's rows added and skipped."""

    path: str
    team_file: ImportReport | None = None
    backup: dump.LoadReport | None = None
    note: str | None = None  # why the team file could not be brought in step afterwards


def keep_in_step(db: Store, project_id: str, cwd: str) -> SyncResult | None:
    """After a committed write to ``project_id``: bring its team file in step for ``cwd`` (once;
    never raises). ``None`` when the project keeps no team file (or is the global profile)."""
    try:
        project = store_projects.get(db, project_id)
    except NotFound:  # the global profile: no team file
        return None
    return team.after_write(db, project, cwd)


def note_of(result: SyncResult | None) -> str | None:
    """The line a face shows when the team file could not be brought in step."""
    return result.problem if result is not None else None


def in_repository(cwd: str) -> bool:
    """Whether ``cwd`` is in a git worktree (the team file travels in git)."""
    return team.worktree_of(cwd) is not None


def turn_on(db: Store, project: Project, cwd: str) -> SyncResult:
    """Keep a team file for ``project``: opt in, add the union merge rule to the worktree's
    ``.gitattributes``, and write the file now."""
    try:
        return team.turn_on(db, project, cwd)
    except (team.NotInRepository, team.TeamFileUnusable) as exc:
        raise TeamProblem(str(exc)) from None


def turn_off(db: Store, project: Project) -> bool:
    """Stop keeping the team file (the file and ``.gitattributes`` stay); whether it was on."""
    return team.turn_off(db, project)


def status(db: Store, project: Project, cwd: str) -> TeamStatus:
    """Whether the team file of ``cwd``'s worktree is in step with the store."""
    return team.status(db, project, cwd)


def sync(db: Store, project: Project, cwd: str) -> SyncResult:
    """Import what the team file holds that the store lacks, then rewrite it if it changed."""
    return team.sync(db, project, cwd)


def format_of(path: Path, given: str | None) -> str:
    """``md``, ``json`` or ``jsonl``: ``given``, else from the file's extension."""
    if given is not None:
        if given not in FORMATS:
            raise TeamProblem(f"--format takes {', '.join(FORMATS)}, not {given!r}")
        return given
    suffix = path.suffix.lower().lstrip(".")
    if suffix in ("md", "markdown"):
        return "md"
    if suffix in ("json", "jsonl"):
        return suffix
    if suffix == "ndjson":
        return "jsonl"
    raise TeamProblem(f"cannot tell the format of {path} from its extension; add --format "
                      "md|json|jsonl")


def import_file(db: Store, caller: Caller, path: Path | None, fmt: str | None = None,
                project_ref: str | None = None) -> Imported:
    """Import a team file into a project (``project_ref``: id, prefix or name; default the
    caller's folder's) — by default the file of the caller's worktree — or a backup into the
    store, in one transaction; then bring the team files in step once.

    Imported records keep the source ``import`` (they are a teammate's or a backup's); the
    caller's folder decides which team file follows. Raises :class:`TeamProblem`.
    """
    guard: Path | None = None
    project: Project | None = None
    if path is None or format_of(path, fmt) == "md":
        project = (store_projects.get(db, project_ref) if project_ref
                   else store_projects.resolve(db, caller.cwd).project)
    if path is None:
        assert project is not None
        path, guard = team.file_for(project, caller.cwd), team.root_for(project, caller.cwd)
    kind = format_of(path, fmt)
    if kind == "md" and guard is None:
        guard = team.guard_of(path)  # a team file inside a worktree must stay inside it
    text = _read(path, guard, kind)
    if project is not None:
        try:
            report = team.import_text(db, project, text, str(path))
        except (team.TeamFileError, InvalidRecord) as exc:
            raise TeamProblem(f"{path}: {exc}; nothing was imported") from None
        return Imported(str(path), team_file=report,
                        note=note_of(keep_in_step(db, project.id, caller.cwd)))
    try:
        rows = backupfile.read_jsonl(text) if kind == "jsonl" else backupfile.read_json(text)
        loaded = backupfile.load(db, rows)
    except (backupfile.BackupError, StoreError) as exc:
        raise TeamProblem(f"{path}: {exc}; nothing was imported") from None
    notes = [note_of(keep_in_step(db, project_id, caller.cwd))
             for project_id in teamstate.enabled_projects(db)]
    return Imported(str(path), backup=loaded, note=next((n for n in notes if n), None))


def _read(path: Path, guard: Path | None, kind: str) -> str:
    try:
        data = fileio.read(path, guard, TEAM_FILE_MAX if kind == "md" else BACKUP_MAX,
                           what="the team file" if kind == "md" else "the backup")
    except team.TeamFileUnusable as exc:
        raise TeamProblem(str(exc)) from None
    if data is None:
        raise TeamProblem(f"no file {path}")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise TeamProblem(f"cannot read {path}: {exc}") from None
