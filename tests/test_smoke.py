"""agentctx installs and starts: the console script, a hook, and the MCP server, as processes.

``make smoke`` runs this file alone on the newest Python of the machine: it proves the package
installs and its entry points start there, without repeating the suite.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from mcp import ClientSession, StdioServerParameters, stdio_client


def agentctx_command() -> list[str]:
    """The console script beside this interpreter (what ``pip install`` put there)."""
    script = Path(sys.executable).with_name("agentctx")
    assert script.exists() or shutil.which("agentctx"), "the agentctx console script is missing"
    return [str(script) if script.exists() else "agentctx"]


def run(args: list[str], home: Path, cwd: Path,
        stdin: str = "") -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "AGENTCTX_HOME": str(home), "HOME": str(home.parent)}
    return subprocess.run([*agentctx_command(), *args], input=stdin, capture_output=True,
                          text=True, cwd=cwd, env=env, timeout=60, check=False)


def test_the_installed_command_records_searches_and_answers_a_hook(
        isolated_home: Path, tmp_path: Path) -> None:
    project = tmp_path / "smoke-project"
    project.mkdir()
    version = run(["--version"], isolated_home, project)
    assert version.returncode == 0 and version.stdout.strip()

    recorded = run(["record", "decision", "Internal API is gRPC", "--body",
                    "protobuf schemas live in proto/"], isolated_home, project)
    assert recorded.returncode == 0, recorded.stderr

    found = run(["search", "grpc", "--json"], isolated_home, project)
    assert found.returncode == 0, found.stderr
    assert "Internal API is gRPC" in found.stdout

    payload = {"session_id": "smoke-1", "transcript_path": str(tmp_path / "t.jsonl"),
               "cwd": str(project), "hook_event_name": "SessionStart", "source": "startup"}
    hook = run(["hook", "session-start"], isolated_home, project, stdin=json.dumps(payload))
    assert hook.returncode == 0, hook.stderr
    assert "Internal API is gRPC" in hook.stdout


@pytest.mark.anyio
async def test_the_mcp_server_starts_and_lists_its_tools(isolated_home: Path,
                                                         tmp_path: Path) -> None:
    params = StdioServerParameters(command=sys.executable, args=["-m", "agentctx", "mcp"],
                                   env={"AGENTCTX_HOME": str(isolated_home),
                                        "CLAUDE_PROJECT_DIR": str(tmp_path)},
                                   cwd=str(tmp_path))
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        names = {tool.name for tool in (await session.list_tools()).tools}
    assert "ctx_search" in names and len(names) == 7
