"""The scorers: small pure functions over ranked lists of keys, so each is testable by hand.

A *ranking* is a sequence of keys, best first (record keys in the coding benchmark, turn keys in
LongMemEval). Gold labels are sets of keys. Every function refuses an input it cannot score
meaningfully (an empty gold set, a non-positive k) instead of returning a number that would hide
the mistake.
"""

from __future__ import annotations

import math
from collections.abc import Collection, Iterable, Mapping, Sequence
from typing import NamedTuple


def _check_k(k: int) -> None:
    if k <= 0:
        raise ValueError(f"k must be positive, not {k}")


def recall_at(ranking: Sequence[str], gold: Collection[str], k: int) -> float:
    """Share of the gold keys found among the first ``k`` of ``ranking`` (0.0-1.0)."""
    _check_k(k)
    wanted = set(gold)
    if not wanted:
        raise ValueError("recall needs at least one gold key")
    return len(wanted & set(ranking[:k])) / len(wanted)


def hit_at(ranking: Sequence[str], gold: Collection[str], k: int) -> bool:
    """Whether any gold key is among the first ``k`` of ``ranking``."""
    _check_k(k)
    if not gold:
        raise ValueError("a hit needs at least one gold key")
    return bool(set(gold) & set(ranking[:k]))


def group_recall_any(ranking: Sequence[str], group_of: Mapping[str, str],
                     gold_groups: Collection[str], k: int) -> bool:
    """Whether any of the first ``k`` keys belongs to a gold group (LongMemEval's recall_any).

    ``group_of`` maps a key to its group (a turn to its session); keys without a group never
    count. Groups are not deduplicated: k counts keys, not groups.
    """
    _check_k(k)
    if not gold_groups:
        raise ValueError("recall_any needs at least one gold group")
    wanted = set(gold_groups)
    return any(group_of.get(key) in wanted for key in ranking[:k])


class Chain(NamedTuple):
    """One changed fact: its current record and every record it superseded (directly or not)."""

    current: str
    superseded: frozenset[str]


def supersession_correct(ranking: Sequence[str], injected: Collection[str],
                         chains: Iterable[Chain]) -> bool:
    """Whether a ranking gets changed facts right.

    ``ranking`` is a search that may include superseded records (history included). For every
    chain, the current record must be in the ranking and rank above each of its superseded
    versions that appear; ``injected`` (what the per-prompt hook would inject) must hold no
    superseded version at all. A chain whose current record is missing from the ranking fails:
    nothing shows that the current version would win.
    """
    chains = list(chains)
    if not chains:
        raise ValueError("supersession correctness needs at least one chain")
    position = {key: index for index, key in enumerate(ranking)}
    shown = set(injected)
    for chain in chains:
        if chain.superseded & shown:
            return False
        if chain.current not in position:
            return False
        mine = position[chain.current]
        if any(position.get(old, math.inf) < mine for old in chain.superseded):
            return False
    return True


def injection_precision(injected_counts: Sequence[int]) -> float:
    """Share of unanswerable prompts that got no injection at all (count 0)."""
    if not injected_counts:
        raise ValueError("injection precision needs at least one unanswerable prompt")
    if any(count < 0 for count in injected_counts):
        raise ValueError("an injection count cannot be negative")
    return sum(1 for count in injected_counts if count == 0) / len(injected_counts)


def wilson_interval(successes: int, total: int, z: float = 1.96) -> tuple[float, float]:
    """The Wilson score interval of a proportion (95% for the default ``z``).

    A share measured on few prompts is uncertain: 7 of 8 is anything from about 0.53 to 0.98.
    Unlike the plain normal approximation, Wilson's interval stays within 0-1 and is not empty
    at 0 or ``total`` successes.
    """
    if total <= 0:
        raise ValueError("an interval needs at least one trial")
    if not 0 <= successes <= total:
        raise ValueError(f"successes must be within 0-{total}, not {successes}")
    share = successes / total
    spread = z * z / total
    centre = (share + spread / 2) / (1 + spread)
    half = z * math.sqrt(share * (1 - share) / total + spread / (4 * total)) / (1 + spread)
    return max(0.0, centre - half), min(1.0, centre + half)


def mean(values: Sequence[float]) -> float:
    """Arithmetic mean; refuses an empty sequence."""
    if not values:
        raise ValueError("mean of nothing")
    return sum(values) / len(values)


def percentile(values: Sequence[float], share: float) -> float:
    """The ``share`` (0-1) percentile by linear interpolation between closest ranks."""
    if not values:
        raise ValueError("percentile of nothing")
    if not 0.0 <= share <= 1.0:
        raise ValueError(f"share must be within 0-1, not {share}")
    ordered = sorted(values)
    position = (len(ordered) - 1) * share
    low = math.floor(position)
    high = math.ceil(position)
    if low == high:
        return ordered[low]
    return ordered[low] + (ordered[high] - ordered[low]) * (position - low)


def median(values: Sequence[float]) -> float:
    """The 50th percentile."""
    return percentile(values, 0.5)
