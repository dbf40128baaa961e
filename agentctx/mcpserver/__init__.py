"""The MCP server: seven context tools for Claude Code over stdio (``agentctx mcp``).

``service`` holds what each tool does (plain functions over an open store, returning the text the
model reads); ``semantic`` keeps the embedding model and the in-memory vectors of a long-lived
server; ``app`` declares the tools on an mcp 2.x ``MCPServer`` and resolves the project per call.
Import :func:`agentctx.mcpserver.app.create_server` to embed it, or run ``agentctx mcp``.
"""
