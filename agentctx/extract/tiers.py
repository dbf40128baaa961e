"""Size tiers: how much of a session is sent to the model, in how many calls.

By the estimated tokens of the new content (``agentctx.core.budget.estimate_tokens``):

* tier 1, up to 15K tokens: everything, one call;
* tier 2, 15K-50K: the first 3K tokens (project context, session set-up) and the last 17K
  (the current state of the work), one call — when those two overlap, everything is sent;
* tier 3, over 50K: map-reduce — 10K-token chunks extracted separately (in parallel), then one
  synthesis call merges the partial results.

Entries are never cut in the middle unless one entry alone is larger than its budget.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

from agentctx.core.budget import estimate_tokens, truncate
from agentctx.extract.transcript import Entry

SINGLE_CALL_MAX_TOKENS = 15_000
HEAD_TAIL_MAX_TOKENS = 50_000
HEAD_TOKENS = 3_000
TAIL_TOKENS = 17_000
CHUNK_TOKENS = 10_000
CONTEXT_TOKENS = 1_000  # already-extracted lead-in shown (not extracted from) on a delta run
SEPARATOR = "\n"

_LABELS = {"user": "DEVELOPER", "assistant": "CLAUDE", "command": "COMMAND",
           "summary": "EARLIER SUMMARY"}


class Slice(NamedTuple):
    """The transcript text of one extraction call."""

    text: str
    tokens: int
    part: int  # 1-based
    parts: int


class TierPlan(NamedTuple):
    """What will be sent for one run."""

    tier: int  # 1, 2 or 3
    content_tokens: int  # the new content, whole
    sent_tokens: int  # what the slices hold
    omitted_tokens: int  # left out by tier 2
    slices: list[Slice]

    @property
    def synthesis(self) -> bool:
        """Whether a synthesis call merges several partial results."""
        return len(self.slices) > 1

    @property
    def calls(self) -> int:
        """Model calls the plan makes."""
        return len(self.slices) + (1 if self.synthesis else 0)

    @property
    def tier_name(self) -> str:
        """A short description for logs and listings."""
        return {1: "single call", 2: "head and tail",
                3: f"map-reduce over {len(self.slices)} chunks"}[self.tier]


def format_entries(entries: Sequence[Entry]) -> list[str]:
    """Render entries as transcript lines; a date line opens each new day."""
    texts: list[str] = []
    day: str | None = None
    for entry in entries:
        stamp = entry.timestamp or ""
        prefix = ""
        if len(stamp) >= 16 and stamp[4] == "-":
            if stamp[:10] != day:
                day = stamp[:10]
                prefix = f"=== {day} ===\n"
            prefix += f"[{stamp[11:16]}] "
        label = _LABELS.get(entry.role, entry.role.upper())
        # An assistant step that is only tool calls starts on its own line, like the others.
        body = ("\n  " if entry.text.startswith("→") else " ") + entry.text
        texts.append(f"{prefix}{label}:{body}")
    return texts


def plan(texts: Sequence[str], *, map_reduce: bool = True) -> TierPlan:
    """Choose the tier for ``texts`` (rendered entries, oldest first) and cut the slices.

    ``map_reduce=False`` caps the plan at tier 2 (head and tail), the cheap fallback when the
    cost cap leaves too little for a long session's map-reduce.
    """
    content = _joined_tokens(texts)
    if content <= SINGLE_CALL_MAX_TOKENS:
        text = SEPARATOR.join(texts)
        return TierPlan(1, content, content, 0, [Slice(text, content, 1, 1)] if texts else [])
    if content <= HEAD_TAIL_MAX_TOKENS or not map_reduce:
        return _head_and_tail(texts, content)
    chunks = chunk(texts, CHUNK_TOKENS)
    sent = sum(c.tokens for c in chunks)
    return TierPlan(3, content, sent, 0, chunks)


def lead_in(texts: Sequence[str], max_tokens: int = CONTEXT_TOKENS) -> str:
    """The last already-extracted entries that fit ``max_tokens`` (context for a delta run)."""
    return SEPARATOR.join(_take(texts, max_tokens, from_end=True))


def _take(texts: Sequence[str], max_tokens: int, *, from_end: bool) -> list[str]:
    """Whole entries from the start (or the end) while they fit ``max_tokens``, in order; when
    not even the first fits, that one entry cut to fit."""
    kept: list[str] = []
    used = 0
    for text in reversed(texts) if from_end else texts:
        cost = estimate_tokens(text) + 1
        if used + cost > max_tokens:
            if not kept:
                kept.append(_fit(text, max_tokens, from_end=from_end))
            break
        kept.append(text)
        used += cost
    return kept[::-1] if from_end else kept


def chunk(texts: Sequence[str], max_tokens: int) -> list[Slice]:
    """Greedy consecutive chunks of at most ``max_tokens`` each."""
    groups: list[list[str]] = []
    current: list[str] = []
    used = 0
    for text in texts:
        cost = estimate_tokens(text) + 1
        if cost > max_tokens:
            text = _fit(text, max_tokens - 1, from_end=False)
            cost = estimate_tokens(text) + 1
        if current and used + cost > max_tokens:
            groups.append(current)
            current, used = [], 0
        current.append(text)
        used += cost
    if current:
        groups.append(current)
    slices = []
    for index, group in enumerate(groups, start=1):
        text = SEPARATOR.join(group)
        slices.append(Slice(text, estimate_tokens(text), index, len(groups)))
    return slices


def _head_and_tail(texts: Sequence[str], content: int) -> TierPlan:
    head = _take(texts, HEAD_TOKENS, from_end=False)
    tail = _take(texts[len(head):], TAIL_TOKENS, from_end=True)
    skipped = texts[len(head):len(texts) - len(tail)]
    if not skipped:
        text = SEPARATOR.join(texts)
        return TierPlan(2, content, content, 0, [Slice(text, content, 1, 1)])
    omitted = _joined_tokens(skipped)
    marker = f"[… {len(skipped)} entries, about {omitted:,} tokens, omitted …]"
    text = SEPARATOR.join([*head, marker, *tail])
    sent = estimate_tokens(text)
    return TierPlan(2, content, sent, omitted, [Slice(text, sent, 1, 1)])


def _fit(text: str, max_tokens: int, *, from_end: bool) -> str:
    """Cut one oversized entry to ``max_tokens`` (keeping its start, or its end)."""
    limit = max(0, (7 * max_tokens) // 2 - 1)
    if len(text) <= limit:
        return text
    if from_end:
        return "[…] " + text[-(limit - 4):]
    return truncate(text, limit, " […]")


def _joined_tokens(texts: Sequence[str]) -> int:
    if not texts:
        return 0
    return estimate_tokens(SEPARATOR.join(texts))
