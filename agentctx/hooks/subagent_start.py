"""SubagentStart (registered synchronous): a compact slice for the subagent's own context.

The project's active decisions and conventions within ``subagent_tokens`` (≤ 500 by default), unless
the ``subagent_inject`` knob is off. A subagent's context is its own, so the main session's set of
injected records is left alone; the receipt is recorded under the event ``SubagentStart`` with the
agent type as its source.
"""

from __future__ import annotations

from agentctx.context import digest
from agentctx.hooks.event import HookContext
from agentctx.store import sessions

EVENT = "SubagentStart"


def handle(ctx: HookContext) -> str | None:
    """Build the slice; returns the text to inject (``None`` for nothing)."""
    if not ctx.cfg.get_bool("subagent_inject"):
        return None
    db = ctx.store()
    project = ctx.resolved().project
    if project.paused:
        return None
    built = digest.subagent_slice(db, project, max_tokens=ctx.cfg.get_int("subagent_tokens"),
                                  cfg=ctx.cfg)
    if not built.text:
        return None
    with db.write():
        sessions.ensure(db, ctx.session_id, project.id, cwd=ctx.cwd,
                        transcript_path=ctx.transcript_path)
        sessions.add_receipt(db, session_id=ctx.session_id, project_id=project.id, event=EVENT,
                             source=ctx.text("agent_type") or None, record_ids=built.record_ids,
                             scores=(), tokens=built.tokens, chars=len(built.text))
    return built.text
