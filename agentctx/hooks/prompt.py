"""UserPromptSubmit (Tier 2): the few records relevant to this prompt, not yet injected.

What to inject is the per-prompt judgement, :func:`agentctx.context.judgement.decide` (the same one
``agentctx preview`` shows): the store's one search, records already injected into this session
left out, each candidate's probability of answering the prompt, nothing unless the likeliest one
reaches ``prompt_pointer_confidence``, then at most ``prompt_records`` (≤ 3) records — in full
from ``prompt_full_confidence``, else as one-line pointers — within ``prompt_tokens`` (≤ 2,000)
tokens and ``injection_chars`` (≤ 8,000) characters. The paths the picked records name are
checked in the session's worktree (a record whose paths are all gone is marked and comes last),
and a record a memory file Claude Code loads already states is then left out
(:func:`agentctx.context.already.leave_out`: one line says so when something else is still
injected; the receipt names it). This hook does the accounting: each
injection leaves a receipt (the prompt's first 80 characters, redacted, and each record's
relevance, matched words and whether it was a pointer), counts one access per record shown in
full and marks those injected (a pointer may still come in full later), and the prompt —
redacted — joins the session's recent prompts (consolidation ranks against them). A prompt
starting with ``#noctx`` gets nothing that turn: no injection, no receipt, and the prompt is not
kept; so does one of agentctx's own slash commands (``/agentctx:why`` explains the prompt before
it).
"""

from __future__ import annotations

from agentctx.context import already, judgement
from agentctx.core.budget import estimate_tokens
from agentctx.core.ids import now_iso
from agentctx.hooks.event import HookContext
from agentctx.store import records, sessions

EVENT = "UserPromptSubmit"
# Characters of a prompt kept in the session's recent prompts.
PROMPT_KEEP_CHARS = 2000


def handle(ctx: HookContext) -> str | None:
    """Search, inject and account; returns the text to inject (``None`` for nothing)."""
    prompt = ctx.text("prompt")
    if judgement.opted_out(prompt) or judgement.own_command(prompt):
        return None
    db = ctx.store()
    project = ctx.resolved().project
    if project.paused:
        return None
    session_id = ctx.session_id
    cfg = ctx.cfg
    knobs = judgement.settings(cfg)
    outcome = already.decide(db, project, prompt, knobs, ctx.resolved().worktree,
                             seen=sessions.seen(db, session_id))
    decision = outcome.decision
    left = [(hit.record.id, where) for hit, where in outcome.left]
    text, full, shown = decision.text, decision.injected, decision.shown
    keep = cfg.get_int("recent_prompts") if prompt.strip() else 0
    redacted = ""
    if keep > 0 or text:
        from agentctx.core.redact import redact

        redacted = redact(prompt)
    with db.write():
        sessions.ensure(db, session_id, project.id, cwd=ctx.cwd,
                        transcript_path=ctx.transcript_path)
        if keep > 0:
            sessions.append_meta(db, session_id, "prompts",
                                 {"at": now_iso(), "text": redacted[:PROMPT_KEEP_CHARS]}, keep)
        if text:
            sessions.add_receipt(db, session_id=session_id, project_id=project.id, event=EVENT,
                                 record_ids=[h.record.id for h in shown],
                                 scores=[h.relevance for h in shown],
                                 tokens=estimate_tokens(text), chars=len(text),
                                 prompt=redacted, matched=[h.matched for h in shown],
                                 pointers=[h.record.id for h in decision.pointers],
                                 left_out=left)
            ids = [h.record.id for h in full]
            sessions.mark_seen(db, session_id, ids)
            records.touch(db, ids)
    return text or None
