"""The text side of the drift scan: comparable words, negations, and the corpus of stems.

Words are unicode61 tokens without stop words, with version numbers kept whole; terms are their
porter stems as the FTS index makes them. :class:`Corpus` holds the terms of every unit and
record compared, each term's weight, the three windows a unit is read in and their postings.
"""

from __future__ import annotations

import math
import re
from collections import defaultdict
from collections.abc import Mapping, Sequence

from agentctx.drift.memfiles import Unit
from agentctx.drift.params import Fact, Params
from agentctx.store.stems import stems
from agentctx.store.textproc import STOP_WORDS, tokens, word_rank

SMALL_SECTION = 8  # units; a longer section's window is discounted further


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


def split_compounds(terms: frozenset[str], known: frozenset[str]) -> frozenset[str]:
    """``terms`` plus the two halves of a word made of two known terms ("nosetest": nose, test)."""
    extra: set[str] = set()
    for term in terms:
        for cut in range(4, len(term) - 3):
            if term[:cut] in known and term[cut:] in known:
                extra.update((term[:cut], term[cut:]))
    return terms | extra if extra else terms


class Corpus:
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
        self.unit_terms = [split_compounds(t, fact_terms) for t in sets[:n_units]]
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
        self.block_of = [block_key(u) for u in units]
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
            key = block_key(units[i])
            if key not in seen_blocks:
                seen_blocks.add(key)
                for term in self.window_b[i]:
                    self.block_postings[term].append(key)
        for section, section_words in section_terms.items():
            for term in section_words:
                self.section_postings[term].append(section)


def fact_weights(corpus: Corpus, index: int, params: Params) -> dict[str, float]:
    title, body = corpus.title_terms[index], corpus.body_terms[index]
    return {term: corpus.weight.get(term, 0.0) * (params.title_weight if term in title else 1.0)
            for term in title | body}


def share(weights: Mapping[str, float], total: float, window: frozenset[str]) -> float:
    if total <= 0:
        return 0.0
    return sum(w for t, w in weights.items() if t in window) / total




def block_key(unit: Unit) -> int:
    """What a unit's block window is keyed by: its block, or for a table row the row itself."""
    return -1 - unit.position if unit.kind == "row" else unit.block


