"""``agentctx profile show | edit <id> | clear <id>``: the developer profile (global preferences).

Reinforced and explicit preferences go into every session's digest (a ~200-token slice); inferred
ones surface only when a prompt is about them. ``clear`` retires a preference — its validity ends
now, so it is no longer injected or found, while history, as-of queries and the audit trail keep
it (with the reason). ``agentctx forget`` is the hard delete, for a leaked secret or a mistake.
"""

from __future__ import annotations

from typing import Any

import typer

from agentctx.cli.common import JsonOption, YesOption, fail, is_tty, open_store, print_json
from agentctx.cli.records import edit_in_editor
from agentctx.core import config
from agentctx.store import records as rec
from agentctx.store import upkeep
from agentctx.store.db import Store
from agentctx.store.models import CONFIDENCES, GLOBAL_PROJECT, Record

profile_app = typer.Typer(help="The developer profile: preferences that follow you across "
                               "projects.", no_args_is_help=True)

IN_DIGEST = ("explicit", "reinforced")


def _preference(db: Store, ref: str) -> Record:
    record = rec.get(db, ref)
    if record.project_id != GLOBAL_PROJECT or record.type != "preference":
        where = "global" if record.project_id == GLOBAL_PROJECT else "project"
        fail(f"{record.id} is a {where} {record.type}, not a developer-profile preference; "
             "use 'agentctx edit' or 'agentctx supersede' for it")
    return record


def _entry(record: Record, short: str, needed: int) -> dict[str, Any]:
    return {"id": record.id, "short_id": short, "title": record.title, "body": record.body,
            "confidence": record.confidence, "reinforce_count": record.reinforce_count,
            "reinforce_needed": needed, "in_every_digest": record.confidence in IN_DIGEST,
            "current": record.current, "superseded_at": record.superseded_at,
            "superseded_by": record.superseded_by, "valid_from": record.valid_from,
            "key": record.key}


@profile_app.command("show")
def show(all_: bool = typer.Option(False, "--all", help="Also list cleared and superseded ones."),
         json_out: bool = JsonOption) -> None:
    """List the developer's global preferences: those in every digest, then the inferred ones."""
    needed = config.Config.load().get_int("reinforce_sessions")
    with open_store() as db:
        found = rec.list_records(db, project_id=GLOBAL_PROJECT, types=("preference",),
                                 include_superseded=all_)
        shorts = rec.short_ids(db, [*(r.id for r in found),
                                    *(r.superseded_by for r in found if r.superseded_by)])
    entries = [_entry(r, shorts[r.id], needed) for r in found]
    if json_out:
        print_json(entries)
        return
    if not entries:
        typer.echo("The developer profile is empty: preferences are learned from sessions, or "
                   "recorded with 'agentctx record preference TITLE --scope global'.")
        return
    groups = (
        ("In every session's digest (explicit or reinforced)",
         [e for e in entries if e["current"] and e["in_every_digest"]]),
        (f"Only when relevant (inferred; reinforced after {needed} sessions)",
         [e for e in entries if e["current"] and not e["in_every_digest"]]),
        ("Cleared or superseded", [e for e in entries if not e["current"]]),
    )
    first = True
    for title, items in groups:
        if not items:
            continue
        if not first:
            typer.echo("")
        first = False
        typer.echo(f"{title}:")
        for e in items:
            mark = e["confidence"]
            if e["confidence"] == "inferred":
                mark += f" {e['reinforce_count']}/{needed}"
            if not e["current"]:
                mark = (f"superseded by {shorts[e['superseded_by']]}" if e["superseded_by"]
                        else f"cleared {str(e['superseded_at'])[:10]}")
            typer.echo(f"  {e['short_id']:<12} [{mark}] {e['title']}")


@profile_app.command("edit")
def edit(
    record_id: str = typer.Argument(..., help="Preference id or unambiguous prefix."),
    title: str | None = typer.Option(None, "--title", help="New title (skips the editor)."),
    body: str | None = typer.Option(None, "--body", help="New body (skips the editor)."),
    confidence: str | None = typer.Option(
        None, "--confidence",
        help="explicit or reinforced: in every digest; inferred: only when relevant."),
) -> None:
    """Correct a preference in place (id kept, old values audited), or change its confidence."""
    if confidence is not None and confidence not in CONFIDENCES:
        fail(f"unknown confidence {confidence!r}; use one of {', '.join(CONFIDENCES)}")
    with open_store() as db:
        record = _preference(db, record_id)
        if not record.current:
            fail(f"{record.id} is no longer current; edit its successor instead")
        if title is None and body is None and confidence is None:
            title, body = edit_in_editor(record.title, record.body, record.id)
            if title == record.title and body == record.body:
                typer.echo("no change")
                return
        updated = rec.update(db, record.id, title=title, body=body, confidence=confidence,
                             actor="cli")
    if updated == record:
        typer.echo("no change")
        return
    where = ("in every digest" if updated.confidence in IN_DIGEST else
             "only when relevant")
    typer.echo(f"updated {updated.id} ({updated.confidence}: {where})")


@profile_app.command("clear")
def clear(
    record_id: str = typer.Argument(..., help="Preference id or unambiguous prefix."),
    why: str = typer.Option("cleared from the developer profile", "--why", "-w",
                            help="The reason kept in the audit trail."),
    yes: bool = YesOption,
) -> None:
    """Retire a preference: no longer injected or found, still in history (forget deletes)."""
    with open_store() as db:
        record = _preference(db, record_id)
        if not record.current:
            fail(f"{record.id} is already retired or superseded")
        short = rec.short_ids(db, [record.id])[record.id]
        if not yes:
            if not is_tty():
                fail("clearing needs confirmation: pass --yes")
            typer.confirm(f"Clear {short} {record.title!r} from the developer profile?",
                          abort=True)
        upkeep.retire(db, record.id, why, actor="cli")
    typer.echo(f"cleared {record.id}: it is no longer injected; 'agentctx history {short}' "
               "still shows it")


def register(app: typer.Typer) -> None:
    """Add ``profile show | edit | clear`` to the CLI."""
    app.add_typer(profile_app, name="profile")
