"""init/uninstall on real files: surgical, idempotent, atomic, reversible byte for byte."""

from __future__ import annotations

import copy
import json
import os
import stat
from pathlib import Path
from typing import Any

import pytest

from agentctx.install import (
    HOOKS,
    InstallError,
    apply_init,
    apply_uninstall,
    entries,
    paths,
    plan_init,
)
from agentctx.install import state as install_state
from agentctx.install.installer import plan_uninstall
from tests.install.conftest import CLAUDE_JSON, PYTHON, USER_SETTINGS, load, write


def init(scope: str = "user", cwd: Path | None = None, launcher: str = PYTHON) -> None:
    apply_init(plan_init(scope, cwd=cwd, launcher=launcher, claude=False))


def uninstall(cwd: Path | None = None) -> list[str]:
    steps = apply_uninstall(plan_uninstall(cwd=cwd, claude=False))
    return [step.action for step in steps]


def without_ours(data: dict[str, Any]) -> dict[str, Any]:
    """``data`` minus agentctx's entries, computed independently of the code under test."""
    result = copy.deepcopy(data)
    for event, groups in list(result.get("hooks", {}).items()):
        kept = []
        for group in groups:
            handlers = [h for h in group["hooks"]
                        if not (h.get("command", "").startswith(PYTHON + " -I -m agentctx hook ")
                                or " agentctx hook " in h.get("command", ""))]
            if handlers:
                kept.append({**group, "hooks": handlers})
        result["hooks"][event] = kept
    result["hooks"] = {k: v for k, v in result["hooks"].items() if v}
    return result


def test_fresh_home_gets_every_hook_in_the_documented_shape(home: Path) -> None:
    init()
    settings = load(home / ".claude" / "settings.json")
    assert list(settings) == ["hooks"]
    hooks = settings["hooks"]
    assert set(hooks) == {"SessionStart", "UserPromptSubmit", "PostToolUse",
                          "PostToolUseFailure", "PreCompact", "Stop", "SessionEnd",
                          "CwdChanged", "SubagentStart"}
    for event, groups in hooks.items():
        assert len(groups) == 1
        (handler,) = groups[0]["hooks"]
        assert handler["type"] == "command"
        assert handler["command"].startswith(PYTHON + " -I -m agentctx hook ")
        assert isinstance(handler["timeout"], int) and 1 <= handler["timeout"] <= 30
        assert handler.get("async", False) is (event in ("PostToolUse", "PostToolUseFailure",
                                                         "Stop"))
    # SessionStart without a matcher, so resume, compact and clear fire it too
    assert "matcher" not in hooks["SessionStart"][0]
    started = f"{PYTHON} -I -m agentctx"
    assert hooks["SessionStart"][0]["hooks"][0]["command"] == f"{started} hook session-start"
    assert hooks["PostToolUseFailure"][0]["hooks"][0]["command"] == f"{started} hook post-tool"
    assert "async" not in hooks["SubagentStart"][0]["hooks"][0]
    # SessionEnd raises Claude Code's shared 1.5 s budget a little, not to the 60 s cap
    assert 1.5 < hooks["SessionEnd"][0]["hooks"][0]["timeout"] <= 10
    # exactly the shape `claude mcp add -s user` writes
    assert load(home / ".claude.json") == {"mcpServers": {"agentctx": {
        "type": "stdio", "command": PYTHON, "args": ["-I", "-m", "agentctx", "mcp"], "env": {}}}}
    assert stat.S_IMODE((home / ".claude.json").stat().st_mode) == 0o600


def test_existing_files_keep_every_other_key_hook_and_server(home: Path) -> None:
    settings_path, claude_path = home / ".claude" / "settings.json", home / ".claude.json"
    write(settings_path, USER_SETTINGS)
    write(claude_path, CLAUDE_JSON, mode=0o600)
    original_settings, original_claude = load(settings_path), load(claude_path)

    init()

    settings = load(settings_path)
    assert without_ours(settings) == original_settings
    assert list(settings) == list(original_settings)  # key order kept
    # other hooks on the same events stay first, ours appended
    assert settings["hooks"]["SessionStart"][0] == original_settings["hooks"]["SessionStart"][0]
    assert settings["hooks"]["SessionStart"][1]["hooks"][0]["command"].endswith("session-start")
    text = settings_path.read_text(encoding="utf-8")
    assert "zukünftig" in text and "日本語" in text  # unicode written as is, not \\u escapes
    assert text.startswith('{\n    "model"')  # the file's 4-space indentation kept
    claude = load(claude_path)
    assert claude["mcpServers"]["github"] == original_claude["mcpServers"]["github"]
    assert claude["mcpServers"]["docs"] == original_claude["mcpServers"]["docs"]
    del claude["mcpServers"]["agentctx"]
    assert claude == original_claude
    assert stat.S_IMODE(claude_path.stat().st_mode) == 0o600


def test_init_twice_changes_nothing(home: Path) -> None:
    write(home / ".claude" / "settings.json", USER_SETTINGS)
    write(home / ".claude.json", CLAUDE_JSON)
    init()
    watched = [home / ".claude" / "settings.json", home / ".claude.json",
               install_state.state_path()]
    before = {path: (path.read_bytes(), path.stat().st_mtime_ns) for path in watched}
    plan = plan_init("user", launcher=PYTHON, claude=False)
    assert not plan.changes
    assert [step.action for step in plan.steps] == ["unchanged", "unchanged"]
    apply_init(plan)
    assert {path: (path.read_bytes(), path.stat().st_mtime_ns) for path in watched} == before
    assert len(list((install_state.folder() / "backups").iterdir())) == 2  # one-time backups


def test_uninstall_restores_untouched_files_byte_for_byte(home: Path) -> None:
    settings_path, claude_path = home / ".claude" / "settings.json", home / ".claude.json"
    settings_bytes = write(settings_path, USER_SETTINGS, mode=0o640)
    claude_bytes = write(claude_path, CLAUDE_JSON, mode=0o600)
    init()
    assert settings_path.read_bytes() != settings_bytes
    assert sorted(uninstall()) == ["restore", "restore"]
    assert settings_path.read_bytes() == settings_bytes
    assert claude_path.read_bytes() == claude_bytes
    assert stat.S_IMODE(settings_path.stat().st_mode) == 0o640
    assert stat.S_IMODE(claude_path.stat().st_mode) == 0o600
    assert not install_state.state_path().exists()


def test_uninstall_deletes_files_and_folders_init_created(home: Path) -> None:
    assert not (home / ".claude").exists()
    init()
    assert (home / ".claude" / "settings.json").exists()
    uninstall()
    assert not (home / ".claude.json").exists()
    assert not (home / ".claude").exists()


def test_uninstall_after_other_changes_keeps_them(home: Path) -> None:
    settings_path, claude_path = home / ".claude" / "settings.json", home / ".claude.json"
    write(settings_path, USER_SETTINGS)
    write(claude_path, CLAUDE_JSON)
    init()
    # Claude Code and the user change things after init
    settings = load(settings_path)
    settings["hooks"]["Stop"].append({"hooks": [{"type": "command", "command": "say done"}]})
    settings["effortLevel"] = "high"
    settings_path.write_text(json.dumps(settings, indent=4, ensure_ascii=False) + "\n",
                             encoding="utf-8")
    claude = load(claude_path)
    claude["numStartups"] = 43
    claude["mcpServers"]["linear"] = {"type": "sse", "url": "https://mcp.linear.app/sse"}
    claude_path.write_text(json.dumps(claude, indent=2), encoding="utf-8")

    assert sorted(uninstall()) == ["remove", "remove"]

    expected_settings = json.loads(USER_SETTINGS)
    expected_settings["hooks"]["Stop"] = [{"hooks": [{"type": "command", "command": "say done"}]}]
    expected_settings["effortLevel"] = "high"
    assert load(settings_path) == expected_settings
    expected_claude = json.loads(CLAUDE_JSON)
    expected_claude["numStartups"] = 43
    expected_claude["mcpServers"]["linear"] = {"type": "sse", "url": "https://mcp.linear.app/sse"}
    assert load(claude_path) == expected_claude


def test_emptied_containers_are_dropped_only_if_init_created_them(home: Path) -> None:
    settings_path = home / ".claude" / "settings.json"
    write(settings_path, '{"hooks": {"Stop": []}, "model": "sonnet"}\n')
    init()
    data = load(settings_path)
    data["theme"] = "light"  # an outside change: forces the surgical path
    settings_path.write_text(json.dumps(data), encoding="utf-8")
    uninstall()
    assert load(settings_path) == {"hooks": {"Stop": []}, "model": "sonnet", "theme": "light"}


def test_reinit_with_a_new_launcher_updates_in_place_and_still_restores(home: Path,
                                                                         tmp_path: Path) -> None:
    settings_bytes = write(home / ".claude" / "settings.json", USER_SETTINGS)
    init(launcher=PYTHON)
    moved = str(tmp_path / "new bin" / "agentctx")
    init(launcher=moved)
    settings = load(home / ".claude" / "settings.json")
    ours = entries.our_handlers(settings)
    assert all(len(handlers) == 1 for handlers in ours.values())  # no duplicates
    assert ours["Stop"][0][1]["command"] == f"'{moved}' -I -m agentctx hook stop"
    assert load(home / ".claude.json")["mcpServers"]["agentctx"]["command"] == moved
    uninstall()
    assert (home / ".claude" / "settings.json").read_bytes() == settings_bytes


def test_reinit_after_an_outside_change_never_restores_over_it(home: Path,
                                                               tmp_path: Path) -> None:
    settings_path = home / ".claude" / "settings.json"
    write(settings_path, USER_SETTINGS)
    init()
    data = load(settings_path)
    data["outside"] = "kept"
    settings_path.write_text(json.dumps(data, indent=4), encoding="utf-8")
    init(launcher=str(tmp_path / "other" / "agentctx"))  # rewrites the file again
    uninstall()
    expected = json.loads(USER_SETTINGS)
    expected["outside"] = "kept"
    assert load(settings_path) == expected


def test_a_file_that_already_held_our_entries_is_cleaned_not_restored(home: Path) -> None:
    settings_path = home / ".claude" / "settings.json"
    stale = {"hooks": {"Stop": [{"hooks": [{"type": "command",
                                            "command": "/old/venv/bin/agentctx hook stop"}]}]},
             "model": "opus"}
    write(settings_path, json.dumps(stale))
    init()
    ours = entries.our_handlers(load(settings_path))
    assert len(ours["Stop"]) == 1 and ours["Stop"][0][1]["command"].startswith(PYTHON)
    uninstall()
    assert load(settings_path) == {"model": "opus"}


MALFORMED = {
    "trailing comma": '{"hooks": {},}',
    "duplicate key": '{"model": "a", "model": "b"}',
    "top-level list": "[1, 2]",
    "NaN": '{"x": NaN}',
    "hooks not an object": '{"hooks": []}',
    "event not a list": '{"hooks": {"Stop": {"hooks": []}}}',
    "comment": '// mine\n{"model": "opus"}',
}


@pytest.mark.parametrize("content", list(MALFORMED.values()), ids=list(MALFORMED))
def test_malformed_settings_are_refused_and_nothing_is_touched(home: Path, content: str) -> None:
    settings_bytes = write(home / ".claude" / "settings.json", content)
    claude_bytes = write(home / ".claude.json", CLAUDE_JSON)
    with pytest.raises(InstallError, match=r"settings\.json.*nothing was changed"):
        init()
    assert (home / ".claude" / "settings.json").read_bytes() == settings_bytes
    assert (home / ".claude.json").read_bytes() == claude_bytes
    assert not install_state.state_path().exists()


@pytest.mark.parametrize("content", ['{"mcpServers": [], "x": 1}', '{"mcpServers": {}',
                                     "\"just a string\""])
def test_malformed_mcp_config_is_refused_and_nothing_is_touched(home: Path, content: str) -> None:
    claude_bytes = write(home / ".claude.json", content)
    with pytest.raises(InstallError, match=r"\.claude\.json"):
        init()
    assert (home / ".claude.json").read_bytes() == claude_bytes
    assert not (home / ".claude").exists()


def test_non_utf8_file_is_refused(home: Path) -> None:
    path = home / ".claude" / "settings.json"
    path.parent.mkdir()
    path.write_bytes(b'{"model": "\xff"}')
    with pytest.raises(InstallError, match="not UTF-8"):
        init()
    assert path.read_bytes() == b'{"model": "\xff"}'


def test_claude_config_dir_is_respected(home: Path, tmp_path: Path,
                                        monkeypatch: pytest.MonkeyPatch) -> None:
    config_dir = tmp_path / "cc config"
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(config_dir))
    init()
    assert (config_dir / "settings.json").exists()
    assert load(config_dir / ".claude.json")["mcpServers"]["agentctx"]["command"] == PYTHON
    assert not (home / ".claude").exists() and not (home / ".claude.json").exists()
    uninstall()
    assert not config_dir.exists()


def test_a_non_default_home_is_passed_to_hooks_and_server(home: Path, tmp_path: Path,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    custom = tmp_path / "data dir" / "ctx"
    monkeypatch.setenv("AGENTCTX_HOME", str(custom))
    init()
    command = load(home / ".claude" / "settings.json")["hooks"]["Stop"][0]["hooks"][0]["command"]
    assert command == f"AGENTCTX_HOME='{custom}' {PYTHON} -I -m agentctx hook stop"
    server = load(home / ".claude.json")["mcpServers"]["agentctx"]
    assert server["env"] == {"AGENTCTX_HOME": str(custom)}
    assert install_state.state_path(custom).exists()
    # uninstall from a shell without AGENTCTX_HOME finds that home through the hooks
    monkeypatch.delenv("AGENTCTX_HOME")
    assert sorted(uninstall()) == ["delete", "delete"]
    assert not (home / ".claude.json").exists()


def test_the_default_home_is_not_written_into_commands(home: Path) -> None:
    assert paths.home_env() is None  # the isolated home is ~/.agentctx
    init()
    text = (home / ".claude" / "settings.json").read_text(encoding="utf-8")
    assert "AGENTCTX_HOME" not in text


def test_project_scope_writes_the_project_files_at_the_repo_root(home: Path,
                                                                 project_dir: Path) -> None:
    sub = project_dir / "src"
    mcp_bytes = write(project_dir / ".mcp.json", '{\n  "mcpServers": {\n    "db": '
                      '{"command": "pg-mcp", "args": []}\n  }\n}\n')
    init("project", cwd=sub)
    assert (project_dir / ".claude" / "settings.json").exists()
    servers = load(project_dir / ".mcp.json")["mcpServers"]
    assert set(servers) == {"db", "agentctx"}
    assert not (home / ".claude.json").exists() and not (home / ".claude").exists()
    assert sorted(uninstall(cwd=Path("/"))) == ["delete", "restore"]  # from anywhere
    assert (project_dir / ".mcp.json").read_bytes() == mcp_bytes
    assert not (project_dir / ".claude").exists()


def test_symlinked_settings_are_written_through(home: Path, tmp_path: Path) -> None:
    real = tmp_path / "dotfiles" / "claude-settings.json"
    real_bytes = write(real, USER_SETTINGS)
    (home / ".claude").mkdir()
    (home / ".claude" / "settings.json").symlink_to(real)
    init()
    assert (home / ".claude" / "settings.json").is_symlink()
    assert "hook session-start" in real.read_text(encoding="utf-8")
    uninstall()
    assert (home / ".claude" / "settings.json").is_symlink()
    assert real.read_bytes() == real_bytes


def test_crlf_bom_and_one_line_styles_are_kept(home: Path) -> None:
    settings_path = home / ".claude" / "settings.json"
    settings_path.parent.mkdir()
    settings_path.write_bytes('\ufeff{\r\n  "model": "opus"\r\n}\r\n'.encode())
    (home / ".claude.json").write_text('{"theme":"dark","mcpServers":{}}', encoding="utf-8")
    init()
    raw = settings_path.read_bytes()
    assert raw.startswith("\ufeff{\r\n".encode()) and b"\n" not in raw.replace(b"\r\n", b"")
    assert "\n" not in (home / ".claude.json").read_text(encoding="utf-8")


def test_uninstall_without_state_removes_leftover_entries(home: Path) -> None:
    write(home / ".claude" / "settings.json", USER_SETTINGS)
    write(home / ".claude.json", CLAUDE_JSON)
    init()
    install_state.state_path().unlink()  # the home was wiped, the registrations remain
    assert sorted(uninstall()) == ["remove", "remove"]
    assert load(home / ".claude" / "settings.json") == json.loads(USER_SETTINGS)
    assert load(home / ".claude.json") == json.loads(CLAUDE_JSON)


def test_uninstall_reports_a_malformed_file_and_handles_the_others(home: Path) -> None:
    write(home / ".claude" / "settings.json", USER_SETTINGS)
    claude_bytes = write(home / ".claude.json", CLAUDE_JSON)
    init()
    broken = b'{"hooks": '
    (home / ".claude" / "settings.json").write_bytes(broken)
    plan = plan_uninstall(claude=False)
    actions = {step.path.name: step.action for step in plan.steps}
    assert actions == {"settings.json": "error", ".claude.json": "restore"}
    apply_uninstall(plan)
    assert (home / ".claude" / "settings.json").read_bytes() == broken
    assert (home / ".claude.json").read_bytes() == claude_bytes


def test_python_older_than_311_is_refused() -> None:
    with pytest.raises(InstallError, match=r"Python 3\.11 or newer; this is Python 3\.10\.14"):
        paths.check_python((3, 10, 14))
    paths.check_python((3, 11, 0))
    paths.check_python((3, 14, 0))


def test_every_registered_command_runs_under_sh(home: Path, tmp_path: Path) -> None:
    """The hook commands survive `sh -c` quoting, even with spaces and quotes in paths."""
    import subprocess

    bin_dir = tmp_path / "it's a dir"
    bin_dir.mkdir()
    fake = bin_dir / "agentctx"
    fake.write_text('#!/bin/sh\nprintf "%s|" "$AGENTCTX_HOME" "$@"\n', encoding="utf-8")
    fake.chmod(0o755)
    os.environ["AGENTCTX_HOME"] = str(tmp_path / "home with space")
    try:
        init(launcher=str(fake))
    finally:
        os.environ["AGENTCTX_HOME"] = str(home / ".agentctx")
    found = entries.our_handlers(load(home / ".claude" / "settings.json"))
    for spec in HOOKS:
        command = found[spec.event][0][1]["command"]
        out = subprocess.run(["sh", "-c", command], capture_output=True, text=True,
                             check=True).stdout
        assert out == f"{tmp_path / 'home with space'}|-I|-m|agentctx|hook|{spec.argument}|"


@pytest.mark.parametrize("body", ['echo "error: unknown option \'-s\'" >&2; exit 1', "exit 0"],
                         ids=["claude fails", "claude writes nothing"])
def test_a_claude_that_cannot_register_falls_back_to_a_direct_edit(home: Path, tmp_path: Path,
                                                                   body: str) -> None:
    fake = tmp_path / "bin" / "claude"
    fake.parent.mkdir()
    fake.write_text(f"#!/bin/sh\n{body}\n", encoding="utf-8")
    fake.chmod(0o755)
    claude_bytes = write(home / ".claude.json", CLAUDE_JSON)
    plan = plan_init("user", launcher=PYTHON, claude=str(fake))
    steps = apply_init(plan)
    mcp_step = next(step for step in steps if step.kind == "mcp")
    assert "edited the file directly instead" in mcp_step.detail
    assert load(home / ".claude.json")["mcpServers"]["agentctx"] == \
        entries.mcp_entry(paths.launch_argv(PYTHON), None)
    uninstall()
    assert (home / ".claude.json").read_bytes() == claude_bytes
