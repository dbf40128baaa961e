"""``agentctx consolidate``: embeddings, near-duplicates, scores, archive, drift and digests."""

from __future__ import annotations

import logging
import sys
from collections.abc import Iterator
from contextlib import contextmanager

import typer

from agentctx.cli.common import (
    JsonOption,
    ProjectOption,
    current_project,
    open_store,
    print_json,
)
from agentctx.cli.render import plural
from agentctx.consolidate.run import Report, consolidate


def consolidate_cmd(
    project: str | None = ProjectOption,
    no_embeddings: bool = typer.Option(False, "--no-embeddings",
                                       help="Skip embeddings and every vector step (FTS only)."),
    time_limit: int | None = typer.Option(None, "--time-limit", min=1, max=3600,
                                          help="Seconds before the run stops (default: the "
                                               "consolidate_time_limit_s knob)."),
    batch_size: int = typer.Option(1024, "--batch-size", min=1, max=100_000,
                                   help="Records per committed batch."),
    quiet: bool = typer.Option(False, "--quiet", "-q", help="No progress lines."),
    json_out: bool = JsonOption,
) -> None:
    """Embed new records, flag near-duplicates, rescore, archive, scan CLAUDE.md for drift and
    pre-compute digests.

    Without --project every project is consolidated. Time-boxed; only one run at a time; a run
    that is stopped or killed loses nothing: the next one picks up the rest.
    """
    progress = None if quiet or json_out else (lambda line: typer.echo(f"  {line}", err=True))
    with _warnings_to_stderr(), open_store() as db:
        scope = None
        if project:
            scope = [current_project(db, project).id]
        report = consolidate(db, project_ids=scope, embeddings=not no_embeddings,
                             time_limit_s=time_limit, batch_size=batch_size, progress=progress)
    if json_out:
        print_json(report.as_dict())
        return
    for line in summary(report):
        typer.echo(line)


def summary(report: Report) -> list[str]:
    """The human summary of a run."""
    if report.skipped:
        return [f"skipped: {report.skipped}"]
    total = report.seconds.get("total", 0.0)
    lines = [f"consolidated in {total:.2f} s"]
    if report.model:
        lines.append(f"  embeddings  {plural(report.embedded, 'record')} embedded with "
                     f"{report.model} "
                     f"({report.pending_left} still pending; vector search: {report.backend})")
        lines.append(f"  duplicates  {plural(report.near_duplicates, 'candidate pair')} "
                     f"({report.new_candidates} new, {report.merged} merged, "
                     f"{report.judged_distinct} judged distinct)")
    else:
        lines.append(f"  embeddings  {report.embeddings}; full-text search only")
    lines.append(f"  scores      {plural(report.scored, 'record')} ({report.scores_changed} "
                 "changed)")
    lines.append(f"  archive     {plural(report.archived, 'record')} moved")
    lines.append(f"  drift       {plural(report.drift_flagged, 'record')} not reflected in "
                 f"CLAUDE.md ({plural(report.drift_scanned, 'project')} scanned; agentctx sync "
                 "shows them)")
    lines.append(f"  digests     {report.digests} rebuilt")
    if report.team_files:
        lines.append(f"  team files  {report.team_files} rewritten")
    if report.stopped:
        lines.append(f"stopped early: {report.stopped}")
    return lines


@contextmanager
def _warnings_to_stderr() -> Iterator[None]:
    """agentctx's warnings (a model that cannot load, say) go to stderr while the command runs."""
    logger = logging.getLogger("agentctx")
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("%(message)s"))
    handler.setLevel(logging.WARNING)
    logger.addHandler(handler)
    try:
        yield
    finally:
        logger.removeHandler(handler)


def register(app: typer.Typer) -> None:
    """Add ``consolidate`` to the CLI."""
    app.command("consolidate")(consolidate_cmd)
