"""Code entities (nodes) and links: records ↔ entities, sessions ↔ entities, records ↔ records.

Entities are unique per ``(project_id, kind, name)``, so two repositories' ``src/main.py`` never
collide. File names are stored relative to the project root when they lie inside it, redacted
(``keys/ghp_….txt`` keeps no token) and at most :data:`NAME_MAX_CHARS` characters long; a lookup
by name goes through the same :func:`entity_name`, so it finds what was stored.
"""

from __future__ import annotations

import os

from agentctx.core.ids import new_ulid, now_iso
from agentctx.core.lean import NamedTuple
from agentctx.store import records as rec
from agentctx.store.db import Store
from agentctx.store.errors import InvalidRecord
from agentctx.store.models import Edge, Node, Record

NODE_KINDS = ("file", "module", "symbol", "package", "branch")
# Longest entity name (Linux's PATH_MAX): no real file name is longer.
NAME_MAX_CHARS = 4096


class EntityLink(NamedTuple):
    """A code entity a record is linked to, and how (``applies_to``, ``touches``, ``tests``)."""

    node: Node
    rel: str


class Related(NamedTuple):
    """A record linked to a file, and the entity name that linked it (the file or a folder)."""

    record: Record
    via: str


def relative_name(path: str, root: str | None) -> str:
    """``path`` relative to ``root`` when it lies inside it, with forward slashes."""
    cleaned = path.strip()
    if root and os.path.isabs(cleaned):
        try:
            inside = os.path.relpath(cleaned, root)
        except ValueError:
            inside = cleaned
        if not inside.startswith(".."):
            cleaned = inside
    cleaned = cleaned.replace(os.sep, "/")
    return cleaned[2:] if cleaned.startswith("./") else cleaned


def entity_name(path: str, root: str | None = None) -> str:
    """The stored name of the entity ``path``: relative to ``root`` when inside it, redacted.

    Raises :class:`InvalidRecord` for an empty name or one over :data:`NAME_MAX_CHARS`.
    """
    if len(path) > NAME_MAX_CHARS:
        raise InvalidRecord(f"file name is {len(path)} characters; the limit is "
                            f"{NAME_MAX_CHARS}")
    from agentctx.core.redact import redact_path

    # Redacted whole first: relpath's normalisation could fold a secret's "//" out of sight.
    name = redact_path(relative_name(redact_path(path), root))
    if not name:
        raise InvalidRecord("file name must not be empty")
    return name


def project_file_name(path: str, root: str) -> str:
    """:func:`entity_name` for a file a caller says belongs to the project at ``root``.

    Raises :class:`InvalidRecord` when the path leaves the project (``../../x``, an absolute
    path elsewhere) or holds control characters.
    """
    if len(path) > NAME_MAX_CHARS:
        return entity_name(path, root)  # raises before any path arithmetic on the huge string
    if any(ord(ch) < 0x20 or 0x7F <= ord(ch) < 0xA0 for ch in path):
        raise InvalidRecord("a file name must not hold control characters")
    cleaned = path.strip()
    absolute = os.path.normpath(cleaned if os.path.isabs(cleaned)
                                else os.path.join(root, cleaned))
    base = os.path.normpath(root)
    if absolute != base and not absolute.startswith(base.rstrip(os.sep) + os.sep):
        raise InvalidRecord(f"{path!r} is outside the project ({root}); link files of the "
                            "project only")
    return entity_name(absolute, root)


def ensure_node(db: Store, project_id: str, kind: str, name: str) -> Node:
    """The node for ``(project_id, kind, name)``, created when missing.

    ``name`` goes through :func:`entity_name` (redacted; :class:`InvalidRecord` when too long).
    """
    if kind not in NODE_KINDS:
        raise ValueError(f"unknown entity kind {kind!r}")
    name = entity_name(name)
    db.execute("INSERT OR IGNORE INTO nodes (id, project_id, kind, name, created_at) "
               "VALUES (?, ?, ?, ?, ?)", (new_ulid(), project_id, kind, name, now_iso()))
    row = db.one("SELECT id, project_id, kind, name FROM nodes WHERE project_id = ? AND kind = ? "
                 "AND name = ?", (project_id, kind, name))
    assert row is not None
    return Node(*row)


def link_record(db: Store, record_id: str, node: Node, rel: str = "applies_to") -> None:
    """Link a record to an entity (idempotent)."""
    db.execute("INSERT OR IGNORE INTO record_entities (record_id, entity_id, rel, created_at) "
               "VALUES (?, ?, ?, ?)", (record_id, node.id, rel, now_iso()))


def add_edge(db: Store, from_id: str, to_id: str, rel_type: str, *, note: str | None = None,
             weight: float = 1.0) -> None:
    """Add a typed edge between two ids (idempotent per ``(from, to, rel_type)``)."""
    db.execute("INSERT OR IGNORE INTO edges (id, from_id, to_id, rel_type, weight, note, "
               "created_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
               (new_ulid(), from_id, to_id, rel_type, weight, note, now_iso()))


def edges_of(db: Store, node_or_record_id: str) -> list[Edge]:
    """Every edge touching an id, either direction."""
    rows = db.rows("SELECT id, from_id, to_id, rel_type, weight, note, created_at FROM edges "
                   "WHERE from_id = ? OR to_id = ? ORDER BY created_at",
                   (node_or_record_id, node_or_record_id))
    return [Edge(*row) for row in rows]


def entities_of(db: Store, record_id: str) -> list[EntityLink]:
    """The entities a record is linked to, with the link's relation (by kind, then name)."""
    rows = db.rows("SELECT n.id, n.project_id, n.kind, n.name, re.rel FROM record_entities re "
                   "JOIN nodes n ON n.id = re.entity_id WHERE re.record_id = ? "
                   "ORDER BY n.kind, n.name", (record_id,))
    return [EntityLink(Node(*row[:4]), row[4]) for row in rows]


class FileLink(NamedTuple):
    """A current record linked to a file entity of its project."""

    record_id: str
    file: str
    rel: str


def file_links(db: Store, project_id: str, *, limit: int = 500) -> list[FileLink]:
    """Links from the project's current records to its files, newest record first (the web
    view's file graph); at most ``limit`` links."""
    rows = db.rows("SELECT re.record_id, n.name, re.rel FROM nodes n "
                   "JOIN record_entities re ON re.entity_id = n.id "
                   "JOIN records r ON r.id = re.record_id "
                   "WHERE n.project_id = ? AND n.kind = 'file' AND r.superseded_at IS NULL "
                   "ORDER BY r.valid_from DESC, r.pk DESC, n.name LIMIT ?",
                   (project_id, max(0, limit)))
    return [FileLink(row[0], row[1], row[2]) for row in rows]


def parent_modules(name: str) -> list[str]:
    """The folders containing a file, innermost first: ``a/b/c.py`` → ``['a/b', 'a']``."""
    parts = name.split("/")[:-1]
    return ["/".join(parts[:i]) for i in range(len(parts), 0, -1)]


def related_records(db: Store, project_id: str, file: str, *, root: str | None = None,
                    include_superseded: bool = False, limit: int = 50,
                    ) -> list[Related]:
    """Records linked to ``file``, then to its folders/modules, with how each is linked.

    Each :class:`Related` names in ``via`` the entity that linked the record; a name over
    :data:`NAME_MAX_CHARS` raises :class:`InvalidRecord`.
    """
    name = entity_name(file, root)
    candidates = [name, *parent_modules(name)]
    found: dict[str, Related] = {}
    for entity in candidates:
        rows = db.rows(
            f"SELECT {', '.join('r.' + c.strip() for c in rec.COLUMNS.split(','))} "
            "FROM nodes n JOIN record_entities re ON re.entity_id = n.id "
            "JOIN records r ON r.id = re.record_id "
            "WHERE n.project_id = ? AND n.name = ? "
            + ("" if include_superseded else "AND r.superseded_at IS NULL ")
            + "ORDER BY r.valid_from DESC", (project_id, entity))
        if not rows and entity == name:
            # Accept a bare file name or a path suffix when it names exactly one file.
            suffix = db.rows("SELECT DISTINCT name FROM nodes WHERE project_id = ? AND kind = "
                             "'file' AND (name = ? OR name LIKE ?)",
                             (project_id, name, "%/" + name))
            if len(suffix) == 1 and suffix[0][0] != name:
                return related_records(db, project_id, suffix[0][0], root=None,
                                       include_superseded=include_superseded, limit=limit)
        for row in rows:
            record = rec.from_row(row)
            found.setdefault(record.id, Related(record, entity))
        if len(found) >= limit:
            break
    return list(found.values())[:limit]


def files_touched(db: Store, session_id: str) -> list[str]:
    """File entities a session touched (Write/Edit captured by the post-tool hook)."""
    rows = db.rows("SELECT n.name FROM edges e JOIN nodes n ON n.id = e.to_id "
                   "WHERE e.from_id = ? AND e.rel_type = 'touched' ORDER BY e.created_at",
                   (session_id,))
    return [row[0] for row in rows]
