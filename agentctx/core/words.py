"""Words as agentctx reads them: tokens, the one stop-word list, the one time-word list, and how
frequent an English word is.

Tokenization matches FTS5's ``unicode61`` tokenizer (letters and digits; everything else,
underscore included, separates; lower-cased, diacritics stripped), so a token found here is a term
the full-text index can match.

:data:`STOP_WORDS` — function words and conversational filler — are left out of every search:
OR-ing "when", "did" and "the" ranks worse than plain FTS5. So are words about the conversation
rather than its topic ("remind", "earlier", "we discussed", "I was wondering"), and contractions
typed without their apostrophe ("dont", "whats"). Its first part, :data:`QUESTION_WORDS` (the
function words of a question), is all the plain-FTS5 baseline of the benchmarks leaves out.

:data:`TIME_WORDS` are the words a time phrase is made of ("two weeks ago", "in March", "at the
start"): a prompt without one names no time, and the words of a phrase that was read are phrasing,
not topic (:mod:`agentctx.core.timewords` reads the phrases).

:func:`word_rank` places a word in a list of the 10,000 most frequent English words, where the
words of software work ("deps", "repo", "suite") count among the most frequent; search uses it to
tell phrasing from topic.

Standard library only: every prompt hook uses it.
"""

from __future__ import annotations

import os
import re
import unicodedata

# The function words of a question.
QUESTION_WORDS = frozenset("""
a an and are as at be but by can could did do does for from had has have how i if in is it me my
of on or our so than that the their them then there these they this to was we were what when
where which who whom why will with would you your
""".split())

STOP_WORDS = QUESTION_WORDS | frozenset("""
about above after again against all also am any aren't because been before being below between
both can't cannot couldn't didn't doesn't doing don't down during each either else ever every few
further get gets got hadn't hasn't haven't having he her here hers herself him himself his into
isn't it's its itself just let let's more most much must myself no nor not now off once only other
ought ours ourselves out over own same shall she should shouldn't some such that's theirs
themselves there's those through too under until up upon us very wasn't weren't what's while whose
won't wouldn't yet yours yourself yourselves
hey hi hello please thanks thank ok okay yes yeah sure really actually basically maybe perhaps kind
sort thing things stuff anything something everything lot lots one ones via etc eg ie re ll ve s t
d m aren couldn didn doesn don hadn hasn haven isn shouldn wasn weren won wouldn
arent cant couldnt didnt doesnt dont hadnt hasnt havent isnt shouldnt wasnt werent wont wouldnt
im ive youre youve thats whats theres theyre weve
remind mentioned mention discussed discuss earlier previous previously conversation conversations
chat told said recall remember wondering wonder looking going wanted want think thought
""".split())

MONTHS = ("january", "february", "march", "april", "may", "june", "july", "august", "september",
          "october", "november", "december")
SHORT_MONTHS = {month[:3]: number for number, month in enumerate(MONTHS, 1)} | {"sept": 9}

TIME_WORDS = frozenset(
    "ago back earlier before yesterday today morning afternoon tonight week weeks month months "
    "year years day days last past previous recently lately start beginning outset kickoff kick "
    "early late mid first started couple few several since during".split()) | frozenset(MONTHS) | \
    frozenset(SHORT_MONTHS)

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
