"""Installing agentctx into Claude Code: hooks in settings, the MCP server, and undoing both.

Every edit is surgical (only agentctx's own entries change), atomic, backed up once, idempotent,
and recorded in the home so ``uninstall`` restores an untouched file byte for byte.
"""

from agentctx.install.entries import HOOKS, SERVER_NAME, HookSpec
from agentctx.install.installer import (
    InitPlan,
    Step,
    UninstallPlan,
    apply_init,
    apply_uninstall,
    plan_init,
    plan_uninstall,
    preflight,
)
from agentctx.install.jsonfile import InstallError

__all__ = [
    "HOOKS", "SERVER_NAME", "HookSpec", "InitPlan", "InstallError", "Step", "UninstallPlan",
    "apply_init", "apply_uninstall", "plan_init", "plan_uninstall", "preflight",
]
