"""The drift scan: which checked records the memory files miss, contradict or state stale.

For a project folder it reads the memory files (:mod:`agentctx.drift.memfiles`), measures every
checked record — and every superseded one — against them (:mod:`agentctx.drift.coverage`) and
classifies:

* **missing** — a current checked record the files do not state;
* **contradicted** — a current checked record the files do not state while they do state a
  record it superseded (directly or further back);
* **stale** — a superseded record the files still state while its replacement is stated too (or
  a retired record, superseded by nothing, the files still state).

Dismissed records (``agentctx sync --dismiss``) are never flagged. A record named by an agentctx
id comment in the files (an entry of the marked section, or a replacement written beside struck
text) is stated by it. Reads only; :func:`record` stores the verdict.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import NamedTuple

from agentctx.drift import coverage, memfiles
from agentctx.drift.coverage import DEFAULT, Embedder, Fact, Params
from agentctx.drift.memfiles import Memory
from agentctx.store import digests, vectors
from agentctx.store import drift_state as store_drift
from agentctx.store.db import Store
from agentctx.store.models import Project, Record

MISSING, CONTRADICTED, STALE = "missing", "contradicted", "stale"
CLASSES = (MISSING, CONTRADICTED, STALE)


class Candidate(NamedTuple):
    """One drift candidate: a record and what is wrong with the memory files about it."""

    record: Record
    kind: str  # missing | contradicted | stale
    score: float  # 0.5-1: how sure the scan is
    file: str | None  # where the text is (contradicted, stale); None for missing
    line: int | None
    old: Record | None = None  # contradicted: the superseded record the files state instead
    replacement: Record | None = None  # stale: the record now in force (None: retired)
    units: tuple[int, ...] = ()  # contradicted, stale: the units stating the superseded text
    terms: frozenset[str] = frozenset()  # what tells the superseded text from what replaced it

    @property
    def id(self) -> str:
        """The record's id."""
        return self.record.id

    @property
    def stated(self) -> str | None:
        """The id of the superseded record whose text the files state (``None``: missing)."""
        if self.kind == CONTRADICTED:
            return self.old.id if self.old is not None else None
        return self.record.id if self.kind == STALE else None


class Scan(NamedTuple):
    """What one scan found."""

    project: Project
    root: Path
    memory: Memory
    checked: tuple[Record, ...]  # the current records checked (dismissed ones included)
    present: frozenset[str]
    candidates: tuple[Candidate, ...]
    scores: dict[str, float]  # drift score per record id, as :func:`record` stores them
    dismissed: frozenset[str]
    superseded: dict[str, Record]  # every superseded decision or convention, by id
    current: dict[str, Record]  # checked records and the current ends of chains, by id
    vectors: bool  # whether the vector side took part
    stated_in: dict[str, str] = {}  # noqa: RUF012 - present record id -> the file stating it

    @property
    def flagged(self) -> int:
        """Records missing or contradicted: what the SessionStart note counts."""
        return len({c.id for c in self.candidates if c.kind in (MISSING, CONTRADICTED)})


def drift_score(coverage_: float, threshold: float) -> float:
    """A record's ``claudemd_drift_score`` from its coverage: above 0.5 exactly when flagged."""
    if coverage_ < threshold:
        return round(max(0.501, 0.5 + 0.5 * (threshold - coverage_) / threshold), 3)
    return round(min(0.5, 0.5 * (1.0 - coverage_) / max(1e-9, 1.0 - threshold)), 3)


def _stale_score(coverage_: float, threshold: float) -> float:
    return round(min(1.0, max(0.501, 0.5 + 0.5 * (coverage_ - threshold)
                              / max(1e-9, 1.0 - threshold))), 3)


def _chain_end(record: Record, by_id: dict[str, Record]) -> Record | None:
    """The current record at the end of ``record``'s supersession chain (``None``: retired)."""
    seen = {record.id}
    node = record
    while node.superseded_by is not None:
        nxt = by_id.get(node.superseded_by)
        if nxt is None or nxt.id in seen:
            return None
        seen.add(nxt.id)
        node = nxt
    return node if node.current else None


def scan(db: Store, project: Project, root: Path, *, encoder: Embedder | None = None,
         params: Params = DEFAULT, memory: Memory | None = None,
         checked: Sequence[Record] | None = None) -> Scan:
    """Scan the memory files of the folder ``root`` against ``project``'s records (``checked``:
    the current records to check, default :func:`agentctx.store.drift_state.checked`)."""
    memory = memory if memory is not None else memfiles.read(root)
    checked = list(checked) if checked is not None else store_drift.checked(db, project.id)
    superseded = store_drift.superseded(db, project.id)
    dismissed = frozenset(store_drift.dismissed(db, project.id))
    by_id: dict[str, Record] = {r.id: r for r in (*checked, *superseded)}
    wanted = sorted({r.superseded_by for r in superseded
                     if r.superseded_by and r.superseded_by not in by_id})
    by_id.update(store_drift.current_by_ids(db, wanted))
    checked_ids = {r.id for r in checked}

    # Chains: a checked current record and every superseded record that ends in it.
    facts: list[Fact] = []
    chain_of: dict[str, int] = {}
    end_of: dict[str, str | None] = {}
    for record in superseded:
        end = _chain_end(record, by_id)
        end_of[record.id] = end.id if end else None
        if end is not None and end.id in checked_ids:
            chain_of.setdefault(end.id, len(chain_of))
            chain_of[record.id] = chain_of[end.id]
    for record in checked:
        facts.append(Fact(record.id, record.title, record.body, chain_of.get(record.id), True,
                          record.type))
    for record in superseded:
        if record.id in chain_of:
            facts.append(Fact(record.id, record.title, record.body, chain_of[record.id], False,
                              record.type))
        elif end_of[record.id] is None and record.confidence in store_drift.CHECKED_CONFIDENCES:
            facts.append(Fact(record.id, record.title, record.body, None, False,
                              record.type))  # retired

    # Units naming a known record by id state that record, and only it.
    named: set[str] = set()
    blocked_units: set[int] = set()
    for unit in memory.units:
        known = [i for i in unit.ids if i in by_id]
        if known:
            blocked_units.add(unit.position)
            named.update(i for i in known if by_id[i].current)
    blocked = frozenset(blocked_units)
    stored: dict[str, object] = {}
    if encoder is not None:
        live = [by_id[f.id] for f in facts if not by_id[f.id].archived
                and not by_id[f.id].pending_embedding]
        found = vectors.vectors_for(db, [r.pk for r in live], encoder.name)
        stored = {r.id: found[r.pk] for r in live if r.pk in found}
    measured = coverage.measure(memory.units, facts, params=params,
                                encoder=encoder.encode if encoder else None,
                                blocked={f.id: blocked for f in facts}, fact_vectors=stored)
    threshold = params.threshold

    def stated(record_id: str) -> bool:
        return record_id in named or measured.matches[record_id].score >= threshold

    present = frozenset(r.id for r in checked if stated(r.id))
    stated_in: dict[str, str] = {}
    for record_id in present:
        naming = next((u for u in memory.units if record_id in u.ids), None) \
            if record_id in named else None
        position = measured.matches[record_id].unit if naming is None else naming.position
        if position is not None:
            stated_in[record_id] = memory.units[position].file
    candidates: list[Candidate] = []
    scores: dict[str, float] = {}
    chain_members: dict[int, list[str]] = {}
    for fact in facts:
        if fact.chain is not None and not fact.current:
            chain_members.setdefault(fact.chain, []).append(fact.id)
    for record in checked:
        if record.id in named:
            scores[record.id] = 0.0
            continue
        match = measured.matches[record.id]
        score = drift_score(match.score, threshold)
        if record.id in dismissed:
            scores[record.id] = 0.0
            continue
        scores[record.id] = score
        if record.id in present:
            continue
        olds = [by_id[s] for s in chain_members.get(chain_of.get(record.id, -1), [])
                if measured.stated_at.get(s)]
        # One candidate per older version the files state (a chain's first and second
        # versions may both be there, in different files): each is struck where it is.
        for old in sorted(olds, key=lambda r: -measured.stated_at[r.id][0][1]):
            units = tuple(u for u, _ in measured.stated_at[old.id])
            first = memory.units[units[0]]
            candidates.append(Candidate(record, CONTRADICTED, score, first.file, first.line,
                                        old=old, units=units,
                                        terms=measured.distinct.get(old.id, frozenset())))
        if not olds:
            candidates.append(Candidate(record, MISSING, score, None, None))
    for fact in facts:
        if fact.current or fact.id in dismissed:
            continue
        places = measured.stated_at.get(fact.id) or []
        if not places:
            continue
        end_id = end_of.get(fact.id)
        if end_id is not None and end_id not in present:
            continue  # the current record is contradicted: it carries this text
        units = tuple(u for u, _ in places)
        first = memory.units[units[0]]
        score = _stale_score(places[0][1], params.stale_threshold)
        scores[fact.id] = score
        candidates.append(Candidate(by_id[fact.id], STALE, score, first.file, first.line,
                                    replacement=by_id.get(end_id) if end_id else None,
                                    units=units,
                                    terms=measured.distinct.get(fact.id, frozenset())))
    candidates.sort(key=lambda c: (CLASSES.index(c.kind), -c.score, c.record.valid_from))
    current = {r.id: r for r in by_id.values() if r.current}
    return Scan(project, Path(memory.root), memory, tuple(checked), present, tuple(candidates),
                scores, dismissed, {r.id: r for r in superseded}, current, encoder is not None,
                stated_in)


def record(db: Store, result: Scan) -> None:
    """Store a scan's drift scores and mark the project's digest stale (one transaction)."""
    with db.write():
        store_drift.save_scores(db, result.project.id, result.scores)
        digests.mark_stale(db, result.project.id)
