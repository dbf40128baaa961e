"""The drift scan's vocabulary: its knobs, the records it reads (facts) and what it finds."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple

Encoder = Callable[[list[str]], Any]
"""Texts to an array of L2-normalized rows (an embedding model's ``encode``)."""


class Embedder(NamedTuple):
    """An embedding model as the scan uses it: the name its stored vectors are kept under (the
    records' own vectors are read from the store, not computed again) and its ``encode``."""

    name: str
    encode: Encoder


class Params(NamedTuple):
    """The scan's knobs (tuned on the drift benchmark's tuning fixtures: bench/bench_drift.py)."""

    threshold: float = 0.45  # coverage from which a current record counts as stated
    title_weight: float = 1.5  # a title term weighs this much more than a body-only term
    block_discount: float = 0.9  # the block window's coverage is multiplied by this
    section_discount: float = 0.75  # and the section window's by this
    common_prior: float = 0.35  # weight of a top-300 English word (1.0 for rare words)
    frequent_prior: float = 0.7  # weight of a top-3,000 English word
    vector_low: float = 0.6  # a cosine at or below this is no evidence
    vector_high: float = 0.9  # a cosine at or above this is full coverage
    vector_weight: float = 0.9  # the vector side's coverage is multiplied by this
    union_units: int = 3  # a fact spread over places: the union of up to this many units
    union_discount: float = 0.85  # and its coverage multiplied by this
    current_keeps: float = 0.5  # the current record keeps text where its own terms' share is
    # at least this fraction of the best member's
    min_own_share: float = 0.3  # an older version wins text holding this share of its own terms
    without_own: float = 0.5  # a current record's coverage without its own terms nearby (× this)
    stale_threshold: float = 0.45  # coverage from which a superseded record counts as stated
    number_weight: float = 2.0  # a number or version weighs this much more than a word
    title_only: float = 0.85  # a current record's title read on its own counts × this
    part_discount: float = 0.9  # an older version's title or body read on its own, × this
    part_min_terms: int = 2  # a title or body of fewer terms is not read on its own
    old_floor: float = 0.3  # coverage enough for an older version whose own words are there
    phrase_floor: float = 0.1  # and where two words in a row only it says are there
    shared_own: float = 0.5  # an older version's own word another older version has, × this


DEFAULT = Params()


class Fact(NamedTuple):
    """A record as the scan sees it."""

    id: str
    title: str
    body: str
    chain: int | None = None  # records of one supersession chain share a number
    current: bool = True
    kind: str = "decision"  # the record type (part of the text embedded for it)

    @property
    def embedding_text(self) -> str:
        """The text embedded for the record, as consolidation embeds it: ``[type] title``,
        then the body."""
        head = f"[{self.kind}] {self.title}".strip()
        body = self.body.strip()
        return f"{head}\n{body}" if body else head


class Match(NamedTuple):
    """A record's best window: its coverage and the unit it is anchored on."""

    score: float
    unit: int | None  # index into the scan's units (None: stated by nothing)
    keyword: float  # the keyword side's coverage on that window
    vector: float  # the vector side's (0 without a model)


NO_MATCH = Match(0.0, None, 0.0, 0.0)
