"""CwdChanged: refresh the project profile of the folder Claude Code moved to.

Every hook resolves its project from its own payload's ``cwd``, so nothing else needs switching;
this keeps the new project's profile (name, stack, commands) current. CwdChanged takes no context
back, so nothing is printed.
"""

from __future__ import annotations

from agentctx.hooks.common import HookContext
from agentctx.store import projects


def handle(ctx: HookContext) -> str | None:
    """Detect and store the profile of the new folder's project."""
    new_cwd = ctx.text("new_cwd") or ctx.cwd
    db = ctx.store()
    resolved = projects.resolve(db, new_cwd)
    if resolved.project.paused:
        return None
    from agentctx.project_profile import refresh

    refresh(db, resolved.project)
    return None
