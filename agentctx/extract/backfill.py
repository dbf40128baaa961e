"""Backfill: extract a project's existing Claude Code transcripts, oldest first.

Claude Code keeps transcripts in ``~/.claude/projects/<folder>/<session>.jsonl`` (or under
``$CLAUDE_CONFIG_DIR/projects``); the folder name is a lossy encoding of the working directory, so
each transcript's own ``cwd`` decides whether it belongs to the project (same project identity,
or a folder inside the project's root). Subagent transcripts (``<session>/subagents/``) are part
of their session and are not extracted on their own.

:func:`find` lists what is not yet extracted with its size and estimated cost, without writing
anything; the caller confirms, then :func:`extract_all` runs each transcript through the normal
extraction (:func:`agentctx.extract.run.run`) with the transcript's last timestamp as the
records' ``valid_from``, so history lands at its real dates and supersessions stay in order.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from datetime import datetime
from pathlib import Path
from typing import NamedTuple

from agentctx.core import budget
from agentctx.core.gitinfo import identify
from agentctx.core.ids import parse_time
from agentctx.extract import tiers
from agentctx.extract.apply import Target
from agentctx.extract.run import Outcome, Request, estimate_usd, run, variable_block
from agentctx.extract.transcript import TranscriptError, peek_metadata, read_transcript
from agentctx.store import sessions
from agentctx.store.db import Store
from agentctx.store.models import Project

CONFIG_DIR_ENV = "CLAUDE_CONFIG_DIR"


class Candidate(NamedTuple):
    """One transcript with content not yet extracted."""

    path: Path
    session_id: str
    cwd: str | None
    started: str | None
    ended: str | None
    tier: tiers.TierPlan
    estimated_usd: float

    @property
    def new_tokens(self) -> int:
        """Estimated tokens not yet extracted."""
        return self.tier.content_tokens


def projects_dir() -> Path:
    """Where Claude Code keeps transcripts: ``$CLAUDE_CONFIG_DIR/projects`` or ``~/.claude/…``."""
    configured = os.environ.get(CONFIG_DIR_ENV, "").strip()
    base = Path(configured).expanduser() if configured else Path.home() / ".claude"
    return base / "projects"


def transcripts(root: Path | None = None) -> Iterator[Path]:
    """Every session transcript under the projects folder (subagent files excluded)."""
    folder = root or projects_dir()
    if not folder.is_dir():
        return
    for project_folder in sorted(p for p in folder.iterdir() if p.is_dir()):
        yield from sorted(p for p in project_folder.glob("*.jsonl") if p.is_file())


def belongs(project: Project, cwd: str | None) -> bool:
    """Whether a transcript run in ``cwd`` belongs to ``project``."""
    if not cwd:
        return False
    root = project.root.rstrip(os.sep)
    if cwd == root or cwd.startswith(root + os.sep):
        return True
    try:
        return identify(cwd).id == project.id
    except OSError:
        return False


def find(db: Store, project: Project, *, model: str, since: str | None = None,
         root: Path | None = None) -> list[Candidate]:
    """The project's transcripts with unextracted content, oldest first (reads only)."""
    since_moment = parse_time(since) if since else None
    found: list[Candidate] = []
    for path in transcripts(root):
        head = peek_metadata(path)
        if not belongs(project, head["cwd"]):
            continue
        try:
            transcript = read_transcript(path)
        except TranscriptError:
            continue
        if since_moment is not None and not _after(transcript.last_timestamp, since_moment):
            continue
        session_id = transcript.session_id or path.stem
        offset = sessions.extract_offset(db, session_id)
        new = transcript.since(offset if offset <= transcript.end_offset else 0)
        if not any(entry.role in ("user", "assistant", "summary") for entry in new):
            continue
        tier = tiers.plan(tiers.format_entries(new))
        found.append(Candidate(path, session_id, transcript.cwd, transcript.first_timestamp,
                               transcript.last_timestamp, tier, 0.0))
    found.sort(key=lambda c: (c.started or "", c.path.name))
    variable = budget.estimate_tokens(variable_block(
        db, Target(project.id, "backfill", None, project.root)))
    priced: list[Candidate] = []
    for number, candidate in enumerate(found):
        # The prompt cache lives an hour, so only the first transcript pays for writing it.
        usd = estimate_usd(candidate.tier, model, variable, cache_warm=number > 0)
        priced.append(candidate._replace(estimated_usd=usd))
    return priced


def _after(stamp: str | None, moment: datetime) -> bool:
    if not stamp:
        return True
    try:
        return parse_time(stamp) >= moment
    except ValueError:
        return True


def extract_all(candidates: list[Candidate], project_id: str,
                progress: Callable[[int, Candidate, Outcome], None] | None = None,
                ) -> list[Outcome]:
    """Extract each candidate in order, with its real date as ``valid_from``."""
    outcomes = []
    for number, candidate in enumerate(candidates, start=1):
        outcome = run(Request(session_id=candidate.session_id, transcript=str(candidate.path),
                              valid_from=candidate.ended or candidate.started,
                              project_id=project_id))
        outcomes.append(outcome)
        if progress is not None:
            progress(number, candidate, outcome)
    return outcomes
