"""agentctx through the real Claude Code CLI (npm, pinned), offline against the Messages stand-in.

Hooks fire for real, the MCP server is spawned by Claude Code, and the stand-in records exactly
what the model received.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from agentctx.install import entries
from agentctx.store import Store, projects, records
from agentctx.store.models import Draft, Record
from agentctx.store.selection import Selection
from tests.e2e.claude import LAUNCHER, ClaudeHarness
from tests.e2e.script import ClaudeScript, injections, tool_results, tool_uses
from tests.install.conftest import PYTHON, USER_SETTINGS, load, write

pytestmark = pytest.mark.e2e

RECORD = "mcp__agentctx__ctx_record"
SEARCH = "mcp__agentctx__ctx_search"
DECISION = {"type": "decision", "title": "Use PostgreSQL 16 for the orders service",
            "body": "Chosen over MySQL for row-level locking and JSONB columns; the orders "
                    "service owns its schema."}
DISCOVERY = {"type": "discovery", "title": "Checkout test flakes at midnight UTC",
             "body": "test_checkout_totals fails when the date rolls over during the run; "
                     "freezing the clock with freezegun fixes it."}
FLAKE_PROMPT = "Why does the checkout test flake at midnight UTC?"

# The user's own Claude Code state, minus what Claude Code migrates by itself on start (a
# "model" alias, a "theme" in ~/.claude.json), so that any change to these files is agentctx's.
SETTINGS = USER_SETTINGS.replace('    "model": "opus",\n', "")
# Its other MCP servers start and fail at once, offline.
CLAUDE_JSON = """{
  "mcpServers": {
    "notes": {"type": "stdio", "command": "/bin/false", "args": ["--ünïcode"], "env": {}},
    "docs": {"type": "http", "url": "http://127.0.0.1:9/mcp"}
  },
  "userNote": "Grüße — ünïcode ✓"
}"""


def _current(project_dir: Path) -> dict[str, Record]:
    with Store.open() as db:
        project = projects.resolve(db, str(project_dir)).project
        return {record.title: record
                for record in records.list_records(db, Selection(project_id=project.id))}


def _short_id_of(record_id: str, text: str) -> bool:
    """Whether ``text`` names ``record_id`` by a prefix of at least 6 characters."""
    return any(record_id.startswith(token) for token in re.findall(r"[0-9A-Z]{6,26}", text))


@pytest.mark.slow
@pytest.mark.ci
def test_the_whole_loop_through_claude_code(harness: ClaudeHarness, script: ClaudeScript,
                                            project_dir: Path) -> None:
    home = harness.home
    settings_path, claude_json_path = home / ".claude" / "settings.json", home / ".claude.json"
    settings_before = write(settings_path, SETTINGS)
    write(claude_json_path, CLAUDE_JSON, mode=0o600)
    claude_json_before = json.loads(CLAUDE_JSON)

    # install, with `claude` on PATH: the server is registered through `claude mcp add`
    init = harness.agentctx("init", "--yes")
    assert "via 'claude mcp add -s user'" in init.stdout

    # 1. Claude Code spawns the server and completes the MCP handshake
    listing = harness.claude_cli("mcp", "list")
    started = f"{PYTHON} -I -m agentctx mcp"
    assert re.search(rf"^agentctx: {re.escape(started)} - ✔ Connected$", listing.stdout,
                     re.MULTILINE), listing.stdout
    assert "notes: /bin/false" in listing.stdout  # the user's other server is still there

    # 2. session 1: the model records a decision and a discovery through the MCP tool
    script.on("remember", (RECORD, DECISION), (RECORD, DISCOVERY), final="Both recorded.")
    first = harness.prompt("Please remember what we settled today.",
                           allowed_tools=[RECORD, SEARCH])
    assert len(first.requests) == 3  # prompt, after the first result, after the second
    results = tool_results(first.requests[-1])
    assert len(results) == 2 and all("error" not in text.lower() for text in results.values())
    stored = _current(project_dir)
    decision, discovery = stored[DECISION["title"]], stored[DISCOVERY["title"]]
    assert (decision.type, decision.body, decision.confidence) == \
        ("decision", DECISION["body"], "explicit")
    assert (discovery.type, discovery.body) == ("discovery", DISCOVERY["body"])
    assert all(_short_id_of(record.id, text) for record, text in
               zip((decision, discovery), results.values(), strict=True))

    # 3. session 2 (new): the SessionStart digest carries the decision; the prompt about the
    #    discovery carries the per-turn injection with its id
    second = harness.prompt(FLAKE_PROMPT)
    assert second.session_id != first.session_id
    seen = second.requests[0]
    digests = injections(seen, "SessionStart")
    assert len(digests) == 1
    assert digests[0].names(decision.id) and DECISION["title"] in digests[0].text
    assert not digests[0].names(discovery.id)  # discoveries are not digest material
    per_turn = injections(seen, "UserPromptSubmit")
    assert len(per_turn) == 1 and per_turn[0].names(discovery.id)
    assert DISCOVERY["title"] in per_turn[0].text
    assert not per_turn[0].names(decision.id)  # already injected by the digest

    # 4. something changes between turns; `--resume` re-runs SessionStart (source resume) and
    #    the model gets the fresh digest; the same prompt again gets no duplicate injection
    with Store.open() as db:
        project = projects.resolve(db, str(project_dir)).project
        stripe = records.add(db, Draft(type="decision", title="Adopt Stripe for payments",
                                       body="Stripe handles payments and refunds."),
                             project_id=project.id)
    resumed = harness.prompt(FLAKE_PROMPT, resume=second.session_id)
    assert resumed.session_id == second.session_id
    seen = resumed.requests[0]
    fresh = [item for item in injections(seen, "SessionStart") if item.names(stripe.id)]
    assert fresh and all(item.names(decision.id) for item in fresh)
    assert fresh[0].message_index > digests[0].message_index  # delivered after the first turn
    carrying = [item for item in injections(seen, "UserPromptSubmit") if item.names(discovery.id)]
    assert len(carrying) == 1  # only the first turn's, replayed from the transcript

    # 5. ctx_search through Claude Code returns a tool_result listing the decision
    script.on("search agentctx", (SEARCH, {"query": "PostgreSQL orders database"}),
              final="Found it.")
    searched = harness.prompt("Search agentctx for the orders database decision.",
                              resume=second.session_id, allowed_tools=[SEARCH])
    last = searched.requests[-1]
    search_ids = [use_id for use_id, name in tool_uses(last).items() if name == SEARCH]
    assert search_ids
    listing_text = tool_results(last)[search_ids[-1]]
    assert DECISION["title"] in listing_text and _short_id_of(decision.id, listing_text)

    # 6. doctor sees a healthy installation
    report = json.loads(harness.agentctx("doctor", "--json").stdout)
    status = {check["name"]: check["status"] for check in report["checks"]}
    assert status["hooks"] == "ok" and status["mcp"] == "ok", report
    assert status["hook latency"] != "fail" and report["ok"], report

    # 7. uninstall leaves the settings files as they were before init
    harness.wait_for_background()
    gone = harness.agentctx("uninstall", "--yes")
    assert "agentctx is no longer registered" in gone.stdout
    assert settings_path.read_bytes() == settings_before
    claude_json = load(claude_json_path)  # Claude Code itself rewrote this file meanwhile
    assert claude_json["mcpServers"] == claude_json_before["mcpServers"]
    assert claude_json["userNote"] == claude_json_before["userNote"]
    assert "agentctx" not in harness.claude_cli("mcp", "list").stdout


def test_claude_cli_registration_is_undone_byte_for_byte(harness: ClaudeHarness,
                                                         project_dir: Path) -> None:
    home = harness.home
    settings_before = write(home / ".claude" / "settings.json", SETTINGS)
    claude_json_before = write(home / ".claude.json", CLAUDE_JSON, mode=0o600)

    harness.agentctx("init", "--yes")
    server = load(home / ".claude.json")["mcpServers"]["agentctx"]
    assert server == entries.mcp_entry([PYTHON, "-I", "-m", "agentctx"], None)  # by claude
    assert harness.agentctx("init", "--yes").stdout.endswith("already installed: nothing "
                                                            "changed\n")
    harness.agentctx("uninstall", "--yes")
    assert (home / ".claude" / "settings.json").read_bytes() == settings_before
    assert (home / ".claude.json").read_bytes() == claude_json_before

    # project scope: `claude mcp add -s project` writes .mcp.json at the project root
    harness.run([LAUNCHER, "init", "--scope", "project", "--yes"], cwd=project_dir / "src")
    assert load(project_dir / ".mcp.json") == {"mcpServers": {"agentctx": server}}
    hooks = load(project_dir / ".claude" / "settings.json")["hooks"]
    assert hooks["SessionStart"][0]["hooks"][0]["command"] == \
        f"{PYTHON} -I -m agentctx hook session-start"
    harness.agentctx("uninstall", "--yes")
    assert not (project_dir / ".mcp.json").exists()
    assert not (project_dir / ".claude").exists()
    # (running `claude mcp add` let Claude Code update its own state in ~/.claude.json)
    assert load(home / ".claude.json")["mcpServers"] == json.loads(CLAUDE_JSON)["mcpServers"]
