"""Claude Code hooks: ``agentctx hook <event>``, one module per event, behind a fail-open
dispatcher.

Everything here runs on Claude Code's critical path, so it imports only the standard library and
the lean parts of agentctx (``agentctx.store``, ``config``, ``budget``, ``redact``, ``gitinfo``,
``digest``, ``project_profile``, and ``background`` lazily). See :mod:`agentctx.hooks.dispatch`.
"""
