"""What Claude Code runs never runs the project's Python first: the commands ``init`` registers
and the plugin's, read back from their files and run as Claude Code runs them (``sh -c`` in the
project), with a hostile ``re.py``, ``agentctx/`` and ``sitecustomize.py`` there and on
``PYTHONPATH``."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from agentctx.install import apply_init, entries, plan_init
from tests.install.conftest import LAUNCHER, PYTHON, load
from tests.install.test_plugin import PLUGIN

HOSTILE = ("re", "sitecustomize", "usercustomize", "json", "agentctx/__init__")


def _plant(project: Path, mark: Path) -> None:
    for name in HOSTILE:
        target = project / f"{name}.py"
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(f"open({str(mark)!r}, 'a').write({name!r} + '\\n')\n"
                          f"print('project code ran: {name}')\n", encoding="utf-8")


def _run(command: str, project: Path, stdin: str, extra: dict[str, str] | None = None,
         ) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": f"{project}:{project / 'lib'}", "PYTHONUSERBASE":
           str(project), "PYTHONSTARTUP": str(project / "re.py"), **(extra or {})}
    return subprocess.run(["/bin/sh", "-c", command], cwd=project, input=stdin, env=env,
                          capture_output=True, text=True, timeout=60, check=False)


@pytest.fixture
def hostile(project_dir: Path, tmp_path: Path) -> tuple[Path, Path]:
    mark = tmp_path / "ran.txt"
    _plant(project_dir, mark)
    _plant(project_dir / "lib", mark)
    return project_dir, mark


def _payload(project: Path, event: str) -> str:
    return json.dumps({"session_id": "5b0c2a8e-0000-4000-8000-000000000001", "cwd": str(project),
                       "hook_event_name": event, "source": "startup", "prompt": "what db?",
                       "transcript_path": str(project / "t.jsonl")})


@pytest.mark.parametrize("scope", ["user", "project"])
def test_registered_hooks_run_no_project_code(home: Path, hostile: tuple[Path, Path],
                                              scope: str) -> None:
    project, mark = hostile
    apply_init(plan_init(scope, cwd=project, claude=False))
    settings = (home / ".claude" / "settings.json" if scope == "user"
                else project / ".claude" / "settings.json")
    found = entries.our_handlers(load(settings))
    assert set(found) == {spec.event for spec in entries.HOOKS}
    for event, handlers in found.items():
        done = _run(str(handlers[0][1]["command"]), project, _payload(project, event))
        assert done.returncode == 0, (event, done.stderr)
        assert "project code ran" not in done.stdout + done.stderr, event
        assert "Traceback" not in done.stderr
    assert not mark.exists(), mark.read_text()


def test_the_registered_mcp_server_runs_no_project_code(home: Path,
                                                        hostile: tuple[Path, Path]) -> None:
    project, mark = hostile
    apply_init(plan_init("project", cwd=project, claude=False))
    server = load(project / ".mcp.json")["mcpServers"]["agentctx"]
    command = " ".join(map(repr, [server["command"], *server["args"]]))
    done = _run(command, project, "")  # stdin at its end: the server stops
    assert "project code ran" not in done.stdout + done.stderr
    assert not mark.exists(), mark.read_text()


def test_the_plugin_hooks_run_no_project_code(hostile: tuple[Path, Path],
                                              tmp_path: Path) -> None:
    project, mark = hostile
    folder = tmp_path / "launcher-bin"
    folder.mkdir()
    (folder / "agentctx").symlink_to(LAUNCHER)
    extra = {"PATH": f"{folder}:/usr/bin:/bin", "CLAUDE_PLUGIN_ROOT": str(PLUGIN)}
    for event, groups in load(PLUGIN / "hooks" / "hooks.json")["hooks"].items():
        done = _run(groups[0]["hooks"][0]["command"], project, _payload(project, event), extra)
        assert done.returncode == 0, (event, done.stderr)
        assert "project code ran" not in done.stdout + done.stderr, event
    assert not mark.exists(), mark.read_text()


def test_reinit_upgrades_a_script_registration_in_place(home: Path) -> None:
    settings = home / ".claude" / "settings.json"
    settings.parent.mkdir(parents=True, exist_ok=True)
    settings.write_text(json.dumps({"hooks": {"Stop": [{"hooks": [
        {"type": "command", "command": f"{LAUNCHER} hook stop"}]}]}}), encoding="utf-8")
    apply_init(plan_init("user", claude=False))
    (handler,) = [h for _, h in entries.our_handlers(load(settings))["Stop"]]
    assert handler["command"] == f"{PYTHON} -I -m agentctx hook stop"
