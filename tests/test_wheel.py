"""The built wheel: every file agentctx needs at run time, and a clean install that works.

The quick test builds the wheel from a copy of the source with files of the kinds other parts
add (Textual ``.tcss`` styles, web assets, a built bundle under ``dist/``) and finds each file
under ``agentctx/`` in it. The slow one (``-m slow``; ``make test-wheel``) installs the real wheel
into a fresh virtual environment, not editable, and runs agentctx from there: ``--version``,
``init``, ``doctor``, hooks on real payloads, the MCP server over stdio, the benchmark and
``demo``.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import venv
import zipfile
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import ClientSession, StdioServerParameters, stdio_client

from agentctx import __version__
from tests.conftest import REPO
from tests.hooks.conftest import at, check_contract, payloads

DATA_FILES = (
    "agentctx/py.typed",
    "agentctx/data/prices.json",
    "agentctx/data/common_words.txt",
    "agentctx/data/software_words.txt",
    "agentctx/benchmarks/data/coding_history.json",
    "agentctx/benchmarks/data/coding_queries_tuning.json",
    "agentctx/benchmarks/data/coding_queries_heldout.json",
    "agentctx/web/static/index.html",
    "agentctx/web/static/web.js",
    "agentctx/web/static/graph.js",
    "agentctx/web/static/web.css",
    "agentctx/web/static/icon.svg",
    "agentctx/benchmarks/data/projects/pulsepass/history.json",
)
# Files of the kinds the TUI and the web view ship, placed in the copy that is built.
ADDED_ASSETS = (
    "agentctx/tui/app.tcss",
    "agentctx/tui/styles/dark.tcss",
    "agentctx/web/static/index.html",
    "agentctx/web/static/app.js",
    "agentctx/web/static/style.css",
    "agentctx/web/static/icon.svg",
    "agentctx/web/static/dist/bundle.min.js",
)
BUILD_TIMEOUT_S = 300


def build_wheel(source: Path, out: Path) -> Path:
    """Build the wheel of ``source`` as pip would for an install; returns its path."""
    result = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q",
                             "-w", str(out), str(source)], capture_output=True, text=True,
                            timeout=BUILD_TIMEOUT_S, check=False)
    assert result.returncode == 0, result.stderr[-2000:]
    return next(out.glob("agentctx-*.whl"))


def _copy_source(target: Path) -> Path:
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc")
    shutil.copytree(REPO / "agentctx", target / "agentctx", ignore=ignore)
    for name in ("pyproject.toml", "README.md", ".gitignore"):
        shutil.copy2(REPO / name, target / name)
    return target


def test_every_file_under_the_package_ships(tmp_path: Path) -> None:
    """Data files of every kind land in the wheel; caches do not."""
    source = _copy_source(tmp_path / "src")
    for name in ADDED_ASSETS:
        (source / name).parent.mkdir(parents=True, exist_ok=True)
        (source / name).write_text(f"/* {name} */\n", encoding="utf-8")
    (source / "agentctx" / "web" / "__pycache__").mkdir(parents=True)
    (source / "agentctx" / "web" / "__pycache__" / "x.cpython-311.pyc").write_bytes(b"\0")
    wheel = build_wheel(source, tmp_path / "dist")
    names = set(zipfile.ZipFile(wheel).namelist())
    on_disk = {str(path.relative_to(source)) for path in (source / "agentctx").rglob("*")
               if path.is_file() and "__pycache__" not in path.parts}
    missing = sorted(on_disk - names)
    assert not missing, f"missing from the wheel: {missing}"
    assert set(DATA_FILES) | set(ADDED_ASSETS) <= names
    assert not [name for name in names if "__pycache__" in name or name.endswith(".pyc")]


# ---------------------------------------------------------------------------------- fresh venv


def _run(venv_bin: Path, *args: str, env: dict[str, str], cwd: Path,
         stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(venv_bin / "agentctx"), *args], input=stdin, cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=180, check=False)


def _mcp_search(command: Path, env: dict[str, str], cwd: Path) -> tuple[set[str], str]:
    async def session() -> tuple[set[str], str]:
        params = StdioServerParameters(command=str(command), args=["mcp"], env=env, cwd=cwd)
        async with stdio_client(params) as (read, write), ClientSession(read, write) as client:
            await client.initialize()
            names = {tool.name for tool in (await client.list_tools()).tools}
            found = await client.call_tool("ctx_search", {"query": "PostgreSQL orders"})
            text = "".join(getattr(block, "text", "") for block in found.content)
        return names, text

    return anyio.run(session)


@pytest.mark.slow
def test_the_wheel_installs_clean_and_works(tmp_path: Path) -> None:
    wheel = build_wheel(REPO, tmp_path / "dist")
    fresh = tmp_path / "fresh"
    venv.create(fresh, with_pip=True, symlinks=True)
    venv_bin = fresh / "bin"
    install = subprocess.run([str(venv_bin / "python"), "-m", "pip", "install", "-q",
                              str(wheel)], capture_output=True, text=True, timeout=900,
                             check=False)
    assert install.returncode == 0, install.stderr[-3000:]

    # the installed package, not the checkout: run from elsewhere, PATH and HOME of its own
    home = tmp_path / "home"
    project = tmp_path / "work" / "orders"
    (project / ".git").mkdir(parents=True)
    env = {key: value for key, value in os.environ.items()
           if not key.startswith(("AGENTCTX_", "ANTHROPIC_", "CLAUDE", "PYTHON"))}
    env.update(HOME=str(home), PATH=f"{venv_bin}:/usr/bin:/bin")
    where = subprocess.run([str(venv_bin / "python"), "-c",
                            "import agentctx, importlib.resources as r; print(agentctx.__file__);"
                            "print(r.files('agentctx').joinpath('data/common_words.txt')"
                            ".is_file())"], capture_output=True, text=True, env=env, cwd=project,
                           check=False)
    location, has_words = where.stdout.split()
    assert location.startswith(str(fresh)) and has_words == "True", where
    assert not list(fresh.glob("lib/python*/site-packages/__editable__*"))

    version = _run(venv_bin, "--version", env=env, cwd=project)
    assert version.stdout == f"agentctx {__version__}\n", version.stderr

    init = _run(venv_bin, "init", "--yes", env=env, cwd=project)
    assert init.returncode == 0, init.stderr
    recorded = _run(venv_bin, "record", "decision", "Use PostgreSQL 16 for the orders service",
                    "--body", "Row-level locking and JSONB.", "--json", env=env, cwd=project)
    record_id = json.loads(recorded.stdout)["id"]

    # hooks on real payloads, as Claude Code runs them (the launcher init registered)
    settings = json.loads((home / ".claude" / "settings.json").read_text(encoding="utf-8"))
    command = settings["hooks"]["SessionStart"][0]["hooks"][0]["command"]
    # isolated mode: nothing of the project's environment runs before agentctx decides
    assert command == f"{venv_bin / 'python'} -I -m agentctx hook session-start"
    start = at(payloads("SessionStart")[0], project)
    hook = subprocess.run(shlex.split(command), input=json.dumps(start), cwd=project, env=env,
                          capture_output=True, text=True, timeout=180, check=False)
    assert hook.returncode == 0 and hook.stderr == ""
    document: dict[str, Any] | None = check_contract(hook.stdout)
    assert document is not None  # the digest names the record by its short id
    shown = re.findall(r"\[([0-9A-Z]{8,26})\]", document["hookSpecificOutput"]["additionalContext"])
    assert any(record_id.startswith(short) for short in shown), shown
    prompt = at(payloads("UserPromptSubmit")[0], project,
                prompt="Which database does the orders service use, PostgreSQL?")
    turn = _run(venv_bin, "hook", "prompt", env=env, cwd=project, stdin=json.dumps(prompt))
    assert turn.returncode == 0 and check_contract(turn.stdout) is None  # already in the digest

    # the MCP server over stdio
    tools, answer = _mcp_search(venv_bin / "agentctx", env, project)
    assert {"ctx_search", "ctx_get", "ctx_record"} <= tools and len(tools) == 7
    assert "Use PostgreSQL 16 for the orders service" in answer

    # doctor: the registration, a real handshake and the hook latency, all from the wheel
    doctor = _run(venv_bin, "doctor", "--json", env=env, cwd=project)
    checks = {check["name"]: check for check in json.loads(doctor.stdout)["checks"]}
    for name in ("hooks", "mcp", "hook latency", "store"):
        assert checks[name]["status"] == "ok", checks[name]
    assert f"{venv_bin / 'python'} -I -m agentctx mcp" in checks["mcp"]["detail"]

    # package data at work: the benchmark data and the model-free demo
    bench = _run(venv_bin, "bench", "coding", "--held-out-only", "--no-hybrid", "--json",
                 env=env, cwd=project)
    assert bench.returncode == 0, bench.stderr
    assert json.loads(bench.stdout)["splits"]["held-out"]["prompts"] > 0
    demo = _run(venv_bin, "demo", "--no-tui", env=env, cwd=project)
    assert demo.returncode == 0, demo.stderr
    assert "project  harbor" in demo.stdout and "# " in demo.stdout
