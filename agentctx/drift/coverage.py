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

**Chains.** A current record and the records it superseded compete for each unit. What decides
is each member's *own* terms (those no other member has: "pytest" against "nose", "16" against
"15") in the unit's own words, leaving out words under a negation ("we don't use nose any more"):
an older version takes the unit only when its own terms are there in a fair share and the current
record's are not nearly as much; otherwise the unit stays with the current record.

Text that carries an agentctx id comment (an entry of the marked section, a replacement written
beside struck text) states the record it names and nothing else.
"""

from __future__ import annotations

import math
import re
from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, NamedTuple

from agentctx.core.words import STOP_WORDS, tokens, word_rank
from agentctx.drift.memfiles import Unit
from agentctx.store.stems import stems

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
UNION_POOL = 8  # the units (best on their own) a union is chosen from
ANCHOR_SHARE = 0.5  # an anchor of a union weighs at least this share of the record's heaviest term
MOST = 0.5  # "most of its own terms"
SMALL_SECTION = 8  # units; a longer section's window is discounted further
# A term in more units than this share (and this number) does not by itself make a unit a
# candidate reading of a record; its weight is added only to the candidates' readings.
FREQUENT_SHARE, FREQUENT_MIN_UNITS = 0.05, 10
VECTOR_POOL = 8  # units a record may be read in for its vector alone (the closest ones)


# Words that make a sentence about a superseded fact a statement that it no longer holds
# ("there is no requirements.txt any more", "we don't use workspaces").
NEGATIONS = frozenset("""no not never don doesn isn aren won without instead anymore longer
removed deleted dropped deprecated legacy formerly previously replaced nor""".split())


NEGATION_BEFORE, NEGATION_AFTER = 2, 4  # words around a negation that it is about


def negated(text: str) -> bool:
    """Whether ``text`` has a word of negation or of something given up (:data:`NEGATIONS`)."""
    return any(t in NEGATIONS for t in tokens(text))


def negated_words(text: str) -> set[str]:
    """The words of ``text`` close to a negation: "we don't use workspaces" negates "use" and
    "workspaces", "requirements.txt was removed" negates "requirements" and "txt"."""
    words = tokens(text)
    found: set[str] = set()
    for position, word in enumerate(words):
        if word in NEGATIONS:
            found.update(words[max(0, position - NEGATION_BEFORE):position + NEGATION_AFTER + 1])
    return found - NEGATIONS


_DIMENSIONS = re.compile(r"\b(\d+)[x×](\d+)\b")  # 480x270 and 480×270 alike
_VERSION = re.compile(r"(?<![\w.])v?(\d+(?:\.\d+)+)(?:\.[xX*])?(?![\w.]*\w)")


def words_of(text: str) -> list[str]:
    """The comparable words of a text: unicode61 tokens without stop words or lone letters, and
    version numbers whole ("4.1.3", with its prefix "4.1"), never split into digits."""
    versions: list[str] = []

    def keep(match: re.Match[str]) -> str:
        number = match.group(1)
        versions.append(number)
        parts = number.split(".")
        if len(parts) > 2:
            versions.append(".".join(parts[:2]))
        return " "

    rest = _DIMENSIONS.sub(" \\1 \\2 ", _VERSION.sub(keep, text))
    found = [t for t in tokens(rest) if t not in STOP_WORDS and (len(t) > 1 or t.isdigit())]
    return found + versions


def _split_compounds(terms: frozenset[str], known: frozenset[str]) -> frozenset[str]:
    """``terms`` plus the two halves of a word made of two known terms ("nosetest": nose, test)."""
    extra: set[str] = set()
    for term in terms:
        for cut in range(4, len(term) - 3):
            if term[:cut] in known and term[cut:] in known:
                extra.update((term[:cut], term[cut:]))
    return terms | extra if extra else terms


class _Corpus:
    """Stems of every text compared, their weights, and the windows of the memory files."""

    def __init__(self, units: Sequence[Unit], facts: Sequence[Fact], params: Params) -> None:
        texts = [u.text for u in units]
        heading_texts = [" ".join(u.headings) for u in units]
        fact_titles = [f.title for f in facts]
        fact_bodies = [f.body for f in facts]
        all_words = [words_of(t) for t in (*texts, *heading_texts, *fact_titles, *fact_bodies)]
        stem_of = stems(w for ws in all_words for w in ws if "." not in w)
        stem_of.update((w, w) for ws in all_words for w in ws if "." in w)
        sets = [frozenset(stem_of[w] for w in ws) for ws in all_words]
        n_units, n_facts = len(units), len(facts)
        heading_terms = sets[n_units:2 * n_units]
        self.title_terms = sets[2 * n_units:2 * n_units + n_facts]
        self.body_terms = sets[2 * n_units + n_facts:]
        fact_terms = frozenset().union(*self.title_terms, *self.body_terms)
        self.unit_terms = [_split_compounds(t, fact_terms) for t in sets[:n_units]]
        # A stem's English rank: the most frequent of the words it comes from.
        rank: dict[str, int] = {}
        for w in {w for ws in all_words for w in ws}:
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
            if term[0].isdigit():
                prior *= params.number_weight
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
        section_size: dict[int, int] = defaultdict(int)
        for u in units:
            section_size[u.section] += 1
        # A long section says many things: reading it whole counts for less.
        self.section_factor = {
            section: params.section_discount * min(1.0, math.sqrt(SMALL_SECTION / size))
            for section, size in section_size.items()}
        self.params = params
        self.block_of = [_block_key(u) for u in units]
        self.section_of = [u.section for u in units]
        self.unit_factor = [self.section_factor[u.section] for u in units]
        self.unit_negated = [negated(u.text) for u in units]
        # Stems said under a negation in each unit: they count for no member of a chain.
        self.negated_terms = [frozenset(stem_of.get(w, w) for w in negated_words(u.text))
                              for u in units]
        self.fact_negated = [negated(f"{f.title} {f.body}") for f in facts]
        # Postings of each window kind: term -> units, block keys, sections.
        self.postings: dict[str, list[int]] = defaultdict(list)
        self.unit_postings: dict[str, list[int]] = defaultdict(list)
        self.block_postings: dict[str, list[int]] = defaultdict(list)
        self.section_postings: dict[str, list[int]] = defaultdict(list)
        seen_blocks: set[int] = set()
        for i, terms in enumerate(self.window_a):
            for term in terms:
                self.postings[term].append(i)
            for term in self.unit_terms[i]:
                self.unit_postings[term].append(i)
            key = _block_key(units[i])
            if key not in seen_blocks:
                seen_blocks.add(key)
                for term in self.window_b[i]:
                    self.block_postings[term].append(key)
        for section, section_words in section_terms.items():
            for term in section_words:
                self.section_postings[term].append(section)


def _weights(corpus: _Corpus, index: int, params: Params) -> dict[str, float]:
    title, body = corpus.title_terms[index], corpus.body_terms[index]
    return {term: corpus.weight.get(term, 0.0) * (params.title_weight if term in title else 1.0)
            for term in title | body}


def _share(weights: Mapping[str, float], total: float, window: frozenset[str]) -> float:
    if total <= 0:
        return 0.0
    return sum(w for t, w in weights.items() if t in window) / total


class Coverage(NamedTuple):
    """The outcome for every fact: its best match among the windows it may claim."""

    matches: dict[str, Match]
    # Where each fact is stated: per block, the unit it covers best on its own among those it
    # claims at or above the threshold; best first.
    stated_at: dict[str, list[tuple[int, float]]]


def measure(units: Sequence[Unit], facts: Sequence[Fact], *, params: Params = DEFAULT,
            encoder: Encoder | None = None, blocked: Mapping[str, frozenset[int]] | None = None,
            fact_vectors: Mapping[str, Any] | None = None) -> Coverage:
    """Score every fact against the units (see the module docstring).

    ``blocked`` names, per fact id, units it may not claim (text that states another record by
    its agentctx id). With an ``encoder``, ``fact_vectors`` are facts' vectors already at hand
    (stored by consolidation); the other facts are encoded.
    """
    corpus = _Corpus(units, facts, params)
    blocked = blocked or {}
    vectors = _Vectors(units, facts, encoder, params, fact_vectors or {}) \
        if encoder is not None else None
    weights = [_weights(corpus, index, params) for index in range(len(facts))]
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
    for members in chains.values():
        own_of.update(_contest(corpus, facts, members, weights, claims, params))
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
            own_of.get(index) if fact.current else None, taken)
    return Coverage(matches, stated)


class _Reading:
    """A fact's matched weight in the windows of the units it may be read in.

    Its less frequent terms are summed from the postings (they also pick the candidate units);
    its frequent ones ("use", a heading word found all over) are added only for the units, blocks
    and sections actually read (:meth:`complete`), so a large file costs little per record.
    """

    def __init__(self, corpus: _Corpus, weights: Mapping[str, float], frequent: float) -> None:
        self._corpus = corpus
        self.total = sum(weights.values())
        rare = {t: w for t, w in weights.items()
                if 0 < len(corpus.unit_postings.get(t, ())) <= frequent}
        self._common = [(t, w) for t, w in weights.items() if t not in rare] if rare else []
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
        corpus = self._corpus
        self._units.add(i)
        window = corpus.window_a[i]
        self.unit[i] += sum(w for t, w in self._common if t in window)
        block = corpus.block_of[i]
        if block not in self._blocks:
            self._blocks.add(block)
            window = corpus.window_b[i]
            self.block[block] += sum(w for t, w in self._common if t in window)
        section = corpus.section_of[i]
        if section not in self._sections:
            self._sections.add(section)
            window = corpus.window_c[i]
            self.section[section] += sum(w for t, w in self._common if t in window)


def _titled(corpus: _Corpus, own: Mapping[str, float], member: int, said: frozenset[str]) -> bool:
    """Whether ``said`` holds one of ``member``'s own title terms, or a longer word from it."""
    title = [t for t in own if t in corpus.title_terms[member] and "." not in t]
    return any(t in said or (len(t) >= 4 and any(w.startswith(t) for w in said))
               for t in title)


def _contest(corpus: _Corpus, facts: Sequence[Fact], members: list[int],
             weights: Sequence[Mapping[str, float]], claims: list[set[int]],
             params: Params) -> dict[int, dict[str, float]]:
    """Give each unit claimed by several members of one chain to one of them; returns each
    member's own terms with their weights.

    A member's own terms (those no other member has) decide, in the narrowest window where any
    member's own terms appear: the member whose own terms are there in the largest share wins,
    and the current record keeps the unit when its share is at least ``params.current_keeps``
    times that. Text with no member's own terms stays with the current record; a superseded
    member never wins negated text ("we no longer use nose") unless it is negated itself.
    """
    terms = {m: set(weights[m]) for m in members}
    own: dict[int, dict[str, float]] = {}
    own_total: dict[int, float] = {}
    current = max(members, key=lambda m: (facts[m].current, m))
    for m in members:
        # An older version's own terms are set against the current record and the other
        # versions' titles only: a replacement's body often names what it replaced ("REST
        # round trips were 40% of latency"), which must not take those words from the old one.
        if m == current:
            others = set().union(*(terms[o] for o in members if o != m))
        else:
            others = terms[current].union(*(corpus.title_terms[o] for o in members
                                             if o not in (m, current)))
        own[m] = {t: w for t, w in weights[m].items() if t not in others}
        own_total[m] = sum(own[m].values())
    preference = {m: (facts[m].current, position) for position, m in enumerate(members)}
    contested: set[int] = set().union(*(claims[m] for m in members))
    for unit in contested:
        # Only the unit's own words can give it to an older version (not its headings, which
        # repeat a project name or a topic over many units), and not under a negation.
        said = corpus.unit_terms[unit]
        unsaid = said - corpus.negated_terms[unit]
        shares = {m: _share(own[m], own_total[m], said if corpus.fact_negated[m] else unsaid)
                  for m in members}
        top = max(shares.values())
        winner = current
        if top >= params.min_own_share and shares[current] < params.current_keeps * top:
            winner = max(members, key=lambda m: (round(shares[m], 6), preference[m]))
        elif shares[current] == 0:
            # Nothing of the current record's own terms, but a word only an older version's
            # title has ("REST", "nose" — or "nosetests"): the unit states that version.
            titled = [m for m in members if m != current and _titled(corpus, own[m], m, unsaid)]
            if titled:
                winner = max(titled, key=lambda m: (round(shares[m], 6), preference[m]))
        for m in members:
            if m != winner:
                claims[m].discard(unit)
    return own


def _best(corpus: _Corpus, units: Sequence[Unit], weights: Mapping[str, float],
          reading: _Reading, claimed: set[int], params: Params, vectors: _Vectors | None,
          fact_index: int, threshold: float, own_terms: Mapping[str, float] | None = None,
          taken: set[int] | None = None) -> tuple[Match, list[tuple[int, float]]]:
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
    if own_terms and best.unit is not None:
        # What tells it from its older versions must be nearby: the own terms of its title (a
        # title names the change: "pytest" against "nose") or most of all its own terms.
        seen = frozenset(union | corpus.window_c[best.unit])
        title = {t: w for t, w in own_terms.items() if t in corpus.title_terms[fact_index]}
        if (not title or _share(title, sum(title.values()), seen) < params.min_own_share) and \
                _share(own_terms, sum(own_terms.values()), seen) < MOST:
            best = best._replace(score=best.score * params.without_own)
    ranked = [(i, s, own) for s, own, i, _k, _v in scored if s >= threshold]
    if not ranked and best.score >= threshold and best.unit is not None:
        ranked = [(best.unit, best.score, 1.0)]
    return best, _places(ranked, units)


Reading = tuple[float, float, int, float, float]  # score, own coverage, unit, keyword, vector


def _keyword_readings(corpus: _Corpus, reading: _Reading, indexes: set[int]) -> list[Reading]:
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


def _with_union(corpus: _Corpus, units: Sequence[Unit], weights: Mapping[str, float],
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
        blocks = {_block_key(units[by_own[0][2]])}
        pool = []
        for item in by_own[1:]:
            key = _block_key(units[item[2]])
            if key not in blocks and anchors & corpus.window_b[item[2]]:
                blocks.add(key)
                pool.append(item)
            if len(pool) >= UNION_POOL:
                break
        used = 1
        while used < params.union_units:
            gains = [(_share(weights, total, frozenset(union | corpus.window_b[item[2]])), item)
                     for item in pool]
            if not gains:
                break
            value, item = max(gains, key=lambda g: (g[0], -g[1][2]))
            if value <= _share(weights, total, frozenset(union)) + 1e-9:
                break
            union |= corpus.window_b[item[2]]
            used += 1
        value = params.union_discount * _share(weights, total, frozenset(union))
        if value > best.score:
            best = Match(value, by_own[0][2], value, best.vector)
    return best, union


def _block_key(unit: Unit) -> int:
    """What a unit's block window is keyed by: its block, or for a table row the row itself."""
    return -1 - unit.position if unit.kind == "row" else unit.block


def _places(ranked: Sequence[tuple[int, float, float]],
            units: Sequence[Unit]) -> list[tuple[int, float]]:
    best: dict[int, tuple[float, float, int]] = {}
    for index, score, anchor in ranked:
        block = units[index].block
        if block not in best or (anchor, score) > best[block][:2]:
            best[block] = (anchor, score, index)
    return sorted(((i, score) for _a, score, i in best.values()), key=lambda p: (-p[1], p[0]))


class _Vectors:
    """The vector side: how close each fact is to each unit (and its block), mapped to 0-1,
    worked out for a fact only when its keywords fall short."""

    def __init__(self, units: Sequence[Unit], facts: Sequence[Fact], encoder: Encoder,
                 params: Params, known: Mapping[str, Any]) -> None:
        import numpy as np  # late: numpy costs 80 ms at every CLI start

        unit_texts = [" ".join((*u.headings[-1:], u.text)) for u in units]
        blocks: dict[int, list[str]] = defaultdict(list)
        for u in units:
            blocks[u.block].append(u.text)
        # Blocks of one unit read as that unit: only longer ones are embedded again.
        block_ids = sorted(b for b, texts in blocks.items() if len(texts) > 1)
        block_texts = [" ".join(blocks[b]) for b in block_ids]
        missing = [f for f in facts if f.id not in known]
        texts = [*unit_texts, *block_texts, *(f.embedding_text for f in missing)]
        encoded = np.asarray(encoder(texts), dtype=np.float32) if texts else \
            np.zeros((0, 1), dtype=np.float32)
        dim = encoded.shape[1] if encoded.ndim == 2 and len(encoded) else \
            len(next(iter(known.values()), [0.0]))
        encoded = encoded.reshape(len(texts), dim)
        made = dict(zip((f.id for f in missing), encoded[len(units) + len(block_texts):],
                        strict=True))
        self._np = np
        self._params = params
        self._facts = [known[f.id] if f.id in known else made[f.id] for f in facts]
        self._units = encoded[:len(units)]
        self._blocks = encoded[len(units):len(units) + len(block_texts)]
        block_row = {b: n for n, b in enumerate(block_ids)}
        self._columns = [i for i, u in enumerate(units) if u.block in block_row]
        self._column_blocks = [block_row[units[i].block] for i in self._columns]
        self._row: tuple[int, Any] | None = None

    def _mapped(self, fact_index: int) -> Any:
        if self._row is None or self._row[0] != fact_index:
            np, params = self._np, self._params
            vector = np.asarray(self._facts[fact_index], dtype=np.float32)
            cosine = self._units @ vector
            if self._columns:
                wide = params.block_discount * (self._blocks @ vector)
                cosine[self._columns] = np.maximum(cosine[self._columns],
                                                   wide[self._column_blocks])
            span = max(1e-6, params.vector_high - params.vector_low)
            self._row = (fact_index, np.clip((cosine - params.vector_low) / span, 0.0, 1.0))
        return self._row[1]

    def scores(self, fact_index: int, unit_indexes: Iterable[int]) -> dict[int, float]:
        """The fact's vector coverage (0-1) of each of the units."""
        wanted = list(unit_indexes)
        values = self._mapped(fact_index)[self._np.asarray(wanted, dtype=self._np.int64)]
        return dict(zip(wanted, values.tolist(), strict=True))

    def candidates(self, fact_index: int) -> list[int]:
        """The units closest to the fact (at most :data:`VECTOR_POOL`) above ``vector_low``."""
        row = self._mapped(fact_index)
        if not len(row):
            return []
        k = min(VECTOR_POOL, len(row))
        top = self._np.argpartition(-row, k - 1)[:k]
        return [int(i) for i in top if row[i] > 0]
