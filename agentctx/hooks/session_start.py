"""SessionStart (Tier 1): inject the project's digest, on every source.

The digest is served pre-computed when no record changed since it was built (and what it was
built on still holds: the folder, the memory files' coverage, the paths it checked), else built
inline (:func:`agentctx.context.digest.serve`), with the worktree's last handover added. It is
injected again on ``resume``, ``compact``, ``clear`` and ``fork`` (SessionStart is the reliable
place after a resume). A second firing with the same (session, source) within
``resume_dedup_seconds`` injects the same text but records no second receipt. After ``compact``
and ``clear`` the context is gone, so the session's set of already-injected records is reset
before the digest's records are added to it. A ``fork`` is a new session holding a copy of
another's conversation (whose transcript Claude Code writes only later): the records agentctx
injected into that conversation — the set of the session it was forked from
(:func:`fork_parent`) — join the new session's set, so the per-prompt hook does not inject them
again. The receipt names the records left out because a memory file Claude Code
loads already states them.
"""

from __future__ import annotations

import os
import sqlite3
from datetime import timedelta

from agentctx.context import digest
from agentctx.core import safeio
from agentctx.core.ids import now as clock_now
from agentctx.core.ids import to_iso
from agentctx.hooks.event import HookContext, describe, log_problem
from agentctx.store import digests, records, sessions, teamstate
from agentctx.store.db import Store
from agentctx.store.errors import StoreLocked
from agentctx.store.selection import Selection

EVENT = "SessionStart"
RESET_SOURCES = ("compact", "clear")
FORK_SOURCE = "fork"
# A forked conversation's last prompt came at most this long before its last response, and
# clocks may differ by a little.
FORK_TURN_MAX_S = 900
FORK_SLACK_S = 2


def handle(ctx: HookContext) -> str | None:
    """Serve the digest; returns the text to inject (``None`` for nothing)."""
    db = ctx.store()
    resolved = ctx.resolved()
    project = resolved.project
    if project.paused:
        return None
    session_id = ctx.session_id
    source = ctx.text("source") or "startup"
    fresh = digests.load_fresh(db, project.id)
    if fresh is None and not records.list_records(db,
                                                  Selection(project_id=project.id,
                                                            types=("profile",)),
                                                  limit=1):
        _detect_profile(ctx)
    served = digest.serve(db, project, resolved.worktree, cfg=ctx.cfg, fresh=fresh)
    with db.write():
        sessions.ensure(db, session_id, project.id, cwd=ctx.cwd,
                        transcript_path=ctx.transcript_path)
        if source in RESET_SOURCES:
            sessions.reset_seen(db, session_id)
        if source == FORK_SOURCE:
            parent = fork_parent(ctx)
            if parent is not None:  # what the copied conversation already holds
                sessions.mark_seen(db, session_id, sessions.seen(db, parent))
        if served.text:
            if not _just_recorded(ctx, source):
                sessions.add_receipt(db, session_id=session_id, project_id=project.id,
                                     event=EVENT, source=source, record_ids=served.record_ids,
                                     scores=(), tokens=served.tokens, chars=len(served.text),
                                     left_out=served.left_out)
            sessions.mark_seen(db, session_id, served.record_ids)
    _catch_up_team_file(ctx, project.id, resolved.worktree)
    return served.text or None


def _catch_up_team_file(ctx: HookContext, project_id: str, worktree: str) -> None:
    """Worktrees catch up here: when this worktree's team file is behind (see
    :func:`team_file_stale`), ``agentctx team sync`` runs in the background."""
    if not team_file_stale(ctx.store(), project_id, worktree):
        return
    try:  # a child must never wait on a FIFO or read /dev/zero: such a file is not synced
        safeio.check_shared_file(team_file_of(worktree), worktree)
    except OSError as exc:
        log_problem(ctx.event, ctx.session_id, f"team file unusable, not synced: {describe(exc)}")
        return
    try:
        from agentctx.core.background import spawn_detached

        spawn_detached(["team", "sync", "--quiet", "--cwd", worktree], log_name="team.log")
    except OSError as exc:
        log_problem(ctx.event, ctx.session_id, f"team file sync not started: {describe(exc)}")


def team_file_stale(db: Store, project_id: str, worktree: str) -> bool:
    """Whether the project keeps a team file and this worktree's is not what was last written
    (a pull, a merge, another worktree's writes). Two reads and a ``stat``."""
    if not teamstate.is_enabled(db, project_id):
        return False
    path = team_file_of(worktree)
    state = teamstate.written(db, path)
    try:
        found = os.stat(path)
    except OSError:
        return True
    return not (state is not None and found.st_size == state.size
                and found.st_mtime_ns == state.mtime_ns
                and state.change_counter == db.change_counter())


def team_file_of(worktree: str) -> str:
    """The path of a worktree's team file (``agentctx.team.file_for`` without its imports)."""
    return os.path.join(worktree, ".agentctx", "context.md")


def fork_parent(ctx: HookContext) -> str | None:
    """The session a forked one copied: Claude Code names no parent, but says how long ago the
    copied conversation's last response was (``seconds_since_last_response``) and writes the
    fork's transcript beside its parent's. The parent is the session of this project, with its
    transcript in the same folder, whose last prompt came before that moment and most recently
    so, within :data:`FORK_TURN_MAX_S`; when none came before it, the first within
    :data:`FORK_SLACK_S` after it (``None`` when none fits: nothing is copied)."""
    waited = ctx.payload.get("seconds_since_last_response")
    transcript = ctx.transcript_path
    if not isinstance(waited, int | float) or isinstance(waited, bool) or waited < 0 \
            or transcript is None:
        return None
    answered = clock_now() - timedelta(seconds=float(waited))
    db, project_id, folder = ctx.store(), ctx.resolved().project.id, os.path.dirname(transcript)
    # Whole seconds blur the moment. The session whose last prompt came last at or before it is
    # the parent; failing that, the first one within the slack after it (a later one there is
    # another session begun just after the copied conversation's last response).
    parent = sessions.latest_before(
        db, project_id, folder, ctx.session_id, before=to_iso(answered),
        after=to_iso(answered - timedelta(seconds=FORK_TURN_MAX_S)))
    return parent or sessions.latest_before(
        db, project_id, folder, ctx.session_id,
        before=to_iso(answered + timedelta(seconds=FORK_SLACK_S)), after=to_iso(answered),
        earliest=True)


def _just_recorded(ctx: HookContext, source: str) -> bool:
    """Whether this (session, source) already got a receipt within ``resume_dedup_seconds``."""
    window = ctx.cfg.get_int("resume_dedup_seconds")
    if window <= 0:
        return False
    last = sessions.last_receipt(ctx.store(), ctx.session_id, EVENT, source)
    if last is None:
        return False
    cutoff = to_iso(clock_now() - timedelta(seconds=window))
    return last.created_at >= cutoff


def _detect_profile(ctx: HookContext) -> None:
    """Detect the profile of a project that has none yet; a failure is logged, not fatal."""
    try:
        from agentctx.context.project_profile import refresh

        refresh(ctx.store(), ctx.resolved().project)
    except (StoreLocked, sqlite3.OperationalError):
        raise  # the store itself is unavailable: the whole hook is skipped (one log line)
    except Exception as exc:
        log_problem(ctx.event, ctx.session_id, f"profile detection failed: {describe(exc)}")
