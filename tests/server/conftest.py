"""Fixtures for the MCP server tests: a project folder, the server, and a way to call tools."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from mcp import Client

from agentctx.mcpserver.app import ServerState, create_server
from agentctx.mcpserver.semantic import ModelLoader


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def app_dir(project_dir: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A Python project (pyproject + Makefile) that Claude Code would launch the server in."""
    (project_dir / "pyproject.toml").write_text(
        '[project]\nname = "shop"\nrequires-python = ">=3.12"\ndependencies = ["fastapi"]\n'
        '[project.scripts]\nshop = "shop.cli:main"\n', encoding="utf-8")
    (project_dir / "Makefile").write_text("test:\n\tpytest -q\nlint:\n\truff check .\n",
                                          encoding="utf-8")
    monkeypatch.setenv("CLAUDE_PROJECT_DIR", str(project_dir))
    return project_dir


def no_model() -> None:
    """A model loader for keyword-only servers."""
    return


def make_client(loader: ModelLoader = no_model, **kwargs: Any) -> Client:
    """An in-memory client of a fresh server (its own state, the isolated home's store)."""
    return Client(create_server(ServerState(model_loader=loader)), **kwargs)


async def call(client: Client, tool: str, **arguments: Any) -> str:
    """Call a tool that must succeed; its text."""
    result = await client.call_tool(tool, arguments)
    text = result.content[0].text  # type: ignore[union-attr]
    assert not result.is_error, text
    assert isinstance(text, str)
    return text


async def fail(client: Client, tool: str, **arguments: Any) -> str:
    """Call a tool that must fail with a readable error; its message."""
    result = await client.call_tool(tool, arguments)
    text = result.content[0].text  # type: ignore[union-attr]
    assert result.is_error, text
    assert isinstance(text, str)
    return text


def first_id(index_text: str) -> str:
    """The short id on the first hit line of a ctx_search / ctx_related answer."""
    return index_text.splitlines()[1].split()[0]
