"""Hook-related commands: ``pause`` and ``resume`` a project, ``preview`` what the per-prompt hook
would inject, and the hidden ``finish-session``.

``finish-session`` is the detached child the SessionEnd hook spawns: the final extraction of the
session's remaining content, then consolidation, each as its own ``agentctx`` process with a time
limit. A failure (or a command this installation lacks) is logged to ``<home>/logs/hooks.log`` and
the next step still runs. The child's own output goes to ``<home>/logs/finish-session.log``.
"""

from __future__ import annotations

import subprocess
import time
from typing import TYPE_CHECKING, Any

import typer

from agentctx import config
from agentctx.budget import estimate_tokens
from agentctx.cli.common import (
    JsonOption,
    ProjectOption,
    current_project,
    fail,
    open_store,
    print_json,
)
from agentctx.store import projects
from agentctx.store.db import Store

if TYPE_CHECKING:  # pragma: no cover - typing only
    from agentctx.hooks.prompt import Verdict

# Seconds allowed beyond each step's own configured time limit (start-up, writing results).
STEP_GRACE_SECONDS = 30


def pause(project: str | None = ProjectOption, json_out: bool = JsonOption) -> None:
    """Pause agentctx for a project: no injection and no capture until 'agentctx resume'."""
    _set_paused(project, True, json_out)


def resume(project: str | None = ProjectOption, json_out: bool = JsonOption) -> None:
    """Resume a paused project: hooks inject and capture again."""
    _set_paused(project, False, json_out)


def _set_paused(ref: str | None, paused: bool, json_out: bool) -> None:
    with open_store() as db:
        target = current_project(db, ref)
        updated = projects.set_paused(db, target.id, paused)
    if json_out:
        print_json({"project": updated.id, "name": updated.name, "paused": updated.paused})
    else:
        state = "paused: no injection or capture" if paused else "resumed"
        typer.echo(f"{updated.name} ({updated.id[:12]}) {state}")


def preview(
    prompt: str = typer.Argument(..., help="The prompt, as you would type it in Claude Code."),
    limit: int = typer.Option(5, "--limit", "-n", min=1, max=50,
                              help="Candidates to show, injected or not."),
    session: str | None = typer.Option(None, "--session",
                                       help="Leave out what this Claude Code session already "
                                            "holds (default: a fresh session)."),
    text: bool = typer.Option(False, "--text", help="Also print the exact text injected."),
    project: str | None = ProjectOption,
    json_out: bool = JsonOption,
) -> None:
    """Show what the per-prompt hook would inject for a prompt, and why each candidate was or
    was not injected (relevance, matched words, cosine). Injects and records nothing."""
    from agentctx.hooks import prompt as hook
    from agentctx.store import records as rec
    from agentctx.store import sessions

    if not prompt.strip():
        fail("the prompt is empty: pass the text you would type in Claude Code")
    cfg = config.Config.load()
    with open_store() as db:
        target = current_project(db, project)
        verdicts: list[Verdict] = []
        injected = ""
        if hook.opted_out(prompt):
            why = "the prompt starts with #noctx"
        elif target.paused:
            why = f"{target.name} is paused ('agentctx resume')"
        else:
            if session and sessions.get(db, session) is None:
                fail(f"no session {session!r} in the store (see 'agentctx status')")
            seen = sessions.seen(db, session) if session else frozenset()
            verdicts, injected = hook.preview(db, target, prompt, cfg, seen=seen,
                                              candidates=limit)
            why = ""
        semantic = _semantic_state(cfg, db)
        shorts = rec.short_ids(db, [v.hit.record.id for v in verdicts])
    settings = {"threshold": cfg.get_float("prompt_min_relevance"),
                "max_records": min(cfg.get_int("prompt_records"), config.PROMPT_MAX_RECORDS),
                "semantic_check": semantic}
    if json_out:
        print_json({"project": target.id, "prompt": prompt, "skipped": why or None, **settings,
                    "candidates": [{"id": v.hit.record.id, "short_id": shorts[v.hit.record.id],
                                    "type": v.hit.record.type, "title": v.hit.record.title,
                                    "relevance": v.hit.relevance, "cosine": v.cosine,
                                    "matched": list(v.hit.matched), "replaces": v.hit.via,
                                    "outcome": v.outcome, "why": hook.OUTCOMES[v.outcome]}
                                   for v in verdicts],
                    "injected_text": injected,
                    "tokens": estimate_tokens(injected) if injected else 0})
    elif why:
        typer.echo(f"nothing would be injected: {why}")
    else:
        typer.echo(_preview_text(target.name, settings, verdicts, shorts, injected, text))


def _preview_text(project_name: str, settings: dict[str, Any], verdicts: list[Verdict],
                  shorts: dict[str, str], injected: str, show_text: bool) -> str:
    """The preview for people: the knobs, one line pair per candidate, the total and, with
    ``show_text``, the exact text injected."""
    from agentctx.hooks.prompt import INJECT, OUTCOMES

    lines = [f"{project_name}: threshold {settings['threshold']:.2f}, at most "
             f"{settings['max_records']} records, semantic check {settings['semantic_check']}"]
    if not verdicts:
        lines.append("no record matches any word of the prompt")
    for v in verdicts:
        cosine = f"cos {v.cosine:.2f}" if v.cosine is not None else "cos  -  "
        lines.append(f"  {v.outcome:<7} {v.hit.relevance:.2f}  {cosine}  "
                     f"{shorts[v.hit.record.id]:<12} {v.hit.record.type:<10} {v.hit.record.title}")
        detail = OUTCOMES[v.outcome]
        if v.hit.matched:
            detail += "; matched: " + ", ".join(v.hit.matched)
        lines.append(f"{'':10}{detail}")
    count = sum(1 for v in verdicts if v.outcome == INJECT)
    lines.append(f"would inject {count} record{'s' if count != 1 else ''}"
                 + (f", {estimate_tokens(injected)} tokens" if count else ""))
    if show_text and injected:
        lines += ["", injected]
    return "\n".join(lines)


def _semantic_state(cfg: config.Config, db: Store) -> str:
    """The per-prompt semantic check as the hook would find it: off, not ready or on."""
    from agentctx.store import querymodel

    if not cfg.get_bool("prompt_semantic_check"):
        return "off"
    side = querymodel.open_registered(db)
    if side is None:
        return "not ready (run 'agentctx consolidate')"
    side.close()
    return "on"


def finish_session(
    session_id: str = typer.Option(..., "--session-id", help="Claude Code session id."),
    project: str = typer.Option(..., "--project", help="Project id of the session."),
    transcript: str | None = typer.Option(None, "--transcript", help="Session transcript path."),
) -> None:
    """Final extraction of a session, then consolidation (spawned by the SessionEnd hook)."""
    from agentctx import background

    cfg = _config()
    with background.exclusive(f"finish-{session_id}") as acquired:
        if not acquired:
            _say(session_id, "already running, nothing to do")
            return
        if transcript and cfg.get_bool("llm"):
            _step(["extract", "--session-id", session_id, "--transcript", transcript],
                  cfg.get_int("llm_time_limit_s") + STEP_GRACE_SECONDS, session_id)
        _step(["consolidate", "--project", project],
              cfg.get_int("consolidate_time_limit_s") + STEP_GRACE_SECONDS, session_id)


def _config() -> config.Config:
    try:
        return config.Config.load()
    except config.ConfigError as exc:
        _problem("", f"config problem, using defaults: {exc}")
        return config.Config({}, environ={})


def _step(args: list[str], timeout: int, session_id: str) -> bool:
    """Run ``agentctx <args>`` to completion (or its time limit); returns whether it succeeded.

    The step's output is copied to this process's output (the finish-session log).
    """
    from agentctx import background

    name = f"agentctx {args[0]}"
    started = time.monotonic()
    _say(session_id, f"{name} started")
    try:
        result = subprocess.run(background.python_command(args),
                                env=background.child_environment(),
                                stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                stderr=subprocess.STDOUT, text=True, errors="replace",
                                timeout=timeout, check=False)
    except subprocess.TimeoutExpired:
        _problem(session_id, f"{name} did not finish within {timeout} s and was stopped")
        return False
    except OSError as exc:
        _problem(session_id, f"cannot run {name}: {exc}")
        return False
    if result.stdout:
        from agentctx.redact import redact

        typer.echo(redact(result.stdout.rstrip("\n")))
    elapsed = time.monotonic() - started
    if result.returncode != 0:
        if f"No such command '{args[0]}'" in (result.stdout or ""):
            _problem(session_id, f"{name} is not available in this installation; skipped")
        else:
            _problem(session_id, f"{name} exited with {result.returncode} after {elapsed:.1f} s "
                                 "(see finish-session.log)")
        return False
    _say(session_id, f"{name} done in {elapsed:.1f} s")
    return True


def _say(session_id: str, message: str) -> None:
    from agentctx.redact import redact

    stamp = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    typer.echo(f"{stamp} finish-session {session_id or '-'}: {redact(message)}")


def _problem(session_id: str, message: str) -> None:
    from agentctx.hooks.common import log_problem

    log_problem("finish-session", session_id, message)
    _say(session_id, message)


def register(app: typer.Typer) -> None:
    """Add ``pause``, ``resume``, ``preview`` and the hidden ``finish-session`` to the CLI."""
    app.command()(pause)
    app.command()(resume)
    app.command()(preview)
    app.command(name="finish-session", hidden=True)(finish_session)
