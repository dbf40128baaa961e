"""``agentctx why``: what was injected on the last prompt of a session, and why — from receipts.

The per-prompt hook leaves a receipt for every injection (the prompt's start, each record's
relevance and matched words) and keeps the session's recent prompts; a prompt that got nothing
leaves no receipt. So the last prompt's story is: its receipt when the latest receipt is at least
as new as the latest kept prompt, else "nothing was injected". The session's last SessionStart
digest is reported too. Records forgotten since are named as such; a record the hook showed only
as a one-line pointer (receipts that carry it) is marked so.
"""

from __future__ import annotations

from typing import Any

import typer

from agentctx.cli.common import (
    JsonOption,
    ProjectOption,
    current_project,
    fail,
    open_store,
    print_json,
)
from agentctx.store import records as rec
from agentctx.store import sessions
from agentctx.store.db import Store
from agentctx.store.errors import NotFound
from agentctx.store.models import Receipt, Session

PROMPT_EVENT = "UserPromptSubmit"
START_EVENT = "SessionStart"


def _last_prompt(session: Session) -> dict[str, str] | None:
    """The newest prompt the session kept (``{"at", "text"}``), if any."""
    kept = session.meta.get("prompts")
    if not isinstance(kept, list) or not kept:
        return None
    last = kept[-1]
    if isinstance(last, dict):
        return {"at": str(last.get("at", "")), "text": str(last.get("text", ""))}
    return {"at": "", "text": str(last)}


def _items(db: Store, receipt: Receipt) -> list[dict[str, Any]]:
    """Each injected record of ``receipt`` with what the store still knows of it."""
    found, _missing = rec.get_many(db, list(receipt.record_ids))
    by_id = {record.id: record for record in found}
    shorts = rec.short_ids(db, list(receipt.record_ids))  # a forgotten one's too
    items = []
    for item in receipt.items:
        record = by_id.get(item.record_id)
        items.append({
            "id": item.record_id,
            "short_id": shorts[item.record_id],
            "type": record.type if record else None,
            "title": record.title if record else None,
            "forgotten": record is None,
            "superseded": bool(record and record.superseded_by),
            "relevance": item.score,
            "matched": list(item.matched),
            "pointer": item.pointer,  # shown as a one-line pointer only
        })
    return items


def _left_out(db: Store, receipt: Receipt) -> list[dict[str, Any]]:
    """The records the injection left out because a memory file already states them."""
    found, _missing = rec.get_many(db, [rid for rid, _ in receipt.left_out])
    by_id = {record.id: record for record in found}
    shorts = rec.short_ids(db, list(by_id))
    return [{"id": rid, "short_id": shorts.get(rid, rid[:10]),
             "title": by_id[rid].title if rid in by_id else None, "stated_in": where,
             "why": f"already in {where}"} for rid, where in receipt.left_out]


def _receipt_dict(db: Store, receipt: Receipt) -> dict[str, Any]:
    return {"id": receipt.id, "event": receipt.event, "source": receipt.source,
            "at": receipt.created_at, "prompt": receipt.prompt, "tokens": receipt.tokens,
            "chars": receipt.chars, "records": _items(db, receipt),
            "left_out": _left_out(db, receipt)}


def explain(db: Store, session: Session) -> dict[str, Any]:
    """The story of the session's last prompt and its last SessionStart, as JSON-ready data."""
    last_prompt = _last_prompt(session)
    receipt = sessions.last_receipt(db, session.session_id, PROMPT_EVENT)
    start = sessions.last_receipt(db, session.session_id, START_EVENT)
    prompt_receipt = None
    if receipt is not None:
        prompt_receipt = _receipt_dict(db, receipt)
    # a prompt kept after the newest receipt got no injection (ISO times compare as text)
    injected = receipt is not None and (last_prompt is None or not last_prompt["at"]
                                        or receipt.created_at >= last_prompt["at"])
    return {"session": session.session_id, "project": session.project_id,
            "last_prompt": last_prompt,
            "injected": injected,
            "receipt": prompt_receipt if injected else None,
            "earlier_receipt": None if injected else prompt_receipt,
            "session_start": _receipt_dict(db, start) if start is not None else None}


def _record_lines(items: list[dict[str, Any]]) -> list[str]:
    lines = []
    for item in items:
        if item["forgotten"]:
            lines.append(f"  {item['short_id']}  (forgotten since)")
            continue
        flags = " [superseded since]" if item["superseded"] else ""
        flags += " [shown as a one-line pointer]" if item["pointer"] else ""
        lines.append(f"  {item['short_id']}  {item['type']}: {item['title']}{flags}")
        why = []
        if item["relevance"] is not None:
            why.append(f"relevance {item['relevance']:.2f}")
        if item["matched"]:
            why.append("matched: " + ", ".join(item["matched"]))
        if why:
            lines.append("      " + " · ".join(why))
    return lines


def _when(at: str) -> str:
    return at[:19].replace("T", " ") + " UTC" if at else "an unknown time"


def render_text(story: dict[str, Any]) -> str:
    """The explanation for people (and for the ``/agentctx:why`` slash command)."""
    lines = [f"session {story['session']}"]
    prompt, receipt = story["last_prompt"], story["receipt"]
    if receipt is not None:
        shown = receipt["prompt"] or (prompt["text"] if prompt else "")
        count = len(receipt["records"])
        lines.append(f"last prompt ({_when(receipt['at'])}): \"{shown}\"")
        lines.append(f"injected {count} record{'s' if count != 1 else ''}, {receipt['tokens']} "
                     f"tokens, {receipt['chars']} characters (receipt #{receipt['id']}):")
        lines += _record_lines(receipt["records"])
        lines += _left_lines(receipt.get("left_out", []))
    elif prompt is not None:
        text = " ".join(prompt["text"].split())[:80]
        lines.append(f"last prompt ({_when(prompt['at'])}): \"{text}\"")
        lines.append("nothing was injected: no record reached prompt_min_relevance, or the "
                     "relevant ones were already in this session's context")
        earlier = story["earlier_receipt"]
        if earlier is not None:
            lines.append(f"the latest injection was on an earlier prompt ({_when(earlier['at'])}):"
                         f" \"{earlier['prompt'] or ''}\"")
            lines += _record_lines(earlier["records"])
    else:
        lines.append("no prompt of this session has been seen yet (or none was kept: "
                     "recent_prompts = 0, #noctx)")
    start = story["session_start"]
    if start is not None:
        count = len(start["records"])
        lines.append(f"session start ({start['source'] or 'startup'}, {_when(start['at'])}): "
                     f"digest of {count} record{'s' if count != 1 else ''}, {start['tokens']} "
                     "tokens")
        lines += _left_lines(start.get("left_out", []))
    return "\n".join(lines)


def _left_lines(left: list[dict[str, Any]]) -> list[str]:
    if not left:
        return []
    return [f"left out {len(left)} (a memory file Claude Code loads already states them):"] + [
        f"  {item['short_id']}  {item['title'] or '(forgotten since)'} — {item['why']}"
        for item in left]


def why(
    session: str | None = typer.Option(None, "--session", "-s",
                                       help="Claude Code session id, or its first characters "
                                            "(default: this project's latest session)."),
    project: str | None = ProjectOption,
    json_out: bool = JsonOption,
) -> None:
    """What agentctx injected on the last prompt of a session, and why (from the receipts)."""
    with open_store() as db:
        if session:
            try:
                found = sessions.resolve(db, session)
            except NotFound:
                fail(f"no session {session!r} in the store: agentctx has not seen a prompt of "
                     "it yet ('agentctx status' lists recent sessions)")
        else:
            target = current_project(db, project)
            latest = sessions.recent(db, target.id, limit=1)
            if not latest:
                fail(f"no Claude Code session of {target.name} yet: nothing was injected")
            found = latest[0]
        story = explain(db, found)
    if json_out:
        print_json(story)
    else:
        typer.echo(render_text(story))


def register(app: typer.Typer) -> None:
    """Add ``agentctx why`` to the CLI."""
    app.command()(why)
