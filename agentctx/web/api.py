"""The web view's JSON API: each route parses its parameters and calls the core.

Every read is one of the store's read API calls (``records``, ``details``, ``chains``,
``projects``, ``stats``, ``profiles``, ``graph``), the one search entry
(:mod:`agentctx.ops.find`, with the query side file's vectors, as the CLI and the TUI search)
or the drift API; every write (pin, edit, supersede, forget) is the use-case layer's
(:mod:`agentctx.ops.write_path`) that the CLI, the MCP server and the TUI call, with ``web`` as
the source and the actor, for the folder the server was started in. :func:`dispatch` maps a
request to its route; bad input raises :class:`ApiError` (a status and one line), which the
server sends as JSON.

Routes (``{id}`` is a record id or an unambiguous prefix; ``project`` defaults to the project the
server was started for, else the most recently seen one)::

    GET  /api/status                 version, default project, change counters
    GET  /api/projects               projects with record counts, sessions, tokens injected
    GET  /api/records                ?project&q&type&confidence&state&pinned&order&limit&offset
    GET  /api/records/{id}           one record in full: chain, files, audit trail
    GET  /api/chains                 ?project&limit&offset   supersession chains
    GET  /api/graph                  ?project&chains&links   chain and file-link graph
    GET  /api/profile                ?project                preferences and project profile
    GET  /api/sessions               ?project&limit&offset&days  sessions, tokens per day
    GET  /api/drift                  ?project                CLAUDE.md drift (read-only scan)
    POST /api/records/{id}/pin       {"pinned": true|false}
    POST /api/records/{id}/edit      {"title"?, "body"?}
    POST /api/records/{id}/supersede {"rationale", "body", "title"?} or {"rationale", "with"}
    POST /api/records/{id}/forget    {}   the record forgotten, and what is current again
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from datetime import UTC, datetime, timedelta
from typing import Any, NamedTuple

from agentctx import __version__
from agentctx.drift import as_json, default_encoder, proposal, record_ids
from agentctx.ops import find, write_path
from agentctx.ops.caller import Caller
from agentctx.store import chains, details, graph, pathstate, profiles, projects, sessions, stats
from agentctx.store import records as rec
from agentctx.store import search as srch
from agentctx.store.db import Store
from agentctx.store.errors import AlreadySuperseded, AmbiguousId, InvalidRecord, NotFound
from agentctx.store.models import CONFIDENCES, RECORD_TYPES, Draft, Project, Record
from agentctx.store.selection import STATES, Selection

SOURCE = "web"
PAGE_MAX = 200
# The listing's states: the selection's, and stale (possibly stale: every path it names gone).
WEB_STATES = (*STATES, "stale")
Query = Mapping[str, list[str]]
Json = dict[str, Any]


class ApiError(Exception):
    """A request the API refuses: an HTTP status and one line for the user."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


class Context(NamedTuple):
    """What every route gets: the open store, the query string, the JSON body of a write and
    the project the server was started for."""

    db: Store
    query: Query
    body: Json
    default_project: str | None
    search_backend: str
    cwd: str  # the folder the server was started in: its worktree's team file follows writes


# ----------------------------------------------------------------------------- parameters


def _one(query: Query, name: str) -> str | None:
    values = query.get(name)
    return values[-1] if values else None


def _int(query: Query, name: str, default: int, low: int, high: int) -> int:
    raw = _one(query, name)
    if raw is None or raw == "":
        return default
    try:
        value = int(raw)
    except ValueError:
        raise ApiError(400, f"{name} must be a whole number, not {raw!r}") from None
    if not low <= value <= high:
        raise ApiError(400, f"{name} must be between {low} and {high}")
    return value


def _choices(query: Query, name: str, allowed: tuple[str, ...]) -> tuple[str, ...]:
    picked = tuple(v for raw in query.get(name, []) for v in raw.split(",") if v)
    unknown = [v for v in picked if v not in allowed]
    if unknown:
        raise ApiError(400, f"unknown {name} {unknown[0]!r}; use one of {', '.join(allowed)}")
    return picked


def _project(ctx: Context) -> Project | None:
    """The project of ``?project=`` (id, prefix or name), else the default one, else the most
    recently seen; ``None`` when the store has no project."""
    ref = _one(ctx.query, "project") or ctx.default_project
    if ref:
        try:
            return projects.get(ctx.db, ref)
        except NotFound:
            raise ApiError(404, f"no project {ref!r}") from None
        except AmbiguousId:
            raise ApiError(400, f"project {ref!r} is ambiguous; give more of its id") from None
    first = projects.list_all(ctx.db, limit=1)
    return first[0].project if first else None


def _text(body: Json, name: str, *, required: bool = False) -> str | None:
    value = body.get(name)
    if value is None:
        if required:
            raise ApiError(400, f"{name} is required")
        return None
    if not isinstance(value, str):
        raise ApiError(400, f"{name} must be a string")
    return value


# ----------------------------------------------------------------------------- rendering


def record_json(record: Record, short: str | None = None) -> Json:
    """A record as JSON: its fields, whether it holds now, and its short id (the store's
    :func:`~agentctx.store.records.short_ids`; the full id when none is given)."""
    data = record._asdict()
    data["current"] = record.current
    data["short_id"] = short or record.id
    return data


def _records_json(db: Store, found: list[Record]) -> list[Json]:
    shorts = rec.short_ids(db, [r.id for r in found])
    paths = pathstate.of_records(db, [r.id for r in found if r.current])
    return [{**record_json(r, shorts.get(r.id)),
             "possibly_stale": list(paths[r.id].gone) if r.id in paths and paths[r.id].stale
             else []} for r in found]


def _project_json(project: Project | None) -> Json | None:
    return None if project is None else project._asdict()


# ----------------------------------------------------------------------------- reads


def status(ctx: Context) -> Json:
    """The server's version, default project, the vocabularies of the filters, and what a live
    view polls: the store's change counter and its last receipt (it reloads when they move)."""
    return {"version": __version__, "project": _project_json(_project(ctx)),
            "changes": ctx.db.change_counter(), "last_receipt": sessions.last_receipt_id(ctx.db),
            "types": list(RECORD_TYPES),
            "confidences": list(CONFIDENCES), "orders": list(rec.ORDERS)}


def project_list(ctx: Context) -> Json:
    """Every project with what it holds."""
    items = [{**summary.project._asdict(), "records": summary.records,
              "by_type": summary.by_type, "last_seen": summary.last_seen,
              "last_session": summary.last_session, "sessions": summary.sessions,
              "tokens_injected": summary.tokens_injected}
             for summary in projects.list_all(ctx.db, limit=PAGE_MAX)]
    return {"items": items, "total": projects.count(ctx.db)}


def record_list(ctx: Context) -> Json:
    """Records of a project: a search when ``q`` is given, else a filtered, ordered page."""
    q = ctx.query
    project = _project(ctx)
    types = _choices(q, "type", RECORD_TYPES)
    confidences = _choices(q, "confidence", CONFIDENCES)
    state = _one(q, "state") or "current"
    if state not in WEB_STATES:
        raise ApiError(400, f"unknown state {state!r}; use one of {', '.join(WEB_STATES)}")
    order = _one(q, "order") or "newest"
    if order not in rec.ORDERS:
        raise ApiError(400, f"unknown order {order!r}; use one of {', '.join(rec.ORDERS)}")
    pinned = _one(q, "pinned") in ("1", "true", "yes")
    limit = _int(q, "limit", 50, 1, PAGE_MAX)
    offset = _int(q, "offset", 0, 0, 10_000_000)
    text = (_one(q, "q") or "").strip()
    if project is None:
        return {"project": None, "items": [], "total": 0, "limit": limit, "offset": offset}
    stale = state == "stale"
    selection = Selection(project_id=project.id, include_global=bool(text), types=types,
                          confidences=confidences, state="current" if stale else state,
                          pinned=pinned)
    if stale and not text:  # possibly stale: every path they name was gone at the last check
        listed = [r for r, _ in pathstate.possibly_stale(ctx.db, project.id)
                  if (not types or r.type in types)
                  and (not confidences or r.confidence in confidences)
                  and (not pinned or r.pinned)]
        return {"project": _project_json(project),
                "items": _records_json(ctx.db, listed[offset:offset + limit]),
                "total": len(listed), "limit": limit, "offset": offset}
    if text:
        # Every hit passes the filters before the search's limit is cut: a page of a filtered
        # search is full when that many matching records exist.
        found = find.search(ctx.db, srch.Query(text, selection, limit=srch.MAX_LIMIT,
                                                     backend=ctx.search_backend),
                                  find.stored_vectors(ctx.db), substrings=True)
        hits = [h.record for h in found.hits]
        if stale:  # of the hits (current records), those possibly stale
            gone = {r.id for r, _ in pathstate.possibly_stale(ctx.db, project.id)}
            hits = [r for r in hits if r.id in gone]
        page = hits[offset:offset + limit]
        return {"project": _project_json(project), "items": _records_json(ctx.db, page),
                "total": len(hits), "limit": limit, "offset": offset, "q": text,
                "matched_by": "substring" if found.mode == "substring" else "words",
                "mode": found.mode}
    page = rec.list_records(ctx.db, selection, order=order, limit=limit, offset=offset)
    return {"project": _project_json(project), "items": _records_json(ctx.db, page),
            "total": rec.count_records(ctx.db, selection), "limit": limit, "offset": offset}


def record_detail(ctx: Context, ref: str) -> Json:
    """One record in full, with its whole chain (oldest first)."""
    item = details.detail(ctx.db, ref)
    chain = chains.chain_of(ctx.db, item.record.id)
    shorts = rec.short_ids(ctx.db, [item.record.id, *(v.record.id for v in chain.versions)])
    return {
        "record": record_json(item.record, shorts.get(item.record.id)),
        "chain": [{**record_json(v.record, shorts.get(v.record.id)), "rationale": v.rationale}
                  for v in chain.versions],
        "retired_because": item.retired_because,
        "entities": [{"kind": link.node.kind, "name": link.node.name, "rel": link.rel}
                     for link in item.entities],
        "files": list(item.files),
        "edits": [edit._asdict() for edit in item.edits],
        "possibly_stale": list(item.possibly_stale),
    }


def chain_list(ctx: Context) -> Json:
    """A page of the project's supersession chains, newest change first."""
    project = _project(ctx)
    limit = _int(ctx.query, "limit", 20, 1, PAGE_MAX)
    offset = _int(ctx.query, "offset", 0, 0, 10_000_000)
    if project is None:
        return {"items": [], "total": 0}
    found = chains.chains(ctx.db, project.id, limit=limit, offset=offset)
    shorts = rec.short_ids(ctx.db, [v.record.id for c in found for v in c.versions])
    items = [[{**record_json(v.record, shorts.get(v.record.id)), "rationale": v.rationale}
              for v in chain.versions] for chain in found]
    return {"items": items, "total": chains.count_chains(ctx.db, project.id),
            "limit": limit, "offset": offset}


def graph_of(ctx: Context) -> Json:
    """Nodes (records, files) and edges (``supersedes``, file links) of the project's newest
    chains and its newest records' file links, for the page's graph."""
    project = _project(ctx)
    if project is None:
        return {"nodes": [], "edges": []}
    n_chains = _int(ctx.query, "chains", 40, 0, PAGE_MAX)
    n_links = _int(ctx.query, "links", 200, 0, 2000)
    nodes: dict[str, Json] = {}
    edges: list[Json] = []

    def add_record(record: Record) -> None:
        nodes.setdefault(record.id, {"id": record.id, "kind": "record", "type": record.type,
                                     "title": record.title, "current": record.current})

    for chain in chains.chains(ctx.db, project.id, limit=n_chains):
        for version in chain.versions:
            add_record(version.record)
            if version.record.superseded_by:
                edges.append({"from": version.record.superseded_by, "to": version.record.id,
                              "rel": "supersedes", "note": version.rationale})
    links = graph.file_links(ctx.db, project.id, limit=n_links)
    linked, _ = rec.get_many(ctx.db, sorted({link.record_id for link in links} - nodes.keys()))
    for record in linked:
        add_record(record)
    for link in links:
        key = "file:" + link.file
        nodes.setdefault(key, {"id": key, "kind": "file", "title": link.file})
        edges.append({"from": link.record_id, "to": key, "rel": link.rel, "note": None})
    edges = [e for e in edges if e["from"] in nodes and e["to"] in nodes]
    return {"nodes": list(nodes.values()), "edges": edges}


def profile(ctx: Context) -> Json:
    """The developer's global preferences and the project's detected profile."""
    project = _project(ctx)
    prefs = profiles.preferences(ctx.db, limit=PAGE_MAX)
    shorts = rec.short_ids(ctx.db, [p.record.id for p in prefs])
    return {
        "preferences": [{**record_json(p.record, shorts.get(p.record.id)),
                         "category": p.category, "learned_in": p.learned_in_name}
                        for p in prefs],
        "project": _project_json(project),
        "profile": [] if project is None else _records_json(
            ctx.db, profiles.project_profile(ctx.db, project.id)),
    }


def session_list(ctx: Context) -> Json:
    """A page of the project's sessions with their token cost, and tokens injected per day."""
    project = _project(ctx)
    limit = _int(ctx.query, "limit", 20, 1, PAGE_MAX)
    offset = _int(ctx.query, "offset", 0, 0, 10_000_000)
    days = _int(ctx.query, "days", 30, 1, 3660)
    if project is None:
        return {"items": [], "total": 0, "days": []}
    since = (datetime.now(UTC) - timedelta(days=days - 1)).strftime("%Y-%m-%d")
    items = [s._asdict() for s in stats.session_summaries(ctx.db, project.id, limit=limit,
                                                          offset=offset)]
    per_day = [{**d._asdict(), "tokens": d.tokens}
               for d in stats.tokens_per_day(ctx.db, project.id, since=since)]
    return {"items": items, "total": sessions.count(ctx.db, project.id), "limit": limit,
            "offset": offset, "days": per_day, "since": since}


def drift_report(ctx: Context) -> Json:
    """CLAUDE.md drift of the project's root folder, scanned as ``agentctx sync`` scans it (with
    the embedding model when the store holds its vectors), storing nothing."""
    project = _project(ctx)
    if project is None:
        return {"candidates": [], "diff": "", "files": [], "problems": ["no project yet"]}
    found = proposal(ctx.db, project, project.root, record=False,
                     encoder=default_encoder(ctx.db))
    shorts = rec.short_ids(ctx.db, record_ids(found))
    return {**as_json(found, shorts), "root": project.root}


# ----------------------------------------------------------------------------- writes


def _caller(ctx: Context) -> Caller:
    return Caller.face(SOURCE, ctx.cwd)


def _written(record: Record, note: str | None) -> Json:
    return {"record": record_json(record), **({"note": note} if note else {})}


def pin(ctx: Context, ref: str) -> Json:
    """Pin or unpin a record (``{"pinned": bool}``)."""
    pinned = ctx.body.get("pinned")
    if not isinstance(pinned, bool):
        raise ApiError(400, "pinned must be true or false")
    changed = write_path.pin(ctx.db, _caller(ctx), ref, pinned)
    return _written(changed.record, changed.note)


def edit(ctx: Context, ref: str) -> Json:
    """Correct a record's title and/or body in place (the old values are audited)."""
    title = _text(ctx.body, "title")
    body = _text(ctx.body, "body")
    if title is None and body is None:
        raise ApiError(400, "give a title or a body to change")
    changed = write_path.edit(ctx.db, _caller(ctx), ref, title=title, body=body)
    return _written(changed.record, changed.note)


def supersede(ctx: Context, ref: str) -> Json:
    """Replace a record by a new one (``body``, optional ``title``) or by an existing record
    (``with``), with a rationale; the new one keeps the old one's files unless it is an
    existing record with its own."""
    rationale = _text(ctx.body, "rationale", required=True) or ""
    with_id = _text(ctx.body, "with")
    body = _text(ctx.body, "body")
    if (with_id is None) == (body is None):
        raise ApiError(400, "give either a body for a new record or 'with' for an existing one")
    successor: Draft | str = with_id if with_id is not None else Draft(
        type="", title=_text(ctx.body, "title") or "", body=body or "", confidence="explicit")
    done = write_path.supersede(ctx.db, _caller(ctx), ref, successor, rationale)
    return _written(done.new, done.note)


def forget(ctx: Context, ref: str) -> Json:
    """Forget a record everywhere; the answer names the records current again (those it had
    superseded, when it was the current one)."""
    gone = write_path.forget(ctx.db, _caller(ctx), ref)
    shorts = rec.short_ids(ctx.db, [r.id for r in gone.current_again])
    return {"forgotten": record_json(gone.record),
            "current_again": [record_json(r, shorts.get(r.id)) for r in gone.current_again],
            **({"note": gone.note} if gone.note else {})}


# ----------------------------------------------------------------------------- routing

Route = Callable[..., Json]
_ID = r"([0-9A-Za-z]{4,40})"
ROUTES: tuple[tuple[str, re.Pattern[str], Route], ...] = (
    ("GET", re.compile(r"/api/status"), status),
    ("GET", re.compile(r"/api/projects"), project_list),
    ("GET", re.compile(r"/api/records"), record_list),
    ("GET", re.compile(rf"/api/records/{_ID}"), record_detail),
    ("GET", re.compile(r"/api/chains"), chain_list),
    ("GET", re.compile(r"/api/graph"), graph_of),
    ("GET", re.compile(r"/api/profile"), profile),
    ("GET", re.compile(r"/api/sessions"), session_list),
    ("GET", re.compile(r"/api/drift"), drift_report),
    ("POST", re.compile(rf"/api/records/{_ID}/pin"), pin),
    ("POST", re.compile(rf"/api/records/{_ID}/edit"), edit),
    ("POST", re.compile(rf"/api/records/{_ID}/supersede"), supersede),
    ("POST", re.compile(rf"/api/records/{_ID}/forget"), forget),
)


def find_route(method: str, path: str) -> tuple[Route, tuple[str, ...]]:
    """The route for ``method`` and ``path`` and its captured arguments; :class:`ApiError` 404
    for an unknown path, 405 for a known path with another method."""
    methods = set()
    for route_method, pattern, handler in ROUTES:
        match = pattern.fullmatch(path)
        if match:
            if route_method == method:
                return handler, match.groups()
            methods.add(route_method)
    if methods:
        raise ApiError(405, f"{method} is not allowed here; use {', '.join(sorted(methods))}")
    raise ApiError(404, f"no API route {path}")


def dispatch(ctx: Context, method: str, path: str) -> Json:
    """Run the route for ``method`` and ``path``; store errors become :class:`ApiError`."""
    handler, args = find_route(method, path)
    try:
        return handler(ctx, *args)
    except NotFound as exc:
        raise ApiError(404, str(exc)) from None
    except AmbiguousId as exc:
        raise ApiError(400, str(exc)) from None
    except AlreadySuperseded as exc:
        raise ApiError(409, str(exc)) from None
    except InvalidRecord as exc:
        raise ApiError(400, str(exc)) from None
