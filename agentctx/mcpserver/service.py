"""What each MCP tool does: plain functions over an open store that return the text the model reads.

Every function takes the store and the project the call resolved to (:class:`Where`), raises
:class:`ToolError` with a message fit for the model when the request cannot be served, and keeps
its answer far under Claude Code's 25,000-token limit (:data:`RESULT_MAX_TOKENS`, via
:mod:`agentctx.core.budget`). Reads count an access on what they return (``records.touch``).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

from mcp.server.mcpserver.exceptions import ToolError

from agentctx import drift, team
from agentctx.context import injection
from agentctx.context.project_profile import refresh as refresh_profile
from agentctx.core import budget
from agentctx.core.ids import normalize_time
from agentctx.core.redact import redact
from agentctx.store import details, graph, profiles
from agentctx.store import records as rec
from agentctx.store.db import Store
from agentctx.store.details import ChainLink, RecordDetail
from agentctx.store.errors import InvalidRecord, StoreError
from agentctx.store.hybrid import VectorSide, hybrid_search
from agentctx.store.models import GLOBAL_PROJECT, RECORD_TYPES, Draft, Project, Record
from agentctx.store.search import Query
from agentctx.store.textproc import query_terms

if TYPE_CHECKING:  # pragma: no cover - typing only
    from agentctx.drift.coverage import Embedder

# Every result is packed under this many tokens (Claude Code warns above 10,000, stops at 25,000).
RESULT_MAX_TOKENS = 8000
RESULT_MAX_CHARS = budget.char_limit(RESULT_MAX_TOKENS, 10 * RESULT_MAX_TOKENS)
SEARCH_MAX_LIMIT = 15
GET_MAX_IDS = 20
RELATED_MAX = 40
QUERY_MAX_CHARS = 1000
# A title is cut to this many characters in index lines, keeping each line near 50 tokens.
INDEX_TITLE_CHARS = 110
RECORDABLE_TYPES = tuple(t for t in RECORD_TYPES if t != "profile")
SOURCE = "mcp_tool"
CONFIDENCE = "explicit"
RECORD_RATIONALE = "replaced by an explicit record (ctx_record)"


class Where(NamedTuple):
    """The project a tool call works in, and the worktree root its file names are relative to."""

    project: Project
    root: str


# ------------------------------------------------------------------------------------ reads


def build_query(where: Where, text: str, *, type_: str | None = None, file: str | None = None,
                scope: str | None = None, as_of: str | None = None,
                limit: int = 10, backend: str = "fts") -> Query:
    """Validate ``ctx_search`` arguments and turn them into a store :class:`Query`
    (``backend``: the ``search`` knob)."""
    text = text.strip()
    if not text:
        raise ToolError("query must not be empty: give a few words to search for")
    if len(text) > QUERY_MAX_CHARS:
        raise ToolError(f"query is {len(text)} characters; keep it under {QUERY_MAX_CHARS}")
    if type_ is not None and type_ not in RECORD_TYPES:
        raise ToolError(f"unknown type {type_!r}; use one of {', '.join(RECORD_TYPES)}")
    if scope is not None and scope not in ("project", "global"):
        raise ToolError(f"unknown scope {scope!r}; use project or global")
    moment = None
    if as_of:
        try:
            moment = normalize_time(as_of)
        except ValueError as exc:
            raise ToolError(f"as_of: {exc}") from None
    return Query(text=text, project_id=where.project.id, types=(type_,) if type_ else (),
                 scope=scope, file=_entity_name(file, where.root) if file else None,
                 as_of=moment, limit=max(1, min(limit, SEARCH_MAX_LIMIT)), backend=backend)


def search(db: Store, where: Where, query: Query, vector: VectorSide | None = None) -> str:
    """``ctx_search``: a compact index of the best hits, one line each (~50 tokens)."""
    hits = hybrid_search(db, query, vector)
    mode = "keyword+semantic" if vector is not None else "keyword"
    shown = _clip(redact(query.text), 80)  # the query is echoed: never a secret in it
    scope = f" in {where.project.name}" + (f" as of {query.as_of[:10]}" if query.as_of else "")
    if not hits:
        hint = ("" if query_terms(query.text) or vector is not None
                else " (only common words were given)")
        return (f'No records match "{shown}"{scope}{hint}. '
                "Try other words, a different type, or ctx_related(file).")
    _touch(db, [h.record.id for h in hits])
    shorts = short_ids_of(db, [h.record for h in hits])
    header = (f'{len(hits)} record{"s" if len(hits) != 1 else ""} for '
              f'"{shown}"{scope} ({mode} search). Full text: ctx_get(ids).')
    packed = budget.pack([index_line(h.record, shorts) for h in hits],
                         max_tokens=RESULT_MAX_TOKENS, max_chars=RESULT_MAX_CHARS, header=header)
    return packed.text


def short_ids_of(db: Store, records: Sequence[Record]) -> dict[str, str]:
    """The store's short id of each record and of the record that superseded it."""
    return rec.short_ids(db, [*(r.id for r in records),
                              *(r.superseded_by for r in records if r.superseded_by)])


def index_line(record: Record, shorts: Mapping[str, str], extra: str = "") -> str:
    """One index line: short id, type, date, confidence, markers and the (cut) title;
    ``shorts`` holds the short ids of the record and of its successor
    (:func:`short_ids_of`)."""
    short = shorts.get(record.id, record.id)
    marks = ""
    if record.pinned:
        marks += " pinned"
    if record.scope == "global":
        marks += " global"
    if injection.from_team_file(record):
        marks += " team-file"
    if not record.current:
        marks += (f" SUPERSEDED {(record.superseded_at or '')[:10]}"
                  f" by {shorts.get(record.superseded_by or '', record.superseded_by or '?')}")
    return (f"{short} {record.type} {record.valid_from[:10]} {record.confidence}{marks}: "
            f"{_clip(injection.clean(record.title), INDEX_TITLE_CHARS)}{extra}")


def get(db: Store, where: Where, ids: Sequence[str]) -> str:
    """``ctx_get``: full records with provenance, supersession and entity links."""
    refs = [r.strip() for r in dict.fromkeys(ids) if r.strip()]
    if not refs:
        raise ToolError("give at least one record id (or an unambiguous prefix of one)")
    if len(refs) > GET_MAX_IDS:
        raise ToolError(f"{len(refs)} ids given; ask for at most {GET_MAX_IDS} at a time")
    found, problems = details.details(db, refs)
    blocks = [detail(where, item) for item in found]
    # Room for the notes below: at most 20 full ids and 20 problems of up to 160 characters.
    footer_room = 4000
    packed = budget.pack(blocks, max_tokens=RESULT_MAX_TOKENS - footer_room * 2 // 7,
                         max_chars=RESULT_MAX_CHARS - footer_room, separator="\n\n")
    _touch(db, [item.record.id for item in found[:packed.kept]])
    notes = []
    if packed.kept < len(found):
        rest = ", ".join(item.record.id for item in found[packed.kept:])
        notes.append(f"Not shown (result size cap), ask again for: {rest}")
    if problems:
        notes.append("Unknown or ambiguous: " + "; ".join(_clip(redact(p), 160) for p in problems))
    # The bodies are data, fenced and labelled like every injection (the notes are agentctx's).
    fenced = "\n".join((injection.header("ctx_get", where.project.name), packed.text,
                        injection.FENCE_CLOSE)) if packed.text else ""
    return "\n\n".join(part for part in (fenced, *notes) if part)


def detail(where: Where, item: RecordDetail) -> str:
    """The full view of one record for the model."""
    record = item.record
    if record.current:
        state = "current"
    elif item.superseded_by is not None:
        state = f"SUPERSEDED on {(record.superseded_at or '')[:10]} by {item.superseded_by.id}"
    else:
        state = f"RETIRED on {(record.superseded_at or '')[:10]}"
    if record.archived:
        state += " (archived)"
    head = f"## {record.id} · {record.type} · {record.confidence} · {state}"
    if record.pinned:
        head += " · pinned"
    lines = [head, f"Title: {' '.join(injection.clean(record.title).split())}"]
    if record.project_id != where.project.id:
        lines.append("Project: " + ("global (developer profile)"
                                    if record.project_id == GLOBAL_PROJECT else record.project_id))
    if record.key:
        lines.append(f"Key: {record.key}")
    provenance = f"Provenance: source {record.source}"
    if injection.from_team_file(record):
        provenance += " (the team file: written by a teammate)"
    if record.session_id:
        provenance += f", session {record.session_id}"
    provenance += f"; valid from {record.valid_from}; recorded {record.recorded_at}"
    lines.append(provenance)
    for link in item.supersedes:
        lines.append(f"Supersedes: {link.id} {_title_of(link)}"
                     + (f" (why: {_clip(injection.clean(link.rationale), 300)})"
                        if link.rationale else ""))
    if item.superseded_by is not None:
        link = item.superseded_by
        lines.append(f"Superseded by: {link.id} {_title_of(link)}"
                     + (f" (why: {_clip(injection.clean(link.rationale), 300)})"
                        if link.rationale else ""))
    elif item.retired_because:
        lines.append(f"Retired because: {injection.clean(item.retired_because)}")
    if item.entities:
        lines.append("Linked to: " + ", ".join(f"{e.node.kind} {e.node.name}"
                                               + ("" if e.rel == "applies_to" else f" ({e.rel})")
                                               for e in item.entities[:30]))
    lines.append("")
    lines.append(injection.clean(record.body) or "(no body)")
    return "\n".join(lines)


def related(db: Store, where: Where, file: str) -> str:
    """``ctx_related``: records linked to a file, then to its folders, with what linked them."""
    if not file.strip():
        raise ToolError("file must not be empty: give a path, relative to the project root or "
                        "absolute")
    name = _entity_name(file, where.root)
    pairs = graph.related_records(db, where.project.id, name, root=where.root,
                                  limit=RELATED_MAX)
    if not pairs:
        return (f"No records are linked to {name} or its folders in {where.project.name}. "
                "Try ctx_search with words from the file's purpose.")
    _touch(db, [record.id for record, _ in pairs])
    shorts = short_ids_of(db, [record for record, _ in pairs])
    lines = [index_line(record, shorts, "" if via == name else f" (via {via})")
             for record, via in pairs]
    header = (f"{len(pairs)} record{'s' if len(pairs) != 1 else ''} linked to {name}"
              f" in {where.project.name}. Full text: ctx_get(ids).")
    return budget.pack(lines, max_tokens=RESULT_MAX_TOKENS, max_chars=RESULT_MAX_CHARS,
                       header=header).text


def project_profile(db: Store, where: Where) -> str:
    """``ctx_project``: name, stack, commands and entry points, detected on first use."""
    profile = _profile_records(db, where.project.id)
    if not profile:
        profile = _refresh_profile(db, where.project)
    project = where.project
    head = [f"Project: {project.name} (id {project.id[:12]}, root {project.root}"
            + (f", remote {project.remote}" if project.remote else "") + ")"]
    if project.paused:
        head.append("agentctx is paused for this project: nothing is injected or captured.")
    if not profile:
        head.append("No build files were detected at the project root (pyproject.toml, "
                    "package.json, Cargo.toml, go.mod, Makefile, justfile …), so there is no "
                    "profile yet.")
        return "\n".join(head)
    shorts = rec.short_ids(db, [r.id for r in profile])
    lines = [f"- {r.title} [{shorts[r.id]}]" for r in profile]
    entries = next((r for r in profile if r.key == "entry_points"), None)
    if entries is not None and entries.body.count("\n") >= 1:
        lines.append("Entry points in full:\n" + "\n".join(
            f"  {line}" for line in entries.body.splitlines() if line.strip()))
    return budget.pack(lines, max_tokens=RESULT_MAX_TOKENS, max_chars=RESULT_MAX_CHARS,
                       header="\n".join(head)).text


def sync_claudemd(db: Store, where: Where, encoder: Embedder | None = None) -> str:
    """``ctx_sync_claudemd``: the proposal ``agentctx sync`` would make, as text; writes nothing
    (no memory file, and not even the drift scores)."""

    found = drift.propose(drift.scan_project(db, where.project, Path(where.root),
                                             encoder=encoder, record=False))
    scan = found.scan
    shorts = rec.short_ids(db, [p.candidate.id for p in found.candidates])
    files = ", ".join(f.name for f in scan.memory.files) or "none"
    head = [f"CLAUDE.md drift for {where.project.name}: {len(found.candidates)} candidates; "
            f"{len(scan.checked)} current decisions and conventions checked against the memory "
            f"files ({files}). Nothing was written."]
    if not found.candidates:
        head.append("The memory files reflect every checked decision and convention.")
        return "\n".join(head)
    lines = [f"- {line}" for line in drift.describe(found, shorts)]
    lines.extend(f"- note: {m.importer}:{m.line} imports @{m.target}, which does not exist"
                 for m in scan.memory.missing)
    lines.extend(f"- note: {problem}" for problem in found.problems)
    if found.diff:
        lines.append("Proposed diff — show it to the user, who applies it with `agentctx sync "
                     "--apply` (it asks for confirmation) or dismisses a record with "
                     "`agentctx sync --dismiss <id>`:")
        room = RESULT_MAX_CHARS - sum(len(line) + 1 for line in (*head, *lines)) - 20
        diff = budget.truncate(found.diff, room, "\n… (diff cut: agentctx sync prints all of it)")
        lines.append(f"```diff\n{diff.rstrip()}\n```")
    return budget.pack(lines, max_tokens=RESULT_MAX_TOKENS, max_chars=RESULT_MAX_CHARS,
                       header="\n".join(head)).text


# ----------------------------------------------------------------------------------- writes


def record(db: Store, where: Where, type_: str, title: str, body: str, *,
           supersedes: str | None = None, scope: str = "project",
           files: Sequence[str] = ()) -> str:
    """``ctx_record``: an explicit record (source mcp_tool, confidence explicit)."""
    _check_writable(where)
    if type_ not in RECORDABLE_TYPES:
        extra = (" (profile records are detected from build files)" if type_ == "profile"
                 else "")
        raise ToolError(f"type {type_!r} cannot be recorded{extra}; use one of "
                        f"{', '.join(RECORDABLE_TYPES)}")
    if not body.strip():
        raise ToolError("body must not be empty: say what holds and why")
    try:
        rec.check_typed_title(title)
    except InvalidRecord as exc:
        raise ToolError(str(exc)) from None
    draft = Draft(type=type_, title=title, body=body, scope=scope, confidence=CONFIDENCE,
                  source=SOURCE)
    names = _file_names(where, files)
    with db.write():
        if supersedes:
            old = _own_record(db, where, supersedes)
            new = rec.supersede(db, old.id, draft, RECORD_RATIONALE, actor=SOURCE)
        else:
            old = None
            new = rec.add(db, draft, project_id=where.project.id)
        _link_files(db, where.project.id, new, names)
    note = _keep_team_file(db, where)
    text = f"Recorded {new.id} ({new.type}" + (", global" if new.scope == "global" else "")
    text += f"): {new.title}"
    if old is not None:
        text += f"\nIt supersedes {old.id} ({old.title}), which is now history."
    if names:
        text += "\nLinked to: " + ", ".join(names)
    return text + note


def supersede(db: Store, where: Where, old_id: str, new_body: str, rationale: str,
              title: str | None = None) -> str:
    """``ctx_supersede``: replace a record; the successor keeps its type and (by default) title."""
    _check_writable(where)
    if not new_body.strip():
        raise ToolError("new_body must not be empty: say what holds now")
    if not rationale.strip():
        raise ToolError("rationale must not be empty: say why the old record no longer holds")
    try:
        rec.check_typed_title(title or "")
    except InvalidRecord as exc:
        raise ToolError(str(exc)) from None
    with db.write():
        old = _own_record(db, where, old_id)
        draft = Draft(type="", title=(title or "").strip(), body=new_body, scope=old.scope,
                      confidence=CONFIDENCE, source=SOURCE)
        new = rec.supersede(db, old.id, draft, rationale, actor=SOURCE)
        # The successor is about the same code as the record it replaces.
        for node, rel in graph.entities_of(db, old.id):
            graph.link_record(db, new.id, node, rel)
    note = _keep_team_file(db, where)
    return (f"Superseded {old.id} ({old.title}).\nCurrent now: {new.id} ({new.type}): "
            f"{new.title}{note}")


# ---------------------------------------------------------------------------------- helpers


def _keep_team_file(db: Store, where: Where) -> str:
    """The worktree's team file follows the write (projects that keep one; never fails);
    returns a line saying why it could not, or ``""``."""
    result = team.after_write(db, where.project, where.root)
    return f"\nNote: {result.problem}" if result is not None and result.problem else ""


def _touch(db: Store, ids: Sequence[str]) -> None:
    """Count an access on what a read returned; best effort (a busy store never fails a read)."""
    try:
        rec.touch(db, ids)
    except (sqlite3.OperationalError, StoreError):
        pass


def _clip(text: str, width: int) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= width else flat[: width - 1].rstrip() + "…"


def _title_of(link: ChainLink) -> str:
    return "(forgotten)" if link.title is None else f'"{_clip(injection.clean(link.title), 80)}"'


def _check_writable(where: Where) -> None:
    if where.project.paused:
        raise ToolError(f"agentctx is paused for {where.project.name}; nothing was recorded "
                        "(resume the project with the agentctx CLI first)")


def _own_record(db: Store, where: Where, ref: str) -> Record:
    """A current record of this project (or a global preference) named by id or prefix."""
    old = rec.get(db, ref)
    if old.project_id not in (where.project.id, GLOBAL_PROJECT):
        raise ToolError(f"record {old.id} belongs to another project ({old.project_id}); "
                        f"it can only be superseded from there")
    return old


def _file_names(where: Where, files: Sequence[str]) -> list[str]:
    names = []
    for path in files:
        try:
            name = graph.project_file_name(path, where.root).strip()
        except InvalidRecord as exc:
            raise ToolError(f"files: {exc}; nothing was recorded") from None
        if not name or name in (".", "/"):
            raise ToolError(f"files: {path!r} is not a file path")
        names.append(name)
    return list(dict.fromkeys(names))


def _entity_name(path: str, root: str, what: str = "") -> str:
    """A file name as the store keeps it (relative, redacted); a :class:`ToolError` when it
    cannot be one (too long, empty)."""
    try:
        return graph.entity_name(path, root)
    except InvalidRecord as exc:
        raise ToolError(f"{what}{exc}") from None


def _link_files(db: Store, project_id: str, record: Record, names: Sequence[str]) -> None:
    """Link a record to file entities of the project the call works in."""
    for name in names:
        graph.link_record(db, record.id, graph.ensure_node(db, project_id, "file", name))


def _profile_records(db: Store, project_id: str) -> list[Record]:
    return profiles.project_profile(db, project_id)


def _refresh_profile(db: Store, project: Project) -> list[Record]:
    """Detect the profile now (first use in a project), then read it back in its stable order."""
    if project.paused:
        return []
    try:
        refresh_profile(db, project)
    except OSError:
        return []
    return _profile_records(db, project.id)
