"""The text side of the drift scan: comparable words, negations, and the corpus of stems.

Words are unicode61 tokens without stop words, with version numbers kept whole; terms are their
porter stems as the FTS index makes them. :class:`Corpus` holds the terms of every unit and
record compared, each term's weight, the three windows a unit is read in and their postings.
"""

from __future__ import annotations

import itertools
import math
import re
from collections import defaultdict
from collections.abc import Mapping, Sequence
from math import fsum

from agentctx.core.words import STOP_WORDS, tokens, word_rank
from agentctx.drift.memfiles import Unit
from agentctx.drift.params import Fact, Params
from agentctx.store.stems import stems

SMALL_SECTION = 8  # units; a longer section's window is discounted further


# Words that make a sentence about a superseded fact a statement that it no longer holds
# ("there is no requirements.txt any more", "we don't use workspaces").
NEGATIONS = frozenset("""no not never don doesn isn aren won without instead anymore longer
removed deleted dropped deprecated legacy formerly previously replaced nor nobody
neither""".split())
# Words that tell of a change: what is around them is history, not a statement ("billing/ was
# renamed to payments/", "Airflow was retired", "we switched from mockgen").
CHANGES = frozenset("""renamed retired decommissioned switched migrated moved superseded
obsolete abandoned ditched sunset stopped""".split())
# These negate only what follows them ("no Docker is needed" says nothing against the
# "in-memory database" before it); "anymore" only what precedes it.
FORWARD = frozenset("no never without nobody neither nor instead longer".split())
BACKWARD = frozenset(["anymore"])
# After a negation or a change, these words start what is in force ("renamed to payments/",
# "replaced by gRPC", "in favour of uv"): the words after them are not negated.
TURNS = frozenset("to by with favor favour but now so".split())


NEGATION_BEFORE, NEGATION_AFTER = 2, 4  # words around a negation that it is about


def negated(text: str) -> bool:
    """Whether ``text`` has a word of negation or of something given up (:data:`NEGATIONS`)."""
    return any(t in NEGATIONS for t in tokens(text))


def negated_words(text: str) -> set[str]:
    """The words of ``text`` said only close to a negation or a change: "we don't use
    workspaces" negates "use" and "workspaces", "requirements.txt was removed" negates
    "requirements" and "txt", "billing/ was renamed to payments/" negates "billing" (not
    "payments": a turn word ends what a negation is about). A word said elsewhere too
    ("TSLint-clean: no tslint:disable without a comment") is not negated."""
    words = _tokens_and_paths(text)
    covered = [False] * len(words)
    for position, word in enumerate(words):
        if word in NEGATIONS or word in CHANGES:
            content = 0  # the words before: the nearest few that are not stop words
            for before in range(position - 1, -1, -1):
                if content >= NEGATION_BEFORE or word in FORWARD:
                    break
                covered[before] = True
                content += words[before] not in STOP_WORDS
            stop = position if word in BACKWARD else position + NEGATION_AFTER
            for after in range(position + 1, min(len(words), stop + 1)):
                if words[after] in TURNS:
                    break
                covered[after] = True
    # A path counts whole and for its words.
    said: dict[bool, set[str]] = {True: set(), False: set()}
    for word, is_covered in zip(words, covered, strict=True):
        said[is_covered].add(word)
        if "/" in word:
            said[is_covered].update(tokens(word))
    return said[True] - said[False] - NEGATIONS - CHANGES


# A path: names joined by slashes ("harbor/billing/", "./mlruns/", "apps/<app>/overlays"), not a
# URL's ("s3://bucket/raw/" gives none: it starts after "//").
_PATH = re.compile(r"(?<![\w/.:@~<>{}*-])(?:~/|\./|/)?((?:[\w.*<>{}-]+/)+[\w.*<>{}-]*)")
_PAIR = re.compile(r"^[a-z]{1,3}/[a-z]{1,3}$")  # and/or, TCP/IP: no paths


def _path(match: re.Match[str]) -> str | None:
    path = match.group(1).strip("/").lower()
    if "/" not in path or not any(c.isalpha() for c in path) or _PAIR.match(path):
        return None
    return path


def paths_of(text: str) -> list[str]:
    """The paths a text names, lower-cased, without a leading ``./`` or a trailing ``/``
    ("harbor/billing/" gives "harbor/billing"), each with its folder when it has three parts
    or more ("harbor/payments/refunds.py" gives "harbor/payments" too)."""
    found: list[str] = []
    for match in _PATH.finditer(text):
        path = _path(match)
        if path is None:
            continue
        found.append(path)
        if path.count("/") >= 2:
            found.append(path.rsplit("/", 1)[0])
    return found


def _tokens_and_paths(text: str) -> list[str]:
    """The tokens of ``text`` in order, each path one token (for negation windows)."""
    found: list[str] = []
    start = 0
    for match in _PATH.finditer(text):
        path = _path(match)
        if path is None:
            continue
        found.extend(tokens(text[start:match.start()]))
        found.append(path)
        start = match.end()
    found.extend(tokens(text[start:]))
    return found


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


def mentions(text: str, terms: frozenset[str]) -> bool:
    """Whether ``text`` holds one of ``terms`` (stems or paths), or a word starting or ending
    with one ("nosetests" for "nose", "TSLint-clean" for "tslint")."""
    words = words_of(text)
    said = set(stems(w for w in words if "." not in w).values()) | set(paths_of(text))
    said.update(w for w in words if "." in w)
    return bool(said & terms) or any(
        len(t) >= 4 and (w.startswith(t) or w.endswith(t)) for t in terms for w in said)


def split_compounds(terms: frozenset[str], known: frozenset[str]) -> frozenset[str]:
    """``terms`` plus the two halves of a word made of two known terms ("nosetest": nose, test;
    "externalsecret": extern, secret — the first half a stem, so up to two letters of its
    ending may sit between them)."""
    extra: set[str] = set()
    for term in terms:
        for cut in range(4, len(term) - 3):
            if term[:cut] not in known:
                continue
            for skip in range(3):
                if len(term) - cut - skip >= 4 and term[cut + skip:] in known:
                    extra.update((term[:cut], term[cut + skip:]))
                    break
    return terms | extra if extra else terms


def _pairs(terms: Sequence[str]) -> frozenset[str]:
    """Each two terms in a row, of words (not numbers alone): "make flash"."""
    return frozenset(f"{a} {b}" for a, b in itertools.pairwise(terms)
                     if a != b and not (a[0].isdigit() and b[0].isdigit()))


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
        # Two words in a row ("make flash"): a command or a name that only one version says;
        # in the memory files, only what is written as code (`make flash`, a fence's line).
        chained = [f.chain is not None for f in facts]  # versions compete: more is read
        no_pairs: frozenset[str] = frozenset()
        pairs = [_pairs([stem_of[w] for w in ws]) if chained[i % len(facts)] else no_pairs
                 for i, ws in enumerate(all_words[2 * len(units):])]
        code = [words_of(u.code) for u in units]
        code_of = stems(w for ws in code for w in ws if "." not in w)
        self.unit_pairs = [_pairs([code_of.get(w, w) for w in ws]) for ws in code]
        n_units, n_facts = len(units), len(facts)
        heading_terms = sets[n_units:2 * n_units]
        self.title_terms = sets[2 * n_units:2 * n_units + n_facts]
        self.body_terms = sets[2 * n_units + n_facts:]
        fact_terms = frozenset().union(*self.title_terms, *self.body_terms)
        self.unit_terms = [split_compounds(t, fact_terms) for t in sets[:n_units]]
        self.fact_pairs = [t | b for t, b in zip(pairs[:n_facts], pairs[n_facts:], strict=True)]
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
            if term[0].isdigit() and len(term) > 1:  # a lone digit ("Yarn 1") says little
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
        self.facts_current = [f.current for f in facts]
        # The paths each text names (evidence of which version a unit states, not coverage: a
        # path is written in many ways), and those a record names only as history.
        self.unit_paths = [frozenset(paths_of(u.text)) for u in units]
        self.fact_paths = [frozenset(paths_of(f"{f.title} {f.body}")) if chain else no_pairs
                           for f, chain in zip(facts, chained, strict=True)]
        self.fact_negated = [negated(f"{f.title} {f.body}") for f in facts]
        # What a record says only as history ("renamed from billing/"): no statement of it.
        self.fact_history = [frozenset(stem_of.get(w, w) for w in negated_words(
            f"{f.title}. {f.body}")) if chain else no_pairs
            for f, chain in zip(facts, chained, strict=True)]
        # (negated_words gives a path whole, so a path said only as history is in here too)
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
    """The share of ``total`` that the weights of the terms in ``window`` make."""
    if total <= 0:
        return 0.0
    # fsum is exact: the set's order (which follows the hash seed) cannot change a share
    return fsum(weights[t] for t in window.intersection(weights)) / total




def block_key(unit: Unit) -> int:
    """What a unit's block window is keyed by: its block, or for a table row the row itself."""
    return -1 - unit.position if unit.kind == "row" else unit.block


