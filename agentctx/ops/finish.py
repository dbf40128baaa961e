"""What follows a session's end: its final extraction, then consolidation.

The SessionEnd hook only marks the session ended and spawns ``agentctx finish-session``, which
calls :func:`finish_session`; any other surface that finishes a session calls it too. Each step
runs as its own ``agentctx`` process with a time limit (its knob plus
:data:`STEP_GRACE_SECONDS`), so a step that hangs or crashes costs only itself: a failure is
reported and the next step still runs. One run per session at a time (a ``finish-<session>``
lock); a second one returns at once.
"""

from __future__ import annotations

import subprocess
import time
from collections.abc import Callable
from typing import NamedTuple

from agentctx.core import background, config
from agentctx.core.redact import redact

# Seconds allowed beyond each step's own configured time limit (start-up, writing results).
STEP_GRACE_SECONDS = 30
LOG_EVENT = "finish-session"

Say = Callable[[str], None]


class Step(NamedTuple):
    """One step of finishing a session and how it ended."""

    name: str  # "agentctx extract", "agentctx consolidate"
    ok: bool
    seconds: float
    problem: str | None  # one line, when it failed


def finish_session(session_id: str, project_id: str, transcript: str | None,
                   cfg: config.Config, *, say: Say, problem: Say) -> list[Step] | None:
    """Run the final extraction (when ``llm`` is on and there is a transcript), then
    consolidation of ``project_id``; ``None`` when a run for this session is already going.

    ``say`` gets every line worth keeping in the finish log (the steps' own output included);
    ``problem`` gets the one-line reason of each failed step (the caller logs it where problems
    go) — it is said too.
    """
    with background.exclusive(f"finish-{session_id}") as acquired:
        if not acquired:
            say(_line(session_id, "already running, nothing to do"))
            return None
        steps = []
        if transcript and cfg.get_bool("llm"):
            steps.append(run_step(["extract", "--session-id", session_id, "--transcript",
                                   transcript],
                                  cfg.get_int("llm_time_limit_s") + STEP_GRACE_SECONDS,
                                  session_id, say=say, problem=problem))
        steps.append(run_step(["consolidate", "--project", project_id],
                              cfg.get_int("consolidate_time_limit_s") + STEP_GRACE_SECONDS,
                              session_id, say=say, problem=problem))
    return steps


def run_step(args: list[str], timeout: int, session_id: str, *, say: Say, problem: Say) -> Step:
    """Run ``agentctx <args>`` to completion or ``timeout`` seconds, whichever comes first.

    The step's output (stdout and stderr) is passed to ``say`` as it was printed.
    """
    name = f"agentctx {args[0]}"
    started = time.monotonic()
    say(_line(session_id, f"{name} started"))

    def failed(message: str) -> Step:
        problem(message)
        say(_line(session_id, message))
        return Step(name, False, time.monotonic() - started, message)

    try:
        # -P and a cleaned environment: the step never imports the project's files.
        result = subprocess.run(background.python_command(args),
                                env=background.child_environment(),
                                stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                stderr=subprocess.STDOUT, text=True, errors="replace",
                                timeout=timeout, check=False)
    except subprocess.TimeoutExpired:
        return failed(f"{name} did not finish within {timeout} s and was stopped")
    except OSError as exc:
        return failed(f"cannot run {name}: {exc}")
    if result.stdout:
        say(redact(result.stdout.rstrip("\n")))
    elapsed = time.monotonic() - started
    if result.returncode != 0:
        return failed(f"{name} exited with {result.returncode} after {elapsed:.1f} s "
                      "(see finish-session.log)")
    say(_line(session_id, f"{name} done in {elapsed:.1f} s"))
    return Step(name, True, elapsed, None)


def _line(session_id: str, message: str) -> str:
    stamp = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    return f"{stamp} {LOG_EVENT} {session_id or '-'}: {redact(message)}"
