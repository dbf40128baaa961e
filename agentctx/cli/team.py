"""Team commands: ``team on|off|status|sync`` and ``import`` (team files, backups and Claude
Code's auto memory)."""

from __future__ import annotations

import os
from dataclasses import asdict
from pathlib import Path
from typing import Any

import typer

from agentctx.cli.common import (
    JsonOption,
    ProjectOption,
    caller,
    current_project,
    fail,
    open_store,
    print_json,
    say_note,
)
from agentctx.cli.render import plural
from agentctx.ops import memory_import, teamsync
from agentctx.ops.teamsync import Conflict, ImportReport, SyncResult, TeamProblem, TeamStatus
from agentctx.store import projects as proj
from agentctx.store.db import Store
from agentctx.store.dump import LoadReport
from agentctx.store.models import Project

team_app = typer.Typer(help="The team file .agentctx/context.md, shared in git.",
                       no_args_is_help=True)


def _project_here(db: Store, ref: str | None) -> Project:
    return current_project(db, ref)


def _conflict_lines(conflicts: tuple[Conflict, ...]) -> list[str]:
    return [f"  conflict {c.id}" + (f" ({c.title})" if c.title else "")
            + (f" local rev {c.local_revision}, file rev {c.file_revision}"
               if c.local_revision or c.file_revision else "") + f": {c.reason}"
            for c in conflicts]


def _say_sync(result: SyncResult) -> None:
    if result.imported is not None and result.imported.changes:
        typer.echo(f"imported {result.imported.changes} teammates' changes from {result.path}")
    for line in _conflict_lines(result.imported.conflicts if result.imported else ()):
        typer.echo(line)
    if result.problem:
        fail(result.problem)
    typer.echo(f"wrote {result.path}" if result.written else f"{result.path} is in step")


@team_app.command("on")
def team_on() -> None:
    """Keep .agentctx/context.md for the current folder's project (and merge it with union)."""
    with open_store() as db:
        project = _project_here(db, None)
        try:
            result = teamsync.turn_on(db, project, os.getcwd())
        except TeamProblem as exc:
            fail(str(exc))
    typer.echo(f"team file on for {project.name}; .gitattributes merges it with union")
    _say_sync(result)


@team_app.command("off")
def team_off() -> None:
    """Stop keeping the team file (the file and .gitattributes stay as they are)."""
    with open_store() as db:
        project = _project_here(db, None)
        was_on = teamsync.turn_off(db, project)
    typer.echo(f"team file off for {project.name}" if was_on
               else f"the team file was not on for {project.name}")


def _status_dict(state: TeamStatus) -> dict[str, Any]:
    return asdict(state)


@team_app.command("status")
def team_status(project: str | None = ProjectOption, json_out: bool = JsonOption) -> None:
    """Whether this worktree's team file is in step with the store (exit 1 when it is not)."""
    with open_store() as db:
        state = teamsync.status(db, _project_here(db, project), os.getcwd())
    if json_out:
        print_json(_status_dict(state))
    else:
        typer.echo(f"{state.state}: {state.path}")
        typer.echo(f"  {state.detail}")
        if state.duplicates:
            appear = "appears" if state.duplicates == 1 else "appear"
            typer.echo(f"  {plural(state.duplicates, 'record')} {appear} more than once "
                       "(read once)")
        for line in _conflict_lines(state.conflicts):
            typer.echo(line)
        for error in state.errors[1:]:
            typer.echo(f"  malformed block: {error}")
    if not state.in_step:
        raise typer.Exit(1)


@team_app.command("sync")
def team_sync(cwd: Path | None = typer.Option(None, "--cwd",
                                              help="Worktree to sync (default: here)."),
              quiet: bool = typer.Option(False, "--quiet", help="Print only problems.")) -> None:
    """Import what the team file holds that the store lacks, then rewrite it if it changed."""
    folder = str(cwd or os.getcwd())
    with open_store() as db:
        project = proj.resolve(db, folder).project
        result = teamsync.sync(db, project, folder)
    if result.skipped:
        if not quiet:
            typer.echo(f"the team file is off for {project.name} ('agentctx team on')")
        return
    conflicts = result.imported.conflicts if result.imported else ()
    if quiet and not result.problem and not conflicts:
        return
    _say_sync(result)


def import_cmd(
    path: Path | None = typer.Argument(None, help="Team file (.md) or backup (.json, .jsonl); "
                                       "default: this worktree's .agentctx/context.md."),
    fmt: str | None = typer.Option(None, "--format",
                                   help="md, json or jsonl (default: from the extension)."),
    claude_memory: bool = typer.Option(False, "--claude-memory",
                                       help="Import the project's Claude Code auto memory "
                                            "(~/.claude/projects/<project>/memory/; read only)."),
    project: str | None = ProjectOption,
    json_out: bool = JsonOption,
) -> None:
    """Read a team file (into the current project), a backup (into the store), or Claude
    Code's auto memory (--claude-memory)."""
    if claude_memory:
        if path is not None or fmt is not None:
            fail("--claude-memory reads the project's auto memory folder: give no file or "
                 "--format with it")
        _import_claude_memory(project, json_out)
        return
    with open_store() as db:
        try:
            done = teamsync.import_file(db, caller(), path, fmt, project)
        except TeamProblem as exc:
            fail(str(exc))
    say_note(done.note)
    if done.team_file is not None:
        _say_team_import(done.path, done.team_file, json_out)
    elif done.backup is not None:
        _say_backup(done.path, done.backup, json_out)


def _say_team_import(path: str, report: ImportReport, json_out: bool) -> None:
    if json_out:
        print_json({**asdict(report), "changes": report.changes})
    else:
        typer.echo(f"{path}: {len(report.added)} added · {len(report.updated)} updated · "
                   f"{len(report.superseded)} superseded · {report.unchanged} unchanged · "
                   f"{len(report.conflicts)} conflicts"
                   + (f" · {len(report.errors)} malformed" if report.errors else ""))
        for error in report.errors:
            typer.echo(f"  malformed block, left out: {error}")
        for duplicate in report.duplicates:
            typer.echo(f"  duplicate {duplicate.id} on lines "
                       f"{', '.join(map(str, duplicate.lines))} (read once)")
        for line in _conflict_lines(report.conflicts):
            typer.echo(line)
        if report.skipped_forgotten:
            were = "was" if len(report.skipped_forgotten) == 1 else "were"
            typer.echo(f"  {plural(len(report.skipped_forgotten), 'record')} forgotten here "
                       f"{were} not imported again")
    if report.conflicts or report.errors:
        raise typer.Exit(1)


def _import_claude_memory(project: str | None, json_out: bool) -> None:
    with open_store() as db:
        target = _project_here(db, project)
        done = memory_import.import_memory(db, caller(), target)
    say_note(done.note)
    if json_out:
        print_json({"project": target.id, **done.report.as_dict()})
    else:
        for line in done.lines:
            typer.echo(line)
    if done.report.problems:
        raise typer.Exit(1)


def _say_backup(path: str, report: LoadReport, json_out: bool) -> None:
    added, skipped = sum(report.added.values()), sum(report.skipped.values())
    if json_out:
        print_json({"added": report.added, "skipped": report.skipped})
        return
    typer.echo(f"{path}: {added} rows added, {skipped} already there")
    for table, count in sorted(report.added.items()):
        typer.echo(f"  {table}: {count}")


def register(app: typer.Typer) -> None:
    """Add ``team`` and ``import`` to the CLI."""
    app.add_typer(team_app, name="team")
    app.command("import")(import_cmd)
