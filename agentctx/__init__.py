"""agentctx — a context layer for Claude Code: what is being built, kept current and budgeted."""

__version__ = "0.1.0"
