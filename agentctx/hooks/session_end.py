"""SessionEnd: mark the session ended and hand the slow work to one detached child.

The child is ``agentctx finish-session`` (see :mod:`agentctx.cli.hooks`): the final extraction of
the session's remaining content, then consolidation. Claude Code gives all SessionEnd hooks 1.5 s
together, so this hook only writes one row and spawns.
"""

from __future__ import annotations

from agentctx.hooks.event import HookContext
from agentctx.store import sessions


def finish_args(session_id: str, project_id: str, transcript: str | None) -> list[str]:
    """The ``agentctx`` arguments of the finishing child."""
    args = ["finish-session", "--session-id", session_id, "--project", project_id]
    if transcript:
        args += ["--transcript", transcript]
    return args


def handle(ctx: HookContext) -> str | None:
    """End the session and spawn its finishing child; prints nothing."""
    db = ctx.store()
    project = ctx.resolved().project
    if project.paused:
        return None
    with db.write():
        sessions.ensure(db, ctx.session_id, project.id, cwd=ctx.cwd,
                        transcript_path=ctx.transcript_path)
        sessions.end(db, ctx.session_id)
    from agentctx.core import background

    background.spawn_detached(finish_args(ctx.session_id, project.id, ctx.transcript_path),
                              log_name="finish-session.log")
    return None
