"""The team file, ``.agentctx/context.md``: the team's shared context, travelling in git.

The store is canonical; the file is a deterministic rendering of a project's shared records
(current decisions, conventions and discoveries with their history), kept in step for projects
that opted in (``agentctx team on``). This package is what every surface calls:

* :func:`status` — whether a worktree's file is in step with the store (a :class:`TeamStatus`);
* :func:`import_file` — read a team file into the store (an :class:`ImportReport`);
* :func:`sync` — catch a worktree's file up: import what teammates added, then rewrite it if its
  text changed (what runs after consolidation, after CLI / MCP / TUI writes and at SessionStart);
* :func:`after_write` — :func:`sync` for a surface that has just written, never raising;
* :func:`turn_on` / :func:`turn_off` — the per-project opt-in.

Every function takes an open :class:`~agentctx.store.Store` and returns plain dataclasses.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field, replace
from pathlib import Path

from agentctx.core import logfile
from agentctx.core.gitinfo import find_repo, identify
from agentctx.core.ids import now_iso
from agentctx.store import teamstate
from agentctx.store.db import Store
from agentctx.store.models import Project
from agentctx.team import fileio
from agentctx.team.fileio import TeamFileUnusable
from agentctx.team.reconcile import TEAM_FILE, Conflict, apply, plan, render_project, write
from agentctx.team.teamfile import Duplicate, ParsedFile, TeamFileError, parse

__all__ = [
    "TEAM_FILE", "Conflict", "Duplicate", "ImportReport", "NotInRepository", "SyncResult",
    "TeamFileError", "TeamFileUnusable", "TeamStatus", "after_write", "file_for", "guard_of",
    "import_file", "root_for", "status", "sync", "turn_off", "turn_on", "worktree_of",
]

GITATTRIBUTES_LINE = ".agentctx/context.md merge=union"


class NotInRepository(ValueError):
    """The team file needs a git repository, and the folder is in none."""


@dataclass(frozen=True)
class TeamStatus:
    """Whether a project's team file is in step with the store, for one worktree."""

    project_id: str
    project_name: str
    enabled: bool
    path: str  # the worktree's .agentctx/context.md
    exists: bool
    in_step: bool  # the file's text is exactly what the store renders
    state: str  # off, in step, missing, behind, to import, malformed
    detail: str  # one line saying what to do
    to_import: int = 0  # records an import would add or change
    conflicts: tuple[Conflict, ...] = ()
    duplicates: int = 0
    errors: tuple[str, ...] = ()  # one line per malformed block


@dataclass(frozen=True)
class ImportReport:
    """What an import of a team file did."""

    path: str
    added: tuple[str, ...] = ()
    updated: tuple[str, ...] = ()
    superseded: tuple[str, ...] = ()
    unchanged: int = 0
    conflicts: tuple[Conflict, ...] = ()
    duplicates: tuple[Duplicate, ...] = ()
    skipped_forgotten: tuple[str, ...] = ()
    errors: tuple[str, ...] = ()  # one line per malformed block, left out: "line N: …"

    @property
    def changes(self) -> int:
        """How many records the import added or changed."""
        return len(self.added) + len(self.updated) + len(self.superseded)


@dataclass(frozen=True)
class SyncResult:
    """What catching a worktree's file up did."""

    path: str
    written: bool
    imported: ImportReport | None = None
    problem: str | None = None  # why the file was left alone
    skipped: bool = False  # the project keeps no team file
    notes: tuple[str, ...] = field(default=())


def worktree_of(cwd: str | os.PathLike[str]) -> str | None:
    """The root of the git worktree holding ``cwd`` (``None`` outside git)."""
    repo = find_repo(os.fspath(cwd))
    return None if repo is None else repo.worktree


def file_for(project: Project, cwd: str | os.PathLike[str] | None = None) -> Path:
    """The team file a write from ``cwd`` keeps: the one at the root of ``cwd``'s worktree when
    that is a worktree of ``project``, else the one at the project's root."""
    return root_for(project, cwd) / TEAM_FILE


def root_for(project: Project, cwd: str | os.PathLike[str] | None = None) -> Path:
    """The worktree whose team file :func:`file_for` names (the file must stay inside it)."""
    if cwd is not None:
        worktree = worktree_of(cwd)
        if worktree is not None and identify(worktree).id == project.id:
            return Path(worktree)
    return Path(project.root)


def _read(path: Path, root: Path | None) -> str | None:
    """The team file's text (``None`` when there is none). Raises :class:`TeamFileUnusable`,
    or :class:`TeamFileError` for bytes that are not UTF-8."""
    data = fileio.read(path, root)
    if data is None:
        return None
    try:  # bytes, not read_text: a carriage return in a body must survive
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise TeamFileError(1, f"the file is not UTF-8 text ({exc.reason})") from None


def status(db: Store, project: Project, cwd: str | os.PathLike[str] | None = None) -> TeamStatus:
    """Whether the team file of ``cwd``'s worktree (default: the project's root) is in step."""
    root = root_for(project, cwd)
    path = root / TEAM_FILE
    enabled = teamstate.is_enabled(db, project.id)

    def made(state: str, detail: str, *, exists: bool = True, in_step: bool = False,
             to_import: int = 0, conflicts: tuple[Conflict, ...] = (),
             duplicates: int = 0, errors: tuple[str, ...] = ()) -> TeamStatus:
        return TeamStatus(project.id, project.name, enabled, str(path), exists, in_step, state,
                          detail, to_import, conflicts, duplicates, errors)

    try:
        text = _read(path, root)
    except TeamFileUnusable as exc:
        return made("unusable", str(exc))
    except TeamFileError as exc:
        return made("malformed", f"{path}: {exc}")
    if not enabled:
        return made("off", "the team file is off for this project ('agentctx team on')",
                    exists=text is not None)
    if text is None:
        return made("missing", "no team file yet ('agentctx team sync' writes it)",
                    exists=False)
    if text == render_project(db, project):
        return made("in step", "the file matches the store", in_step=True)
    parsed = parse(text)
    forgotten = teamstate.forgotten(db, [b.id for b in parsed.blocks])
    planned = plan(db, project, _without(parsed, forgotten))
    if planned.errors:
        lines = tuple(str(e) for e in planned.errors)
        return made("malformed", f"{path}: {_malformed(lines)}", to_import=planned.changes,
                    conflicts=tuple(planned.conflicts), duplicates=len(parsed.duplicates),
                    errors=lines)
    if planned.changes:
        return made("to import", f"{planned.changes} teammates' changes to import "
                    "('agentctx import')", to_import=planned.changes,
                    conflicts=tuple(planned.conflicts), duplicates=len(parsed.duplicates))
    return made("behind", "the store has changes the file does not show yet "
                "('agentctx team sync')", conflicts=tuple(planned.conflicts),
                duplicates=len(parsed.duplicates))


def _without(parsed: ParsedFile, ids: set[str]) -> ParsedFile:
    if not ids:
        return parsed
    return replace(parsed, blocks=tuple(b for b in parsed.blocks if b.id not in ids))


def _malformed(errors: tuple[str, ...]) -> str:
    first = errors[0]
    more = f" (and {len(errors) - 1} more)" if len(errors) > 1 else ""
    return f"{len(errors)} malformed block{'s' if len(errors) > 1 else ''}, left out: {first}{more}"


def import_text(db: Store, project: Project, text: str, path: str) -> ImportReport:
    """Import a team file's text into the project: every well-formed block, in one
    transaction. A malformed block (not in the format, breaking a record rule, dated in the
    future) is left out and reported in :attr:`ImportReport.errors` by its line; it never
    stops the others."""
    parsed = parse(text)
    forgotten = teamstate.forgotten(db, [b.id for b in parsed.blocks])
    done = apply(db, project, _without(parsed, forgotten))
    return ImportReport(path=path, added=tuple(done.added), updated=tuple(done.updated),
                        superseded=tuple(done.superseded), unchanged=done.unchanged,
                        conflicts=tuple(done.conflicts), duplicates=parsed.duplicates,
                        skipped_forgotten=tuple(sorted(forgotten)),
                        errors=tuple(str(e) for e in done.errors))


def import_file(db: Store, project: Project, path: str | os.PathLike[str]) -> ImportReport:
    """Import the team file at ``path`` into ``project``: idempotent by id; see
    :func:`import_text`. Raises ``FileNotFoundError`` when there is no such file and
    :class:`TeamFileUnusable` for one that must not be read (a file inside a git worktree must
    stay inside it)."""
    target = Path(path)
    text = _read(target, guard_of(target))
    if text is None:
        raise FileNotFoundError(f"no file {target}")
    return import_text(db, project, text, str(target))


def sync(db: Store, project: Project, cwd: str | os.PathLike[str] | None = None) -> SyncResult:
    """Catch the team file of ``cwd``'s worktree up with the store: import what it holds that
    the store lacks, then rewrite it when its text changes. A malformed file is left alone.
    A project that keeps no team file is skipped."""
    root = root_for(project, cwd)
    path = root / TEAM_FILE
    if not teamstate.is_enabled(db, project.id):
        return SyncResult(str(path), written=False, skipped=True)
    try:
        text = _read(path, root)
        report = None if text is None else import_text(db, project, text, str(path))
        if report is not None and report.errors:  # a rewrite would drop the teammate's block
            return SyncResult(str(path), written=False, imported=report,
                              problem=f"{path}: {_malformed(report.errors)}; the others were "
                              "imported and the file is left as it is")
        written = write(db, project, path, render_project(db, project), root)
    except TeamFileUnusable as exc:
        return SyncResult(str(path), written=False, problem=str(exc))
    except TeamFileError as exc:
        return SyncResult(str(path), written=False, problem=f"{path}: {exc}; left as it is")
    return SyncResult(str(path), written=written, imported=report)


def after_write(db: Store, project: Project,
                cwd: str | os.PathLike[str] | None = None) -> SyncResult | None:
    """:func:`sync` after a surface wrote records; never raises (a problem is returned in the
    result and logged). ``None`` when the project keeps no team file."""
    try:
        if not teamstate.is_enabled(db, project.id):
            return None
        result = sync(db, project, cwd)
    except Exception as exc:  # a write already succeeded: the file catches up next time
        result = SyncResult(str(file_for(project, cwd)), written=False,
                            problem=f"team file not updated: {exc}")
    if result.problem:
        _log(result.problem)
    for conflict in result.imported.conflicts if result.imported else ():
        _log(f"{result.path}: conflict on {conflict.id}: {conflict.reason}")
    return result


def guard_of(path: Path) -> Path | None:
    """The git worktree a file named by the user must stay inside (``None`` outside git)."""
    worktree = worktree_of(path.absolute().parent)
    return None if worktree is None else Path(worktree)


def _log(message: str) -> None:
    logfile.append("team.log", f"{now_iso()} {message}")


def turn_on(db: Store, project: Project, cwd: str | os.PathLike[str]) -> SyncResult:
    """Keep a team file for ``project``: opt in, add the union merge rule to the worktree's
    ``.gitattributes``, and write the file now. Raises :class:`NotInRepository` outside git."""
    worktree = worktree_of(cwd)
    if worktree is None:
        raise NotInRepository(f"{cwd} is in no git repository; the team file travels in git")
    teamstate.enable(db, project.id)
    add_merge_rule(Path(worktree))
    return sync(db, project, cwd)


def turn_off(db: Store, project: Project) -> bool:
    """Stop keeping the team file (the file and ``.gitattributes`` stay as they are)."""
    return teamstate.disable(db, project.id)


def add_merge_rule(worktree: Path) -> bool:
    """Add ``.agentctx/context.md merge=union`` to the worktree's ``.gitattributes`` once;
    returns whether the line was added."""
    target = worktree / ".gitattributes"
    current = fileio.read(target, worktree, what=".gitattributes") or b""
    text = current.decode("utf-8", "replace")
    if any(line.split() == GITATTRIBUTES_LINE.split() for line in text.splitlines()):
        return False
    prefix = b"" if not current or current.endswith(b"\n") else b"\n"
    fileio.write(target, worktree, current + prefix + f"{GITATTRIBUTES_LINE}\n".encode(),
                 what=".gitattributes")
    return True

