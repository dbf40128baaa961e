"""Exports: a project's context as Markdown (by type, current records first, chains shown) and
backups of the store as JSON or JSON Lines (:func:`write_backup`).

The Markdown is deterministic for a given store: records are ordered by type, then
``valid_from``, then id, so an export can be diffed and reviewed.
"""

from __future__ import annotations

from typing import IO

from agentctx.core.ids import now_iso
from agentctx.store import records as rec
from agentctx.store.db import Store
from agentctx.store.models import GLOBAL_PROJECT, RECORD_TYPES, Project, Record
from agentctx.store.selection import Selection
from agentctx.team import backupfile

_HEADINGS = {
    "profile": "Project profile", "decision": "Decisions", "convention": "Conventions",
    "preference": "Preferences", "discovery": "Discoveries", "bugfix": "Bugfixes",
    "handover": "Handovers",
}
_ORDER = ("profile", "decision", "convention", "preference", "discovery", "bugfix", "handover")


def _meta(record: Record) -> str:
    parts = [f"`{record.id}`", f"valid from {record.valid_from[:10]}", record.confidence,
             f"source {record.source}"]
    if record.pinned:
        parts.append("pinned")
    if record.key:
        parts.append(f"key `{record.key}`")
    return " · ".join(parts)


def _chain(db: Store, record: Record) -> list[str]:
    chain = rec.history(db, record.id)
    if len(chain) < 2:
        return []
    lines = ["", "History:"]
    for item in chain:
        until = f" → {item.superseded_at[:10]}" if item.superseded_at else " → now"
        note = (rec.supersession_note(db, item.superseded_by, item.id)
                if item.superseded_by else None)
        lines.append(f"- {item.valid_from[:10]}{until}: {item.title} (`{item.id}`)"
                     + (f" — superseded because: {note}" if note else ""))
    return lines


def render_markdown(db: Store, project: Project, *, include_global: bool = True,
                    include_superseded: bool = False, stamp: str | None = None) -> str:
    """The whole project (and optionally the global profile) as one Markdown document."""
    out = [f"# agentctx context — {project.name}", "",
           f"Project `{project.id}` at `{project.root}`"
           + (f", remote `{project.remote}`" if project.remote else "") + ".",
           f"Exported {stamp or now_iso()}.", ""]
    found = rec.list_records(db,
                             Selection(project_id=project.id,
                                       state=("all" if include_superseded else "current")),
                             order="oldest")
    by_type: dict[str, list[Record]] = {t: [] for t in RECORD_TYPES}
    for record in found:
        by_type[record.type].append(record)
    for type_ in _ORDER:
        items = by_type[type_]
        if not items:
            continue
        out.extend([f"## {_HEADINGS[type_]}", ""])
        for record in items:
            state = "" if record.current else " (superseded)"
            out.append(f"### {record.title}{state}")
            out.append(_meta(record))
            if record.body:
                out.extend(["", record.body])
            if record.current:
                out.extend(_chain(db, record))
            out.append("")
    if include_global and project.id != GLOBAL_PROJECT:
        prefs = rec.list_records(db, Selection(project_id=GLOBAL_PROJECT, types=("preference",)),
                                 order="oldest")
        if prefs:
            out.extend(["## Developer profile (global preferences)", ""])
            for record in prefs:
                out.append(f"- {record.title} — {record.confidence}"
                           + (f" (reinforced {record.reinforce_count}x)"
                              if record.reinforce_count else "") + f" `{record.id}`")
            out.append("")
    return "\n".join(out).rstrip() + "\n"


def write_backup(db: Store, out: IO[str], fmt: str, project_id: str | None = None) -> int:
    """Write a backup (``json`` or ``jsonl``) of the store, or of one project, to ``out``; every
    table but the derived ones. Returns the number of rows."""
    writer = backupfile.write_jsonl if fmt == "jsonl" else backupfile.write_json
    return writer(db, out, project_id)
