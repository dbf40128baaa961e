"""The CLI in this process, through its real entry point (:func:`agentctx.cli.run_cli`, which
turns errors into one line and an exit code), its output captured."""

from __future__ import annotations

import io
from contextlib import redirect_stderr, redirect_stdout
from typing import NamedTuple

from agentctx.cli import run_cli


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
            run_cli(list(args))
        except SystemExit as done:
            code = done.code if isinstance(done.code, int) else (0 if done.code is None else 1)
    return Ran(code, out.getvalue(), err.getvalue())
