"""The two profiles: the developer's global preferences and a project's detected profile.

* :func:`preferences` — the global ``preference`` records with their category and where each was
  learned (the project of the session extraction found it in), a page at a time;
  :func:`count_preferences` counts them.
* :func:`project_profile` — a project's current ``profile`` records (name, stack, commands, entry
  points) in their stable display order, :data:`PROFILE_KEYS`.
"""

from __future__ import annotations

from agentctx.core.lean import NamedTuple
from agentctx.store import records as rec
from agentctx.store.db import Store
from agentctx.store.models import GLOBAL_PROJECT, Record
from agentctx.store.selection import Selection

# The commands a project profile names, in display order (``command.<kind>`` keys).
COMMAND_KINDS = ("test", "build", "lint", "format", "run")
PROFILE_KEYS = ("name", "stack", *(f"command.{kind}" for kind in COMMAND_KINDS), "entry_points")
# How extraction writes a preference's category into its body.
CATEGORY_PREFIX = "Category: "


class Preference(NamedTuple):
    """A global developer preference: its rule is the record's title."""

    record: Record
    category: str | None  # as extraction classified it ("testing", "style" …)
    learned_in: str | None  # the project of the session it was learned in
    learned_in_name: str | None


def category_of(body: str) -> str | None:
    """The category extraction wrote at the start of a preference's body, if any."""
    first = body.strip().split("\n", 1)[0]
    if not first.startswith(CATEGORY_PREFIX):
        return None
    return first[len(CATEGORY_PREFIX):].rstrip(".").strip() or None


def preferences(db: Store, *, include_superseded: bool = False, limit: int | None = None,
                offset: int = 0) -> list[Preference]:
    """The developer's global preferences, explicit, then reinforced, then inferred, newest
    first within each, with their category and where each was learned."""
    found = rec.list_records(db,
                             Selection(project_id=GLOBAL_PROJECT, types=("preference",),
                                       state=("all" if include_superseded else "current")),
                             order="confidence", limit=limit, offset=offset)
    sessions = sorted({r.session_id for r in found if r.session_id})
    origin: dict[str, tuple[str, str | None]] = {}
    if sessions:
        marks = ",".join("?" * len(sessions))
        origin = {row[0]: (row[1], row[2]) for row in db.rows(
            f"SELECT s.session_id, s.project_id, p.name FROM sessions s LEFT JOIN projects p "
            f"ON p.id = s.project_id WHERE s.session_id IN ({marks})", sessions)}
    result = []
    for record in found:
        project, name = origin.get(record.session_id or "", (None, None))
        result.append(Preference(record, category_of(record.body), project, name))
    return result


def count_preferences(db: Store, *, include_superseded: bool = False) -> int:
    """How many preferences :func:`preferences` lists in all."""
    return rec.count_records(db,
                             Selection(project_id=GLOBAL_PROJECT, types=("preference",),
                                       state=("all" if include_superseded else "current")))


def project_profile(db: Store, project_id: str) -> list[Record]:
    """The project's current profile records in a stable order (name, stack, commands …)."""
    found = rec.list_records(db, Selection(project_id=project_id, types=("profile",)))
    order = list(PROFILE_KEYS)
    return sorted(found, key=lambda r: (order.index(r.key) if r.key in order else len(order),
                                        r.key or "", r.title))
