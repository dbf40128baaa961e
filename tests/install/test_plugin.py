"""The plugin folder against the code, its shell parts run for real, and init/doctor beside it."""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path

import pytest

from agentctx import __version__
from agentctx.install import entries, plugin
from tests.conftest import REPO, run_cli
from tests.hooks.conftest import SESSION, check_contract, payloads
from tests.install.conftest import LAUNCHER, USER_SETTINGS, load, write

PLUGIN = REPO / plugin.PLUGIN_FOLDER
WRAPPER = PLUGIN / "bin" / "agentctx-plugin"
COMMANDS = ("why", "remember", "forget", "status", "sync", "doctor")


def _launcher_folder(tmp_path: Path) -> Path:
    folder = tmp_path / "launcher-bin"
    folder.mkdir()
    (folder / "agentctx").symlink_to(LAUNCHER)
    return folder


def _enable_plugin(home: Path, key: str = "agentctx@agentctx") -> Path:
    settings = home / ".claude" / "settings.json"
    document = json.loads(USER_SETTINGS)
    document["enabledPlugins"] = {key: True, "other@market": True}
    write(settings, json.dumps(document, indent=2))
    return settings


def test_the_committed_plugin_files_are_the_generated_ones() -> None:
    for name, text in plugin.generated_files().items():
        assert (PLUGIN / name).read_text(encoding="utf-8") == text, (
            f"plugin/{name} is out of date: run python -c 'from pathlib import Path; from "
            "agentctx.install import plugin; plugin.write_generated(Path(\"plugin\"))'")


def test_the_plugin_hooks_are_the_ones_init_writes() -> None:
    """Same events, matchers, async flags and timeouts; only the command differs."""
    registered = load(PLUGIN / "hooks" / "hooks.json")["hooks"]
    for spec in entries.HOOKS:
        groups = registered[spec.event]
        assert len(groups) == 1 and groups[0].get("matcher") == spec.matcher
        ours = entries.handler(spec, [LAUNCHER], None)
        theirs = groups[0]["hooks"][0]
        assert {k: v for k, v in theirs.items() if k != "command"} == \
            {k: v for k, v in ours.items() if k != "command"}
        assert theirs["command"] == f'"{plugin.LAUNCHER}" hook {spec.argument}'
    assert set(registered) == {spec.event for spec in entries.HOOKS}


def test_manifests_name_the_plugin_and_its_version() -> None:
    market = load(REPO / ".claude-plugin" / "marketplace.json")
    assert market["name"] == plugin.MARKETPLACE_NAME
    (entry,) = market["plugins"]
    assert entry["name"] == plugin.PLUGIN_NAME and entry["source"] == f"./{plugin.PLUGIN_FOLDER}"
    manifest = load(PLUGIN / ".claude-plugin" / "plugin.json")
    assert manifest["name"] == plugin.PLUGIN_NAME and manifest["version"] == __version__
    assert load(PLUGIN / ".mcp.json")["mcpServers"][plugin.PLUGIN_SERVER]["args"] == ["mcp"]


@pytest.mark.parametrize("name", COMMANDS)
def test_each_command_has_a_description_and_runs_only_the_wrapper(name: str) -> None:
    text = (PLUGIN / "commands" / f"{name}.md").read_text(encoding="utf-8")
    front = re.match(r"---\n(.*?)\n---\n", text, re.DOTALL)
    assert front and re.search(r"^description: \S", front.group(1), re.MULTILINE)
    steps = re.findall(r"!`([^`]*)`", text)
    for step in steps:  # pre-run steps: only the wrapper, and never the user's free text
        assert step.startswith(f"agentctx-plugin {name}") and "$ARGUMENTS" not in step
        assert f"Bash(agentctx-plugin {name}:*)" in front.group(1)


def _sh(command: str, path: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PATH": path, "CLAUDE_PLUGIN_ROOT": str(PLUGIN)}  # as Claude Code sets
    return subprocess.run(["/bin/sh", "-c", command], input=stdin, capture_output=True,
                          text=True, env=env, timeout=60, check=False)


def test_a_hook_without_agentctx_exits_0_silently(tmp_path: Path) -> None:
    empty = tmp_path / "empty-bin"
    empty.mkdir()
    for groups in load(PLUGIN / "hooks" / "hooks.json")["hooks"].values():
        command = groups[0]["hooks"][0]["command"]
        done = _sh(command, str(empty), json.dumps(payloads("SessionStart")[0]))
        assert (done.returncode, done.stdout, done.stderr) == (0, "", "")


def test_a_hook_with_agentctx_on_path_injects(tmp_path: Path, project_dir: Path) -> None:
    run_cli("record", "decision", "Use PostgreSQL 16 for orders", cwd=project_dir)
    command = load(PLUGIN / "hooks" / "hooks.json")["hooks"]["SessionStart"][0]["hooks"][0][
        "command"]
    payload = {"session_id": SESSION, "cwd": str(project_dir), "hook_event_name": "SessionStart",
               "source": "startup", "transcript_path": str(tmp_path / "t.jsonl")}
    done = _sh(command, f"{_launcher_folder(tmp_path)}:/usr/bin:/bin", json.dumps(payload))
    assert done.returncode == 0, done.stderr
    document = check_contract(done.stdout)
    assert document and "Use PostgreSQL 16 for orders" in \
        document["hookSpecificOutput"]["additionalContext"]


def test_the_command_wrapper_always_exits_0_and_says_what_happened(tmp_path: Path) -> None:
    empty = tmp_path / "empty-bin"
    empty.mkdir()
    missing = _sh(f"{WRAPPER} status", str(empty))
    assert missing.returncode == 0 and "agentctx is not installed" in missing.stdout
    assert "pipx install agentctx" in missing.stdout
    on_path = f"{_launcher_folder(tmp_path)}:/usr/bin:/bin"
    failed = _sh(f"{WRAPPER} show NOSUCHRECORD", on_path)
    assert failed.returncode == 0
    assert failed.stdout.startswith("agentctx: ")  # the CLI's one-line error, from stderr
    assert failed.stdout.rstrip().endswith("(agentctx show exited with status 1)")
    version = _sh(f"{WRAPPER} --version", on_path)
    assert version.stdout == f"agentctx {__version__}\n"


def test_enabled_plugins_reads_every_scope(isolated_home: Path, project_dir: Path) -> None:
    home = isolated_home.parent
    assert plugin.enabled_plugins(project_dir) == []
    user = _enable_plugin(home, "agentctx@mine")
    local = project_dir / ".claude" / "settings.local.json"
    write(local, '{"enabledPlugins": {"agentctx@team": true, "agentctx@off": false}}')
    write(project_dir / ".claude" / "settings.json", "{not json")  # skipped, not fatal
    found = plugin.enabled_plugins(project_dir)
    assert [(p.key, p.settings) for p in found] == [("agentctx@mine", user),
                                                    ("agentctx@team", local)]
    assert found[0].marketplace == "mine"


def test_init_leaves_the_registration_to_an_enabled_plugin(isolated_home: Path,
                                                           project_dir: Path) -> None:
    home = isolated_home.parent
    settings = _enable_plugin(home)
    before = settings.read_bytes()
    done = run_cli("init", "--yes", cwd=project_dir)
    assert done.returncode == 0, done.stderr
    assert "the Claude Code plugin agentctx@agentctx" in done.stdout
    assert "nothing to register" in done.stdout
    assert settings.read_bytes() == before and not (home / ".claude.json").exists()
    assert (isolated_home / "agentctx.db").exists()  # the store is ready all the same
    assert not (isolated_home / "install" / "state.json").exists()
    again = run_cli("init", "--scope", "project", "--yes", "--dry-run", cwd=project_dir)
    assert "nothing to register" in again.stdout and not (project_dir / ".mcp.json").exists()


def _doctor(project_dir: Path, path: str) -> dict[str, dict[str, str]]:
    done = run_cli("doctor", "--json", "--quick", cwd=project_dir, env={"PATH": path})
    return {check["name"]: check for check in json.loads(done.stdout)["checks"]}


def test_doctor_with_the_plugin_and_with_both(isolated_home: Path, project_dir: Path,
                                              tmp_path: Path) -> None:
    home = isolated_home.parent
    on_path = f"{_launcher_folder(tmp_path)}:/usr/bin:/bin"
    bare = _doctor(project_dir, on_path)
    assert bare["hooks"]["status"] == "fail" and "plugin" in bare["hooks"]["fix"]

    # an earlier init, then the plugin too: every hook would run twice
    assert run_cli("init", "--yes", cwd=project_dir, env={"PATH": on_path}).returncode == 0
    document = load(home / ".claude" / "settings.json")
    document["enabledPlugins"] = {"agentctx@agentctx": True}
    write(home / ".claude" / "settings.json", json.dumps(document))
    both = _doctor(project_dir, on_path)
    assert both["hooks"]["status"] == "warn" and "registered twice" in both["hooks"]["detail"]
    assert both["mcp"]["status"] == "warn" and "registered twice" in both["mcp"]["detail"]
    assert "agentctx uninstall" in both["hooks"]["fix"]

    # uninstall removes init's copy; the plugin's stays and is healthy
    assert run_cli("uninstall", "--yes", cwd=project_dir, env={"PATH": on_path}).returncode == 0
    plugin_only = _doctor(project_dir, on_path)
    assert plugin_only["hooks"]["status"] == "ok", plugin_only["hooks"]
    assert "agentctx@agentctx" in plugin_only["hooks"]["detail"]
    assert plugin_only["mcp"]["status"] == "ok", plugin_only["mcp"]

    # the plugin without agentctx on PATH: its hooks do nothing, and doctor says so
    empty = tmp_path / "empty-bin"
    empty.mkdir()
    lost = _doctor(project_dir, f"{empty}:/usr/bin:/bin")
    assert lost["hooks"]["status"] == "fail" and "pipx install agentctx" in lost["hooks"]["fix"]
