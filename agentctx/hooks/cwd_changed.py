"""CwdChanged: refresh the project profile of the folder Claude Code moved to.

Every hook resolves its project from its own payload's ``cwd``, so nothing else needs switching;
this keeps the new project's profile (name, stack, commands) current. A folder that is neither in
a git repository nor holds a build file (``cd /tmp`` in a shell) is no project: nothing is created
for it. CwdChanged takes no context back, so nothing is printed.
"""

from __future__ import annotations

from pathlib import Path

from agentctx.hooks.event import HookContext
from agentctx.store import projects


def handle(ctx: HookContext) -> str | None:
    """Detect and store the profile of the new folder's project."""
    new_cwd = ctx.text("new_cwd")
    if not new_cwd or "\x00" in new_cwd:  # no folder has a NUL byte in its name
        new_cwd = ctx.cwd
    from agentctx.context.project_profile import detect, refresh
    from agentctx.core.gitinfo import find_repo

    if find_repo(new_cwd) is None and \
            not any(fact.key != "name" for fact in detect(Path(new_cwd).expanduser())):
        return None
    db = ctx.store()
    resolved = projects.resolve(db, new_cwd)
    if resolved.project.paused:
        return None

    refresh(db, resolved.project)
    return None
