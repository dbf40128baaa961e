"""What the memory files Claude Code loads already state, per project folder (precomputed).

The drift scan's coverage (:mod:`agentctx.drift.loaded`) finds which current records
``CLAUDE.md`` and its imports, ``AGENTS.md`` where it is the one read, and ``MEMORY.md``'s head
already state; it is stored here with what it was measured on — each file's size and mtime (and
the auto memory switch's value) — so SessionStart and the per-prompt hook check it with a few
``stat`` calls (:mod:`agentctx.context.already`) instead of reading anything.

``files`` entries are ``["f", path, size, mtime_ns]`` (size ``-1``: the file did not exist,
``-2``: a folder) and ``["e", name, value]`` (an environment variable), each optionally followed
by the name of the one memory file it decides about (``MEMORY.md``: its text, the settings and
the switch of auto memory); ``stated`` maps a record id to ``[the file that states it, the
record's fingerprint]`` (its last change), so an edited record is no longer taken as stated.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence

from agentctx.core.ids import now_iso
from agentctx.core.lean import NamedTuple
from agentctx.store.db import Store


class Coverage(NamedTuple):
    """A stored measurement of one project folder's memory files."""

    project_id: str
    folder: str
    files: tuple[tuple[object, ...], ...]
    stated: dict[str, tuple[str, str]]  # record id -> (file, fingerprint)
    computed_at: str


def save(db: Store, project_id: str, folder: str, files: Sequence[Sequence[object]],
         stated: Mapping[str, tuple[str, str]]) -> None:
    """Store (replace) the measurement of ``folder`` for ``project_id``."""
    db.execute("INSERT INTO stated_coverage (project_id, folder, files, stated, computed_at) "
               "VALUES (?, ?, ?, ?, ?) ON CONFLICT (project_id, folder) DO UPDATE SET "
               "files = excluded.files, stated = excluded.stated, "
               "computed_at = excluded.computed_at",
               (project_id, folder, json.dumps([list(f) for f in files]),
                json.dumps({rid: list(value) for rid, value in stated.items()}), now_iso()))


def load(db: Store, project_id: str, folder: str) -> Coverage | None:
    """The stored measurement of ``folder`` (``None`` when there is none)."""
    row = db.one("SELECT files, stated, computed_at FROM stated_coverage WHERE project_id = ? "
                 "AND folder = ?", (project_id, folder))
    if row is None:
        return None
    try:
        files = tuple(tuple(entry) for entry in json.loads(str(row[0])))
        stated = {str(rid): (str(value[0]), str(value[1]))
                  for rid, value in json.loads(str(row[1])).items()}
    except (ValueError, TypeError, IndexError, AttributeError):
        return None
    return Coverage(project_id, folder, files, stated, str(row[2]))


def folders(db: Store, project_id: str) -> list[str]:
    """The folders of ``project_id`` with a stored measurement."""
    return [str(row[0]) for row in db.rows(
        "SELECT folder FROM stated_coverage WHERE project_id = ? ORDER BY folder",
        (project_id,))]
