"""Ways to run the ``agentctx`` command in a test.

:func:`run_cli` runs it in the test's own process through typer's ``CliRunner``: the same typer
app and the same error handling as the console script (:func:`agentctx.cli.run_cli`: one line on
stderr and an exit code, never a traceback), with stdin, stdout, stderr, the environment and the
working folder of its own. It is what CLI behaviour is tested with: no interpreter start per call.
:func:`invoke` is the same entry point with only its output captured.

:func:`run_process` starts the real ``python -m agentctx`` in a subprocess. It is kept for what
only a process shows: the exit code the shell sees, a hook's stdin and stdout contract, import
hygiene, failing open, a detached child.

:func:`run_cli` and :func:`run_process` return a :class:`subprocess.CompletedProcess`
(``returncode``, ``stdout``, ``stderr``), so a test reads the same either way.
"""

from __future__ import annotations

import contextlib
import io
import os
import subprocess
import sys
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path
from typing import NamedTuple

from typer.testing import CliRunner

from agentctx.cli import run_cli as cli_main


def run_cli(*args: str, cwd: Path | None = None, stdin: str | None = None,
            env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """Run ``agentctx <args>`` in this process (the isolated environment applies, ``env`` on top
    of it for the call) and return what it printed and its exit code."""
    runner = CliRunner()
    code = 0
    with runner.isolation(input=stdin, env=env) as (out, err, _mixed), \
            contextlib.chdir(cwd or os.getcwd()):
        try:
            cli_main(list(args))
        except SystemExit as exit_:
            code = _exit_code(exit_.code)
        finally:
            sys.stdout.flush()
            sys.stderr.flush()
        stdout = out.getvalue().decode("utf-8", "replace")
        stderr = err.getvalue().decode("utf-8", "replace")
    return subprocess.CompletedProcess(["agentctx", *args], code, stdout, stderr)


def _exit_code(code: object) -> int:
    """The status a process would exit with for ``sys.exit(code)``."""
    if code is None:
        return 0
    if isinstance(code, int):
        return code
    print(code, file=sys.stderr)
    return 1


class Ran(NamedTuple):
    """What a command printed and how it ended."""

    code: int
    out: str
    err: str


def invoke(*args: str) -> Ran:
    """Run ``agentctx <args>`` in this process (the isolated home applies)."""
    out, err = io.StringIO(), io.StringIO()
    code = 0
    with redirect_stdout(out), redirect_stderr(err):
        try:
            cli_main(list(args))
        except SystemExit as done:
            code = done.code if isinstance(done.code, int) else (0 if done.code is None else 1)
    return Ran(code, out.getvalue(), err.getvalue())


def run_process(*args: str, cwd: Path | None = None, stdin: str | None = None,
                env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """Run the real ``agentctx`` command in a subprocess (the isolated environment applies)."""
    return subprocess.run([sys.executable, "-m", "agentctx", *args], cwd=cwd, input=stdin,
                          capture_output=True, text=True, timeout=120,
                          env={**os.environ, **(env or {})})
