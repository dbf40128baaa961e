"""Near-duplicate detection within a type, and merging confirmed duplicates.

The rule — two current records of the same project and type are near-duplicates when

1. their embeddings' cosine exceeds the ``near_duplicate_cosine`` knob (default 0.85), **and**
2. they overlap clearly in words: every *distinctive* title term of either record (a term that at
   most :data:`DISTINCTIVE_SHARE` of the compared records carry, and at least the two of the
   pair) appears in both records, and at least :data:`MIN_JACCARD` of their combined terms are
   shared. Terms are the search's terms (stop words dropped) with plural and tense endings folded;
   words that only phrase a decision ("use", "is", "adopt": :data:`PHRASING`) are never
   distinctive. When the two bodies say the same (each of at least :data:`SAME_BODY_MIN_TERMS`
   terms, and at most one term in one and not the other), one distinctive title word may be
   missing from the other record: "Queue is RabbitMQ" and "Jobs use RabbitMQ" over "Background
   jobs go through RabbitMQ" pair up, "Use SQLite" and "Use WAL" over one body do not.

Why both: with static embeddings, distinct notes written from one template are close.
Calibrated on the real small model (``minilm-static-256``, records embedded as
``[type] title + body``) with 360 template notes (3 types × 120, e.g. "Use {tool} for {role}",
40 tools × 20 roles) and 11 restated pairs (the same fact worded twice): over 2,000 pairs of
*distinct* template notes exceed cosine 0.85 (7,000 exceed 0.80), and among such pairs plain term
Jaccard reaches 0.89, while restatements range from 0.38 to 0.94 — no overlap threshold alone
separates them. What tells them apart is the distinctive words of the title (``MySQL`` versus
``Grafana``): the rule above flags none of the template pairs over 0.80 and 8 of the 11
restatements at 0.85 (``tests/consolidate/test_real_model.py`` re-runs this). Restatements under
0.85 (paraphrases sharing few words: "Prefers tabs over spaces" / "Use tabs for indentation") are
missed on purpose: a missed merge costs a few tokens, a wrong one loses a fact. In a small group
(under ten records of a type) every title word counts as distinctive, so only restatements with
the same key words pair.

A near-duplicate pair is stored as a ``near_duplicate`` edge (weight = cosine) and listed by
:func:`agentctx.consolidate.merge_candidates`. When a judge (a low-temperature model call) is
available it decides: *same* → the older record is superseded by the newer one (the store's time
rule: a successor is never older than what it supersedes), which inherits the pin, the strongest
confidence and the reinforcement count, so nothing of value is lost and nothing is deleted;
*distinct* → the pair is remembered and never asked about again.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, NamedTuple

from agentctx.core.words import STOP_WORDS, tokens
from agentctx.store import records as rec
from agentctx.store import upkeep, vectors
from agentctx.store.db import Store
from agentctx.store.models import Record

if TYPE_CHECKING:  # pragma: no cover - typing only
    import numpy as np  # late: numpy costs 80 ms at every CLI start
    import numpy.typing as npt

DISTINCTIVE_SHARE = 0.2
MIN_JACCARD = 0.3
SAME_BODY_MIN_TERMS = 3
BLOCK_ROWS = 1024  # rows of the similarity matrix computed at once
_CONFIDENCE_RANK = {"inferred": 0, "reinforced": 1, "explicit": 2}


class Verdict(NamedTuple):
    """A judge's answer on one pair."""

    same: bool
    reason: str


Judge = Callable[[Record, Record], Verdict | None]
"""Decides whether two records state the same fact; ``None`` means "could not decide now"."""


def stem(term: str) -> str:
    """Fold common English endings so "sessions"/"session" and "crashed"/"crash" match."""
    for suffix in ("ing", "ed", "es", "s", "e"):
        if term.endswith(suffix) and len(term) - len(suffix) >= 3:
            base = term[: -len(suffix)]
            if suffix in ("ing", "ed") and len(base) >= 4 and base[-1] == base[-2] \
                    and base[-1] not in "aeiouls":
                base = base[:-1]
            return base
    return term


# Words that phrase a decision rather than name its subject, folded as terms are.
PHRASING = frozenset(stem(w) for w in (
    "use", "uses", "used", "using", "is", "are", "be", "via", "adopt", "adopted", "prefer",
    "prefers", "preferred", "switch", "switched", "move", "moved", "go", "goes", "stay", "stays",
    "keep", "keeps", "choose", "chose", "chosen", "pick", "picked", "always", "never", "new"))


class _Terms:
    """Content terms of texts, with a memo of each word's folded form (a scan sees few words)."""

    def __init__(self) -> None:
        self._folded: dict[str, str | None] = {}

    def __call__(self, text: str) -> frozenset[str]:
        found: set[str] = set()
        memo = self._folded
        for token in tokens(text):
            folded = memo.get(token, "")
            if folded == "":
                keep = token not in STOP_WORDS and (len(token) >= 2 or token.isdigit())
                folded = memo[token] = stem(token) if keep else None
            if folded is not None:
                found.add(folded)
        return frozenset(found)


def terms_of(text: str) -> frozenset[str]:
    """The folded content terms of ``text`` (the search's terms: stop words dropped)."""
    return _Terms()(text)


class Doc(NamedTuple):
    """What the lexical check needs of one record."""

    terms: frozenset[str]
    title_terms: frozenset[str]
    body_terms: frozenset[str] = frozenset()


def docs_for(records: Sequence[tuple[str, str]]) -> list[Doc]:
    """Lexical profiles of ``(title, body)`` pairs."""
    terms = _Terms()
    return [Doc(terms(f"{title} {body}"), terms(title), terms(body)) for title, body in records]


def same_body(a: Doc, b: Doc) -> bool:
    """Whether two records' bodies say the same: both substantial, one term apart at most."""
    return (min(len(a.body_terms), len(b.body_terms)) >= SAME_BODY_MIN_TERMS
            and len(a.body_terms ^ b.body_terms) <= 1)


def document_frequency(docs: Sequence[Doc]) -> dict[str, int]:
    """How many of ``docs`` carry each term."""
    counts: dict[str, int] = {}
    for doc in docs:
        for term in doc.terms:
            counts[term] = counts.get(term, 0) + 1
    return counts


def lexical_overlap(a: Doc, b: Doc, df: dict[str, int], group_size: int) -> float | None:
    """The pair's term Jaccard when it overlaps clearly by the rule above, else ``None``."""
    shared = a.terms & b.terms
    union = a.terms | b.terms
    if not union:
        return None
    jaccard = len(shared) / len(union)
    if jaccard < MIN_JACCARD:
        return None
    ceiling = max(2, math.floor(DISTINCTIVE_SHARE * group_size))
    unshared = [term for term in (a.title_terms | b.title_terms) - PHRASING
                if df.get(term, 0) <= ceiling and term not in shared]
    # Over the same body one title may carry a label word the other lacks ("Queue is RabbitMQ"
    # / "Jobs use RabbitMQ"); a word on each side names two subjects ("Use SQLite" / "Use WAL").
    if len(unshared) > (1 if same_body(a, b) else 0):
        return None
    return jaccard


def similar_pairs(matrix: npt.NDArray[np.float32], threshold: float,
                  ) -> list[tuple[int, int, float]]:
    """Index pairs ``(i, j, cosine)`` with ``i < j`` whose cosine exceeds ``threshold``.

    Rows are unit vectors; the matrix product is taken in blocks so memory stays bounded.
    """
    import numpy as np  # late: numpy costs 80 ms at every CLI start

    count = matrix.shape[0]
    found: list[tuple[int, int, float]] = []
    for start in range(0, count, BLOCK_ROWS):
        block = matrix[start:start + BLOCK_ROWS] @ matrix[start:].T
        rows, cols = np.nonzero(block > threshold)
        for row, col in zip(rows.tolist(), cols.tolist(), strict=True):
            i, j = start + row, start + col
            if i < j:
                found.append((i, j, float(block[row, col])))
    return found


class ScanResult(NamedTuple):
    """What one scan found."""

    scanned: int
    similar: int  # pairs over the cosine threshold
    candidates: int  # of those, pairs that also overlap lexically
    new: int  # candidates not linked before


def scan(db: Store, model: str, project_id: str, threshold: float) -> ScanResult:
    """Find near-duplicates among the current records of one project and store them as links."""
    pks, types, matrix = vectors.current_matrix(db, model, project_ids=[project_id])
    if not pks:
        return ScanResult(0, 0, 0, 0)
    texts = upkeep.texts_of(db, pks)
    by_type: dict[str, list[int]] = {}
    for index, type_ in enumerate(types):
        by_type.setdefault(type_, []).append(index)
    pairs: list[tuple[str, str, float, float]] = []
    similar = 0
    for indices in by_type.values():
        if len(indices) < 2:
            continue
        group = matrix[indices]
        found = similar_pairs(group, threshold)
        similar += len(found)
        if not found:
            continue
        members = [texts[pks[i]] for i in indices]
        docs = docs_for([(title, body) for _rid, title, body in members])
        df = document_frequency(docs)
        for i, j, cosine in found:
            overlap = lexical_overlap(docs[i], docs[j], df, len(indices))
            if overlap is not None:
                pairs.append((members[i][0], members[j][0], cosine, overlap))
    scanned_ids = [texts[pk][0] for pk in pks]
    new = upkeep.save_near_duplicates(db, scanned_ids, pairs)
    return ScanResult(len(pks), similar, len(pairs), new)


def merge(db: Store, pair: upkeep.NearDuplicate, reason: str) -> Record:
    """Supersede the older record of a confirmed pair by the newer; returns the survivor.

    The survivor inherits the pin, the strongest confidence and the summed reinforcement count
    (audited edits); both changes commit together.
    """
    older, newer = pair.first, pair.second
    with db.write():
        rationale = (f"near-duplicate merged by consolidation (cosine {pair.cosine:.3f}, lexical "
                     f"overlap {pair.overlap:.2f}): {reason}".strip())
        survivor = rec.supersede(db, older.id, newer.id, rationale, actor="consolidate")
        confidence = max((older.confidence, newer.confidence),
                         key=lambda c: _CONFIDENCE_RANK.get(c, 0))
        return rec.update(
            db, survivor.id, pinned=older.pinned or newer.pinned, confidence=confidence,
            reinforce_count=older.reinforce_count + newer.reinforce_count, actor="consolidate")


def review(db: Store, project_id: str | None, judge: Judge, *, limit: int,
           deadline: Callable[[], bool]) -> tuple[int, int]:
    """Ask ``judge`` about up to ``limit`` candidate pairs; returns (merged, judged distinct)."""
    merged = distinct = 0
    asked = 0
    for pair in upkeep.near_duplicates(db, project_id):
        if asked >= limit or deadline():
            break
        first, second = rec.get(db, pair.first.id), rec.get(db, pair.second.id)
        if not (first.current and second.current):
            continue  # an earlier merge in this run already retired one of them
        asked += 1
        verdict = judge(first, second)
        if verdict is None:
            continue
        if verdict.same:
            merge(db, pair._replace(first=first, second=second), verdict.reason)
            merged += 1
        else:
            upkeep.mark_distinct(db, first.id, second.id, verdict.reason or "judged distinct")
            distinct += 1
    return merged, distinct
