"""Record operations — the one API every caller (hooks, MCP, CLI, TUI, extraction) uses.

Records are never silently overwritten: a change of meaning is a :func:`supersede`, which closes
the old record's validity window and links the successor; :func:`update` keeps the id and writes
the old values to the ``edits`` audit table. :func:`forget` is the one hard delete.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Sequence

from agentctx.core.ids import MIN_PREFIX, new_ulid, normalize_prefix, normalize_time, now_iso
from agentctx.core.lean import NamedTuple
from agentctx.core.redact import marker_chars, redact
from agentctx.store import vecside
from agentctx.store.db import Store
from agentctx.store.errors import AlreadySuperseded, AmbiguousId, InvalidRecord, NotFound
from agentctx.store.models import (
    BODY_MAX_CHARS,
    CONFIDENCES,
    GLOBAL_PROJECT,
    RECORD_TYPES,
    SCOPES,
    SOURCES,
    TITLE_MAX_CHARS,
    Draft,
    Record,
)
from agentctx.store.selection import Selection, conditions

COLUMNS = (
    "pk, id, project_id, type, key, title, body, scope, pinned, confidence, reinforce_count, "
    "valid_from, recorded_at, superseded_at, superseded_by, access_count, last_accessed, score, "
    "claudemd_drift_score, source, session_id, pending_embedding, updated_at"
)
TABLES = ("records", "records_archive")
# Fields the team file (.agentctx/context.md) shows: a change of one bumps the revision
# (pins and confidence are each teammate's own).
SHARED_FIELDS = frozenset({"title", "body"})
SHORT_ID_MIN = 8
HISTORY_MAX_DEPTH = 50


def from_row(row: sqlite3.Row | Sequence[object], archived: bool = False) -> Record:
    """Build a :class:`Record` from a row selected with :data:`COLUMNS`."""
    values = list(row)[:23]
    values[8] = bool(values[8])  # pinned
    values[21] = bool(values[21])  # pending_embedding
    return Record._make([*values, archived])


# ----------------------------------------------------------------------------------- ids


def resolve_id(db: Store, ref: str) -> str:
    """The full id of the record that ``ref`` (a full id or an unambiguous prefix) names.

    Looks in current and archived records. Raises :class:`NotFound` or :class:`AmbiguousId`.
    """
    prefix = normalize_prefix(ref)
    if len(prefix) < MIN_PREFIX:
        raise NotFound(f"id {ref!r} is too short: give at least {MIN_PREFIX} characters")
    found: list[str] = []
    for table in TABLES:
        found.extend(row[0] for row in db.rows(
            f"SELECT id FROM {table} WHERE id >= ? AND id < ? ORDER BY id LIMIT 6",
            (prefix, prefix + "~")))
    if not found:
        raise NotFound(f"no record has id {ref!r}")
    if prefix in found:
        return prefix
    if len(found) > 1:
        raise AmbiguousId(ref, sorted(found))
    return found[0]


def resolve_many(db: Store, refs: Iterable[str]) -> list[str]:
    """The whole ids of the refs that name exactly one record (others are passed over)."""
    found: list[str] = []
    for ref in refs:
        try:
            found.append(resolve_id(db, ref))
        except (NotFound, AmbiguousId):
            continue
    return list(dict.fromkeys(found))


def short_ids(db: Store, ids: Iterable[str]) -> dict[str, str]:
    """The shortest unique prefix (at least 8 characters) of each id, like git's short hashes."""
    result: dict[str, str] = {}
    for rid in ids:
        longest = 0
        for table in TABLES:
            for sql in (f"SELECT id FROM {table} WHERE id < ? ORDER BY id DESC LIMIT 1",
                        f"SELECT id FROM {table} WHERE id > ? ORDER BY id LIMIT 1"):
                neighbour = db.scalar(sql, (rid,))
                if neighbour:
                    common = 0
                    for a, b in zip(rid, neighbour, strict=False):
                        if a != b:
                            break
                        common += 1
                    longest = max(longest, common)
        result[rid] = rid[: max(SHORT_ID_MIN, longest + 1)]
    return result


# ----------------------------------------------------------------------------------- reads


def get(db: Store, ref: str) -> Record:
    """The record named by ``ref`` (id or prefix), current, superseded or archived."""
    rid = resolve_id(db, ref)
    for table in TABLES:
        row = db.one(f"SELECT {COLUMNS} FROM {table} WHERE id = ?", (rid,))
        if row is not None:
            return from_row(row, archived=table == "records_archive")
    raise NotFound(f"no record has id {ref!r}")


def get_many(db: Store, refs: Sequence[str]) -> tuple[list[Record], list[str]]:
    """Records for each resolvable ref, in order, and the refs that were unknown or ambiguous."""
    found: list[Record] = []
    problems: list[str] = []
    for ref in refs:
        try:
            found.append(get(db, ref))
        except (NotFound, AmbiguousId) as exc:
            problems.append(f"{ref}: {exc}")
    return found, problems


def by_pks(db: Store, pks: Sequence[int]) -> dict[int, Record]:
    """Current-table records by primary key (missing keys are simply absent)."""
    if not pks:
        return {}
    marks = ",".join("?" * len(pks))
    return {row[0]: from_row(row)
            for row in db.rows(f"SELECT {COLUMNS} FROM records WHERE pk IN ({marks})", list(pks))}


def find_current_by_key(db: Store, project_id: str, type_: str, key: str) -> Record | None:
    """The current record of ``type_`` with ``key`` in ``project_id``, if any."""
    # records_current, not the key index: a key's superseded history grows without bound (a
    # handover per compaction), its current records stay few; nor the date index, which would
    # walk the whole project for a key that has no current record.
    row = db.one(f"SELECT {COLUMNS} FROM records INDEXED BY records_current WHERE project_id = ? "
                 "AND type = ? AND key = ? AND superseded_at IS NULL ORDER BY valid_from DESC "
                 "LIMIT 1", (project_id, type_, key))
    return from_row(row) if row else None


# How a listing can be ordered (``order=``); every order ends on pk, so pages never overlap.
ORDERS: dict[str, str] = {
    "newest": "valid_from DESC, pk DESC",
    "oldest": "valid_from ASC, pk",
    "title": "title COLLATE NOCASE, valid_from DESC, pk",
    "type": "type, valid_from DESC, pk",
    "confidence": "confidence_rank, valid_from DESC, pk",
}
_CONFIDENCE_RANK = ("CASE confidence WHEN 'explicit' THEN 0 WHEN 'reinforced' THEN 1 ELSE 2 END "
                    "AS confidence_rank")


def _listing(selection: Selection) -> list[tuple[str, list[object]]]:
    """A listing as ``(FROM … WHERE …, params)`` arms, one per project and table: each arm walks
    the ``records_project_valid`` index in date order and SQLite merges the arms (a project and
    the global profile, live and archived records) instead of sorting every matching row."""
    where, params = conditions(selection)
    projects: list[str | None] = [None]
    if selection.project_id is not None:
        projects = list(selection.projects() or ())
    arms = []
    for table in (TABLES if selection.as_of is not None else TABLES[:1]):
        for project in projects:
            found = ([] if project is None else ["project_id = ?"]) + where
            source = table
            if selection.types and project is not None and table == "records":
                # A type's rows through records_current and sorted: walking the date index for
                # a rare type (the profile, the handovers) would read the whole project.
                source += " INDEXED BY records_current"
            arm = f"FROM {source}" + (" WHERE " + " AND ".join(found) if found else "")
            arms.append((arm, ([] if project is None else [project]) + params))
    return arms


def list_records(db: Store, selection: Selection, *, limit: int | None = None, offset: int = 0,
                 order: str = "newest", pinned_first: bool = False) -> list[Record]:
    """One page of the records ``selection`` covers.

    ``order`` is a key of :data:`ORDERS` (default newest ``valid_from`` first); ``pinned_first``
    puts pinned records ahead of the rest (each group in that order). A selection as of a moment
    reads archived records too. :func:`count_records` counts what the same selection covers, for
    paging.
    """
    if order not in ORDERS:
        raise ValueError(f"unknown order {order!r}; use one of {', '.join(ORDERS)}")
    selects: list[str] = []
    params: list[object] = []
    extra = _CONFIDENCE_RANK if order == "confidence" else "NULL"  # computed only when sorted on
    for arm, arm_params in _listing(selection):
        flag = 1 if arm.startswith("FROM records_archive") else 0
        selects.append(f"SELECT {COLUMNS}, {flag} AS archived, {extra} {arm}")
        params.extend(arm_params)
    sql = (" UNION ALL ".join(selects)
           + f" ORDER BY {'pinned DESC, ' if pinned_first else ''}{ORDERS[order]}")
    if limit is not None:
        sql += " LIMIT ? OFFSET ?"
        params.extend([limit, max(0, offset)])
    elif offset:
        sql += " LIMIT -1 OFFSET ?"
        params.append(offset)
    return [from_row(row, archived=bool(row[23])) for row in db.rows(sql, params)]


def count_records(db: Store, selection: Selection) -> int:
    """How many records :func:`list_records` lists for ``selection`` in all."""
    return sum(int(db.scalar(f"SELECT count(*) {arm}", arm_params) or 0)
               for arm, arm_params in _listing(selection))


def history(db: Store, ref: str) -> list[Record]:
    """The whole supersession chain through ``ref``, both ways, oldest first.

    A recursive CTE over ``supersedes`` edges (UNION, so cycles end) with a depth guard.
    """
    rid = resolve_id(db, ref)
    rows = db.rows(
        """WITH RECURSIVE chain(id, depth) AS (
               SELECT ?, 0
               UNION
               SELECT e.to_id, c.depth + 1 FROM edges e JOIN chain c ON e.from_id = c.id
                WHERE e.rel_type = 'supersedes' AND c.depth < ?
               UNION
               SELECT e.from_id, c.depth + 1 FROM edges e JOIN chain c ON e.to_id = c.id
                WHERE e.rel_type = 'supersedes' AND c.depth < ?
           ) SELECT DISTINCT id FROM chain""",
        (rid, HISTORY_MAX_DEPTH, HISTORY_MAX_DEPTH))
    chain = [get(db, row[0]) for row in rows]
    return sorted(chain, key=lambda r: (r.valid_from, r.recorded_at, r.pk))


def successors(db: Store, ids: Sequence[str]) -> set[str]:
    """The ids among ``ids`` of records that superseded another (a change of a fact)."""
    found: set[str] = set()
    wanted = list(dict.fromkeys(ids))
    for start in range(0, len(wanted), 500):
        chunk = wanted[start:start + 500]
        found.update(str(row[0]) for row in db.rows(
            f"SELECT DISTINCT from_id FROM edges WHERE rel_type = 'supersedes' AND from_id IN "
            f"({','.join('?' * len(chunk))})", chunk))
    return found


def supersession_note(db: Store, successor_id: str, old_id: str) -> str | None:
    """The rationale stored on the ``supersedes`` edge from ``successor_id`` to ``old_id``."""
    value = db.scalar("SELECT note FROM edges WHERE from_id = ? AND to_id = ? "
                      "AND rel_type = 'supersedes'", (successor_id, old_id))
    return None if value is None else str(value)


def as_of(db: Store, project_id: str, moment: str, *, types: Sequence[str] = (),
          include_global: bool = True, limit: int | None = None,
          offset: int = 0) -> list[Record]:
    """Records that were in force at ``moment``: ``valid_from <= t`` and not yet superseded at t.

    Reads current and archived records alike, newest ``valid_from`` first; the same as
    :func:`list_records` with a selection as of ``moment``.
    """
    return list_records(db, Selection(project_id=project_id, types=tuple(types),
                                      include_global=include_global, as_of=moment),
                        limit=limit, offset=offset)


class Edit(NamedTuple):
    """One entry of a record's audit trail: a field's old and new value, who and when."""

    field: str
    old_value: str | None
    new_value: str | None
    actor: str
    changed_at: str


def edits_of(db: Store, ref: str) -> list[Edit]:
    """The audit trail of one record (field, old and new value, actor, time), oldest first."""
    rid = resolve_id(db, ref)
    return [Edit(*row) for row in db.rows(
        "SELECT field, old_value, new_value, actor, changed_at FROM edits "
        "WHERE record_id = ? ORDER BY id", (rid,))]


# ----------------------------------------------------------------------------------- writes


def check_typed_title(title: str) -> None:
    """Refuse a title typed by a caller (an MCP tool call) that holds control characters
    (escape sequences, NUL, a bell, C1 codes): a title is one line of plain text. Tabs and line
    breaks are whitespace, folded into single spaces like everywhere else.

    Raises :class:`InvalidRecord`. Captured titles are not refused (they are normalised).
    """
    bad = sorted({f"U+{ord(ch):04X}" for ch in title
                  if (ord(ch) < 0x20 and ch not in "\t\n\r") or 0x7F <= ord(ch) < 0xA0})
    if bad:
        raise InvalidRecord(f"title must not hold control characters ({', '.join(bad[:5])})")


def validate(draft: Draft, *, exact: bool = False) -> Draft:
    """Check a draft against the record rules and return it normalized (redacted, trimmed).

    ``exact`` keeps the title's and body's whitespace as given (a teammate's record imported
    from the team file must read back as the file has it). Raises :class:`InvalidRecord` with
    a message naming the rule that failed.
    """
    if draft.type not in RECORD_TYPES:
        raise InvalidRecord(f"unknown type {draft.type!r}; use one of {', '.join(RECORD_TYPES)}")
    if draft.scope not in SCOPES:
        raise InvalidRecord(f"unknown scope {draft.scope!r}; use project or global")
    if draft.scope == "global" and draft.type != "preference":
        raise InvalidRecord("only preferences can have global scope")
    if draft.confidence not in CONFIDENCES:
        raise InvalidRecord(f"unknown confidence {draft.confidence!r}; use one of "
                            f"{', '.join(CONFIDENCES)}")
    if draft.source not in SOURCES:
        raise InvalidRecord(f"unknown source {draft.source!r}")
    # The limits apply to the text as sent; redaction markers may then make it longer.
    title = draft.title if exact else " ".join(draft.title.split())
    body = draft.body if exact else draft.body.strip()
    if not title.strip():
        raise InvalidRecord("title must not be empty")
    title_chars = len(title) - marker_chars(title)
    if title_chars > TITLE_MAX_CHARS:
        raise InvalidRecord(f"title is {title_chars} characters; the limit is {TITLE_MAX_CHARS}")
    body_chars = len(body) - marker_chars(body)
    if body_chars > BODY_MAX_CHARS:
        raise InvalidRecord(f"body is {body_chars} characters; the limit is {BODY_MAX_CHARS} "
                            "(split it into several records)")
    title = redact(title) if exact else " ".join(redact(title).split())
    body = redact(body)
    valid_from = normalize_time(draft.valid_from) if draft.valid_from else None
    key = draft.key.strip() if draft.key else None
    return draft._replace(title=title, body=body, valid_from=valid_from, key=key or None)


def add(db: Store, draft: Draft, *, project_id: str) -> Record:
    """Create a record in ``project_id`` (``global`` for global preferences) and return it.

    Secrets are redacted first. A draft with a ``key`` supersedes the current record of the same
    type and key (rule-based supersession); an identical keyed value returns the existing record.
    """
    draft = validate(draft)
    if draft.scope == "global":
        project_id = GLOBAL_PROJECT
    with db.write():
        if draft.key is not None:
            existing = find_current_by_key(db, project_id, draft.type, draft.key)
            if existing is not None:
                if existing.title == draft.title and existing.body == draft.body:
                    return existing
                return supersede(db, existing.id, draft,
                                 f"new value for {draft.type} {draft.key!r}", actor=draft.source)
        return _insert(db, draft, project_id)


def _insert(db: Store, draft: Draft, project_id: str) -> Record:
    now = now_iso()
    rid = new_ulid()
    db.execute(
        "INSERT INTO records (id, project_id, type, key, title, body, scope, pinned, confidence, "
        "reinforce_count, valid_from, recorded_at, source, session_id) "
        "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (rid, project_id, draft.type, draft.key, draft.title, draft.body, draft.scope,
         int(draft.pinned), draft.confidence, draft.reinforce_count, draft.valid_from or now, now,
         draft.source, draft.session_id))
    record = get(db, rid)
    vecside.add(db, record.pk)  # findable by meaning now; consolidation refreshes it
    return record


def update(db: Store, ref: str, *, title: str | None = None, body: str | None = None,
           pinned: bool | None = None, confidence: str | None = None,
           reinforce_count: int | None = None, actor: str,
           revision: int | None = None, exact: bool = False) -> Record:
    """Change fields of a record in place, keeping its id; old values go to ``edits``.

    Meant for corrections (typos, pinning, confidence). A change of meaning should be a
    :func:`supersede`. Archived records cannot be edited; superseded ones can (a team file's
    import takes a teammate's edit of history), and the use-case layer refuses a new text for them
    (:func:`agentctx.ops.write_path.change`). A change of what the
    team file shows (title, body) bumps the record's revision by one, or sets
    it to ``revision`` (an import taking a teammate's newer edit).
    """
    record = get(db, ref)
    if record.archived:
        raise InvalidRecord(f"record {record.id} is archived; archived records are read-only")
    changes: dict[str, object] = {}
    if title is not None or body is not None:
        draft = validate(Draft(type=record.type, title=record.title if title is None else title,
                               body=record.body if body is None else body, scope=record.scope,
                               confidence=record.confidence, source=record.source), exact=exact)
        if draft.title != record.title:
            changes["title"] = draft.title
        if draft.body != record.body:
            changes["body"] = draft.body
    if pinned is not None and pinned != record.pinned:
        changes["pinned"] = int(pinned)
    if confidence is not None and confidence != record.confidence:
        if confidence not in CONFIDENCES:
            raise InvalidRecord(f"unknown confidence {confidence!r}")
        changes["confidence"] = confidence
    if reinforce_count is not None and reinforce_count != record.reinforce_count:
        changes["reinforce_count"] = reinforce_count
    if not changes:
        return record
    now = now_iso()
    with db.write():
        for field, value in changes.items():
            old = getattr(record, field)
            db.execute("INSERT INTO edits (record_id, field, old_value, new_value, actor, "
                       "changed_at) VALUES (?, ?, ?, ?, ?, ?)",
                       (record.id, field, None if old is None else str(int(old) if
                        isinstance(old, bool) else old), str(value), actor, now))
        assignments = ", ".join(f"{field} = ?" for field in changes)
        embedding_stale = ", pending_embedding = 1" if {"title", "body"} & changes.keys() else ""
        params: list[object] = [*changes.values(), now]
        revised = ""
        if revision is not None:
            revised, params = ", revision = ?", [*params, revision]
        elif SHARED_FIELDS & changes.keys():
            revised = ", revision = revision + 1"
        db.execute(f"UPDATE records SET {assignments}, updated_at = ?{embedding_stale}{revised} "
                   "WHERE id = ?", [*params, record.id])
        if embedding_stale:
            vecside.add(db, record.pk)
    return get(db, record.id)


def set_pinned(db: Store, ref: str, pinned: bool, *, actor: str) -> Record:
    """Pin (always ranked first, never pruned) or unpin a record."""
    return update(db, ref, pinned=pinned, actor=actor)


def supersede(db: Store, old_ref: str, successor: Draft | str, rationale: str, *,
              actor: str) -> Record:
    """Replace a current record by a successor, atomically; returns the successor.

    ``successor`` is a new :class:`Draft` (an empty type or title defaults to the old record's)
    or the id of an existing current record. The old record's ``superseded_at`` becomes the
    successor's ``valid_from`` and a ``supersedes`` edge carries ``rationale``. Nothing is deleted.
    """
    if not rationale.strip():
        raise InvalidRecord("a rationale is required: say why the old record no longer holds")
    with db.write():
        old = get(db, old_ref)
        if old.superseded_at is not None:
            if old.superseded_by is None:
                raise AlreadySuperseded(f"record {old.id} was retired on {old.superseded_at[:10]} "
                                        "and is no longer current; record a new fact instead")
            raise AlreadySuperseded(
                f"record {old.id} was already superseded by {old.superseded_by} on "
                f"{old.superseded_at[:10]}; supersede that record instead")
        if isinstance(successor, str):
            new = get(db, successor)
            if new.id == old.id:
                raise InvalidRecord("a record cannot supersede itself")
            if not new.current or new.archived:
                raise AlreadySuperseded(f"record {new.id} is itself superseded")
            if new.project_id != old.project_id:
                raise InvalidRecord("a record can only be superseded within its own project")
        else:
            draft = successor._replace(
                type=successor.type or old.type, title=successor.title or old.title,
                key=successor.key if successor.key is not None else old.key,
                scope=old.scope if successor.scope == "project" else successor.scope)
            draft = validate(draft)
            new = _insert(db, draft, old.project_id)
        if new.valid_from < old.valid_from:
            raise InvalidRecord(
                f"the successor's valid_from ({new.valid_from}) is earlier than the superseded "
                f"record's ({old.valid_from})")
        now = now_iso()
        db.execute("UPDATE records SET superseded_at = ?, superseded_by = ?, updated_at = ? "
                   "WHERE id = ?", (new.valid_from, new.id, now, old.id))
        db.execute("INSERT INTO edges (id, from_id, to_id, rel_type, note, created_at) "
                   "VALUES (?, ?, ?, 'supersedes', ?, ?)",
                   (new_ulid(), new.id, old.id, " ".join(redact(rationale).split()), now))
        db.execute("INSERT INTO edits (record_id, field, old_value, new_value, actor, changed_at) "
                   "VALUES (?, 'superseded_by', NULL, ?, ?, ?)", (old.id, new.id, actor, now))
    return get(db, new.id)


def touch(db: Store, ids: Sequence[str]) -> None:
    """Count one access for each id (one cheap statement; never re-indexes FTS); nothing on a
    store opened read-only."""
    if not ids or db.read_only:
        return
    db.execute(f"UPDATE records SET access_count = access_count + 1, last_accessed = ? "
               f"WHERE id IN ({','.join('?' * len(ids))})", [now_iso(), *ids])


def predecessors(db: Store, record_id: str) -> list[Record]:
    """The records ``record_id`` superseded directly (live or archived), oldest first."""
    found = [from_row(row, archived=table == "records_archive")
             for table in TABLES
             for row in db.rows(f"SELECT {COLUMNS} FROM {table} WHERE superseded_by = ?",
                                (record_id,))]
    return sorted(found, key=lambda r: (r.valid_from, r.pk))


def current_again(db: Store, ref: str) -> list[Record]:
    """The records that forgetting ``ref`` would make current again: those it superseded, when
    nothing superseded it (its chain then ends at them; otherwise it closes over ``ref``)."""
    record = get(db, ref)
    return [] if record.superseded_by else predecessors(db, record.id)


def forget(db: Store, ref: str, *, actor: str) -> Record:
    """Delete a record everywhere (FTS, embeddings, edges, links, audit values, digests, drift
    dismissals, the paths it names).

    The one hard delete, for a leaked secret or a mistake. Its chain is closed over it: a
    predecessor it superseded is linked to its successor, or becomes current again when the
    forgotten record was the current one (:func:`current_again` names them beforehand). Returns
    the record as it was.
    """
    with db.write():
        record = get(db, ref)
        table = "records_archive" if record.archived else "records"
        now = now_iso()
        for pred_table in TABLES:
            for row in db.rows(f"SELECT id FROM {pred_table} WHERE superseded_by = ?",
                               (record.id,)):
                pred_id = row[0]
                if record.superseded_by:
                    db.execute(f"UPDATE {pred_table} SET superseded_by = ?, updated_at = ? "
                               "WHERE id = ?", (record.superseded_by, now, pred_id))
                    db.execute("INSERT OR IGNORE INTO edges (id, from_id, to_id, rel_type, note, "
                               "created_at) VALUES (?, ?, ?, 'supersedes', ?, ?)",
                               (new_ulid(), record.superseded_by, pred_id,
                                "chain closed over a forgotten record", now))
                else:
                    _restore_current(db, pred_table, pred_id, now)
        db.execute("DELETE FROM edges WHERE from_id = ? OR to_id = ?", (record.id, record.id))
        db.execute("DELETE FROM record_entities WHERE record_id = ?", (record.id,))
        db.execute("DELETE FROM embeddings WHERE record_pk = ?", (record.pk,))
        db.execute("DELETE FROM session_seen WHERE record_id = ?", (record.id,))
        db.execute("DELETE FROM edits WHERE record_id = ?", (record.id,))
        db.execute("DELETE FROM drift_dismissals WHERE record_id = ?", (record.id,))
        db.execute("DELETE FROM record_paths WHERE record_id = ?", (record.id,))
        db.execute("DELETE FROM digests WHERE project_id IN (?, ?) OR project_id IN "
                   "(SELECT project_id FROM digests WHERE record_ids LIKE ?)",
                   (record.project_id, GLOBAL_PROJECT, f'%"{record.id}"%'))
        db.execute(f"DELETE FROM {table} WHERE id = ?", (record.id,))
        db.execute("INSERT INTO edits (record_id, field, old_value, new_value, actor, changed_at) "
                   "VALUES (?, 'forgotten', NULL, NULL, ?, ?)", (record.id, actor, now))
        db.meta_set("vectors_dirty", 1)
    return record


def _restore_current(db: Store, table: str, record_id: str, now: str) -> None:
    if table == "records_archive":
        db.execute(f"INSERT INTO records ({COLUMNS}) SELECT {COLUMNS} FROM records_archive "
                   "WHERE id = ?", (record_id,))
        db.execute("DELETE FROM records_archive WHERE id = ?", (record_id,))
    db.execute("UPDATE records SET superseded_at = NULL, superseded_by = NULL, updated_at = ? "
               "WHERE id = ?", (now, record_id))
