"""The agentctx plugin through the real Claude Code CLI (npm, pinned), offline.

The repository is the marketplace: ``claude plugin marketplace add <repo>``, ``claude plugin
install agentctx@agentctx``; then a ``-p`` session gets the SessionStart digest from the plugin's
hook and calls the plugin's MCP server, ``/agentctx:why`` shows the receipt of the prompt before
it, and uninstalling leaves nothing behind.
"""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import ClientSession, StdioServerParameters, stdio_client

from agentctx.core.budget import estimate_tokens
from agentctx.install import plugin
from agentctx.store import Store, sessions
from tests.conftest import REPO
from tests.e2e.claude import LAUNCHER, ClaudeHarness
from tests.e2e.script import ClaudeScript, injections, tool_results, tool_uses
from tests.e2e.test_claude_code import DECISION, DISCOVERY, FLAKE_PROMPT, SETTINGS
from tests.install.conftest import load, write

pytestmark = pytest.mark.e2e

SEARCH = plugin.TOOL_PREFIX + "ctx_search"
INSTALLED_AS = f"{plugin.PLUGIN_NAME}@{plugin.MARKETPLACE_NAME}"
# The plugin's footprint in every session: tool definitions, command and skill listings.
TOKEN_CEILING = 1500


def _launcher_folder(tmp_path: Path) -> Path:
    """A folder holding only the ``agentctx`` launcher, to put on PATH."""
    folder = tmp_path / "launcher-bin"
    folder.mkdir(parents=True)
    (folder / "agentctx").symlink_to(LAUNCHER)
    return folder


def _record(harness: ClaudeHarness, fields: dict[str, str]) -> str:
    made = harness.agentctx("record", fields["type"], fields["title"], "--body", fields["body"],
                            "--json")
    return str(json.loads(made.stdout)["id"])


def _always_on_tokens(details: str) -> int:
    found = re.search(r"Always-on:\s+~?(\d+) tok", details)
    assert found, details
    return int(found.group(1))


def _tool_definition_tokens(env: dict[str, str], cwd: Path) -> int:
    """Tokens of the server's instructions and tool definitions, listed over stdio the way
    Claude Code lists them (names as Claude Code prefixes them for a plugin's server)."""

    async def listing() -> tuple[str, list[dict[str, Any]]]:
        params = StdioServerParameters(command=LAUNCHER, args=["mcp"], env=env, cwd=cwd)
        async with stdio_client(params) as (read, write_), \
                ClientSession(read, write_) as session:
            init = await session.initialize()
            tools = (await session.list_tools()).tools
        return init.instructions or "", [
            {"name": plugin.TOOL_PREFIX + tool.name, "description": tool.description or "",
             "input_schema": tool.input_schema} for tool in tools]

    instructions, definitions = anyio.run(listing)
    assert len(definitions) == 7
    return estimate_tokens(instructions + json.dumps(definitions, separators=(",", ":")))


def _prompt_receipts(session_id: str) -> int:
    with Store.open() as db:
        return sum(receipt.event == "UserPromptSubmit"
                   for receipt in sessions.receipts(db, session_id))


def _text_of(request_messages: list[dict[str, Any]]) -> str:
    return json.dumps(request_messages, ensure_ascii=False)


def test_plugin_manifests_validate(claude_bin: Path) -> None:
    """``claude plugin validate`` passes on the marketplace manifest and on the plugin."""
    for target in (REPO, REPO / plugin.PLUGIN_FOLDER):
        done = subprocess.run([str(claude_bin), "plugin", "validate", str(target)],
                              capture_output=True, text=True, timeout=120, check=False,
                              stdin=subprocess.DEVNULL)
        assert done.returncode == 0, done.stdout + done.stderr
        assert "Validation passed" in done.stdout and "✘" not in done.stdout, done.stdout


@pytest.mark.slow
@pytest.mark.ci
def test_the_plugin_through_claude_code(harness: ClaudeHarness, script: ClaudeScript,
                                        project_dir: Path, tmp_path: Path) -> None:
    home = harness.home
    settings_path = home / ".claude" / "settings.json"
    write(settings_path, SETTINGS)
    settings_before = json.loads(SETTINGS)
    harness.extra_path = [_launcher_folder(tmp_path)]

    # install from the repository as a local marketplace
    added = harness.claude_cli("plugin", "marketplace", "add", str(REPO))
    assert f"Successfully added marketplace: {plugin.MARKETPLACE_NAME}" in added.stdout
    installed = harness.claude_cli("plugin", "install", INSTALLED_AS)
    assert f"Successfully installed plugin: {INSTALLED_AS}" in installed.stdout
    assert load(settings_path)["enabledPlugins"] == {INSTALLED_AS: True}

    # the footprint: command listings (claude plugin details) plus the MCP tool definitions
    details = harness.claude_cli("plugin", "details", INSTALLED_AS).stdout
    for command in ("why", "remember", "forget", "status", "sync", "doctor"):
        assert command in details
    footprint = _always_on_tokens(details) + _tool_definition_tokens(harness.env(), project_dir)
    assert footprint <= TOKEN_CEILING, footprint

    # init sees the plugin and registers no second copy; doctor finds the plugin healthy
    init = harness.agentctx("init", "--yes")
    assert "registers agentctx's hooks and MCP server; nothing to register" in init.stdout
    assert "hooks" not in load(settings_path) or not any(
        "agentctx" in json.dumps(groups) for groups in load(settings_path)["hooks"].values())
    assert not (home / ".claude.json").exists() or \
        "agentctx" not in load(home / ".claude.json").get("mcpServers", {})
    report = json.loads(harness.agentctx("doctor", "--json", check=False).stdout)
    status = {check["name"]: check for check in report["checks"]}
    assert status["hooks"]["status"] == "ok" and INSTALLED_AS in status["hooks"]["detail"]
    assert status["mcp"]["status"] == "ok" and "answers initialize" in status["mcp"]["detail"]

    decision, discovery = _record(harness, DECISION), _record(harness, DISCOVERY)

    # a session: the plugin's SessionStart hook brings the digest, its prompt hook the
    # discovery, and the model calls the plugin's MCP server
    script.on("checkout test flake", (SEARCH, {"query": "PostgreSQL orders database"}),
              final="Found it.")
    first = harness.prompt(FLAKE_PROMPT, allowed_tools=[SEARCH])
    seen = first.requests[0]
    digests = injections(seen, "SessionStart")
    assert len(digests) == 1 and digests[0].names(decision)
    per_turn = injections(seen, "UserPromptSubmit")
    assert len(per_turn) == 1 and per_turn[0].names(discovery)
    last = first.requests[-1]
    called = [use_id for use_id, name in tool_uses(last).items() if name == SEARCH]
    assert called, tool_uses(last)
    assert DECISION["title"] in tool_results(last)[called[-1]]

    # /agentctx:why explains that prompt from its receipt (and leaves no receipt of its own)
    receipts_before = _prompt_receipts(first.session_id)
    why = harness.prompt("/agentctx:why", resume=first.session_id)
    expanded = _text_of(why.requests[0].messages())
    assert "agentctx's receipt for the last prompt" in expanded
    assert "checkout test flakes at midnight" in expanded.lower()
    assert DISCOVERY["title"] in expanded and "matched: " in expanded
    assert "relevance " in expanded and discovery[:8] in expanded
    assert not injections(why.requests[0], "UserPromptSubmit")[len(per_turn):]
    assert _prompt_receipts(first.session_id) == receipts_before == 1

    # without agentctx on PATH the hooks stay silent and /agentctx:doctor says how to install
    harness.wait_for_background()
    harness.extra_path = []
    bare = harness.prompt("/agentctx:doctor")
    bare_seen = bare.requests[0]
    assert not injections(bare_seen, "SessionStart")
    assert "agentctx is not installed" in _text_of(bare_seen.messages())
    assert "pipx install agentctx" in _text_of(bare_seen.messages())
    assert "hook error" not in _text_of(bare_seen.messages()).lower()

    # uninstall: the plugin and the marketplace go, and nothing of them is left behind
    harness.wait_for_background()
    harness.claude_cli("plugin", "uninstall", INSTALLED_AS)
    harness.claude_cli("plugin", "marketplace", "remove", plugin.MARKETPLACE_NAME)
    assert plugin.PLUGIN_NAME not in harness.claude_cli("plugin", "list").stdout
    after = load(settings_path)
    for key, value in settings_before.items():
        assert after[key] == value
    leftovers = {key: value for key, value in after.items() if key not in settings_before}
    assert "agentctx" not in json.dumps(leftovers), leftovers
    plugins_dir = home / ".claude" / "plugins"
    assert load(plugins_dir / "installed_plugins.json")["plugins"] == {}
    assert "agentctx" not in json.dumps(load(plugins_dir / "known_marketplaces.json"))
    # Claude Code keeps the copy it ran from until its own clean-up, marked orphaned
    copies = list((plugins_dir / "cache").glob("agentctx/agentctx/*"))
    assert all((copy / ".orphaned_at").exists() for copy in copies), copies
    # (~/.claude.json keeps Claude Code's own usage counts of the commands that were run)
    assert "agentctx" not in json.dumps(load(home / ".claude.json").get("mcpServers", {}))
    assert plugin.enabled_plugins(project_dir) == []
    # a new session gets nothing of agentctx: no hook context, no server, no commands
    harness.extra_path = [_launcher_folder(tmp_path / "after")]
    gone = harness.prompt("Anything about the orders database?")
    text = _text_of(gone.requests[0].messages()) + gone.requests[0].system_text()
    assert not injections(gone.requests[0]) and "agentctx" not in text.lower()
