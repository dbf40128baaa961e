"""Ranking and decay constants, in one place.

Search multiplies its BM25 score by a type weight, a recency factor and a confidence weight;
consolidation's decay score uses the same half-lives. ``None`` as a half-life means "never decays"
(decisions and conventions change only by supersession).
"""

from __future__ import annotations

import math
from datetime import datetime, timezone

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
    "preference": 365.0,
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
BM25_WEIGHTS = (2.0, 1.0, 0.0)


def age_days(valid_from: str, now: datetime | None = None) -> float:
    """Days between ``valid_from`` (ISO, as stored) and now; 0 for future or unparsable dates."""
    moment = now or datetime.now(timezone.utc)
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
