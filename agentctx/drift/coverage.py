"""How well the memory files state each record: keyword coverage, plus vectors when available.

A record's **coverage** by a piece of text is the weighted share of the record's terms (porter
stems, stop words dropped) that the text contains. A term weighs its inverse document frequency
over everything compared (the memory files' units and the records), times a prior from its
English frequency (a very common word says little: "use", "run"), and more when it is in the
title (the body often carries a rationale no memory file repeats).

Each unit of a memory file (a sentence, a table row, a code line, a heading) is read in three
windows, the widest discounted: the unit with its heading path; its block (list item, paragraph,
fence, or table with its header row) with the heading path; its whole section. A record's coverage
is its best window's. With an embedding model, a window also scores by the cosine between its
vector and the record's; the better of the two counts.

**Chains.** A current record and the records it superseded compete for each window: each member
weighs more the terms that only it has within the chain ("pytest" against "nose"), and the window
belongs to the member it covers best (the current one on a tie). So "run tests with nose" counts
for the superseded record, not for "run tests with pytest".

Text that carries an agentctx id comment (an entry of the marked section, a replacement written
beside struck text) states the record it names and nothing else.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Callable, Mapping, Sequence
from typing import Any, NamedTuple

from agentctx.drift.memfiles import Unit
from agentctx.store.stems import stems
from agentctx.store.textproc import STOP_WORDS, tokens, word_rank

Encoder = Callable[[list[str]], Any]
"""Texts to an array of L2-normalized rows (an embedding model's ``encode``)."""


class Params(NamedTuple):
    """The scan's knobs (tuned on the drift benchmark's tuning fixtures: bench/bench_drift.py)."""

    threshold: float = 0.5  # coverage from which a record counts as stated
    title_weight: float = 1.5  # a title term weighs this much more than a body-only term
    block_discount: float = 0.9  # the block window's coverage is multiplied by this
    section_discount: float = 0.75  # and the section window's by this
    distinct_boost: float = 1.0  # a chain member's own terms weigh (1 + this) in the contest
    common_prior: float = 0.35  # weight of a top-300 English word (1.0 for rare words)
    frequent_prior: float = 0.7  # weight of a top-3,000 English word
    vector_low: float = 0.45  # a cosine at or below this is no evidence
    vector_high: float = 0.85  # a cosine at or above this is full coverage
    vector_weight: float = 0.9  # the vector side's coverage is multiplied by this


DEFAULT = Params()


class Fact(NamedTuple):
    """A record as the scan sees it."""

    id: str
    title: str
    body: str
    chain: int | None = None  # records of one supersession chain share a number
    current: bool = True


class Match(NamedTuple):
    """A record's best window: its coverage and the unit it is anchored on."""

    score: float
    unit: int | None  # index into the scan's units (None: stated by nothing)
    keyword: float  # the keyword side's coverage on that window
    vector: float  # the vector side's (0 without a model)


NO_MATCH = Match(0.0, None, 0.0, 0.0)


def words_of(text: str) -> list[str]:
    """The comparable words of a text: unicode61 tokens without stop words or lone letters."""
    return [t for t in tokens(text) if t not in STOP_WORDS and (len(t) > 1 or t.isdigit())]


class _Corpus:
    """Stems of every text compared, their weights, and the windows of the memory files."""

    def __init__(self, units: Sequence[Unit], facts: Sequence[Fact], params: Params) -> None:
        texts = [u.text for u in units]
        heading_texts = [" ".join(u.headings) for u in units]
        fact_titles = [f.title for f in facts]
        fact_bodies = [f.body for f in facts]
        all_words = [words_of(t) for t in (*texts, *heading_texts, *fact_titles, *fact_bodies)]
        stem_of = stems(w for ws in all_words for w in ws)
        sets = [frozenset(stem_of[w] for w in ws) for ws in all_words]
        n_units, n_facts = len(units), len(facts)
        self.unit_terms = sets[:n_units]
        heading_terms = sets[n_units:2 * n_units]
        self.title_terms = sets[2 * n_units:2 * n_units + n_facts]
        self.body_terms = sets[2 * n_units + n_facts:]
        # A stem's English rank: the most frequent of the words it comes from.
        rank: dict[str, int] = {}
        for ws in all_words:
            for w in ws:
                r = word_rank(w)
                stem = stem_of[w]
                if r is not None and r < rank.get(stem, 1 << 30):
                    rank[stem] = r
        df: dict[str, int] = defaultdict(int)
        documents = [*self.unit_terms,
                     *(t | b for t, b in zip(self.title_terms, self.body_terms, strict=True))]
        for terms in documents:
            for term in terms:
                df[term] += 1
        total = max(1, len(documents))
        self.weight: dict[str, float] = {}
        for term, count in df.items():
            prior = 1.0
            r = rank.get(term)
            if r is not None:
                prior = params.common_prior if r <= 300 else (
                    params.frequent_prior if r <= 3000 else 1.0)
            self.weight[term] = math.log(1.0 + total / count) * prior
        # Windows: unit + headings; block (+ a table's header row) + headings; whole section.
        self.window_a = [self.unit_terms[i] | heading_terms[i] for i in range(n_units)]
        block_terms: dict[int, set[str]] = defaultdict(set)
        section_terms: dict[int, set[str]] = defaultdict(set)
        first_row: dict[int, int] = {}
        for u in units:
            section_terms[u.section] |= self.window_a[u.position]
            if u.kind == "row":
                first_row.setdefault(u.block, u.position)
            else:
                block_terms[u.block] |= self.window_a[u.position]
        self.window_b: list[frozenset[str]] = []
        for u in units:
            if u.kind == "row":
                header = first_row[u.block]
                self.window_b.append(self.window_a[u.position] | self.unit_terms[header])
            else:
                self.window_b.append(frozenset(block_terms[u.block]))
        self.window_c = [frozenset(section_terms[u.section]) for u in units]
        self.postings: dict[str, list[int]] = defaultdict(list)
        for i, terms in enumerate(self.window_a):
            for term in terms:
                self.postings[term].append(i)


def _weights(corpus: _Corpus, index: int, params: Params, own: frozenset[str] = frozenset(),
             ) -> dict[str, float]:
    title, body = corpus.title_terms[index], corpus.body_terms[index]
    weights: dict[str, float] = {}
    for term in title | body:
        w = corpus.weight.get(term, 0.0) * (params.title_weight if term in title else 1.0)
        if term in own:
            w *= 1.0 + params.distinct_boost
        weights[term] = w
    return weights


def _coverage(weights: Mapping[str, float], total: float, window: frozenset[str]) -> float:
    if total <= 0:
        return 0.0
    return sum(w for t, w in weights.items() if t in window) / total


class _Scored(NamedTuple):
    keyword: dict[int, float]  # unit index -> best keyword coverage of its windows
    anchor: dict[int, float]  # unit index -> coverage of its own window (tie-break)


def _keyword_scores(corpus: _Corpus, units: Sequence[Unit], weights: Mapping[str, float],
                    params: Params, allowed: Callable[[int], bool]) -> _Scored:
    total = sum(weights.values())
    candidates: set[int] = set()
    for term in weights:
        candidates.update(corpus.postings.get(term, ()))
    scores: dict[int, float] = {}
    anchors: dict[int, float] = {}
    by_block: dict[int, float] = {}
    by_section: dict[int, float] = {}
    for i in candidates:
        if not allowed(i):
            continue
        unit = units[i]
        own = _coverage(weights, total, corpus.window_a[i])
        block_key = unit.position if unit.kind == "row" else unit.block
        if block_key not in by_block:
            by_block[block_key] = _coverage(weights, total, corpus.window_b[i])
        if unit.section not in by_section:
            by_section[unit.section] = _coverage(weights, total, corpus.window_c[i])
        scores[i] = max(own, params.block_discount * by_block[block_key],
                        params.section_discount * by_section[unit.section])
        anchors[i] = own
    return _Scored(scores, anchors)


class Coverage(NamedTuple):
    """The outcome for every fact: its best match among the windows it may claim."""

    matches: dict[str, Match]
    # Where each fact is stated: per block, the unit it covers best on its own among those it
    # claims at or above the threshold; best first.
    stated_at: dict[str, list[tuple[int, float]]]


def _places(ranked: Sequence[tuple[int, float, float]],
            units: Sequence[Unit]) -> list[tuple[int, float]]:
    best: dict[int, tuple[float, float, int]] = {}
    for index, score, anchor in ranked:
        block = units[index].block
        if block not in best or (anchor, score) > best[block][:2]:
            best[block] = (anchor, score, index)
    return sorted(((i, score) for _a, score, i in best.values()), key=lambda p: (-p[1], p[0]))


def measure(units: Sequence[Unit], facts: Sequence[Fact], *, params: Params = DEFAULT,
            encoder: Encoder | None = None, blocked: Mapping[str, frozenset[int]] | None = None,
            ) -> Coverage:
    """Score every fact against the units (see the module docstring).

    ``blocked`` names, per fact id, units it may not claim (text that states another record by
    its agentctx id).
    """
    corpus = _Corpus(units, facts, params)
    blocked = blocked or {}
    vectors = _vector_scores(units, facts, encoder, params) if encoder is not None else None
    chains: dict[int, list[int]] = defaultdict(list)
    singles: list[int] = []
    for index, fact in enumerate(facts):
        if fact.chain is None:
            singles.append(index)
        else:
            chains[fact.chain].append(index)
    matches: dict[str, Match] = {}
    stated: dict[str, list[tuple[int, float]]] = {}

    def fused(fact_index: int, unit: int, keyword: float) -> tuple[float, float]:
        vector = vectors(fact_index, unit) if vectors is not None else 0.0
        return max(keyword, params.vector_weight * vector), vector

    everywhere = range(len(units)) if vectors is not None else range(0)

    for index in singles:
        fact = facts[index]
        no = blocked.get(fact.id, frozenset())
        scored = _keyword_scores(corpus, units, _weights(corpus, index, params), params,
                                 lambda i, no=no: i not in no)  # type: ignore[misc]
        pool = set(scored.keyword) | {i for i in everywhere if i not in no}
        best = NO_MATCH
        ranked: list[tuple[int, float, float]] = []
        for i in pool:
            keyword = scored.keyword.get(i, 0.0)
            score, vector = fused(index, i, keyword)
            key = (score, scored.anchor.get(i, 0.0))
            if best.unit is None or key > (best.score, scored.anchor.get(best.unit, 0.0)):
                best = Match(score, i, keyword, vector)
            if score >= params.threshold:
                ranked.append((i, score, scored.anchor.get(i, 0.0)))
        matches[fact.id] = best
        stated[fact.id] = _places(ranked, units)
    for members in chains.values():
        _contest(corpus, units, facts, members, params, blocked, fused, everywhere, matches,
                 stated)
    return Coverage(matches, stated)


def _contest(corpus: _Corpus, units: Sequence[Unit], facts: Sequence[Fact], members: list[int],
             params: Params, blocked: Mapping[str, frozenset[int]],
             fused: Callable[[int, int, float], tuple[float, float]], everywhere: range,
             matches: dict[str, Match], stated: dict[str, list[tuple[int, float]]]) -> None:
    """The members of one chain compete for each window (see the module docstring)."""
    terms = {m: corpus.title_terms[m] | corpus.body_terms[m] for m in members}
    scored: dict[int, _Scored] = {}
    for m in members:
        others = frozenset().union(*(terms[o] for o in members if o != m))
        own = frozenset(terms[m] - others)
        no = blocked.get(facts[m].id, frozenset())
        scored[m] = _keyword_scores(corpus, units, _weights(corpus, m, params, own), params,
                                    lambda i, no=no: i not in no)  # type: ignore[misc]
    pool: set[int] = set()
    for m in members:
        pool |= set(scored[m].keyword)
    best: dict[int, Match] = dict.fromkeys(members, NO_MATCH)
    ranked: dict[int, list[tuple[int, float, float]]] = {m: [] for m in members}
    # The current member wins ties, then the most recent superseded one.
    preference = {m: (facts[m].current, position) for position, m in enumerate(members)}
    current = max(members, key=lambda m: preference[m])
    for i in pool | {i for i in everywhere if i not in blocked.get(facts[current].id, ())}:
        contenders = [m for m in members if i in scored[m].keyword]
        # Text no member shares a word with can only count for the current one (by its vector).
        winner = max(contenders, key=lambda m: (round(scored[m].keyword[i], 6), preference[m])) \
            if contenders else current
        keyword = scored[winner].keyword.get(i, 0.0)
        score, vector = fused(winner, i, keyword)
        anchor = scored[winner].anchor.get(i, 0.0)
        held = best[winner]
        if held.unit is None or (score, anchor) > (
                held.score, scored[winner].anchor.get(held.unit, 0.0)):
            best[winner] = Match(score, i, keyword, vector)
        if score >= params.threshold:
            ranked[winner].append((i, score, anchor))
    for m in members:
        matches[facts[m].id] = best[m]
        stated[facts[m].id] = _places(ranked[m], units)


def _vector_scores(units: Sequence[Unit], facts: Sequence[Fact], encoder: Encoder,
                   params: Params) -> Callable[[int, int], float]:
    """A function (fact index, unit index) -> the vector side's coverage of the unit's windows."""
    import numpy as np

    unit_texts = [" ".join((*u.headings[-1:], u.text)) for u in units]
    blocks: dict[int, list[str]] = defaultdict(list)
    for u in units:
        blocks[u.block].append(u.text)
    block_ids = sorted(blocks)
    block_texts = [" ".join(blocks[b]) for b in block_ids]
    fact_texts = [f"{f.title}\n{f.body}".strip() for f in facts]
    encoded = np.asarray(encoder([*unit_texts, *block_texts, *fact_texts]), dtype=np.float32)
    unit_vecs = encoded[:len(units)]
    block_vecs = encoded[len(units):len(units) + len(block_texts)]
    fact_vecs = encoded[len(units) + len(block_texts):]
    block_row = {b: n for n, b in enumerate(block_ids)}
    unit_block = np.array([block_row[u.block] for u in units], dtype=np.int64)
    own = fact_vecs @ unit_vecs.T if len(units) else np.zeros((len(facts), 0))
    wide = (fact_vecs @ block_vecs.T)[:, unit_block] if len(units) else own
    cosine = np.maximum(own, params.block_discount * wide)
    span = max(1e-6, params.vector_high - params.vector_low)
    mapped = np.clip((cosine - params.vector_low) / span, 0.0, 1.0)

    def score(fact_index: int, unit_index: int) -> float:
        return float(mapped[fact_index, unit_index])

    return score
