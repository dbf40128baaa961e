"""Ranking and decay constants, in one place.

Search multiplies its BM25 score by a type weight, a recency factor and a confidence weight;
consolidation's decay score uses the same half-lives. ``None`` as a half-life means "never decays":
decisions, conventions, preferences and profile facts change only by supersession — a fact in
force does not lose truth by not being read. Discoveries, bugfixes and handovers decay (each
worktree's latest handover excepted: it is where the next session starts).
"""

from __future__ import annotations

import math
from datetime import UTC, datetime, timedelta

from agentctx.core.ids import now as clock_now
from agentctx.core.lean import NamedTuple
from agentctx.core.words import word_rank

# Relative weight of each record type in search ranking.
TYPE_WEIGHT: dict[str, float] = {
    "decision": 1.25,
    "convention": 1.2,
    "preference": 1.0,
    "bugfix": 1.0,
    "discovery": 1.0,
    "profile": 0.9,
    "handover": 0.8,
}

# Half-life in days of each type's recency factor (None: never decays).
HALF_LIFE_DAYS: dict[str, float | None] = {
    "decision": None,
    "convention": None,
    "profile": None,
    "preference": None,
    "discovery": 90.0,
    "bugfix": 90.0,
    "handover": 7.0,
}

# Recency never takes more than this share of a record's rank away (old facts stay findable).
RECENCY_FLOOR = 0.5

CONFIDENCE_WEIGHT: dict[str, float] = {"explicit": 1.0, "reinforced": 1.0, "inferred": 0.85}

# A superseded record (shown only on request or as of a past date) ranks below current ones.
SUPERSEDED_WEIGHT = 0.5

# BM25 column weights: title, body, project_id (the last is a filter column only).
BM25_WEIGHTS = (1.5, 1.0, 0.0)

# Chain-aware ranking: a superseded record that matches a query surfaces the record now in force
# in its place, at this share of its own score and relevance ("still on nose?" answers with
# what replaced nose). A superseded record shown on request always ranks below its successor.
VIA_WEIGHT = 0.9

# Relevance is the IDF-weighted share of the query's terms a record matches. A query word that no
# record contains weighs a multiple of the rarest possible term's IDF: a lot when it is not a
# frequent English word (a topic the store knows nothing about: "storybook", "gdpr"), and, when it
# is one, more the rarer it is: a word's information grows with the log of its frequency rank, so
# the weight rises log-linearly from ABSENT_COMMON_MIN_WEIGHT for the COMMON_RANK_FLOOR most
# frequent words ("need", "work") to ABSENT_COMMON_MAX_WEIGHT at the list's last rank
# ("weekend", "incidents": topic words the store lacks).
# Tuned on the coding benchmark's two tuning files and the LongMemEval subset (see bench/).
ABSENT_TERM_WEIGHT = 3.0
ABSENT_COMMON_MIN_WEIGHT = 0.1
ABSENT_COMMON_MAX_WEIGHT = 1.5
COMMON_RANK_FLOOR = 100
COMMON_RANK_CEILING = 10_000
# A matched word that is frequent in English ("set", "fix", "run") is weaker evidence of topic
# than its rarity in the store suggests: its IDF counts at this share in relevance.
PRESENT_COMMON_WEIGHT = 0.7


# The per-prompt hook's semantic check (when consolidation has written the model's query side
# file): a record whose relevance is under SEMANTIC_SURE_RELEVANCE is injected only if the cosine
# between the prompt's terms and the record is at least SEMANTIC_MIN_COSINE. Lexical relevance
# alone cannot tell "release notes for version 2.3" from "Python version: 3.12"; the meaning can.
SEMANTIC_MIN_COSINE = 0.3
SEMANTIC_SURE_RELEVANCE = 0.4


def absent_word_weight(rank: int | None) -> float:
    """The weight, as a multiple of the rarest IDF, of a query word no record contains;
    ``rank`` is its English frequency rank (``None``: not a frequent word)."""
    if rank is None:
        return ABSENT_TERM_WEIGHT
    if rank <= COMMON_RANK_FLOOR:
        return ABSENT_COMMON_MIN_WEIGHT
    share = math.log(min(rank, COMMON_RANK_CEILING) / COMMON_RANK_FLOOR) / math.log(
        COMMON_RANK_CEILING / COMMON_RANK_FLOOR)
    return ABSENT_COMMON_MIN_WEIGHT + (ABSENT_COMMON_MAX_WEIGHT - ABSENT_COMMON_MIN_WEIGHT) * share


def age_days(valid_from: str, now: datetime | None = None) -> float:
    """Days between ``valid_from`` (ISO, as stored) and now; 0 for future or unparsable dates."""
    moment = now or clock_now()
    try:
        then = datetime.fromisoformat(valid_from.replace("Z", "+00:00"))
    except ValueError:
        return 0.0
    return max(0.0, (moment - then).total_seconds() / 86400.0)


def decay(type_: str, days: float) -> float:
    """Pure exponential decay for a record of ``type_`` that is ``days`` old (1.0 = no decay)."""
    half_life = HALF_LIFE_DAYS.get(type_)
    if half_life is None:
        return 1.0
    return math.pow(0.5, days / half_life)


def recency(type_: str, days: float) -> float:
    """The search recency factor: decay lifted to the floor, in [RECENCY_FLOOR, 1]."""
    return RECENCY_FLOOR + (1.0 - RECENCY_FLOOR) * decay(type_, days)



# ------------------------------------------------------------------ consolidation score
#
# score = base_relevance × access_decay × recency_decay × confidence_weight, in (0, 1].
#
# * base_relevance — what a record of this type is worth when fresh (BASE_RELEVANCE).
# * recency_decay — ``decay(type, days)``, the days counted from the record's last use (its
#   ``last_accessed``, else its ``valid_from``): using a record keeps it fresh. Decisions,
#   conventions, preferences and profile facts never decay (they change only by supersession);
#   discoveries and bugfixes decay over months, handovers within a week (HALF_LIFE_DAYS above),
#   except each worktree's latest handover, which is kept fresh (``kept_fresh``).
# * access_decay — the usage factor: a record nobody ever fetched keeps ACCESS_FLOOR of its
#   weight and each fetch closes half of the remaining gap (1 use: 0.85, 3 uses: 0.96). Types that
#   never decay are exempt (1.0).
# * confidence_weight — CONFIDENCE_WEIGHT above (inferred records weigh less).
#
# A fresh, never-used inferred handover scores 0.42 and drops under the pruning threshold (0.1)
# about two weeks later (unless it is still its worktree's latest); a discovery after about seven
# months; a decision, convention, preference or profile fact never.

BASE_RELEVANCE: dict[str, float] = {
    "decision": 1.0,
    "convention": 1.0,
    "profile": 0.9,
    "preference": 0.9,
    "bugfix": 0.8,
    "discovery": 0.8,
    "handover": 0.7,
}
ACCESS_FLOOR = 0.7


class ScoreFactors(NamedTuple):
    """The four factors of a record's consolidation score, their product, and recency's origin."""

    base_relevance: float
    access_decay: float
    recency_decay: float
    confidence_weight: float
    score: float
    reference: datetime  # the moment recency counts from (last use, else valid_from)


def _parse(moment: str | None) -> datetime | None:
    if not moment:
        return None
    try:
        parsed = datetime.fromisoformat(moment.replace("Z", "+00:00"))
    except ValueError:
        return None
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)


def access_decay(type_: str, access_count: int) -> float:
    """The usage factor: ACCESS_FLOOR for a never-used record, approaching 1 with use."""
    if HALF_LIFE_DAYS.get(type_) is None:
        return 1.0
    return ACCESS_FLOOR + (1.0 - ACCESS_FLOOR) * (1.0 - math.pow(0.5, max(0, access_count)))


def score_factors(type_: str, confidence: str, valid_from: str, last_accessed: str | None,
                  access_count: int, now: datetime | None = None, *,
                  kept_fresh: bool = False) -> ScoreFactors:
    """The consolidation score of one record, factor by factor; ``kept_fresh`` (a worktree's
    latest handover) takes no decay at all."""
    moment = now or clock_now()
    moments = [m for m in (_parse(valid_from), _parse(last_accessed)) if m is not None]
    reference = min(max(moments), moment) if moments else moment
    days = (moment - reference).total_seconds() / 86400.0
    base = BASE_RELEVANCE.get(type_, 0.8)
    access = 1.0 if kept_fresh else access_decay(type_, access_count)
    recent = 1.0 if kept_fresh else decay(type_, days)
    weight = CONFIDENCE_WEIGHT.get(confidence, 1.0)
    return ScoreFactors(base, access, recent, weight, base * access * recent * weight, reference)


def low_since(type_: str, factors: ScoreFactors, threshold: float) -> datetime | None:
    """When the score fell under ``threshold`` (``None`` while it is not under it).

    Read off the decay curve rather than from when consolidation happened to notice, so the
    "low for N days" pruning rule does not depend on how often consolidation runs.
    """
    if factors.score >= threshold:
        return None
    at_reference = factors.base_relevance * factors.access_decay * factors.confidence_weight
    half_life = HALF_LIFE_DAYS.get(type_)
    if half_life is None or factors.recency_decay == 1.0 or at_reference <= threshold:
        return factors.reference
    return factors.reference + timedelta(days=half_life * math.log2(at_reference / threshold))


# In a large store (COMMON_TERM_MIN_RECORDS and more), candidates are selected by the query's
# rarest terms whose postings together stay under this share of the store; the other terms still
# count in relevance. A term in a fifth of all records adds almost no BM25 weight but costs reading
# a fifth of the index.
POSTINGS_SHARE = 0.2
COMMON_TERM_MIN_RECORDS = 2000


def term_weights(terms: list[str], df: dict[str, int], total: int) -> dict[str, float]:
    """Each query term's weight in relevance: its IDF (less for a frequent English word), or,
    when no record contains it, a multiple of the rarest IDF that grows with its rarity."""
    rarest = math.log(1.0 + (total + 0.5) / 0.5)
    weights = {}
    for t in terms:
        rank = word_rank(t)
        if df[t]:
            weights[t] = math.log(1.0 + (total - df[t] + 0.5) / (df[t] + 0.5))
            if rank is not None:
                weights[t] *= PRESENT_COMMON_WEIGHT
        else:
            weights[t] = absent_word_weight(rank) * rarest
    return weights


def selective_terms(present: list[str], df: dict[str, int], total: int) -> list[str]:
    """The terms candidates are selected by: all of them, or in a large store the rarest."""
    if total < COMMON_TERM_MIN_RECORDS:
        return present
    # Rarest terms first, while their postings stay within budget (always at least one):
    # common terms would make the query read a large part of the index for little weight.
    budget = POSTINGS_SHARE * total
    selective: list[str] = []
    postings = 0
    for term in sorted(present, key=lambda t: df[t]):
        if selective and postings + df[term] > budget:
            break
        selective.append(term)
        postings += df[term]
    return selective
