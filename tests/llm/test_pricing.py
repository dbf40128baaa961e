"""The price table: data, effective dates, unknown models, and it ships in the wheel."""

from __future__ import annotations

from datetime import date

import pytest

from agentctx.ml.pricing import CallUsage, PriceTable, load


def test_haiku_prices_and_the_cost_of_a_call() -> None:
    table = load()
    usage = CallUsage(input_tokens=1_000_000, output_tokens=1_000_000,
                      cache_write_5m_tokens=1_000_000, cache_write_1h_tokens=1_000_000,
                      cache_read_tokens=1_000_000)
    # $1 in + $5 out + $1.25 5-minute writes + $2 1-hour writes + $0.10 reads
    assert table.cost("claude-haiku-4-5", usage) == pytest.approx(9.35)
    assert table.cost("claude-haiku-4-5-20251001", usage) == pytest.approx(9.35)
    assert table.cost("claude-haiku-4-5-20991231", usage) == pytest.approx(9.35)
    assert table.price("claude-haiku-4-5")[1] is True


def test_the_entry_in_force_on_the_day_applies() -> None:
    table = PriceTable({"models": {"m": [
        {"effective_from": "2026-01-01", "input": 1, "output": 2, "cache_write_5m": 0,
         "cache_write_1h": 0, "cache_read": 0},
        {"effective_from": "2026-06-01", "input": 3, "output": 4, "cache_write_5m": 0,
         "cache_write_1h": 0, "cache_read": 0}]}})
    assert table.price("m", date(2026, 5, 31))[0].input == 1
    assert table.price("m", date(2026, 6, 1))[0].input == 3


def test_an_unknown_model_is_priced_at_the_most_expensive_entry() -> None:
    table = load()
    price, known = table.price("claude-future-model")
    assert not known
    assert price.output == max(table.price(m)[0].output for m in table.models)
