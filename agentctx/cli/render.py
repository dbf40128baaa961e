"""Plain-text and JSON renderings of records for the CLI (the TUI has its own widgets)."""

from __future__ import annotations

from typing import Any

from agentctx.store.details import RecordDetail
from agentctx.store.models import Record


def plural(count: int, word: str, many: str | None = None) -> str:
    """``1 record``, ``2 records``, ``1,204 records`` (``many``: an irregular plural)."""
    return f"{count:,} {word if count == 1 else (many or word + 's')}"


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


def detail(item: RecordDetail) -> str:
    """The full text view of one record: fields, body, chain, entities and audit trail."""
    record = item.record
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
    if item.superseded_by is not None:
        link = item.superseded_by
        out.append(f"superseded:  {record.superseded_at} by {link.id}"
                   + (f" — {link.rationale}" if link.rationale else ""))
    elif record.superseded_at:
        out.append(f"retired:     {record.superseded_at}"
                   + (f" — {item.retired_because}" if item.retired_because else ""))
    for link in item.supersedes:
        out.append(f"supersedes:  {link.id}" + (f" — {link.rationale}" if link.rationale else ""))
    if item.entities:
        out.append("entities:    " + ", ".join(f"{e.node.kind}:{e.node.name} ({e.rel})"
                                               for e in item.entities))
    out.append("")
    out.append(record.body or "(no body)")
    if item.edits:
        out.append("")
        out.append("edits:")
        for e in item.edits:
            out.append(f"  {e.changed_at} {e.actor}: {e.field} "
                       f"{_clip(e.old_value)} → {_clip(e.new_value)}")
    return "\n".join(out)


def detail_dict(item: RecordDetail) -> dict[str, Any]:
    """A JSON-ready view of one record in full (``agentctx show --json``)."""
    data = record_dict(item.record)
    data["supersedes"] = [link._asdict() for link in item.supersedes]
    data["superseded_by_link"] = (item.superseded_by._asdict()
                                  if item.superseded_by is not None else None)
    data["retired_because"] = item.retired_because
    data["files"] = list(item.files)
    data["entities"] = [{"kind": e.node.kind, "name": e.node.name, "rel": e.rel}
                        for e in item.entities]
    data["edits"] = [e._asdict() for e in item.edits]
    return data


def _clip(value: object, width: int = 60) -> str:
    text = "∅" if value is None else " ".join(str(value).split())
    return text if len(text) <= width else text[: width - 1] + "…"
