"""``agentctx extract``: LLM extraction of a session transcript, or a backfill of old ones.

The extraction modules load when the command runs: their pydantic schemas would cost every other
command about 75 ms of start-up.
"""

from __future__ import annotations

import os
import threading
from pathlib import Path

import typer

from agentctx.cli.common import (
    JsonOption,
    ProjectOption,
    YesOption,
    current_project,
    fail,
    is_tty,
    open_store,
    print_json,
)
from agentctx.core import config
from agentctx.core.ids import parse_time

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

    from agentctx.extract.apply import Action
    from agentctx.extract.run import Outcome

WATCHDOG_GRACE_S = 15


def extract_cmd(
    session_id: str | None = typer.Option(
        None, "--session-id", help="The Claude Code session to extract (default: the one the "
                                    "transcript names)."),
    transcript: Path | None = typer.Option(
        None, "--transcript", help="The session's transcript (default: the one recorded for "
                                    "the session)."),
    min_new_tokens: int | None = typer.Option(
        None, "--min-new-tokens", min=0,
        help="Do nothing unless at least this many tokens are new (the Stop hook's setting)."),
    dry_run: bool = typer.Option(False, "--dry-run",
                                 help="Print what would be recorded; write nothing."),
    backfill: bool = typer.Option(False, "--backfill",
                                  help="Extract this project's existing Claude Code transcripts, "
                                       "oldest first."),
    since: str | None = typer.Option(None, "--since",
                                     help="With --backfill: only transcripts active since this "
                                          "date (e.g. 2026-01-31)."),
    yes: bool = YesOption,
    project: str | None = ProjectOption,
    json_out: bool = JsonOption,
) -> None:
    """Extract decisions, conventions, preferences, gotchas and the handover with the LLM.

    Sends what the session added since the last extraction (by size tier), prices every call
    into the cost ledger, and writes the records. Without ANTHROPIC_API_KEY, with 'llm' off or
    past the session's cost cap, it makes no call and says so in <home>/logs/extract.log.
    """
    if backfill:
        if session_id or transcript or min_new_tokens is not None or dry_run:
            fail("--backfill takes only --since, --project, --yes and --json")
        _backfill(since, yes, project, json_out)
        return
    if since:
        fail("--since goes with --backfill")
    if not session_id and transcript is None:
        fail("give --session-id and/or --transcript (or --backfill)")
    if transcript is not None and not transcript.is_file():
        fail(f"no transcript at {transcript}")
    from agentctx.extract import run as extraction  # late: 75 ms at every CLI start (pydantic)

    if not dry_run:
        _watchdog(session_id, extraction.log)
    outcome = extraction.run(extraction.Request(
        session_id=session_id, transcript=str(transcript.resolve()) if transcript else None,
        min_new_tokens=min_new_tokens, dry_run=dry_run))
    _report(outcome, json_out, dry_run, extraction.describe)
    if outcome.status == "failed":
        fail(f"extraction failed: {outcome.reason}")


def _watchdog(session_id: str | None, log: Callable[[str, str | None], None]) -> None:
    """End the process if it outlives its time limit (a stuck connection, a hung thread)."""
    try:
        limit = config.Config.load().get_int("llm_time_limit_s")
    except config.ConfigError:
        limit = 120

    def expire() -> None:
        log(f"time limit of {limit} s exceeded: stopping (nothing half-written is kept)",
            session_id)
        os._exit(0)

    timer = threading.Timer(limit + WATCHDOG_GRACE_S, expire)
    timer.daemon = True
    timer.start()


def _report(outcome: Outcome, json_out: bool, dry_run: bool,
            describe: Callable[[Sequence[Action]], list[str]]) -> None:
    if json_out:
        print_json(_as_dict(outcome))
        return
    if not (dry_run or is_tty()):
        return  # a detached child: the log line in extract.log is the report
    tier = outcome.tier
    if tier is not None and tier.content_tokens:
        typer.echo(f"session {outcome.session_id}: {tier.content_tokens:,} new tokens "
                   f"({tier.tier_name}, about ${outcome.estimated_usd:.4f})")
    if outcome.status == "planned":
        lines = describe(outcome.actions)
        typer.echo("would record:" if any(a.writes for a in outcome.actions)
                   else "would record nothing")
        for line in lines:
            typer.echo(line)
        typer.echo(f"{outcome.calls} call(s), ${outcome.usd:.4f} (not added to the ledger); "
                   "nothing written")
        return
    if outcome.status == "failed":
        return
    typer.echo(f"{outcome.status}: {outcome.reason}"
               + (f" · {outcome.calls} call(s), ${outcome.usd:.4f}" if outcome.calls else ""))
    if outcome.status == "extracted":
        for line in describe(outcome.actions):
            typer.echo(line)


def _as_dict(outcome: Outcome) -> dict[str, object]:
    tier = outcome.tier
    return {
        "status": outcome.status, "reason": outcome.reason, "session_id": outcome.session_id,
        "project_id": outcome.project_id, "new_tokens": outcome.new_tokens,
        "tier": tier.tier if tier else None, "sent_tokens": tier.sent_tokens if tier else 0,
        "calls": outcome.calls, "usd": round(outcome.usd, 6),
        "estimated_usd": round(outcome.estimated_usd, 6),
        "actions": [{"action": a.kind, "type": a.type, "title": a.title,
                     "record_id": a.record_id, "note": a.note or None,
                     "scope": a.draft.scope if a.draft else None} for a in outcome.actions],
        "written": [r.id for r in outcome.applied.written] if outcome.applied else [],
    }


def _backfill(since: str | None, yes: bool, project_ref: str | None, json_out: bool) -> None:
    from agentctx.extract import backfill  # late: 75 ms at every CLI start (pydantic)
    from agentctx.ml.llm import api_key_from_env  # late: 40 ms at every CLI start (pydantic)

    if since:
        try:
            parse_time(since)
        except ValueError as exc:
            fail(str(exc))
    cfg = config.Config.load()
    model = cfg.get_str("llm_model")
    with open_store() as db:
        project = current_project(db, project_ref)
        candidates = backfill.find(db, project, model=model, since=since)
    folder = backfill.projects_dir()
    if not candidates:
        if json_out:
            print_json({"project": project.id, "transcripts": [], "extracted": []})
        else:
            typer.echo(f"nothing to backfill: no transcript of {project.name} with unextracted "
                       f"content under {folder}")
        return
    total_tokens = sum(c.new_tokens for c in candidates)
    total_usd = sum(c.estimated_usd for c in candidates)
    calls = sum(c.tier.calls for c in candidates)
    if not json_out:
        typer.echo(f"{len(candidates)} transcript(s) of {project.name} under {folder}, oldest "
                   "first:")
        for candidate in candidates:
            typer.echo(f"  {(candidate.started or '?')[:10]}  {candidate.session_id[:8]}  "
                       f"{candidate.new_tokens:>9,} tokens  {candidate.tier.tier_name:<24} "
                       f"~${candidate.estimated_usd:.4f}")
        typer.echo(f"total: {total_tokens:,} tokens in {calls} call(s) to {model}, estimated "
                   f"${total_usd:.2f}")
    if not cfg.get_bool("llm"):
        fail("llm is off: turn it on with 'agentctx config set llm on' to backfill")
    if api_key_from_env() is None:
        fail("ANTHROPIC_API_KEY is not set: extraction needs an Anthropic API key")
    if not yes:
        try:
            confirmed = typer.confirm(f"Extract {len(candidates)} transcript(s) for about "
                                      f"${total_usd:.2f}?", default=False)
        except typer.Abort:
            fail("not confirmed, nothing extracted (add --yes to skip the question)")
        if not confirmed:
            typer.echo("nothing extracted")
            return

    def progress(number: int, candidate: backfill.Candidate, outcome: Outcome) -> None:
        if json_out:
            return
        typer.echo(f"[{number}/{len(candidates)}] {(candidate.started or '?')[:10]} "
                   f"{candidate.session_id[:8]}: {outcome.status}: {outcome.reason}"
                   + (f" (${outcome.usd:.4f})" if outcome.calls else ""))

    outcomes = backfill.extract_all(candidates, project.id, progress)
    spent = sum(o.usd for o in outcomes)
    failed = [o for o in outcomes if o.status == "failed"]
    if json_out:
        print_json({"project": project.id,
                    "transcripts": [str(c.path) for c in candidates],
                    "estimated_usd": round(total_usd, 6), "usd": round(spent, 6),
                    "extracted": [_as_dict(o) for o in outcomes]})
    else:
        typer.echo(f"backfilled {len(outcomes) - len(failed)} of {len(outcomes)} transcript(s) "
                   f"for ${spent:.4f}")
    if failed:
        fail(f"{len(failed)} transcript(s) failed (see {config.home() / 'logs' / 'extract.log'})")


def register(app: typer.Typer) -> None:
    """Add ``agentctx extract``."""
    app.command("extract")(extract_cmd)
