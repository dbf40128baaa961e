"""The real Claude Code CLI for end-to-end tests: a pinned npm install, and a harness to drive it.

:func:`ensure_claude` installs ``@anthropic-ai/claude-code`` at :data:`PINNED` into
``<repo>/.build/npm`` (once; a file lock keeps concurrent test runs from racing) and returns the
path of a ``claude`` executable that reports that version. :class:`ClaudeHarness` runs it in a
temporary HOME against the Messages stand-in, offline.
"""

from __future__ import annotations

import fcntl
import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tests.e2e.script import is_claude_code
from tests.support.messages_standin import MessagesStandIn, StandInRequest

PINNED = "2.1.328"
PACKAGE = "@anthropic-ai/claude-code"
REPO = Path(__file__).resolve().parents[2]
NPM_DIR = REPO / ".build" / "npm"
LAUNCHER = str(Path(sys.executable).parent / "agentctx")
RUN_TIMEOUT_S = 180
NPM_TIMEOUT_S = 900


class ClaudeUnavailable(RuntimeError):
    """The pinned Claude Code could not be installed or does not run."""


def _reports_pinned(binary: Path) -> bool:
    try:
        done = subprocess.run([str(binary), "--version"], capture_output=True, text=True,
                              timeout=60, check=False,
                              env={**os.environ, "DISABLE_TELEMETRY": "1",
                                   "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1"})
    except (OSError, subprocess.TimeoutExpired):
        return False
    return done.returncode == 0 and done.stdout.strip().startswith(PINNED)


def _candidates() -> list[Path]:
    modules = NPM_DIR / "node_modules"
    # the wrapper's bin (its postinstall copies the native binary over it), else the native
    # package itself, for npm setups that skip install scripts
    found = [modules / ".bin" / "claude"]
    found += sorted((modules / "@anthropic-ai").glob("claude-code-*/claude"))
    return [path for path in found if path.is_file()]


def ensure_claude() -> Path:
    """A ``claude`` executable at the pinned version, installing it with npm when needed."""
    NPM_DIR.mkdir(parents=True, exist_ok=True)
    with open(NPM_DIR.parent / "npm.lock", "a+b") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        for candidate in _candidates():
            if _reports_pinned(candidate):
                return candidate
        npm = shutil.which("npm")
        if npm is None:
            raise ClaudeUnavailable("npm is not on PATH: install Node.js and npm to run the "
                                    "end-to-end tests")
        done = subprocess.run([npm, "install", "--prefix", str(NPM_DIR), "--no-audit",
                               "--no-fund", "--loglevel=error", f"{PACKAGE}@{PINNED}"],
                              capture_output=True, text=True, timeout=NPM_TIMEOUT_S, check=False)
        if done.returncode != 0:
            raise ClaudeUnavailable(f"npm install {PACKAGE}@{PINNED} failed: "
                                    f"{done.stderr.strip()[-800:]}")
        for candidate in _candidates():
            if _reports_pinned(candidate):
                return candidate
        raise ClaudeUnavailable(f"{PACKAGE}@{PINNED} installed but no claude binary reports "
                                f"{PINNED} (looked in {NPM_DIR / 'node_modules'})")


@dataclass
class Run:
    """One ``claude -p`` run: its result object and Claude Code's requests meanwhile (agentctx's
    own extraction calls, from detached children of earlier sessions, are left out)."""

    result: dict[str, Any]
    requests: list[StandInRequest]
    stderr: str

    @property
    def session_id(self) -> str:
        """The session id Claude Code reported."""
        return str(self.result["session_id"])


class ClaudeHarness:
    """Claude Code in a temporary HOME, pointed at the stand-in, with ``claude`` on PATH."""

    def __init__(self, claude: Path, home: Path, project: Path, standin: MessagesStandIn) -> None:
        self.claude = claude
        self.home = home
        self.project = project
        self.standin = standin
        self.extra_path: list[Path] = []  # folders put on PATH before claude's

    def env(self) -> dict[str, str]:
        """The environment of every process: nothing of the caller's Claude or agentctx setup."""
        env = {key: value for key, value in os.environ.items()
               if not key.startswith(("AGENTCTX_", "ANTHROPIC_", "CLAUDE"))}
        path = ":".join([*(str(folder) for folder in self.extra_path), str(self.claude.parent),
                         "/usr/bin", "/bin"])
        env.update(HOME=str(self.home), PATH=path,
                   ANTHROPIC_BASE_URL=self.standin.base_url, ANTHROPIC_API_KEY="sk-ant-e2e-dummy",
                   DISABLE_TELEMETRY="1", CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1",
                   DISABLE_AUTOUPDATER="1")
        return env

    def run(self, argv: Sequence[str], *, cwd: Path | None = None,
            check: bool = True) -> subprocess.CompletedProcess[str]:
        """Run a command in the harness environment."""
        done = subprocess.run(list(argv), cwd=cwd or self.project, env=self.env(),
                              capture_output=True, text=True, timeout=RUN_TIMEOUT_S,
                              stdin=subprocess.DEVNULL, check=False)
        if check and done.returncode != 0:
            raise AssertionError(f"{' '.join(argv[:3])} exited {done.returncode}\n"
                                 f"stdout: {done.stdout[-2000:]}\nstderr: {done.stderr[-2000:]}")
        return done

    def agentctx(self, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        """The real ``agentctx`` launcher."""
        return self.run([LAUNCHER, *args], check=check)

    def claude_cli(self, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        """``claude <args>`` (for ``mcp list`` and friends)."""
        return self.run([str(self.claude), *args], check=check)

    def prompt(self, text: str, *, resume: str | None = None, fork: bool = False,
               allowed_tools: Sequence[str] = ()) -> Run:
        """``claude -p <text>`` (optionally ``--resume``, and ``--fork-session`` with it);
        returns the run and its requests."""
        before = len(self.standin.requests)
        argv = [str(self.claude), "-p", text, "--output-format", "json"]
        if resume:
            argv += ["--resume", resume]
        if fork:
            argv.append("--fork-session")
        if allowed_tools:
            argv += ["--allowedTools", " ".join(allowed_tools)]
        done = self.run(argv)
        result = json.loads(done.stdout)
        assert not result.get("is_error"), result
        requests = [r for r in self.standin.requests[before:]
                    if r.path == "/v1/messages" and is_claude_code(r)]
        return Run(result, requests, done.stderr)

    def wait_for_background(self, timeout_s: float = 60.0) -> None:
        """Wait until no process of this HOME is left (detached hook children) — Linux only."""
        marker = b"\0HOME=" + str(self.home).encode() + b"\0"
        deadline = time.monotonic() + timeout_s
        proc = Path("/proc")
        if not proc.is_dir():
            return
        while time.monotonic() < deadline:
            alive = []
            for entry in proc.iterdir():
                if not entry.name.isdigit() or int(entry.name) == os.getpid():
                    continue
                try:
                    environ = (entry / "environ").read_bytes()
                    state = (entry / "stat").read_text().rsplit(")", 1)[-1].split()[0]
                except OSError:
                    continue
                if marker in b"\0" + environ and state != "Z":
                    alive.append(entry.name)
            if not alive:
                return
            time.sleep(0.1)
        raise AssertionError(f"background processes of {self.home} still running after "
                             f"{timeout_s:.0f} s")
