"""``agentctx mcp``: the stdio MCP server Claude Code starts (seven context tools)."""

from __future__ import annotations

import sys

import typer


def mcp_command() -> None:
    """Serve the context tools to Claude Code over stdio (MCP).

    Claude Code starts this itself once registered, e.g.
    ``claude mcp add --scope user agentctx -- agentctx mcp``. stdout carries only JSON-RPC.
    """
    if sys.stdin.isatty():
        typer.echo("agentctx mcp speaks MCP (JSON-RPC) on stdin/stdout and is meant to be started "
                   "by Claude Code: claude mcp add --scope user agentctx -- agentctx mcp "
                   "(Ctrl-C to stop)", err=True)
    from agentctx.mcpserver.app import run  # late: the MCP SDK costs 0.6 s at every CLI start

    run()


def register(app: typer.Typer) -> None:
    """Add ``agentctx mcp`` to the CLI."""
    app.command("mcp", help="Serve the seven context tools to Claude Code over stdio (MCP).")(
        mcp_command)
