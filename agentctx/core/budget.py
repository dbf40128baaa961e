"""The one token estimator and the one budget enforcer.

Every budget in agentctx (SessionStart digest, per-prompt injection, SubagentStart slice, MCP result
sizes) is checked here. The estimator is deliberately conservative: ``ceil(characters / 3.5)``, so a
token budget is equivalent to a character budget of ``floor(tokens * 3.5)`` and both limits can be
enforced as one character limit. Standard library only (hook hot path).
"""

from __future__ import annotations

from collections.abc import Sequence

from agentctx.core.lean import NamedTuple

CHARS_PER_TOKEN = 3.5


def estimate_tokens(text: str) -> int:
    """Conservative token estimate of ``text``: ``ceil(len(text) / 3.5)``."""
    # Integer form of ceil(n / 3.5) == ceil(2n / 7), exact for every length.
    return (2 * len(text) + 6) // 7


def char_limit(max_tokens: int, max_chars: int) -> int:
    """The largest character count that satisfies both a token and a character budget."""
    return max(0, min(max_chars, (7 * max_tokens) // 2))


class Packed(NamedTuple):
    """The result of packing items into a budget."""

    text: str
    kept: int  # how many leading items made it in
    tokens: int
    chars: int


def pack(items: Sequence[str], *, max_tokens: int, max_chars: int, header: str = "",
         footer: str = "", separator: str = "\n") -> Packed:
    """Join ``header``, as many leading ``items`` as fit, and ``footer`` within both budgets.

    Items are dropped whole from the bottom; nothing is ever cut mid-item. When not even the
    header and footer fit, the result is empty (``kept == 0``, text ``""``).
    """
    limit = char_limit(max_tokens, max_chars)
    fixed_parts = [part for part in (header, footer) if part]
    # Exact length of separator.join(parts) for p parts: sum of lengths + (p - 1) separators.
    lengths = sum(len(part) for part in fixed_parts)
    count = len(fixed_parts)
    if count and lengths + len(separator) * (count - 1) > limit:
        return Packed("", 0, 0, 0)
    kept = 0
    for item in items:
        new_lengths = lengths + len(item)
        if new_lengths + len(separator) * count > limit:  # count + 1 parts -> count separators
            break
        lengths = new_lengths
        count += 1
        kept += 1
    parts = ([header] if header else []) + list(items[:kept]) + ([footer] if footer else [])
    text = separator.join(parts)
    return Packed(text, kept, estimate_tokens(text), len(text))


def truncate(text: str, max_chars: int, marker: str) -> str:
    """Cut ``text`` so that the result, ``marker`` included, has at most ``max_chars`` characters.

    Returns ``text`` unchanged when it fits, ``""`` when not even the marker fits. The cut is made
    at a whitespace boundary when one is near, so words are not split.
    """
    if len(text) <= max_chars:
        return text
    room = max_chars - len(marker)
    if room <= 0:
        return ""
    cut = text[:room]
    space = cut.rfind(" ", max(0, room - 40))
    if space > 0:
        cut = cut[:space]
    return cut.rstrip() + marker
