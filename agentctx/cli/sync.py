"""``agentctx sync``: where CLAUDE.md has drifted from the store, and the diff that would fix it."""

from __future__ import annotations

import os
import sys

import typer

from agentctx import drift
from agentctx.cli.common import (
    JsonOption,
    YesOption,
    current_project,
    fail,
    is_tty,
    open_store,
    print_json,
)
from agentctx.cli.render import plural
from agentctx.drift import loaded
from agentctx.store import records as rec
from agentctx.store.db import Store
from agentctx.store.errors import InvalidRecord
from agentctx.store.models import Project


def sync(
    apply_changes: bool = typer.Option(False, "--apply",
                                       help="Write the proposed changes, after asking."),
    yes: bool = YesOption,
    check: bool = typer.Option(False, "--check",
                               help="Exit 1 when there are drift candidates (CI, pre-commit)."),
    json_out: bool = JsonOption,
    dismiss: list[str] = typer.Option([], "--dismiss", metavar="ID",
                                      help="Mark a record as intentionally absent from "
                                           "CLAUDE.md, so it is no longer flagged (repeatable)."),
    undismiss: list[str] = typer.Option([], "--undismiss", metavar="ID",
                                        help="Flag a dismissed record again (repeatable)."),
    keyword: bool = typer.Option(False, "--keyword",
                                 help="Keyword coverage only, without the embedding model."),
) -> None:
    """Compare CLAUDE.md and the other memory files with the current decisions and conventions.

    Prints one line per candidate — missing (not reflected), contradicted (an older version is
    still there), stale (an older version beside the current one) — and the unified diff that
    would fix them: additions in a marked section of ./CLAUDE.md, superseded text struck through
    where it is. Nothing is written without --apply and a confirmation (--yes when there is no
    terminal to ask on). CLAUDE.local.md is never edited.
    """
    if (dismiss or undismiss) and (apply_changes or check):
        fail("--dismiss and --undismiss run on their own, without --apply or --check")
    if apply_changes and check:
        fail("--check only reports; run --apply separately")
    with open_store() as db:
        project = current_project(db, None)
        if dismiss or undismiss:
            _dismissals(db, project, dismiss, undismiss, json_out)
            return
        encoder = None if keyword else drift.default_encoder(db)
        found = drift.proposal(db, project, os.getcwd(), encoder=encoder)
        _measure_stated(db, project, encoder)
        shorts = rec.short_ids(db, drift.record_ids(found))
        if json_out:
            document = drift.as_json(found, shorts)
            if apply_changes:
                if not yes:
                    fail("--apply with --json needs --yes (there is no prompt to answer)")
                applied = _apply(db, found, encoder)
                document["applied"] = {"written": list(applied.written),
                                       "created": list(applied.created),
                                       "backup": str(applied.backup) if applied.backup else None,
                                       "remaining": len(applied.scan.candidates)}
            print_json(document)
        else:
            _print(found, shorts)
            if apply_changes:
                _confirm_and_apply(db, found, encoder, yes)
    if check and found.candidates:
        raise typer.Exit(1)


def _dismissals(db: Store, project: Project, dismiss: list[str], undismiss: list[str],
                json_out: bool) -> None:
    done: list[dict[str, object]] = []
    for ref, undo in [(r, False) for r in dismiss] + [(r, True) for r in undismiss]:
        try:
            if undo:
                record, changed = drift.undismiss(db, project, ref)
            else:
                record, changed = drift.dismiss(db, project, ref, actor="cli")
        except InvalidRecord as exc:
            fail(str(exc))
        done.append({"id": record.id, "title": record.title,
                     "dismissed": not undo, "changed": changed})
    if json_out:
        print_json({"dismissals": done})
        return
    for item in done:
        state = "dismissed" if item["dismissed"] else "undismissed"
        already = "" if item["changed"] else " (already)"
        effect = ("no longer flagged as missing from CLAUDE.md" if item["dismissed"]
                  else "flagged again from the next scan")
        typer.echo(f"{state}{already} {item['id']}: {item['title']} — {effect}")


def _print(found: drift.Proposal, shorts: dict[str, str]) -> None:
    scan = found.scan
    files = ", ".join(f.name for f in scan.memory.files) or "no memory files"
    mode = "keywords and vectors" if scan.vectors else "keywords"
    if not found.candidates:
        verb = "reflects" if len(scan.memory.files) == 1 else "reflect"
        checked = plural(len(scan.checked), "current decision or convention",
                         "current decisions and conventions")
        typer.echo(f"In sync: {files} {verb} the {checked} checked ({mode}).")
    else:
        checked = plural(len(scan.checked), "decision or convention",
                         "decisions and conventions")
        typer.echo(f"{plural(len(found.candidates), 'drift candidate')} in {files} "
                   f"({checked} checked, by {mode}):")
        for line in drift.describe(found, shorts):
            typer.echo(f"  {line}")
    for missing in scan.memory.missing:
        typer.echo(f"note: {missing.importer}:{missing.line} imports @{missing.target}, which "
                   "does not exist")
    for problem in found.problems:
        typer.echo(f"note: {problem}")
    if found.diff:
        typer.echo("")
        colour = is_tty()
        for line in found.diff.splitlines():
            typer.echo(_coloured(line) if colour else line)


def _coloured(line: str) -> str:
    if line.startswith(("+++", "---")):
        return typer.style(line, bold=True)
    if line.startswith("+"):
        return typer.style(line, fg="green")
    if line.startswith("-"):
        return typer.style(line, fg="red")
    if line.startswith("@@"):
        return typer.style(line, fg="cyan")
    return line


def _confirm_and_apply(db: Store, found: drift.Proposal, encoder: drift.Embedder | None,
                       yes: bool) -> None:
    if not found.changes:
        typer.echo("Nothing to apply.")
        return
    names = ", ".join(c.name for c in found.changes)
    if not yes:
        if not sys.stdin.isatty():
            fail("no terminal to confirm on: review the diff above, then run "
                 "'agentctx sync --apply --yes' to write it")
        if not typer.confirm(f"\nApply these changes to {names}?", default=False):
            typer.echo("Nothing written.")
            return
    applied = _apply(db, found, encoder)
    created = f"; created {', '.join(applied.created)}" if applied.created else ""
    typer.echo(f"Wrote {', '.join(applied.written) or 'nothing'}{created} "
               f"(backup: {applied.backup}).")
    left = applied.scan.candidates
    if left:
        remain = "remains" if len(left) == 1 else "remain"
        typer.echo(f"{plural(len(left), 'candidate')} {remain} (text agentctx does not edit: "
                   "fix it by hand, or --dismiss the record).")


def _apply(db: Store, found: drift.Proposal, encoder: drift.Embedder | None) -> drift.Applied:
    try:
        applied = drift.apply(db, found, encoder=encoder)
    except drift.Changed as exc:
        fail(str(exc))
    except OSError as exc:
        fail(f"could not write the changes ({exc}); nothing is half-written")
    _measure_stated(db, found.scan.project, encoder)
    return applied


def _measure_stated(db: Store, project: Project, encoder: drift.Embedder | None) -> None:
    """What this folder's memory files now state, for the hooks to leave out (as
    consolidation measures it)."""
    loaded.refresh(db, project, drift.project_folder(db, project, os.getcwd()), encoder=encoder)


def register(app: typer.Typer) -> None:
    """Add ``agentctx sync`` to the CLI."""
    app.command()(sync)
