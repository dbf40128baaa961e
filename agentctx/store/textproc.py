"""Query processing: turning what a developer types into FTS5 terms.

Tokenization matches FTS5's ``unicode61`` tokenizer (letters and digits; everything else,
underscore included, separates), so a term found here is a term the index can match. Stop words —
function words and conversational filler — are dropped: OR-ing "when", "did" and "the" ranks worse
than plain FTS5. So are words about the conversation rather than its topic ("remind", "earlier",
"we discussed", "I was wondering").
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


def fts_phrase(term: str) -> str:
    """Quote one term for an FTS5 query so no input can be read as syntax."""
    return '"' + term.replace('"', '""') + '"'
