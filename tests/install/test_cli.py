"""The real ``agentctx init`` / ``uninstall`` commands, run as the user runs them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.install.conftest import (
    CLAUDE_JSON,
    PYTHON,
    USER_SETTINGS,
    load,
    read_only,
    run_cli,
    write,
)


def test_init_then_uninstall_round_trip(home: Path) -> None:
    settings_bytes = write(home / ".claude" / "settings.json", USER_SETTINGS)
    claude_bytes = write(home / ".claude.json", CLAUDE_JSON, mode=0o600)

    done = run_cli("init", "--yes")
    assert done.returncode == 0, done.stderr
    assert "add 9 hook handlers" in done.stdout
    assert "via a direct edit" in done.stdout  # no claude on PATH
    assert (home / ".agentctx" / "agentctx.db").exists()  # the store is created up front
    assert load(home / ".agentctx" / "config.json") == {}
    assert load(home / ".claude.json")["mcpServers"]["agentctx"]["command"] == PYTHON

    again = run_cli("init")
    assert again.returncode == 0 and "nothing changed" in again.stdout

    gone = run_cli("uninstall", "--yes")
    assert gone.returncode == 0, gone.stderr
    assert (home / ".claude" / "settings.json").read_bytes() == settings_bytes
    assert (home / ".claude.json").read_bytes() == claude_bytes
    assert (home / ".agentctx" / "agentctx.db").exists()  # data is kept without --purge


def test_model_flags_set_the_config(home: Path) -> None:
    done = run_cli("init", "--no-llm", "--no-embeddings", "--yes")
    assert done.returncode == 0, done.stderr
    assert load(home / ".agentctx" / "config.json") == {"embeddings": False, "llm": False}


def test_init_and_uninstall_without_a_terminal_need_yes(home: Path) -> None:
    """No terminal to ask on (a script, CI): nothing is applied without --yes, as forget and
    sync --apply refuse; one line says what to add."""
    claude_bytes = write(home / ".claude.json", CLAUDE_JSON, mode=0o600)
    refused = run_cli("init")
    assert refused.returncode == 1, refused
    assert refused.stderr.count("\n") == 1 and "add --yes" in refused.stderr
    assert "add 9 hook handlers" in refused.stdout  # what it would do is shown
    assert (home / ".claude.json").read_bytes() == claude_bytes
    assert not (home / ".claude" / "settings.json").exists()
    assert run_cli("init", "--yes").returncode == 0
    installed = (home / ".claude.json").read_bytes()
    kept = run_cli("uninstall")
    assert kept.returncode == 1 and "add --yes" in kept.stderr
    assert (home / ".claude.json").read_bytes() == installed
    assert run_cli("uninstall", "--yes").returncode == 0
    assert (home / ".claude.json").read_bytes() == claude_bytes


def test_dry_run_writes_nothing(home: Path) -> None:
    done = run_cli("init", "--dry-run")
    assert done.returncode == 0
    assert "dry run" in done.stdout
    assert not (home / ".claude").exists() and not (home / ".claude.json").exists()
    assert not (home / ".agentctx").exists()


def test_malformed_settings_fail_with_one_clear_line(home: Path) -> None:
    bad = write(home / ".claude" / "settings.json", '{"hooks": {"Stop": []},,}')
    claude_bytes = write(home / ".claude.json", CLAUDE_JSON)
    done = run_cli("init", "--yes")
    assert done.returncode == 1
    assert done.stderr.startswith("agentctx: ~/.claude/settings.json is not valid JSON (line 1")
    assert "Traceback" not in done.stderr and len(done.stderr.strip().splitlines()) == 1
    assert (home / ".claude" / "settings.json").read_bytes() == bad
    assert (home / ".claude.json").read_bytes() == claude_bytes
    assert not (home / ".agentctx").exists()


def test_unknown_scope_is_refused(home: Path) -> None:
    done = run_cli("init", "--scope", "global")
    assert done.returncode != 0 and "user or project" in done.stderr
    assert not (home / ".claude").exists()


def test_project_scope_from_a_subfolder(home: Path, project_dir: Path) -> None:
    done = run_cli("init", "--scope", "project", "--yes", cwd=project_dir / "src")
    assert done.returncode == 0, done.stderr
    assert load(project_dir / ".mcp.json")["mcpServers"]["agentctx"]["args"] == [
        "-I", "-m", "agentctx", "mcp"]
    hooks = load(project_dir / ".claude" / "settings.json")["hooks"]
    assert hooks["UserPromptSubmit"][0]["hooks"][0]["command"] == \
        f"{PYTHON} -I -m agentctx hook prompt"
    gone = run_cli("uninstall", "--yes")
    assert gone.returncode == 0, gone.stderr
    assert not (project_dir / ".mcp.json").exists() and not (project_dir / ".claude").exists()


def test_purge_needs_confirmation_then_deletes_the_home(home: Path) -> None:
    assert run_cli("init", "--yes").returncode == 0
    refused = run_cli("uninstall", "--purge")  # no terminal, no --yes
    assert refused.returncode == 1 and "--yes" in refused.stderr
    assert (home / ".agentctx" / "agentctx.db").exists()
    assert (home / ".claude.json").exists()  # refused before anything changed
    done = run_cli("uninstall", "--purge", "--yes")
    assert done.returncode == 0, done.stderr
    assert not (home / ".agentctx").exists()
    assert not (home / ".claude.json").exists() and not (home / ".claude").exists()


def test_purge_refuses_a_folder_that_is_not_an_agentctx_home(home: Path, tmp_path: Path) -> None:
    precious = tmp_path / "thesis"
    precious.mkdir()
    (precious / "chapter1.tex").write_text("…", encoding="utf-8")
    done = run_cli("uninstall", "--purge", "--yes", extra_env={"AGENTCTX_HOME": str(precious)})
    assert done.returncode == 1 and "does not look like an agentctx home" in done.stderr
    assert (precious / "chapter1.tex").exists()


def test_uninstall_with_nothing_installed(home: Path) -> None:
    done = run_cli("uninstall", "--yes")
    assert done.returncode == 0
    assert "no agentctx hooks or MCP registration found" in done.stdout


def test_uninstall_exits_non_zero_when_a_file_cannot_be_cleaned(home: Path) -> None:
    assert run_cli("init", "--yes").returncode == 0
    settings = home / ".claude" / "settings.json"
    data = load(settings)
    settings.write_text(json.dumps(data)[:-1], encoding="utf-8")  # truncated by some editor
    done = run_cli("uninstall", "--yes")
    assert done.returncode == 1
    assert "left untouched" in done.stderr and "settings.json" in done.stderr
    assert not (home / ".claude.json").exists()  # the other file was still handled


def test_download_model_uses_a_local_model_folder(home: Path, tmp_path: Path) -> None:
    from tests.support import tiny_model

    model = tiny_model.build(tmp_path / "tiny-model")
    done = run_cli("init", "--yes", "--download-model",
                   extra_env={"AGENTCTX_EMBED_MODEL": str(model)})
    assert done.returncode == 0, done.stderr
    assert f"embedding model ready in {model}" in done.stdout


def test_a_failed_download_is_one_line_and_the_install_stands(home: Path) -> None:
    done = run_cli("init", "--yes", "--download-model",
                   extra_env={"AGENTCTX_EMBED_MODEL": "acme/no-such-model", "HF_HUB_OFFLINE": "1"})
    assert done.returncode == 1
    assert done.stderr.startswith("agentctx: the model download failed: ")
    assert "installation itself is complete" in done.stderr and "Traceback" not in done.stderr
    assert load(home / ".claude.json")["mcpServers"]["agentctx"]["command"] == PYTHON


def test_download_model_and_no_embeddings_contradict(home: Path) -> None:
    done = run_cli("init", "--download-model", "--no-embeddings")
    assert done.returncode == 1 and "contradict" in done.stderr
    assert not (home / ".claude").exists()


def test_a_read_only_claude_folder_leaves_nothing_half_installed(home: Path) -> None:
    claude_bytes = write(home / ".claude.json", CLAUDE_JSON, mode=0o600)
    (home / ".claude").mkdir()
    with read_only(home / ".claude"):
        done = run_cli("init", "--yes")
    assert done.returncode != 0
    [line] = done.stderr.splitlines()
    assert "~/.claude" in line and "nothing was changed" in line, line
    assert (home / ".claude.json").read_bytes() == claude_bytes
    assert not (home / ".claude" / "settings.json").exists()
    assert not (home / ".agentctx" / "install").exists()
    assert run_cli("doctor", "--json", "--quick").returncode != 0


def test_a_failed_hook_write_rolls_the_mcp_registration_back(
        home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from agentctx.install import apply_init, jsonfile, plan_init
    from agentctx.install import state as install_state

    claude_bytes = write(home / ".claude.json", CLAUDE_JSON, mode=0o600)
    plan = plan_init("user", launcher=PYTHON, claude=False)
    real_write = jsonfile.write_atomic

    def disk_full_for_settings(path: Path, payload: bytes, mode: int) -> list[Path]:
        if path.name == "settings.json":
            raise jsonfile.InstallError(f"cannot write {path}: No space left on device")
        return real_write(path, payload, mode)

    monkeypatch.setattr(jsonfile, "write_atomic", disk_full_for_settings)
    with pytest.raises(jsonfile.InstallError, match="No space left"):
        apply_init(plan)
    assert (home / ".claude.json").read_bytes() == claude_bytes
    assert not (home / ".claude" / "settings.json").exists()
    assert install_state.load(home / ".agentctx").files == {}
