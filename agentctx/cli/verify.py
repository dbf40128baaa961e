"""``agentctx verify``: the records whose named paths are all gone (possibly stale), and their
resolution — supersede, forget or keep.

It checks every current record of the project against the folder it runs in (the project's
worktree there, else its root) first, as consolidation does, then lists what is possibly stale
with the paths that no longer exist. ``--keep`` accepts a record as still true (it is not flagged
again while the same paths are gone), ``--forget`` deletes it, ``--supersede`` replaces it with
``--why`` (and ``--body``/``--title``). Each action names one record (id or prefix).
"""

from __future__ import annotations

import os

import typer

from agentctx import drift
from agentctx.cli.common import (
    JsonOption,
    ProjectOption,
    YesOption,
    caller,
    current_project,
    fail,
    open_store,
    print_json,
    say_note,
)
from agentctx.cli.records import forget_asking
from agentctx.consolidate.truth import check_paths
from agentctx.context.injection import gone_note
from agentctx.ops import write_path
from agentctx.store import pathstate
from agentctx.store import records as rec
from agentctx.store.db import Store
from agentctx.store.models import Draft, Project, Record


def verify(
    keep: str | None = typer.Option(None, "--keep", help="Keep this record: still true."),
    forget: str | None = typer.Option(None, "--forget", help="Forget this record."),
    supersede: str | None = typer.Option(None, "--supersede",
                                         help="Supersede this record (with --why)."),
    why: str | None = typer.Option(None, "--why", "-w", help="Why it no longer holds."),
    body: str | None = typer.Option(None, "--body", "-b", help="Body of the successor."),
    title: str | None = typer.Option(None, "--title", help="Title of the successor."),
    yes: bool = YesOption,
    project: str | None = ProjectOption,
    json_out: bool = JsonOption,
) -> None:
    """List the records whose named files and folders are all gone, and resolve them."""
    actions = [name for name, value in (("--keep", keep), ("--forget", forget),
                                        ("--supersede", supersede)) if value]
    if len(actions) > 1:
        fail(f"give one of {', '.join(actions)} at a time")
    if (why or body or title) and not supersede:
        fail("--why, --body and --title go with --supersede")
    if supersede and not (why and why.strip()):
        fail("--supersede needs --why: say why the record no longer holds")
    if supersede and not (body and body.strip()):
        fail("--supersede needs --body: say what holds now")
    with open_store() as db:
        target = current_project(db, project)
        root = str(drift.project_folder(db, target, os.getcwd()))
        check_paths(db, target, root)
        if keep or forget or supersede:
            line = _resolve(db, target, keep, forget, supersede, why or "", body, title, yes)
            if json_out:
                print_json({"project": target.id, "done": line})
            else:
                typer.echo(line)
            return
        stale = pathstate.possibly_stale(db, target.id)
        shorts = rec.short_ids(db, [record.id for record, _ in stale])
    if json_out:
        print_json({"project": target.id, "folder": root, "possibly_stale": [
            {"id": r.id, "short_id": shorts[r.id], "type": r.type, "title": r.title,
             "gone": list(s.gone)} for r, s in stale]})
        return
    if not stale:
        typer.echo(f"{target.name}: every record naming files or folders names one that exists "
                   f"in {root}")
        return
    typer.echo(f"{target.name}: {len(stale)} possibly stale — every path they name is gone "
               f"from {root}")
    for record, state in stale:
        typer.echo(f"  {shorts[record.id]:<10}  {record.type:<10} {record.title}"
                   f"{gone_note(list(state.gone))}")
    typer.echo("resolve each: agentctx verify --keep ID (still true) | --forget ID | "
               "--supersede ID --why TEXT --body TEXT")


def _stale_one(db: Store, project: Project, ref: str) -> Record:
    record = rec.get(db, ref)
    if record.project_id != project.id:
        fail(f"{record.id} belongs to another project")
    if not record.current:
        fail(f"{record.id} is no longer current; nothing to verify")
    return record


def _resolve(db: Store, project: Project, keep: str | None, forget: str | None,
             supersede: str | None, why: str, body: str | None, title: str | None,
             yes: bool) -> str:
    if keep:
        record = _stale_one(db, project, keep)
        state = pathstate.keep(db, record.id)
        if state is None:
            fail(f"{record.id} names no file or folder; nothing to keep")
        return f"kept {record.id}: not flagged again while {', '.join(state.gone) or 'its paths'}" \
               f" {'is' if len(state.gone) == 1 else 'are'} gone"
    if forget:
        return forget_asking(db, _stale_one(db, project, forget).id, yes)
    assert supersede is not None
    record = _stale_one(db, project, supersede)
    draft = Draft(type="", title=title or "", body=body or "", confidence="explicit")
    done = write_path.supersede(db, caller(), record.id, draft, why)
    say_note(done.note)
    return f"{record.id} superseded by {done.new.id}"


def register(app: typer.Typer) -> None:
    """Add ``verify`` to the CLI."""
    app.command()(verify)
