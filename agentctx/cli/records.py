"""Record commands: record, list, search, show, edit, supersede, pin, unpin, history, forget."""

from __future__ import annotations

import os
import sys

import typer

from agentctx.cli import render
from agentctx.cli.common import (
    JsonOption,
    ProjectOption,
    YesOption,
    caller,
    check_date,
    current_project,
    fail,
    open_store,
    print_json,
    say_note,
)
from agentctx.core import config
from agentctx.core.gitinfo import find_repo
from agentctx.ops import find, write_path
from agentctx.ops.edit_text import EditorError
from agentctx.ops.edit_text import edit_in_editor as run_editor
from agentctx.store import chains, details
from agentctx.store import records as rec
from agentctx.store.db import Store
from agentctx.store.models import RECORD_TYPES, Draft, Project, Record
from agentctx.store.projects import of_folder
from agentctx.store.search import Query
from agentctx.store.selection import Selection

_TYPES_HELP = "Record type: " + ", ".join(RECORD_TYPES) + "."


def _body(body: str | None) -> str:
    """A body argument; ``-`` reads standard input."""
    if body == "-":
        return sys.stdin.read()
    return body or ""


def _check_type(type_: str) -> str:
    if type_ not in RECORD_TYPES:
        fail(f"unknown type {type_!r}; use one of {', '.join(RECORD_TYPES)}")
    return type_


def record(
    type_: str = typer.Argument(..., metavar="TYPE", help=_TYPES_HELP),
    title: str = typer.Argument(..., help="One-line title."),
    body: str | None = typer.Option(None, "--body", "-b", help="Body text ('-' reads stdin)."),
    scope: str = typer.Option("project", help="project, or global (preferences only)."),
    key: str | None = typer.Option(None,
                                   help="Key for structured values (a new value supersedes)."),
    valid_from: str | None = typer.Option(None, "--valid-from",
                                          help="When the fact became true (default now)."),
    confidence: str = typer.Option("explicit", help="explicit, inferred or reinforced."),
    pin: bool = typer.Option(False, "--pin", help="Pin it (always ranked first)."),
    files: list[str] = typer.Option([], "--file", "-f", help="A file or module it applies to."),
    project: str | None = ProjectOption,
    json_out: bool = JsonOption,
) -> None:
    """Record a decision, convention, preference, discovery, bugfix or handover."""
    check_date("--valid-from", valid_from)
    with open_store() as db:
        known = None if project else of_folder(db, os.getcwd())
        proj = current_project(db, project)
        draft = Draft(type=_check_type(type_), title=title, body=_body(body), scope=scope,
                      key=key, confidence=confidence, valid_from=valid_from, pinned=pin)
        written = write_path.record(db, caller(), proj, draft,
                                    [write_path.link_of(name, proj.root) for name in files])
        created = written.record
        say_note(written.note)
        if json_out:
            print_json(render.record_dict(created))
        else:
            typer.echo(f"recorded {created.id} ({created.type}) in {proj.name}")
        if not project and known is None:  # the first record of a folder made its project
            _say_new_project(proj)


def list_cmd(
    types: list[str] = typer.Option([], "--type", "-t", help="Only these types (repeatable)."),
    superseded: bool = typer.Option(False, "--superseded", help="Include superseded records."),
    pinned: bool = typer.Option(False, "--pinned", help="Only pinned records."),
    as_of: str | None = typer.Option(None, "--as-of", help="What was in force at this date."),
    limit: int = typer.Option(50, "--limit", "-n", min=1, help="At most this many."),
    project: str | None = ProjectOption,
    json_out: bool = JsonOption,
) -> None:
    """List the project's records, newest first (global preferences included)."""
    check_date("--as-of", as_of)
    for type_ in types:
        _check_type(type_)
    with open_store() as db:
        proj = current_project(db, project)
        found = rec.list_records(db, Selection(project_id=proj.id, include_global=True,
                                               types=tuple(types), pinned=pinned, as_of=as_of,
                                               state="all" if superseded else "current"),
                                 limit=limit)
        shorts = rec.short_ids(db, [r.id for r in found])
        if json_out:
            print_json([render.record_dict(r, shorts[r.id]) for r in found])
            return
        if not found:
            typer.echo(f"no records in {proj.name}" + (f" as of {as_of}" if as_of else ""))
        for r in found:
            typer.echo(render.line(r, shorts[r.id]))


def search(
    query: str = typer.Argument(..., help="What to look for, in your own words."),
    types: list[str] = typer.Option([], "--type", "-t", help="Only these types (repeatable)."),
    file: str | None = typer.Option(None, "--file", "-f", help="Only records linked to this file."),
    superseded: bool = typer.Option(False, "--superseded", help="Include superseded records."),
    as_of: str | None = typer.Option(None, "--as-of",
                                     help="Search what was in force at this date."),
    all_projects: bool = typer.Option(False, "--all-projects", help="Search every project."),
    limit: int = typer.Option(10, "--limit", "-n", min=1, max=100, help="At most this many."),
    keyword: bool = typer.Option(False, "--keyword",
                                 help="Keywords only, without vector similarity."),
    project: str | None = ProjectOption,
    json_out: bool = JsonOption,
) -> None:
    """Search records: keywords (FTS5 BM25, reranked by type, recency and confidence; pinned
    first) fused with vector similarity once consolidation has embedded the store, as
    ctx_search does."""
    if not query.strip():
        fail("the query is empty: pass what to look for ('agentctx list' lists every record)")
    check_date("--as-of", as_of)
    for type_ in types:
        _check_type(type_)
    with open_store() as db:
        project_id = None if all_projects else current_project(db, project).id
        request = Query(query, Selection(project_id=project_id, include_global=True,
                                         types=tuple(types), file=file, as_of=as_of,
                                         state="all" if superseded else "current"),
                        limit=limit, backend=config.Config.load().get_str("search"))
        found = find.search(db, request,
                                  None if keyword else find.stored_vectors(db))
        hits = found.hits
        shorts = rec.short_ids(db, [h.record.id for h in hits])
        if json_out:
            print_json([{**render.record_dict(h.record, shorts[h.record.id]),
                         "rank": h.rank, "relevance": h.relevance, "matched": list(h.matched),
                         "mode": found.mode} for h in hits])
            return
        if not hits:
            typer.echo("no matches")
        for hit in hits:
            typer.echo(render.line(hit.record, shorts[hit.record.id],
                                   f"  (relevance {hit.relevance:.2f})"))


def show(record_id: str = typer.Argument(..., help="Record id or unambiguous prefix."),
         json_out: bool = JsonOption) -> None:
    """Show one record in full: body, validity, provenance, chain links, entities, edits."""
    with open_store() as db:
        item = details.detail(db, record_id)
    if json_out:
        print_json(render.detail_dict(item))
    else:
        typer.echo(render.detail(item))


def edit(
    record_id: str = typer.Argument(..., help="Record id or unambiguous prefix."),
    title: str | None = typer.Option(None, "--title", help="New title (skips the editor)."),
    body: str | None = typer.Option(None, "--body",
                                    help="New body, '-' reads stdin (skips the editor)."),
) -> None:
    """Correct a record in place (id kept, old values audited). Use supersede for new facts."""
    with open_store() as db:
        record = rec.get(db, record_id)
        if title is None and body is None:
            title, body = edit_in_editor(record.title, record.body, record.id)
            if title == record.title and body == record.body:
                typer.echo("no change")
                return
        changed = write_path.edit(db, caller(), record.id, title=title,
                                  body=_body(body) if body else body)
    say_note(changed.note)
    typer.echo(f"updated {changed.record.id}")


def edit_in_editor(title: str, body: str, record_id: str) -> tuple[str, str]:
    """Edit a record's title and body in ``$EDITOR``; one clear line when that fails."""
    try:
        return run_editor(title, body, record_id)
    except EditorError as exc:
        if "no $EDITOR" in str(exc):
            fail("no $EDITOR set; pass --title and/or --body instead")
        fail(str(exc))


def supersede(
    record_id: str = typer.Argument(..., help="The record that no longer holds."),
    why: str = typer.Option(..., "--why", "-w", help="Rationale: why it no longer holds."),
    body: str | None = typer.Option(None, "--body", "-b",
                                    help="Body of the new record ('-': stdin)."),
    title: str | None = typer.Option(None, "--title",
                                     help="Title of the new record (default: same)."),
    with_id: str | None = typer.Option(None, "--with",
                                help="Supersede with this existing record instead."),
    valid_from: str | None = typer.Option(None, "--valid-from",
                                          help="When the new fact became true."),
    json_out: bool = JsonOption,
) -> None:
    """Replace a record with a successor, keeping the old one in history."""
    check_date("--valid-from", valid_from)
    if (body is None) == (with_id is None):
        fail("give either --body for a new record or --with for an existing one")
    with open_store() as db:
        successor: Draft | str
        if with_id:
            successor = with_id
        else:
            successor = Draft(type="", title=title or "", body=_body(body),
                              confidence="explicit", valid_from=valid_from)
        done = write_path.supersede(db, caller(), record_id, successor, why)
    say_note(done.note)
    if json_out:
        print_json(render.record_dict(done.new))
    else:
        typer.echo(f"{done.old.id} superseded by {done.new.id}")


def pin(record_id: str = typer.Argument(..., help="Record id or prefix.")) -> None:
    """Pin a record: always ranked first, never pruned."""
    with open_store() as db:
        changed = write_path.pin(db, caller(), record_id, True)
    say_note(changed.note)
    typer.echo(f"pinned {changed.record.id}")


def unpin(record_id: str = typer.Argument(..., help="Record id or prefix.")) -> None:
    """Unpin a record."""
    with open_store() as db:
        changed = write_path.pin(db, caller(), record_id, False)
    say_note(changed.note)
    typer.echo(f"unpinned {changed.record.id}")


def history(record_id: str = typer.Argument(..., help="Any record of the chain."),
            json_out: bool = JsonOption) -> None:
    """The whole supersession chain through a record, oldest first, with rationales."""
    with open_store() as db:
        chain = chains.chain_of(db, record_id)
        shorts = rec.short_ids(db, [v.record.id for v in chain.versions])
    if json_out:
        print_json([{**render.record_dict(v.record, shorts[v.record.id]),
                     "rationale": v.rationale} for v in chain.versions])
        return
    for version in chain.versions:
        typer.echo(render.line(version.record, shorts[version.record.id]))
        if version.record.superseded_by:
            typer.echo(f"{'':12}   ↓ {version.rationale or 'superseded'}")


def forget(record_id: str = typer.Argument(..., help="Record id or prefix."),
           yes: bool = YesOption) -> None:
    """Delete a record everywhere (for a leaked secret or a mistake). Cannot be undone. When it
    had replaced an older version, that version becomes current again: the question says so."""
    with open_store() as db:
        typer.echo(forget_asking(db, record_id, yes))


def forget_asking(db: Store, ref: str, yes: bool) -> str:
    """Forget the record ``ref`` names through the write path once the user says yes (or
    ``yes``): the question names what becomes current again; returns what was done, in lines."""
    record, again = write_path.forgetting(db, ref)
    question = f"Forget {record.id} ({record.type}: {record.title!r}) everywhere?"
    if again:
        question += " " + current_again_line(again)
    if not yes and not typer.confirm(question + " This cannot be undone", default=False):
        fail("nothing forgotten")
    gone = write_path.forget(db, caller(), record.id)
    say_note(gone.note)
    return f"forgot {gone.record.id}" + (
        f"\n{current_again_line(gone.current_again)}" if gone.current_again else "")


def current_again_line(records: tuple[Record, ...]) -> str:
    """What becomes current again when a successor goes: each record's id and title."""
    named = "; ".join(f"{r.id} ({r.type}: {r.title!r})" for r in records)
    return f"Current again: {named}."


def _say_new_project(project: Project) -> None:
    """One note when a record made its folder's project: its name and root, and whether the
    folder is in a git repository (a project outside one is named after the folder)."""
    where = "" if find_repo(project.root) else " (no git repository here: named after the folder)"
    typer.echo(f"note: new project {project.name} for {project.root}{where}; "
               "'agentctx projects merge' moves its records into another", err=True)


def register(app: typer.Typer) -> None:
    """Add the record commands to the CLI."""
    app.command()(record)
    app.command("list")(list_cmd)
    app.command()(search)
    app.command()(show)
    app.command()(edit)
    app.command()(supersede)
    app.command()(pin)
    app.command()(unpin)
    app.command()(history)
    app.command()(forget)
