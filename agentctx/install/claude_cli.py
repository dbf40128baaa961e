"""Registering the MCP server through Claude Code's own ``claude mcp add`` / ``remove``."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

from agentctx.install.entries import SERVER_NAME
from agentctx.install.jsonfile import InstallError

TIMEOUT_S = 60


def _run(argv: list[str], cwd: Path | None) -> None:
    try:
        done = subprocess.run(argv, cwd=cwd, stdin=subprocess.DEVNULL, capture_output=True,
                              text=True, timeout=TIMEOUT_S, check=False)
    except subprocess.TimeoutExpired:
        raise InstallError(f"'{' '.join(argv[:4])}' did not finish in {TIMEOUT_S} s") from None
    except OSError as exc:
        raise InstallError(f"cannot run {argv[0]}: {exc.strerror}") from None
    if done.returncode != 0:
        lines = [line for line in (done.stderr + "\n" + done.stdout).splitlines() if line.strip()]
        reason = lines[0].strip() if lines else f"exit status {done.returncode}"
        raise InstallError(f"'{' '.join(argv[:4])}' failed: {reason}")


def add(claude: str, scope: str, entry: dict[str, Any], cwd: Path | None) -> None:
    """``claude mcp add agentctx -s <scope> [-e K=V…] -- <command> <args…>``."""
    argv = [claude, "mcp", "add", SERVER_NAME, "-s", scope]
    for key, value in entry.get("env", {}).items():
        argv += ["-e", f"{key}={value}"]
    argv += ["--", entry["command"], *entry["args"]]
    _run(argv, cwd)


def remove(claude: str, scope: str, cwd: Path | None) -> None:
    """``claude mcp remove agentctx -s <scope>``."""
    _run([claude, "mcp", "remove", SERVER_NAME, "-s", scope], cwd)
