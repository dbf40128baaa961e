"""Consolidation's checks that what Claude sees is still true and not repeated.

* :func:`check_paths` — every current record's named paths (its text and its file links, see
  :mod:`agentctx.context.pathcheck`) checked against the project folder, the outcome stored
  (:mod:`agentctx.store.pathstate`) for ``status``, the TUI, the web view, ``agentctx verify``
  and the digest.
* :func:`measure_stated` — which records the memory files Claude Code loads already state, for
  the project's root and its recently used worktrees (:mod:`agentctx.drift.loaded`).
"""

from __future__ import annotations

import os
from typing import NamedTuple

from agentctx.context import pathcheck
from agentctx.drift import loaded
from agentctx.drift.coverage import Embedder
from agentctx.store import pathstate
from agentctx.store import records as rec
from agentctx.store.db import Store
from agentctx.store.models import Project
from agentctx.store.selection import Selection


class PathCheck(NamedTuple):
    """What a path check of one project found."""

    naming: int  # current records that name at least one path
    stale: int  # of those, possibly stale (every named path gone, not kept)


def check_paths(db: Store, project: Project, root: str | None = None) -> PathCheck:
    """Check the paths every current record of ``project`` names, under ``root`` (default its
    root), and store the outcome."""
    root = root or project.root
    current = rec.list_records(db, Selection(project_id=project.id))
    links = pathstate.file_links(db, [r.id for r in current])
    states: list[tuple[str, list[str], list[str]]] = []
    for record in current:
        paths = pathcheck.named_paths(f"{record.title} {record.body}", root,
                                   links=links.get(record.id, ()))
        if paths:
            states.append((record.id, paths, pathcheck.gone(root, paths)))
    if os.path.isdir(root):  # an unreachable folder says nothing about the records
        pathstate.replace_project(db, project.id, states)
    return PathCheck(len(states), pathstate.count_possibly_stale(db, project.id))


def measure_stated(db: Store, project: Project, *,
                   encoder: Embedder | None = None) -> int:
    """Measure what the memory files of the project's folders state; returns the records stated
    at its root."""
    at_root = 0
    for folder in loaded.folders_of(db, project):
        measured = loaded.refresh(db, project, folder, encoder=encoder)
        if folder == project.root:
            at_root = len(measured.stated)
    return at_root
