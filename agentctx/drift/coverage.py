"""How well the memory files state each record: keyword coverage, plus vectors when available.

A record's **coverage** by a piece of text is the weighted share of the record's terms (porter
stems as the FTS index makes them, stop words dropped, version numbers such as ``4.1.3`` kept
whole) that the text contains. A term weighs its inverse document frequency over everything
compared (the memory files' units and the records), times a prior from its English frequency (a
very common word says little: "use", "run"), more when it is a number or version, and more when
it is in the title (the body often carries a rationale no memory file repeats).

Each unit of a memory file (a sentence, a table row, a code line, a heading) is read in three
windows, the wider ones discounted: the unit with its heading path; its block (list item,
paragraph, fence, or a table row with the header row) with the heading path; its whole section.
A fact spread over a few places (a table row, a command, a sentence) is also read as the union of
the few units that add most to its coverage, discounted. A record's coverage is its best
reading's. With an embedding model, a current record the keywords leave short is read again
by vectors: a unit and its block (and the few units closest to it) also score by their cosine
with the record, mapped from [``vector_low``, ``vector_high``] to [0, 1], and the better side
counts. Vectors cannot tell an old version from a new one, so they never speak for a superseded
record, nor in text an older version took.

**Chains.** A current record and the records it superseded compete for each unit
(:mod:`agentctx.drift.versions`). The words and their weights are :mod:`agentctx.drift.terms`'s,
the vector side :mod:`agentctx.drift.vectorside`'s, the knobs :mod:`agentctx.drift.params`'s.

Text that carries an agentctx id comment (an entry of the marked section, a replacement written
beside struck text) states the record it names and nothing else.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from math import fsum
from typing import Any, NamedTuple

from agentctx.drift.memfiles import Unit
from agentctx.drift.params import DEFAULT, NO_MATCH, Embedder, Encoder, Fact, Match, Params
from agentctx.drift.terms import Corpus, block_key, fact_weights, negated, share, words_of
from agentctx.drift.vectorside import Vectors
from agentctx.drift.versions import PHRASE, contest

__all__ = ["DEFAULT", "Coverage", "Embedder", "Encoder", "Fact", "Match", "Params", "measure",
           "negated", "words_of"]

UNION_POOL = 8  # the units (best on their own) a union is chosen from
ANCHOR_SHARE = 0.5  # an anchor of a union weighs at least this share of the record's heaviest term
MOST = 0.5  # "most of its own terms"
# A term in more units than this share (and this number) does not by itself make a unit a
# candidate reading of a record; its weight is added only to the candidates' readings.
FREQUENT_SHARE, FREQUENT_MIN_UNITS = 0.05, 10
PART_POOL = 8  # units a title is read alone in: those the whole record reads best in


class Coverage(NamedTuple):
    """The outcome for every fact: its best match among the windows it may claim."""

    matches: dict[str, Match]
    # Where each fact is stated: per block, the unit it covers best on its own among those it
    # claims at or above the threshold; best first.
    stated_at: dict[str, list[tuple[int, float]]]
    # What tells each older version of a chain from the record now in force: its own terms
    # (stems) and paths.
    distinct: dict[str, frozenset[str]]


def measure(units: Sequence[Unit], facts: Sequence[Fact], *, params: Params = DEFAULT,
            encoder: Encoder | None = None, blocked: Mapping[str, frozenset[int]] | None = None,
            fact_vectors: Mapping[str, Any] | None = None) -> Coverage:
    """Score every fact against the units (see the module docstring).

    ``blocked`` names, per fact id, units it may not claim (text that states another record by
    its agentctx id). With an ``encoder``, ``fact_vectors`` are facts' vectors already at hand
    (stored by consolidation); the other facts are encoded.
    """
    corpus = Corpus(units, facts, params)
    blocked = blocked or {}
    vectors = Vectors(units, facts, encoder, params, fact_vectors or {}) \
        if encoder is not None else None
    weights = [fact_weights(corpus, index, params) for index in range(len(facts))]
    frequent = max(FREQUENT_MIN_UNITS, FREQUENT_SHARE * len(units))
    readings = [_Reading(corpus, w, frequent) for w in weights]
    # Which units each fact may claim: those holding one of its less frequent terms, minus
    # blocked ones; within a chain, each unit goes to one member.
    claims: list[set[int]] = []
    for index, fact in enumerate(facts):
        claims.append(set(readings[index].pool) - blocked.get(fact.id, frozenset()))
    chains: dict[int, list[int]] = defaultdict(list)
    for index, fact in enumerate(facts):
        if fact.chain is not None:
            chains[fact.chain].append(index)
    own_of: dict[int, dict[str, float]] = {}
    evidence: dict[int, dict[int, float]] = {}
    paths_of: dict[int, frozenset[str]] = {}
    for members in chains.values():
        own, paths = contest(corpus, facts, members, weights, claims, params, evidence)
        own_of.update(own)
        paths_of.update(paths)
    for index, fact in enumerate(facts):
        if fact.chain is None and not fact.current and not corpus.fact_negated[index]:
            claims[index] = {i for i in claims[index] if not corpus.unit_negated[i]}
    matches: dict[str, Match] = {}
    stated: dict[str, list[tuple[int, float]]] = {}
    for index, fact in enumerate(facts):
        threshold = params.threshold if fact.current else params.stale_threshold
        # The vector side only speaks for a current record (it cannot tell versions apart),
        # in the units closest to it that no older version of it took.
        taken: set[int] = set(blocked.get(fact.id, frozenset()))
        for member in chains.get(fact.chain, []) if fact.chain is not None else []:
            if member != index:
                taken |= claims[member]
        matches[fact.id], stated[fact.id] = _best(
            corpus, units, weights[index], readings[index], claims[index], params,
            vectors if fact.current else None, index, threshold,
            own_of.get(index) if fact.current else None, taken, evidence.get(index))
    distinct = {facts[i].id: frozenset(own_of[i]) | paths_of.get(i, frozenset())
                for i in own_of if not facts[i].current}
    return Coverage(matches, stated, distinct)


class _Reading:
    """A fact's matched weight in the windows of the units it may be read in.

    Its less frequent terms are summed from the postings (they also pick the candidate units);
    its frequent ones ("use", a heading word found all over) are added only for the units, blocks
    and sections actually read (:meth:`complete`), so a large file costs little per record.
    """

    def __init__(self, corpus: Corpus, weights: Mapping[str, float], frequent: float) -> None:
        self._corpus = corpus
        self.total = sum(weights.values())
        rare = {t: w for t, w in weights.items()
                if 0 < len(corpus.unit_postings.get(t, ())) <= frequent}
        self._common = {t: w for t, w in weights.items() if t not in rare} if rare else {}
        self._common_terms = frozenset(self._common)
        summed = rare if rare else weights
        self.unit: dict[int, float] = defaultdict(float)
        self.block: dict[int, float] = defaultdict(float)
        self.section: dict[int, float] = defaultdict(float)
        pool: set[int] = set()
        for term, weight in summed.items():
            pool.update(corpus.unit_postings.get(term, ()))
            for i in corpus.postings.get(term, ()):
                self.unit[i] += weight
            for key in corpus.block_postings.get(term, ()):
                self.block[key] += weight
            for key in corpus.section_postings.get(term, ()):
                self.section[key] += weight
        self.pool = pool if rare else set(self.unit)
        self._units: set[int] = set()
        self._blocks: set[int] = set()
        self._sections: set[int] = set()

    def complete(self, i: int) -> None:
        """Add the frequent terms' weight to unit ``i``'s windows (once each)."""
        if not self._common or i in self._units:
            return
        corpus, common, terms = self._corpus, self._common, self._common_terms
        self._units.add(i)
        # (set intersections run in C, far cheaper than testing each term in Python; fsum is
        # exact, so the set's order, which follows the hash seed, cannot change a score)
        found = terms & corpus.window_a[i]
        if found:
            self.unit[i] += fsum([common[t] for t in found])
        block = corpus.block_of[i]
        if block not in self._blocks:
            self._blocks.add(block)
            found = terms & corpus.window_b[i]
            if found:
                self.block[block] += fsum([common[t] for t in found])
        section = corpus.section_of[i]
        if section not in self._sections:
            self._sections.add(section)
            found = terms & corpus.window_c[i]
            if found:
                self.section[section] += fsum([common[t] for t in found])


def _best(corpus: Corpus, units: Sequence[Unit], weights: Mapping[str, float],
          reading: _Reading, claimed: set[int], params: Params, vectors: Vectors | None,
          fact_index: int, threshold: float, own_terms: Mapping[str, float] | None = None,
          taken: set[int] | None = None, evidence: Mapping[int, float] | None = None
          ) -> tuple[Match, list[tuple[int, float]]]:
    """A fact's best window among the units it claims, and where it is stated.

    The keywords are read first; the vector side (``vectors``, over the claimed units and the
    closest ones not ``taken``) only when they leave the fact short of ``threshold``.
    ``own_terms`` (a current record's own terms within its chain) must show in the best
    reading's section: "run the tests from the repository root" does not state "run tests with
    pytest" when the file says nose.
    """
    total = reading.total
    if total <= 0:
        return NO_MATCH, []
    scored = _keyword_readings(corpus, reading, claimed)
    best = _pick(scored)
    best, union = _with_union(corpus, units, weights, total, scored, params, best)
    if vectors is not None and best.score < threshold:
        extra = set(vectors.candidates(fact_index)) - (taken or set()) - claimed
        scored = scored + _keyword_readings(corpus, reading, extra)
        closeness = vectors.scores(fact_index, [item[2] for item in scored])
        scored = [(max(kw, params.vector_weight * closeness[i]), own, i, kw, closeness[i])
                  for _s, own, i, kw, _v in scored]
        fused = _pick(scored)
        if fused.score > best.score:
            best = fused
    # A title stated on its own ("Store money as integer cents." for "Money is stored as integer
    # cents, never floats" and a long body): read in the unit and its block only.
    current = corpus.facts_current[fact_index]
    if current and best.score < threshold:
        # (where the whole record reads best: a title said is among them)
        closest = {item[2] for item in sorted(scored, key=lambda item: -item[1])[:PART_POOL]}
        titles = _part_readings(corpus, weights, fact_index, closest, ("title",), params)
        if titles:
            scored = scored + titles
            fused = _pick(list(titles))
            if fused.score > best.score:
                best = fused
    if own_terms and best.unit is not None:
        # What tells it from its older versions must be nearby: the own terms of its title (a
        # title names the change: "pytest" against "nose") or most of all its own terms.
        seen = frozenset(union | corpus.window_c[best.unit])
        title = {t: w for t, w in own_terms.items() if t in corpus.title_terms[fact_index]}
        if (not title or share(title, sum(title.values()), seen) < params.min_own_share) and \
                share(own_terms, sum(own_terms.values()), seen) < MOST:
            best = best._replace(score=best.score * params.without_own)
    # An older version's own words in a unit (its name, its version, its path) say it is that
    # version the unit states: a fair share of the rest of it is then enough.
    # Its title or its body alone counts there too.
    evidence = {i: e for i, e in (evidence or {}).items() if e >= params.min_own_share}
    if evidence:
        scored = scored + _part_readings(corpus, weights, fact_index, set(evidence),
                                         ("title", "body"), params)
    ranked = [(i, s, own) for s, own, i, _k, _v in scored
              if s >= threshold or (i in evidence and s >= (
                  params.phrase_floor if evidence[i] >= PHRASE else params.old_floor))]
    if not ranked and best.score >= threshold and best.unit is not None:
        ranked = [(best.unit, best.score, 1.0)]
    return best, _places(ranked, units)


def _part_readings(corpus: Corpus, weights: Mapping[str, float], fact_index: int,
                   indexes: set[int], parts: Sequence[str], params: Params) -> list[Reading]:
    """Each unit's coverage of the fact's title alone (and body alone), in the unit's window
    and its block's, discounted; units where a part reads at least half covered only."""
    found: list[Reading] = []
    for part in parts:
        terms = corpus.title_terms[fact_index] if part == "title" else \
            corpus.body_terms[fact_index]
        part_weights = {t: w for t, w in weights.items() if t in terms}
        total = sum(part_weights.values())
        if len(part_weights) < params.part_min_terms or total <= 0:
            continue
        discount = params.part_discount if part == "title" or not corpus.facts_current[
            fact_index] else 0.0
        if part == "title" and corpus.facts_current[fact_index]:
            discount = params.title_only
        for i in indexes:
            own = share(part_weights, total, corpus.window_a[i])
            wide = params.block_discount * share(part_weights, total, corpus.window_b[i])
            value = discount * max(own, wide)
            if value > 0:
                found.append((value, own, i, value, 0.0))
    return found


Reading = tuple[float, float, int, float, float]  # score, own coverage, unit, keyword, vector


def _keyword_readings(corpus: Corpus, reading: _Reading, indexes: set[int]) -> list[Reading]:
    """Each unit's keyword coverage (its best window): the hot loop of a scan."""
    total = reading.total
    for i in indexes:
        reading.complete(i)
    unit_sum, block_sum, section_sum = reading.unit.get, reading.block.get, reading.section.get
    block_of, section_of, factor = corpus.block_of, corpus.section_of, corpus.unit_factor
    block_discount = corpus.params.block_discount / total
    scored: list[Reading] = []
    for i in indexes:
        own = unit_sum(i, 0.0) / total
        keyword = block_discount * block_sum(block_of[i], 0.0)
        keyword = own if own >= keyword else keyword
        wide = factor[i] * section_sum(section_of[i], 0.0) / total
        keyword = wide if wide > keyword else keyword
        scored.append((keyword, own, i, keyword, 0.0))
    return scored


def _pick(scored: list[Reading]) -> Match:
    if not scored:
        return NO_MATCH
    scored.sort(key=lambda item: (-item[0], -item[1], item[2]))
    score, _own, unit_index, keyword, vector = scored[0]
    return Match(score, unit_index, keyword, vector)


def _with_union(corpus: Corpus, units: Sequence[Unit], weights: Mapping[str, float],
                total: float, scored: list[Reading], params: Params,
                best: Match) -> tuple[Match, set[str]]:
    """``best``, or the union of a few blocks about the same thing when that reads better."""
    union: set[str] = set()
    if not scored:
        return best, union
    # Facts spread over a few places (a table row, a command, a sentence): the union of the
    # units that add most, discounted.
    if params.union_units > 1 and params.union_discount > 0:
        by_own = sorted(scored, key=lambda item: (-item[1], item[2]))
        union = set(corpus.window_b[by_own[0][2]])
        # The places (blocks: a table row, a list item, a fence) must be about the same thing:
        # each shares one of the record's weightiest terms found in the first ("uv" in a table
        # row, a command and a sentence), not just words a large file has everywhere.
        heaviest = max(weights.values(), default=0.0)
        anchors = {t for t in union if weights.get(t, 0.0) >= ANCHOR_SHARE * heaviest}
        blocks = {block_key(units[by_own[0][2]])}
        pool = []
        for item in by_own[1:]:
            key = block_key(units[item[2]])
            if key not in blocks and anchors & corpus.window_b[item[2]]:
                blocks.add(key)
                pool.append(item)
            if len(pool) >= UNION_POOL:
                break
        used = 1
        while used < params.union_units:
            gains = [(share(weights, total, frozenset(union | corpus.window_b[item[2]])), item)
                     for item in pool]
            if not gains:
                break
            value, item = max(gains, key=lambda g: (g[0], -g[1][2]))
            if value <= share(weights, total, frozenset(union)) + 1e-9:
                break
            union |= corpus.window_b[item[2]]
            used += 1
        value = params.union_discount * share(weights, total, frozenset(union))
        if value > best.score:
            best = Match(value, by_own[0][2], value, best.vector)
    return best, union


def _places(ranked: Sequence[tuple[int, float, float]],
            units: Sequence[Unit]) -> list[tuple[int, float]]:
    best: dict[int, tuple[float, float, int]] = {}
    for index, score, anchor in ranked:
        block = units[index].block
        if block not in best or (anchor, score) > best[block][:2]:
            best[block] = (anchor, score, index)
    return sorted(((i, score) for _a, score, i in best.values()), key=lambda p: (-p[1], p[0]))
