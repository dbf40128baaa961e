"""Which records a listing, a count or a search covers: one value, one SQL builder.

A :class:`Selection` names the project scope (a project, with or without the global profile, or
every project), the types, confidences and state (current, superseded or all), pinned records
only, a moment (what was in force then), a session, a file and a record scope. Listings
(:func:`agentctx.store.records.list_records`), counts and searches
(:func:`agentctx.store.search.search`) all turn it into SQL with :func:`where` or
:func:`conditions`, so a filter means the same everywhere and applies before a page or a
search's limit is cut.

On the hook hot path: standard library only, nothing heavier than a NamedTuple.
"""

from __future__ import annotations

from agentctx.core.ids import normalize_time
from agentctx.core.lean import NamedTuple
from agentctx.store.models import project_scope

# A record's state in a selection: in force now, replaced, or either.
STATES: tuple[str, ...] = ("current", "superseded", "all")


class Selection(NamedTuple):
    """The records a listing, count or search covers. ``project_id=None`` covers every project.

    ``as_of`` (any time :func:`agentctx.core.ids.normalize_time` reads) selects what was in
    force at that moment, archived records included, and then ``state`` does not apply.
    """

    project_id: str | None = None
    include_global: bool = False  # the developer's global profile beside the project
    types: tuple[str, ...] = ()
    confidences: tuple[str, ...] = ()
    state: str = "current"  # current | superseded | all
    pinned: bool = False  # pinned records only
    as_of: str | None = None
    session_id: str | None = None
    file: str | None = None  # records linked to this file (or a path ending in it)
    scope: str | None = None  # project | global: the records' own scope

    def projects(self) -> list[str] | None:
        """The project ids covered (``None``: every project): the one project scope,
        :func:`agentctx.store.models.project_scope`."""
        return project_scope(self.project_id, self.include_global)

    def narrows(self) -> bool:
        """Whether anything beyond the projects and the state narrows the records (a search
        then filters its candidates before its pool is cut)."""
        return bool(self.types or self.confidences or self.pinned or self.session_id
                    or self.file or self.scope or self.state == "superseded")

    def reaches_history(self) -> bool:
        """Whether superseded records can be selected (a state other than current, or a
        moment)."""
        return self.state != "current" or self.as_of is not None


def conditions(selection: Selection, alias: str = "", *,
               state: str | None = None) -> tuple[list[str], list[object]]:
    """SQL conditions (to be joined by AND) and their parameters for everything in
    ``selection`` but the project scope, on columns of ``alias`` (``""``: unqualified).

    ``state`` overrides the selection's state (a search reads superseded candidates to surface
    their successors); a moment always wins over the state.
    """
    if state is not None and state not in STATES:
        raise ValueError(f"unknown state {state!r}; use one of {', '.join(STATES)}")
    if selection.state not in STATES:
        raise ValueError(f"unknown state {selection.state!r}; use one of {', '.join(STATES)}")
    c = f"{alias}." if alias else ""
    where: list[str] = []
    params: list[object] = []
    if selection.types:
        where.append(f"{c}type IN ({','.join('?' * len(selection.types))})")
        params.extend(selection.types)
    if selection.confidences:
        where.append(f"{c}confidence IN ({','.join('?' * len(selection.confidences))})")
        params.extend(selection.confidences)
    if selection.scope:
        where.append(f"{c}scope = ?")
        params.append(selection.scope)
    wanted = selection.state if state is None else state
    if selection.as_of is not None:
        moment = normalize_time(selection.as_of)
        where.append(f"{c}valid_from <= ? AND ({c}superseded_at IS NULL OR {c}superseded_at > ?)")
        params.extend([moment, moment])
    elif wanted == "current":
        where.append(f"{c}superseded_at IS NULL")
    elif wanted == "superseded":
        where.append(f"{c}superseded_at IS NOT NULL")
    if selection.pinned:
        where.append(f"{c}pinned = 1")
    if selection.session_id is not None:
        where.append(f"{c}session_id = ?")
        params.append(selection.session_id)
    if selection.file:
        name = selection.file.strip().lstrip("./")
        where.append(f"{c}id IN (SELECT re.record_id FROM record_entities re "
                     "JOIN nodes n ON n.id = re.entity_id "
                     "WHERE n.name = ? OR n.name LIKE ? ESCAPE '\\' OR ? LIKE '%' || n.name)")
        escaped = name.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
        params.extend([name, f"%/{escaped}", name])
    return where, params


def where(selection: Selection, alias: str = "r", *,
          state: str | None = None) -> tuple[str, list[object]]:
    """Every condition of ``selection``, the project scope first, as one SQL expression on
    ``alias`` (``"1"`` when nothing narrows) and its parameters; ``state`` as in
    :func:`conditions`."""
    c = f"{alias}." if alias else ""
    found: list[str] = []
    params: list[object] = []
    projects = selection.projects()
    if projects:
        found.append(f"{c}project_id IN ({','.join('?' * len(projects))})")
        params.extend(projects)
    rest, rest_params = conditions(selection, alias, state=state)
    return " AND ".join([*found, *rest]) or "1", [*params, *rest_params]
