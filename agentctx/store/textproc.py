"""Query processing: turning what a developer types into FTS5 terms.

Tokenization matches FTS5's ``unicode61`` tokenizer (letters and digits; everything else,
underscore included, separates), so a term found here is a term the index can match. Stop words —
function words and conversational filler — are dropped: OR-ing "when", "did" and "the" ranks worse
than plain FTS5. So are words about the conversation rather than its topic ("remind", "earlier",
"we discussed", "I was wondering"), and contractions typed without their apostrophe ("dont",
"whats").

:func:`word_rank` places a word in a list of the 10,000 most frequent English words, where the
words of software work ("deps", "repo", "suite") count among the most frequent; search uses it to
tell phrasing from topic.
"""

from __future__ import annotations

import re
import unicodedata

MAX_TERMS = 32

_STOP_WORD_TEXT = """
a about above after again against all also am an and any are aren't as at be because been before
being below between both but by can can't cannot could couldn't did didn't do does doesn't doing
don't down during each either else ever every few for from further get gets got had hadn't has
hasn't have haven't having he her here hers herself him himself his how i if in into is isn't it
it's its itself just let let's me more most much must my myself no nor not now of off on once
only or other ought our ours ourselves out over own same shall she should shouldn't so some such
than that that's the their theirs them themselves then there there's these they this those
through to too under until up upon us very was wasn't we were weren't what what's when where
which while who whom whose why will with won't would wouldn't yet you your yours yourself
yourselves hey hi hello please thanks thank ok okay yes yeah sure just really actually basically
maybe perhaps kind sort thing things stuff anything something everything lot lots one ones via
etc eg ie re ll ve s t d m aren couldn didn doesn don hadn hasn haven isn shouldn wasn weren
won wouldn
arent cant couldnt didnt doesnt dont hadnt hasnt havent isnt shouldnt wasnt werent wont wouldnt
im ive youre youve thats whats theres theyre weve
remind mentioned mention discussed discuss earlier previous previously conversation conversations
chat told said recall remember wondering wonder looking going wanted want think thought
"""
STOP_WORDS = frozenset(_STOP_WORD_TEXT.split())

_WORD = re.compile(r"[^\W_]+")


def fold(text: str) -> str:
    """Lower-case and strip diacritics, as unicode61 does."""
    lowered = text.lower()
    if lowered.isascii():
        return lowered
    decomposed = unicodedata.normalize("NFKD", lowered)
    return "".join(ch for ch in decomposed if not unicodedata.combining(ch))


def tokens(text: str) -> list[str]:
    """Every token of ``text`` as FTS5 unicode61 would split it, folded."""
    return _WORD.findall(fold(text))


def query_terms(text: str, max_terms: int = MAX_TERMS) -> list[str]:
    """The distinct searchable terms of a prompt or query, in order of first appearance.

    Stop words and single characters are dropped (single digits are kept: "python 3").
    """
    seen: dict[str, None] = {}
    for token in tokens(text):
        if token in STOP_WORDS or (len(token) < 2 and not token.isdigit()):
            continue
        seen.setdefault(token, None)
        if len(seen) >= max_terms:
            break
    return list(seen)


_COMMON_WORDS_FILE = "common_words.txt"
_SOFTWARE_WORDS_FILE = "software_words.txt"
# The rank given to a word of software work that is not already more frequent.
SOFTWARE_WORD_RANK = 100
_INFLECTIONS = ("s", "es", "ed", "ing", "ly")
# The frequent words as their file's sorted "word rank" lines: a hook looks up a handful of
# words, so a binary search over the text beats building a 10,000-entry dict in every process.
_common_text: str | None = None
_software_words: frozenset[str] | None = None


def _lists() -> tuple[str, frozenset[str]]:
    global _common_text, _software_words
    if _common_text is None or _software_words is None:
        _common_text = "\n" + _data_text(_COMMON_WORDS_FILE).strip() + "\n"
        _software_words = frozenset(_data_text(_SOFTWARE_WORDS_FILE).split())
    return _common_text, _software_words


def _data_text(name: str) -> str:
    """The body of a list in ``agentctx/data`` (after its comment header and a blank line)."""
    import os

    path = os.path.join(os.path.dirname(os.path.dirname(__file__)), "data", name)
    try:
        with open(path, encoding="utf-8") as handle:
            return handle.read().split("\n\n", 1)[-1]
    except OSError:
        return ""


def _common_rank(text: str, word: str) -> int | None:
    """Binary search of the sorted "word rank" lines of ``text`` for ``word``."""
    low, high = 0, len(text) - 1  # positions of newlines: a line starts after one
    while low < high:
        middle = text.rfind("\n", low, (low + high) // 2 + 1)
        if middle < low:
            middle = low
        end = text.find("\n", middle + 1)
        if end < 0:
            return None
        name, _, rank = text[middle + 1:end].partition(" ")
        if name == word:
            return int(rank) if rank.isdigit() else None
        if name < word:
            low = end
        else:
            high = middle
    return None


def _exact_rank(word: str) -> int | None:
    common, software = _lists()
    rank = _common_rank(common, word) if word else None
    if word in software:
        return min(rank, SOFTWARE_WORD_RANK) if rank is not None else SOFTWARE_WORD_RANK
    return rank


def word_rank(term: str) -> int | None:
    """The frequency rank (1 = most frequent) of ``term``, or of it without a plural, past, -ing
    or -ly ending, among the 10,000 most frequent English words
    (``agentctx/data/common_words.txt``); the words of software work (``software_words.txt``)
    rank :data:`SOFTWARE_WORD_RANK` at most. ``None`` when it is not a frequent word."""
    found = _exact_rank(term)
    if found is not None:
        return found
    for suffix in _INFLECTIONS:
        if term.endswith(suffix):
            found = _exact_rank(term[: -len(suffix)])
            if found is not None:
                return found
    return None


def fts_phrase(term: str) -> str:
    """Quote one term for an FTS5 query so no input can be read as syntax."""
    return '"' + term.replace('"', '""') + '"'
