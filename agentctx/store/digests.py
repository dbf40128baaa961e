"""Pre-computed SessionStart digests, one per project, stamped with the store's change counter.

A digest is fresh while no record has changed since it was built; session-start serves a fresh
digest as is (once its ``basis`` — what it was built on besides the records: the project folder,
the memory files' coverage, the paths it checked — still holds) and builds one inline otherwise.
"""

from __future__ import annotations

import json

from agentctx.core.ids import now_iso
from agentctx.core.lean import NamedTuple
from agentctx.store.db import Store

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence
    from typing import Any


class Digest(NamedTuple):
    """A stored digest."""

    project_id: str
    change_counter: int
    built_at: str
    text: str
    tokens: int
    chars: int
    record_ids: tuple[str, ...]
    builder: str
    basis: dict[str, Any]


def save(db: Store, project_id: str, text: str, *, tokens: int, record_ids: Sequence[str],
         builder: str, change_counter: int | None = None,
         basis: Mapping[str, Any] | None = None) -> None:
    """Store the digest of ``project_id``, stamped with the current (or given) change counter
    and what it was built on (``basis``)."""
    counter = db.change_counter() if change_counter is None else change_counter
    db.execute("INSERT INTO digests (project_id, change_counter, built_at, text, tokens, chars, "
               "record_ids, builder, basis) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT "
               "(project_id) DO UPDATE SET change_counter = excluded.change_counter, "
               "built_at = excluded.built_at, text = excluded.text, tokens = excluded.tokens, "
               "chars = excluded.chars, record_ids = excluded.record_ids, "
               "builder = excluded.builder, basis = excluded.basis",
               (project_id, counter, now_iso(), text, tokens, len(text),
                json.dumps(list(record_ids)), builder, json.dumps(dict(basis or {}))))


def load(db: Store, project_id: str) -> Digest | None:
    """The stored digest of a project, fresh or not."""
    row = db.one("SELECT project_id, change_counter, built_at, text, tokens, chars, record_ids, "
                 "builder, basis FROM digests WHERE project_id = ?", (project_id,))
    if row is None:
        return None
    values = list(row)
    values[6] = tuple(json.loads(values[6]))
    try:
        basis = json.loads(values[8] or "{}")
    except ValueError:
        basis = {}
    values[8] = basis if isinstance(basis, dict) else {}
    return Digest(*values)


def load_fresh(db: Store, project_id: str) -> Digest | None:
    """The stored digest of a project if no record changed since it was built."""
    digest = load(db, project_id)
    if digest is None or digest.change_counter != db.change_counter():
        return None
    return digest


def mark_stale(db: Store, project_id: str) -> None:
    """Make the stored digest of ``project_id`` stale: the next session start (or consolidation)
    rebuilds it. For changes the change counter does not see, such as drift scores."""
    db.execute("UPDATE digests SET change_counter = -1 WHERE project_id = ?", (project_id,))
