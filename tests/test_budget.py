"""The token estimator and the budget enforcer hold their limits on any input."""

from __future__ import annotations

import math

from hypothesis import given
from hypothesis import strategies as st

from agentctx.core.budget import char_limit, estimate_tokens, pack, truncate

texts = st.text(max_size=3000)


@given(texts)
def test_estimate_is_ceil_of_chars_over_3_5(text: str) -> None:
    assert estimate_tokens(text) == math.ceil(len(text) / 3.5)


@given(st.lists(texts, max_size=30), st.integers(0, 3000), st.integers(0, 10000),
       st.text(max_size=300), st.text(max_size=300), st.sampled_from(["\n", "\n\n", ""]))
def test_pack_never_exceeds_either_budget(items: list[str], max_tokens: int, max_chars: int,
                                          header: str, footer: str, separator: str) -> None:
    packed = pack(items, max_tokens=max_tokens, max_chars=max_chars, header=header,
                  footer=footer, separator=separator)
    assert packed.chars == len(packed.text) <= max_chars
    assert packed.tokens == estimate_tokens(packed.text) <= max_tokens
    # Whole items only, taken from the top: the text is exactly the join of a prefix.
    parts = ([header] if header else []) + items[: packed.kept] + ([footer] if footer else [])
    if packed.text:
        assert packed.text == separator.join(parts)


@given(st.lists(st.text(min_size=1, max_size=200), min_size=1, max_size=20),
       st.integers(50, 2000))
def test_pack_keeps_as_many_items_as_fit(items: list[str], max_tokens: int) -> None:
    packed = pack(items, max_tokens=max_tokens, max_chars=8000)
    if packed.kept < len(items):
        bigger = "\n".join(items[: packed.kept + 1])
        assert len(bigger) > char_limit(max_tokens, 8000)


@given(texts, st.integers(0, 4000), st.text(max_size=40))
def test_truncate_fits_and_keeps_the_marker(text: str, limit: int, marker: str) -> None:
    cut = truncate(text, limit, marker)
    assert len(cut) <= max(limit, 0) or (cut == text and len(text) <= limit)
    if len(text) <= limit:
        assert cut == text
    elif cut:
        assert cut.endswith(marker)
