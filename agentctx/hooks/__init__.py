"""Claude Code hooks: ``agentctx hook <event>``, one module per event, behind a fail-open
dispatcher.

Everything here runs on Claude Code's critical path: nothing heavy on the hook path. Of agentctx,
the hooks import only the store and the lean core modules config, budget, redact, gitinfo, lean,
injection, judgement, digest, project_profile and background (``tests/test_layering.py`` checks
it). See :mod:`agentctx.hooks.dispatch`.
"""
