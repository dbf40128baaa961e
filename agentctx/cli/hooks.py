"""Hook-related commands: ``pause`` and ``resume`` a project, ``preview`` what the per-prompt hook
would inject, and the hidden ``finish-session``.

``finish-session`` is the detached child the SessionEnd hook spawns; it runs
:func:`agentctx.ops.finish.finish_session` (the final extraction, then consolidation). A failed step
is logged to ``<home>/logs/hooks.log``; the child's own output goes to
``<home>/logs/finish-session.log``.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

import typer

from agentctx import drift
from agentctx.cli.common import (
    JsonOption,
    ProjectOption,
    current_project,
    fail,
    open_store,
    print_json,
)
from agentctx.context import already, judgement
from agentctx.context.injection import gone_note
from agentctx.context.judgement import CUT, INJECT, OUTCOMES, POINTER, POINTER_FLOOR, STATED
from agentctx.core import config
from agentctx.core.budget import estimate_tokens
from agentctx.core.hooklog import log_problem
from agentctx.ops import finish
from agentctx.store import projects, sessions
from agentctx.store import records as rec
from agentctx.store.errors import NotFound

if TYPE_CHECKING:  # pragma: no cover - typing only
    from agentctx.context.judgement import Decision, Verdict

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
    limit: int = typer.Option(5, "--limit", "-n", min=0, max=50,
                              help="Rejected candidates to list beside what would be injected "
                                   "(it never changes the decision)."),
    session: str | None = typer.Option(None, "--session",
                                       help="Leave out what this Claude Code session already "
                                            "holds: its id or first characters (default: a "
                                            "fresh session)."),
    text: bool = typer.Option(False, "--text", help="Also print the exact text injected."),
    project: str | None = ProjectOption,
    json_out: bool = JsonOption,
) -> None:
    """Show exactly what the per-prompt hook would inject for a prompt — in full or as a
    pointer — and why each candidate was or was not (probability, relevance, matched words,
    cosine, already in CLAUDE.md, paths gone). Injects and records nothing."""
    if not prompt.strip():
        fail("the prompt is empty: pass the text you would type in Claude Code")
    knobs = judgement.settings(config.Config.load())
    with open_store() as db:
        target = current_project(db, project)
        decision = judgement.Decision([], "", [], [])
        left: dict[str, str] = {}
        why = judgement.not_judged(prompt, target)
        if not why:
            seen: frozenset[str] | set[str] = frozenset()
            if session:
                try:
                    seen = sessions.seen(db, sessions.resolve(db, session).session_id)
                except NotFound:
                    fail(f"no session {session!r} in the store (see 'agentctx status')")
            root = str(drift.project_folder(db, target, os.getcwd()))
            outcome = already.decide(db, target, prompt, knobs, root, seen=seen)
            decision = outcome.decision
            left = {hit.record.id: where for hit, where in outcome.left}
        semantic = judgement.semantic_check_state(db, knobs)
        listed = _listed(decision.verdicts, limit)
        shorts = rec.short_ids(db, [*(v.hit.record.id for v in listed),
                                    *(v.hit.via for v in listed if v.hit.via)])
    injected = decision.text
    settings = {"full_confidence": knobs.full_confidence,
                "pointer_confidence": knobs.pointer_confidence,
                "max_records": knobs.max_records, "semantic_check": semantic}
    if json_out:
        print_json({"project": target.id, "prompt": prompt,
                    "skipped": why or decision.skipped or None, **settings,
                    "injected": [h.record.id for h in decision.injected],
                    "pointers": [h.record.id for h in decision.pointers],
                    "candidates": [{"id": v.hit.record.id, "short_id": shorts[v.hit.record.id],
                                    "type": v.hit.record.type, "title": v.hit.record.title,
                                    "probability": v.probability, "relevance": v.hit.relevance,
                                    "cosine": v.cosine, "matched": list(v.hit.matched),
                                    "replaces": v.hit.via, "dated": v.hit.dated,
                                    "found_by": v.found_by, "outcome": v.outcome,
                                    "why": _why(v, left, decision.gone),
                                    "stated_in": left.get(v.hit.record.id),
                                    "gone": decision.gone.get(v.hit.record.id, [])}
                                   for v in listed],
                    "injected_text": injected,
                    "tokens": estimate_tokens(injected) if injected else 0})
    elif why or decision.skipped:
        typer.echo(f"nothing would be injected: {why or decision.skipped}")
    else:
        typer.echo(_preview_text(target.name, settings, listed, shorts, decision, text, left))


def _why(verdict: Verdict, left: dict[str, str], gone: dict[str, list[str]]) -> str:
    """Why a candidate was or was not injected, in words."""
    record_id = verdict.hit.record.id
    if verdict.outcome == STATED and record_id in left:
        return f"already in {left[record_id]}"
    why = OUTCOMES[verdict.outcome]
    return why + gone_note(gone[record_id]) if record_id in gone else why


def _listed(verdicts: list[Verdict], limit: int) -> list[Verdict]:
    """Every candidate shown (or cut for room, or left out as already stated), then up to
    ``limit`` of the others."""
    chosen = [v for v in verdicts if v.outcome in (INJECT, POINTER, CUT, STATED)]
    others = [v for v in verdicts if v.outcome not in (INJECT, POINTER, CUT, STATED)]
    return chosen + others[:limit]


def _preview_text(project_name: str, settings: dict[str, Any], verdicts: list[Verdict],
                  shorts: dict[str, str], decision: Decision, show_text: bool,
                  left: dict[str, str]) -> str:
    """The preview for people: the knobs, one line pair per candidate, the total and, with
    ``show_text``, the exact text injected."""
    lines = [f"{project_name}: something is shown once the best candidate reaches probability "
             f"{settings['pointer_confidence']:.2f}; then in full from "
             f"{settings['full_confidence']:.2f}, as a pointer from {POINTER_FLOOR:.2f}; at most "
             f"{settings['max_records']} records, semantic check {settings['semantic_check']}"]
    if not verdicts:
        lines.append("no record matches any word of the prompt")
    for v in verdicts:
        chance = f"p {v.probability:.2f}" if v.probability is not None else "p  -  "
        cosine = f"cos {v.cosine:.2f}" if v.cosine is not None else "cos  -  "
        lines.append(f"  {v.outcome:<7} {chance}  rel {v.hit.relevance:.2f}  {cosine}  "
                     f"{shorts[v.hit.record.id]:<12} {v.hit.record.type:<10} "
                     f"{v.hit.record.title}")
        detail = _why(v, left, decision.gone)
        if v.hit.matched:
            detail += "; matched: " + ", ".join(v.hit.matched)
        if v.hit.via:
            detail += f"; replaces {shorts[v.hit.via]}"
        if v.hit.dated:
            detail += "; dated where the prompt points"
        if v.found_by != "keyword":
            detail += "; found by meaning" + (" and keywords" if v.found_by == "both" else "")
        lines.append(f"{'':10}{detail}")
    full, pointers = len(decision.injected), len(decision.pointers)
    if full or pointers:
        lines.append(f"would inject {full} record{'s' if full != 1 else ''} in full and "
                     f"{pointers} pointer{'s' if pointers != 1 else ''}, "
                     f"{estimate_tokens(decision.text)} tokens")
    else:
        lines.append("would inject nothing")
    if show_text and decision.text:
        lines += ["", decision.text]
    return "\n".join(lines)


def finish_session(
    session_id: str = typer.Option(..., "--session-id", help="Claude Code session id."),
    project: str = typer.Option(..., "--project", help="Project id of the session."),
    transcript: str | None = typer.Option(None, "--transcript", help="Session transcript path."),
) -> None:
    """Final extraction of a session, then consolidation (spawned by the SessionEnd hook)."""
    def problem(message: str) -> None:
        log_problem(finish.LOG_EVENT, session_id, message)

    try:
        cfg = config.Config.load()
    except config.ConfigError as exc:
        message = f"config problem, using defaults: {exc}"
        log_problem(finish.LOG_EVENT, "", message)
        typer.echo(message)
        cfg = config.Config({}, environ={})
    finish.finish_session(session_id, project, transcript, cfg, say=typer.echo, problem=problem)


def register(app: typer.Typer) -> None:
    """Add ``pause``, ``resume``, ``preview`` and the hidden ``finish-session`` to the CLI."""
    app.command()(pause)
    app.command()(resume)
    app.command()(preview)
    app.command(name="finish-session", hidden=True)(finish_session)
