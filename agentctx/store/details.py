"""One record in full, as one typed value: what ``agentctx show``, ``ctx_get`` and the TUI render.

:func:`detail` gathers, for one record, its provenance (on the :class:`Record` itself: source,
session, valid-from, recorded-at), the code entities it is linked to (files among them), its
neighbours in the supersession chain with the rationale on each link, the reason it was retired
(when it ended without a successor) and its audit trail. Every surface renders this value; none
assembles it on its own.
"""

from __future__ import annotations

from collections.abc import Sequence

from agentctx.core.lean import NamedTuple
from agentctx.store import graph, pathstate
from agentctx.store import records as rec
from agentctx.store.db import Store
from agentctx.store.errors import AmbiguousId, NotFound
from agentctx.store.models import Record


class ChainLink(NamedTuple):
    """A neighbour of a record in its supersession chain, and why the one replaced the other.

    ``title`` and ``valid_from`` are ``None`` when the neighbour was forgotten since.
    """

    id: str
    title: str | None
    valid_from: str | None
    rationale: str | None


class RecordDetail(NamedTuple):
    """A record with everything known about it."""

    record: Record
    supersedes: tuple[ChainLink, ...]  # the records this one replaced
    superseded_by: ChainLink | None  # the record that replaced this one
    retired_because: str | None  # why its validity ended without a successor
    entities: tuple[graph.EntityLink, ...]
    edits: tuple[rec.Edit, ...]
    # the paths it names, as the last check found them (None: it names none, or never checked)
    paths: pathstate.PathState | None = None

    @property
    def possibly_stale(self) -> tuple[str, ...]:
        """The paths it names when all of them were gone at the last check (and not kept)."""
        return self.paths.gone if self.paths is not None and self.paths.stale and \
            self.record.current else ()

    @property
    def files(self) -> tuple[str, ...]:
        """Names of the files the record is linked to (relative to the project root)."""
        return tuple(link.node.name for link in self.entities if link.node.kind == "file")


def detail(db: Store, ref: str) -> RecordDetail:
    """The record named by ``ref`` (id or unambiguous prefix) with its links and audit trail.

    Raises :class:`~agentctx.store.errors.NotFound` or
    :class:`~agentctx.store.errors.AmbiguousId`.
    """
    record = rec.get(db, ref)
    predecessors = db.rows("SELECT to_id, note FROM edges WHERE from_id = ? AND "
                           "rel_type = 'supersedes' ORDER BY rowid", (record.id,))
    supersedes = tuple(_link(db, row[0], row[1]) for row in predecessors)
    successor = None
    if record.superseded_by:
        successor = _link(db, record.superseded_by,
                          rec.supersession_note(db, record.superseded_by, record.id))
    edits = tuple(rec.edits_of(db, record.id))
    retired = None
    if record.superseded_at is not None and record.superseded_by is None:
        retired = next((e.new_value for e in reversed(edits) if e.field == "retired"), None)
    return RecordDetail(record, supersedes, successor, retired,
                        tuple(graph.entities_of(db, record.id)), edits,
                        pathstate.of_records(db, [record.id]).get(record.id))


def details(db: Store, refs: Sequence[str]) -> tuple[list[RecordDetail], list[str]]:
    """:func:`detail` of each resolvable ref, in order and without repeats, and one line for
    each ref that was unknown or ambiguous."""
    found: dict[str, RecordDetail] = {}
    problems: list[str] = []
    for ref in refs:
        try:
            item = detail(db, ref)
        except (NotFound, AmbiguousId) as exc:
            problems.append(f"{ref}: {exc}")
            continue
        found.setdefault(item.record.id, item)
    return list(found.values()), problems


def _link(db: Store, record_id: str, rationale: str | None) -> ChainLink:
    try:
        other = rec.get(db, record_id)
    except NotFound:
        return ChainLink(record_id, None, None, rationale)
    return ChainLink(other.id, other.title, other.valid_from, rationale)
