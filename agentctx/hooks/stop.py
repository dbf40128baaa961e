"""Stop (registered async): start extraction of the turn's new transcript content, detached.

The extraction child (``agentctx extract --session-id … --transcript … --min-new-tokens N``) runs
on its own and the hook returns at once. When that session's extraction is already running (it
holds the ``extract-<session>`` lock), the mark left on the session is enough: the running one
checks it before and after releasing its lock and goes again, so no turn is skipped. The mark is
written before the lock is looked at, so a run finishing at that moment still sees it. Nothing
starts when the ``llm`` knob is off.
"""

from __future__ import annotations

from agentctx.hooks.event import HookContext
from agentctx.store import sessions


def handle(ctx: HookContext) -> str | None:
    """Spawn (or flag) the session's extraction; prints nothing."""
    if not ctx.cfg.get_bool("llm"):
        return None
    transcript = ctx.transcript_path
    if transcript is None:
        return None
    db = ctx.store()
    project = ctx.resolved().project
    if project.paused:
        return None
    session_id = ctx.session_id
    with db.write():
        sessions.ensure(db, session_id, project.id, cwd=ctx.cwd, transcript_path=transcript)
        sessions.mark_dirty(db, session_id)
    from agentctx.core import background  # imports subprocess: kept off the other hooks' path

    if background.is_locked(f"extract-{session_id}"):
        return None
    background.spawn_detached(["extract", "--session-id", session_id, "--transcript", transcript,
                               "--min-new-tokens", str(ctx.cfg.get_int("extract_min_new_tokens"))],
                              log_name="extract.log")
    return None
