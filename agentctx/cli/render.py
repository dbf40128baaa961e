"""Plain-text and JSON renderings of records for the CLI (the TUI has its own widgets)."""

from __future__ import annotations

from typing import Any

from agentctx.store import graph
from agentctx.store import records as rec
from agentctx.store.db import Store
from agentctx.store.models import Record


def record_dict(record: Record, short: str | None = None) -> dict[str, Any]:
    """A JSON-ready view of a record."""
    data = record._asdict()
    data["current"] = record.current
    if short is not None:
        data["short_id"] = short
    return data


def line(record: Record, short: str, extra: str = "") -> str:
    """One listing line: short id, type, date, confidence, markers, title."""
    marks = ""
    if record.pinned:
        marks += " [pinned]"
    if not record.current:
        marks += f" [superseded {record.superseded_at[:10] if record.superseded_at else ''}]"
    if record.archived:
        marks += " [archived]"
    scope = " global" if record.scope == "global" else ""
    return (f"{short:<12} {record.type:<10} {record.valid_from[:10]} "
            f"{record.confidence:<10}{scope} {record.title}{marks}{extra}")


def detail(db: Store, record: Record) -> str:
    """The full text view of one record: fields, body, chain, entities and audit trail."""
    out = [
        f"{record.id}  {record.type}{' (global)' if record.scope == 'global' else ''}",
        f"title:       {record.title}",
        f"state:       {'current' if record.current else 'superseded'}"
        + (" (archived)" if record.archived else "") + (", pinned" if record.pinned else ""),
        f"valid from:  {record.valid_from}",
        f"recorded at: {record.recorded_at}",
        f"confidence:  {record.confidence}"
        + (f" (reinforced {record.reinforce_count}x)" if record.reinforce_count else ""),
        f"source:      {record.source}"
        + (f", session {record.session_id}" if record.session_id else ""),
        f"accessed:    {record.access_count}x" + (f", last {record.last_accessed}"
                                                  if record.last_accessed else ""),
    ]
    if record.key:
        out.append(f"key:         {record.key}")
    if record.superseded_at:
        note = rec.supersession_note(db, record.superseded_by or "", record.id)
        out.append(f"superseded:  {record.superseded_at} by {record.superseded_by}"
                   + (f" — {note}" if note else ""))
    predecessors = [e for e in graph.edges_of(db, record.id)
                    if e.rel_type == "supersedes" and e.from_id == record.id]
    for edge in predecessors:
        out.append(f"supersedes:  {edge.to_id}" + (f" — {edge.note}" if edge.note else ""))
    entities = graph.entities_of(db, record.id)
    if entities:
        out.append("entities:    " + ", ".join(f"{n.kind}:{n.name} ({rel})" for n, rel in entities))
    out.append("")
    out.append(record.body or "(no body)")
    edits = rec.edits_of(db, record.id)
    if edits:
        out.append("")
        out.append("edits:")
        for e in edits:
            out.append(f"  {e.changed_at} {e.actor}: {e.field} "
                       f"{_clip(e.old_value)} → {_clip(e.new_value)}")
    return "\n".join(out)


def _clip(value: object, width: int = 60) -> str:
    text = "∅" if value is None else " ".join(str(value).split())
    return text if len(text) <= width else text[: width - 1] + "…"
