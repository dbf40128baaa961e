"""The full-screen terminal UI (``agentctx tui``), built on Textual.

One module per pane (projects, records, supersession chains, profile, CLAUDE.md drift and sync,
per-session token cost) with its ``.tcss`` beside it, over the same store API the CLI uses. Not
written yet: until it is, ``agentctx demo`` prints ``status`` and ``export`` instead.
"""
