"""Sessions, injection receipts and the per-session set of already-injected records.

A receipt records every injection: which records, their scores, tokens and characters, when and
for which event — the self-accounting ``agentctx status`` reports. Session ``meta`` (JSON) holds
git events, test outcomes and the last redacted prompts.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence

from agentctx.core.ids import now_iso
from agentctx.store.db import Store
from agentctx.store.errors import AmbiguousId, NotFound
from agentctx.store.models import Receipt, Session

SESSION_PREFIX_MIN = 6
_SESSION_COLUMNS = ("session_id, project_id, cwd, transcript_path, started_at, ended_at, "
                    "tokens_injected, extraction_cost_usd, meta")


def _session(row: Sequence[object]) -> Session:
    values = list(row)
    try:
        meta = json.loads(str(values[8] or "{}"))
    except json.JSONDecodeError:
        meta = {}
    values[8] = meta if isinstance(meta, dict) else {}
    return Session(*values)  # type: ignore[arg-type]


def ensure(db: Store, session_id: str, project_id: str, *, cwd: str | None = None,
           transcript_path: str | None = None, started_at: str | None = None) -> None:
    """Create the session row if missing; refresh cwd and transcript path when given.

    ``started_at`` (default now) is used only when the row is created — a backfilled session
    keeps its transcript's real start.
    """
    db.execute("INSERT INTO sessions (session_id, project_id, cwd, transcript_path, started_at) "
               "VALUES (?, ?, ?, ?, ?) ON CONFLICT (session_id) DO UPDATE SET "
               "cwd = coalesce(excluded.cwd, cwd), "
               "transcript_path = coalesce(excluded.transcript_path, transcript_path)",
               (session_id, project_id, cwd, transcript_path, started_at or now_iso()))


def get(db: Store, session_id: str) -> Session | None:
    """One session, or ``None``."""
    row = db.one(f"SELECT {_SESSION_COLUMNS} FROM sessions WHERE session_id = ?", (session_id,))
    return _session(row) if row else None


def resolve(db: Store, ref: str) -> Session:
    """The session ``ref`` names: its full id, or a prefix of at least
    :data:`SESSION_PREFIX_MIN` characters (listings show the first 8) that one session starts
    with. Raises :class:`NotFound`, or :class:`AmbiguousId` listing the candidates."""
    ref = ref.strip()
    found = get(db, ref)
    if found is not None:
        return found
    if len(ref) >= SESSION_PREFIX_MIN:
        rows = db.rows(f"SELECT {_SESSION_COLUMNS} FROM sessions WHERE session_id >= ? AND "
                       "session_id < ? ORDER BY session_id LIMIT 6", (ref, ref + "\uffff"))
        if len(rows) == 1:
            return _session(rows[0])
        if rows:
            raise AmbiguousId(ref, [str(row[0]) for row in rows], "sessions")
    raise NotFound(f"no session {ref!r} in the store")


def recent(db: Store, project_id: str | None = None, limit: int = 20,
           offset: int = 0) -> list[Session]:
    """The latest sessions (of one project, or all), newest first, a page at a time."""
    if project_id is None:
        rows = db.rows(f"SELECT {_SESSION_COLUMNS} FROM sessions ORDER BY started_at DESC, "
                       "session_id LIMIT ? OFFSET ?", (limit, max(0, offset)))
    else:
        rows = db.rows(f"SELECT {_SESSION_COLUMNS} FROM sessions WHERE project_id = ? "
                       "ORDER BY started_at DESC, session_id LIMIT ? OFFSET ?",
                       (project_id, limit, max(0, offset)))
    return [_session(row) for row in rows]


def count(db: Store, project_id: str | None = None) -> int:
    """How many sessions (of one project, or all) :func:`recent` can list."""
    if project_id is None:
        return int(db.scalar("SELECT count(*) FROM sessions") or 0)
    return int(db.scalar("SELECT count(*) FROM sessions WHERE project_id = ?",
                         (project_id,)) or 0)


def end(db: Store, session_id: str, *, at: str | None = None) -> None:
    """Mark a session ended, now or ``at`` (a backfilled or demo session's real end)."""
    db.execute("UPDATE sessions SET ended_at = ? WHERE session_id = ?",
               (at or now_iso(), session_id))


def update_meta(db: Store, session_id: str, key: str, value: object) -> None:
    """Set one key of a session's meta JSON (one statement; the JSON1 extension does the merge)."""
    db.execute("UPDATE sessions SET meta = json_set(meta, ?, json(?)) WHERE session_id = ?",
               (f"$.{key}", json.dumps(value), session_id))


def append_meta(db: Store, session_id: str, key: str, value: object, keep: int) -> None:
    """Append ``value`` to the list at ``meta[key]``, keeping only the last ``keep`` entries."""
    with db.write():
        raw = db.scalar("SELECT json_extract(meta, ?) FROM sessions WHERE session_id = ?",
                        (f"$.{key}", session_id))
        try:
            items = json.loads(raw) if raw else []
        except json.JSONDecodeError:
            items = []
        if not isinstance(items, list):
            items = []
        items.append(value)
        update_meta(db, session_id, key, items[-keep:] if keep > 0 else [])


def latest_before(db: Store, project_id: str, transcript_folder: str, other_than: str, *,
                  before: str, after: str, earliest: bool = False) -> str | None:
    """The session of ``project_id`` (not ``other_than``) with its transcript in
    ``transcript_folder`` whose last kept prompt came most recently at or before ``before`` and
    after ``after`` (ISO times) — the first after ``after`` with ``earliest`` —, or ``None``."""
    rows = db.rows("SELECT session_id, json_extract(meta, '$.prompts[#-1].at') FROM sessions "
                   "WHERE project_id = ? AND session_id != ? AND transcript_path >= ? "
                   "AND transcript_path < ? ORDER BY started_at DESC LIMIT 50",
                   (project_id, other_than, transcript_folder.rstrip("/") + "/",
                    transcript_folder.rstrip("/") + "0"))
    fits = [(str(row[1]), str(row[0])) for row in rows
            if isinstance(row[1], str) and after <= row[1] <= before]
    if not fits:
        return None
    return (min(fits) if earliest else max(fits))[1]


def recent_prompts(db: Store, project_id: str, limit: int = 20) -> list[str]:
    """The project's latest redacted prompts across sessions, newest first (digest ranking)."""
    prompts: list[str] = []
    for session in recent(db, project_id, limit=10):
        kept = session.meta.get("prompts", [])
        if isinstance(kept, list):
            prompts.extend(str(p.get("text", "")) if isinstance(p, dict) else str(p)
                           for p in reversed(kept))
        if len(prompts) >= limit:
            break
    return prompts[:limit]


# ------------------------------------------------------------------------ injected-records set


def seen(db: Store, session_id: str) -> set[str]:
    """Ids already injected into this session's current context."""
    return {row[0] for row in db.rows("SELECT record_id FROM session_seen WHERE session_id = ?",
                                      (session_id,))}


def mark_seen(db: Store, session_id: str, record_ids: Iterable[str]) -> None:
    """Add ids to the session's injected set."""
    db.conn.executemany("INSERT OR IGNORE INTO session_seen (session_id, record_id) VALUES (?, ?)",
                        [(session_id, rid) for rid in record_ids])


def reset_seen(db: Store, session_id: str) -> None:
    """Forget what was injected (after compact or clear the context is gone)."""
    db.execute("DELETE FROM session_seen WHERE session_id = ?", (session_id,))


# ----------------------------------------------------------------------------------- receipts

# Characters of the (redacted) prompt a receipt keeps: enough to recognise it in a listing.
RECEIPT_PROMPT_CHARS = 80
_RECEIPT_COLUMNS = ("id, session_id, project_id, event, source, record_ids, scores, tokens, chars, "
                    "created_at, prompt, matched, pointers, left_out")
# Records left out as already stated that a receipt names (the rest are counted in the digest).
LEFT_OUT_KEPT = 100


def add_receipt(db: Store, *, session_id: str, project_id: str, event: str, record_ids:
                Sequence[str], scores: Sequence[float], tokens: int, chars: int,
                source: str | None = None, prompt: str | None = None,
                matched: Sequence[Sequence[str]] = (), pointers: Sequence[str] = (),
                left_out: Sequence[tuple[str, str]] = ()) -> int:
    """Record one injection and add its tokens to the session's total; returns the receipt id.

    ``scores`` are the records' relevances for a per-prompt injection; ``prompt`` is the prompt
    that led to it, already redacted (only its first :data:`RECEIPT_PROMPT_CHARS` characters are
    kept), ``matched`` the prompt words each record matched, in ``record_ids`` order, and
    ``pointers`` the ids among them shown as one-line pointers rather than in full;
    ``left_out`` names ``(record id, file)`` of the records left out because a memory file
    Claude Code loads already states them.
    """
    kept = None
    if prompt is not None:  # whitespace folded, on a bounded slice of what may be a long text
        kept = " ".join(prompt.strip()[:4 * RECEIPT_PROMPT_CHARS].split())[:RECEIPT_PROMPT_CHARS]
    cursor = db.execute(
        "INSERT INTO injections (session_id, project_id, event, source, record_ids, scores, "
        "tokens, chars, created_at, prompt, matched, pointers, left_out) "
        "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (session_id, project_id, event, source, json.dumps(list(record_ids)),
         json.dumps([round(s, 4) for s in scores]), tokens, chars, now_iso(), kept,
         json.dumps([list(words) for words in matched]), json.dumps(list(pointers)),
         json.dumps([list(pair) for pair in left_out[:LEFT_OUT_KEPT]])))
    db.execute("UPDATE sessions SET tokens_injected = tokens_injected + ? WHERE session_id = ?",
               (tokens, session_id))
    return int(cursor.lastrowid or 0)


def last_receipt(db: Store, session_id: str, event: str,
                 source: str | None = None) -> Receipt | None:
    """The latest receipt of an event (and source) in a session."""
    sql = f"SELECT {_RECEIPT_COLUMNS} FROM injections WHERE session_id = ? AND event = ?"
    params: list[object] = [session_id, event]
    if source is not None:
        sql += " AND source = ?"
        params.append(source)
    row = db.one(sql + " ORDER BY id DESC LIMIT 1", params)
    return _receipt(row) if row else None


def receipts(db: Store, session_id: str, *, limit: int | None = None,
             offset: int = 0) -> list[Receipt]:
    """The receipts of a session, oldest first (a page of them with ``limit``)."""
    sql = f"SELECT {_RECEIPT_COLUMNS} FROM injections WHERE session_id = ? ORDER BY id"
    params: list[object] = [session_id]
    if limit is not None:
        sql += " LIMIT ? OFFSET ?"
        params.extend([limit, max(0, offset)])
    return [_receipt(row) for row in db.rows(sql, params)]


def latest_receipts(db: Store, *, project_id: str | None = None, limit: int = 50,
                    offset: int = 0) -> list[Receipt]:
    """The latest receipts of every session (of one project, or all), newest first."""
    where, params = ("WHERE project_id = ? ", [project_id]) if project_id else ("", [])
    return [_receipt(row) for row in db.rows(
        f"SELECT {_RECEIPT_COLUMNS} FROM injections {where}ORDER BY id DESC LIMIT ? OFFSET ?",
        [*params, limit, max(0, offset)])]


def receipts_since(db: Store, after_id: int, *, project_id: str | None = None,
                   limit: int = 200) -> list[Receipt]:
    """Receipts written after the receipt ``after_id`` (of one project, or all), oldest first:
    what a live view polls for (ids only grow)."""
    sql = f"SELECT {_RECEIPT_COLUMNS} FROM injections WHERE id > ?"
    params: list[object] = [after_id]
    if project_id:
        sql += " AND project_id = ?"
        params.append(project_id)
    return [_receipt(row) for row in db.rows(sql + " ORDER BY id LIMIT ?", [*params, limit])]


def count_receipts(db: Store, *, session_id: str | None = None,
                   project_id: str | None = None) -> int:
    """How many receipts a session, a project or the whole store holds."""
    where: list[str] = []
    params: list[object] = []
    if session_id is not None:
        where.append("session_id = ?")
        params.append(session_id)
    if project_id is not None:
        where.append("project_id = ?")
        params.append(project_id)
    sql = "SELECT count(*) FROM injections" + (" WHERE " + " AND ".join(where) if where else "")
    return int(db.scalar(sql, params) or 0)


def last_receipt_id(db: Store) -> int:
    """The id of the newest receipt in the store (0 when there is none)."""
    return int(db.scalar("SELECT max(id) FROM injections") or 0)


def _receipt(row: Sequence[object]) -> Receipt:
    values = list(row)
    values[5] = tuple(json.loads(str(values[5])))
    values[6] = tuple(json.loads(str(values[6])))
    values[11] = tuple(tuple(words) for words in json.loads(str(values[11] or "[]")))
    values[12] = tuple(json.loads(str(values[12] or "[]")))
    values[13] = tuple((str(p[0]), str(p[1])) for p in json.loads(str(values[13] or "[]")))
    return Receipt(*values)  # type: ignore[arg-type]


# ------------------------------------------------------------------ background-work handshake


def extract_offset(db: Store, session_id: str) -> int:
    """Bytes of the session's transcript already extracted (0 for an unknown session)."""
    return int(db.scalar("SELECT extract_offset FROM sessions WHERE session_id = ?",
                         (session_id,)) or 0)


def set_extract_offset(db: Store, session_id: str, offset: int) -> None:
    """Record how far the session's transcript has been extracted (after a successful call)."""
    db.execute("UPDATE sessions SET extract_offset = ? WHERE session_id = ?",
               (max(0, int(offset)), session_id))


def mark_dirty(db: Store, session_id: str) -> None:
    """Note that a session has new content while its extraction is already running."""
    db.execute("UPDATE sessions SET extract_state = 'dirty' WHERE session_id = ?", (session_id,))


def is_dirty(db: Store, session_id: str) -> bool:
    """Whether the session is marked dirty (without clearing the mark)."""
    return bool(db.scalar("SELECT 1 FROM sessions WHERE session_id = ? AND "
                          "extract_state = 'dirty'", (session_id,)))


def take_dirty(db: Store, session_id: str) -> bool:
    """Clear the session's dirty mark; returns whether it was set (the runner then goes again)."""
    cursor = db.execute("UPDATE sessions SET extract_state = NULL WHERE session_id = ? AND "
                        "extract_state = 'dirty'", (session_id,))
    return cursor.rowcount > 0
